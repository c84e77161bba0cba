//! Which HAR entries are the API. Rules, in order:
//! 1. Failed (`status` 0, or no response recorded), `OPTIONS` and `HEAD`
//!    requests are left out, and methods OpenAPI has no place for
//!    (WebDAV's `PROPFIND`, made-up ones).
//! 2. The page itself and static files are left out: resource types
//!    `document`, `stylesheet`, `script`, `image`, `font`, `media`,
//!    `manifest`, `ping`, `beacon`, and paths with a static file extension.
//! 3. Beacons and analytics are left out: known analytics hosts and
//!    collection paths (`/collect`, `/beacon`, `/track`…).
//! 4. What is left is kept when it answered JSON, or is a write (not `GET`)
//!    with a JSON or form body, or a write answered without a body.
//! 5. Only the hosts asked for are kept; with none asked for, the hosts
//!    that answered JSON at least once.

use std::collections::BTreeSet;

use crate::har::{Entry, is_json};

/// The methods an OpenAPI path item has a field for (less `OPTIONS` and
/// `HEAD`, left out above).
const DESCRIBABLE_METHODS: &[&str] = &["GET", "PUT", "POST", "DELETE", "PATCH", "TRACE"];

const SKIPPED_TYPES: &[&str] = &[
    "document",
    "stylesheet",
    "script",
    "image",
    "font",
    "media",
    "manifest",
    "ping",
    "beacon",
    "texttrack",
    "websocket",
];

const STATIC_EXTENSIONS: &[&str] = &[
    "js", "mjs", "css", "map", "png", "jpg", "jpeg", "gif", "svg", "webp", "avif", "ico", "woff", "woff2", "ttf",
    "otf", "eot", "mp4", "webm", "mp3", "wav", "html", "htm", "txt", "wasm", "pdf", "zip",
];

const ANALYTICS_HOST_PARTS: &[&str] = &[
    "google-analytics.",
    "googletagmanager.",
    "doubleclick.",
    "analytics.",
    "segment.io",
    "segment.com",
    "mixpanel.",
    "hotjar.",
    "sentry.io",
    "newrelic.",
    "nr-data.",
    "amplitude.",
    "fullstory.",
    "clarity.ms",
    "facebook.net",
    "plausible.io",
];

const ANALYTICS_PATH_SEGMENTS: &[&str] =
    &["collect", "beacon", "beacons", "track", "tracking", "pixel", "analytics", "telemetry", "rum", "gtag", "metrics"];

/// The host (with `:port` when not the default) of a URL.
pub fn host_of(url: &url::Url) -> Option<String> {
    let h = url.host_str()?;
    Some(match url.port() {
        Some(p) => format!("{h}:{p}"),
        None => h.to_string(),
    })
}

/// Why an entry was left out, or `None` when it is an API call (rules 1–4).
pub fn skip_reason(e: &Entry) -> Option<&'static str> {
    let method = e.request.method.to_ascii_uppercase();
    if e.response.status <= 0 {
        return Some("failed");
    }
    if method == "OPTIONS" || method == "HEAD" {
        return Some("preflight");
    }
    if !DESCRIBABLE_METHODS.contains(&method.as_str()) {
        return Some("a method OpenAPI cannot describe");
    }
    let Ok(url) = url::Url::parse(&e.request.url) else { return Some("bad url") };
    if !matches!(url.scheme(), "http" | "https") {
        return Some("not http");
    }
    // DevTools' words, or `webRequest`'s (Chaperone's own export).
    if let Some(t) = e.resource_type.as_deref()
        && SKIPPED_TYPES.contains(&crate::capture::resource_type(&t.to_ascii_lowercase()))
    {
        return Some("page or static");
    }
    let path = url.path();
    if let Some(last) = path.rsplit('/').next()
        && let Some((_, ext)) = last.rsplit_once('.')
        && STATIC_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
    {
        return Some("page or static");
    }
    let host = url.host_str().unwrap_or("").to_ascii_lowercase();
    if ANALYTICS_HOST_PARTS.iter().any(|p| host.contains(p)) {
        return Some("analytics");
    }
    if path.split('/').any(|s| ANALYTICS_PATH_SEGMENTS.contains(&s.to_ascii_lowercase().as_str())) {
        return Some("analytics");
    }
    let media = e.response_media();
    if is_json(&media) {
        return None;
    }
    if method != "GET" {
        let req = e.request_media();
        let body_kind = is_json(&req) || req == "application/x-www-form-urlencoded";
        let no_body = e.response.status == 204 || e.response_text().is_none_or(str::is_empty);
        if body_kind || no_body {
            return None;
        }
    }
    Some("not an API answer")
}

/// The API entries of `entries` for `hosts` (rule 5).
pub fn api_entries<'a>(entries: &[&'a Entry], hosts: &[String]) -> Vec<&'a Entry> {
    let candidates: Vec<&Entry> = entries.iter().copied().filter(|e| skip_reason(e).is_none()).collect();
    let wanted: BTreeSet<String> = if hosts.is_empty() {
        candidates
            .iter()
            .filter(|e| is_json(&e.response_media()))
            .filter_map(|e| url::Url::parse(&e.request.url).ok().as_ref().and_then(host_of))
            .collect()
    } else {
        hosts.iter().map(|h| h.to_ascii_lowercase()).collect()
    };
    candidates
        .into_iter()
        .filter(|e| {
            url::Url::parse(&e.request.url)
                .ok()
                .as_ref()
                .and_then(host_of)
                .is_some_and(|h| wanted.contains(&h) || wanted.contains(h.split(':').next().unwrap_or("")))
        })
        .collect()
}
