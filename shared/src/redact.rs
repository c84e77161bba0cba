//! Redaction of secrets in text that leaves the bridge (tool results,
//! errors, audit rows, logs, flows): credential headers, sensitive query
//! parameters and JSON keys, JWTs, `Bearer …`, well-known key prefixes,
//! PEM private keys and URL userinfo. Ordinary words stay untouched.

use crate::sensitive::{MASK, words};

/// Header names whose whole value is a credential.
const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
    "api-key",
    "x-auth-token",
    "x-access-token",
    "x-csrf-token",
    "x-xsrf-token",
    "x-amz-security-token",
];

/// Words that make a key (header, query parameter, JSON key, form field)
/// sensitive.
const SECRET_KEY_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "auth",
    "authorization",
    "cookie",
    "session",
    "sessionid",
    "sid",
    "csrf",
    "xsrf",
    "signature",
    "sig",
    "credential",
    "credentials",
    "otp",
    "pin",
    "ssn",
    "cvv",
    "cvc",
    "iban",
    "jwt",
    "bearer",
];

/// Two-word keys (`api key`, `access key`, `private key`, `client secret`…).
const SECRET_KEY_PHRASES: &[&[&str]] = &[&["api", "key"], &["access", "key"], &["private", "key"], &["card", "number"]];

/// Query parameters that carry credentials although their names are plain.
const SECRET_QUERY_PARAMS: &[&str] = &["code", "key", "state", "nonce", "ticket", "assertion", "samlresponse"];

/// Well-known credential prefixes and the minimum length of what follows.
const KEY_PREFIXES: &[(&str, usize)] = &[
    ("github_pat_", 20),
    ("ghp_", 20),
    ("gho_", 20),
    ("ghu_", 20),
    ("ghs_", 20),
    ("ghr_", 20),
    ("glpat-", 16),
    ("xoxb-", 10),
    ("xoxa-", 10),
    ("xoxp-", 10),
    ("xoxr-", 10),
    ("xoxs-", 10),
    ("sk_live_", 16),
    ("sk_test_", 16),
    ("rk_live_", 16),
    ("sk-ant-", 16),
    ("sk-proj-", 16),
    ("sk-", 20),
    ("AKIA", 16),
    ("ASIA", 16),
    ("AIza", 30),
    ("npm_", 30),
    ("pypi-", 30),
];

/// Whether a key (header, parameter, JSON key, field name) names a secret.
pub fn is_sensitive_key(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    if SECRET_HEADERS.contains(&lower.as_str()) {
        return true;
    }
    let ws = words(key);
    let refs: Vec<&str> = ws.iter().map(String::as_str).collect();
    refs.iter().any(|w| SECRET_KEY_WORDS.contains(w))
        || SECRET_KEY_PHRASES.iter().any(|p| refs.windows(p.len()).any(|w| w == *p))
        || refs.iter().any(|w| {
            // access_token, refresh_token, id_token, client_secret written as one word
            w.ends_with("token") || w.ends_with("secret") || w.ends_with("password") || w.ends_with("apikey")
        })
}

/// A header value as it may be shown.
pub fn redact_header<'a>(name: &str, value: &'a str) -> std::borrow::Cow<'a, str> {
    if is_sensitive_key(name) { std::borrow::Cow::Borrowed(MASK) } else { std::borrow::Cow::Owned(redact_text(value)) }
}

/// A URL with userinfo and sensitive query values masked.
pub fn redact_url(url: &str) -> String {
    let (before_frag, frag) = match url.find('#') {
        Some(i) => (&url[..i], Some(&url[i + 1..])),
        None => (url, None),
    };
    let (base, query) = match before_frag.find('?') {
        Some(i) => (&before_frag[..i], Some(&before_frag[i + 1..])),
        None => (before_frag, None),
    };
    let mut out = String::with_capacity(url.len());
    // userinfo: scheme://user:pass@host
    match base.find("://") {
        Some(i) => {
            let after = &base[i + 3..];
            let auth_end = after.find('/').unwrap_or(after.len());
            let authority = &after[..auth_end];
            out.push_str(&base[..i + 3]);
            if let Some(at) = authority.rfind('@') {
                out.push_str(MASK);
                out.push('@');
                out.push_str(&authority[at + 1..]);
            } else {
                out.push_str(authority);
            }
            out.push_str(&redact_text(&after[auth_end..]));
        }
        None => out.push_str(base),
    }
    if let Some(q) = query {
        out.push('?');
        out.push_str(&redact_pairs(q, '&'));
    }
    if let Some(f) = frag {
        out.push('#');
        // Fragments carry tokens in implicit OAuth flows (`#access_token=…`).
        if f.contains('=') { out.push_str(&redact_pairs(f, '&')) } else { out.push_str(f) }
    }
    out
}

fn redact_pairs(q: &str, sep: char) -> String {
    q.split(sep)
        .map(|pair| match pair.split_once('=') {
            Some((k, v))
                if !v.is_empty() && (is_sensitive_key(&percent_decode_lossy(k)) || is_secret_query_param(k)) =>
            {
                format!("{k}={MASK}")
            }
            Some((k, v)) => format!("{k}={}", redact_token_run(v).unwrap_or_else(|| v.to_string())),
            None => pair.to_string(),
        })
        .collect::<Vec<_>>()
        .join(&sep.to_string())
}

fn is_secret_query_param(k: &str) -> bool {
    SECRET_QUERY_PARAMS.contains(&k.to_ascii_lowercase().as_str())
}

fn percent_decode_lossy(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        // Byte-wise: `%` followed by a multi-byte character must not be
        // sliced inside it.
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (b.get(i + 1).and_then(hex_digit), b.get(i + 2).and_then(hex_digit))
        {
            out.push(h << 4 | l);
            i += 3;
            continue;
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// If `run` (a whitespace-free token) is a credential by its shape, the
/// masked form.
fn hex_digit(b: &u8) -> Option<u8> {
    (*b as char).to_digit(16).map(|d| d as u8)
}

fn redact_token_run(run: &str) -> Option<String> {
    let core =
        run.trim_matches(|c: char| matches!(c, '"' | '\'' | ',' | ';' | ')' | '(' | '<' | '>' | '[' | ']' | '{' | '}'));
    if core.is_empty() {
        return None;
    }
    if is_jwt(core) || has_key_prefix(core) {
        return Some(run.replacen(core, MASK, 1));
    }
    None
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~' | '+' | '/' | '=')
}

fn is_jwt(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 3
        && parts[0].starts_with("eyJ")
        && parts[0].len() >= 10
        && parts[1].len() >= 10
        && parts.iter().all(|p| p.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '='))
}

fn has_key_prefix(s: &str) -> bool {
    KEY_PREFIXES.iter().any(|(prefix, min)| {
        s.starts_with(prefix) && {
            let rest = &s[prefix.len()..];
            rest.len() >= *min && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        }
    })
}

/// Redacts free text: PEM private keys, header lines, `key=value` and
/// `"key": "value"` pairs with sensitive keys, `Bearer`/`Basic` credentials,
/// JWTs, well-known key prefixes and URLs.
pub fn redact_text(text: &str) -> String {
    if nothing_to_redact(text) {
        return text.to_string();
    }
    redact_text_fully(text)
}

/// Token runs shorter than this can be no key: the shortest
/// [`KEY_PREFIXES`] match and the shortest JWT are longer (a test checks).
const SHORTEST_SECRET_RUN: usize = 15;

/// Whether no rule of [`redact_text_fully`] can change `text` (the common
/// case of names and labels), found in one pass: every rule needs a `:`,
/// `=` or `"`, a `Bearer`/`Basic` word, a PEM header, or a run of token
/// characters as long as the shortest key. A test compares both on the
/// fixture table and on generated text.
fn nothing_to_redact(text: &str) -> bool {
    let mut run = 0;
    for c in text.chars() {
        if matches!(c, ':' | '=' | '"') {
            return false;
        }
        if is_token_char(c) {
            run += 1;
            if run >= SHORTEST_SECRET_RUN {
                return false;
            }
        } else {
            run = 0;
        }
    }
    let has_word = |w: &str| text.as_bytes().windows(w.len()).any(|b| b.eq_ignore_ascii_case(w.as_bytes()));
    !has_word("bearer") && !has_word("basic") && !text.contains("-----BEGIN")
}

fn redact_text_fully(text: &str) -> String {
    let text = redact_pem(text);
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&redact_line(line));
    }
    out
}

fn redact_pem(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("-----BEGIN") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN") {
        let header_end = rest[start + 10..].find("-----").map(|i| start + 10 + i + 5);
        let Some(header_end) = header_end else { break };
        let label = &rest[start + 10..header_end - 5];
        if !label.contains("PRIVATE KEY") {
            out.push_str(&rest[..header_end]);
            rest = &rest[header_end..];
            continue;
        }
        out.push_str(&rest[..start]);
        out.push_str(MASK);
        match rest[header_end..].find("-----END") {
            Some(e) => {
                let end_start = header_end + e;
                let end = rest[end_start + 8..].find("-----").map_or(rest.len(), |i| end_start + 8 + i + 5);
                rest = &rest[end..];
            }
            None => rest = "",
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

fn redact_line(line: &str) -> String {
    // A header line: `Name: value`.
    if let Some((name, _)) = line.split_once(':') {
        let n = name.trim();
        if !n.is_empty()
            && !n.contains(' ')
            && !n.contains('"')
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            && SECRET_HEADERS.contains(&n.to_ascii_lowercase().as_str())
        {
            return format!("{name}: {MASK}");
        }
    }
    let line = redact_json_pairs(line);
    let mut out = String::with_capacity(line.len());
    let mut mask_next = false;
    for piece in split_keep_spaces(&line) {
        if piece.chars().all(char::is_whitespace) {
            out.push_str(piece);
            continue;
        }
        let lower = piece.to_ascii_lowercase();
        if mask_next {
            // `Authorization: Bearer <token>`: the scheme stays, the token goes.
            if matches!(lower.as_str(), "bearer" | "basic" | "digest" | "token") {
                out.push_str(piece);
                continue;
            }
            mask_next = false;
            out.push_str(MASK);
            continue;
        }
        if let Some(key) = piece.strip_suffix(':').or_else(|| piece.strip_suffix('='))
            && !key.contains('"')
            && !key.is_empty()
            && is_sensitive_key(key)
        {
            out.push_str(piece);
            mask_next = true;
            continue;
        }
        if lower == "bearer" || lower == "basic" {
            out.push_str(piece);
            mask_next = true;
            continue;
        }
        out.push_str(&redact_piece(piece));
    }
    out
}

/// Splits into alternating runs of whitespace and non-whitespace.
fn split_keep_spaces(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_space = None;
    for (i, c) in s.char_indices() {
        let sp = c.is_whitespace();
        if in_space.is_some_and(|prev| prev != sp) {
            out.push(&s[start..i]);
            start = i;
        }
        in_space = Some(sp);
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

fn redact_piece(piece: &str) -> String {
    if let Some(i) = piece.find("://") {
        let scheme = &piece[..i];
        if let Some(s) = scheme.rfind(|c: char| !c.is_ascii_alphanumeric() && c != '+' && c != '-' && c != '.') {
            // The URL starts after that (possibly multi-byte) character.
            let start = s + scheme[s..].chars().next().map_or(1, char::len_utf8);
            return format!("{}{}", &piece[..start], redact_url(&piece[start..]));
        }
        return redact_url(piece);
    }
    if let Some(m) = redact_token_run(piece) {
        return m;
    }
    // `{secret:NAME}` names a stored secret (shared::mask); the name is
    // not a value.
    if let Some(rest) = piece.strip_prefix("{secret:")
        && let Some((name, _)) = rest.split_once('}')
        && crate::names::is_valid_secret_name(name)
    {
        return piece.to_string();
    }
    // key=value or key:value pairs in free text (`password=hunter2`).
    if piece.contains('=') && piece.contains('&') && !piece.contains('"') {
        return redact_pairs(piece, '&');
    }
    for sep in ['=', ':'] {
        if let Some((k, v)) = piece.split_once(sep) {
            if k.contains('"') {
                continue; // JSON pairs were handled already
            }
            let key = k.trim_matches(|c: char| !c.is_alphanumeric() && c != '_' && c != '-');
            if !v.is_empty() && !key.is_empty() && is_sensitive_key(key) {
                return format!("{k}{sep}{MASK}");
            }
            if let Some(m) = redact_token_run(v) {
                return format!("{k}{sep}{m}");
            }
        }
    }
    // Runs inside punctuation, e.g. (ghp_…).
    if piece.chars().any(|c| !is_token_char(c)) {
        let mut out = String::new();
        let mut run = String::new();
        for c in piece.chars() {
            if is_token_char(c) {
                run.push(c);
            } else {
                out.push_str(&redact_token_run(&run).unwrap_or_else(|| run.clone()));
                run.clear();
                out.push(c);
            }
        }
        out.push_str(&redact_token_run(&run).unwrap_or(run));
        return out;
    }
    piece.to_string()
}

/// `"key": "value"` with a sensitive key → `"key": "••••"`.
fn redact_json_pairs(line: &str) -> String {
    if !line.contains('"') {
        return line.to_string();
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(q1) = rest.find('"') {
        let Some(q2) = find_closing_quote(&rest[q1 + 1..]).map(|i| q1 + 1 + i) else { break };
        let key = &rest[q1 + 1..q2];
        let after = &rest[q2 + 1..];
        let trimmed = after.trim_start();
        out.push_str(&rest[..=q2]);
        if let Some(after_colon) = trimmed.strip_prefix(':') {
            let value = after_colon.trim_start();
            let ws_len = after.len() - value.len();
            if value.starts_with('"')
                && is_sensitive_key(key)
                && let Some(v_end) = find_closing_quote(&value[1..])
            {
                out.push_str(&after[..ws_len]);
                out.push('"');
                out.push_str(MASK);
                out.push('"');
                rest = &value[1 + v_end + 1..];
                continue;
            }
            if is_sensitive_key(key) && !value.starts_with('"') && !value.starts_with('{') && !value.starts_with('[') {
                // A bare number or literal value.
                let end = value.find([',', '}', ']']).unwrap_or(value.len());
                if end > 0 && !value[..end].trim().is_empty() && value[..end].trim() != "null" {
                    out.push_str(&after[..ws_len]);
                    out.push_str(MASK);
                    rest = &value[end..];
                    continue;
                }
            }
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

fn find_closing_quote(s: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return Some(i),
            _ => escaped = false,
        }
    }
    None
}

/// Redacts a JSON value in place: sensitive keys get [`MASK`], strings are
/// redacted as text.
pub fn redact_json(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, val) in map.iter_mut() {
                if is_sensitive_key(k) && !val.is_null() && !val.is_object() && !val.is_array() {
                    *val = serde_json::Value::String(MASK.into());
                } else {
                    redact_json(val);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(redact_json),
        serde_json::Value::String(s) => {
            let r = redact_text(s);
            if r != *s {
                *s = r;
            }
        }
        _ => {}
    }
}

/// What the value of a header becomes unless the header is known to be
/// harmless ([`SAFE_HEADERS`]): its name stays, the value goes.
pub const REDACTED: &str = "<redacted>";

/// Headers known to carry nothing secret: content description, caching,
/// dates, CORS, security policies, fetch metadata, client hints. Every
/// other header (custom `X-…` ones included) is shown as [`REDACTED`];
/// the credential headers ([`SECRET_HEADERS`]) always are.
const SAFE_HEADERS: &[&str] = &[
    "accept",
    "accept-encoding",
    "accept-language",
    "accept-ranges",
    "access-control-allow-credentials",
    "access-control-allow-headers",
    "access-control-allow-methods",
    "access-control-allow-origin",
    "access-control-expose-headers",
    "access-control-max-age",
    "access-control-request-headers",
    "access-control-request-method",
    "age",
    "allow",
    "alt-svc",
    "cache-control",
    "connection",
    "content-disposition",
    "content-encoding",
    "content-language",
    "content-length",
    "content-location",
    "content-range",
    "content-security-policy",
    "content-security-policy-report-only",
    "content-type",
    "cross-origin-embedder-policy",
    "cross-origin-opener-policy",
    "cross-origin-resource-policy",
    "date",
    "dnt",
    "expires",
    "host",
    "if-modified-since",
    "if-unmodified-since",
    "keep-alive",
    "last-modified",
    "location",
    "origin",
    "permissions-policy",
    "pragma",
    "priority",
    "range",
    "referer",
    "referrer-policy",
    "retry-after",
    "sec-ch-ua",
    "sec-ch-ua-mobile",
    "sec-ch-ua-platform",
    "sec-fetch-dest",
    "sec-fetch-mode",
    "sec-fetch-site",
    "sec-fetch-user",
    "server",
    "strict-transport-security",
    "timing-allow-origin",
    "transfer-encoding",
    "upgrade-insecure-requests",
    "user-agent",
    "vary",
    "via",
    "x-content-type-options",
    "x-frame-options",
    "x-requested-with",
    "x-xss-protection",
];

/// Safe headers whose value is a URL (its query and userinfo redacted).
const URL_HEADERS: &[&str] = &["referer", "location", "content-location", "origin"];

/// Whether header `name` is on the allow-list of harmless headers.
pub fn is_safe_header(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SAFE_HEADERS.contains(&lower.as_str()) && !SECRET_HEADERS.contains(&lower.as_str())
}

/// A captured header's value as every sink shows it: [`REDACTED`] unless
/// the header is harmless ([`is_safe_header`]); a harmless one is still
/// redacted as text (or as a URL).
pub fn redact_header_shown(name: &str, value: &str) -> String {
    if !is_safe_header(name) {
        return REDACTED.to_string();
    }
    if URL_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
        return redact_url(value);
    }
    redact_text(value)
}

/// Values shorter than this are not masked by value (they would match
/// everywhere); they are still masked under sensitive names.
pub const MIN_KNOWN_VALUE_CHARS: usize = 4;

/// A value the daemon knows to be secret (a stored secret): wherever it
/// appears, under any name, it is shown as `{secret:NAME}`. `Debug` shows
/// the name only.
#[derive(Clone, PartialEq, Eq)]
pub struct Known {
    pub name: String,
    pub value: String,
}

impl std::fmt::Debug for Known {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Known").field("name", &self.name).finish_non_exhaustive()
    }
}

/// `s` percent-encoded the way `encodeURIComponent` does (`space_plus`:
/// the way forms and `URLSearchParams` do, spaces as `+`).
fn percent_encode(s: &str, space_plus: bool) -> String {
    let mut out = String::with_capacity(s.len() * 3);
    for b in s.bytes() {
        let keep = b.is_ascii_alphanumeric()
            || if space_plus {
                matches!(b, b'*' | b'-' | b'.' | b'_')
            } else {
                matches!(b, b'-' | b'_' | b'.' | b'!' | b'~' | b'*' | b'\'' | b'(' | b')')
            };
        if keep {
            out.push(b as char);
        } else if space_plus && b == b' ' {
            out.push('+');
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `text` with every known value, as is, percent-encoded (both ways, and
/// lower-case hex) or JSON-escaped, replaced by `{secret:NAME}`. Longer
/// values first, so a value inside another cannot split it.
pub fn mask_known(text: &str, known: &[Known]) -> String {
    let mut out = text.to_string();
    let mut known: Vec<&Known> = known.iter().filter(|k| k.value.chars().count() >= MIN_KNOWN_VALUE_CHARS).collect();
    known.sort_by_key(|k| std::cmp::Reverse(k.value.len()));
    for k in known {
        let shown = format!("{{secret:{}}}", k.name);
        for form in known_forms(&k.value).iter().filter(|f| !f.is_empty()) {
            if out.contains(form.as_str()) {
                out = out.replace(form.as_str(), &shown);
            }
        }
    }
    out
}

/// The spellings a known value is recognised in: as is, percent-encoded
/// (`encodeURIComponent`, forms' `+` for spaces, lower-case hex),
/// JSON-escaped, and the ways a page re-spells a value it was given (issue
/// 47): upper- and lower-cased, reversed, hex of its bytes (both cases) and
/// base64 (standard and URL-safe, padded or not, wherever it sits in a
/// longer base64 text: [`base64_cores`]); longest first, without repeats.
pub fn known_forms(value: &str) -> Vec<String> {
    let json = serde_json::to_string(value).unwrap_or_default();
    let json = json.get(1..json.len().saturating_sub(1)).unwrap_or("").to_string();
    let encoded = percent_encode(value, false);
    let mut forms = vec![value.to_string(), encoded.clone(), percent_encode(value, true), json];
    forms.push(lower_hex_escapes(&encoded));
    forms.push(value.to_uppercase());
    forms.push(value.to_lowercase());
    forms.push(value.chars().rev().collect());
    let hex: String = value.bytes().map(|b| format!("{b:02x}")).collect();
    forms.push(hex.to_uppercase());
    forms.push(hex);
    for core in base64_cores(value.as_bytes()) {
        forms.push(core.replace('+', "-").replace('/', "_"));
        forms.push(core);
    }
    forms.retain(|f| f.chars().count() >= MIN_KNOWN_VALUE_CHARS);
    forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
    forms.dedup();
    forms
}

/// The base64 characters that depend on `bytes` alone, for each of the
/// three alignments `bytes` can take inside a longer text (0, 1 or 2
/// bytes before it): whatever comes before or after, a base64 text holding
/// `bytes` holds one of these.
pub fn base64_cores(bytes: &[u8]) -> Vec<String> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    (0..3usize)
        .map(|k| {
            let mut data = vec![0u8; k];
            data.extend_from_slice(bytes);
            let bits = data.len() * 8;
            // Characters wholly inside `bytes`' bits.
            let (first, end) = ((8 * k).div_ceil(6), bits / 6);
            (first..end)
                .map(|j| {
                    let mut v = 0u32;
                    for b in 0..6 {
                        let bit = 6 * j + b;
                        v = (v << 1) | u32::from((data[bit / 8] >> (7 - bit % 8)) & 1);
                    }
                    ALPHABET[v as usize] as char
                })
                .collect()
        })
        .collect()
}

fn lower_hex_escapes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '%' {
            for _ in 0..2 {
                if let Some(h) = chars.next() {
                    out.push(h.to_ascii_lowercase());
                }
            }
        }
    }
    out
}

/// A body as it may be shown, read by its MIME type: JSON (sensitive keys
/// at any depth), a URL-encoded form (sensitive fields), anything else as
/// text. Known values were masked before.
pub fn redact_body(mime: &str, text: &str) -> String {
    let mime = mime.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let looks_json = mime.ends_with("/json") || mime.ends_with("+json") || {
        let t = text.trim_start();
        mime.starts_with("text/plain") && (t.starts_with('{') || t.starts_with('['))
    };
    if looks_json && let Ok(mut v) = serde_json::from_str::<serde_json::Value>(text) {
        redact_json(&mut v);
        return serde_json::to_string(&v).unwrap_or_default();
    }
    if mime == "application/x-www-form-urlencoded" && !text.contains('\n') {
        return redact_pairs(text.trim(), '&');
    }
    redact_text(text)
}

/// One form field's value as it may be shown.
pub fn redact_field(name: &str, value: &str) -> String {
    if !value.is_empty() && is_sensitive_key(name) && !value.starts_with("{secret:") {
        return MASK.to_string();
    }
    redact_text(value)
}

/// A captured request as every sink (tool results, exports, logs) shows
/// it: known values as `{secret:NAME}`, then URLs, headers, form fields
/// and bodies redacted.
pub fn redact_captured(c: &crate::network::Captured, known: &[Known]) -> crate::network::Captured {
    use crate::network::{Header, RequestBody, ResponseBody};
    let mask = |s: &str| mask_known(s, known);
    let headers = |hs: &[Header]| -> Vec<Header> {
        hs.iter()
            .map(|h| Header { name: h.name.clone(), value: redact_header_shown(&h.name, &mask(&h.value)) })
            .collect()
    };
    let body = c.request_body.as_ref().map(|b| match b {
        RequestBody::Form { fields } => RequestBody::Form {
            fields: fields
                .iter()
                .map(|(k, vs)| (redact_text(k), vs.iter().map(|v| redact_field(k, &mask(v))).collect()))
                .collect(),
        },
        RequestBody::Raw { text, cut } => {
            RequestBody::Raw { text: redact_body(c.request_mime(), &mask(text)), cut: *cut }
        }
    });
    crate::network::Captured {
        tab: c.tab,
        url: redact_url(&mask(&c.url)),
        method: c.method.chars().filter(|ch| ch.is_ascii_alphabetic()).take(16).collect(),
        resource_type: c.resource_type.chars().filter(|ch| ch.is_ascii_alphanumeric() || *ch == '_').take(32).collect(),
        status: c.status,
        status_line: redact_text(&mask(&c.status_line)),
        error: c.error.as_deref().map(|e| redact_text(&mask(e))),
        started_ms: c.started_ms,
        duration_ms: c.duration_ms,
        request_headers: headers(&c.request_headers),
        response_headers: headers(&c.response_headers),
        request_body: body,
        redirect_url: c.redirect_url.as_deref().map(|u| redact_url(&mask(u))),
        from_cache: c.from_cache,
        response_body: c.response_body.as_ref().map(|b| match b {
            ResponseBody::Text { text, cut } => {
                ResponseBody::Text { text: redact_body(c.response_mime(), &mask(text)), cut: *cut }
            }
            ResponseBody::NotText { mime } => ResponseBody::NotText { mime: redact_text(&mask(mime)) },
            ResponseBody::Unavailable { reason } => ResponseBody::Unavailable { reason: redact_text(&mask(reason)) },
        }),
        websocket_messages: c
            .websocket_messages
            .iter()
            .map(|m| crate::network::WsMessage {
                data: if m.opcode == 1 { redact_body("text/plain", &mask(&m.data)) } else { mask(&m.data) },
                ..m.clone()
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `fixtures/redaction/cases.tsv`: input, tab, expected output (`\n`
    /// and `\t` escaped); `=` as expected means "unchanged".
    #[test]
    fn redaction_cases_from_the_fixture_table() {
        let table = include_str!("../../fixtures/redaction/cases.tsv");
        let mut failures = Vec::new();
        let mut count = 0;
        for (n, line) in table.lines().enumerate() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let (input, expected) = line.split_once('\t').unwrap_or_else(|| panic!("line {}: no tab", n + 1));
            let unescape = |s: &str| s.replace("\\n", "\n").replace("\\t", "\t");
            let input = unescape(input);
            let expected = if expected == "=" { input.clone() } else { unescape(expected) };
            let got = redact_text(&input);
            count += 1;
            if got != expected {
                failures.push(format!(
                    "line {}:\n  input    {input:?}\n  expected {expected:?}\n  got      {got:?}",
                    n + 1
                ));
            }
        }
        assert!(count >= 60, "the table must hold at least 60 cases, has {count}");
        assert!(failures.is_empty(), "{} of {count} cases failed:\n{}", failures.len(), failures.join("\n"));
    }

    /// The fast path never skips text a rule would change: on the table
    /// above and on text built from the pieces the rules look for.
    #[test]
    fn the_fast_path_only_skips_text_no_rule_changes() {
        for (prefix, min) in KEY_PREFIXES {
            assert!(prefix.len() + min >= SHORTEST_SECRET_RUN, "{prefix}");
        }
        // The shortest JWT: 10 + 1 + 10 + 1 characters.
        let jwt = "eyJaaaaaaa.bbbbbbbbbb.";
        assert!(is_jwt(jwt) && !is_jwt("eyJaaaaaa.bbbbbbbbbb.") && !is_jwt("eyJaaaaaaa.bbbbbbbbb."));
        assert!(jwt.len() >= SHORTEST_SECRET_RUN);
        let table = include_str!("../../fixtures/redaction/cases.tsv");
        let mut inputs: Vec<String> = table
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .filter_map(|l| l.split_once('\t').map(|(i, _)| i.replace("\\n", "\n").replace("\\t", "\t")))
            .collect();
        let pieces = [
            "Item 7",
            "Order 12 · shipped",
            "Delete",
            "basic",
            "BeArEr",
            "x",
            "ghp_",
            "xoxb-",
            "0123456789",
            "abcdefghij",
            "eyJhbGciOi",
            ".",
            "-",
            "_",
            "~",
            "/",
            "+",
            " ",
            "\n",
            "\t",
            "(",
            ")",
            "é",
            "日本",
            "-----BEGIN",
            "PRIVATE KEY",
            "-----",
            "{secret:",
            "}",
            "&",
            "?",
            "@",
            "'",
            ",",
            "AKIA",
            "sk-",
            "npm_",
            "token",
            "password",
        ];
        // Every string of up to three pieces, and longer ones by a fixed walk.
        for a in pieces {
            for b in pieces {
                inputs.push(format!("{a}{b}"));
                for c in pieces {
                    inputs.push(format!("{a}{b}{c}"));
                }
            }
        }
        let mut seed = 0x2545_f491_u64;
        for _ in 0..20_000 {
            let mut t = String::new();
            for _ in 0..8 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                t.push_str(pieces[(seed % pieces.len() as u64) as usize]);
            }
            inputs.push(t);
        }
        for input in &inputs {
            let full = redact_text_fully(input);
            if nothing_to_redact(input) {
                assert_eq!(&full, input, "the fast path would leave {input:?} as it is");
            }
            assert_eq!(redact_text(input), full, "{input:?}");
        }
    }

    #[test]
    fn json_values_under_sensitive_keys_are_masked() {
        let mut v = serde_json::json!({"user": "ann", "password": "hunter2", "nested": {"api_key": "abc", "list": ["Bearer xyz123"]}, "count": 3});
        redact_json(&mut v);
        assert_eq!(v["user"], "ann");
        assert_eq!(v["password"], MASK);
        assert_eq!(v["nested"]["api_key"], MASK);
        assert_eq!(v["nested"]["list"][0], format!("Bearer {MASK}"));
        assert_eq!(v["count"], 3);
    }

    #[test]
    fn headers_are_masked_by_name() {
        assert_eq!(redact_header("Authorization", "Bearer abc"), MASK);
        assert_eq!(redact_header("Set-Cookie", "sid=1"), MASK);
        assert_eq!(redact_header("X-CSRF-Token", "abc"), MASK);
        assert_eq!(redact_header("Accept", "text/html"), "text/html");
    }

    /// `fixtures/redaction/network.tsv`: `kind<TAB>a<TAB>b<TAB>expected`,
    /// kinds `header` (name, value), `url` (-, url), `body` (MIME type,
    /// text), `field` (name, value); `=` as expected means "unchanged". The
    /// known secret `NOTE` is `Tr0ub4dor&3 note` and `PIN4` is `4821`.
    #[test]
    fn network_redaction_cases_from_the_fixture_table() {
        let known = vec![
            Known { name: "NOTE".into(), value: "Tr0ub4dor&3 note".into() },
            Known { name: "PIN4".into(), value: "4821".into() },
            Known { name: "ab".into(), value: "ab".into() },
        ];
        let table = include_str!("../../fixtures/redaction/network.tsv");
        let mut failures = Vec::new();
        let mut count = 0;
        for (n, line) in table.lines().enumerate() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let cols: Vec<&str> = line.split('\t').collect();
            assert_eq!(cols.len(), 4, "line {}: four columns", n + 1);
            let (kind, a, b) = (cols[0], cols[1], cols[2]);
            let expected = if cols[3] == "=" { b.to_string() } else { cols[3].to_string() };
            let got = match kind {
                "header" => redact_header_shown(a, &mask_known(b, &known)),
                "url" => redact_url(&mask_known(b, &known)),
                "body" => redact_body(a, &mask_known(b, &known)),
                "field" => redact_field(a, &mask_known(b, &known)),
                other => panic!("line {}: unknown kind {other}", n + 1),
            };
            count += 1;
            if got != expected {
                failures
                    .push(format!("line {}: {kind} {a:?} {b:?}\n  expected {expected:?}\n  got      {got:?}", n + 1));
            }
        }
        assert!(count >= 40, "the table must hold at least 40 cases, has {count}");
        assert!(failures.is_empty(), "{} of {count} cases failed:\n{}", failures.len(), failures.join("\n"));
    }

    #[test]
    fn known_values_are_masked_in_every_encoding_and_debug_hides_them() {
        let k = [Known { name: "N".into(), value: "a b/c\"d".into() }];
        for form in ["a b/c\"d", "a%20b%2Fc%22d", "a+b%2Fc%22d", "a b/c\\\"d", "a%20b%2fc%22d"] {
            assert_eq!(mask_known(&format!("x={form};"), &k), "x={secret:N};", "{form}");
        }
        assert!(!format!("{:?}", k[0]).contains("a b"));
    }

    #[test]
    fn a_captured_request_is_redacted_everywhere() {
        use crate::network::{Captured, Header, RequestBody};
        let h = |n: &str, v: &str| Header { name: n.into(), value: v.into() };
        let c = Captured {
            tab: 1,
            url: "https://u:p@a.example/api?token=abc&q=shoes&x=Tr0ub4dor%263%20note".into(),
            method: "POST".into(),
            resource_type: "xmlhttprequest".into(),
            status: 201,
            status_line: "HTTP/1.1 201 Created".into(),
            error: None,
            started_ms: 1.0,
            duration_ms: 2.0,
            request_headers: vec![h("Authorization", "Bearer abc"), h("Content-Type", "application/json"), h("X-Trace", "42")],
            response_headers: vec![h("Set-Cookie", "sid=1"), h("Location", "/next?session=77")],
            request_body: Some(RequestBody::Raw {
                text: r#"{"user":"ann","password":"pw","deep":{"list":[{"refresh_token":"t"}]},"extra":"Tr0ub4dor&3 note"}"#.into(),
                cut: false,
            }),
            redirect_url: None,
            from_cache: false,
            response_body: None,
            websocket_messages: Vec::new(),
        };
        let known = [Known { name: "NOTE".into(), value: "Tr0ub4dor&3 note".into() }];
        let r = redact_captured(&c, &known);
        assert_eq!(r.url, format!("https://{MASK}@a.example/api?token={MASK}&q=shoes&x={{secret:NOTE}}"));
        assert_eq!(r.request_headers[0].value, REDACTED);
        assert_eq!(r.request_headers[1].value, "application/json");
        assert_eq!(r.request_headers[2].value, REDACTED);
        assert_eq!(r.response_headers[0].value, REDACTED);
        assert_eq!(r.response_headers[1].value, format!("/next?session={MASK}"));
        let Some(RequestBody::Raw { text, .. }) = r.request_body else { panic!() };
        assert_eq!(
            text,
            format!(
                r#"{{"deep":{{"list":[{{"refresh_token":"{MASK}"}}]}},"extra":"{{secret:NOTE}}","password":"{MASK}","user":"ann"}}"#
            )
        );
    }

    #[test]
    fn response_bodies_and_websocket_messages_are_redacted_like_request_bodies() {
        use crate::network::{Captured, Header, ResponseBody, WsMessage};
        let c = Captured {
            tab: 1,
            url: "http://a.example/api/login".into(),
            method: "POST".into(),
            resource_type: "xmlhttprequest".into(),
            status: 200,
            status_line: String::new(),
            error: None,
            started_ms: 1.0,
            duration_ms: 2.0,
            request_headers: vec![],
            response_headers: vec![Header { name: "Content-Type".into(), value: "application/json".into() }],
            request_body: None,
            redirect_url: None,
            from_cache: false,
            response_body: Some(ResponseBody::Text {
                text: r#"{"user":{"name":"ann"},"access_token":"abc","tokens":{"refresh_token":"r1"},"echo":"Tr0ub4dor&3 note"}"#
                    .into(),
                cut: false,
            }),
            websocket_messages: vec![
                WsMessage { sent: true, time: 1.0, opcode: 1, data: r#"{"op":"hi","session":"s1"}"#.into() },
                WsMessage { sent: false, time: 2.0, opcode: 1, data: "echo Tr0ub4dor&3 note Bearer abcdef123".into() },
            ],
        };
        let known = [Known { name: "NOTE".into(), value: "Tr0ub4dor&3 note".into() }];
        let r = redact_captured(&c, &known);
        let Some(ResponseBody::Text { text, .. }) = &r.response_body else { panic!() };
        assert_eq!(
            text,
            &format!(
                r#"{{"access_token":"{MASK}","echo":"{{secret:NOTE}}","tokens":{{"refresh_token":"{MASK}"}},"user":{{"name":"ann"}}}}"#
            )
        );
        assert_eq!(r.websocket_messages[0].data, format!(r#"{{"op":"hi","session":"{MASK}"}}"#));
        assert!(r.websocket_messages[1].data.starts_with("echo {secret:NOTE} "), "{}", r.websocket_messages[1].data);
        assert!(!r.websocket_messages[1].data.contains("abcdef123"), "{}", r.websocket_messages[1].data);
    }
}

#[cfg(test)]
mod respelled {
    use super::*;

    /// Standard base64 of `bytes` (padded), to check the cores against.
    fn b64(bytes: &[u8]) -> String {
        const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk.iter().enumerate().fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
            for i in 0..4 {
                if i <= chunk.len() {
                    out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        out
    }

    #[test]
    fn a_value_respelled_by_the_page_is_masked() {
        let secret = "Sesame-Canary-4417-xyz";
        let known = [Known { name: "S".into(), value: secret.into() }];
        let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
        let reversed: String = secret.chars().rev().collect();
        let mut cases: Vec<(String, String)> = vec![
            ("upper".into(), secret.to_uppercase()),
            ("lower".into(), secret.to_lowercase()),
            ("reversed".into(), reversed),
            ("hex".into(), hex.clone()),
            ("HEX".into(), hex.to_uppercase()),
        ];
        for prefix in ["", "a", "ab", "pw=", "Bearer "] {
            let whole = b64(format!("{prefix}{secret}").as_bytes());
            cases.push((format!("base64 after {prefix:?}"), whole.clone()));
            cases.push((format!("base64url after {prefix:?}"), whole.replace('+', "-").replace('/', "_")));
            cases.push((format!("base64 unpadded after {prefix:?}"), whole.trim_end_matches('=').to_string()));
        }
        for (name, spelled) in cases {
            let text = format!("{{\"note\":\"{spelled}\",\"n\":1}}");
            let out = mask_known(&text, &known);
            assert!(!out.contains(&spelled), "{name}: {out}");
            assert!(out.contains("{secret:S}"), "{name}: {out}");
        }
        // Harmless text stays as it is.
        for harmless in ["{\"note\":\"hello world\"}", "Sesame-Canary", "c2VzYW1l"] {
            assert_eq!(mask_known(harmless, &known), harmless);
        }
    }

    #[test]
    fn base64_cores_are_inside_every_alignment() {
        let v = b"0123456789abcdef!";
        for pre in 0..6 {
            let mut data = vec![b'x'; pre];
            data.extend_from_slice(v);
            data.extend_from_slice(b"tail");
            let whole = b64(&data);
            assert!(base64_cores(v).iter().any(|c| whole.contains(c.as_str())), "prefix {pre}: {whole}");
        }
    }
}
