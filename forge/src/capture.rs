//! Chaperone's own capture as the learner's input (the MCP tool
//! `api_learn`).
//!
//! The bridge keeps each session's requests as `shared::network::Captured`
//! (no response bodies in the default build; the bodies build's whole text
//! bodies are read, as redacted). The learner reads them only
//! after `shared::redact::redact_captured`, the redaction every network
//! output goes through, so no credential value reaches it at all. Two
//! things that redaction hides are facts the learner needs, and neither is
//! a value:
//!
//! - the *scheme word* of an `Authorization` header (`Bearer`, `Basic`,
//!   `Token`…), so that a bearer token becomes `bearerAuth` and not an
//!   opaque header key ([`auth_shape`]);
//! - the *names* of the cookies a request sent and an answer set, so that
//!   a session cookie becomes a cookie scheme.
//!
//! [`entry`] takes both the redacted request (everything the learner
//! reads) and the raw one (only those shapes), and writes the value part
//! of those headers as [`shared::redact::REDACTED`].
//!
//! The final scan of what the learner writes is not blind, though: it
//! runs against every credential of the *unredacted* requests
//! ([`credentials`]: bearer tokens, cookies, credential and unknown
//! headers, sensitive query parameters and JSON keys, as
//! `crate::credentials` collects them from a HAR), so a token the page
//! also copied under an innocent name, hex-encoded into a path or into a
//! header nobody listed is refused or templated, never written. Those
//! values are only compared against, never learned from.
//!
//! Resource types are `webRequest`'s; they become DevTools' words
//! (`main_frame` → `document`, `xmlhttprequest` → `xhr`,
//! `csp_report` → `ping`) so that [`crate::keep`] applies one set of rules.

use shared::network::{Captured, Header, RequestBody, ResponseBody};
use shared::redact::REDACTED;

use crate::credentials::Credentials;
use crate::har::{Content, Entry, Pair, PostData, Request, Response};

/// Longest scheme word kept from an `Authorization` header.
const MAX_SCHEME_CHARS: usize = 20;
/// Longest cookie name kept.
const MAX_COOKIE_NAME_CHARS: usize = 64;

/// The value the learner sees for a request or response header, given its
/// raw value: for `Authorization` and `Proxy-Authorization` the scheme
/// word and [`REDACTED`]; for `Cookie` each cookie's name with
/// [`REDACTED`]; for `Set-Cookie` the cookie's name with [`REDACTED`].
/// `None` for every other header (the redacted value stands). A scheme
/// word or cookie name that is not a plain token (letters, digits, `-`,
/// `_`, `.`) is dropped: only names cross, never something that could be
/// a value.
pub fn auth_shape(name: &str, raw: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    let token = |s: &str, max: usize| {
        !s.is_empty()
            && s.chars().count() <= max
            && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    match lower.as_str() {
        "authorization" | "proxy-authorization" => {
            let raw = raw.trim_start();
            let (word, rest) = raw.split_once(' ').unwrap_or((raw, ""));
            // A bare value with no scheme word is itself the credential.
            if rest.trim().is_empty() || !token(word, MAX_SCHEME_CHARS) || word.chars().any(|c| c.is_ascii_digit()) {
                return Some(REDACTED.to_string());
            }
            Some(format!("{word} {REDACTED}"))
        }
        "cookie" => {
            let names: Vec<String> = raw
                .split(';')
                .filter_map(|p| p.trim().split_once('=').map(|(n, _)| n.trim()))
                .filter(|n| token(n, MAX_COOKIE_NAME_CHARS))
                .map(|n| format!("{n}={REDACTED}"))
                .collect();
            Some(names.join("; "))
        }
        "set-cookie" => {
            let first = raw.split(';').next().unwrap_or("");
            Some(match first.split_once('=') {
                Some((n, _)) if token(n.trim(), MAX_COOKIE_NAME_CHARS) => format!("{}={REDACTED}", n.trim()),
                _ => REDACTED.to_string(),
            })
        }
        _ => None,
    }
}

/// `webRequest`'s resource type in DevTools' words.
pub fn resource_type(web_request: &str) -> &str {
    match web_request {
        "main_frame" | "sub_frame" => "document",
        "xmlhttprequest" => "xhr",
        "csp_report" => "ping",
        other => other,
    }
}

fn pairs(shown: &[Header], raw: &[Header], shapes: bool) -> Vec<Pair> {
    shown
        .iter()
        .enumerate()
        .map(|(i, h)| {
            // `redact_captured` keeps the headers in order and by name.
            let raw_value = raw.get(i).filter(|r| r.name == h.name).map(|r| r.value.as_str());
            let shaped = if shapes { raw_value.and_then(|r| auth_shape(&h.name, r)) } else { None };
            let value = shaped.unwrap_or_else(|| h.value.clone());
            Pair { name: h.name.clone(), value }
        })
        .collect()
}

fn query(url: &str) -> Vec<Pair> {
    url::Url::parse(url)
        .map(|u| u.query_pairs().map(|(k, v)| Pair { name: k.into_owned(), value: v.into_owned() }).collect())
        .unwrap_or_default()
}

/// One learner entry from a captured request: `shown` is the request as
/// `redact_captured` returned it, `raw` the same request as captured (read
/// only by [`auth_shape`]).
pub fn entry(shown: &Captured, raw: &Captured) -> Entry {
    build(shown, raw, true)
}

/// Every credential of the unredacted requests, for the learner's final
/// scan only (`LearnOptions::credentials`): the requests are read as a
/// HAR holding them would be, by `Credentials::collect`.
pub fn credentials<'a>(raw: impl IntoIterator<Item = &'a Captured>) -> Credentials {
    let entries: Vec<Entry> = raw.into_iter().map(|c| build(c, c, false)).collect();
    Credentials::collect(&entries)
}

fn build(shown: &Captured, raw: &Captured, shapes: bool) -> Entry {
    let request_headers = pairs(&shown.request_headers, &raw.request_headers, shapes);
    let response_headers = pairs(&shown.response_headers, &raw.response_headers, shapes);
    let post_data = shown.request_body.as_ref().map(|b| match b {
        RequestBody::Raw { text, .. } => {
            PostData { mime_type: shown.request_mime().to_string(), text: Some(text.clone()), params: Vec::new() }
        }
        RequestBody::Form { fields } => {
            let mime = if shown.request_mime().is_empty() {
                "application/x-www-form-urlencoded".to_string()
            } else {
                shown.request_mime().to_string()
            };
            let params = fields
                .iter()
                .flat_map(|(k, vs)| vs.iter().map(move |v| Pair { name: k.clone(), value: v.clone() }))
                .collect();
            PostData { mime_type: mime, text: None, params }
        }
    });
    Entry {
        request: Request {
            method: shown.method.clone(),
            url: shown.url.clone(),
            headers: request_headers,
            query_string: query(&shown.url),
            post_data,
        },
        response: Response {
            status: i64::from(shown.status),
            headers: response_headers,
            // A whole text body (the bodies build), as redacted: the
            // response's fields can be learned. A cut one is not whole JSON.
            content: Some(Content {
                mime_type: shown.response_mime().to_string(),
                text: match &shown.response_body {
                    Some(ResponseBody::Text { text, cut: false }) => Some(text.clone()),
                    _ => None,
                },
                encoding: None,
            }),
        },
        resource_type: Some(resource_type(&shown.resource_type).to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_shapes_keep_scheme_words_and_cookie_names_only() {
        let cases: &[(&str, &str, Option<&str>)] = &[
            ("Authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.e30.x", Some("Bearer <redacted>")),
            ("authorization", "Basic dXNlcjpwdw==", Some("Basic <redacted>")),
            ("Authorization", "Token abc123", Some("Token <redacted>")),
            // No scheme word: the whole value is the credential.
            ("Authorization", "sk_live_0123456789abcdef", Some("<redacted>")),
            // A "word" that looks like a value is not kept.
            ("Authorization", "ab12cd34 xyz", Some("<redacted>")),
            ("Authorization", "a=b xyz", Some("<redacted>")),
            ("Proxy-Authorization", "Basic Zm9v", Some("Basic <redacted>")),
            ("Cookie", "sid=s3cr3t; theme=dark", Some("sid=<redacted>; theme=<redacted>")),
            ("Cookie", "weird name=1; ok=2", Some("ok=<redacted>")),
            ("Cookie", "", Some("")),
            ("Set-Cookie", "lib_session=abc; HttpOnly; Path=/", Some("lib_session=<redacted>")),
            ("Set-Cookie", "garbage", Some("<redacted>")),
            ("X-CSRF-Token", "abc", None),
            ("Content-Type", "application/json", None),
        ];
        for (name, raw, want) in cases {
            assert_eq!(auth_shape(name, raw).as_deref(), *want, "{name}: {raw}");
        }
    }

    #[test]
    fn a_whole_text_body_is_learned_from_and_a_cut_one_is_not() {
        let text = |body: Option<ResponseBody>| {
            let mut c = cap();
            c.response_body = body;
            entry(&c, &c).response.content.and_then(|c| c.text)
        };
        let json = r#"{"id":1,"title":"x"}"#.to_string();
        assert_eq!(text(Some(ResponseBody::Text { text: json.clone(), cut: false })), Some(json.clone()));
        assert_eq!(text(Some(ResponseBody::Text { text: json, cut: true })), None, "a cut body is not whole JSON");
        assert_eq!(text(Some(ResponseBody::Unavailable { reason: "detached".into() })), None);
        assert_eq!(text(None), None);
    }

    #[test]
    fn resource_types_become_devtools_words() {
        for (w, d) in
            [("main_frame", "document"), ("sub_frame", "document"), ("xmlhttprequest", "xhr"), ("image", "image")]
        {
            assert_eq!(resource_type(w), d);
        }
    }

    fn cap() -> Captured {
        Captured {
            tab: 1,
            url: "http://a.example/api/items/7?page=2".into(),
            method: "POST".into(),
            resource_type: "xmlhttprequest".into(),
            status: 201,
            status_line: "HTTP/1.1 201 Created".into(),
            error: None,
            started_ms: 0.0,
            duration_ms: 1.0,
            request_headers: vec![
                Header { name: "Authorization".into(), value: "Bearer t0ps3cr3t-value".into() },
                Header { name: "Cookie".into(), value: "sid=c00kie-value".into() },
                Header { name: "Content-Type".into(), value: "application/json".into() },
            ],
            response_headers: vec![
                Header { name: "Content-Type".into(), value: "application/json".into() },
                Header { name: "Set-Cookie".into(), value: "sid=c00kie-value; HttpOnly".into() },
            ],
            request_body: Some(RequestBody::Raw {
                text: r#"{"title":"x","password":"hunter2-pw"}"#.into(),
                cut: false,
            }),
            redirect_url: None,
            from_cache: false,
            response_body: None,
            websocket_messages: Vec::new(),
        }
    }

    #[test]
    fn an_entry_holds_no_credential_of_the_raw_request() {
        let raw = cap();
        let shown = shared::redact::redact_captured(&raw, &[]);
        let e = entry(&shown, &raw);
        let text = format!("{e:?}");
        for v in ["t0ps3cr3t-value", "c00kie-value", "hunter2-pw"] {
            assert!(!text.contains(v), "{v} in {text}");
        }
        assert_eq!(crate::har::header(&e.request.headers, "authorization"), Some("Bearer <redacted>"));
        assert_eq!(crate::har::header(&e.request.headers, "cookie"), Some("sid=<redacted>"));
        assert_eq!(crate::har::header(&e.response.headers, "set-cookie"), Some("sid=<redacted>"));
        assert_eq!(e.resource_type.as_deref(), Some("xhr"));
        assert_eq!(e.request.query_string.len(), 1);
        assert_eq!(e.response_media(), "application/json");
        assert!(e.request_json().is_some());
    }

    fn call(method: &str, path: &str, status: u16, body: Option<&str>) -> Captured {
        let mut c = cap();
        c.method = method.into();
        c.url = format!("http://a.example{path}");
        c.status = status;
        c.request_body = body.map(|b| RequestBody::Raw { text: b.into(), cut: false });
        c.request_headers = vec![
            Header { name: "Authorization".into(), value: "Bearer t0ps3cr3t-value-1234567890".into() },
            Header { name: "Cookie".into(), value: "sid=c00kie-value-1234567890".into() },
            Header { name: "X-CSRF-Token".into(), value: "csrf-value-1234567890".into() },
            Header { name: "Content-Type".into(), value: "application/json".into() },
        ];
        c.response_headers = vec![Header { name: "Content-Type".into(), value: "application/json".into() }];
        c
    }

    #[test]
    fn a_redacted_capture_is_learned_with_its_schemes_and_templates() {
        let mut raw = vec![call("POST", "/api/login", 200, Some(r#"{"user":"ann","password":"hunter2-pw-123"}"#))];
        raw[0].request_headers.retain(|h| h.name == "Content-Type");
        raw[0]
            .response_headers
            .push(Header { name: "Set-Cookie".into(), value: "sid=c00kie-value-1234567890; HttpOnly".into() });
        for i in [1, 2, 3, 17] {
            raw.push(call("GET", &format!("/api/items/{i}"), 200, None));
            raw.push(call("PATCH", &format!("/api/items/{i}"), 200, Some(r#"{"done":true}"#)));
        }
        raw.push(call("GET", "/api/items?page=2&sort=name", 200, None));
        raw.push(call("POST", "/api/beacon?token=b3acon-value-123456", 204, None));
        let mut page = call("GET", "/", 200, None);
        page.resource_type = "main_frame".into();
        page.response_headers = vec![Header { name: "Content-Type".into(), value: "text/html".into() }];
        raw.push(page);
        let entries: Vec<Entry> = raw.iter().map(|c| entry(&shared::redact::redact_captured(c, &[]), c)).collect();
        let har = crate::har::Har { log: crate::har::Log { entries } };
        let learned = crate::learn(&[har], &crate::LearnOptions::default()).expect("learned");
        let text = learned.spec.to_string();
        for v in ["t0ps3cr3t", "c00kie-value", "csrf-value", "hunter2", "b3acon"] {
            assert!(!text.contains(v), "{v} in the spec");
        }
        let paths = learned.spec["paths"].as_object().unwrap();
        let mut keys: Vec<&str> = paths.keys().map(String::as_str).collect();
        keys.sort();
        assert_eq!(keys, ["/api/items", "/api/items/{itemId}", "/api/login"], "{text}");
        let schemes = &learned.spec["components"]["securitySchemes"];
        assert_eq!(schemes["bearerAuth"]["scheme"], "bearer", "{schemes}");
        assert_eq!(schemes["sidCookie"]["in"], "cookie", "{schemes}");
        assert_eq!(schemes["csrfToken"]["in"], "header", "{schemes}");
        let patch = &paths["/api/items/{itemId}"]["patch"];
        assert_eq!(patch["x-samples"], 4);
        assert!(
            patch["requestBody"]["content"]["application/json"]["schema"]["properties"].get("done").is_some(),
            "{patch}"
        );
    }
}
