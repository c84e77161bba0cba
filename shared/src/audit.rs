//! The audit row, typed: what the store keeps, `chaperone audit --json`
//! exports and the dashboard (`/dashboard/data`) and `chaperone report`
//! show — one shape, [`AuditEntry`] (docs/design.md, "Policy, approvals
//! and audit"). Every text field is masked/redacted before it is stored.
//!
//! # Who decided
//!
//! [`DecidedBy`] names who let an action run or refused it. The policy's
//! answer has two sources a person tells apart: the `[risk]` defaults
//! ([`DecidedBy::Policy`]) and a `[[sites]]` rule or a popup choice for
//! that site ([`DecidedBy::SiteRule`]). [`attribute`] is the one rule that
//! says which, from what the site rules say about the row's page
//! ([`SiteSays`]); the bridge's audit writer applies it to every row a
//! caller marks `policy`.

use serde::{Deserialize, Serialize};

use crate::risk::RiskLevel;

/// Who decided whether an action could run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    Policy,
    Human,
    Yolo,
    Timeout,
    Stop,
    /// A `[[sites]]` rule of `config.toml` or the person's popup choice for
    /// the site (its access, or its per-risk override), not the `[risk]`
    /// defaults. Written by the bridge's audit writer ([`attribute`]); the
    /// extension never reports it.
    SiteRule,
}

impl DecidedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            DecidedBy::SiteRule => "site_rule",
            DecidedBy::Policy => "policy",
            DecidedBy::Human => "human",
            DecidedBy::Yolo => "yolo",
            DecidedBy::Timeout => "timeout",
            DecidedBy::Stop => "stop",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "policy" => DecidedBy::Policy,
            "human" => DecidedBy::Human,
            "yolo" => DecidedBy::Yolo,
            "timeout" => DecidedBy::Timeout,
            "stop" => DecidedBy::Stop,
            "site_rule" => DecidedBy::SiteRule,
            _ => return None,
        })
    }
}

/// Who said no to an action the extension asked about (or was about to
/// run): the extension puts it on its error
/// ([`WireError::denied_by`](crate::error::WireError::denied_by)) and the
/// bridge writes it as the audit decision row's `decided_by`. A subset of
/// [`DecidedBy`]: the policy and YOLO never deny through the person's gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeniedBy {
    /// The person pressed Deny (or Esc) in the approval window or popup.
    Human,
    /// Nobody answered within the approval timeout.
    Timeout,
    /// STOP (pressed while the action waited or before it ran) or Pause.
    Stop,
}

impl From<DeniedBy> for DecidedBy {
    fn from(d: DeniedBy) -> DecidedBy {
        match d {
            DeniedBy::Human => DecidedBy::Human,
            DeniedBy::Timeout => DecidedBy::Timeout,
            DeniedBy::Stop => DecidedBy::Stop,
        }
    }
}

/// The tool name of an agent session's own rows: one when it first speaks
/// (outcome [`SESSION_STARTED`]) and one when it ends ([`SESSION_ENDED`]).
pub const SESSION_TOOL: &str = "session";
pub const SESSION_STARTED: &str = "started";
pub const SESSION_ENDED: &str = "ended";

/// A row's decision: the policy's (`allow | confirm | deny`) on an action
/// row, or the person's answer (`approved | denied`) on the decision row
/// that follows a `confirm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuditDecision {
    Allow,
    Confirm,
    Deny,
    Approved,
    Denied,
}

impl AuditDecision {
    pub const ALL: [AuditDecision; 5] = [
        AuditDecision::Allow,
        AuditDecision::Confirm,
        AuditDecision::Deny,
        AuditDecision::Approved,
        AuditDecision::Denied,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AuditDecision::Allow => "allow",
            AuditDecision::Confirm => "confirm",
            AuditDecision::Deny => "deny",
            AuditDecision::Approved => "approved",
            AuditDecision::Denied => "denied",
        }
    }

    /// The word as stored; `None` for any other.
    pub fn parse(s: &str) -> Option<Self> {
        AuditDecision::ALL.into_iter().find(|d| d.as_str() == s)
    }

    /// Whether this is the policy's decision (`allow | confirm | deny`,
    /// the words of `shared::policy::Decision`), not the person's answer.
    pub fn is_policys(self) -> bool {
        matches!(self, AuditDecision::Allow | AuditDecision::Confirm | AuditDecision::Deny)
    }
}

/// What the site rules in force say about a row's page, for [`attribute`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SiteSays {
    /// A site rule restricts the origin (`access = "read"` or `"deny"`,
    /// from `config.toml` or the popup).
    pub restricted: bool,
    /// The first matching `[[sites]]` rule's override for the row's risk
    /// (`shared::policy::site_override`), as the row would record it.
    pub overrides: Option<AuditDecision>,
}

/// Who decided a row the caller marks `decided_by`: a row marked
/// [`DecidedBy::Policy`] becomes [`DecidedBy::SiteRule`] when a site rule
/// made that decision — a `deny` on a restricted origin, or the decision
/// the site's per-risk override gives. Anything else keeps its mark (the
/// person, YOLO, a timeout and STOP are never re-attributed; a decision
/// the override does not explain, e.g. raised to `confirm` by an unbound
/// secret, stays the policy's).
pub fn attribute(marked: Option<DecidedBy>, decision: Option<AuditDecision>, site: SiteSays) -> Option<DecidedBy> {
    let by_site = match decision.filter(|d| d.is_policys()) {
        Some(AuditDecision::Deny) if site.restricted => true,
        Some(d) => site.overrides == Some(d),
        None => false,
    };
    match marked {
        Some(DecidedBy::Policy) if by_site => Some(DecidedBy::SiteRule),
        other => other,
    }
}

/// One audit row as the store keeps it: its [`AuditRow`] and the `id` and
/// `time` the store assigned. Reads of the row's fields go through to it
/// (`entry.tool`), so a stored entry and a row about to be stored are one
/// shape, not two copies of the field list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    pub id: i64,
    /// RFC 3339 UTC.
    pub time: String,
    #[serde(flatten)]
    pub row: AuditRow,
}

impl std::ops::Deref for AuditEntry {
    type Target = AuditRow;
    fn deref(&self) -> &AuditRow {
        &self.row
    }
}

/// One audit row: an action, or a decision about one, before the store
/// gives it an `id` and a `time` ([`AuditEntry`]); every text field is
/// redacted before it is stored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRow {
    /// MCP session (or `cli`).
    pub session: String,
    /// The session's client (`shared::sessions::client_label` of its
    /// `clientInfo.name`); absent on rows written before it was recorded
    /// and on rows no MCP session caused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    pub tab: Option<i64>,
    /// Tool name, e.g. `browser_click`; `session` for an agent's
    /// connection and its end, `handoff` for a hand-off.
    pub tool: String,
    /// Masked summary of the action (never a typed value of a sensitive
    /// field, never a secret).
    pub summary: String,
    /// Page URL without query string or fragment.
    pub url: Option<String>,
    /// The page's title as last seen on that tab at that URL (redacted,
    /// untrusted page text: shown only as text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub risk: Option<RiskLevel>,
    pub reasons: Vec<String>,
    pub decision: Option<AuditDecision>,
    pub decided_by: Option<DecidedBy>,
    /// `ok`, `pending`, an error code, or the effect (`navigated`,
    /// `value_changed`…): words from several typed sources (error codes,
    /// effects, hand-off and flow outcomes), kept as the word.
    pub outcome: Option<String>,
    /// From the tool call's start to when this row's outcome was known
    /// (a decision row: including the wait for the person); absent on
    /// rows written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decisions_round_trip_as_their_words() {
        for d in AuditDecision::ALL {
            assert_eq!(AuditDecision::parse(d.as_str()), Some(d));
            assert_eq!(serde_json::to_value(d).unwrap(), serde_json::json!(d.as_str()));
        }
        use crate::policy::Decision;
        let policys: Vec<&str> =
            AuditDecision::ALL.into_iter().filter(|d| d.is_policys()).map(|d| d.as_str()).collect();
        assert_eq!(
            policys,
            [Decision::Allow, Decision::Confirm, Decision::Deny].map(|d| d.as_str()),
            "the policy's words"
        );
        for d in [Decision::Allow, Decision::Confirm, Decision::Deny] {
            assert_eq!(AuditDecision::from(d).as_str(), d.as_str());
        }
        assert_eq!(AuditDecision::parse("Allow"), None);
        for by in [
            DecidedBy::Policy,
            DecidedBy::Human,
            DecidedBy::Yolo,
            DecidedBy::Timeout,
            DecidedBy::Stop,
            DecidedBy::SiteRule,
        ] {
            assert_eq!(DecidedBy::parse(by.as_str()), Some(by));
            assert_eq!(serde_json::to_value(by).unwrap(), serde_json::json!(by.as_str()));
        }
    }

    #[test]
    fn a_site_rule_is_named_when_it_made_the_decision() {
        use AuditDecision as D;
        use DecidedBy as By;
        let none = SiteSays::default();
        let restricted = SiteSays { restricted: true, overrides: None };
        let deny_high = SiteSays { restricted: false, overrides: Some(D::Deny) };
        let allow_high = SiteSays { restricted: false, overrides: Some(D::Allow) };
        #[allow(clippy::type_complexity)]
        let cases: &[(&str, Option<By>, Option<D>, SiteSays, Option<By>)] = &[
            ("the [risk] defaults allow", Some(By::Policy), Some(D::Allow), none, Some(By::Policy)),
            ("the [risk] defaults deny", Some(By::Policy), Some(D::Deny), none, Some(By::Policy)),
            ("access deny or read refuses", Some(By::Policy), Some(D::Deny), restricted, Some(By::SiteRule)),
            ("the site's high = deny", Some(By::Policy), Some(D::Deny), deny_high, Some(By::SiteRule)),
            ("the site's high = allow", Some(By::Policy), Some(D::Allow), allow_high, Some(By::SiteRule)),
            (
                "the override says allow, the row confirm",
                Some(By::Policy),
                Some(D::Confirm),
                allow_high,
                Some(By::Policy),
            ),
            ("an allowed row on a read site", Some(By::Policy), Some(D::Allow), restricted, Some(By::Policy)),
            ("the person denied", Some(By::Human), Some(D::Denied), restricted, Some(By::Human)),
            ("YOLO approved", Some(By::Yolo), Some(D::Approved), allow_high, Some(By::Yolo)),
            ("STOP refused", Some(By::Stop), Some(D::Deny), restricted, Some(By::Stop)),
            ("a timeout", Some(By::Timeout), Some(D::Denied), deny_high, Some(By::Timeout)),
            ("no decision (a stale ref)", None, None, restricted, None),
            ("policy without a decision", Some(By::Policy), None, restricted, Some(By::Policy)),
        ];
        for (name, marked, decision, site, want) in cases {
            assert_eq!(attribute(*marked, *decision, *site), *want, "{name}");
        }
    }

    #[test]
    fn rows_without_the_newer_fields_still_read_and_do_not_write_them() {
        let old = serde_json::json!({
            "id": 1, "time": "2026-01-01T00:00:00Z", "session": "mcp:1", "tab": null, "tool": "t",
            "summary": "s", "url": null, "risk": "high", "reasons": [], "decision": "deny",
            "decided_by": "site_rule", "outcome": "PERMISSION_DENIED"
        });
        let e: AuditEntry = serde_json::from_value(old.clone()).unwrap();
        assert_eq!(
            (e.risk, e.decision, e.decided_by),
            (Some(RiskLevel::High), Some(AuditDecision::Deny), Some(DecidedBy::SiteRule))
        );
        assert_eq!((e.title.as_deref(), e.duration_ms, e.client.as_deref()), (None, None, None));
        assert_eq!(serde_json::to_value(&e).unwrap(), old);
        let mut bad = old;
        bad["decision"] = serde_json::json!("maybe");
        assert!(serde_json::from_value::<AuditEntry>(bad).is_err(), "an unknown decision is an error, not a string");
    }
}
