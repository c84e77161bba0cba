//! What happens to an action of a given risk on a given site
//! (docs/design.md, "Policy, approvals and audit").
//!
//! The user's `config.toml` is the only source of a [`Policy`]; nothing on
//! the wire can build or loosen one. Parsing validates everything (origin
//! patterns, timeout bounds, rules that would do nothing): an invalid policy
//! is an error, never a silent fallback to the defaults.
//!
//! ```toml
//! approval_timeout_secs = 120
//!
//! [risk]
//! low = "allow"
//! medium = "allow"
//! high = "confirm"
//!
//! [[sites]]
//! origin = "https://*.bank.example"
//! access = "deny"
//!
//! [[sites]]
//! origin = "http://127.0.0.1:*"
//! high = "allow"
//! ```
//!
//! Site rules: `access = "deny"` on *any* matching rule refuses everything
//! (actions and navigation), whatever the order; otherwise the *first*
//! matching rule's per-risk overrides apply, and risks it does not mention
//! fall back to `[risk]`.

use serde::{Deserialize, Serialize};

use crate::limits::{DEFAULT_APPROVAL_TIMEOUT_SECS, MAX_APPROVAL_TIMEOUT_SECS, MIN_APPROVAL_TIMEOUT_SECS};
use crate::risk::RiskLevel;

/// What to do with an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Run without asking.
    Allow,
    /// Ask the human; no answer in time is a denial.
    Confirm,
    /// Refuse (`PERMISSION_DENIED`).
    Deny,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Confirm => "confirm",
            Decision::Deny => "deny",
        }
    }
}

/// `[risk]`: the decision per risk level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RiskDecisions {
    pub low: Decision,
    pub medium: Decision,
    pub high: Decision,
}

impl Default for RiskDecisions {
    fn default() -> Self {
        RiskDecisions { low: Decision::Allow, medium: Decision::Allow, high: Decision::Confirm }
    }
}

impl RiskDecisions {
    pub fn get(&self, risk: RiskLevel) -> Decision {
        match risk {
            RiskLevel::Low => self.low,
            RiskLevel::Medium => self.medium,
            RiskLevel::High => self.high,
        }
    }
}

/// The only value of `access`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SiteAccess {
    Deny,
}

/// `[[sites]]`: an origin pattern and what changes there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteRule {
    /// `scheme://host[:port]`; host may start with `*.` (subdomains only),
    /// port may be `*` (any). No port means the scheme's default port.
    pub origin: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<SiteAccess>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<Decision>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub medium: Option<Decision>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<Decision>,
}

impl SiteRule {
    fn override_for(&self, risk: RiskLevel) -> Option<Decision> {
        match risk {
            RiskLevel::Low => self.low,
            RiskLevel::Medium => self.medium,
            RiskLevel::High => self.high,
        }
    }
}

/// The policy. Deserialising validates (see [`Policy::validate`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawPolicy")]
pub struct Policy {
    pub risk: RiskDecisions,
    pub sites: Vec<SiteRule>,
    /// Seconds the human has to answer; then the action is denied.
    pub approval_timeout_secs: u32,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            risk: RiskDecisions::default(),
            sites: Vec::new(),
            approval_timeout_secs: DEFAULT_APPROVAL_TIMEOUT_SECS,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    #[serde(default)]
    risk: RiskDecisions,
    #[serde(default)]
    sites: Vec<SiteRule>,
    #[serde(default = "default_timeout")]
    approval_timeout_secs: u32,
}

fn default_timeout() -> u32 {
    DEFAULT_APPROVAL_TIMEOUT_SECS
}

impl TryFrom<RawPolicy> for Policy {
    type Error = String;

    fn try_from(raw: RawPolicy) -> Result<Self, String> {
        let p = Policy { risk: raw.risk, sites: raw.sites, approval_timeout_secs: raw.approval_timeout_secs };
        p.validate()?;
        Ok(p)
    }
}

impl Policy {
    /// Checks the timeout bounds, every origin pattern, and that each site
    /// rule does something and does not say two things at once.
    pub fn validate(&self) -> Result<(), String> {
        if !(MIN_APPROVAL_TIMEOUT_SECS..=MAX_APPROVAL_TIMEOUT_SECS).contains(&self.approval_timeout_secs) {
            return Err(format!(
                "approval_timeout_secs must be between {MIN_APPROVAL_TIMEOUT_SECS} and {MAX_APPROVAL_TIMEOUT_SECS}, not {}",
                self.approval_timeout_secs
            ));
        }
        for (i, s) in self.sites.iter().enumerate() {
            let at = |why: String| format!("sites[{i}] (origin {:?}): {why}", s.origin);
            parse_pattern(&s.origin).map_err(at)?;
            let overrides = s.low.is_some() || s.medium.is_some() || s.high.is_some();
            if s.access.is_some() && overrides {
                return Err(at("access = \"deny\" refuses everything; remove low/medium/high".into()));
            }
            if s.access.is_none() && !overrides {
                return Err(at("a site rule needs access = \"deny\" or at least one of low/medium/high".into()));
            }
        }
        Ok(())
    }
}

/// Decides one action of `risk` on the page `url`, with the reason.
pub fn decide(policy: &Policy, url: &str, risk: RiskLevel) -> (Decision, String) {
    if let Some(s) = denying_rule(policy, url) {
        return (Decision::Deny, format!("site {:?} has access = \"deny\"", s.origin));
    }
    if let Some(s) = policy.sites.iter().find(|s| s.access.is_none() && origin_matches(&s.origin, url))
        && let Some(d) = s.override_for(risk)
    {
        return (d, format!("site {:?}: {} risk → {}", s.origin, risk.as_str(), d.as_str()));
    }
    let d = policy.risk.get(risk);
    (d, format!("policy: {} risk → {}", risk.as_str(), d.as_str()))
}

/// The rule that denies all access to `url`'s origin, if any (for
/// navigation, tab switches and everything else before classification).
pub fn denying_rule<'p>(policy: &'p Policy, url: &str) -> Option<&'p SiteRule> {
    policy.sites.iter().find(|s| s.access == Some(SiteAccess::Deny) && origin_matches(&s.origin, url))
}

#[derive(Debug, PartialEq, Eq)]
struct Pattern {
    scheme: String,
    /// Lower case; without the `*.` when `wildcard`.
    host: String,
    wildcard: bool,
    /// `None`: any port.
    port: Option<u16>,
}

fn default_port(scheme: &str) -> u16 {
    if scheme == "https" { 443 } else { 80 }
}

fn parse_pattern(p: &str) -> Result<Pattern, String> {
    let (scheme, rest) = p.split_once("://").ok_or("origin must look like https://host or http://host:port")?;
    if scheme != "http" && scheme != "https" {
        return Err("origin scheme must be http or https (lower case)".into());
    }
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.contains(['/', '?', '#', '@']) {
        return Err("origin must not have a path, query, fragment or user".into());
    }
    let (host, port) = split_host_port(rest).ok_or("origin has a malformed host or port")?;
    let port = match port {
        None => Some(default_port(scheme)),
        Some("*") => None,
        Some(d) => Some(d.parse::<u16>().ok().filter(|n| *n > 0).ok_or("origin port must be 1-65535 or *")?),
    };
    let (wildcard, host) = match host.strip_prefix("*.") {
        Some(h) => (true, h),
        None => (false, host),
    };
    if host.is_empty() || host.contains('*') {
        return Err("`*` is only allowed as a leading `*.` of the host".into());
    }
    if host != host.to_ascii_lowercase() {
        return Err("origin host must be lower case".into());
    }
    if wildcard && !host.contains('.') {
        return Err("`*.` needs a domain with a dot after it (e.g. *.example.com)".into());
    }
    let valid = if host.starts_with('[') {
        host.ends_with(']') && !wildcard
    } else {
        host.split('.').all(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
    };
    if !valid {
        return Err("origin host is not a valid host name".into());
    }
    Ok(Pattern { scheme: scheme.to_string(), host: host.to_string(), wildcard, port })
}

/// `host[:port]`, with `[v6]` hosts.
fn split_host_port(s: &str) -> Option<(&str, Option<&str>)> {
    if s.starts_with('[') {
        let end = s.find(']')?;
        let (h, rest) = s.split_at(end + 1);
        return match rest {
            "" => Some((h, None)),
            r => Some((h, Some(r.strip_prefix(':')?))),
        };
    }
    match s.split_once(':') {
        Some((h, p)) if !p.contains(':') && !p.is_empty() => Some((h, Some(p))),
        Some(_) => None,
        None => Some((s, None)),
    }
}

/// Checks an origin pattern as `[[sites]]` takes it (also the syntax of a
/// secret's `--site` binding); the error says what is wrong.
pub fn check_origin_pattern(pattern: &str) -> Result<(), String> {
    parse_pattern(pattern).map(|_| ())
}

/// Whether `url`'s origin matches `pattern`: scheme exact, host exact or
/// (with `*.`) a proper subdomain, port exact (default port when absent)
/// or any with `*`. An invalid pattern or URL matches nothing.
pub fn origin_matches(pattern: &str, url: &str) -> bool {
    let Ok(p) = parse_pattern(pattern) else { return false };
    // Parsed as the browser parses it (percent-decoded, IDNA-mapped host),
    // so another spelling of a denied host is the same host.
    let Some((scheme, host, port)) = crate::url::origin_parts(url) else { return false };
    if scheme != p.scheme {
        return false;
    }
    if p.port.is_some_and(|pp| pp != port) {
        return false;
    }
    if p.wildcard {
        host.len() > p.host.len() + 1
            && host.ends_with(&p.host)
            && host.as_bytes()[host.len() - p.host.len() - 1] == b'.'
    } else {
        host == p.host
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<Policy, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn defaults_allow_low_and_medium_and_confirm_high() {
        let p = parse("{}").unwrap();
        assert_eq!(p, Policy::default());
        assert_eq!(p.approval_timeout_secs, 120);
        let url = "https://shop.example/";
        assert_eq!(decide(&p, url, RiskLevel::Low).0, Decision::Allow);
        assert_eq!(decide(&p, url, RiskLevel::Medium).0, Decision::Allow);
        let (d, why) = decide(&p, url, RiskLevel::High);
        assert_eq!(d, Decision::Confirm);
        assert_eq!(why, "policy: high risk → confirm");
    }

    #[test]
    fn risk_table_can_be_changed_partly() {
        let p = parse(r#"{"risk":{"medium":"confirm"}}"#).unwrap();
        assert_eq!(p.risk, RiskDecisions { low: Decision::Allow, medium: Decision::Confirm, high: Decision::Confirm });
    }

    #[test]
    fn site_deny_refuses_everything_there_and_only_there() {
        let p = parse(r#"{"sites":[{"origin":"https://*.bank.example","access":"deny"}]}"#).unwrap();
        for risk in [RiskLevel::Low, RiskLevel::Medium, RiskLevel::High] {
            let (d, why) = decide(&p, "https://www.bank.example/login", risk);
            assert_eq!(d, Decision::Deny);
            assert!(why.contains("deny"), "{why}");
        }
        assert!(denying_rule(&p, "https://online.bank.example/").is_some());
        assert!(denying_rule(&p, "https://bank.example/").is_none(), "subdomains only");
        assert!(denying_rule(&p, "http://www.bank.example/").is_none(), "scheme is exact");
        assert_eq!(decide(&p, "https://shop.example/", RiskLevel::Low).0, Decision::Allow);
        // Other spellings of the same host are the same host.
        for spelled in [
            "https://WWW.Bank.Example/",
            "https://www.b%61nk.example/",
            "https://www.\u{ff42}ank.example/",
            "https://www.bank.example./",
            "https://user:pw@www.bank.example:443/",
        ] {
            assert!(denying_rule(&p, spelled).is_some(), "{spelled}");
        }
    }

    #[test]
    fn deny_wins_over_an_earlier_loosening_rule() {
        let p = parse(
            r#"{"sites":[{"origin":"https://*.example.com","high":"allow"},
                         {"origin":"https://bank.example.com","access":"deny"}]}"#,
        )
        .unwrap();
        assert_eq!(decide(&p, "https://bank.example.com/", RiskLevel::Low).0, Decision::Deny);
        assert_eq!(decide(&p, "https://shop.example.com/", RiskLevel::High).0, Decision::Allow);
    }

    #[test]
    fn sites_loosen_and_tighten_per_risk_first_match_wins() {
        let p = parse(
            r#"{"sites":[{"origin":"http://127.0.0.1:*","high":"allow"},
                         {"origin":"https://mail.example","medium":"confirm","low":"confirm"},
                         {"origin":"https://mail.example","high":"deny"}]}"#,
        )
        .unwrap();
        let (d, why) = decide(&p, "http://127.0.0.1:8080/x", RiskLevel::High);
        assert_eq!(d, Decision::Allow);
        assert!(why.contains("127.0.0.1"), "{why}");
        assert_eq!(decide(&p, "http://127.0.0.1:8080/x", RiskLevel::Medium).0, Decision::Allow);
        assert_eq!(decide(&p, "https://mail.example/inbox", RiskLevel::Low).0, Decision::Confirm);
        assert_eq!(decide(&p, "https://mail.example/inbox", RiskLevel::Medium).0, Decision::Confirm);
        // The first matching rule does not mention high: the default applies,
        // the later rule is not consulted.
        assert_eq!(decide(&p, "https://mail.example/inbox", RiskLevel::High).0, Decision::Confirm);
        assert_eq!(decide(&p, "http://localhost:8080/", RiskLevel::High).0, Decision::Confirm);
    }

    #[test]
    fn wildcards_match_subdomains_only() {
        let pat = "https://*.example.com";
        for ok in [
            "https://a.example.com/",
            "https://a.b.example.com/x?y",
            "https://A.Example.COM",
            "https://a.example.com.:443/",
            "https://user:pw@a.example.com/",
        ] {
            assert!(origin_matches(pat, ok), "{ok}");
        }
        for bad in [
            "https://example.com/",
            "https://evil-example.com/",
            "https://aexample.com/",
            "https://example.com.evil.net/",
            "https://a.example.com.evil.net/",
            "https://a.example.com@evil.net/",
            "http://a.example.com/",
            "https://a.example.com:8443/",
            "wss://a.example.com/",
            "a.example.com",
            "",
        ] {
            assert!(!origin_matches(pat, bad), "{bad}");
        }
    }

    #[test]
    fn ports_are_exact_default_or_any() {
        assert!(origin_matches("http://127.0.0.1:*", "http://127.0.0.1:5173/"));
        assert!(origin_matches("http://127.0.0.1:*", "http://127.0.0.1/"));
        assert!(!origin_matches("http://127.0.0.1:*", "http://127.0.0.2:80/"));
        assert!(origin_matches("http://127.0.0.1:8080", "http://127.0.0.1:8080/a"));
        assert!(!origin_matches("http://127.0.0.1:8080", "http://127.0.0.1:8081/a"));
        assert!(!origin_matches("http://127.0.0.1:8080", "http://127.0.0.1/a"));
        assert!(origin_matches("https://example.com", "https://example.com:443/"));
        assert!(!origin_matches("https://example.com", "https://example.com:444/"));
        assert!(origin_matches("http://[::1]:*", "http://[::1]:3000/"));
        assert!(!origin_matches("http://[::1]:*", "http://127.0.0.1:3000/"));
        assert!(origin_matches("http://localhost:*", "http://LOCALHOST:9/"));
    }

    #[test]
    fn bad_patterns_and_rules_are_errors_not_fallbacks() {
        for bad in [
            r#"{"sites":[{"origin":"example.com","access":"deny"}]}"#,
            r#"{"sites":[{"origin":"*://example.com","access":"deny"}]}"#,
            r#"{"sites":[{"origin":"https://*example.com","access":"deny"}]}"#,
            r#"{"sites":[{"origin":"https://a.*.com","access":"deny"}]}"#,
            r#"{"sites":[{"origin":"https://*.com","access":"deny"}]}"#,
            r#"{"sites":[{"origin":"https://example.com/path","access":"deny"}]}"#,
            r#"{"sites":[{"origin":"https://example.com:99999","access":"deny"}]}"#,
            r#"{"sites":[{"origin":"https://Example.com","access":"deny"}]}"#,
            r#"{"sites":[{"origin":"ftp://example.com","access":"deny"}]}"#,
            r#"{"sites":[{"origin":"https://example.com","access":"allow"}]}"#,
            r#"{"sites":[{"origin":"https://example.com","access":"deny","high":"allow"}]}"#,
            r#"{"sites":[{"origin":"https://example.com"}]}"#,
            r#"{"sites":[{"origin":"https://example.com","high":"maybe"}]}"#,
            r#"{"sites":[{"origin":"https://example.com","high":"allow","skip":true}]}"#,
            r#"{"risk":{"high":"allow","extreme":"deny"}}"#,
            r#"{"risk":{"high":"Allow"}}"#,
            r#"{"yolo":true}"#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(parse(r#"{"sites":[{"origin":"https://example.com/","access":"deny"}]}"#).is_ok());
        assert!(check_origin_pattern("http://127.0.0.1:*").is_ok());
        assert!(check_origin_pattern("https://*.example.com").is_ok());
        let e = check_origin_pattern("example.com").unwrap_err();
        assert!(e.contains("https://host"), "{e}");
        assert!(check_origin_pattern("https://example.com/path").is_err());
    }

    #[test]
    fn approval_timeout_is_bounded() {
        assert_eq!(parse(r#"{"approval_timeout_secs":600}"#).unwrap().approval_timeout_secs, 600);
        assert_eq!(parse(r#"{"approval_timeout_secs":1}"#).unwrap().approval_timeout_secs, 1);
        let err = parse(r#"{"approval_timeout_secs":601}"#).unwrap_err().to_string();
        assert!(err.contains("between 1 and 600"), "{err}");
        assert!(parse(r#"{"approval_timeout_secs":0}"#).is_err());
        assert!(parse(r#"{"approval_timeout_secs":-5}"#).is_err());
    }

    #[test]
    fn unparsable_urls_get_the_defaults_not_a_site_rule() {
        let p = parse(r#"{"sites":[{"origin":"https://example.com","high":"allow"}]}"#).unwrap();
        assert_eq!(decide(&p, "about:blank", RiskLevel::High).0, Decision::Confirm);
        assert_eq!(decide(&p, "https://example.com:x/", RiskLevel::High).0, Decision::Confirm);
    }
}
