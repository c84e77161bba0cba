//! The action pipeline (docs/design.md, "Policy, approvals and audit"): every page-changing tool goes through
//! [`run`] (or [`fill_form`]), in this order:
//!
//! 1. arguments validated (unknown fields were refused by `shared::tools`);
//! 2. the tab: one the agent opened (`PERMISSION_DENIED` otherwise,
//!    [`AppState::agent_tab`], the rule every tool follows), then its
//!    per-tab lock, so actions on one page run one at a time while
//!    other tabs go on concurrently;
//! 3. (to 7.) the decision before dispatch, pure and table-tested in
//!    `shared::gate::dispatch` (its module docs are the spec of each
//!    refusal): `before_resolve` on the person's controls as the connected
//!    extension last reported them (STOP or Pause → `STOPPED`) and the last
//!    URL seen on that tab (a site with `access = "deny"`, a secret bound
//!    elsewhere → `PERMISSION_DENIED`); then `Command::Resolve` of the ref
//!    (`STALE_REF` comes back with a hint to take a new snapshot); then
//!    `before_dispatch` on the element and its page URL: the site and the
//!    secret's binding again, the sensitive-field rule the extension
//!    applies too (`shared::gate::fields`), file inputs, options, the
//!    classification and the policy (`deny` → `PERMISSION_DENIED`, nothing
//!    dispatched; `allow`/`confirm` → `Command::Act` with a [`Gate`]: fresh
//!    request id, risk, reasons, decision, the per-risk decisions in force
//!    for this origin, the masked summary, the approval timeout, and the
//!    element's fingerprint as `expect`). The extension re-classifies live
//!    and asks the person when either side says confirm; the bridge waits
//!    the approval timeout plus [`COMMAND_TIMEOUT_MS`];
//! 8. the report: `effect`, new URL (a denied site is not shown), live risk
//!    and reasons, who decided, what changed — wrapped as untrusted data.
//!
//! Files (`super::files`) use the same pipeline: `browser_upload_file` runs
//! `Action::UploadFiles` on the file input ([`upload`]; `before_dispatch` refuses
//! any element that is not `<input type=file>`), and a download an agent
//! tab started runs `Action::KeepDownload` with no element
//! ([`keep_download`], without the tab lock).
//!
//! # Secrets
//!
//! `{"secret": NAME}` becomes `Action::TypeSecret { name }`: the `Act`
//! carries the name, never the value, and summaries, log lines, audit rows
//! and results say `{secret:NAME}`. Before dispatch the bridge only checks
//! that the secret exists and reads its site binding
//! ([`SecretStore::sites`](crate::secrets::SecretStore::sites), nothing is
//! decrypted). A secret bound to no site makes the action `confirm` (a
//! `deny` stays) with [`Gate::person_must_answer`] set and the reason "the
//! secret NAME is not bound to a site": the extension asks the person even
//! under YOLO. The `Act` is sent with a grant (`ExtHub::call_granting`);
//! the extension asks for the value (`SecretRequest`) once its gate let
//! the action through, and [`release_secret`] answers — only for that
//! `Act` while the bridge waits for it, only on its connection, only once,
//! only for the origin decided for, and only if the secret's binding as it
//! is now allows that origin (a secret bound at the decision and unbound
//! since is refused: nobody approved it). The value is decrypted then, and
//! sent in that one `BridgeToExt::Secret` frame.
//!
//! # Audit
//!
//! Through the one writer, [`super::audit`], named by the caller's MCP
//! session. Refused before dispatch: one row (`decision` deny, `decided_by` policy,
//! or `stop` for STOP/Pause). Dispatched: one action row (decision
//! allow/confirm, `decided_by` policy for allow) with the effect or error
//! code as outcome. A `confirm` row is written *before* the `Act` (outcome
//! `pending`) and updated afterwards; an `allow` row once, afterwards. When a
//! person (or YOLO, a timeout, STOP) decided, a second decision row
//! (`approved`/`denied`, `decided_by` human|yolo|timeout|stop). Summaries are
//! masked ([`shared::mask`]): a literal typed into a sensitive field is
//! `••••` everywhere; log lines, and rows written before the target is
//! resolved, mask every literal. URLs lose their query.
//!
//! # Who denied an approval
//!
//! An error the extension returns for an `Act` says who denied it in its
//! typed [`WireError::denied_by`] (`shared::gate`, steps 1, 4 and 5):
//! `human` (the person's Deny), `timeout` (nobody answered in time) or
//! `stop` (STOP or Pause, before the approval, while it waited or before
//! the action ran); that is the decision row's `decided_by`. An error
//! without it (a live policy deny, a stale element…) writes no decision
//! row.
//!
//! # fill_form
//!
//! Every field is resolved, classified and decided first; if any field is
//! refused, nothing is typed. Then the fields run in order, each as its own
//! `Act` with its own gate (an approval covers exactly one `Act` on the
//! wire, so a form with two risky fields asks twice); `submit` presses Enter
//! in the last field and is classified with it. The result lists every
//! field and the merged classification.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use shared::action::{ActReport, Action, Effect, Gate, ResolvedElement, ScrollDirection, SecretText, Typing};
use shared::audit::DecidedBy;
use shared::error::{ErrorCode, WireError};
use shared::gate::{Dispatch, Proposal, Refused, SecretBinding};
use shared::limits::COMMAND_TIMEOUT_MS;
use shared::mask::{Literals, SummaryTarget, summarize};
use shared::names::{MAX_SECRET_NAME_CHARS, is_valid_secret_name};
use shared::policy::{Decision, RiskDecisions};
use shared::protocol::{BridgeToExt, Command, CommandResult, TabId};
use shared::risk::{Classification, RiskLevel};
use shared::tools::{
    FillFormArgs, HoverArgs, MAX_FORM_FIELDS, MAX_OPTIONS, MAX_TYPED_CHARS, PressKeyArgs, ScrollArgDirection,
    ScrollArgs, SelectOptionArgs, TypeArgs, ValueSource, is_valid_ref,
};
use shared::url::Origin;

use super::AppState;
use super::audit::{Audit, Caller, Row};
use super::ext::{ActStage, SecretGrant};
use super::results::untrusted_result;

const STALE_HINT: &str = "take a new browser_snapshot and use its refs";

/// Per-tab locks, what the bridge last saw of each agent tab, and gate ids.
pub(crate) struct Actions {
    locks: Mutex<HashMap<TabId, Arc<tokio::sync::Mutex<()>>>>,
    pages: Mutex<HashMap<TabId, PageMemo>>,
    next_request: AtomicU64,
}

/// The last URL seen on a tab, and whether its last snapshot was a
/// security challenge.
#[derive(Debug, Clone, Default)]
pub(crate) struct PageMemo {
    pub(crate) url: Option<String>,
    pub(crate) challenge: bool,
}

impl Actions {
    pub(crate) fn new() -> Self {
        // Gate ids stay unique across daemon restarts: start at the clock.
        let start = crate::time::unix_now_micros().max(1);
        Actions { locks: Mutex::default(), pages: Mutex::default(), next_request: AtomicU64::new(start) }
    }

    pub(crate) fn lock_for(&self, tab: TabId) -> Arc<tokio::sync::Mutex<()>> {
        self.locks.lock().unwrap_or_else(|p| p.into_inner()).entry(tab).or_default().clone()
    }

    fn pages(&self) -> std::sync::MutexGuard<'_, HashMap<TabId, PageMemo>> {
        self.pages.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn remember_url(&self, tab: TabId, url: &str) {
        self.pages().entry(tab).or_default().url = Some(url.to_string());
    }

    pub(crate) fn remember_challenge(&self, tab: TabId, challenge: bool) {
        self.pages().entry(tab).or_default().challenge = challenge;
    }

    pub(crate) fn page(&self, tab: TabId) -> PageMemo {
        self.pages().get(&tab).cloned().unwrap_or_default()
    }

    pub(crate) fn forget(&self, tab: TabId) {
        self.pages().remove(&tab);
        self.locks.lock().unwrap_or_else(|p| p.into_inner()).remove(&tab);
    }

    pub(crate) fn next_request(&self) -> u64 {
        self.next_request.fetch_add(1, Ordering::Relaxed)
    }
}

fn check_ref(r: &str) -> Result<(), WireError> {
    if is_valid_ref(r) {
        Ok(())
    } else {
        Err(WireError::new(ErrorCode::InvalidRequest, "ref must be an element ref like e12"))
    }
}

/// `STOPPED` while the person has pressed STOP or Pause in the popup, as
/// the connected extension last reported them (`shared::gate::refused_by_controls`).
fn check_controls(state: &AppState) -> Result<(), WireError> {
    let control = state.hub().connections().first().map(|c| c.control).unwrap_or_default();
    shared::gate::refused_by_controls(control).map_or(Ok(()), Err)
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
/// "Who denied an approval" above).
fn denied_by(e: &WireError) -> Option<DecidedBy> {
    e.denied_by.map(DecidedBy::from)
}

/// One action as the tool asked for it.
struct Plan {
    tool: &'static str,
    tab: TabId,
    target: Option<String>,
    action: Action,
    /// For `fill_form` fields: classified as `FillForm`.
    form_field: bool,
    /// The agent's stated intent (shown to the person with the summary).
    intent: Option<String>,
    /// For `TypeSecret`: the secret's binding as read before dispatch.
    secret: Option<SecretUse>,
}

/// A stored secret an action types: its name and site binding (read
/// without decrypting anything).
#[derive(Debug, Clone)]
struct SecretUse {
    name: String,
    /// Origin patterns; empty: bound to no site.
    sites: Vec<String>,
}

/// A value the agent supplied, checked ([`check_value`]).
enum Typed {
    Literal(String),
    Secret(SecretUse),
}

impl Typed {
    /// The action that types it, and the secret it names.
    fn into_action(self, submit: bool) -> (Action, Option<SecretUse>) {
        match self {
            Typed::Literal(text) => (Action::Type { text, submit }, None),
            Typed::Secret(s) => (Action::TypeSecret { name: s.name.clone(), submit }, Some(s)),
        }
    }
}

impl Plan {
    /// Whether a lost answer leaves the page in an unknown state.
    fn changes_state(&self) -> bool {
        !matches!(self.action, Action::Scroll { .. } | Action::Hover)
    }
}

/// An action that passed every check before dispatch.
struct Prepared {
    plan: Plan,
    element: Option<ResolvedElement>,
    url: String,
    class: Classification,
    decision: Decision,
    /// The person must answer (a secret bound to no site, a flow step's
    /// changed target).
    person_must_answer: bool,
    /// A flow step's changed target, for the approval window.
    changed: Option<shared::replay::ChangedTarget>,
    /// For the approval window and the audit row.
    summary: String,
    /// For log lines: every literal masked.
    log_summary: String,
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
            decision: Some("deny"),
            decided_by: Some(decided_by),
            outcome: e.code.as_str(),
        })
        .await;
}

/// A summary before the element is known (`click [e12]`): every literal
/// masked, since the target may be a sensitive field.
fn early_summary(plan: &Plan) -> String {
    let t = plan.target.as_deref().map(|r| SummaryTarget { role: "", name: "", element_ref: r });
    summarize(&plan.action, t.as_ref(), false, Literals::Masked)
}

/// Steps 3–7 of the pipeline for one action (the caller holds the tab lock).
async fn prepare(state: &AppState, audit: &Audit<'_>, plan: Plan) -> Result<Prepared, WireError> {
    prepare_with(state, audit, plan, &StepGate::default()).await
}

/// What a flow step adds to the pipeline (`super::flows`; the rules are
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
    fn proposal<'a>(&'a self, state: &'a AppState, step: &'a StepGate) -> Proposal<'a> {
        Proposal {
            policy: &state.config().policy,
            action: &self.action,
            typing: if self.form_field { Typing::FormField } else { Typing::Alone },
            target: self.target.as_deref(),
            secret: self.secret.as_ref().map(|s| SecretBinding { name: &s.name, sites: &s.sites }),
            floor: step.floor,
            changed: step.changed.as_ref(),
        }
    }
}

/// [`prepare`] with a flow step's additions: IO around the pure decision
/// (`shared::gate::before_resolve`, the `Resolve`, `before_dispatch`),
/// writing the audit row of a refusal.
async fn prepare_with(state: &AppState, audit: &Audit<'_>, plan: Plan, step: &StepGate) -> Result<Prepared, WireError> {
    let control = state.hub().connections().first().map(|c| c.control).unwrap_or_default();
    let known = state.actions().page(plan.tab).url;
    // The site's access (config and the person's popup choices, `read`
    // refusing what changes a page: `shared::policy::refusal`), then the
    // pure decision.
    let site = known.as_deref().map_or(Ok(()), |u| state.check_action_site(u, &plan.action));
    if let Err(e) =
        site.and_then(|()| shared::gate::before_resolve(&plan.proposal(state, step), control, known.as_deref()))
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
                Ok(_) => return Err(super::unexpected_answer()),
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

    if let Err(e) = state.check_action_site(&url, &plan.action) {
        record_refusal(audit, &plan, &summary, Some(&url), None, &e).await;
        return Err(e);
    }
    let decided = shared::gate::before_dispatch(&plan.proposal(state, step), element.as_ref(), &url);
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

fn no_such_secret(name: &str) -> WireError {
    WireError::new(
        ErrorCode::NotFound,
        format!("no secret named {name}; the person stores it with `chaperone secret set {name}`"),
    )
}

/// Runs a read of the secret store on the blocking pool; store errors go
/// to the log, the agent gets `INTERNAL`.
async fn with_store<T: Send + 'static>(
    state: &AppState,
    name: &str,
    read: impl FnOnce(&crate::secrets::SecretStore, &str) -> Result<Option<T>, crate::error::Error> + Send + 'static,
) -> Result<T, WireError> {
    let Some(store) = state.config().secrets.clone() else { return Err(no_such_secret(name)) };
    let owned = name.to_string();
    match tokio::task::spawn_blocking(move || read(&store, &owned)).await {
        Ok(Ok(Some(v))) => Ok(v),
        Ok(Ok(None)) => Err(no_such_secret(name)),
        Ok(Err(e)) => {
            tracing::error!(error = %e, name, "secret store read failed");
            Err(WireError::new(
                ErrorCode::Internal,
                format!("the secret {name} could not be read (see the bridge log)"),
            ))
        }
        Err(_) => Err(WireError::new(ErrorCode::Internal, "the secret store did not answer")),
    }
}

/// Refuses an agent's value before anything is resolved or dispatched: a
/// literal that is too long, a secret name of the wrong shape or unknown.
/// A secret's binding is read; its value is not (nothing is decrypted
/// before [`release_secret`]).
async fn check_value(state: &AppState, v: &ValueSource) -> Result<Typed, WireError> {
    match v {
        ValueSource::Literal(s) => {
            if s.chars().count() > MAX_TYPED_CHARS {
                return Err(WireError::new(
                    ErrorCode::InvalidRequest,
                    format!("text longer than {MAX_TYPED_CHARS} characters"),
                ));
            }
            Ok(Typed::Literal(s.clone()))
        }
        ValueSource::Secret(r) => {
            if !is_valid_secret_name(&r.secret) {
                return Err(WireError::new(
                    ErrorCode::InvalidRequest,
                    format!("a secret name is 1 to {MAX_SECRET_NAME_CHARS} of A-Z a-z 0-9 _ . -"),
                ));
            }
            let sites = with_store(state, &r.secret, |store, name| store.sites(name)).await?;
            Ok(Typed::Secret(SecretUse { name: r.secret.clone(), sites }))
        }
    }
}

/// A secret a flow run names: its name's shape and that it is stored
/// (nothing decrypted), before any step runs.
pub(crate) async fn check_secret(state: &AppState, name: &str) -> Result<(), WireError> {
    check_value(state, &ValueSource::Secret(shared::tools::SecretRef { secret: name.to_string() })).await.map(|_| ())
}

/// Answers the extension's `SecretRequest` for the `Act` with gate id
/// `request` on `connection` (see the module docs): the value in one
/// `BridgeToExt::Secret` frame, or a `SecretRefused`.
pub(crate) async fn release_secret(state: AppState, connection: u64, request: u64, origin: String) {
    let frame = match secret_for(&state, connection, request, &origin).await {
        Ok(value) => BridgeToExt::Secret { request, value: SecretText::new(value.expose().to_string()) },
        Err(error) => BridgeToExt::SecretRefused { request, error },
    };
    if !state.hub().send_to(connection, frame).await {
        tracing::debug!(connection, request, "the connection went away before its secret answer");
    }
}

async fn secret_for(
    state: &AppState,
    connection: u64,
    request: u64,
    origin: &str,
) -> Result<crate::secrets::SecretValue, WireError> {
    let refuse = |reason: &'static str, message: String| {
        tracing::warn!(connection, request, reason, "secret request refused");
        WireError::new(ErrorCode::PermissionDenied, message)
    };
    let grant = state.hub().claim_secret(connection, request).map_err(|why| {
        refuse(why.as_str(), "no action waiting on this connection may receive a secret under this id".into())
    })?;
    let SecretGrant { name, sites, origin: decided, .. } = grant;
    // Compared as origins (`shared::url::Origin`), and only between web
    // pages: a secret is never released for a page that is not http(s).
    let same = matches!((Origin::of(origin), Origin::of(&decided)), (Some(a), Some(b)) if a == b);
    if !same {
        return Err(refuse(
            "other_origin",
            format!("the page is no longer on {decided}, where typing the secret {name} was decided; nothing typed"),
        ));
    }
    // The binding as it is now (the person may have set the secret again
    // while the action waited), read with the value from the same row.
    let (value, now_sites) = with_store(state, &name, |store, name| store.get_with_sites(name)).await?;
    if !now_sites.is_empty() && !crate::secrets::site_allows(&now_sites, origin) {
        return Err(refuse("not_bound_here", format!("the secret {name} is not bound to {origin}; nothing typed")));
    }
    if now_sites.is_empty() && !sites.is_empty() {
        // Decided without asking the person, as a bound secret; unbound
        // now, it needs their answer.
        return Err(refuse(
            "unbound_since",
            format!("the secret {name} lost its site binding while the action waited; nothing typed, try again"),
        ));
    }
    tracing::info!(connection, request, name = %name, "secret released to the extension");
    Ok(value)
}

/// Step 7–8: the `Act`, its audit rows, and the URL check afterwards.
async fn execute(state: &AppState, audit: &Audit<'_>, p: &Prepared) -> Result<ActReport, WireError> {
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
    let action_row = |outcome| Row {
        tool: p.plan.tool,
        tab: Some(p.plan.tab),
        summary: &p.summary,
        url: Some(&p.url),
        risk: Some(p.class.risk),
        reasons: &p.class.reasons,
        decision: Some(p.decision.as_str()),
        decided_by: (p.decision == Decision::Allow).then_some(DecidedBy::Policy),
        outcome,
    };
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
    let grant = p.plan.secret.as_ref().map(|s| SecretGrant {
        request: gate.request,
        name: s.name.clone(),
        sites: s.sites.clone(),
        origin: gate.origin.clone(),
    });
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
        Ok(_) => Err(super::unexpected_answer()),
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
                audit
                    .record(Row {
                        tool: p.plan.tool,
                        tab: Some(p.plan.tab),
                        summary: &p.summary,
                        url: Some(&p.url),
                        risk: Some(report.risk),
                        reasons: &report.reasons,
                        decision: Some("approved"),
                        decided_by: Some(report.decided_by),
                        outcome: effect,
                    })
                    .await;
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
                audit
                    .record(Row {
                        tool: p.plan.tool,
                        tab: Some(p.plan.tab),
                        summary: &p.summary,
                        url: Some(&p.url),
                        risk: Some(p.class.risk),
                        reasons: &p.class.reasons,
                        decision: Some("denied"),
                        decided_by: Some(by),
                        outcome: e.code.as_str(),
                    })
                    .await;
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

fn effect_str(e: Effect) -> &'static str {
    match e {
        Effect::Navigated => "navigated",
        Effect::ValueChanged => "value_changed",
        Effect::DialogOpened => "dialog_opened",
        Effect::None => "none",
        Effect::Unknown => "unknown",
    }
}

/// `Clicked button "Delete account" [e12]`
fn done_line(p: &Prepared) -> String {
    // From the fully masked summary: the result never repeats a typed value.
    let mut s = p.log_summary.clone();
    let verb_end = s.find(' ').unwrap_or(s.len());
    let past = match &s[..verb_end] {
        "click" => "Clicked",
        "type" => "Typed",
        "select" => "Selected",
        "press" => "Pressed",
        "scroll" => "Scrolled",
        "hover" => "Hovered",
        "close" => "Closed",
        "upload" => "Uploaded",
        "download" => "Kept the download",
        other => other,
    }
    .to_string();
    s.replace_range(..verb_end, &past);
    s
}

fn effect_text(report: &ActReport) -> String {
    match report.effect {
        Effect::Navigated => {
            let mut s = "navigated to ".to_string();
            shared::snapshot::quote(&shared::redact::redact_url(&report.url), &mut s);
            s
        }
        Effect::ValueChanged => "the value changed".into(),
        Effect::DialogOpened => "a dialog opened".into(),
        Effect::None => "no visible change".into(),
        Effect::Unknown => {
            "effect unknown: look at the page (browser_snapshot) before doing anything else; do not repeat it blindly"
                .into()
        }
    }
}

fn report_json(p: &Prepared, report: &ActReport) -> Value {
    json!({
        "tab": p.plan.tab,
        "ref": p.plan.target,
        "effect": report.effect,
        "url": shared::redact::redact_url(&report.url),
        "risk": report.risk,
        "reasons": report.reasons,
        "decided_by": report.decided_by,
        "changes": report.changes.iter().map(|c| shared::redact::redact_text(c)).collect::<Vec<_>>(),
    })
}

fn render(p: &Prepared, report: &ActReport) -> CallToolResult {
    let mut text = format!("{}: {}", done_line(p), effect_text(report));
    for c in report.changes.iter().take(20) {
        text.push_str("\n- ");
        let mut c = shared::redact::redact_text(c);
        shared::limits::truncate_chars(&mut c, shared::limits::MAX_NAME_CHARS);
        text.push_str(&c);
    }
    if report.decided_by != DecidedBy::Policy {
        text.push_str(&format!("\n(approved: {})", report.decided_by.as_str()));
    }
    untrusted_result(&text, report_json(p, report))
}

/// Runs one action through the whole pipeline.
async fn run(state: &AppState, caller: &Caller, plan: Plan) -> Result<CallToolResult, WireError> {
    let lock = state.actions().lock_for(plan.tab);
    let _serial = lock.lock().await;
    let audit = Audit::new(state, caller);
    let prepared = prepare(state, &audit, plan).await?;
    let report = execute(state, &audit, &prepared).await?;
    Ok(render(&prepared, &report))
}

/// `browser_upload_file` once the files are read and staged
/// (`super::files`): `action` is the `Action::UploadFiles` naming them.
pub(crate) async fn upload(
    state: &AppState,
    caller: &Caller,
    tab: TabId,
    target: String,
    intent: Option<String>,
    action: Action,
) -> Result<CallToolResult, WireError> {
    check_ref(&target)?;
    let plan = Plan {
        tool: "browser_upload_file",
        tab,
        target: Some(target),
        action,
        form_field: false,
        intent,
        secret: None,
    };
    run(state, caller, plan).await
}

/// Whether the download an agent tab started may be kept
/// (`Action::KeepDownload`, `super::files`): STOP/Pause, site rules, the
/// classifier and the policy, then an `Act` the extension gates (asking the
/// person when either side says confirm). Not under the tab's lock: the
/// action that started the download may still hold it.
pub(crate) async fn keep_download(
    state: &AppState,
    caller: &Caller,
    tab: TabId,
    action: Action,
    asking: impl FnOnce(),
) -> Result<ActReport, WireError> {
    let audit = Audit::new(state, caller);
    let plan = Plan { tool: "download", tab, target: None, action, form_field: false, intent: None, secret: None };
    let prepared = prepare(state, &audit, plan).await?;
    if prepared.decision == shared::policy::Decision::Confirm {
        asking();
    }
    execute(state, &audit, &prepared).await
}

pub(crate) async fn click(
    state: &AppState,
    caller: &Caller,
    args: shared::tools::ClickArgs,
) -> Result<CallToolResult, WireError> {
    check_ref(&args.element_ref)?;
    let tab = state.require_agent_tab(caller.key, args.tab)?;
    let plan = Plan {
        tool: "browser_click",
        tab,
        target: Some(args.element_ref),
        action: Action::Click,
        form_field: false,
        intent: args.intent,
        secret: None,
    };
    run(state, caller, plan).await
}

pub(crate) async fn type_text(state: &AppState, caller: &Caller, args: TypeArgs) -> Result<CallToolResult, WireError> {
    check_ref(&args.element_ref)?;
    let tab = state.require_agent_tab(caller.key, args.tab)?;
    let (action, secret) = check_value(state, &args.text).await?.into_action(args.submit.unwrap_or(false));
    let plan = Plan {
        tool: "browser_type",
        tab,
        target: Some(args.element_ref),
        action,
        form_field: false,
        intent: None,
        secret,
    };
    run(state, caller, plan).await
}

pub(crate) async fn select_option(
    state: &AppState,
    caller: &Caller,
    args: SelectOptionArgs,
) -> Result<CallToolResult, WireError> {
    check_ref(&args.element_ref)?;
    if args.values.is_empty() || args.values.len() > MAX_OPTIONS {
        return Err(WireError::new(ErrorCode::InvalidRequest, format!("values must list 1 to {MAX_OPTIONS} options")));
    }
    let tab = state.require_agent_tab(caller.key, args.tab)?;
    let plan = Plan {
        tool: "browser_select_option",
        tab,
        target: Some(args.element_ref),
        action: Action::SelectOption { values: args.values },
        form_field: false,
        intent: None,
        secret: None,
    };
    run(state, caller, plan).await
}

pub(crate) async fn press_key(
    state: &AppState,
    caller: &Caller,
    args: PressKeyArgs,
) -> Result<CallToolResult, WireError> {
    if let Some(r) = &args.element_ref {
        check_ref(r)?;
    }
    let key = args.key.trim();
    if key.is_empty() || key.chars().count() > 40 || key.chars().any(char::is_control) {
        return Err(WireError::new(
            ErrorCode::InvalidRequest,
            "key must be a key name like Enter, Tab, ArrowDown or a",
        ));
    }
    let tab = state.require_agent_tab(caller.key, args.tab)?;
    let plan = Plan {
        tool: "browser_press_key",
        tab,
        target: args.element_ref,
        action: Action::PressKey { key: key.to_string() },
        form_field: false,
        intent: None,
        secret: None,
    };
    run(state, caller, plan).await
}

pub(crate) async fn scroll(state: &AppState, caller: &Caller, args: ScrollArgs) -> Result<CallToolResult, WireError> {
    if let Some(r) = &args.element_ref {
        check_ref(r)?;
    }
    let direction = match (args.direction, &args.element_ref) {
        (Some(ScrollArgDirection::Up), _) => ScrollDirection::Up,
        (Some(ScrollArgDirection::Down), _) => ScrollDirection::Down,
        (None, Some(_)) => ScrollDirection::IntoView,
        (None, None) => return Err(WireError::new(ErrorCode::InvalidRequest, "give a ref, a direction, or both")),
    };
    let tab = state.require_agent_tab(caller.key, args.tab)?;
    let plan = Plan {
        tool: "browser_scroll",
        tab,
        target: args.element_ref,
        action: Action::Scroll { direction },
        form_field: false,
        intent: None,
        secret: None,
    };
    run(state, caller, plan).await
}

pub(crate) async fn hover(state: &AppState, caller: &Caller, args: HoverArgs) -> Result<CallToolResult, WireError> {
    check_ref(&args.element_ref)?;
    let tab = state.require_agent_tab(caller.key, args.tab)?;
    let plan = Plan {
        tool: "browser_hover",
        tab,
        target: Some(args.element_ref),
        action: Action::Hover,
        form_field: false,
        intent: None,
        secret: None,
    };
    run(state, caller, plan).await
}

/// What a flow step does on its element (`super::flows`).
pub(crate) enum StepDo {
    Click,
    /// Replace the field's text: a literal or a stored secret.
    Fill(ValueSource),
    /// Choose the option with this label (or value).
    Select(String),
    PressKey(String),
}

/// A flow step that went through the pipeline.
pub(crate) struct StepRun {
    /// Masked (every literal `••••`).
    pub(crate) summary: String,
    pub(crate) risk: RiskLevel,
    pub(crate) reasons: Vec<String>,
    pub(crate) decision: Decision,
    pub(crate) report: ActReport,
}

/// A flow step that did not run, with what was decided before it stopped.
pub(crate) struct StepFailed {
    pub(crate) error: WireError,
    pub(crate) summary: Option<String>,
    pub(crate) class: Option<Classification>,
    pub(crate) decision: Option<Decision>,
}

impl From<WireError> for StepFailed {
    fn from(error: WireError) -> Self {
        StepFailed { error, summary: None, class: None, decision: None }
    }
}

/// One flow step on the element behind `target` (a ref `Locate` gave out;
/// `None`: the focused element), through the whole pipeline (steps 3–8,
/// audited as tool `flow_run`) with the step's additions ([`StepGate`]).
/// The caller holds the tab's lock for the whole run.
pub(crate) async fn flow_step(
    state: &AppState,
    caller: &Caller,
    tab: TabId,
    target: Option<String>,
    what: StepDo,
    step: &StepGate,
) -> Result<StepRun, StepFailed> {
    let (action, secret) = match what {
        StepDo::Click => (Action::Click, None),
        StepDo::Fill(v) => check_value(state, &v).await?.into_action(false),
        StepDo::Select(label) => (Action::SelectOption { values: vec![label] }, None),
        StepDo::PressKey(key) => (Action::PressKey { key }, None),
    };
    let plan = Plan { tool: "flow_run", tab, target, action, form_field: false, intent: None, secret };
    let audit = Audit::new(state, caller);
    let p = prepare_with(state, &audit, plan, step).await?;
    match execute(state, &audit, &p).await {
        Ok(report) => Ok(StepRun {
            summary: p.log_summary.clone(),
            risk: report.risk.max(p.class.risk),
            reasons: p.class.reasons.iter().chain(&report.reasons).fold(Vec::new(), |mut v, r| {
                if !v.contains(r) {
                    v.push(r.clone());
                }
                v
            }),
            decision: p.decision,
            report,
        }),
        Err(error) => Err(StepFailed {
            error,
            summary: Some(p.log_summary.clone()),
            class: Some(p.class.clone()),
            decision: Some(p.decision),
        }),
    }
}

/// `browser_fill_form`: every field checked first, then typed in order, each
/// behind its own gate (see the module docs).
pub(crate) async fn fill_form(
    state: &AppState,
    caller: &Caller,
    args: FillFormArgs,
) -> Result<CallToolResult, WireError> {
    if args.fields.is_empty() || args.fields.len() > MAX_FORM_FIELDS {
        return Err(WireError::new(
            ErrorCode::InvalidRequest,
            format!("fields must list 1 to {MAX_FORM_FIELDS} fields"),
        ));
    }
    for (i, f) in args.fields.iter().enumerate() {
        check_ref(&f.element_ref)?;
        if args.fields[..i].iter().any(|g| g.element_ref == f.element_ref) {
            return Err(WireError::new(ErrorCode::InvalidRequest, format!("{} appears twice", f.element_ref)));
        }
    }
    let tab = state.require_agent_tab(caller.key, args.tab)?;
    let mut texts = Vec::with_capacity(args.fields.len());
    for f in &args.fields {
        texts.push(check_value(state, &f.value).await?);
    }
    let lock = state.actions().lock_for(tab);
    let _serial = lock.lock().await;
    let audit = Audit::new(state, caller);
    let last = args.fields.len() - 1;
    let mut prepared = Vec::with_capacity(args.fields.len());
    for (i, (f, typed)) in args.fields.into_iter().zip(texts).enumerate() {
        let (action, secret) = typed.into_action(i == last && args.submit.unwrap_or(false));
        let plan = Plan {
            tool: "browser_fill_form",
            tab,
            target: Some(f.element_ref),
            action,
            form_field: true,
            intent: None,
            secret,
        };
        prepared.push(prepare(state, &audit, plan).await?);
    }
    let mut lines = Vec::new();
    let mut fields = Vec::new();
    let mut merged: Option<Classification> = None;
    for (i, p) in prepared.iter().enumerate() {
        let report = match check_controls(state) {
            Ok(()) => execute(state, &audit, p).await,
            Err(e) => Err(e),
        };
        let report = match report {
            Ok(r) => r,
            Err(e) if i > 0 => {
                return Err(WireError::new(e.code, format!("{} (the first {i} field(s) were filled)", e.message)));
            }
            Err(e) => return Err(e),
        };
        lines.push(format!("{}: {}", done_line(p), effect_text(&report)));
        fields.push(report_json(p, &report));
        let c = Classification { risk: report.risk, reasons: report.reasons.clone() };
        merged = Some(match merged {
            Some(m) => m.merge(c),
            None => c,
        });
    }
    let merged = merged.expect("at least one field");
    let url = fields.last().and_then(|f| f["url"].as_str()).unwrap_or_default().to_string();
    let text = lines.join("\n");
    Ok(untrusted_result(
        &text,
        json!({ "tab": tab, "url": url, "risk": merged.risk, "reasons": merged.reasons, "fields": fields }),
    ))
}

/// `browser_tabs close` of a tab the agent did not open: the whole gate
/// (STOP/Pause, site deny, `CloseTab { opened_by_agent: false }` is high
/// risk → by default the person approves in the extension's window), then
/// the extension removes the tab. Any tab id is accepted; a tab that does
/// not exist is `NOT_FOUND` (the agent learns nothing else about the
/// person's tabs: no listing, no URL or title in the result).
pub(crate) async fn close_other_tab(
    state: &AppState,
    caller: &Caller,
    tab: TabId,
) -> Result<CallToolResult, WireError> {
    let audit = Audit::new(state, caller);
    let plan = Plan {
        tool: "browser_tabs",
        tab,
        target: None,
        action: Action::CloseTab,
        form_field: false,
        intent: None,
        secret: None,
    };
    // The tab's URL, for the site policy, the classification and the audit.
    let listed =
        state.hub().call(Command::TabsList { tabs: vec![tab] }, Duration::from_millis(COMMAND_TIMEOUT_MS)).await;
    let url = match listed {
        // Another session's tab does not exist for this one
        // (`shared::sessions`): the same answer and row as a closed tab.
        Ok(CommandResult::Tabs { tabs }) => match tabs.into_iter().find(|t| t.id == tab) {
            Some(info) if !state.registry().is_agent_tab(tab) => info.url,
            _ => {
                let e = shared::sessions::no_such_tab(tab);
                audit
                    .record(Row {
                        tool: plan.tool,
                        tab: Some(tab),
                        summary: &early_summary(&plan),
                        outcome: e.code.as_str(),
                        ..Row::default()
                    })
                    .await;
                return Err(e);
            }
        },
        Ok(_) => return Err(super::unexpected_answer()),
        Err(e) => return Err(e),
    };
    // Only now, for the person's tab: never waits on another session's.
    let lock = state.actions().lock_for(tab);
    let _serial = lock.lock().await;
    state.actions().remember_url(tab, &url);
    let result = async {
        let prepared = prepare(state, &audit, plan).await?;
        execute(state, &audit, &prepared).await?;
        Ok::<_, WireError>(prepared)
    }
    .await;
    state.actions().forget(tab);
    let p = result?;
    let (_, current) = state.session_tabs(caller.key);
    let mut r = CallToolResult::success(vec![rmcp::model::ContentBlock::text(format!(
        "Closed tab {tab} (a tab you did not open; {}).",
        match p.decision {
            Decision::Allow => "allowed by the person's policy",
            _ => "the person approved it",
        }
    ))]);
    r.structured_content =
        Some(json!({ "closed": tab, "current": current, "risk": p.class.risk, "reasons": p.class.reasons }));
    Ok(r)
}

/// `browser_screenshot`: a PNG of the agent tab's visible area. Refused
/// with `SECURITY_CHALLENGE` when the bridge last saw a challenge on the
/// tab, and by the extension when the page shows one right now; a site the
/// person's policy denies → `PERMISSION_DENIED` (before dispatch when the
/// URL is known, and again on the URL the extension reports, in which case
/// the image is dropped). One audit row per call.
pub(crate) async fn screenshot(
    state: &AppState,
    caller: &Caller,
    args: shared::tools::ScreenshotArgs,
) -> Result<CallToolResult, WireError> {
    const TOOL: &str = "browser_screenshot";
    let tab = state.require_agent_tab(caller.key, args.tab)?;
    let lock = state.actions().lock_for(tab);
    let _serial = lock.lock().await;
    let audit = Audit::new(state, caller);
    let reasons = vec!["screenshots are read-only".to_string()];
    let row = |url: Option<&str>, decision: &'static str, outcome: &'static str| {
        let reasons = reasons.clone();
        let url = url.map(str::to_string);
        async move {
            audit
                .record(Row {
                    tool: TOOL,
                    tab: Some(tab),
                    summary: "screenshot",
                    url: url.as_deref(),
                    risk: Some(RiskLevel::Low),
                    reasons: &reasons,
                    decision: Some(decision),
                    decided_by: Some(DecidedBy::Policy),
                    outcome,
                })
                .await;
        }
    };
    let memo = state.actions().page(tab);
    if let Some(url) = &memo.url
        && let Err(e) = state.check_site(url)
    {
        row(Some(url), "deny", e.code.as_str()).await;
        return Err(e);
    }
    if memo.challenge {
        let e = challenge_error();
        row(memo.url.as_deref(), "deny", e.code.as_str()).await;
        return Err(e);
    }
    let answer = state.hub().call(Command::Screenshot { tab }, Duration::from_millis(COMMAND_TIMEOUT_MS)).await;
    let (png_base64, url) = match answer {
        Ok(CommandResult::Image { png_base64, url }) => (png_base64, url),
        Ok(_) => return Err(super::unexpected_answer()),
        Err(e) => {
            if e.code == ErrorCode::SecurityChallenge {
                state.actions().remember_challenge(tab, true);
            }
            let decision = if matches!(e.code, ErrorCode::SecurityChallenge | ErrorCode::PermissionDenied) {
                "deny"
            } else {
                "allow"
            };
            row(memo.url.as_deref(), decision, e.code.as_str()).await;
            return Err(e);
        }
    };
    if let Err(e) = state.url_seen(tab, &url) {
        row(Some(&url), "deny", e.code.as_str()).await;
        return Err(e);
    }
    row(Some(&url), "allow", "ok").await;
    let mut r = CallToolResult::success(vec![
        rmcp::model::ContentBlock::text(shared::untrusted::wrap_text(&format!(
            "Screenshot of tab {tab} (visible area, PNG). The image shows web content: untrusted data."
        ))),
        rmcp::model::ContentBlock::image(png_base64, "image/png"),
    ]);
    r.structured_content =
        Some(shared::untrusted::wrap(json!({ "tab": tab, "url": shared::redact::redact_url(&url) })));
    Ok(r)
}

fn challenge_error() -> WireError {
    WireError::new(
        ErrorCode::SecurityChallenge,
        "the page shows a security challenge (CAPTCHA or similar); no screenshot is taken. Ask the person to solve \
         it by hand, then take a new browser_snapshot",
    )
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
