//! The read-only review dashboard (`chaperone dashboard`) and the session
//! report (`chaperone report`): what `GET /dashboard/data` answers, and the
//! rules the bridge applies to that endpoint.
//!
//! # Who may read `/dashboard/data`
//!
//! The audit log says which sites the person uses and what the agents did
//! there, so it is read only with the dashboard token
//! (`HOME/dashboard-token`), presented as `Authorization: Bearer`, never in
//! the query string or a cookie. It is the one endpoint of the bridge that
//! accepts an `Origin` header, and only the dashboard page's own
//! ([`data_origin_allowed`]): any other origin is refused, so no web page
//! can read it even with the token. The page, its script and its
//! stylesheet carry no data and need no token; every dashboard response
//! carries [`CSP`].
//!
//! # What it shows
//!
//! Rows exactly as the audit store keeps them, in its one typed shape
//! ([`AuditEntry`]: every field redacted, URLs without query strings, page
//! titles and element names as untrusted text); [`site_of`] gives the
//! origin the counts are grouped by. Secrets appear only as
//! `{secret:NAME}` because that is all the store ever holds. An agent's
//! start and end are its own `session` rows
//! ([`crate::audit::SESSION_TOOL`]); [`SessionSummary::ended`] is absent
//! while it runs.

use serde::{Deserialize, Serialize};

use crate::audit::{AuditDecision, AuditEntry};
use crate::risk::RiskLevel;

/// The data endpoint: the one path of the bridge that accepts an `Origin`
/// (the dashboard page's own, [`data_origin_allowed`]).
pub const DATA_PATH: &str = "/dashboard/data";

/// The `Content-Security-Policy` of every dashboard response.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; \
                       frame-ancestors 'none'";

/// Timeline rows one data call returns at most (the newest that match).
pub const MAX_ROWS: usize = 500;
/// Sessions listed at most (the most recently active).
pub const MAX_SESSIONS: usize = 200;
/// Sites and days counted at most.
pub const MAX_COUNTS: usize = 60;
/// The longest filter value accepted (characters).
pub const MAX_FILTER_CHARS: usize = 200;
/// How often the page asks for new rows (milliseconds); a running
/// session's rows appear within about this long.
pub const POLL_MS: u32 = 1_500;

/// Whether a request to `/dashboard/data` with this `Origin` header (or
/// none) may be answered by the bridge on `port`: no header (a fetch from
/// the page itself without one, or a command-line client), or exactly the
/// page's own origin `http://127.0.0.1:PORT`. Anything else — another
/// port, `localhost`, another scheme, `null`, a trailing slash — is
/// refused.
pub fn data_origin_allowed(origin: Option<&str>, port: u16) -> bool {
    match origin {
        None => true,
        Some(o) => o == dashboard_origin(port),
    }
}

/// `http://127.0.0.1:PORT`: where the dashboard page is served.
pub fn dashboard_origin(port: u16) -> String {
    format!("http://127.0.0.1:{port}")
}

/// The address `chaperone dashboard` opens: the token travels in the
/// fragment, which the browser never sends to a server.
pub fn dashboard_url(port: u16, token: &str) -> String {
    format!("{}/dashboard/#t={token}", dashboard_origin(port))
}

/// The site of a stored URL, as the per-site counts and the site filter
/// group it: the URL up to the first `/` after `scheme://` (the origin as
/// the browser wrote it, `https://shop.example`, `http://127.0.0.1:8080`),
/// the whole URL without query when it has no such part (`about:blank`).
/// The bridge's SQL ([`SITE_SQL`]) computes the same.
pub fn site_of(url: &str) -> String {
    let stripped = crate::url::strip_query(url);
    match stripped.find("://") {
        Some(i) => match stripped[i + 3..].find('/') {
            Some(j) => stripped[..i + 3 + j].to_string(),
            None => stripped.to_string(),
        },
        None => stripped.to_string(),
    }
}

/// [`site_of`] as an SQLite expression over the column `url`.
pub const SITE_SQL: &str = "CASE WHEN instr(url, '://') = 0 THEN url \
     WHEN instr(substr(url, instr(url, '://') + 3), '/') = 0 THEN url \
     ELSE substr(url, 1, instr(url, '://') + 1 + instr(substr(url, instr(url, '://') + 3), '/')) END";

/// One agent (MCP session) over all its rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionSummary {
    /// As the audit names it (`mcp:0b5c2f9e`).
    pub session: String,
    /// The client's label, when recorded.
    pub client: Option<String>,
    /// When it connected: its `session` start row's time (the first
    /// row's, for sessions recorded before those rows existed); RFC 3339.
    pub started: String,
    /// When it ended (its `session` end row); absent while it runs, or
    /// when the daemon stopped before it could say so.
    pub ended: Option<String>,
    /// Its newest row's time.
    pub last: String,
    pub tabs: u64,
    /// Rows that are actions (not a person's decision about one, not a
    /// hand-off, not the session's start or end).
    pub actions: u64,
    /// Actions the person was asked about (`confirm`).
    pub asked: u64,
    pub approved: u64,
    pub denied: u64,
    pub timed_out: u64,
    pub handoffs: u64,
}

/// A count per site or per day.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Count {
    pub key: String,
    pub count: u64,
}

/// What `GET /dashboard/data` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Data {
    /// Every agent, most recently active first (at most [`MAX_SESSIONS`]).
    pub sessions: Vec<SessionSummary>,
    /// The newest rows matching the filters, oldest first (at most
    /// [`MAX_ROWS`]).
    pub rows: Vec<AuditEntry>,
    /// More rows matched than were returned.
    pub more: bool,
    /// Rows matching the filters per site and per day (UTC).
    pub sites: Vec<Count>,
    pub days: Vec<Count>,
    /// The newest row id in the store (0 when empty).
    pub last_id: i64,
}

/// The filters of a data call (query parameters; unknown ones refused).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Filters {
    /// One agent (`mcp:0b5c2f9e`).
    pub session: Option<String>,
    /// One site (`http://127.0.0.1:8080`).
    pub site: Option<String>,
    /// One decision (an unknown word is refused, like an unknown filter).
    pub decision: Option<AuditDecision>,
    pub risk: Option<RiskLevel>,
    /// Words searched in the summary, page, title, tool, client, session,
    /// reasons and outcome.
    pub q: Option<String>,
}

impl Filters {
    /// Empty values count as absent; a value longer than
    /// [`MAX_FILTER_CHARS`] is an error naming the filter.
    pub fn checked(self) -> Result<Filters, String> {
        let clean = |name: &str, v: Option<String>| -> Result<Option<String>, String> {
            match v {
                Some(v) if v.chars().count() > MAX_FILTER_CHARS => {
                    Err(format!("the filter {name} is longer than {MAX_FILTER_CHARS} characters"))
                }
                Some(v) if v.trim().is_empty() => Ok(None),
                v => Ok(v),
            }
        };
        Ok(Filters {
            session: clean("session", self.session)?,
            site: clean("site", self.site)?,
            decision: self.decision,
            risk: self.risk,
            q: clean("q", self.q)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_pages_own_origin_or_none_may_read_the_data() {
        let cases: &[(&str, Option<&str>, bool)] = &[
            ("no Origin header", None, true),
            ("the page's own origin", Some("http://127.0.0.1:4100"), true),
            ("another port", Some("http://127.0.0.1:4101"), false),
            ("localhost", Some("http://localhost:4100"), false),
            ("ipv6 loopback", Some("http://[::1]:4100"), false),
            ("https", Some("https://127.0.0.1:4100"), false),
            ("a trailing slash", Some("http://127.0.0.1:4100/"), false),
            ("null (a sandboxed frame, a file)", Some("null"), false),
            ("a web site", Some("https://evil.example"), false),
            ("the extension", Some("chrome-extension://afcoapfcldjoabchcfnblibmoninpacc"), false),
            ("upper case", Some("HTTP://127.0.0.1:4100"), false),
        ];
        for (name, origin, allowed) in cases {
            assert_eq!(data_origin_allowed(*origin, 4100), *allowed, "{name}");
        }
    }

    #[test]
    fn the_url_carries_the_token_in_the_fragment_only() {
        let u = dashboard_url(4100, "ab12");
        assert_eq!(u, "http://127.0.0.1:4100/dashboard/#t=ab12");
        assert!(!u.contains('?'));
    }

    #[test]
    fn sites_lose_paths_queries_and_fragments() {
        assert_eq!(site_of("https://shop.example/cart?id=1"), "https://shop.example");
        assert_eq!(site_of("https://shop.example"), "https://shop.example");
        assert_eq!(site_of("http://127.0.0.1:8080/a/b"), "http://127.0.0.1:8080");
        assert_eq!(site_of("chrome://newtab/x"), "chrome://newtab");
        assert_eq!(site_of("about:blank"), "about:blank");
    }

    #[test]
    fn filters_drop_empty_values_and_refuse_long_ones() {
        let f = Filters { q: Some("  ".into()), risk: Some(RiskLevel::High), ..Default::default() }.checked().unwrap();
        assert_eq!((f.q, f.risk), (None, Some(RiskLevel::High)));
        let long = Filters { site: Some("x".repeat(MAX_FILTER_CHARS + 1)), ..Default::default() };
        assert!(long.checked().unwrap_err().contains("site"));
        let json = serde_json::json!({"session": "mcp:1", "t": "token"});
        assert!(serde_json::from_value::<Filters>(json).is_err(), "unknown parameters are refused");
        let json = serde_json::json!({"decision": "maybe"});
        assert!(serde_json::from_value::<Filters>(json).is_err(), "an unknown decision is refused");
        let json = serde_json::json!({"decision": "denied", "risk": "medium"});
        let f = serde_json::from_value::<Filters>(json).unwrap();
        assert_eq!((f.decision, f.risk), (Some(AuditDecision::Denied), Some(RiskLevel::Medium)));
    }

    #[test]
    fn the_csp_is_exactly_the_documented_one() {
        assert_eq!(
            CSP,
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; frame-ancestors 'none'"
        );
    }
}
