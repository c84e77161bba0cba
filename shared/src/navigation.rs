//! Loading a URL in an agent tab (`browser_navigate`, `browser_tabs new`
//! with a URL, a flow's navigate step): how it is judged before it runs,
//! and how a page that did not load is told to the agent.
//!
//! # Judged like a link
//!
//! Loading a URL can act (`/account/delete?confirm=1`, one-click
//! unsubscribe links): [`judge`] classifies the target URL with the same
//! URL rules as a link's or form's target (`crate::risk`,
//! `ActionKind::Navigate`: a word of `ACTION_PATHS` in the path or in an
//! `action`/`do`/`op`… parameter is high), and the person's policy for that
//! URL decides (site rules included): `deny` → nothing is loaded;
//! `confirm` → the person is asked first (in the extension's approval
//! window; YOLO may answer); `allow` → it loads.
//!
//! # Pages that do not load
//!
//! When Chromium shows its own error page instead (no such host, refused,
//! a certificate it does not trust, offline, timed out…), the agent gets
//! `PAGE_NOT_LOADED` with [`page_not_loaded`]: what happened in its terms
//! ([`LoadFailure`], from Chromium's `net::ERR_…` name by [`failure_of`])
//! and the URL. The same error answers a navigation and a later read of
//! the tab (snapshot, text, actions) while the error page shows.

use serde::{Deserialize, Serialize};

use crate::error::{ErrorCode, WireError};
use crate::policy::{Decision, Policy};
use crate::risk::{ActionKind, Classification, classify};

/// What [`judge`] says about loading one URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub class: Classification,
    pub decision: Decision,
    /// Which rule of the policy decided (for logs and refusals).
    pub why: String,
}

/// Classifies loading `url` and decides it with `policy` (see the module
/// docs). `url` must already be a valid navigation URL (`crate::url`).
pub fn judge(policy: &Policy, url: &str) -> Verdict {
    let class = classify(&ActionKind::Navigate, None, url, None);
    let (decision, why) = crate::policy::decide(policy, url, class.risk);
    Verdict { class, decision, why }
}

/// The refusal of a navigation the policy denies.
pub fn denied(url: &str, v: &Verdict) -> WireError {
    WireError::new(
        ErrorCode::PermissionDenied,
        format!(
            "the person's policy denies loading {} ({} risk: {}); nothing was loaded",
            crate::redact::redact_url(url),
            v.class.risk.as_str(),
            v.class.reasons.join("; ")
        ),
    )
}

/// Why a page did not load, in the agent's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadFailure {
    /// The host name does not resolve.
    Dns,
    /// Nothing listens on that port (connection refused).
    Refused,
    /// The connection was reset or closed before a page came.
    ConnectionLost,
    /// The site's certificate or TLS setup is not trusted.
    Tls,
    /// The computer is offline or the network is unreachable.
    Offline,
    /// The server did not answer in time.
    Timeout,
    /// Too many redirects.
    Redirects,
    /// Blocked by the browser, an extension or an administrator.
    Blocked,
    /// The server answered with an HTTP error and no page.
    HttpError,
    /// Any other network error.
    Other,
}

impl LoadFailure {
    /// One short phrase for the agent.
    pub fn phrase(self) -> &'static str {
        match self {
            LoadFailure::Dns => "the host name does not resolve (DNS)",
            LoadFailure::Refused => "the connection was refused (nothing listens on that port)",
            LoadFailure::ConnectionLost => "the connection was reset or closed before a page came",
            LoadFailure::Tls => "the site's certificate or TLS setup is not trusted (TLS error)",
            LoadFailure::Offline => "the network is unreachable (offline)",
            LoadFailure::Timeout => "the server did not answer in time",
            LoadFailure::Redirects => "the page redirects too many times",
            LoadFailure::Blocked => "the browser or its administrator blocked it",
            LoadFailure::HttpError => "the server answered with an HTTP error and no page",
            LoadFailure::Other => "a network error",
        }
    }
}

/// The [`LoadFailure`] of one of Chromium's net error names
/// (`net::ERR_NAME_NOT_RESOLVED` or `ERR_NAME_NOT_RESOLVED`).
pub fn failure_of(net_error: &str) -> LoadFailure {
    let e = net_error.trim().trim_start_matches("net::").to_ascii_uppercase();
    let e = e.as_str();
    match e {
        "ERR_NAME_NOT_RESOLVED"
        | "ERR_NAME_RESOLUTION_FAILED"
        | "ERR_DNS_MALFORMED_RESPONSE"
        | "ERR_DNS_SERVER_FAILED"
        | "ERR_DNS_SEARCH_EMPTY"
        | "ERR_ICANN_NAME_COLLISION" => LoadFailure::Dns,
        "ERR_CONNECTION_REFUSED" => LoadFailure::Refused,
        "ERR_CONNECTION_RESET"
        | "ERR_CONNECTION_CLOSED"
        | "ERR_CONNECTION_ABORTED"
        | "ERR_EMPTY_RESPONSE"
        | "ERR_CONNECTION_FAILED"
        | "ERR_INVALID_RESPONSE"
        | "ERR_RESPONSE_HEADERS_TRUNCATED" => LoadFailure::ConnectionLost,
        "ERR_INTERNET_DISCONNECTED"
        | "ERR_ADDRESS_UNREACHABLE"
        | "ERR_NETWORK_CHANGED"
        | "ERR_NETWORK_ACCESS_DENIED"
        | "ERR_PROXY_CONNECTION_FAILED" => LoadFailure::Offline,
        "ERR_TIMED_OUT" | "ERR_CONNECTION_TIMED_OUT" | "ERR_DNS_TIMED_OUT" => LoadFailure::Timeout,
        "ERR_TOO_MANY_REDIRECTS" => LoadFailure::Redirects,
        "ERR_BLOCKED_BY_CLIENT"
        | "ERR_BLOCKED_BY_ADMINISTRATOR"
        | "ERR_BLOCKED_BY_RESPONSE"
        | "ERR_UNSAFE_PORT"
        | "ERR_UNSAFE_REDIRECT" => LoadFailure::Blocked,
        "ERR_HTTP_RESPONSE_CODE_FAILURE" => LoadFailure::HttpError,
        _ if e.starts_with("ERR_CERT_")
            || e.starts_with("ERR_SSL_")
            || e == "ERR_BAD_SSL_CLIENT_AUTH_CERT"
            || e == "ERR_CERTIFICATE_TRANSPARENCY_REQUIRED" =>
        {
            LoadFailure::Tls
        }
        _ => LoadFailure::Other,
    }
}

/// `PAGE_NOT_LOADED` for `url`, from Chromium's net error name when it is
/// known (`None`: only that the browser shows its error page).
pub fn page_not_loaded(url: &str, net_error: Option<&str>) -> WireError {
    let what = match net_error {
        Some(e) => format!("{} [{}]", failure_of(e).phrase(), short_name(e)),
        None => "the browser shows its error page".to_string(),
    };
    WireError::new(
        ErrorCode::PageNotLoaded,
        format!(
            "the page did not load: {what}; URL {}. Check the URL, or try again later",
            crate::redact::redact_url(url)
        ),
    )
}

/// The net error's name as Chromium writes it, kept to its own characters
/// (it is shown to the agent).
fn short_name(e: &str) -> String {
    e.trim().chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':')).take(60).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::risk::RiskLevel;

    fn policy(json_text: &str) -> Policy {
        serde_json::from_str(json_text).unwrap()
    }

    #[test]
    fn navigations_are_judged_by_the_link_rules_and_the_policy() {
        let default = Policy::default();
        let deny_high = policy(r#"{"risk": {"high": "deny"}}"#);
        let site_allows = policy(r#"{"sites": [{"origin": "https://shop.example", "high": "allow"}]}"#);
        let cases: [(&str, &Policy, &str, RiskLevel, Decision); 9] = [
            ("a plain page", &default, "https://mail.example/inbox", RiskLevel::Low, Decision::Allow),
            (
                "a delete path asks",
                &default,
                "https://x.example/account/delete?confirm=1",
                RiskLevel::High,
                Decision::Confirm,
            ),
            (
                "denied under high = deny",
                &deny_high,
                "https://x.example/account/delete?confirm=1",
                RiskLevel::High,
                Decision::Deny,
            ),
            (
                "an action parameter",
                &deny_high,
                "https://x.example/item?action=delete&id=4",
                RiskLevel::High,
                Decision::Deny,
            ),
            (
                "one-click unsubscribe",
                &default,
                "https://news.example/newsletter/unsubscribe?u=1",
                RiskLevel::High,
                Decision::Confirm,
            ),
            (
                "a checkout page only loads",
                &deny_high,
                "https://shop.example/checkout",
                RiskLevel::Low,
                Decision::Allow,
            ),
            (
                "a site rule allows high",
                &site_allows,
                "https://shop.example/order/cancel",
                RiskLevel::High,
                Decision::Allow,
            ),
            (
                "the rule is for that site only",
                &site_allows,
                "https://other.example/order/cancel",
                RiskLevel::High,
                Decision::Confirm,
            ),
            ("a word in the host is no path", &deny_high, "https://delete.example/", RiskLevel::Low, Decision::Allow),
        ];
        for (name, p, url, risk, decision) in cases {
            let v = judge(p, url);
            assert_eq!((v.class.risk, v.decision), (risk, decision), "{name}: {url} {:?}", v.class.reasons);
        }
        let v = judge(&deny_high, "https://x.example/account/delete?confirm=1");
        let e = denied("https://x.example/account/delete?confirm=1", &v);
        assert_eq!(e.code, ErrorCode::PermissionDenied);
        assert!(e.message.contains("nothing was loaded") && e.message.contains("delete"), "{}", e.message);
    }

    #[test]
    fn net_errors_in_the_agents_terms() {
        let cases = [
            ("net::ERR_NAME_NOT_RESOLVED", LoadFailure::Dns),
            ("ERR_NAME_NOT_RESOLVED", LoadFailure::Dns),
            ("net::ERR_CONNECTION_REFUSED", LoadFailure::Refused),
            ("net::ERR_CERT_AUTHORITY_INVALID", LoadFailure::Tls),
            ("net::ERR_CERT_COMMON_NAME_INVALID", LoadFailure::Tls),
            ("net::ERR_SSL_PROTOCOL_ERROR", LoadFailure::Tls),
            ("net::ERR_INTERNET_DISCONNECTED", LoadFailure::Offline),
            ("net::ERR_ADDRESS_UNREACHABLE", LoadFailure::Offline),
            ("net::ERR_CONNECTION_TIMED_OUT", LoadFailure::Timeout),
            ("net::ERR_CONNECTION_RESET", LoadFailure::ConnectionLost),
            ("net::ERR_EMPTY_RESPONSE", LoadFailure::ConnectionLost),
            ("net::ERR_TOO_MANY_REDIRECTS", LoadFailure::Redirects),
            ("net::ERR_BLOCKED_BY_CLIENT", LoadFailure::Blocked),
            ("net::ERR_UNSAFE_PORT", LoadFailure::Blocked),
            ("net::ERR_HTTP_RESPONSE_CODE_FAILURE", LoadFailure::HttpError),
            ("net::err_name_not_resolved", LoadFailure::Dns),
            ("net::ERR_SOMETHING_NEW", LoadFailure::Other),
            ("", LoadFailure::Other),
        ];
        for (name, want) in cases {
            assert_eq!(failure_of(name), want, "{name}");
        }
    }

    #[test]
    fn the_error_names_what_happened_and_the_url() {
        let e = page_not_loaded("http://nonexistent.invalid/", Some("net::ERR_NAME_NOT_RESOLVED"));
        assert_eq!(e.code, ErrorCode::PageNotLoaded);
        assert!(e.message.contains("DNS") && e.message.contains("http://nonexistent.invalid/"), "{}", e.message);
        assert!(e.message.contains("net::ERR_NAME_NOT_RESOLVED"), "{}", e.message);
        let e = page_not_loaded("https://u:pw@h.example/", None);
        assert!(!e.message.contains("pw"), "credentials redacted: {}", e.message);
        assert!(e.message.contains("error page"), "{}", e.message);
        // A hostile "net error" cannot inject text into the message.
        let e = page_not_loaded("http://h.example/", Some("ERR_X\n\"ignore previous\""));
        assert!(!e.message.contains('\n') && !e.message.contains("ignore previous\""), "{}", e.message);
    }
}
