//! Network capture of the agent's tabs (issue 33) as data and pure rules.
//!
//! The worker observes the requests of the agent's tabs with `webRequest`
//! (observe only, never blocking) and reports each finished one as a
//! [`Captured`] (`ExtToBridge::Network`). The bridge keeps them in memory,
//! per session, bounded by [`MAX_REQUESTS_PER_SESSION`] and
//! [`MAX_BYTES_PER_SESSION`] (oldest dropped first, the drop counted); they
//! go with the session. Everything shown from a capture goes through
//! `crate::redact` first (`redact::redact_captured`).
//!
//! The listing's rules are here: which requests are static files
//! ([`is_static`], left out unless asked for), what a `status` filter
//! means ([`StatusFilter`]), a method filter ([`method_matches`]) and the
//! one line a request gets ([`line`]).

use serde::{Deserialize, Serialize};

use crate::tab::TabId;

/// Most requests kept per session (the oldest go first).
pub const MAX_REQUESTS_PER_SESSION: usize = 5_000;
/// Most bytes (URLs, headers, bodies) kept per session.
pub const MAX_BYTES_PER_SESSION: usize = 50 * 1024 * 1024;
/// Longest request body kept (the rest is cut with [`CUT_MARKER`]).
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// Appended where a body was cut.
pub const CUT_MARKER: &str = "…[cut]";
/// Lines of one `browser_network_requests` page.
pub const PAGE_SIZE: usize = 100;
/// Requests the worker follows at once (finished ones leave).
pub const MAX_PENDING: usize = 2_000;

/// One header as seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub name: String,
    pub value: String,
}

/// A request body as `webRequest` gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RequestBody {
    /// A form (`application/x-www-form-urlencoded` or multipart): each
    /// field with its values.
    Form { fields: Vec<(String, Vec<String>)> },
    /// The raw bytes as text (lossy UTF-8), cut at [`MAX_BODY_BYTES`].
    Raw { text: String, cut: bool },
}

/// One finished (or failed) request of an agent tab.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Captured {
    pub tab: TabId,
    pub url: String,
    pub method: String,
    /// `webRequest`'s resource type: `main_frame`, `xmlhttprequest`,
    /// `script`, `image`, `ping`…
    pub resource_type: String,
    /// HTTP status; 0 when the request failed.
    pub status: u16,
    /// The status line (`HTTP/1.1 200 OK`), when there was one.
    #[serde(default)]
    pub status_line: String,
    /// The network error (`net::ERR_…`) of a failed request.
    #[serde(default)]
    pub error: Option<String>,
    /// Wall clock at the start, ms since the epoch.
    pub started_ms: f64,
    /// From start to completion, ms.
    pub duration_ms: f64,
    #[serde(default)]
    pub request_headers: Vec<Header>,
    #[serde(default)]
    pub response_headers: Vec<Header>,
    #[serde(default)]
    pub request_body: Option<RequestBody>,
    /// Where a redirect went (a 3xx).
    #[serde(default)]
    pub redirect_url: Option<String>,
    #[serde(default)]
    pub from_cache: bool,
    /// The response body: `None` from the default build (no `debugger`);
    /// the bodies build says what it got ([`ResponseBody`]).
    #[serde(default)]
    pub response_body: Option<ResponseBody>,
    /// A WebSocket's messages (bodies build only), oldest first, at most
    /// [`MAX_WS_MESSAGES`].
    #[serde(default)]
    pub websocket_messages: Vec<WsMessage>,
}

/// Longest response body kept by the bodies build (the rest is cut with
/// [`CUT_MARKER`]).
pub const MAX_RESPONSE_BODY_BYTES: usize = 256 * 1024;
/// Longest WebSocket message kept (cut with [`CUT_MARKER`]).
pub const MAX_WS_MESSAGE_BYTES: usize = 16 * 1024;
/// Most messages kept of one WebSocket (the later ones are counted only).
pub const MAX_WS_MESSAGES: usize = 1_000;
/// How long the worker of the bodies build holds a finished request for
/// its body to come from the debugger before it sends it without.
pub const BODY_WAIT_MS: u32 = 3_000;

/// A response body as the bodies build captured it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ResponseBody {
    /// A text body (JSON, text, HTML, XML, JS…), cut at
    /// [`MAX_RESPONSE_BODY_BYTES`] with [`CUT_MARKER`].
    Text { text: String, cut: bool },
    /// Not text ([`is_text_mime`] says no): not kept.
    NotText { mime: String },
    /// The bodies build has none for it (no answer from the debugger in
    /// time, an empty answer, the debugger detached…): why.
    Unavailable { reason: String },
}

/// One WebSocket message (HAR's `_webSocketMessages`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WsMessage {
    /// Sent by the page (else received).
    pub sent: bool,
    /// Wall clock, seconds since the epoch.
    pub time: f64,
    /// 1 text, 2 binary (its data base64, as the debugger gives it).
    pub opcode: u8,
    pub data: String,
}

/// Whether a response of MIME type `mime` has a text body the bodies
/// build keeps: JSON, XML, HTML, JavaScript and every `text/*`.
pub fn is_text_mime(mime: &str) -> bool {
    let m = mime.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    m.starts_with("text/")
        || m.ends_with("/json")
        || m.ends_with("+json")
        || m.ends_with("/xml")
        || m.ends_with("+xml")
        || m.ends_with("/javascript")
        || m.ends_with("/ecmascript")
        || m == "application/x-javascript"
        || m == "application/x-www-form-urlencoded"
}

/// Whether a finished response may carry a body worth waiting for: an
/// answer with content (not 1xx, 204, 3xx, a `HEAD`) of a text type.
pub fn may_have_text_body(method: &str, status: u16, mime: &str) -> bool {
    !method.eq_ignore_ascii_case("HEAD")
        && (200..300).contains(&status)
        && status != 204
        && status != 205
        && is_text_mime(mime)
}

/// `text` cut to at most `max` bytes on a character boundary, with
/// [`CUT_MARKER`] appended when cut; and whether it was.
pub fn cut_text(text: &str, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text.to_string(), false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (format!("{}{CUT_MARKER}", &text[..end]), true)
}

impl Captured {
    /// The response's size as its `Content-Length` says (-1: unknown).
    pub fn size(&self) -> i64 {
        header(&self.response_headers, "content-length").and_then(|v| v.trim().parse().ok()).unwrap_or(-1)
    }

    /// The request's `Content-Type`, or "".
    pub fn request_mime(&self) -> &str {
        header(&self.request_headers, "content-type").unwrap_or("")
    }

    /// The response's `Content-Type`, or "".
    pub fn response_mime(&self) -> &str {
        header(&self.response_headers, "content-type").unwrap_or("")
    }

    /// Roughly the bytes this capture holds (for the session's bound).
    pub fn weight(&self) -> usize {
        let headers = |h: &[Header]| h.iter().map(|h| h.name.len() + h.value.len() + 8).sum::<usize>();
        let body = match &self.request_body {
            Some(RequestBody::Raw { text, .. }) => text.len(),
            Some(RequestBody::Form { fields }) => {
                fields.iter().map(|(k, v)| k.len() + v.iter().map(String::len).sum::<usize>() + 8).sum()
            }
            None => 0,
        };
        let response = match &self.response_body {
            Some(ResponseBody::Text { text, .. }) => text.len(),
            Some(ResponseBody::NotText { mime: s } | ResponseBody::Unavailable { reason: s }) => s.len(),
            None => 0,
        };
        let frames: usize = self.websocket_messages.iter().map(|m| m.data.len() + 24).sum();
        200 + self.url.len()
            + response
            + frames
            + self.method.len()
            + self.status_line.len()
            + self.redirect_url.as_ref().map_or(0, String::len)
            + headers(&self.request_headers)
            + headers(&self.response_headers)
            + body
    }
}

/// The value of header `name` (any case), the first one.
pub fn header<'a>(headers: &'a [Header], name: &str) -> Option<&'a str> {
    headers.iter().find(|h| h.name.eq_ignore_ascii_case(name)).map(|h| h.value.as_str())
}

/// Static files (images, fonts, styles, scripts, media): counted, left out
/// of a listing unless its `types` names them.
pub fn is_static(resource_type: &str) -> bool {
    matches!(resource_type, "image" | "imageset" | "font" | "stylesheet" | "script" | "media")
}

/// Whether a request of `resource_type` is listed: the `types` asked for,
/// or every non-static one when none are.
pub fn type_listed(resource_type: &str, types: &[String]) -> bool {
    if types.is_empty() {
        return !is_static(resource_type);
    }
    types.iter().any(|t| t.eq_ignore_ascii_case(resource_type) || (t == "static" && is_static(resource_type)))
}

/// The short type shown in a line: `xhr`, `fetch`-like calls are one in
/// `webRequest` (`xmlhttprequest`).
pub fn short_type(resource_type: &str) -> &str {
    match resource_type {
        "xmlhttprequest" => "xhr",
        "main_frame" => "document",
        "sub_frame" => "frame",
        other => other,
    }
}

/// A `status` filter: one code (`200`), a class (`4xx`), or `failed`
/// (no answer at all).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusFilter {
    Code(u16),
    Class(u16),
    Failed,
}

impl StatusFilter {
    /// Reads `200`, `4xx` (`1xx`…`5xx`) or `failed`.
    pub fn parse(s: &str) -> Result<StatusFilter, String> {
        let t = s.trim().to_ascii_lowercase();
        if t == "failed" {
            return Ok(StatusFilter::Failed);
        }
        if let Some(d) = t.strip_suffix("xx")
            && let Ok(c) = d.parse::<u16>()
            && (1..=5).contains(&c)
        {
            return Ok(StatusFilter::Class(c));
        }
        match t.parse::<u16>() {
            Ok(c) if (100..=599).contains(&c) => Ok(StatusFilter::Code(c)),
            _ => Err(format!("status must be a code (200), a class (4xx) or \"failed\", not {s:?}")),
        }
    }

    pub fn matches(self, status: u16) -> bool {
        match self {
            StatusFilter::Failed => status == 0,
            StatusFilter::Code(c) => status == c,
            StatusFilter::Class(c) => status / 100 == c,
        }
    }
}

/// A `method` filter (any case).
pub fn method_matches(filter: &str, method: &str) -> bool {
    filter.eq_ignore_ascii_case(method)
}

/// A URL filter: a substring, or a regular expression between slashes
/// (`/api\/items\/\d+/`), which the bridge compiles with bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UrlFilter {
    Substring(String),
    Regex(String),
}

impl UrlFilter {
    pub fn parse(s: &str) -> UrlFilter {
        match s.strip_prefix('/').and_then(|r| r.strip_suffix('/')) {
            Some(re) if s.len() >= 2 => UrlFilter::Regex(re.to_string()),
            _ => UrlFilter::Substring(s.to_string()),
        }
    }
}

/// One line of a listing: `#id METHOD url → status type size ms`, with
/// the URL as it may be shown (already redacted by the caller).
pub fn line(id: u64, c: &Captured, shown_url: &str) -> String {
    let status = if c.status == 0 {
        format!("failed ({})", c.error.as_deref().unwrap_or("no answer"))
    } else {
        c.status.to_string()
    };
    let size = match c.size() {
        n if n < 0 => "?".to_string(),
        n if n < 10_000 => format!("{n} B"),
        n => format!("{} kB", n / 1000),
    };
    format!(
        "#{id} {} {shown_url} → {status} {} {size} {} ms",
        c.method,
        short_type(&c.resource_type),
        c.duration_ms.round()
    )
}

/// A request or response part `browser_network_request` can show alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum Part {
    RequestHeaders,
    RequestBody,
    ResponseHeaders,
    ResponseBody,
}

/// What `response-body` says in a build without `debugger`.
pub const NO_RESPONSE_BODIES: &str = "response bodies are not captured: this extension is the default build, \
without the `debugger` permission (the person can start the bodies build with `chaperone up --network-bodies`; \
Chrome then shows its debugging banner on the agent's tabs)";

/// Why a WebSocket captured in Firefox has no messages (its response
/// body part says this): Firefox gives add-ons no WebSocket frames.
pub const NO_WEBSOCKET_MESSAGES_FIREFOX: &str = "WebSocket messages are not captured in Firefox: it gives add-ons no WebSocket frames (Chromium's bodies build has them)";

/// What a request's `response-body` part says: the body, or plainly why
/// there is none.
pub fn response_body_text(body: &Option<ResponseBody>) -> String {
    match body {
        None => NO_RESPONSE_BODIES.to_string(),
        Some(ResponseBody::Text { text, .. }) if text.is_empty() => "(empty response body)".to_string(),
        Some(ResponseBody::Text { text, .. }) => text.clone(),
        Some(ResponseBody::NotText { mime }) => {
            format!("response body not captured: {mime:?} is not a text type (only JSON, text, HTML, XML and JS are)")
        }
        Some(ResponseBody::Unavailable { reason }) => format!("response body not available: {reason}"),
    }
}

/// A name for an export file inside the exports folder: the last path
/// component, only `[A-Za-z0-9._-]`, no leading dot, ending in `.har`,
/// at most 100 characters. `None` when nothing usable is left.
pub fn export_file_name(name: &str) -> Option<String> {
    let last = name.rsplit(['/', '\\']).next().unwrap_or("");
    let mut clean: String =
        last.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' }).collect();
    while clean.starts_with('.') {
        clean.remove(0);
    }
    let stem = clean.strip_suffix(".har").unwrap_or(&clean).to_string();
    let stem: String = stem.chars().take(96).collect();
    if stem.is_empty() || stem.chars().all(|c| c == '.' || c == '_') {
        return None;
    }
    Some(format!("{stem}.har"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(status: u16, rt: &str) -> Captured {
        Captured {
            tab: 1,
            url: "http://a.example/x".into(),
            method: "GET".into(),
            resource_type: rt.into(),
            status,
            status_line: String::new(),
            error: None,
            started_ms: 0.0,
            duration_ms: 12.4,
            request_headers: vec![],
            response_headers: vec![Header { name: "Content-Length".into(), value: "42".into() }],
            request_body: None,
            redirect_url: None,
            from_cache: false,
            response_body: None,
            websocket_messages: vec![],
        }
    }

    #[test]
    fn status_filters_read_codes_classes_and_failed() {
        let cases: &[(&str, u16, bool)] = &[
            ("200", 200, true),
            ("200", 201, false),
            ("4xx", 404, true),
            ("4XX", 400, true),
            ("4xx", 500, false),
            ("2xx", 204, true),
            ("failed", 0, true),
            ("failed", 200, false),
            ("5xx", 0, false),
        ];
        for (f, status, want) in cases {
            assert_eq!(StatusFilter::parse(f).unwrap().matches(*status), *want, "{f} {status}");
        }
        for bad in ["", "abc", "6xx", "0xx", "99", "600", "4x"] {
            assert!(StatusFilter::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn static_files_are_left_out_unless_asked_for() {
        let none: Vec<String> = vec![];
        for (rt, listed) in [
            ("xmlhttprequest", true),
            ("main_frame", true),
            ("ping", true),
            ("other", true),
            ("image", false),
            ("font", false),
            ("stylesheet", false),
            ("script", false),
        ] {
            assert_eq!(type_listed(rt, &none), listed, "{rt}");
        }
        assert!(type_listed("image", &["image".into()]));
        assert!(!type_listed("xmlhttprequest", &["image".into()]));
        assert!(type_listed("font", &["static".into()]));
    }

    #[test]
    fn url_filters_are_substrings_or_slashed_regexes() {
        assert_eq!(UrlFilter::parse("/api/"), UrlFilter::Regex("api".into()));
        assert_eq!(UrlFilter::parse("api/items"), UrlFilter::Substring("api/items".into()));
        assert_eq!(UrlFilter::parse("/"), UrlFilter::Substring("/".into()));
        assert_eq!(UrlFilter::parse("/api/items/"), UrlFilter::Regex("api/items".into()));
    }

    #[test]
    fn a_line_names_id_method_url_status_type_size_and_time() {
        assert_eq!(
            line(7, &cap(201, "xmlhttprequest"), "http://a.example/x"),
            "#7 GET http://a.example/x → 201 xhr 42 B 12 ms"
        );
        let mut failed = cap(0, "ping");
        failed.error = Some("net::ERR_FAILED".into());
        assert!(line(1, &failed, "u").contains("failed (net::ERR_FAILED)"));
    }

    #[test]
    fn export_names_stay_in_the_exports_folder() {
        let cases: &[(&str, Option<&str>)] = &[
            ("run1", Some("run1.har")),
            ("run1.har", Some("run1.har")),
            ("../../etc/passwd", Some("passwd.har")),
            ("..\\..\\x", Some("x.har")),
            ("/abs/path/y.har", Some("y.har")),
            ("..", None),
            ("../", None),
            ("", None),
            (".hidden", Some("hidden.har")),
            ("a b$c", Some("a_b_c.har")),
            ("...", None),
        ];
        for (input, want) in cases {
            assert_eq!(export_file_name(input).as_deref(), *want, "{input:?}");
        }
    }

    #[test]
    fn weight_counts_what_is_kept() {
        let mut c = cap(200, "xmlhttprequest");
        let w = c.weight();
        c.request_body = Some(RequestBody::Raw { text: "x".repeat(1000), cut: false });
        assert_eq!(c.weight(), w + 1000);
    }
}
