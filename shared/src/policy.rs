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
//!
//! # Site access: act, read, never
//!
//! Every site has one [`SiteAccess`]: `act` (the default: agents may act,
//! under the risk policy), `read` (agents may navigate, read, look, wait,
//! scroll and hover, and nothing that could change something) or `deny`
//! (the popup's **Never**: nothing at all, not even navigation). Two
//! sources set it ([`SiteRules`]): `config.toml`'s `[[sites]] access` and
//! the person's choices in the extension's popup ([`PopupRule`], one per
//! exact origin, stored by the bridge). The order, in
//! [`SiteRules::access_for`]:
//!
//! 1. every matching rule of both sources counts, whatever its place;
//! 2. the most restrictive access wins (`deny` > `read` > `act`);
//! 3. among rules of that access, a `config.toml` rule (the first in the
//!    file) is named before a popup rule;
//! 4. no matching rule: `act`, from the default.
//!
//! So the popup can only tighten what `config.toml` says, never loosen it
//! ([`popup_choice`] refuses a looser choice, and a looser popup rule
//! would lose at step 2 anyway). What a tool may do under an access is
//! [`refusal`]: [`SiteUse::Look`] (navigation, snapshots, text, screenshots,
//! waiting, the network list, scrolling, hovering) is refused only under
//! `deny`; [`SiteUse::Change`] (every other page action: click, type,
//! fill_form, select_option, press_key, upload, a flow step, closing a
//! tab, keeping a download — whatever is added later, by
//! [`crate::action::Action::site_use`]'s exhaustive match) under `read` and `deny`.

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

/// The row of the audit records the policy's decision as its word.
impl From<Decision> for crate::audit::AuditDecision {
    fn from(d: Decision) -> Self {
        use crate::audit::AuditDecision;
        match d {
            Decision::Allow => AuditDecision::Allow,
            Decision::Confirm => AuditDecision::Confirm,
            Decision::Deny => AuditDecision::Deny,
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

/// What agents may do on a site (`access`), loosest first: the derived
/// order is "more restrictive is greater".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SiteAccess {
    /// Agents may act (under the risk policy): the default.
    Act,
    /// Agents may read but change nothing ([`SiteUse::Change`] refused).
    Read,
    /// Nothing: no navigation, no reading, no action.
    Deny,
}

impl SiteAccess {
    /// Every access, loosest first (the popup's three choices).
    pub const ALL: [SiteAccess; 3] = [SiteAccess::Act, SiteAccess::Read, SiteAccess::Deny];

    pub fn as_str(self) -> &'static str {
        match self {
            SiteAccess::Act => "act",
            SiteAccess::Read => "read",
            SiteAccess::Deny => "deny",
        }
    }

    /// The popup's words for it (exactly these).
    pub fn label(self) -> &'static str {
        match self {
            SiteAccess::Act => "Agents may act",
            SiteAccess::Read => "Read only",
            SiteAccess::Deny => "Never",
        }
    }

    /// `act`, `read` or `deny` (the CLI's and `config.toml`'s words).
    pub fn parse(s: &str) -> Option<SiteAccess> {
        SiteAccess::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

/// Where a site's access comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessSource {
    /// No rule matches: agents may act.
    Default,
    /// A `[[sites]]` rule of `config.toml`.
    Config,
    /// The person's choice in the extension's popup.
    Popup,
}

impl AccessSource {
    pub fn as_str(self) -> &'static str {
        match self {
            AccessSource::Default => "default",
            AccessSource::Config => "config",
            AccessSource::Popup => "popup",
        }
    }
}

/// The person's choice in the popup for one origin, exactly
/// `scheme://host:port` as [`crate::url::origin`] writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PopupRule {
    pub origin: String,
    pub access: SiteAccess,
}

impl PopupRule {
    fn matches(&self, url: &str) -> bool {
        crate::url::Origin::of(url).is_some_and(|o| Some(o) == crate::url::Origin::of(&self.origin))
    }
}

/// Every rule that sets a site's access: `config.toml`'s `[[sites]]`
/// (those with `access`; the others only change risk decisions) and the
/// popup's. The bridge and the extension decide from this one value (the
/// bridge sends it as `BridgeToExt::SiteRules`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteRules {
    pub config: Vec<SiteRule>,
    pub popup: Vec<PopupRule>,
}

/// A site's access and the rule that set it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessIn {
    pub access: SiteAccess,
    pub source: AccessSource,
    /// The rule: its origin pattern (config) or origin (popup); empty for
    /// the default.
    pub rule: String,
    /// The strictest access `config.toml` sets here: the popup cannot
    /// choose anything looser.
    pub config_floor: SiteAccess,
}

impl SiteRules {
    /// The access on `url`'s origin (see the module docs for the order).
    /// A URL that is not http(s) matches no rule.
    pub fn access_for(&self, url: &str) -> AccessIn {
        access_in(&self.config, &self.popup, url)
    }
}

/// [`SiteRules::access_for`] on borrowed rules: `config.toml`'s `[[sites]]`
/// (`Policy::sites`) and the popup's choices, so that a decision holding
/// the policy need not copy its rules (`crate::gate::site_refusal`).
pub fn access_in(config: &[SiteRule], popup: &[PopupRule], url: &str) -> AccessIn {
    let config = config
        .iter()
        .filter_map(|s| s.access.filter(|_| origin_matches(&s.origin, url)).map(|a| (a, s.origin.as_str())));
    // The first config rule of the strictest access (max_by_key keeps
    // the last of equals: reversed).
    let config_best = config.collect::<Vec<_>>().into_iter().rev().max_by_key(|(a, _)| *a);
    let config_floor = config_best.map_or(SiteAccess::Act, |(a, _)| a);
    let popup_best = popup.iter().filter(|p| p.matches(url)).max_by_key(|p| p.access);
    match (config_best, popup_best) {
        (Some((a, rule)), p) if p.is_none_or(|p| p.access <= a) => {
            AccessIn { access: a, source: AccessSource::Config, rule: rule.to_string(), config_floor }
        }
        (_, Some(p)) => {
            AccessIn { access: p.access, source: AccessSource::Popup, rule: p.origin.clone(), config_floor }
        }
        // (Some, None) is taken by the first arm.
        _ => AccessIn { access: SiteAccess::Act, source: AccessSource::Default, rule: String::new(), config_floor },
    }
}

/// What a tool does to a site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SiteUse {
    /// Navigation, snapshots, text, screenshots, waiting, the network
    /// list, the tab list, scrolling, hovering: nothing on the site changes.
    Look,
    /// Anything that could change something: every other action.
    Change,
}

/// Why `what` is refused on `url` under `access`, or `None` when it is
/// allowed: the `PERMISSION_DENIED` message, naming the rule and the
/// origin.
pub fn refusal(access: &AccessIn, url: &str, what: SiteUse) -> Option<String> {
    let refused = match access.access {
        SiteAccess::Act => false,
        SiteAccess::Read => what == SiteUse::Change,
        SiteAccess::Deny => true,
    };
    if !refused {
        return None;
    }
    let origin = crate::url::Origin::of(url).map_or_else(|| "this page".into(), |o| o.to_string());
    let source = match access.source {
        AccessSource::Config => format!("rule {} in config.toml, sites", access.rule),
        AccessSource::Popup | AccessSource::Default => "chosen in the extension popup".to_string(),
    };
    Some(match access.access {
        SiteAccess::Deny if access.source == AccessSource::Config => {
            // The words of the config deny, as before read-only sites.
            format!("the person's policy denies access to {} (config.toml, sites)", access.rule)
        }
        SiteAccess::Deny => format!("the person set {origin} to Never ({source}): agents may not use it at all"),
        _ => format!(
            "{origin} is read only for agents ({source}): navigating, reading and scrolling work, but nothing \
             that could change something (click, type, fill_form, select_option, press_key, upload, a flow step)"
        ),
    })
}

/// What a popup choice of `wanted` for `origin` leaves in the popup's
/// rules: `Ok(Some(access))` to store, `Ok(None)` to remove the origin's
/// popup rule (`config.toml` or the default already says `wanted`: "Agents
/// may act" undoes a popup choice), `Err` when `origin` is not exactly an
/// http(s) origin or `config.toml` says something stricter (the popup
/// only tightens).
pub fn popup_choice(config: &[SiteRule], origin: &str, wanted: SiteAccess) -> Result<Option<SiteAccess>, String> {
    if !crate::url::Origin::is_exact(origin) {
        return Err(format!("{origin:?} is not an origin like https://example.com:443"));
    }
    let floor = SiteRules { config: config.to_vec(), popup: Vec::new() }.access_for(origin);
    if wanted < floor.config_floor {
        return Err(format!(
            "config.toml makes {origin} {} (rule {}); the popup can only make a site stricter",
            floor.config_floor.label(),
            floor.rule
        ));
    }
    Ok(if wanted == floor.config_floor { None } else { Some(wanted) })
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
    fn overrides(&self) -> bool {
        self.low.is_some() || self.medium.is_some() || self.high.is_some()
    }

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
            match s.access {
                Some(SiteAccess::Deny) if overrides => {
                    return Err(at("access = \"deny\" refuses everything; remove low/medium/high".into()));
                }
                Some(SiteAccess::Read) if overrides => {
                    return Err(at("access = \"read\" refuses every action; remove low/medium/high".into()));
                }
                None | Some(SiteAccess::Act) if !overrides => {
                    return Err(at("a site rule needs access = \"read\" or \"deny\", or at least one of \
                                   low/medium/high (access = \"act\" is the default)"
                        .into()));
                }
                _ => {}
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
    if let Some((s, d)) = site_override(policy, url, risk) {
        return (d, format!("site {:?}: {} risk → {}", s.origin, risk.as_str(), d.as_str()));
    }
    let d = policy.risk.get(risk);
    (d, format!("policy: {} risk → {}", risk.as_str(), d.as_str()))
}

/// The `[[sites]]` rule whose per-risk override decides an action of
/// `risk` on `url` in [`decide`] (the first matching rule with overrides,
/// if it names that risk), and its decision. The audit names such a
/// decision's maker a site rule (`crate::audit::attribute`).
pub fn site_override<'p>(policy: &'p Policy, url: &str, risk: RiskLevel) -> Option<(&'p SiteRule, Decision)> {
    let s = policy
        .sites
        .iter()
        .find(|s| s.access.is_none_or(|a| a == SiteAccess::Act) && s.overrides() && origin_matches(&s.origin, url))?;
    s.override_for(risk).map(|d| (s, d))
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

    fn rules(config: &str, popup: &[(&str, SiteAccess)]) -> SiteRules {
        let p = parse(&format!(r#"{{"sites":{config}}}"#)).unwrap();
        let popup = popup.iter().map(|(o, a)| PopupRule { origin: o.to_string(), access: *a }).collect();
        SiteRules { config: p.sites, popup }
    }

    #[test]
    fn site_access_precedence_table() {
        use AccessSource::*;
        use SiteAccess::*;
        let bank = r#"[{"origin":"https://*.bank.example","access":"read"},
                       {"origin":"https://admin.bank.example","access":"deny"},
                       {"origin":"https://*.bank.example","high":"allow"},
                       {"origin":"https://www.bank.example","access":"read"},
                       {"origin":"https://shop.example","access":"act","high":"deny"}]"#;
        // (case, popup rules, url, access, source, rule, config floor)
        #[rustfmt::skip]
        type Case<'a> = (&'a str, &'a [(&'a str, SiteAccess)], &'a str, SiteAccess, AccessSource, &'a str, SiteAccess);
        let cases: &[Case] = &[
            ("no rule: the default", &[], "https://news.example/", Act, Default, "", Act),
            ("a config read rule", &[], "https://online.bank.example/x", Read, Config, "https://*.bank.example", Read),
            (
                "the first config rule of equals is named",
                &[],
                "https://www.bank.example/",
                Read,
                Config,
                "https://*.bank.example",
                Read,
            ),
            (
                "deny beats an earlier read",
                &[],
                "https://admin.bank.example/",
                Deny,
                Config,
                "https://admin.bank.example",
                Deny,
            ),
            ("an explicit act is named", &[], "https://shop.example/", Act, Config, "https://shop.example", Act),
            (
                "a popup read",
                &[("https://news.example:443", Read)],
                "https://news.example/a",
                Read,
                Popup,
                "https://news.example:443",
                Act,
            ),
            (
                "a popup never",
                &[("https://news.example:443", Deny)],
                "https://news.example/",
                Deny,
                Popup,
                "https://news.example:443",
                Act,
            ),
            (
                "popup tightens config read",
                &[("https://online.bank.example:443", Deny)],
                "https://online.bank.example/",
                Deny,
                Popup,
                "https://online.bank.example:443",
                Read,
            ),
            (
                "popup act cannot loosen config read",
                &[("https://online.bank.example:443", Act)],
                "https://online.bank.example/",
                Read,
                Config,
                "https://*.bank.example",
                Read,
            ),
            (
                "popup read equal to config read: config named",
                &[("https://online.bank.example:443", Read)],
                "https://online.bank.example/",
                Read,
                Config,
                "https://*.bank.example",
                Read,
            ),
            (
                "popup read cannot loosen config deny",
                &[("https://admin.bank.example:443", Read)],
                "https://admin.bank.example/",
                Deny,
                Config,
                "https://admin.bank.example",
                Deny,
            ),
            (
                "a popup rule is one exact origin: other port",
                &[("http://127.0.0.1:8080", Read)],
                "http://127.0.0.1:8081/",
                Act,
                Default,
                "",
                Act,
            ),
            (
                "a popup rule is one exact origin: other scheme",
                &[("http://news.example:80", Read)],
                "https://news.example/",
                Act,
                Default,
                "",
                Act,
            ),
            (
                "a popup rule is one exact origin: subdomain",
                &[("https://news.example:443", Read)],
                "https://www.news.example/",
                Act,
                Default,
                "",
                Act,
            ),
            (
                "another spelling of the host is the same host",
                &[("https://news.example:443", Deny)],
                "https://NEWS.ex%61mple./",
                Deny,
                Popup,
                "https://news.example:443",
                Act,
            ),
            (
                "the strictest popup rule of several",
                &[("https://news.example:443", Read), ("https://news.example:443", Deny)],
                "https://news.example/",
                Deny,
                Popup,
                "https://news.example:443",
                Act,
            ),
            ("not http(s): no rule", &[("https://news.example:443", Deny)], "about:blank", Act, Default, "", Act),
        ];
        for (case, popup, url, access, source, rule, floor) in cases {
            let got = rules(bank, popup).access_for(url);
            assert_eq!(
                got,
                AccessIn { access: *access, source: *source, rule: rule.to_string(), config_floor: *floor },
                "{case}"
            );
        }
    }

    #[test]
    fn what_each_access_refuses_table() {
        use SiteAccess::*;
        use SiteUse::*;
        // (access, use, refused)
        let cases = [
            (Act, Look, false),
            (Act, Change, false),
            (Read, Look, false),
            (Read, Change, true),
            (Deny, Look, true),
            (Deny, Change, true),
        ];
        for (access, what, refused) in cases {
            for source in [AccessSource::Config, AccessSource::Popup] {
                let a = AccessIn { access, source, rule: "https://*.bank.example".into(), config_floor: Act };
                let r = refusal(&a, "https://online.bank.example/pay", what);
                assert_eq!(r.is_some(), refused, "{access:?} {what:?} {source:?}");
                if let Some(why) = r {
                    match (access, source) {
                        (Deny, AccessSource::Config) => assert!(why.contains("https://*.bank.example"), "{why}"),
                        (_, AccessSource::Config) => {
                            assert!(why.contains("https://online.bank.example:443"), "names the origin: {why}");
                            assert!(
                                why.contains("rule https://*.bank.example in config.toml"),
                                "names the rule: {why}"
                            );
                        }
                        _ => {
                            assert!(why.contains("https://online.bank.example:443"), "{why}");
                            assert!(why.contains("popup"), "{why}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_action_has_a_use() {
        use crate::action::{Action, ScrollDirection};
        let look = [Action::Scroll { direction: ScrollDirection::Down }, Action::Hover];
        for a in &look {
            assert_eq!(a.site_use(), SiteUse::Look, "{a:?}");
        }
        let change = [
            Action::Click,
            Action::Type { text: "x".into(), submit: false },
            Action::TypeSecret { name: "pin".into(), submit: true },
            Action::SelectOption { values: vec!["a".into()] },
            Action::PressKey { key: "Enter".into() },
            Action::CloseTab,
            Action::UploadFiles { upload: 1, files: Vec::new() },
            Action::KeepDownload { name: "a.pdf".into(), mime: "application/pdf".into(), risky: false },
        ];
        for a in &change {
            assert_eq!(a.site_use(), SiteUse::Change, "{a:?}");
        }
    }

    #[test]
    fn the_popup_only_tightens_table() {
        use SiteAccess::*;
        let config = rules(
            r#"[{"origin":"https://*.bank.example","access":"read"},
                {"origin":"https://admin.bank.example","access":"deny"}]"#,
            &[],
        )
        .config;
        // (origin, wanted, result: Ok(stored) or Err)
        type Case<'a> = (&'a str, SiteAccess, Result<Option<SiteAccess>, ()>);
        let cases: &[Case] = &[
            ("https://news.example:443", Read, Ok(Some(Read))),
            ("https://news.example:443", Deny, Ok(Some(Deny))),
            ("https://news.example:443", Act, Ok(None)),
            ("https://online.bank.example:443", Deny, Ok(Some(Deny))),
            ("https://online.bank.example:443", Read, Ok(None)),
            ("https://online.bank.example:443", Act, Err(())),
            ("https://admin.bank.example:443", Read, Err(())),
            ("https://admin.bank.example:443", Act, Err(())),
            ("https://admin.bank.example:443", Deny, Ok(None)),
            ("https://news.example", Read, Err(())),
            ("https://news.example:443/", Read, Err(())),
            ("https://NEWS.example:443", Read, Err(())),
            ("chrome://settings", Deny, Err(())),
            ("", Read, Err(())),
        ];
        for (origin, wanted, want) in cases {
            let got = popup_choice(&config, origin, *wanted);
            assert_eq!(got.as_ref().map_err(|_| ()), want.as_ref().map_err(|_| ()), "{origin} {wanted:?}: {got:?}");
        }
        let e = popup_choice(&config, "https://online.bank.example:443", Act).unwrap_err();
        assert!(e.contains("https://*.bank.example") && e.contains("Read only"), "{e}");
    }

    #[test]
    fn access_rules_parse_and_validate() {
        assert!(parse(r#"{"sites":[{"origin":"https://a.example","access":"read"}]}"#).is_ok());
        assert!(parse(r#"{"sites":[{"origin":"https://a.example","access":"act","high":"deny"}]}"#).is_ok());
        for bad in [
            r#"{"sites":[{"origin":"https://a.example","access":"read","high":"allow"}]}"#,
            r#"{"sites":[{"origin":"https://a.example","access":"act"}]}"#,
            r#"{"sites":[{"origin":"https://a.example","access":"readonly"}]}"#,
            r#"{"sites":[{"origin":"https://a.example","access":"Read"}]}"#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        // A read rule does not hide a later rule's risk overrides, nor is
        // it an action decision by itself (the refusal is `refusal`'s).
        let p = parse(
            r#"{"sites":[{"origin":"https://a.example","access":"read"},
                         {"origin":"https://a.example","high":"allow"}]}"#,
        )
        .unwrap();
        assert_eq!(decide(&p, "https://a.example/", RiskLevel::High).0, Decision::Allow);
        assert!(denying_rule(&p, "https://a.example/").is_none());
        for a in SiteAccess::ALL {
            assert_eq!(SiteAccess::parse(a.as_str()), Some(a));
        }
        assert_eq!(SiteAccess::ALL.map(SiteAccess::label), ["Agents may act", "Read only", "Never"]);
    }

    #[test]
    fn unparsable_urls_get_the_defaults_not_a_site_rule() {
        let p = parse(r#"{"sites":[{"origin":"https://example.com","high":"allow"}]}"#).unwrap();
        assert_eq!(decide(&p, "about:blank", RiskLevel::High).0, Decision::Confirm);
        assert_eq!(decide(&p, "https://example.com:x/", RiskLevel::High).0, Decision::Confirm);
    }
}
