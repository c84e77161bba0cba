//! Judging a navigation before it loads (`shared::navigation`): the tools
//! that load a URL in an agent tab — `browser_navigate {url}` and `{step:
//! "reload"}`, `browser_tabs new {url}`, a flow's navigate step — call
//! [`clear`] before anything reaches the browser.
//!
//! The target URL is classified with the URL rules of link targets and
//! decided by the person's policy for that URL:
//!
//! - `deny` → `PERMISSION_DENIED`, nothing sent to the browser (for
//!   `browser_tabs new` not even the tab is opened); one audit row `deny`;
//! - `confirm` → the person is asked in the extension's approval window
//!   (`Command::AskPerson`: STOP/Pause refuse it; YOLO answers it, logged
//!   as every auto-approval; no answer in time is a denial). Denied →
//!   `APPROVAL_DENIED` and nothing is loaded; approved → it loads. A
//!   decision row says who answered;
//! - `allow` → it loads.
//!
//! Back and forward are not judged: their target is whatever the tab's
//! history holds, which the bridge does not know before it moves (each of
//! those pages was judged when it was loaded). A reload is judged on the
//! URL the bridge last saw in the tab: reloading a URL that acts acts
//! again.

use std::time::Duration;

use shared::action::Gate;
use shared::audit::{AuditDecision, DecidedBy};
use shared::error::{ErrorCode, WireError};
use shared::limits::COMMAND_TIMEOUT_MS;
use shared::navigation::{Verdict, judge};
use shared::policy::{Decision, RiskDecisions};
use shared::protocol::{Command, CommandResult, TabId};
use shared::risk::RiskLevel;

use super::AppState;
use super::audit::{Audit, Caller, Row};

/// Judges loading `url` (see the module docs): `Ok` when it may load
/// (with who decided), `Err` when it must not (audit rows written).
pub(crate) async fn clear(
    state: &AppState,
    caller: &Caller,
    tool: &str,
    tab: Option<TabId>,
    url: &str,
) -> Result<DecidedBy, WireError> {
    let v = judge(&state.config().policy, url);
    match v.decision {
        Decision::Allow => Ok(DecidedBy::Policy),
        Decision::Deny => {
            let e = shared::navigation::denied(url, &v);
            row(state, caller, tool, tab, url, &v, AuditDecision::Deny, DecidedBy::Policy, e.code.as_str()).await;
            tracing::info!(tool, risk = v.class.risk.as_str(), "navigation refused by the policy");
            Err(e)
        }
        Decision::Confirm => ask(state, caller, tool, tab, url, &v).await,
    }
}

/// The per-risk decisions in force on `url`'s origin.
fn policy_for(state: &AppState, url: &str) -> RiskDecisions {
    let p = &state.config().policy;
    let d = |r| shared::policy::decide(p, url, r).0;
    RiskDecisions { low: d(RiskLevel::Low), medium: d(RiskLevel::Medium), high: d(RiskLevel::High) }
}

async fn ask(
    state: &AppState,
    caller: &Caller,
    tool: &str,
    tab: Option<TabId>,
    url: &str,
    v: &Verdict,
) -> Result<DecidedBy, WireError> {
    let summary = format!("load {}", shared::redact::redact_url(url));
    let gate = Gate {
        request: state.actions().next_request(),
        risk: v.class.risk,
        reasons: v.class.reasons.clone(),
        decision: Decision::Confirm,
        policy: policy_for(state, url),
        summary: summary.clone(),
        timeout_secs: state.config().policy.approval_timeout_secs,
        origin: String::new(),
        person_must_answer: false,
        changed: None,
    };
    let wait = Duration::from_secs(u64::from(gate.timeout_secs)) + Duration::from_millis(COMMAND_TIMEOUT_MS);
    match state.hub().call(Command::AskPerson { gate }, wait).await {
        Ok(CommandResult::Answered { decided_by }) => {
            row(state, caller, tool, tab, url, v, AuditDecision::Approved, decided_by, "ok").await;
            Ok(decided_by)
        }
        Ok(_) => Err(super::unexpected_answer()),
        Err(e) => {
            let by = e.denied_by.map(DecidedBy::from).unwrap_or(DecidedBy::Policy);
            row(state, caller, tool, tab, url, v, AuditDecision::Denied, by, e.code.as_str()).await;
            let mut refused = e;
            if refused.code == ErrorCode::ApprovalDenied {
                refused.message = format!("{}; nothing was loaded", refused.message);
            }
            Err(refused)
        }
    }
}

#[allow(clippy::too_many_arguments)]
async fn row(
    state: &AppState,
    caller: &Caller,
    tool: &str,
    tab: Option<TabId>,
    url: &str,
    v: &Verdict,
    decision: AuditDecision,
    decided_by: DecidedBy,
    outcome: &str,
) {
    Audit::new(state, caller)
        .record(Row {
            tool,
            tab,
            summary: "navigate",
            url: Some(url),
            risk: Some(v.class.risk),
            reasons: &v.class.reasons,
            decision: Some(decision),
            decided_by: Some(decided_by),
            outcome,
        })
        .await;
}
