//! Security schemes, described and never valued.
//!
//! - `Authorization: Bearer …` → `bearerAuth` (`http`, `bearer`);
//!   `Authorization: Basic …` → `basicAuth`; any other `Authorization` →
//!   an `apiKey` in that header.
//! - A credential header (`X-API-Key`, `X-Auth-Token`…, as
//!   `shared::redact::is_sensitive_key` says) → an `apiKey` in that
//!   header; a CSRF header (`X-CSRF-Token`, `X-XSRF-Token`) on writes →
//!   `csrfToken`.
//! - A cookie whose name is sensitive or that an answer in the capture set
//!   → an `apiKey` in that cookie.
//! - A sensitive query parameter → an `apiKey` in the query.
//!
//! Only names are written; the values stay in the capture.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use shared::redact;

use crate::har::Entry;

/// The schemes one request carried: scheme name → its description.
pub fn schemes_of(e: &Entry, set_cookies: &BTreeSet<String>) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for h in &e.request.headers {
        let lower = h.name.to_ascii_lowercase();
        if lower == "authorization" {
            let v = h.value.trim_start();
            let scheme = v.split(' ').next().unwrap_or("").to_ascii_lowercase();
            match scheme.as_str() {
                "bearer" => out.insert("bearerAuth".into(), json!({"type": "http", "scheme": "bearer"})),
                "basic" => out.insert("basicAuth".into(), json!({"type": "http", "scheme": "basic"})),
                _ => out.insert(
                    "authorizationHeader".into(),
                    json!({"type": "apiKey", "in": "header", "name": "Authorization"}),
                ),
            };
        } else if lower.contains("csrf") || lower.contains("xsrf") {
            out.insert("csrfToken".into(), json!({"type": "apiKey", "in": "header", "name": h.name}));
        } else if lower == "cookie" {
            for part in h.value.split(';') {
                let Some((name, _)) = part.trim().split_once('=') else { continue };
                if redact::is_sensitive_key(name) || set_cookies.contains(name) {
                    out.insert(
                        format!("{}Cookie", crate::naming::camel(&crate::naming::words(name))),
                        json!({"type": "apiKey", "in": "cookie", "name": name}),
                    );
                }
            }
        } else if redact::is_sensitive_key(&h.name) && lower != "set-cookie" && lower != "proxy-authorization" {
            out.insert(
                format!("{}Header", crate::naming::camel(&crate::naming::words(&h.name))),
                json!({"type": "apiKey", "in": "header", "name": h.name}),
            );
        }
    }
    if let Ok(u) = url::Url::parse(&e.request.url) {
        for (k, _) in u.query_pairs() {
            if redact::is_sensitive_key(&k) {
                out.insert(
                    format!("{}Query", crate::naming::camel(&crate::naming::words(&k))),
                    json!({"type": "apiKey", "in": "query", "name": k}),
                );
            }
        }
    }
    out
}

/// Names of the cookies that answers in the capture set.
pub fn set_cookie_names<'a>(entries: impl IntoIterator<Item = &'a Entry>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for e in entries {
        for h in e.response.headers.iter().filter(|h| h.is("set-cookie")) {
            if let Some((name, _)) = h.value.split(';').next().unwrap_or("").split_once('=') {
                out.insert(name.trim().to_string());
            }
        }
    }
    out
}

/// An operation's `security` from the schemes of each of its samples: the
/// schemes every sample carried; if none did in all, each sample's set as
/// an alternative; `[]` when no sample carried any.
pub fn requirement(per_sample: &[BTreeSet<String>]) -> Value {
    let Some(first) = per_sample.first() else { return json!([]) };
    let all: BTreeSet<String> =
        per_sample.iter().skip(1).fold(first.clone(), |acc, s| acc.intersection(s).cloned().collect());
    let req = |s: &BTreeSet<String>| Value::Object(s.iter().map(|n| (n.clone(), json!([]))).collect());
    if !all.is_empty() {
        return json!([req(&all)]);
    }
    let alts: BTreeSet<&BTreeSet<String>> = per_sample.iter().filter(|s| !s.is_empty()).collect();
    if alts.is_empty() {
        return json!([]);
    }
    let mut v: Vec<Value> = alts.into_iter().map(req).collect();
    v.push(json!({}));
    Value::Array(v)
}
