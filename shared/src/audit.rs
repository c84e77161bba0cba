//! Audit rows as `chaperone audit --json` exports them
//! (docs/design.md, "Policy, approvals and audit").
//! Every text field is masked/redacted before it is stored.

use serde::{Deserialize, Serialize};

/// Who decided whether an action could run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    Policy,
    Human,
    Yolo,
    Timeout,
    Stop,
}

impl DecidedBy {
    pub fn as_str(self) -> &'static str {
        match self {
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

/// One audit row: an action, or a decision about one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditEntry {
    pub id: i64,
    /// RFC 3339 UTC.
    pub time: String,
    /// MCP session (or `cli`).
    pub session: String,
    /// The session's client (`shared::sessions::client_label` of its
    /// `clientInfo.name`); absent on rows written before it was recorded
    /// and on rows no MCP session caused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    pub tab: Option<i64>,
    /// Tool name, e.g. `browser_click`.
    pub tool: String,
    /// Masked summary of the action (never a typed value of a sensitive
    /// field, never a secret).
    pub summary: String,
    /// Page URL without query string or fragment.
    pub url: Option<String>,
    pub risk: Option<String>,
    pub reasons: Vec<String>,
    /// `allow | confirm | deny`, then the outcome of a confirmation.
    pub decision: Option<String>,
    pub decided_by: Option<DecidedBy>,
    /// `ok`, an error code, or the effect (`navigated`, `value_changed`…).
    pub outcome: Option<String>,
}
