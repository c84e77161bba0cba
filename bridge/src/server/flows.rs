//! The flow tools and the replay engine (docs/design.md, "Record me and
//! flows"; the pure rules are `shared::replay`).
//!
//! - `flow_list`: the person's flows (name, created, steps, parameters).
//! - `flow_show {name}`: the steps (action, target role and name, page) and
//!   the parameters (name, kind, whether it has a default); every typed
//!   value and every default is shown as `••••` (the person's text is not
//!   the agent's to read; option labels chosen in a `<select>` are shown).
//! - `flow_delete {name}`: asks the person in the extension's approval
//!   window (`Command::AskPerson`: always asked, YOLO or not; STOP and
//!   Pause refuse), then deletes. One audit row.
//! - `flow_run {name, params, secrets?, tab?}`: replays the flow in the
//!   agent's tab (the current one; a flow that starts with a navigation
//!   opens a tab when the agent has none).
//!
//! # One run
//!
//! Before anything is done: the name's shape, the flow, the parameters
//! (`shared::replay::bind`: unknown, missing, a secret given as text…) and
//! every secret's existence are checked; any refusal runs nothing. Then the
//! tab's action lock is held for the whole run (the agent's other actions
//! on that tab wait), and each step in order:
//!
//! 1. a navigation: the URL checked like `browser_navigate` (http/https,
//!    site rules), loaded, any challenge on the page it lands on handed to
//!    the person by the extension (the step waits), the landing URL checked
//!    again; one audit row (low risk, as every navigation);
//! 2. anything else: its element is looked for on the live page
//!    (`Command::Locate`, which first hands a challenge page to the person
//!    and then looks; role and name, then the locators) every
//!    [`STEP_POLL_MS`](shared::replay::STEP_POLL_MS) until it is there,
//!    at most [`STEP_WAIT_MS`](shared::replay::STEP_WAIT_MS) → `NOT_FOUND`
//!    with what was expected and what is there; the page must be on the
//!    origin the step was recorded on; then the step goes through the
//!    action pipeline (`super::actions::flow_step`: STOP/Pause, site rules,
//!    sensitive fields, live classification raised to the stored risk,
//!    policy, the extension's gate, a changed target always asked with
//!    both targets shown). A checkbox or radio already as recorded is
//!    skipped.
//!
//! The first failure stops the run, and so does a high-risk step whose
//! effect is unknown (`shared::replay::stops_after`); nothing is retried
//! (only the read-only `Locate` is repeated while the element has not
//! appeared). The result lists every step — outcome, risk, decision, who
//! decided, effect, how its element was found, a changed target, the error,
//! the URL after it, milliseconds — wrapped as untrusted web content (names
//! come from pages); it is an error result (`isError`, the failing step's
//! code) when a step failed.
//!
//! # Flows recorded elsewhere
//!
//! A navigation step's URL is stored as recorded and is not a parameter:
//! a step runs only on its recorded origin. To run a flow on another copy
//! of a site, export it, rewrite its URLs and import it under another name
//! (`chaperone flow export|import`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use rmcp::handler::server::tool::schema_for_type;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::{Value as Json, json};
use shared::audit::{AuditDecision, DecidedBy};
use shared::error::{ErrorCode, WireError};
use shared::flow::{Flow, Step, StepAction, Value};
use shared::limits::{COMMAND_TIMEOUT_MS, NAVIGATION_TIMEOUT_MS};
use shared::policy::Decision;
use shared::protocol::{Command, CommandResult, TabId};
use shared::redact;
use shared::replay::{Bound, ChangedTarget, Located, StepOutcome, StepReport, Via};
use shared::risk::RiskLevel;
use shared::sensitive::MASK;
use shared::tools::{FlowListArgs, FlowNameArgs, FlowRunArgs, SecretRef, ValueSource};

use super::AppState;
use super::actions::{self, StepDo, StepGate};
use super::audit::{Audit, Caller, Row};
use super::results::plain_result;
use crate::flows::FlowStore;

/// The four flow tools, for `mcp::tools`.
pub(crate) fn tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "flow_list",
            "List the flows the person recorded (or imported): name, when, how many steps and parameters.",
            schema_for_type::<FlowListArgs>(),
        ),
        Tool::new(
            "flow_show",
            "Show one flow: its steps (action, the element's role and name, the page) and its parameters (name, \
             kind, whether it has a default). Typed values and defaults are masked.",
            schema_for_type::<FlowNameArgs>(),
        ),
        Tool::new(
            "flow_run",
            "Replay a flow in your current tab, step by step: each element is found again on the live page (by \
             role and name, then its recorded locators), re-classified and gated like any action (consequential \
             steps wait for the person; a step whose element changed always asks). `params` gives the flow's \
             parameters as text; a sensitive field's parameter goes in `secrets` as {\"secret\": \"NAME\"}. \
             The first failure stops the run; the result lists every step.",
            schema_for_type::<FlowRunArgs>(),
        ),
        Tool::new(
            "flow_delete",
            "Delete a flow. It is the person's recording: they are asked in their browser first.",
            schema_for_type::<FlowNameArgs>(),
        ),
    ]
}

use super::parse_args as parse;

/// Runs a flow tool; `None` when `name` is not one.
pub(crate) async fn dispatch(
    state: &AppState,
    caller: &Caller,
    name: &str,
    args: JsonObject,
) -> Option<Result<CallToolResult, WireError>> {
    Some(match name {
        "flow_list" => match parse::<FlowListArgs>(args) {
            Ok(_) => flow_list(state).await,
            Err(e) => Err(e),
        },
        "flow_show" => match parse::<FlowNameArgs>(args) {
            Ok(a) => flow_show(state, &a.name).await,
            Err(e) => Err(e),
        },
        "flow_delete" => match parse::<FlowNameArgs>(args) {
            Ok(a) => flow_delete(state, caller, &a.name).await,
            Err(e) => Err(e),
        },
        "flow_run" => match parse::<FlowRunArgs>(args) {
            Ok(a) => flow_run(state, caller, a).await,
            Err(e) => Err(e),
        },
        _ => return None,
    })
}

fn check_name(name: &str) -> Result<(), WireError> {
    shared::flow::check_flow_name(name).map_err(|b| WireError::new(ErrorCode::InvalidRequest, b.message()))
}

/// A read or write of the flow store on the blocking pool; its errors go
/// to the log, the agent gets `INTERNAL`.
async fn with_store<T: Send + 'static>(
    state: &AppState,
    f: impl FnOnce(&FlowStore) -> Result<T, crate::error::Error> + Send + 'static,
) -> Result<T, WireError> {
    let Some(store) = state.config().flows.clone() else {
        return Err(WireError::internal("this bridge has no flow store"));
    };
    match tokio::task::spawn_blocking(move || f(&store)).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => {
            tracing::error!(error = %e, "flow store failed");
            Err(WireError::internal("the flow store could not be read or written (see the bridge log)"))
        }
        Err(_) => Err(WireError::internal("the flow store did not answer")),
    }
}

fn no_such_flow(name: &str) -> WireError {
    WireError::new(ErrorCode::NotFound, format!("no flow named {name:?}; flow_list lists them"))
}

async fn load(state: &AppState, name: &str) -> Result<Flow, WireError> {
    check_name(name)?;
    let owned = name.to_string();
    with_store(state, move |s| s.get(&owned)).await?.ok_or_else(|| no_such_flow(name))
}

async fn flow_list(state: &AppState) -> Result<CallToolResult, WireError> {
    let flows = with_store(state, |s| s.list()).await?;
    let mut text = if flows.is_empty() { "No flows recorded.\n".to_string() } else { String::new() };
    for f in &flows {
        text.push_str(&format!("- {:?}: {} steps, {} parameters, created {}\n", f.name, f.steps, f.params, f.created));
    }
    let list: Vec<Json> = flows
        .iter()
        .map(|f| json!({ "name": f.name, "created": f.created, "steps": f.steps, "params": f.params }))
        .collect();
    Ok(plain_result(text, json!({ "flows": list })))
}

/// A step as `flow_show` and `flow_run` name it: `click button "Place
/// order"`, `fill textbox "E-mail" with {param:email}`, `navigate to URL`.
/// Typed literals are masked.
fn step_line(step: &Step) -> String {
    let target = step.target.as_ref().map(|d| {
        let mut s = format!(" {} ", if d.role.is_empty() { "element" } else { &d.role });
        shared::snapshot::quote(&redact::redact_text(&d.name), &mut s);
        s
    });
    let target = target.as_deref().unwrap_or(" (the focused element)");
    let value = |v: &Value, masked: bool| match v {
        Value::Param(p) => format!("{{param:{p}}}"),
        Value::Literal(_) if masked => MASK.to_string(),
        Value::Literal(l) => {
            let mut s = String::new();
            shared::snapshot::quote(&redact::redact_text(l), &mut s);
            s
        }
    };
    match &step.action {
        StepAction::Navigate { url } => format!("navigate to {}", shared::snapshot::display_url(url)),
        StepAction::Click => format!("click{target}"),
        StepAction::Fill { value: v } => format!("fill{target} with {}", value(v, true)),
        StepAction::Select { value: v, .. } => format!("select {} in{target}", value(v, false)),
        StepAction::Check { checked } => format!("{}{target}", if *checked { "check" } else { "uncheck" }),
        StepAction::PressKey { key } => format!("press {key} on{target}"),
    }
}

async fn flow_show(state: &AppState, name: &str) -> Result<CallToolResult, WireError> {
    let flow = load(state, name).await?;
    let mut text = format!("Flow {:?} ({} steps), created {}\n", flow.name, flow.steps.len(), flow.created);
    text.push_str("Parameters:");
    if flow.params.is_empty() {
        text.push_str(" none");
    }
    text.push('\n');
    let mut params = Vec::new();
    for p in &flow.params {
        let kind = serde_json::to_value(p.kind).unwrap_or_default();
        let kind = kind.as_str().unwrap_or("text");
        let how = if kind == "secret" {
            "give it in secrets as {\"secret\": NAME}"
        } else if p.default.is_some() {
            "has a default"
        } else {
            "required"
        };
        text.push_str(&format!("- {} ({kind}): {how}\n", p.name));
        params.push(json!({
            "name": p.name,
            "kind": kind,
            "default": p.default.as_ref().map(|_| MASK),
            "required": p.default.is_none(),
        }));
    }
    text.push_str("Steps:\n");
    let mut steps = Vec::new();
    for (i, s) in flow.steps.iter().enumerate() {
        let line = step_line(s);
        text.push_str(&format!("{}. {line} (on {})\n", i + 1, shared::snapshot::display_url(&s.url)));
        steps.push(json!({
            "step": i + 1,
            "summary": line,
            "kind": serde_json::to_value(&s.action).ok().and_then(|v| v.get("kind").cloned()),
            "role": s.target.as_ref().map(|d| d.role.clone()),
            "name": s.target.as_ref().map(|d| redact::redact_text(&d.name)),
            "url": redact::redact_url(&s.url),
            "risk": s.risk,
        }));
    }
    // Names, titles and URLs came from pages.
    Ok(super::results::untrusted_result(
        &text,
        json!({ "name": flow.name, "created": flow.created, "params": params, "steps": steps }),
    ))
}

async fn flow_delete(state: &AppState, caller: &Caller, name: &str) -> Result<CallToolResult, WireError> {
    load(state, name).await?;
    let summary = format!("delete the flow {name:?}");
    let reasons = vec!["it deletes the person's own recording".to_string()];
    let gate = shared::action::Gate {
        request: state.actions().next_request(),
        risk: RiskLevel::High,
        reasons: reasons.clone(),
        decision: Decision::Confirm,
        policy: shared::policy::RiskDecisions::default(),
        summary: summary.clone(),
        timeout_secs: state.config().policy.approval_timeout_secs,
        origin: String::new(),
        person_must_answer: true,
        changed: None,
    };
    let wait = Duration::from_secs(u64::from(gate.timeout_secs)) + Duration::from_millis(COMMAND_TIMEOUT_MS);
    let answer = state.hub().call(Command::AskPerson { gate }, wait).await;
    let audit = Audit::new(state, caller);
    let row = |decision, decided_by, outcome| Row {
        tool: "flow_delete",
        summary: &summary,
        risk: Some(RiskLevel::High),
        reasons: &reasons,
        decision: Some(decision),
        decided_by,
        outcome,
        ..Row::default()
    };
    match answer {
        Ok(CommandResult::Answered { decided_by }) => {
            let owned = name.to_string();
            let deleted = with_store(state, move |s| s.delete(&owned)).await;
            let outcome = match &deleted {
                Ok(true) => "deleted",
                Ok(false) => ErrorCode::NotFound.as_str(),
                Err(e) => e.code.as_str(),
            };
            audit.record(row(AuditDecision::Approved, Some(decided_by), outcome)).await;
            if !deleted? {
                return Err(no_such_flow(name));
            }
            Ok(plain_result(
                format!("Deleted the flow {name:?} (the person approved)."),
                json!({ "deleted": name, "decided_by": decided_by }),
            ))
        }
        Ok(_) => Err(super::unexpected_answer()),
        Err(e) => {
            let by = e.denied_by.map(DecidedBy::from);
            audit.record(row(AuditDecision::Denied, by, e.code.as_str())).await;
            Err(e)
        }
    }
}

/// The tab a run uses: the agent's current (or named) tab; a flow that
/// starts with a navigation opens one when the agent has none.
async fn run_tab(state: &AppState, caller: &Caller, args_tab: Option<TabId>, flow: &Flow) -> Result<TabId, WireError> {
    if let Some(tab) = state.agent_tab(caller.key, args_tab)? {
        return Ok(tab);
    }
    if !matches!(flow.steps.first().map(|s| &s.action), Some(StepAction::Navigate { .. })) {
        return Err(WireError::new(
            ErrorCode::InvalidRequest,
            "no current tab, and the flow does not start with a navigation: open a tab with browser_tabs new",
        ));
    }
    match state.hub().call(Command::TabNew { url: None }, Duration::from_millis(COMMAND_TIMEOUT_MS)).await? {
        CommandResult::Tab { tab } => {
            state.own_tab(caller.key, tab.id);
            Ok(tab.id)
        }
        _ => Err(super::unexpected_answer()),
    }
}

/// Every secret a run names exists (and has a valid name), before any step.
async fn check_secrets(state: &AppState, secrets: &BTreeMap<String, SecretRef>) -> Result<(), WireError> {
    for r in secrets.values() {
        actions::check_secret(state, &r.secret).await?;
    }
    Ok(())
}

async fn flow_run(state: &AppState, caller: &Caller, args: FlowRunArgs) -> Result<CallToolResult, WireError> {
    let flow = load(state, &args.name).await?;
    let secrets: BTreeMap<String, String> = args.secrets.iter().map(|(k, v)| (k.clone(), v.secret.clone())).collect();
    let mut bound = shared::replay::bind(&flow, &args.params, &secrets)
        .map_err(|e| WireError::new(ErrorCode::InvalidRequest, e.message()))?;
    // Tokens of recorded URLs (`shared::record::person`): one path segment each.
    let in_urls = shared::record::person::bind_url_params(&flow, &args.params)
        .map_err(|message| WireError::new(ErrorCode::InvalidRequest, message))?;
    for (name, value) in in_urls {
        bound.entry(name).or_insert(Bound::Text(value));
    }
    check_secrets(state, &args.secrets).await?;
    let tab = run_tab(state, caller, args.tab, &flow).await?;
    let lock = state.actions().lock_for(tab);
    let _serial = lock.lock().await;
    tracing::info!(flow = %flow.name, tab, steps = flow.steps.len(), session = %caller.session, "flow run started");
    let started = Instant::now();
    let mut reports: Vec<StepReport> = Vec::with_capacity(flow.steps.len());
    let mut failure: Option<WireError> = None;
    for (i, step) in flow.steps.iter().enumerate() {
        if failure.is_some() {
            reports.push(not_run(i, step));
            continue;
        }
        let t0 = Instant::now();
        let mut report = run_step(state, caller, tab, step, &bound).await;
        report.step = i + 1;
        report.error = report.error.map(for_agent);
        report.ms = t0.elapsed().as_millis() as u64;
        if report.outcome == StepOutcome::Failed {
            failure = report.error.clone();
        }
        reports.push(report);
    }
    let total_ms = started.elapsed().as_millis() as u64;
    tracing::info!(
        flow = %flow.name,
        tab,
        total_ms,
        code = failure.as_ref().map_or("OK", |e| e.code.as_str()),
        "flow run ended"
    );
    Ok(render_run(&flow, tab, &reports, failure.as_ref(), total_ms))
}

/// An error as the agent sees it (as `results::error_result` shows one):
/// code, message and a challenge's redacted evidence, never who denied.
fn for_agent(e: WireError) -> WireError {
    let mut out = WireError::new(e.code, e.message);
    if let Some(mut c) = e.challenge {
        c.evidence = redact::redact_text(&c.evidence);
        out = out.with_challenge(c);
    }
    out
}

fn not_run(i: usize, step: &Step) -> StepReport {
    StepReport {
        step: i + 1,
        summary: step_line(step),
        outcome: StepOutcome::NotRun,
        risk: None,
        decision: None,
        decided_by: None,
        effect: None,
        reasons: Vec::new(),
        via: None,
        changed: None,
        error: None,
        url: String::new(),
        ms: 0,
    }
}

fn failed(step: &Step, error: WireError) -> StepReport {
    StepReport { outcome: StepOutcome::Failed, error: Some(error), ..not_run(0, step) }
}

/// One step (see the module docs); never panics, every failure is a
/// `Failed` report.
async fn run_step(
    state: &AppState,
    caller: &Caller,
    tab: TabId,
    step: &Step,
    bound: &BTreeMap<String, Bound>,
) -> StepReport {
    // STOP or Pause: no step runs, a navigation neither.
    if let Err(e) = actions::controls_allow(state) {
        return failed(step, e);
    }
    if let StepAction::Navigate { url } = &step.action {
        // A token of the recorded URL is a parameter: one path segment.
        let text = |name: &str| match bound.get(name) {
            Some(Bound::Text(t)) => Some(t.clone()),
            _ => None,
        };
        let url = match shared::record::person::fill_url(url, text) {
            Ok(url) => url,
            Err(shared::record::person::FillUrlError::Missing(p)) => {
                return failed(
                    step,
                    WireError::new(ErrorCode::InvalidRequest, format!("no value for the parameter {p}")),
                );
            }
            Err(shared::record::person::FillUrlError::BadValue(p)) => {
                let why = format!("the parameter {p} is one path segment: letters, digits, - _ . ~");
                return failed(step, WireError::new(ErrorCode::InvalidRequest, why));
            }
        };
        return navigate(state, caller, tab, step, &url).await;
    }
    let mut what = match &step.action {
        StepAction::Navigate { .. } => unreachable!("handled above"),
        StepAction::Click | StepAction::Check { .. } => StepDo::Click,
        StepAction::Fill { value } => match value_of(value, bound) {
            Ok(Bound::Text(t)) => StepDo::Fill(ValueSource::Literal(t)),
            Ok(Bound::Secret(n)) => StepDo::Fill(ValueSource::Secret(SecretRef { secret: n })),
            Err(e) => return failed(step, e),
        },
        StepAction::Select { value, .. } => match value_of(value, bound) {
            Ok(Bound::Text(t)) => StepDo::Select(t),
            Ok(Bound::Secret(_)) => {
                return failed(step, WireError::new(ErrorCode::InvalidRequest, "a secret cannot choose an option"));
            }
            Err(e) => return failed(step, e),
        },
        StepAction::PressKey { key } => StepDo::PressKey(key.clone()),
    };
    let mut report = failed(step, WireError::internal("not run"));
    let (target, changed) = match &step.target {
        None if matches!(step.action, StepAction::PressKey { .. }) => (None, None),
        None => {
            return failed(
                step,
                WireError::new(ErrorCode::InvalidRequest, "the flow is malformed: this step has no element"),
            );
        }
        Some(d) => match locate(state, tab, d).await {
            Ok(Hit { element_ref, element, via, checked, changed }) => {
                report.via = Some(match via {
                    Via::RoleName => "role and name".into(),
                    Via::Locator(i) => d.locators.get(i).map(shared::replay::describe_locator).unwrap_or_default(),
                });
                report.url = redact::redact_url(&element.url);
                if !shared::replay::same_origin(&step.url, &element.url) {
                    let recorded = shared::url::Origin::wire(&step.url);
                    let live = shared::url::Origin::wire(&element.url);
                    report.error = Some(WireError::new(
                        ErrorCode::NotFound,
                        format!("this step was recorded on {recorded}; the tab is on {live}: the flow stops"),
                    ));
                    return report;
                }
                // A Recorder `change` on an element the file did not say
                // was a `<select>`: the live element decides.
                if let StepDo::Fill(ValueSource::Literal(t)) = &what
                    && shared::replay::fill_chooses(&element.facts)
                {
                    what = StepDo::Select(t.clone());
                }
                if let (StepAction::Check { checked: want }, Some(now)) = (&step.action, checked)
                    && *want == now
                {
                    report.outcome = StepOutcome::Skipped;
                    report.error = None;
                    report.summary = step_line(step);
                    return report;
                }
                (Some(element_ref), changed)
            }
            Err(e) => return failed(step, e),
        },
    };
    report.changed = changed.clone();
    let gate = StepGate { floor: step.risk, changed };
    match actions::flow_step(state, caller, tab, target, what, &gate).await {
        Ok(run) => {
            report.summary = run.summary;
            report.risk = Some(run.risk);
            report.decision = Some(run.decision.as_str().to_string());
            report.decided_by = Some(run.report.decided_by);
            report.effect = Some(run.report.effect);
            report.reasons = run.reasons;
            report.url = redact::redact_url(&run.report.url);
            report.error = None;
            report.outcome = StepOutcome::Done;
            if shared::replay::stops_after(run.risk, run.report.effect) {
                report.outcome = StepOutcome::Failed;
                report.error = Some(WireError::new(
                    ErrorCode::EffectUnknown,
                    "a high-risk step ran and its effect is unknown: the flow stops here. Look at the page \
                     (browser_snapshot) before doing anything else; nothing is retried",
                ));
            }
            report
        }
        Err(f) => {
            if let Some(s) = f.summary {
                report.summary = s;
            }
            report.risk = f.class.as_ref().map(|c| c.risk);
            report.reasons = f.class.map(|c| c.reasons).unwrap_or_default();
            report.decision = f.decision.map(|d| d.as_str().to_string());
            report.error = Some(f.error);
            report
        }
    }
}

fn value_of(v: &Value, bound: &BTreeMap<String, Bound>) -> Result<Bound, WireError> {
    match v {
        Value::Literal(t) => Ok(Bound::Text(t.clone())),
        Value::Param(p) => bound
            .get(p)
            .cloned()
            .ok_or_else(|| WireError::new(ErrorCode::InvalidRequest, format!("no value for the parameter {p}"))),
    }
}

/// A step's element, found.
struct Hit {
    element_ref: String,
    element: Box<shared::action::ResolvedElement>,
    via: Via,
    checked: Option<bool>,
    changed: Option<ChangedTarget>,
}

/// Looks for the step's element until it is there or
/// [`shared::replay::STEP_WAIT_MS`] have passed.
async fn locate(state: &AppState, tab: TabId, d: &shared::flow::Descriptor) -> Result<Hit, WireError> {
    let deadline = Instant::now() + Duration::from_millis(shared::replay::STEP_WAIT_MS);
    // A hand-off on a challenge page may hold the first look.
    let wait = Duration::from_millis(COMMAND_TIMEOUT_MS) + state.human_wait();
    loop {
        let answer = state.hub().call(Command::Locate { tab, target: d.clone() }, wait).await?;
        let CommandResult::Located { located } = answer else {
            return Err(super::unexpected_answer());
        };
        match located {
            Located::Found { element_ref, element, via, checked, changed } => {
                state.url_seen(tab, &element.url)?;
                return Ok(Hit { element_ref, element, via, checked, changed });
            }
            Located::Missing { miss, seen } => {
                if Instant::now() >= deadline {
                    let mut message = shared::replay::missing_message(d, miss, &seen);
                    message.push_str(&format!(" (on {})", shared::snapshot::display_url(&seen.url)));
                    let mut message = redact::redact_text(&message);
                    shared::limits::truncate_chars(&mut message, shared::limits::MAX_ERROR_MESSAGE_CHARS);
                    return Err(WireError::new(ErrorCode::NotFound, message));
                }
                tokio::time::sleep(Duration::from_millis(shared::replay::STEP_POLL_MS)).await;
            }
        }
    }
}

/// A navigation step, checked like `browser_navigate`.
async fn navigate(state: &AppState, caller: &Caller, tab: TabId, step: &Step, url: &str) -> StepReport {
    let mut report = failed(step, WireError::internal("not run"));
    report.risk = Some(RiskLevel::Low);
    let url = match shared::url::validate_navigation_url(url).and_then(|u| state.check_site(&u).map(|()| u)) {
        Ok(u) => u,
        Err(e) => {
            nav_audit(state, caller, tab, url, Some(&e)).await;
            report.decision = Some("deny".into());
            report.error = Some(e);
            return report;
        }
    };
    // Judged like `browser_navigate`: a URL that acts asks or is refused.
    let verdict = shared::navigation::judge(&state.config().policy, &url);
    report.risk = Some(verdict.class.risk);
    let decided_by = match super::navigate::clear(state, caller, "flow_run", Some(tab), &url).await {
        Ok(by) => by,
        Err(e) => {
            report.decision = Some(if e.code == ErrorCode::PermissionDenied { "deny" } else { "confirm" }.into());
            report.decided_by = e.denied_by.map(DecidedBy::from).or(Some(DecidedBy::Policy));
            report.error = Some(e);
            return report;
        }
    };
    let wait = Duration::from_millis(NAVIGATION_TIMEOUT_MS) + state.human_wait();
    let answer = state.hub().call(Command::Navigate { tab, url: url.clone() }, wait).await;
    let landed = match answer {
        Ok(CommandResult::Tab { tab: info }) => state.url_seen(tab, &info.url).map(|()| info.url),
        Ok(_) => Err(super::unexpected_answer()),
        Err(e) => Err(e),
    };
    match landed {
        Ok(now) => {
            nav_audit(state, caller, tab, &now, None).await;
            report.outcome = StepOutcome::Done;
            report.decision = Some(if verdict.decision == Decision::Confirm { "confirm" } else { "allow" }.into());
            report.decided_by = Some(decided_by);
            report.effect = Some(shared::action::Effect::Navigated);
            report.url = redact::redact_url(&now);
            report.error = None;
        }
        Err(e) => {
            nav_audit(state, caller, tab, &url, Some(&e)).await;
            report.decision = Some(if e.code == ErrorCode::PermissionDenied { "deny" } else { "allow" }.into());
            report.error = Some(e);
        }
    }
    report
}

const NAV_REASON: &str = "navigation and tab actions are low risk";

/// The audit row of a flow's navigation step: `error` is `None` when it
/// loaded.
async fn nav_audit(state: &AppState, caller: &Caller, tab: TabId, url: &str, error: Option<&WireError>) {
    let class = shared::navigation::judge(&state.config().policy, url).class;
    let reasons = if class.reasons.is_empty() { vec![NAV_REASON.to_string()] } else { class.reasons.clone() };
    let denied = error.is_some_and(|e| e.code == ErrorCode::PermissionDenied);
    Audit::new(state, caller)
        .record(Row {
            tool: "flow_run",
            tab: Some(tab),
            summary: "navigate",
            url: Some(url),
            risk: Some(class.risk),
            reasons: &reasons,
            decision: Some(if denied { AuditDecision::Deny } else { AuditDecision::Allow }),
            decided_by: Some(DecidedBy::Policy),
            outcome: error.map_or("ok", |e| e.code.as_str()),
        })
        .await;
}

fn outcome_word(o: StepOutcome) -> &'static str {
    match o {
        StepOutcome::Done => "done",
        StepOutcome::Skipped => "skipped (already as recorded)",
        StepOutcome::Failed => "FAILED",
        StepOutcome::NotRun => "not run",
    }
}

fn changed_line(c: &ChangedTarget) -> String {
    format!("changed target: recorded {}, now {} (found by {})", c.recorded.line(), c.live.line(), c.via)
}

/// The run's result: one line per step, every step in the structured data.
fn render_run(
    flow: &Flow,
    tab: TabId,
    reports: &[StepReport],
    failure: Option<&WireError>,
    total_ms: u64,
) -> CallToolResult {
    let n = reports.len();
    let mut text = match failure {
        None => format!("Flow {:?} ran all {n} steps in tab {tab} ({total_ms} ms).\n", flow.name),
        Some(e) => {
            let at = reports.iter().position(|r| r.outcome == StepOutcome::Failed).map_or(0, |i| i + 1);
            format!("{}: flow {:?} stopped at step {at} of {n}: {}\n", e.code, flow.name, e.message)
        }
    };
    for r in reports {
        let mut line = format!("{}. {} — {}", r.step, r.summary, outcome_word(r.outcome));
        if let Some(e) = r.effect {
            line.push_str(&format!(
                ", effect {}",
                serde_json::to_value(e).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()
            ));
        }
        if let Some(risk) = r.risk {
            line.push_str(&format!(", risk {}", risk.as_str()));
        }
        if let Some(by) = r.decided_by
            && by != DecidedBy::Policy
        {
            line.push_str(&format!(", decided by {}", by.as_str()));
        }
        if r.outcome != StepOutcome::NotRun {
            line.push_str(&format!(" ({} ms)", r.ms));
        }
        if let Some(c) = &r.changed {
            line.push_str(&format!("; {}", changed_line(c)));
        }
        if let Some(e) = &r.error {
            line.push_str(&format!("; {}: {}", e.code, e.message));
        }
        text.push_str(&line);
        text.push('\n');
    }
    let data = json!({
        "flow": flow.name,
        "tab": tab,
        "ok": failure.is_none(),
        "error": failure.map(|e| json!({ "code": e.code.as_str(), "message": e.message })),
        "total_ms": total_ms,
        "steps": reports,
    });
    let mut r = super::results::untrusted_result(&text, data);
    if failure.is_some() {
        // An error result that still lists every step.
        r.is_error = Some(true);
    }
    r
}
