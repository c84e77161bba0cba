//! The permission gate in the extension (docs/design.md, "Policy,
//! approvals and audit"): the person's controls (STOP, Pause, YOLO, the
//! chime), the requests waiting for the person, the approval history, and
//! the IO around the decision of each `Act`. The decision itself is
//! `shared::gate` (pure, table-tested there; its module docs are the
//! spec of every step); the approval window is `crate::window`.
//!
//! Behaviour, exactly:
//! - STOP (popup only): every pending approval ends with `STOPPED` (it did
//!   not run; history `stopped`), every hand-off ends (`STOPPED`), an action between approval and execution
//!   is refused with `STOPPED`, and every later `Act` is refused with
//!   `STOPPED` until the person presses Resume in the popup. Persisted.
//! - Pause (popup only): later `Act`s are refused with `STOPPED` ("paused")
//!   until Resume; approvals already waiting stay open for the person.
//! - [`act`]: the request id is spent on arrival; `shared::gate::admit`;
//!   the live element (the one [`resolve`] just gave the bridge, if this
//!   `Act` is about it, else a fresh resolution) and page URL;
//!   `shared::gate::decide` with YOLO as it is now — a refusal ends
//!   there; anything that may run first meets any challenge on the page,
//!   which hands the tab to the person (`crate::handoff::clear_for_agent`;
//!   headless: `SECURITY_CHALLENGE`) and then resolves and decides again;
//!   when it asks, the
//!   person answers in the approval window, the element outlined on its
//!   page (`shared::gate::answered`), the bridge told before the question
//!   and asked for its go after an approval (`crate::proceed`: a lost
//!   connection while asking is `APPROVAL_DENIED`, never a silent
//!   approval); `shared::gate::halted`; a secret's
//!   value (`crate::secret::reveal`, only now); `halted` again; then the
//!   content script acts, only while the element still has exactly the
//!   facts that were classified and shown.
//! - One approval answers exactly one `Act` (its `gate.request` id), once;
//!   an answer for an unknown or already answered id does nothing. No
//!   answer within the question's timeout → `APPROVAL_DENIED` (history
//!   `timeout`); the person's Deny → `APPROVAL_DENIED` (history `denied`).
//!   Every refusal the person caused says who in `WireError::denied_by`.
//! - Answers come only from this extension's `approval.html` and
//!   `popup.html` (`crate::messages`); nothing from the bridge, a page or
//!   a tool argument can approve.

use std::cell::RefCell;
use std::collections::HashSet;

use js_sys::{Array, Function, Promise};
use serde::{Deserialize, Serialize};
use shared::action::{ActReport, Action, ControlState, Effect, Fingerprint, Gate, ResolvedElement};
use shared::audit::DecidedBy;
use shared::challenge::PageSignals;
use shared::error::{ErrorCode, WireError};
use shared::gate::{Answer, Arrival, GateStep, Live, Question, YOLO_HISTORY};
use shared::protocol::{CommandResult, PageRequest, ScreenPlace, TabId};
use shared::risk::RiskLevel;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use crate::chrome;
use crate::messages::{HistoryEntry, PageState, PendingView, Settings};
use crate::tabs::{self, LoadWaiter};
use crate::util::{from_js, get, js_error_text, now_ms, obj, to_js, with_timeout};
use crate::window;

/// Approval history kept in `chrome.storage.local`.
pub const HISTORY_MAX: usize = 1000;
/// How long an action may take to finish the navigation it started.
const NAV_WAIT_MS: u32 = 15_000;
/// The approval window closes this long after its last request was answered.
const CLOSE_DELAY_MS: u32 = 1_500;

struct Pending {
    view: PendingView,
    /// The tab the request is about (`None`: a question without a tab).
    tab: Option<TabId>,
    /// Resolves the waiting `Act` with an answer string ([`answer_of`]).
    resolve: Function,
}

/// The persisted controls.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
#[serde(default)]
struct Saved {
    stopped: bool,
    paused: bool,
    yolo: bool,
    chime: Option<bool>,
}

#[derive(Default)]
struct State {
    loaded: bool,
    stopped: bool,
    paused: bool,
    yolo: bool,
    chime: bool,
    pending: Vec<Pending>,
    history: Vec<HistoryEntry>,
    /// `gate.request` ids seen by this worker: an id acts at most once.
    seen: HashSet<u64>,
    /// Bumped by STOP: actions started before it do not run.
    stop_generation: u64,
    /// The element this worker last resolved for the bridge
    /// (`Command::Resolve`): the `Act` that usually follows classifies on
    /// it instead of asking the page again; the content script then acts
    /// only if the live element still resolves to exactly these facts.
    last_resolved: Option<Resolved>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State { chime: true, ..State::default() });
}

// ------------------------------------------------------------------ state

/// Loads the persisted controls and history once per worker lifetime.
pub async fn ensure_loaded() {
    if STATE.with(|s| s.borrow().loaded) {
        return;
    }
    let keys = Array::of3(&JsValue::from_str("controls"), &JsValue::from_str("history"), &JsValue::from_str("chime"));
    let items = chrome::storage_local_get(&keys).await.unwrap_or(JsValue::UNDEFINED);
    let saved: Saved = from_js(&get(&items, "controls")).unwrap_or_default();
    let history: Vec<HistoryEntry> = from_js(&get(&items, "history")).unwrap_or_default();
    let fresh = STATE.with(|s| {
        let mut s = s.borrow_mut();
        if s.loaded {
            return false;
        }
        s.loaded = true;
        s.stopped |= saved.stopped;
        s.paused |= saved.paused;
        s.yolo = saved.yolo;
        s.chime = saved.chime.unwrap_or(true);
        let mut h = history;
        h.append(&mut s.history);
        let excess = h.len().saturating_sub(HISTORY_MAX);
        h.drain(..excess);
        s.history = h;
        true
    });
    if fresh {
        changed();
    }
}

pub fn control_state() -> ControlState {
    STATE.with(|s| {
        let s = s.borrow();
        ControlState { stopped: s.stopped, paused: s.paused, yolo: s.yolo, pending: s.pending.len() as u32 }
    })
}

/// What the popup and the approval window show.
pub fn page_state() -> PageState {
    let control = control_state();
    STATE.with(|s| {
        let s = s.borrow();
        PageState { control, chime: s.chime, pending: s.pending.iter().map(|p| p.view.clone()).collect() }
    })
}

fn nothing_pending() -> bool {
    STATE.with(|s| s.borrow().pending.is_empty())
}

/// After any change: persist, badge, pages, bridge.
fn changed() {
    let saved = STATE.with(|s| {
        let s = s.borrow();
        Saved { stopped: s.stopped, paused: s.paused, yolo: s.yolo, chime: Some(s.chime) }
    });
    let state = control_state();
    let view = to_js(&page_state());
    spawn_local(async move {
        let _ = chrome::storage_local_set(&obj(&[("controls", to_js(&saved))])).await;
        let _ = chrome::storage_session_set(&obj(&[("gate", view)])).await;
    });
    crate::badge::set_control(state);
    crate::conn::send_control(state);
    if state.pending == 0 {
        // A moment later, so the click that answered the last request
        // finishes in its page before the window goes away.
        spawn_local(async {
            crate::util::sleep(CLOSE_DELAY_MS).await;
            if nothing_pending() {
                window::close();
            }
        });
    }
}

fn add_history(summary: &str, risk: RiskLevel, decision: &str, url: &str) {
    let time = js_sys::Date::new_0().to_iso_string().as_string().unwrap_or_default();
    let entry = HistoryEntry {
        time,
        summary: summary.to_string(),
        risk: risk.as_str().to_string(),
        decision: decision.to_string(),
        url: shared::url::strip_query(url).to_string(),
    };
    let all = STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.history.push(entry);
        let excess = s.history.len().saturating_sub(HISTORY_MAX);
        s.history.drain(..excess);
        to_js(&s.history)
    });
    spawn_local(async move {
        let _ = chrome::storage_local_set(&obj(&[("history", all)])).await;
    });
}

pub async fn clear_history() {
    ensure_loaded().await;
    STATE.with(|s| s.borrow_mut().history.clear());
    let _ = chrome::storage_local_set(&obj(&[("history", Array::new().into())])).await;
}

// ------------------------------------------------------------------ the person's controls

/// How a waiting `Act` learns its answer: the string its promise resolves
/// with (nothing, on timeout).
const APPROVE: &str = "approve";
const DENY: &str = "deny";
const STOP: &str = "stop";
/// The request's tab was closed while it waited.
const TAB_CLOSED: &str = "tab_closed";

fn answer_of(v: Option<&str>) -> Answer {
    match v {
        Some(APPROVE) => Answer::Approved,
        Some(STOP) => Answer::Stopped,
        _ => Answer::Denied,
    }
}

/// Registers the `tabs.onRemoved` listener once for the worker's lifetime:
/// a request about a tab that is closed is withdrawn at once (its `Act`
/// ends `NOT_FOUND`, nothing ran), not left to its approval timeout.
pub fn install_listeners() {
    type Listener = Closure<dyn FnMut(JsValue)>;
    thread_local! {
        static ON_TAB_REMOVED: RefCell<Option<Listener>> = const { RefCell::new(None) };
    }
    ON_TAB_REMOVED.with(|c| {
        if c.borrow().is_some() {
            return;
        }
        let cb = Closure::<dyn FnMut(JsValue)>::new(|id: JsValue| {
            if let Some(tab) = id.as_f64().map(|t| t as TabId) {
                tab_closed(tab);
            }
        });
        chrome::tabs_on_removed_add_listener(cb.as_ref().unchecked_ref());
        *c.borrow_mut() = Some(cb);
    });
}

fn tab_closed(tab: TabId) {
    let ended: Vec<Pending> = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let (ended, kept) = std::mem::take(&mut s.pending).into_iter().partition(|p| p.tab == Some(tab));
        s.pending = kept;
        ended
    });
    if ended.is_empty() {
        return;
    }
    for p in ended {
        let _ = p.resolve.call1(&JsValue::NULL, &JsValue::from_str(TAB_CLOSED));
    }
    changed();
}

/// STOP: deny everything pending, refuse everything until Resume.
pub async fn stop() {
    ensure_loaded().await;
    let pending = STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.stopped = true;
        s.stop_generation += 1;
        std::mem::take(&mut s.pending)
    });
    for p in pending {
        let _ = p.resolve.call1(&JsValue::NULL, &JsValue::from_str(STOP));
    }
    crate::handoff::stop_all();
    changed();
}

pub async fn pause() {
    ensure_loaded().await;
    STATE.with(|s| s.borrow_mut().paused = true);
    changed();
}

/// Resume clears STOP and Pause.
pub async fn resume() {
    ensure_loaded().await;
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.stopped = false;
        s.paused = false;
    });
    changed();
}

/// Only ever called for a message from `popup.html`.
pub async fn set_yolo(on: bool) {
    ensure_loaded().await;
    STATE.with(|s| s.borrow_mut().yolo = on);
    changed();
}

/// The generic settings path: the chime only.
pub async fn set_settings(settings: Settings) {
    ensure_loaded().await;
    if let Some(c) = settings.chime {
        STATE.with(|s| s.borrow_mut().chime = c);
    }
    changed();
}

/// The page URL of the request `request` waits about, if it waits.
pub fn pending_url(request: u64) -> Option<String> {
    STATE.with(|s| s.borrow().pending.iter().find(|p| p.view.request == request).map(|p| p.view.url.clone()))
}

/// The person's answer for one request. False when no such request waits
/// (unknown, already answered, timed out, stopped).
pub fn decide(request: u64, approve: bool) -> bool {
    let found = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let i = s.pending.iter().position(|p| p.view.request == request)?;
        Some(s.pending.remove(i))
    });
    match found {
        Some(p) => {
            let _ = p.resolve.call1(&JsValue::NULL, &JsValue::from_str(if approve { APPROVE } else { DENY }));
            changed();
            true
        }
        None => false,
    }
}

// ------------------------------------------------------------------ asking the person

/// Waits for the person's answer about one request, with the element
/// outlined on its page (`on`: the tab and target, `None` for a tab
/// action) and the window placed beside it.
/// `NOT_FOUND` when the tab is closed while the person is asked.
async fn ask_person(
    view: PendingView,
    timeout_secs: u32,
    on: Option<(TabId, Option<&str>)>,
) -> Result<Answer, WireError> {
    let place = match on {
        Some((tab, target)) => window::outline(tab, target, true).await,
        None => None,
    };
    let answer = wait_for_person(view, timeout_secs, place, on.map(|(tab, _)| tab)).await;
    match (answer, on) {
        (None, Some((tab, _))) => Err(WireError::new(
            ErrorCode::NotFound,
            format!("no tab {tab}: it was closed while the person was asked; the action did not run"),
        )),
        (None, None) => Ok(Answer::Denied),
        (Some(answer), on) => {
            if let Some((tab, target)) = on {
                window::outline(tab, target, false).await;
            }
            Ok(answer)
        }
    }
}

/// The person's answer; `None` when the request's tab was closed.
async fn wait_for_person(
    view: PendingView,
    timeout_secs: u32,
    place: Option<ScreenPlace>,
    tab: Option<TabId>,
) -> Option<Answer> {
    let request = view.request;
    let promise = Promise::new(&mut |resolve, _reject| {
        STATE.with(|s| s.borrow_mut().pending.push(Pending { view: view.clone(), tab, resolve }));
    });
    changed();
    spawn_local(window::show(place, nothing_pending));
    let r = with_timeout(promise, timeout_secs * 1000).await;
    Some(match r {
        Ok(Some(v)) if v.as_string().as_deref() == Some(TAB_CLOSED) => return None,
        Ok(Some(v)) => answer_of(v.as_string().as_deref()),
        Ok(None) | Err(_) => {
            // Withdraw the request: a late click does nothing.
            let removed = STATE.with(|s| {
                let mut s = s.borrow_mut();
                let before = s.pending.len();
                s.pending.retain(|p| p.view.request != request);
                before != s.pending.len()
            });
            if removed {
                changed();
            }
            Answer::Timeout
        }
    })
}

/// The request as the pages show it.
fn pending_view(gate: &Gate, q: Question, tab: Option<TabId>) -> PendingView {
    let agent =
        tab.and_then(crate::sessions::owner_of).map(|(session, client)| crate::messages::AgentRef { session, client });
    PendingView {
        agent,
        request: gate.request,
        summary: gate.summary.clone(),
        risk: q.risk.as_str().to_string(),
        reasons: q.reasons,
        role: q.role,
        name: q.name,
        url: q.url,
        shows: q.shows,
        goes_to: q.goes_to,
        changed: q.changed.map(|c| *c),
        deadline: now_ms() + q.timeout_secs as f64 * 1000.0,
    }
}

/// `Command::AskPerson`: a question that is not a page action
/// (`shared::gate::question_only`), answered in the approval window.
pub async fn ask_only(gate: Gate) -> CmdResult {
    ensure_loaded().await;
    let request_seen = !STATE.with(|s| s.borrow_mut().seen.insert(gate.request));
    let question = shared::gate::question_only(control_state(), &gate, request_seen)?;
    if shared::gate::yolo_answers(control_state(), &gate) {
        add_history(&gate.summary, question.risk, YOLO_HISTORY, "");
        return Ok(CommandResult::Answered { decided_by: DecidedBy::Yolo });
    }
    let generation = STATE.with(|s| s.borrow().stop_generation);
    let (risk, timeout) = (question.risk, question.timeout_secs);
    let answer = ask_person(pending_view(&gate, question, None), timeout, None).await?;
    add_history(&gate.summary, risk, answer.history(), "");
    let decided_by = shared::gate::answered(answer, timeout)?;
    let stop_pressed_since = STATE.with(|s| s.borrow().stop_generation != generation);
    if let Some(e) = shared::gate::halted(control_state(), stop_pressed_since) {
        return Err(e);
    }
    Ok(CommandResult::Answered { decided_by })
}

// ------------------------------------------------------------------ Act

type CmdResult = Result<CommandResult, WireError>;

/// The live element behind `target` (the focused one when absent) and
/// the page's challenge signals read at the same moment, in one round
/// trip to the content script.
async fn resolve_live(
    tab: TabId,
    target: Option<&str>,
) -> Result<(Option<ResolvedElement>, Option<Box<PageSignals>>), WireError> {
    let msg = PageRequest::ResolveWithSignals { target: target.map(str::to_string) };
    match tabs::ask_page(tab, &msg).await {
        Ok(CommandResult::ElementSignals { element, signals }) => Ok((Some(element), Some(signals))),
        Ok(_) => Err(WireError::internal("the page sent an invalid element")),
        Err(e) if target.is_none() && e.code == ErrorCode::NotFound => Ok((None, None)),
        Err(e) => Err(e),
    }
}

/// An element resolved for the bridge, kept for the `Act` that follows.
struct Resolved {
    tab: TabId,
    target: String,
    element: ResolvedElement,
    signals: Option<Box<PageSignals>>,
    at_ms: f64,
}

/// How long the challenge signals read with a `Resolve` stand in for a
/// fresh look when its `Act` follows (the bridge sends the two back to
/// back); older ones are read again.
const SIGNALS_FRESH_MS: f64 = 500.0;

/// `Command::Resolve`. (A tab without the content script gets it only
/// when it shows an http(s) page; the URL the element reports is checked
/// too, so no extra tab lookup is needed.)
pub async fn resolve(tab: TabId, target: &str) -> CmdResult {
    let (Some(element), signals) = resolve_live(tab, Some(target)).await? else {
        return Err(WireError::new(ErrorCode::NotFound, "no such element"));
    };
    if !tabs::is_web_url(&element.url) {
        return Err(tabs::not_a_web_page());
    }
    STATE.with(|s| {
        s.borrow_mut().last_resolved =
            Some(Resolved { tab, target: target.to_string(), element: element.clone(), signals, at_ms: now_ms() })
    });
    Ok(CommandResult::Element { element })
}

/// The element resolved for the bridge just before, if this `Act` is about
/// it (same tab, ref and fingerprint), with its page's challenge signals
/// while they are fresh. Taken at the start of every `Act`, so it serves
/// at most the one that follows its `Resolve` directly.
fn take_resolved(
    tab: TabId,
    target: Option<&str>,
    expect: Option<&Fingerprint>,
) -> Option<(ResolvedElement, Option<Box<PageSignals>>)> {
    let r = STATE.with(|s| s.borrow_mut().last_resolved.take())?;
    let fits = r.tab == tab
        && Some(r.target.as_str()) == target
        && expect == Some(&r.element.fingerprint)
        && tabs::is_web_url(&r.element.url);
    let signals = r.signals.filter(|_| now_ms() - r.at_ms <= SIGNALS_FRESH_MS);
    fits.then_some((r.element, signals))
}

/// `Command::Act`: the whole gate (`shared::gate`, step by step), then the
/// action.
pub async fn act(
    tab: TabId,
    target: Option<String>,
    action: Action,
    expect: Option<Fingerprint>,
    gate: Gate,
) -> CmdResult {
    let mut resolved = take_resolved(tab, target.as_deref(), expect.as_ref());
    ensure_loaded().await;
    // 1. Before the page is asked anything. The id is spent now.
    let request_seen = !STATE.with(|s| s.borrow_mut().seen.insert(gate.request));
    shared::gate::admit(&Arrival {
        controls: control_state(),
        gate: &gate,
        request_seen,
        action: &action,
        target: target.as_deref(),
        expect: expect.as_ref(),
    })?;
    let close_tab = matches!(action, Action::CloseTab);
    // Keeping a download is decided on the tab, not on an element.
    let keep_download = matches!(action, Action::KeepDownload { .. });
    let no_element = close_tab || keep_download;
    let generation = STATE.with(|s| s.borrow().stop_generation);

    // 2. The live element, classified here again: the one this worker
    // resolved for the bridge a moment ago, or a fresh resolution. Either
    // way the content script acts only while the element still resolves to
    // exactly these facts (`verify`), so what was classified — and shown
    // to the person — is what is acted on.
    // 3. The decision. A refusal ends here; anything that may run first
    // meets a challenge on the page (or a hand-off already open on the
    // tab): the person has the tab until they hand it back, nothing is
    // dispatched before (`crate::handoff`), and then the element is
    // resolved and decided again — the page may have changed.
    let mut handed = 0u8;
    let (url, live, step) = loop {
        let (live, signals) = match resolved.take() {
            Some((element, signals)) => (Some(element), signals),
            None if no_element => (None, None),
            None => {
                // Any tab can be closed (behind the gate); page actions need a web page.
                tabs::require_web_page(tab).await?;
                resolve_live(tab, target.as_deref()).await?
            }
        };
        let url = match live.as_ref() {
            Some(l) => l.url.clone(),
            None => tabs::tab_url(tab).await?,
        };
        let step = shared::gate::decide(&Live {
            action: &action,
            gate: &gate,
            expect: expect.as_ref(),
            element: live.as_ref(),
            url: &url,
            yolo: control_state().yolo,
        });
        if no_element || matches!(step, GateStep::Refuse(_)) || handed > shared::handoff::MAX_HANDOFFS_PER_ACTION {
            break (url, live, step);
        }
        if crate::handoff::clear_for_agent(tab, signals).await? {
            handed += 1;
            continue;
        }
        break (url, live, step);
    };

    // 4. The person when it asks.
    let (class, decided_by) = match step {
        GateStep::Refuse(e) => return Err(e),
        GateStep::Run { decided_by, class, shown_risk } => {
            if decided_by == DecidedBy::Yolo {
                add_history(&gate.summary, shown_risk, YOLO_HISTORY, &url);
            }
            (class, decided_by)
        }
        GateStep::Ask { class, question } => {
            let (risk, timeout) = (question.risk, question.timeout_secs);
            let on = (!no_element).then_some((tab, target.as_deref()));
            crate::proceed::asking(gate.request);
            let answer = ask_person(pending_view(&gate, question, Some(tab)), timeout, on).await?;
            add_history(&gate.summary, risk, answer.history(), &url);
            let decided_by = shared::gate::answered(answer, timeout)?;
            // Approved: runs only once the bridge knows it may have run.
            crate::proceed::go_ahead(gate.request).await?;
            (class, decided_by)
        }
    };

    // 5. STOP (or Pause) pressed since this action started: it does not run.
    let halted = || {
        let stop_pressed_since = STATE.with(|s| s.borrow().stop_generation != generation);
        shared::gate::halted(control_state(), stop_pressed_since)
    };
    if let Some(e) = halted() {
        return Err(e);
    }
    // A secret's value, only now that the gate let the action through.
    let action = crate::secret::reveal(tab, gate.request, action, &gate.origin).await?;
    // An upload's bytes, only now too (staged in the page, set by the `Act`).
    crate::upload::stage(tab, &action).await?;
    if let Some(e) = halted() {
        return Err(e);
    }

    let mut report = if close_tab {
        close(tab, &url).await?
    } else if keep_download {
        // The bridge tells Chromium to go on once it has this answer.
        ActReport {
            effect: Effect::None,
            url: url.clone(),
            risk: RiskLevel::Low,
            reasons: Vec::new(),
            decided_by: DecidedBy::Policy,
            changes: Vec::new(),
        }
    } else {
        perform(tab, target.as_deref(), &action, live.as_ref()).await?
    };
    report.risk = class.risk;
    report.reasons = class.reasons;
    report.decided_by = decided_by;
    Ok(CommandResult::Acted { report })
}

/// Removes the tab (after the gate let it through).
async fn close(tab: TabId, url: &str) -> Result<ActReport, WireError> {
    let id = tab as f64;
    chrome::tabs_remove(id).await.map_err(|e| {
        let text = js_error_text(&e);
        if text.contains("No tab") {
            WireError::new(ErrorCode::NotFound, format!("no tab {tab}"))
        } else {
            WireError::internal(text)
        }
    })?;
    Ok(ActReport {
        effect: Effect::None,
        url: url.to_string(),
        risk: RiskLevel::Low,
        reasons: Vec::new(),
        decided_by: DecidedBy::Policy,
        changes: vec![format!("tab {tab} closed")],
    })
}

/// After a lost reply, how long to look for the navigation that caused it.
const LOST_REPLY_POLLS: u32 = 40;
const LOST_REPLY_POLL_MS: u32 = 50;

/// Tells the content script to act; finds out whether a navigation began.
async fn perform(
    tab: TabId,
    target: Option<&str>,
    action: &Action,
    verify: Option<&ResolvedElement>,
) -> Result<ActReport, WireError> {
    // The URL the element was just read in (the content script's own
    // `location`), else the tab's.
    let before = match verify {
        Some(v) => v.url.clone(),
        None => tabs::tab_url(tab).await.unwrap_or_default(),
    };
    let started = now_ms();
    let waiter = LoadWaiter::register(tab, false);
    let msg = PageRequest::Act {
        target: target.map(str::to_string),
        action: action.clone(),
        verify: verify.map(|v| Box::new(v.clone())),
    };
    let reply = tabs::ask_page(tab, &msg).await;
    let mut report = match reply {
        Ok(CommandResult::Acted { report }) => report,
        Ok(_) => {
            waiter.cancel();
            return Err(WireError::internal("the page sent an invalid report"));
        }
        Err(e) if e.code == ErrorCode::Internal || e.code == ErrorCode::Timeout => {
            // The page went away (or hung) after it got the action: what
            // happened can only be told from the tab. Never retried.
            ActReport {
                effect: Effect::Unknown,
                url: before.clone(),
                risk: RiskLevel::Low,
                reasons: Vec::new(),
                decided_by: DecidedBy::Policy,
                changes: Vec::new(),
            }
        }
        Err(e) => {
            waiter.cancel();
            return Err(e);
        }
    };
    let mut now = tabs::tab_url(tab).await.unwrap_or_default();
    if report.effect == Effect::Unknown {
        // The page went away before it could answer: a navigation is the
        // usual reason, but the tab may not report it yet. Give it a moment.
        for _ in 0..LOST_REPLY_POLLS {
            if waiter.seen_loading() || now != before {
                break;
            }
            crate::util::sleep(LOST_REPLY_POLL_MS).await;
            now = tabs::tab_url(tab).await.unwrap_or_default();
        }
    }
    let navigating = report.effect == Effect::Navigated || waiter.seen_loading() || now != before;
    if !navigating {
        waiter.cancel();
        if let Some(what) = crate::downloads::outcome_since(tab, started).await {
            report.changes.push(what);
        }
        return Ok(report);
    }
    // A link that downloads starts what looks like a navigation, but no page
    // comes: stop waiting once a download began in this tab and the tab
    // still shows the page it showed.
    let download = || crate::downloads::started_since(tab, started);
    let loaded = waiter.wait_ms_unless(tab, NAV_WAIT_MS, download).await;
    let after = tabs::tab_url(tab).await.unwrap_or(now);
    if matches!(loaded, Ok(false)) || (download() && after == before) {
        report.effect = Effect::None;
        let what = crate::downloads::outcome_since(tab, started).await;
        report.changes.push(what.unwrap_or_else(|| "a download started (see browser_downloads)".into()));
    } else {
        report.effect = Effect::Navigated;
    }
    report.url = after;
    Ok(report)
}
