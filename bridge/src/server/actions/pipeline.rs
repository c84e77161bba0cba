//! The pipeline of one action (see the module docs of `super`): a
//! [`Plan`], the decision before dispatch around `shared::gate`
//! ([`prepare_with`]), then the `Act` and its audit rows ([`execute`]).

use std::time::Duration;

use rmcp::model::CallToolResult;
use shared::action::{ActReport, Action, ControlState, Gate, ResolvedElement, Typing};
use shared::audit::{AuditDecision, DecidedBy};
use shared::error::{ErrorCode, WireError};
use shared::gate::{Dispatch, Proposal, Refused};
use shared::limits::COMMAND_TIMEOUT_MS;
use shared::mask::{Literals, SummaryTarget, summarize};
use shared::policy::{Decision, PopupRule, RiskDecisions};
use shared::protocol::{Command, CommandResult, TabId};
use shared::risk::{Classification, RiskLevel};

use super::render::{effect_str, render};
use super::secrets::SecretUse;
use crate::server::AppState;
use crate::server::audit::{Audit, Caller, Row};
use crate::server::ext::ActStage;

const STALE_HINT: &str = "take a new browser_snapshot and use its refs";

/// The person's controls (STOP, Pause, YOLO) as the connected extension
/// last reported them (none connected: all off).
fn controls(state: &AppState) -> ControlState {
    state.hub().connections().first().map(|c| c.control).unwrap_or_default()
}

/// `STOPPED` while the person has pressed STOP or Pause in the popup
/// (`shared::gate::refused_by_controls`).
pub(super) fn check_controls(state: &AppState) -> Result<(), WireError> {
    shared::gate::refused_by_controls(controls(state)).map_or(Ok(()), Err)
}

/// [`check_controls`] for a flow run: STOP or Pause stop it before any step
/// (navigations included).
pub(crate) fn controls_allow(state: &AppState) -> Result<(), WireError> {
    check_controls(state)
}

/// The per-risk decisions in force on `url`'s origin (site overrides applied).
fn effective_policy(state: &AppState, url: &str) -> RiskDecisions {
    let p = &state.config().policy;
    let d = |r| shared::policy::decide(p, url, r).0;
    RiskDecisions { low: d(RiskLevel::Low), medium: d(RiskLevel::Medium), high: d(RiskLevel::High) }
}

/// Who denied, from an error the extension returned for an `Act` (see
/// "Who denied an approval" in the module docs).
fn denied_by(e: &WireError) -> Option<DecidedBy> {
    e.denied_by.map(DecidedBy::from)
}

/// One action as the tool asked for it.
pub(super) struct Plan {
    /// The tool, as audit rows name it.
    pub(super) tool: &'static str,
    pub(super) tab: TabId,
    /// The element's ref (`None`: a page-level action).
    pub(super) target: Option<String>,
    pub(super) action: Action,
    /// For `fill_form` fields: classified as `FillForm`.
    form_field: bool,
    /// The agent's stated intent (shown to the person with the summary).
    intent: Option<String>,
    /// For `TypeSecret`: the secret's binding as read before dispatch.
    pub(super) secret: Option<SecretUse>,
}

impl Plan {
    /// `action` of `tool` on `target` in `tab`: not a form's field, no
    /// intent, no secret (the `with_*` methods add them).
    pub(super) fn new(tool: &'static str, tab: TabId, target: Option<String>, action: Action) -> Self {
        Plan { tool, tab, target, action, form_field: false, intent: None, secret: None }
    }

    /// The agent's stated intent, shown to the person with the summary.
    pub(super) fn with_intent(self, intent: Option<String>) -> Self {
        Plan { intent, ..self }
    }

    /// The stored secret the action types (its binding read already).
    pub(super) fn with_secret(self, secret: Option<SecretUse>) -> Self {
        Plan { secret, ..self }
    }

    /// A `browser_fill_form` field (classified as a form's field).
    pub(super) fn form_field(self) -> Self {
        Plan { form_field: true, ..self }
    }

    /// Whether a lost answer leaves the page in an unknown state.
    fn changes_state(&self) -> bool {
        !matches!(self.action, Action::Scroll { .. } | Action::Hover)
    }
}

/// An action that passed every check before dispatch.
pub(super) struct Prepared {
    pub(super) plan: Plan,
    element: Option<ResolvedElement>,
    pub(super) url: String,
    pub(super) class: Classification,
    pub(super) decision: Decision,
    /// The person must answer (a secret bound to no site, a flow step's
    /// changed target).
    person_must_answer: bool,
    /// A flow step's changed target, for the approval window.
    changed: Option<shared::replay::ChangedTarget>,
    /// For the approval window and the audit row.
    summary: String,
    /// For log lines and results: every literal masked.
    pub(super) log_summary: String,
}

impl Prepared {
    /// An audit row of this action: `risk` and `reasons` as the bridge
    /// classified it or as the extension reported them live.
    fn row<'a>(
        &'a self,
        (risk, reasons): (RiskLevel, &'a [String]),
        decision: AuditDecision,
        decided_by: Option<DecidedBy>,
        outcome: &'a str,
    ) -> Row<'a> {
        Row {
            tool: self.plan.tool,
            tab: Some(self.plan.tab),
            summary: &self.summary,
            url: Some(&self.url),
            risk: Some(risk),
            reasons,
            decision: Some(decision),
            decided_by,
            outcome,
        }
    }
}

/// The audit row of a refusal before anything was dispatched.
async fn record_refusal(
    audit: &Audit<'_>,
    plan: &Plan,
    summary: &str,
    url: Option<&str>,
    class: Option<&Classification>,
    e: &WireError,
) {
    let decided_by = if e.code == ErrorCode::Stopped { DecidedBy::Stop } else { DecidedBy::Policy };
    audit
        .record(Row {
            tool: plan.tool,
            tab: Some(plan.tab),
            summary,
            url,
            risk: class.map(|c| c.risk),
            reasons: class.map_or(&[][..], |c| &c.reasons),
            decision: Some(AuditDecision::Deny),
            decided_by: Some(decided_by),
            outcome: e.code.as_str(),
        })
        .await;
}

/// A summary before the element is known (`click [e12]`): every literal
/// masked, since the target may be a sensitive field.
pub(super) fn early_summary(plan: &Plan) -> String {
    let t = plan.target.as_deref().map(|r| SummaryTarget { role: "", name: "", element_ref: r });
    summarize(&plan.action, t.as_ref(), false, Literals::Masked)
}

/// Steps 3–7 of the pipeline for one action (the caller holds the tab lock).
pub(super) async fn prepare(state: &AppState, audit: &Audit<'_>, plan: Plan) -> Result<Prepared, WireError> {
    prepare_with(state, audit, plan, &StepGate::default()).await
}

/// What a flow step adds to the pipeline (`crate::server::flows`; the rules are
/// `shared::replay`): the risk stored with the step raises the live
/// classification (never lowers it), and a changed target makes the action
/// at least `confirm` with [`Gate::person_must_answer`] and
/// [`Gate::changed`], so the person sees both targets (a `deny` stays).
#[derive(Debug, Clone, Default)]
pub(crate) struct StepGate {
    pub(crate) floor: Option<RiskLevel>,
    pub(crate) changed: Option<shared::replay::ChangedTarget>,
}

impl Plan {
    /// The pure decision's view of this plan (`shared::gate::dispatch`).
    /// `popup`: the person's site choices in force now.
    fn proposal<'a>(&'a self, state: &'a AppState, popup: &'a [PopupRule], step: &'a StepGate) -> Proposal<'a> {
        Proposal {
            policy: &state.config().policy,
            popup,
            action: &self.action,
            typing: if self.form_field { Typing::FormField } else { Typing::Alone },
            target: self.target.as_deref(),
            secret: self.secret.as_ref().map(SecretUse::binding),
            floor: step.floor,
            changed: step.changed.as_ref(),
        }
    }
}

/// [`prepare`] with a flow step's additions: IO around the pure decision
/// (`shared::gate::before_resolve`, the `Resolve`, `before_dispatch`),
/// writing the audit row of a refusal. The site's access (config and the
/// person's popup choices) is read afresh for each of the two decisions:
/// a choice made while the ref resolves applies.
pub(super) async fn prepare_with(
    state: &AppState,
    audit: &Audit<'_>,
    plan: Plan,
    step: &StepGate,
) -> Result<Prepared, WireError> {
    let known = state.actions().page(plan.tab).url;
    let popup = state.popup_rules();
    if let Err(e) = shared::gate::before_resolve(&plan.proposal(state, &popup, step), controls(state), known.as_deref())
    {
        let url = if e.code == ErrorCode::Stopped { None } else { known.as_deref() };
        record_refusal(audit, &plan, &early_summary(&plan), url, None, &e).await;
        return Err(e);
    }
    let element = match &plan.target {
        Some(target) => {
            let command = Command::Resolve { tab: plan.tab, target: target.clone() };
            match state.hub().call(command, Duration::from_millis(COMMAND_TIMEOUT_MS)).await {
                Ok(CommandResult::Element { element }) => Some(element),
                Ok(_) => return Err(crate::server::unexpected_answer()),
                Err(e) => {
                    let e = match e.code {
                        ErrorCode::StaleRef => {
                            WireError::new(e.code, format!("{}; {STALE_HINT}", e.message.trim_end_matches('.')))
                        }
                        _ => e,
                    };
                    // Nothing was decided or dispatched: no decision, just the outcome.
                    audit
                        .record(Row {
                            tool: plan.tool,
                            tab: Some(plan.tab),
                            summary: &early_summary(&plan),
                            url: known.as_deref(),
                            outcome: e.code.as_str(),
                            ..Row::default()
                        })
                        .await;
                    return Err(e);
                }
            }
        }
        None => None,
    };
    let url = element.as_ref().map(|e| e.url.clone()).or(known).unwrap_or_default();
    if element.is_some() {
        state.actions().remember_url(plan.tab, &url);
    }
    let sensitive = shared::gate::field_kind(element.as_ref()).is_some();
    let target = element.as_ref().map(|e| SummaryTarget {
        role: &e.facts.role,
        name: &e.facts.name,
        element_ref: plan.target.as_deref().unwrap_or(""),
    });
    let mut summary = summarize(&plan.action, target.as_ref(), sensitive, Literals::UnlessSensitive);
    if let Some(intent) = plan.intent.as_deref().map(str::trim).filter(|i| !i.is_empty()) {
        let mut i = intent.to_string();
        shared::limits::truncate_chars(&mut i, shared::limits::MAX_NAME_CHARS);
        summary.push_str(" — agent's intent: ");
        shared::snapshot::quote(&i, &mut summary);
    }
    let log_summary = summarize(&plan.action, target.as_ref(), sensitive, Literals::Masked);
    let popup = state.popup_rules();
    let decided = shared::gate::before_dispatch(&plan.proposal(state, &popup, step), element.as_ref(), &url);
    let Dispatch { class, decision, person_must_answer } = match decided {
        Ok(d) => d,
        Err(Refused { error, class }) => {
            record_refusal(audit, &plan, &summary, Some(&url), class.as_ref(), &error).await;
            return Err(error);
        }
    };
    let changed = step.changed.clone();
    Ok(Prepared { plan, element, url, class, decision, person_must_answer, changed, summary, log_summary })
}

/// Step 7–8: the `Act`, its audit rows, and the URL check afterwards.
pub(super) async fn execute(state: &AppState, audit: &Audit<'_>, p: &Prepared) -> Result<ActReport, WireError> {
    let policy = &state.config().policy;
    let gate = Gate {
        request: state.actions().next_request(),
        risk: p.class.risk,
        reasons: p.class.reasons.clone(),
        decision: p.decision,
        policy: effective_policy(state, &p.url),
        summary: p.summary.clone(),
        timeout_secs: policy.approval_timeout_secs,
        origin: shared::url::Origin::wire(&p.url),
        person_must_answer: p.person_must_answer,
        changed: p.changed.clone(),
    };
    let decided_by = (p.decision == Decision::Allow).then_some(DecidedBy::Policy);
    let action_row =
        |outcome| p.row((p.class.risk, &p.class.reasons), AuditDecision::from(p.decision), decided_by, outcome);
    // A consequential action is on record before it is dispatched; an
    // allowed one is written once, with its outcome (one fsync less on the
    // fast path).
    let row = match p.decision {
        Decision::Allow => None,
        _ => audit.record(action_row("pending")).await,
    };
    let finish = |outcome: &'static str| async move {
        match row {
            Some(_) => audit.set_outcome(row, outcome).await,
            None => {
                audit.record(action_row(outcome)).await;
            }
        }
    };
    tracing::info!(
        tool = p.plan.tool,
        tab = p.plan.tab,
        request = gate.request,
        risk = p.class.risk.as_str(),
        decision = p.decision.as_str(),
        action = %p.log_summary,
        "action started"
    );
    let grant = p.plan.secret.as_ref().map(|s| s.grant(gate.request, &gate.origin));
    let request = gate.request;
    let command = Command::Act {
        tab: p.plan.tab,
        target: p.plan.target.clone(),
        action: p.plan.action.clone(),
        expect: p.element.as_ref().map(|e| e.fingerprint.clone()),
        gate,
    };
    // The approval, any hand-off to the person (a challenge found before
    // dispatch), then the action itself.
    let wait = Duration::from_secs(u64::from(policy.approval_timeout_secs))
        + state.human_wait()
        + Duration::from_millis(COMMAND_TIMEOUT_MS);
    state.hub().act_sent(request);
    // Forgets the stage however this future ends (a dropped call too).
    let tracked = ActTracked { state, request };
    let sent = match grant {
        Some(grant) => state.hub().call_granting(command, wait, grant).await,
        None => state.hub().call(command, wait).await,
    };
    let stage = state.hub().act_finished(request);
    drop(tracked);
    let answer = match sent {
        Ok(CommandResult::Acted { report }) => Ok(report),
        Ok(_) => Err(crate::server::unexpected_answer()),
        // The person was still being asked when the answer was lost: the
        // extension runs nothing it has not been told to go on with.
        Err(e) if lost_answer(&e) && stage == Some(ActStage::Asking) => Err(WireError::new(
            ErrorCode::ApprovalDenied,
            format!(
                "{} while the person was being asked; the approval is void and nothing ran",
                e.message.trim_end_matches('.')
            ),
        )),
        Err(e) if p.plan.changes_state() && lost_answer(&e) => Err(WireError::new(
            ErrorCode::EffectUnknown,
            format!(
                "{}; the action may or may not have run. Look at the page (browser_snapshot) before doing anything \
                 else, and do not repeat it blindly",
                e.message.trim_end_matches('.')
            ),
        )),
        Err(e) if e.code == ErrorCode::StaleRef => Err(WireError::new(e.code, format!("{}; {STALE_HINT}", e.message))),
        Err(e) => Err(e),
    };
    match &answer {
        Ok(report) => {
            let effect = effect_str(report.effect);
            finish(effect).await;
            if report.decided_by != DecidedBy::Policy {
                let live = (report.risk, &report.reasons[..]);
                audit.record(p.row(live, AuditDecision::Approved, Some(report.decided_by), effect)).await;
            }
            tracing::info!(
                tool = p.plan.tool,
                tab = p.plan.tab,
                effect,
                decided_by = report.decided_by.as_str(),
                "action done"
            );
        }
        Err(e) => {
            finish(e.code.as_str()).await;
            if let Some(by) = denied_by(e) {
                let row = p.row((p.class.risk, &p.class.reasons), AuditDecision::Denied, Some(by), e.code.as_str());
                audit.record(row).await;
            }
            tracing::info!(tool = p.plan.tool, tab = p.plan.tab, code = e.code.as_str(), "action failed");
        }
    }
    let report = answer?;
    if let Err(e) = state.url_seen(p.plan.tab, &report.url) {
        return Err(WireError::new(
            ErrorCode::PermissionDenied,
            format!("the action ran, but the tab is now on a site the person's policy denies ({})", e.message),
        ));
    }
    Ok(report)
}

struct ActTracked<'a> {
    state: &'a AppState,
    request: u64,
}

impl Drop for ActTracked<'_> {
    fn drop(&mut self) {
        self.state.hub().act_finished(self.request);
    }
}

/// The hub's errors that leave an `Act` without an answer after it may have
/// been delivered.
fn lost_answer(e: &WireError) -> bool {
    e.code == ErrorCode::Timeout
        || (e.code == ErrorCode::ExtensionDisconnected && e.message.contains("before answering"))
}

/// Runs one action through the whole pipeline.
pub(super) async fn run(state: &AppState, caller: &Caller, plan: Plan) -> Result<CallToolResult, WireError> {
    let lock = state.actions().lock_for(plan.tab);
    let _serial = lock.lock().await;
    let audit = Audit::new(state, caller);
    let prepared = prepare(state, &audit, plan).await?;
    let report = execute(state, &audit, &prepared).await?;
    Ok(render(&prepared, &report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_denials_name_who_denied() {
        use shared::audit::DeniedBy;
        let e = |code, m: &str, by| WireError::new(code, m).with_denied_by(by);
        assert_eq!(denied_by(&e(ErrorCode::ApprovalDenied, "denied", DeniedBy::Human)), Some(DecidedBy::Human));
        assert_eq!(denied_by(&e(ErrorCode::ApprovalDenied, "no answer", DeniedBy::Timeout)), Some(DecidedBy::Timeout));
        assert_eq!(denied_by(&e(ErrorCode::Stopped, "STOP", DeniedBy::Stop)), Some(DecidedBy::Stop));
        // The message says nothing about who: only the typed field does.
        assert_eq!(denied_by(&WireError::new(ErrorCode::ApprovalDenied, "timeout: stop:")), None);
        assert_eq!(denied_by(&WireError::new(ErrorCode::StaleRef, "gone")), None);
    }
}
