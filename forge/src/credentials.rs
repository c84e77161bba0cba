//! Every credential the input holds, so that none reaches the output.
//!
//! Detection is `shared::redact`'s (one detector for the whole project):
//! a value is a credential when it sits under a sensitive key
//! (`redact::is_sensitive_key`: headers such as `Authorization` and
//! `Cookie`, keys such as `token` or `password`), when its query parameter
//! is one `redact::redact_url` masks (`code`, `state`…), or when its shape
//! is one (`redact::redact_text` changes it: JWTs, `Bearer …`, key
//! prefixes). Values collected here from the whole capture are refused
//! wherever they appear, also under innocent keys; the person's stored
//! secrets are added by the caller.

use std::collections::BTreeSet;

use serde_json::Value;
use shared::redact;

use crate::har::{Entry, Pair};

/// Collected credential values. Never printed: `Debug` shows the count.
#[derive(Default)]
pub struct Credentials {
    values: BTreeSet<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credentials({} values)", self.values.len())
    }
}

/// Values shorter than this are not matched inside longer text (a
/// two-letter value would match everywhere); they are still refused whole.
const MIN_INNER_MATCH: usize = 6;

impl Credentials {
    /// Adds a value known to be a credential (e.g. a stored secret).
    pub fn add(&mut self, v: &str) {
        let v = v.trim();
        if !v.is_empty() {
            self.values.insert(v.to_string());
        }
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Collects every credential in the entries.
    pub fn collect<'a>(entries: impl IntoIterator<Item = &'a Entry>) -> Self {
        let mut c = Credentials::default();
        for e in entries {
            c.headers(&e.request.headers);
            c.headers(&e.response.headers);
            c.pairs(&e.request.query_string);
            if let Ok(u) = url::Url::parse(&e.request.url) {
                for (k, v) in u.query_pairs() {
                    c.pair(&k, &v);
                }
                if !u.password().unwrap_or("").is_empty() {
                    c.add(u.password().unwrap_or(""));
                }
            }
            if let Some(form) = e.request_form() {
                for (k, v) in form {
                    c.pair(&k, &v);
                }
            }
            if let Some(j) = e.request_json() {
                c.json(None, &j);
            }
            if let Some(j) = e.response_json() {
                c.json(None, &j);
            }
        }
        c
    }

    fn headers(&mut self, hs: &[Pair]) {
        for h in hs {
            if !redact::is_sensitive_key(&h.name) {
                continue;
            }
            self.add(&h.value);
            let lower = h.name.to_ascii_lowercase();
            if lower == "cookie" {
                for part in h.value.split(';') {
                    if let Some((_, v)) = part.split_once('=') {
                        self.add(v);
                    }
                }
            } else if lower == "set-cookie" {
                if let Some((_, v)) = h.value.split(';').next().unwrap_or("").split_once('=') {
                    self.add(v);
                }
            } else if let Some((_, rest)) = h.value.trim().split_once(' ') {
                // `Bearer X`, `Basic X`, `Token X`
                self.add(rest);
            }
        }
    }

    fn pairs(&mut self, ps: &[Pair]) {
        for p in ps {
            self.pair(&p.name, &p.value);
        }
    }

    fn pair(&mut self, k: &str, v: &str) {
        if is_secret_param(k) {
            self.add(v);
        }
    }

    fn json(&mut self, key: Option<&str>, v: &Value) {
        match v {
            Value::Object(m) => m.iter().for_each(|(k, v)| self.json(Some(k), v)),
            Value::Array(a) => a.iter().for_each(|v| self.json(key, v)),
            Value::String(s) if key.is_some_and(redact::is_sensitive_key) => self.add(s),
            Value::Number(n) if key.is_some_and(redact::is_sensitive_key) => self.add(&n.to_string()),
            _ => {}
        }
    }

    /// Whether `s` is, holds or looks like a credential.
    pub fn is_credential(&self, s: &str) -> bool {
        let t = s.trim();
        if t.is_empty() {
            return false;
        }
        self.values.contains(t)
            || redact::redact_text(s) != s
            || self.values.iter().any(|v| v.len() >= MIN_INNER_MATCH && s.contains(v.as_str()))
    }

    /// Whether generated text holds a credential: a known value anywhere,
    /// or a run of token characters that `redact_text` masks (a JWT, a key
    /// prefix). Code is scanned run by run, so `token = x` in code is not
    /// taken for a credential pair.
    pub fn in_text(&self, text: &str) -> bool {
        if self
            .values
            .iter()
            .any(|v| (v.len() >= MIN_INNER_MATCH || !v.chars().all(char::is_alphanumeric)) && text.contains(v.as_str()))
        {
            return true;
        }
        text.split(|c: char| !(c.is_ascii_alphanumeric() || "-_.~".contains(c)))
            .filter(|run| run.len() >= 10)
            .any(|run| redact::redact_text(run) != run || self.values.contains(run))
    }

    /// The first string in `v` (keys included) that is a credential, as a
    /// JSON pointer (never the value).
    pub fn find_in(&self, v: &Value) -> Option<String> {
        fn walk(c: &Credentials, v: &Value, at: &mut Vec<String>) -> Option<String> {
            let here = |at: &Vec<String>| format!("/{}", at.join("/"));
            match v {
                Value::String(s) if c.is_credential(s) => Some(here(at)),
                Value::Number(n) if c.values.contains(&n.to_string()) => Some(here(at)),
                Value::Object(m) => {
                    for (k, v) in m {
                        if c.is_credential(k) {
                            // The key itself is the credential: named, never shown.
                            at.push("<a key holding a credential>".into());
                            return Some(here(at));
                        }
                        at.push(k.replace('~', "~0").replace('/', "~1"));
                        if let Some(p) = walk(c, v, at) {
                            return Some(p);
                        }
                        at.pop();
                    }
                    None
                }
                Value::Array(a) => {
                    for (i, v) in a.iter().enumerate() {
                        at.push(i.to_string());
                        if let Some(p) = walk(c, v, at) {
                            return Some(p);
                        }
                        at.pop();
                    }
                    None
                }
                _ => None,
            }
        }
        walk(self, v, &mut Vec::new())
    }
}

/// Whether a query, form or body key carries a credential: a sensitive key,
/// or a parameter `redact_url` masks.
pub fn is_secret_param(k: &str) -> bool {
    if redact::is_sensitive_key(k) {
        return true;
    }
    let probe = format!("http://h/?{}=v", url::form_urlencoded::byte_serialize(k.as_bytes()).collect::<String>());
    redact::redact_url(&probe) != probe
}
