//! The tool adapters: each tool's arguments checked and turned into one
//! [`Plan`] (or, for `browser_fill_form`, one a field) that goes through
//! the pipeline; a flow step, an upload and a download's keep decision
//! enter here too.

use std::time::Duration;

use rmcp::model::CallToolResult;
use serde_json::json;
use shared::action::{ActReport, Action, ScrollDirection};
use shared::error::{ErrorCode, WireError};
use shared::limits::COMMAND_TIMEOUT_MS;
use shared::policy::Decision;
use shared::protocol::{Command, CommandResult, TabId};
use shared::risk::{Classification, RiskLevel};
use shared::tools::{
    FillFormArgs, HoverArgs, MAX_FORM_FIELDS, MAX_OPTIONS, PressKeyArgs, ScrollArgDirection, ScrollArgs,
    SelectOptionArgs, TypeArgs, ValueSource, is_valid_ref,
};

use super::pipeline::{Plan, StepGate, check_controls, early_summary, execute, prepare, prepare_with, run};
use super::render::{done_line, effect_text, report_json};
use super::secrets::check_value;
use crate::server::AppState;
use crate::server::audit::{Audit, Caller, Row};
use crate::server::results::untrusted_result;

fn check_ref(r: &str) -> Result<(), WireError> {
    if is_valid_ref(r) {
        Ok(())
    } else {
        Err(WireError::new(ErrorCode::InvalidRequest, "ref must be an element ref like e12"))
    }
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
    let plan = Plan::new("browser_upload_file", tab, Some(target), action).with_intent(intent);
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
    let plan = Plan::new("download", tab, None, action);
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
    let plan = Plan::new("browser_click", tab, Some(args.element_ref), Action::Click).with_intent(args.intent);
    run(state, caller, plan).await
}

pub(crate) async fn type_text(state: &AppState, caller: &Caller, args: TypeArgs) -> Result<CallToolResult, WireError> {
    check_ref(&args.element_ref)?;
    let tab = state.require_agent_tab(caller.key, args.tab)?;
    let (action, secret) = check_value(state, &args.text).await?.into_action(args.submit.unwrap_or(false));
    let plan = Plan::new("browser_type", tab, Some(args.element_ref), action).with_secret(secret);
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
    let plan =
        Plan::new("browser_select_option", tab, Some(args.element_ref), Action::SelectOption { values: args.values });
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
    let plan = Plan::new("browser_press_key", tab, args.element_ref, Action::PressKey { key: key.to_string() });
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
    let plan = Plan::new("browser_scroll", tab, args.element_ref, Action::Scroll { direction });
    run(state, caller, plan).await
}

pub(crate) async fn hover(state: &AppState, caller: &Caller, args: HoverArgs) -> Result<CallToolResult, WireError> {
    check_ref(&args.element_ref)?;
    let tab = state.require_agent_tab(caller.key, args.tab)?;
    let plan = Plan::new("browser_hover", tab, Some(args.element_ref), Action::Hover);
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
    let plan = Plan::new("flow_run", tab, target, action).with_secret(secret);
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
        let plan = Plan::new("browser_fill_form", tab, Some(f.element_ref), action).with_secret(secret).form_field();
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
    let plan = Plan::new("browser_tabs", tab, None, Action::CloseTab);
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
        Ok(_) => return Err(crate::server::unexpected_answer()),
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
