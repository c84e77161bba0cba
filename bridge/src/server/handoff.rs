//! The bridge's side of hand-offs (docs/design.md, "Hand-off to the
//! person"; the rules are `shared::handoff`). The extension owns every
//! hand-off: it detects challenges, shows the person the card, waits for
//! Done or Abort and checks the page. The bridge only:
//!
//! - carries `browser_handoff {reason, tab?}` to the extension
//!   ([`browser_handoff`]) and, once the person handed the tab back,
//!   answers `{outcome: "done", waited_ms}` with the page's header (URL,
//!   title, challenge line) from a fresh snapshot;
//! - waits long enough: a call that may hand off (an action, a navigation,
//!   a new tab with a URL, `browser_handoff`) gets [`AppState::human_wait`]
//!   on top of its own timeout, so the extension's `human_timeout_secs`
//!   ends it, not the bridge;
//! - tells the agent why a call is still open: MCP progress notifications
//!   while one of the agent's tabs waits for the person, when the call
//!   has a progress token ([`watch_progress`]), and the waiting tabs in
//!   `browser_status` ([`status_lines`]);
//! - writes one audit row per ended hand-off ([`audit`]);
//! - refuses every command but the tab list on a tab handed to the person
//!   (`HUMAN_REQUIRED`, `shared::handoff::check_handed`, in `ExtHub::call`)
//!   and more than `shared::handoff::MAX_HANDOFFS_PER_MINUTE`
//!   `browser_handoff`s a minute from one session (`BUDGET_EXCEEDED`).
//!
//! There is no message, tool or argument that ends a hand-off: only the
//! popup's Done and Abort, STOP, or the timeout do.

use std::time::Duration;

use rmcp::model::{CallToolResult, ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Value, json};
use shared::error::WireError;
use shared::handoff::{Record, Waiting};
use shared::limits::COMMAND_TIMEOUT_MS;
use shared::protocol::{Command, CommandResult};
use shared::redact;
use shared::snapshot::{RenderOptions, SnapshotRequest, render};
use shared::tools::HandoffArgs;

use super::AppState;
use super::audit::{Audit, Caller, Row};
use super::results::untrusted_result;
use shared::sessions::SessionKey;

/// How often a waiting call's progress is looked at, and how often it is
/// repeated while nothing changes.
const PROGRESS_POLL: Duration = Duration::from_secs(1);
const PROGRESS_REPEAT: Duration = Duration::from_secs(10);

impl AppState {
    /// The longest a call may wait for the person on top of its own work:
    /// every hand-off one action may go through, each up to
    /// `human_timeout_secs`.
    pub(crate) fn human_wait(&self) -> Duration {
        Duration::from_secs(
            u64::from(self.config().human_timeout_secs) * u64::from(shared::handoff::MAX_HANDOFFS_PER_ACTION),
        )
    }
}

/// `browser_handoff`: the person gets the tab and the agent's words; the
/// call returns when they hand it back.
pub(crate) async fn browser_handoff(
    state: &AppState,
    caller: &Caller,
    args: HandoffArgs,
) -> Result<CallToolResult, WireError> {
    let reason = shared::handoff::check_reason(&args.reason)?;
    let tab = state.require_agent_tab(caller.key, args.tab)?;
    if let Some(url) = state.actions().page(tab).url {
        state.check_site(&url)?;
    }
    // A tab already handed to the person is refused before the limit is
    // counted (`ExtHub::call` would refuse it too).
    let handed: Vec<_> = state.hub().waiting().iter().map(|w| w.tab).collect();
    shared::handoff::check_handed(&Command::Handoff { tab, reason: reason.clone() }, &handed)?;
    if let Err(e) = state.admit_handoff(caller.key) {
        tracing::info!(tab, session = %caller.session, "hand-off refused: too many this minute");
        return Err(e);
    }
    let wait = state.human_wait() + Duration::from_millis(COMMAND_TIMEOUT_MS);
    let answer = state.hub().call(Command::Handoff { tab, reason: reason.clone() }, wait).await;
    let (waited_ms, info) = match answer {
        Ok(CommandResult::HandedBack { waited_ms, tab }) => (waited_ms, tab),
        Ok(_) => return Err(super::unexpected_answer()),
        Err(e) => {
            tracing::info!(tab, code = e.code.as_str(), session = %caller.session, "hand-off not done");
            return Err(e);
        }
    };
    state.url_seen(tab, &info.url)?;
    // The page as it is now: its header, as a snapshot starts.
    let request = SnapshotRequest { interactive_only: true, ..SnapshotRequest::default() };
    let header =
        match state.hub().call(Command::Snapshot { tab, request }, Duration::from_millis(COMMAND_TIMEOUT_MS)).await {
            Ok(CommandResult::Snapshot { snapshot }) => {
                let text = render(&snapshot, RenderOptions { page: 1, max_chars: 1 }).text;
                text.lines().take_while(|l| !l.trim_start().starts_with("- ")).collect::<Vec<_>>().join("\n")
            }
            _ => format!("Page URL: {}", shared::snapshot::display_url(&info.url)),
        };
    let text = format!("The person handed the tab back after {} s.\n{header}\n", waited_ms / 1000);
    Ok(untrusted_result(
        &text,
        json!({
            "outcome": "done",
            "waited_ms": waited_ms,
            "tab": info.id,
            "url": redact::redact_url(&info.url),
            "title": redact::redact_text(&info.title),
            "header": header,
        }),
    ))
}

/// The audit row of an ended hand-off: tool `handoff`, the kind and the
/// trigger in the summary, the origin as its URL, the outcome, and who
/// ended it.
pub(crate) async fn audit(state: &AppState, record: &Record) {
    use shared::audit::DecidedBy;
    use shared::handoff::Outcome;
    // The row names the session whose tab it was, if any.
    let owner = state.registry().owner_of(record.tab);
    let caller = match owner {
        Some((key, s)) => Caller::session(key, s.short, s.client),
        None => Caller::internal("extension"),
    };
    // Its duration is the hand-off's own.
    let since = std::time::Instant::now().checked_sub(std::time::Duration::from_millis(record.duration_ms));
    let caller = Caller { started: since.unwrap_or(caller.started), ..caller };
    let summary = format!("hand-off: {} ({})", record.kind, record.trigger.as_str());
    let reasons = [format!("trigger: {}", record.trigger.as_str()), format!("duration_ms: {}", record.duration_ms)];
    let decided_by = match record.outcome {
        Outcome::Done | Outcome::Abort | Outcome::StillThere => DecidedBy::Human,
        Outcome::Timeout => DecidedBy::Timeout,
        Outcome::Stop => DecidedBy::Stop,
    };
    Audit::new(state, &caller)
        .record(Row {
            tool: "handoff",
            tab: Some(record.tab),
            summary: &summary,
            url: Some(&record.origin),
            reasons: &reasons,
            decided_by: Some(decided_by),
            outcome: record.outcome.as_str(),
            ..Row::default()
        })
        .await;
}

/// The agent's tabs that wait for the person.
pub(crate) fn agent_waiting(state: &AppState, me: SessionKey) -> Vec<Waiting> {
    let (mine, _) = state.session_tabs(me);
    state.hub().waiting().into_iter().filter(|w| mine.contains(&w.tab)).collect()
}

/// One line for the agent about a waiting tab.
fn line(w: &Waiting, now_ms: u64) -> String {
    let secs = now_ms.saturating_sub(w.since_ms) / 1000;
    let mut s = format!(
        "tab {}: {} on {} ({}, waiting {secs} s)",
        w.tab,
        w.need(),
        redact::redact_url(&w.origin),
        w.trigger.as_str()
    );
    if let Some(r) = &w.reason {
        s.push_str(", you asked: ");
        shared::snapshot::quote(&redact::redact_text(r), &mut s);
    }
    s
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// `browser_status`'s lines and JSON about tabs waiting for the person.
pub(crate) fn status_lines(state: &AppState, me: SessionKey) -> (String, Value) {
    let waiting = agent_waiting(state, me);
    let now = now_ms();
    let mut text = format!("Tabs waiting for the person: {}\n", if waiting.is_empty() { "none" } else { "" });
    let mut list = Vec::new();
    for w in &waiting {
        text.push_str(&format!("- {}\n", line(w, now)));
        list.push(json!({
            "tab": w.tab,
            "need": w.need(),
            "kind": w.challenge.as_ref().map(|c| c.kind.as_str()),
            "origin": redact::redact_url(&w.origin),
            "trigger": w.trigger.as_str(),
            "reason": w.reason,
            "waitingSecs": now.saturating_sub(w.since_ms) / 1000,
            "note": w.note,
        }));
    }
    let text = text.replace("person: \n", "person:\n");
    (text, Value::Array(list))
}

/// While a call runs: a progress notification whenever the agent's
/// waiting tabs change, and every [`PROGRESS_REPEAT`] while they wait.
/// Runs until the returned guard is dropped (when the call ends).
pub(crate) fn watch_progress(
    state: &AppState,
    me: SessionKey,
    peer: Peer<RoleServer>,
    token: ProgressToken,
) -> ProgressGuard {
    let state = state.clone();
    let task = tokio::spawn(async move {
        let mut step = 0u32;
        let mut last: Option<(Vec<u64>, Vec<u8>)> = None;
        let mut last_sent = tokio::time::Instant::now();
        loop {
            tokio::time::sleep(PROGRESS_POLL).await;
            let waiting = agent_waiting(&state, me);
            if waiting.is_empty() {
                last = None;
                continue;
            }
            let key = (waiting.iter().map(|w| w.id).collect::<Vec<_>>(), waiting.iter().map(|w| w.misses).collect());
            if last.as_ref() == Some(&key) && last_sent.elapsed() < PROGRESS_REPEAT {
                continue;
            }
            let now = now_ms();
            let message = format!(
                "Waiting for the person: {}",
                waiting.iter().map(|w| line(w, now)).collect::<Vec<_>>().join("; ")
            );
            step += 1;
            let note = ProgressNotificationParam::new(token.clone(), f64::from(step)).with_message(message);
            if peer.notify_progress(note).await.is_err() {
                return;
            }
            last = Some(key);
            last_sent = tokio::time::Instant::now();
        }
    });
    ProgressGuard(task)
}

/// Stops [`watch_progress`] when dropped.
pub(crate) struct ProgressGuard(tokio::task::JoinHandle<()>);

impl Drop for ProgressGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}
