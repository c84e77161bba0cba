//! Every credential the input holds, so that none reaches the output.
//!
//! Detection is `shared::redact`'s (one detector for the whole project):
//! a value is a credential when it sits under a sensitive key
//! (`redact::is_sensitive_key`: headers such as `Authorization` and
//! `Cookie`, keys such as `token` or `password`), when its query parameter
//! is one `redact::redact_url` masks (`code`, `state`…), or when its shape
//! is one (`redact::redact_text` changes it: JWTs, `Bearer …`, key
//! prefixes). The value of a request or response header that is neither
//! one `redact` knows to be harmless (`redact::is_safe_header`) nor a
//! standard one ([`STANDARD_HEADERS`], pseudo-headers, `Sec-…`) is treated
//! as one too: a site's own session header (`X-Acme-Ref`) is a credential
//! nobody listed. Of an answer's unknown headers, only values that look
//! like one (at least [`MIN_RESPONSE_SECRET`] characters, no spaces, not
//! a number); the others, like every short value of an unknown header,
//! are never examples ([`Credentials::may_show`]).
//!
//! Values collected here from the whole capture are refused wherever they
//! appear, also under innocent keys, in every spelling a page could copy
//! them in ([`spellings`]): as they are, reversed, percent-encoded, JSON-
//! escaped, hex, and base64 (standard and URL-safe, padded or not, and at
//! each of the three alignments inside a longer base64 text), all compared
//! without regard to ASCII case (so upper- and lower-cased copies and
//! upper-case hex are the same). The person's stored secrets and, for
//! Chaperone's own redacted capture, the values of the unredacted requests
//! are added by the caller.
//!
//! Table tests: `fixtures/forge/spellings.tsv`.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;
use shared::redact;

use crate::har::{Entry, Pair};

/// Values shorter than this are not matched inside longer text (a
/// two-letter value would match everywhere); they are still refused whole.
pub const MIN_INNER_MATCH: usize = 6;
/// Values shorter than this are refused only as they are, never in another
/// spelling (`1` in hex is `31`, an ordinary path segment), and the short
/// value of an unknown header only as an example (see [`Credentials::may_show`]).
pub const MIN_SPELLED: usize = redact::MIN_KNOWN_VALUE_CHARS;

/// The shortest value of an unknown *response* header taken for a
/// credential (request headers: [`MIN_SPELLED`]).
const MIN_RESPONSE_SECRET: usize = 8;

fn is_digits(v: &str) -> bool {
    v.bytes().all(|b| b.is_ascii_digit())
}

/// Standard headers that carry no credential but that
/// `redact::is_safe_header` does not list (it shows only what it must).
/// Pseudo-headers (`:path`) and `Sec-…` headers are standard too.
const STANDARD_HEADERS: &[&str] = &[
    "content-md5",
    "device-memory",
    "downlink",
    "dpr",
    "early-data",
    "ect",
    "etag",
    "expect",
    "expect-ct",
    "forwarded",
    "if-match",
    "if-none-match",
    "if-range",
    "link",
    "max-forwards",
    "nel",
    "origin-agent-cluster",
    "purpose",
    "report-to",
    "reporting-endpoints",
    "rtt",
    "save-data",
    "server-timing",
    "sourcemap",
    "te",
    "trailer",
    "upgrade",
    "viewport-width",
    "warning",
    "width",
    "x-dns-prefetch-control",
    "x-download-options",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-permitted-cross-domain-policies",
    "x-powered-by",
];

/// Whether a header is one whose value says nothing secret: harmless by
/// `redact`'s allow-list, or a standard header.
pub fn is_plain_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    if redact::is_sensitive_key(&lower) {
        return false;
    }
    redact::is_safe_header(&lower)
        || lower.starts_with(':')
        || lower.starts_with("sec-")
        || STANDARD_HEADERS.contains(&lower.as_str())
}

/// Collected credential values. Never printed: `Debug` shows the count.
#[derive(Default, Clone)]
pub struct Credentials {
    /// The values as they were seen (trimmed).
    values: BTreeSet<String>,
    /// Lower-cased values and spellings refused only whole.
    whole: BTreeSet<String>,
    /// Lower-cased spellings of at least [`MIN_INNER_MATCH`] bytes, refused
    /// anywhere inside a text; indexed by their first bytes.
    inner: HashMap<[u8; MIN_INNER_MATCH], BTreeSet<Vec<u8>>>,
    /// Lower-cased short values of unknown headers: never an example.
    no_example: BTreeSet<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Credentials({} values)", self.values.len())
    }
}

/// What the redaction wrote instead of a value: not a credential itself.
fn is_placeholder(v: &str) -> bool {
    v.contains(redact::REDACTED) || v.contains(shared::sensitive::MASK) || v.starts_with("{secret:")
}

impl Credentials {
    /// Adds a value known to be a credential (e.g. a stored secret), in
    /// every spelling.
    pub fn add(&mut self, v: &str) {
        let v = v.trim();
        if v.is_empty() || is_placeholder(v) || !self.values.insert(v.to_string()) {
            return;
        }
        self.whole.insert(v.to_ascii_lowercase());
        if v.len() >= MIN_SPELLED {
            for s in spellings(v) {
                let l = s.to_ascii_lowercase().into_bytes();
                match l.first_chunk::<MIN_INNER_MATCH>() {
                    Some(key) => {
                        self.inner.entry(*key).or_default().insert(l);
                    }
                    None => {
                        self.whole.insert(String::from_utf8_lossy(&l).into_owned());
                    }
                }
            }
        }
        // A percent-encoded value is the decoded one too.
        if v.contains('%') {
            let d = percent_decode(v);
            if d != v {
                self.add(&d);
            }
        }
    }

    /// Adds the value of a header nobody described (see the module docs):
    /// a credential, or, shorter than [`MIN_SPELLED`], never an example.
    pub fn add_unknown(&mut self, v: &str) {
        let v = v.trim();
        if v.is_empty() || is_placeholder(v) {
            return;
        }
        if v.len() < MIN_SPELLED {
            self.no_example.insert(v.to_ascii_lowercase());
        } else {
            self.add(v);
        }
    }

    /// Adds every value of `other`.
    pub fn extend(&mut self, other: &Credentials) {
        other.values.iter().for_each(|v| self.add(v));
        self.no_example.extend(other.no_example.iter().cloned());
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
            c.headers(&e.request.headers, false);
            c.headers(&e.response.headers, true);
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

    fn headers(&mut self, hs: &[Pair], response: bool) {
        for h in hs {
            if !redact::is_sensitive_key(&h.name) {
                if is_plain_header(&h.name) {
                    continue;
                }
                // An answer's own headers (`X-RateLimit-Remaining: 4999`,
                // `X-Cache: Miss from cloudfront`) are credentials only
                // when they look like one; the rest are never examples.
                let v = h.value.trim();
                if response && (v.len() < MIN_RESPONSE_SECRET || v.contains(char::is_whitespace) || is_digits(v)) {
                    if !v.is_empty() && !is_placeholder(v) {
                        self.no_example.insert(v.to_ascii_lowercase());
                    }
                } else {
                    self.add_unknown(v);
                }
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
                // Chromium joins repeated Set-Cookie headers with '\n'.
                for line in h.value.lines() {
                    if let Some((_, v)) = line.split(';').next().unwrap_or("").split_once('=') {
                        self.add(v);
                    }
                }
            } else if let Some((scheme, rest)) = h.value.trim().split_once(' ') {
                // `Bearer X`, `Basic X`, `Token X`
                self.add(rest);
                if scheme.eq_ignore_ascii_case("basic")
                    && let Some(plain) = base64_decode(rest.trim())
                {
                    self.add(&plain);
                    if let Some((_, password)) = plain.split_once(':') {
                        self.add(password);
                    }
                }
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

    /// Byte ranges of `text` that are a spelling of a known value (of at
    /// least [`MIN_INNER_MATCH`] bytes), ASCII case ignored.
    pub fn ranges(&self, text: &str) -> Vec<(usize, usize)> {
        let lower = text.to_ascii_lowercase().into_bytes();
        let mut out = Vec::new();
        if self.inner.is_empty() {
            return out;
        }
        for (i, w) in lower.windows(MIN_INNER_MATCH).enumerate() {
            let Some(forms) = w.first_chunk::<MIN_INNER_MATCH>().and_then(|k| self.inner.get(k)) else { continue };
            if let Some(len) = forms.iter().filter(|f| lower[i..].starts_with(f)).map(Vec::len).max() {
                out.push((i, i + len));
            }
        }
        out
    }

    /// Whether a spelling of a known value is anywhere in `text`.
    pub fn holds(&self, text: &str) -> bool {
        !self.ranges(text).is_empty()
    }

    /// Whether `s` is, holds or looks like a credential.
    pub fn is_credential(&self, s: &str) -> bool {
        let t = s.trim();
        if t.is_empty() {
            return false;
        }
        self.whole.contains(&t.to_ascii_lowercase()) || redact::redact_text(s) != s || self.holds(s)
    }

    /// Whether `v` may be written as an example or an enum value: not a
    /// credential, not the value of an unknown header, and not an opaque
    /// identifier ([`looks_opaque`]: a person's record or an encoded token).
    pub fn may_show(&self, v: &str) -> bool {
        !self.is_credential(v) && !self.no_example.contains(&v.trim().to_ascii_lowercase()) && !looks_opaque(v)
    }

    /// Whether generated text holds a credential: a known value in any
    /// spelling anywhere, or a run of token characters that `redact_text`
    /// masks (a JWT, a key prefix). Code is scanned run by run, so
    /// `token = x` in code is not taken for a credential pair.
    pub fn in_text(&self, text: &str) -> bool {
        if self.holds(text)
            || self.values.iter().any(|v| {
                v.len() < MIN_INNER_MATCH && !v.chars().all(char::is_alphanumeric) && text.contains(v.as_str())
            })
        {
            return true;
        }
        text.split(|c: char| !(c.is_ascii_alphanumeric() || "-_.~".contains(c)))
            .filter(|run| run.len() >= 10)
            .any(|run| redact::redact_text(run) != run || self.whole.contains(&run.to_ascii_lowercase()))
    }

    /// The first string in `v` (keys included) that is a credential, as a
    /// JSON pointer (never the value).
    pub fn find_in(&self, v: &Value) -> Option<String> {
        fn walk(c: &Credentials, v: &Value, at: &mut Vec<String>) -> Option<String> {
            let here = |at: &Vec<String>| format!("/{}", at.join("/"));
            match v {
                Value::String(s) if c.is_credential(s) => Some(here(at)),
                Value::Number(n) if c.whole.contains(&n.to_string()) => Some(here(at)),
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

/// Whether a value is an opaque identifier rather than a word: a UUID, a
/// hex or base62 id, or a long run of token characters mixing letters and
/// digits. Such a value names a person's own record or is an encoded
/// token; it is never written as an example.
pub fn looks_opaque(v: &str) -> bool {
    use crate::segment::Kind;
    let v = v.trim();
    if matches!(crate::segment::kind(v), Kind::Uuid | Kind::Hex | Kind::Base62) {
        return true;
    }
    v.len() >= 16
        && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"+/=-_.~".contains(&b))
        && v.bytes().any(|b| b.is_ascii_digit())
        && v.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Every spelling of `v` a page could copy it in (ASCII case aside, which
/// matching ignores): as is, reversed, percent-encoded (as
/// `encodeURIComponent` does, as forms do, and every byte), JSON-escaped,
/// hex, and base64: standard and URL-safe, padded and not, with `+` read
/// as a space (a query string's decoding), and the part of its base64 that
/// depends on `v` alone at each of the three alignments inside a longer
/// text (`base64("Bearer " + v)` holds it). Without repeats.
pub fn spellings(v: &str) -> Vec<String> {
    let bytes = v.as_bytes();
    let mut out: Vec<String> = vec![v.to_string(), v.chars().rev().collect()];
    for form in redact::known_forms(v) {
        out.push(form);
    }
    out.push(bytes.iter().map(|b| format!("%{b:02X}")).collect());
    out.push(bytes.iter().map(|b| format!("{b:02x}")).collect());
    let std = base64(bytes);
    for b in [std.clone(), std.trim_end_matches('=').to_string()] {
        out.push(url_safe(&b));
        out.push(b.replace('+', " "));
        out.push(b);
    }
    for shift in 0..3usize {
        let mut padded = vec![0u8; shift];
        padded.extend_from_slice(bytes);
        let enc = base64(&padded);
        let start = (8 * shift).div_ceil(6);
        let end = (8 * (shift + bytes.len())) / 6;
        if let Some(core) = enc.get(start..end).filter(|c| !c.is_empty()) {
            out.push(url_safe(core));
            out.push(core.replace('+', " "));
            out.push(core.to_string());
        }
    }
    let mut seen = BTreeSet::new();
    out.retain(|s| !s.is_empty() && seen.insert(s.clone()));
    out
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64, padded.
pub fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(BASE64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn url_safe(b64: &str) -> String {
    b64.replace('+', "-").replace('/', "_")
}

/// Base64 (either alphabet, padding optional) decoded as UTF-8 text;
/// `None` when it is not that.
fn base64_decode(s: &str) -> Option<String> {
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for c in s.trim_end_matches('=').bytes() {
        let v = match c {
            b'-' => 62,
            b'_' => 63,
            _ => BASE64.iter().position(|x| *x == c)? as u32,
        };
        bits = bits << 6 | v;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n & 0xff) as u8);
        }
    }
    String::from_utf8(out).ok()
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |j: usize| b.get(j).and_then(|c| (*c as char).to_digit(16));
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (hex(i + 1), hex(i + 2))
        {
            out.push((h << 4 | l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        for s in ["", "f", "fo", "foo", "foob", "fooba", "foobar", "user:pässword"] {
            assert_eq!(base64_decode(&base64(s.as_bytes())).as_deref(), Some(s), "{s}");
        }
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(b"fooba"), "Zm9vYmE=");
        assert_eq!(base64_decode("%%"), None);
    }

    #[test]
    fn headers_nobody_described_are_credentials_and_standard_ones_are_not() {
        let cases: &[(&str, bool)] = &[
            ("X-Acme-Ref", false),
            ("X-Client-Session", false),
            ("Authorization", false),
            ("Accept", true),
            ("content-type", true),
            (":authority", true),
            ("Sec-GPC", true),
            ("sec-ch-ua-full-version-list", true),
            ("If-None-Match", true),
            ("ETag", true),
        ];
        for (name, plain) in cases {
            assert_eq!(is_plain_header(name), *plain, "{name}");
        }
    }

    #[test]
    fn a_value_is_found_in_every_spelling_inside_longer_text() {
        let mut c = Credentials::default();
        let v = "Tok3n-Val+ue/4242";
        c.add(v);
        for s in spellings(v) {
            assert!(c.is_credential(&format!("x{s}y")), "{s}");
            assert!(c.is_credential(&s.to_ascii_uppercase()), "{s}");
        }
        // Inside a longer base64 text, at each alignment.
        for prefix in ["", "B", "Be", "Bearer "] {
            let b = base64(format!("{prefix}{v}!").as_bytes());
            assert!(c.holds(&b), "{prefix:?}: {b}");
            assert!(c.holds(&url_safe(&b)), "{prefix:?}");
        }
        // Short values are refused whole only, never spelled.
        let mut short = Credentials::default();
        short.add("1");
        assert!(short.is_credential("1") && !short.is_credential("31") && !short.is_credential("10"));
        // Control: an unrelated value is not one.
        assert!(!c.is_credential("books") && !c.is_credential("42"));
        // Short values of unknown headers: never an example, no credential.
        let mut u = Credentials::default();
        u.add_unknown("abc");
        assert!(!u.is_credential("abc") && !u.may_show("abc") && u.may_show("active"));
    }

    #[test]
    fn unknown_headers_of_requests_and_answers() {
        let har = crate::har::parse(
            r#"{"log": {"entries": [{"request": {"method": "GET", "url": "https://a.example/x", "headers": [
                {"name": "X-Acme-Ref", "value": "ref-7f3kq9zx"}, {"name": "X-Page", "value": "2"},
                {"name": "X-Client-Id", "value": "4711"}, {"name": "Sec-GPC", "value": "1"}]},
              "response": {"status": 200, "headers": [
                {"name": "X-RateLimit-Remaining", "value": "4999"}, {"name": "X-Cache", "value": "Miss from cloudfront"},
                {"name": "X-Session-Ref", "value": "s-9Qw2Lm7Zx4"}, {"name": "ETag", "value": "\"abc123def\""}]}}]}}"#,
        )
        .unwrap();
        let c = Credentials::collect(&har.log.entries);
        // (value, a credential, may be an example)
        let cases: &[(&str, bool, bool)] = &[
            ("ref-7f3kq9zx", true, false),
            ("REF-7F3KQ9ZX", true, false),
            ("4711", true, false),
            ("2", false, false),
            ("1", false, true),
            ("s-9Qw2Lm7Zx4", true, false),
            ("4999", false, false),
            ("Miss from cloudfront", false, false),
            ("\"abc123def\"", false, true),
            ("active", false, true),
        ];
        for (v, credential, example) in cases {
            assert_eq!(c.is_credential(v), *credential, "credential: {v}");
            assert_eq!(c.may_show(v), *example, "example: {v}");
        }
    }

    #[test]
    fn spellings_from_the_fixture_table() {
        let table = include_str!("../../fixtures/forge/spellings.tsv");
        let mut rows = 0;
        for line in table.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
            let cols: Vec<&str> = line.split('\t').collect();
            let [value, what, spelled] = cols[..] else { panic!("three columns: {line:?}") };
            assert!(
                spellings(value).iter().any(|s| s.eq_ignore_ascii_case(spelled)),
                "{what} of {value:?}: {spelled:?}"
            );
            let mut c = Credentials::default();
            c.add(value);
            assert!(c.holds(&format!("/api/{spelled}/x")), "{what} of {value:?} inside a path");
            rows += 1;
        }
        assert!(rows >= 10, "{rows}");
    }

    #[test]
    fn opaque_identifiers_are_told_from_words() {
        for (v, opaque) in [
            ("active", false),
            ("the-hobbit", false),
            ("2026-01-02", false),
            ("12", false),
            ("5f2b9c0e", true),
            ("3f2504e0-4f89-41d3-9a0c-0305e82c3301", true),
            ("aB3dE5fG7h", true),
            ("dG9rZW4tdmFsdWUtMTIz==", true),
            ("hello world 12345678", false),
        ] {
            assert_eq!(looks_opaque(v), opaque, "{v}");
        }
    }
}
