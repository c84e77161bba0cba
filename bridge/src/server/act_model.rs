//! `browser_act` and `browser_run_goal`: a local model picks which of the
//! page's elements the caller means (README, "Letting a local model pick
//! elements"; the rules are `shared::model`, the client `crate::model`).
//!
//! `browser_act`, in order:
//! 1. no `[model]` section → `INVALID_REQUEST` saying how to set one up;
//!    the arguments the action needs (`text`, `values`, `key`) checked;
//! 2. the tab (the caller's own), a fresh interactive snapshot of it
//!    (its URL checked against the site rules like any snapshot's);
//! 3. candidates and the ranker (`shared::model::candidates`): at most 30;
//! 4. up to `max_calls_per_action` calls, each first counted against the
//!    session's budget (`BUDGET_EXCEEDED`, nothing sent); a server down or
//!    slow is `MODEL_UNAVAILABLE` within `timeout_secs`; an answer that is
//!    not the schema's JSON or names a ref outside the list is no decision
//!    (a second call, then `NOT_FOUND` saying why); `"none"` is
//!    `NOT_FOUND` with the three closest candidates;
//! 5. the picked ref goes to `actions::click` (or `type_text`,
//!    `select_option`, `hover`, `press_key`) exactly as if the agent had
//!    named it: resolution, classification, policy, the person's approval.
//!    The action type, the text, the values and the key are the caller's;
//!    the model chose only the ref.
//!
//! `browser_run_goal` repeats: snapshot, candidates ranked against the
//! goal, one call constrained to `{op, ref, input}`, the step run through
//! the same entry points with the value of the caller's input *key* filled
//! in by code. A refusal, an error or a spent budget ends the run, and the
//! error lists the steps done. Each step is a line of the traces file
//! (`shared::model::trace`): masked label, op, key, outcome.

use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};
use shared::error::{ErrorCode, WireError};
use shared::limits::COMMAND_TIMEOUT_MS;
use shared::model::answer::{BadAnswer, GoalStep, Pick, check_act, check_goal};
use shared::model::candidates::{ActKind, Candidate, candidates, line, rank};
use shared::model::prompt::{act_request, goal_request};
use shared::model::trace::{TraceLine, mask_label};
use shared::model::{DEFAULT_GOAL_STEPS, MAX_GOAL_STEPS};
use shared::protocol::{Command, CommandResult, TabId};
use shared::snapshot::SnapshotRequest;
use shared::tools::{
    ActAction, ActArgs, ClickArgs, HoverArgs, PressKeyArgs, RunGoalArgs, SelectOptionArgs, TypeArgs, ValueSource,
};

use super::AppState;
use super::actions;
use super::audit::Caller;
use crate::model::ModelTier;

/// Characters of snapshot asked for: enough for the actionable elements of
/// a very long page.
const SNAPSHOT_CHARS: usize = 400_000;

const SETUP: &str = "no local model is set up: add a [model] section to HOME/config.toml \
    (provider = \"ollama\" or \"openai\", url = \"http://127.0.0.1:11434\", name = \"qwen2.5:3b\") \
    and restart the daemon; or act by ref with browser_click and the others";

fn tier(state: &AppState) -> Result<std::sync::Arc<ModelTier>, WireError> {
    state.config().model.clone().ok_or_else(|| WireError::new(ErrorCode::InvalidRequest, SETUP))
}

/// The tab's actionable elements, its URL checked.
async fn page_candidates(state: &AppState, tab: TabId) -> Result<Vec<Candidate>, WireError> {
    let request = SnapshotRequest { scope: None, interactive_only: true, max_chars: SNAPSHOT_CHARS, page: 1 };
    let CommandResult::Snapshot { snapshot } =
        state.hub().call(Command::Snapshot { tab, request }, Duration::from_millis(COMMAND_TIMEOUT_MS)).await?
    else {
        return Err(crate::server::unexpected_answer());
    };
    state.actions().remember_challenge(tab, snapshot.challenge.is_some());
    state.url_seen(tab, &snapshot.url)?;
    if snapshot.challenge.is_some() {
        return Err(WireError::new(
            ErrorCode::SecurityChallenge,
            "the page shows a security challenge; hand it to the person with browser_handoff",
        ));
    }
    Ok(candidates(&snapshot.nodes))
}

fn kind_of(a: ActAction) -> ActKind {
    match a {
        ActAction::Click => ActKind::Click,
        ActAction::Type => ActKind::Type,
        ActAction::SelectOption => ActKind::SelectOption,
        ActAction::Hover => ActKind::Hover,
        ActAction::PressKey => ActKind::PressKey,
    }
}

fn closest(cands: &[Candidate]) -> String {
    let lines: Vec<String> = cands.iter().take(3).map(line).collect();
    if lines.is_empty() { "none".into() } else { lines.join("; ") }
}

/// Checks that `args` carry what `action` needs, and nothing it does not.
fn check_act_args(args: &ActArgs) -> Result<(), WireError> {
    let need = |ok: bool, what: &str| {
        if ok { Ok(()) } else { Err(WireError::new(ErrorCode::InvalidRequest, what.to_string())) }
    };
    need(!args.intent.trim().is_empty(), "intent must say which element you mean")?;
    match args.action {
        ActAction::Type => need(args.text.is_some(), "type needs text (a string or {\"secret\": NAME})")?,
        ActAction::SelectOption => {
            need(args.values.as_ref().is_some_and(|v| !v.is_empty()), "select_option needs values")?
        }
        ActAction::PressKey => need(args.key.is_some(), "press_key needs key")?,
        ActAction::Click | ActAction::Hover => {}
    }
    need(args.text.is_none() || args.action == ActAction::Type, "text is only for action type")?;
    need(args.values.is_none() || args.action == ActAction::SelectOption, "values are only for select_option")?;
    need(args.key.is_none() || args.action == ActAction::PressKey, "key is only for press_key")
}

pub(crate) async fn browser_act(state: &AppState, caller: &Caller, args: ActArgs) -> Result<CallToolResult, WireError> {
    let tier = tier(state)?;
    check_act_args(&args)?;
    actions::controls_allow(state)?;
    let tab = state.require_agent_tab(caller.key, args.tab)?;
    let kind = kind_of(args.action);
    let ranked = rank(&args.intent, kind, page_candidates(state, tab).await?);
    if ranked.is_empty() {
        return Err(WireError::new(ErrorCode::NotFound, "the page has no element to act on"));
    }
    let refs: Vec<String> = ranked.iter().map(|c| c.element_ref.clone()).collect();
    let request = act_request(kind, &args.intent, &ranked);
    let mut last_bad = BadAnswer::NotJson;
    let mut picked = None;
    for _ in 0..tier.calls_per_action() {
        tier.spend(caller.key)?;
        let reply = tier.ask(&request).await?;
        match check_act(&reply.text, &refs) {
            Ok(Pick::Ref(r)) => {
                picked = Some((r, reply.millis));
                break;
            }
            Ok(Pick::None) => {
                return Err(WireError::new(
                    ErrorCode::NotFound,
                    format!("the model found no element for that intent; closest: {}", closest(&ranked)),
                ));
            }
            Err(bad) => {
                tracing::info!(reason = bad.describe(), "model gave no decision");
                last_bad = bad;
            }
        }
    }
    let Some((r, millis)) = picked else {
        return Err(WireError::new(
            ErrorCode::NotFound,
            format!("no decision: {}; nothing was done. Closest: {}", last_bad.describe(), closest(&ranked)),
        ));
    };
    let role = ranked.iter().find(|c| c.element_ref == r).map(|c| c.role.clone()).unwrap_or_default();
    let tab = Some(tab);
    let intent = Some(args.intent.clone());
    let result = match args.action {
        ActAction::Click => actions::click(state, caller, ClickArgs { element_ref: r.clone(), intent, tab }).await,
        ActAction::Type => {
            let text = args.text.unwrap_or(ValueSource::Literal(String::new()));
            actions::type_text(state, caller, TypeArgs { element_ref: r.clone(), text, submit: None, tab }).await
        }
        ActAction::SelectOption => {
            let values = args.values.unwrap_or_default();
            actions::select_option(state, caller, SelectOptionArgs { element_ref: r.clone(), values, tab }).await
        }
        ActAction::Hover => actions::hover(state, caller, HoverArgs { element_ref: r.clone(), tab }).await,
        ActAction::PressKey => {
            let key = args.key.unwrap_or_default();
            actions::press_key(state, caller, PressKeyArgs { key, element_ref: Some(r.clone()), tab }).await
        }
    }?;
    Ok(resolved(result, &tier.section.name, millis, &r, &role))
}

/// `result` with a first line saying the model resolved the element.
fn resolved(mut result: CallToolResult, model: &str, millis: u64, r: &str, role: &str) -> CallToolResult {
    let role: String = role.chars().filter(|c| c.is_ascii_alphanumeric()).take(24).collect();
    let note = format!("Element {r} ({role}) resolved by the local model {model} in {millis} ms.");
    result.content.insert(0, ContentBlock::text(note));
    let by = json!({ "model": model, "millis": millis, "ref": r, "role": role });
    match &mut result.structured_content {
        Some(Value::Object(o)) => {
            o.insert("resolvedBy".into(), by);
        }
        other => *other = Some(json!({ "resolvedBy": by })),
    }
    result
}

/// One step's outcome for the steps-so-far list.
fn describe(step: &GoalStep) -> String {
    match step {
        GoalStep::Click(r) => format!("click {r}"),
        GoalStep::Type { element_ref, key } => format!("type {key} into {element_ref}"),
        GoalStep::SelectOption { element_ref, key } => format!("select {key} in {element_ref}"),
        GoalStep::PressEnter(r) => format!("press Enter on {r}"),
        GoalStep::Done => "done".into(),
    }
}

pub(crate) async fn browser_run_goal(
    state: &AppState,
    caller: &Caller,
    args: RunGoalArgs,
) -> Result<CallToolResult, WireError> {
    let tier = tier(state)?;
    if args.goal.trim().is_empty() {
        return Err(WireError::new(ErrorCode::InvalidRequest, "goal must say what to do"));
    }
    for key in args.inputs.keys() {
        if !shared::names::is_valid_secret_name(key) {
            return Err(WireError::new(ErrorCode::InvalidRequest, "input keys must match [A-Za-z0-9_.-]{1,64}"));
        }
    }
    let max_steps = args.max_steps.unwrap_or(DEFAULT_GOAL_STEPS);
    if !(1..=MAX_GOAL_STEPS).contains(&max_steps) {
        return Err(WireError::new(
            ErrorCode::InvalidRequest,
            format!("max_steps must be between 1 and {MAX_GOAL_STEPS}"),
        ));
    }
    let keys: Vec<String> = args.inputs.keys().cloned().collect();
    let tab = state.require_agent_tab(caller.key, args.tab)?;
    let mut done: Vec<String> = Vec::new();
    let so_far = |done: &[String]| if done.is_empty() { "none".to_string() } else { done.join("; ") };
    for _ in 0..max_steps {
        let outcome = goal_step(state, caller, &tier, &args, &keys, tab, &done).await;
        match outcome {
            Ok(None) => {
                let text = format!("Goal finished after {} steps: {}.", done.len(), so_far(&done));
                return Ok(super::results::plain_result(text, json!({ "steps": done, "finished": true })));
            }
            Ok(Some(step)) => done.push(step),
            Err(e) => {
                return Err(
                    WireError::new(e.code, format!("{} (steps done: {})", e.message, so_far(&done))).with_denied(e)
                );
            }
        }
    }
    Err(WireError::new(
        ErrorCode::BudgetExceeded,
        format!("the goal was not done after {max_steps} steps (steps done: {})", so_far(&done)),
    ))
}

trait WithDenied {
    fn with_denied(self, from: WireError) -> Self;
}

impl WithDenied for WireError {
    fn with_denied(mut self, from: WireError) -> Self {
        self.denied_by = from.denied_by;
        self.challenge = from.challenge;
        self
    }
}

/// One step: `Ok(None)` when the model says done, `Ok(Some(description))`
/// when a step ran.
async fn goal_step(
    state: &AppState,
    caller: &Caller,
    tier: &ModelTier,
    args: &RunGoalArgs,
    keys: &[String],
    tab: TabId,
    done: &[String],
) -> Result<Option<String>, WireError> {
    actions::controls_allow(state)?;
    let ranked = rank(&args.goal, ActKind::Hover, page_candidates(state, tab).await?);
    let refs: Vec<String> = ranked.iter().map(|c| c.element_ref.clone()).collect();
    let request = goal_request(&args.goal, keys, done, &ranked);
    let mut step = Err(BadAnswer::NotJson);
    for _ in 0..tier.calls_per_action() {
        tier.spend(caller.key)?;
        let reply = tier.ask(&request).await?;
        step = check_goal(&reply.text, &refs, keys);
        if step.is_ok() {
            break;
        }
    }
    let trace = |op: &str, r: Option<&str>, key: Option<&str>, outcome: &str| {
        let c = r.and_then(|r| ranked.iter().find(|c| c.element_ref == r));
        tier.trace(&TraceLine {
            at: crate::time::unix_now(),
            op: op.into(),
            role: c.map(|c| c.role.clone()),
            label: c.map(|c| mask_label(&c.name)),
            input: key.map(str::to_string),
            outcome: outcome.into(),
        });
    };
    let step = match step {
        Ok(s) => s,
        Err(bad) => {
            trace("none", None, None, "NO_DECISION");
            return Err(WireError::new(
                ErrorCode::NotFound,
                format!("no decision: {}; nothing more was done", bad.describe()),
            ));
        }
    };
    let value = |key: &str| args.inputs.get(key).cloned().unwrap_or(ValueSource::Literal(String::new()));
    let t = Some(tab);
    let intent = Some(format!("goal: {}", args.goal.chars().take(200).collect::<String>()));
    let (op, r, key, result) = match &step {
        GoalStep::Done => {
            trace("done", None, None, "ok");
            return Ok(None);
        }
        GoalStep::Click(r) => (
            "click",
            r,
            None,
            actions::click(state, caller, ClickArgs { element_ref: r.clone(), intent, tab: t }).await,
        ),
        GoalStep::Type { element_ref, key } => {
            let a = TypeArgs { element_ref: element_ref.clone(), text: value(key), submit: None, tab: t };
            ("type", element_ref, Some(key.as_str()), actions::type_text(state, caller, a).await)
        }
        GoalStep::SelectOption { element_ref, key } => {
            let result = match value(key) {
                ValueSource::Literal(v) => {
                    let a = SelectOptionArgs { element_ref: element_ref.clone(), values: vec![v], tab: t };
                    actions::select_option(state, caller, a).await
                }
                ValueSource::Secret(_) => Err(WireError::new(
                    ErrorCode::InvalidRequest,
                    "a secret input cannot choose an option; use a literal",
                )),
            };
            ("select_option", element_ref, Some(key.as_str()), result)
        }
        GoalStep::PressEnter(r) => {
            let a = PressKeyArgs { key: "Enter".into(), element_ref: Some(r.clone()), tab: t };
            ("press_enter", r, None, actions::press_key(state, caller, a).await)
        }
    };
    let outcome = match &result {
        Ok(_) => "ok",
        Err(e) => e.code.as_str(),
    };
    trace(op, Some(r), key, outcome);
    result?;
    Ok(Some(describe(&step)))
}
