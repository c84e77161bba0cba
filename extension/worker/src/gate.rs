//! The permission gate in the extension (docs/design.md, "Policy, approvals and audit"): STOP, Pause, YOLO,
//! the live re-classification, the person's approvals and their history.
//!
//! Behaviour, exactly:
//! - STOP (popup only): every pending approval ends with `STOPPED` (it did
//!   not run; history `stopped`), an action between approval and execution
//!   is refused with `STOPPED`, and every later `Act` is refused with
//!   `STOPPED` until the person presses Resume in the popup. Persisted.
//! - Pause (popup only): later `Act`s are refused with `STOPPED` ("paused")
//!   until Resume; approvals already waiting stay open for the person.
//! - An `Act` asks the person when the bridge's decision or the live one
//!   (`gate.policy` applied to `shared::risk::classify` of the live element)
//!   is `confirm`, or when `gate.person_must_answer` (a secret bound to no
//!   site); a live `deny` is `PERMISSION_DENIED`. YOLO (popup only)
//!   answers such questions with yes, logged `auto (YOLO)` — except
//!   `person_must_answer` ones, which always wait for the person; STOP and
//!   Pause still win.
//! - A secret (`Action::TypeSecret`) is fetched from the bridge only after
//!   all of this (`crate::secret::reveal`), and STOP/Pause are checked
//!   again once it is here.
//! - One approval answers exactly one `Act` (its `gate.request` id), once;
//!   an answer for an unknown or already answered id does nothing. No
//!   answer within `gate.timeout_secs` → `APPROVAL_DENIED` whose message
//!   starts with `timeout:` (history `timeout`); the person's Deny →
//!   `APPROVAL_DENIED` (history `denied`).
//! - Answers come only from this extension's `approval.html` and
//!   `popup.html` (checked in `lib.rs`); nothing from the bridge, a page
//!   or a tool argument can approve.

use std::cell::RefCell;
use std::collections::HashSet;

use js_sys::{Array, Function, Promise};
use serde::{Deserialize, Serialize};
use shared::action::{ActReport, Action, ControlState, Effect, Fingerprint, Gate, ResolvedElement};
use shared::audit::DecidedBy;
use shared::error::{ErrorCode, WireError};
use shared::policy::Decision;
use shared::protocol::{CommandResult, PageRequest, Rect, ScreenPlace, TabId};
use shared::risk::{ActionKind, ElementFacts, RiskLevel, classify, normalize};
use shared::sensitive::SensitiveKind;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use crate::chrome;
use crate::commands::{self, LoadWaiter};
use crate::util::{from_js, get, js_error_text, now_ms, obj, to_js, wire, with_timeout};

/// `scheme://host:port` as `shared::url::origin` writes it, parsed by the
/// browser's own URL parser (no second parser in the worker); empty for
/// anything but http(s).
pub(crate) fn origin_of(url: &str) -> String {
    let Ok(u) = web_sys::Url::new(url) else { return String::new() };
    let scheme = u.protocol();
    let scheme = scheme.trim_end_matches(':');
    let default_port = match scheme {
        "http" => "80",
        "https" => "443",
        _ => return String::new(),
    };
    let host = u.hostname();
    let host = host.strip_suffix('.').unwrap_or(&host);
    let port = u.port();
    let port = if port.is_empty() { default_port } else { port.as_str() };
    format!("{scheme}://{host}:{port}")
}

/// Approval history kept in `chrome.storage.local`.
pub const HISTORY_MAX: usize = 1000;
const MAX_TIMEOUT_SECS: u32 = 600;
/// How long an action may take to finish the navigation it started.
const NAV_WAIT_MS: u32 = 15_000;
/// The approval window closes this long after its last request was answered.
const CLOSE_DELAY_MS: u32 = 1_500;

/// One request waiting for the person, as the pages show it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PendingView {
    pub request: u64,
    pub summary: String,
    pub risk: String,
    pub reasons: Vec<String>,
    pub role: String,
    pub name: String,
    /// Page URL without query string or fragment.
    pub url: String,
    /// What the element shows on the page, when its words differ from
    /// its name (`ElementFacts::visible_text`); else empty.
    #[serde(default)]
    pub shows: String,
    /// Where activating it goes (link or form target, redacted), when it
    /// is not the page itself; else empty.
    #[serde(default)]
    pub goes_to: String,
    /// Epoch ms.
    pub deadline: f64,
}

struct Pending {
    view: PendingView,
    /// Resolves the waiting `Act` with a verdict string.
    resolve: Function,
}

/// One line of the approval history.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// RFC 3339 UTC.
    pub time: String,
    pub summary: String,
    pub risk: String,
    /// `approved`, `denied`, `timeout`, `stopped`, `auto (YOLO)`.
    pub decision: String,
    pub url: String,
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
    window: Option<f64>,
    opening_window: bool,
    /// The element this worker last resolved for the bridge
    /// (`Command::Resolve`): the `Act` that usually follows classifies on
    /// it instead of asking the page again; the content script then acts
    /// only if the live element still resolves to exactly these facts.
    last_resolved: Option<(TabId, String, ResolvedElement)>,
}

type WindowListener = Closure<dyn FnMut(JsValue)>;

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State { chime: true, ..State::default() });
    static ON_WINDOW_REMOVED: RefCell<Option<WindowListener>> = const { RefCell::new(None) };
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

pub fn pending_views() -> Vec<PendingView> {
    STATE.with(|s| s.borrow().pending.iter().map(|p| p.view.clone()).collect())
}

pub fn chime() -> bool {
    STATE.with(|s| s.borrow().chime)
}

/// What the popup and the approval window show.
pub fn page_state() -> JsValue {
    #[derive(Serialize)]
    struct View {
        control: ControlState,
        chime: bool,
        pending: Vec<PendingView>,
    }
    to_js(&View { control: control_state(), chime: chime(), pending: pending_views() })
}

/// After any change: persist, badge, pages, bridge.
fn changed() {
    let saved = STATE.with(|s| {
        let s = s.borrow();
        Saved { stopped: s.stopped, paused: s.paused, yolo: s.yolo, chime: Some(s.chime) }
    });
    let state = control_state();
    let view = page_state();
    spawn_local(async move {
        let _ = chrome::storage_local_set(&obj(&[("controls", to_js(&saved))])).await;
        let _ = chrome::storage_session_set(&obj(&[("gate", view)])).await;
        update_badge(state).await;
    });
    crate::conn::send_control(state);
    if state.pending == 0 {
        // A moment later, so the click that answered the last request
        // finishes in its page before the window goes away.
        spawn_local(async {
            crate::util::sleep(CLOSE_DELAY_MS).await;
            if STATE.with(|s| s.borrow().pending.is_empty()) {
                close_window();
            }
        });
    }
}

async fn update_badge(state: ControlState) {
    let (text, color) = if state.yolo {
        ("YOLO".to_string(), "#d00000")
    } else if state.pending > 0 {
        (state.pending.to_string(), "#c25400")
    } else if state.stopped {
        ("STOP".to_string(), "#8a1f17")
    } else if state.paused {
        ("II".to_string(), "#555555")
    } else {
        (String::new(), "#24324a")
    };
    let _ = chrome::action_set_badge_background_color(&obj(&[("color", JsValue::from_str(color))])).await;
    let _ = chrome::action_set_badge_text(&obj(&[("text", JsValue::from_str(&text))])).await;
    let title = if state.yolo { "Chaperone — YOLO is on: actions run without asking" } else { "Chaperone" };
    let _ = chrome::action_set_title(&obj(&[("title", JsValue::from_str(title))])).await;
}

fn add_history(summary: &str, risk: RiskLevel, decision: &str, url: &str) {
    let time = js_sys::Date::new_0().to_iso_string().as_string().unwrap_or_default();
    let entry = HistoryEntry {
        time,
        summary: summary.to_string(),
        risk: risk.as_str().to_string(),
        decision: decision.to_string(),
        url: strip_query(url),
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

pub fn strip_query(url: &str) -> String {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    url[..end].to_string()
}

// ------------------------------------------------------------------ the person's controls

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
        let _ = p.resolve.call1(&JsValue::NULL, &JsValue::from_str("stop"));
    }
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

/// The generic settings path: `chime` only; a `yolo` key is ignored.
pub async fn set_settings(settings: &JsValue) {
    ensure_loaded().await;
    if let Some(c) = get(settings, "chime").as_bool() {
        STATE.with(|s| s.borrow_mut().chime = c);
    }
    changed();
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
            let _ = p.resolve.call1(&JsValue::NULL, &JsValue::from_str(if approve { "approve" } else { "deny" }));
            changed();
            true
        }
        None => false,
    }
}

// ------------------------------------------------------------------ the approval window

pub fn install_listeners() {
    ON_WINDOW_REMOVED.with(|c| {
        if c.borrow().is_some() {
            return;
        }
        let cb = Closure::<dyn FnMut(JsValue)>::new(|id: JsValue| {
            STATE.with(|s| {
                let mut s = s.borrow_mut();
                if s.window.is_some() && s.window == id.as_f64() {
                    s.window = None;
                }
            });
        });
        chrome::windows_on_removed_add_listener(cb.as_ref().unchecked_ref());
        *c.borrow_mut() = Some(cb);
    });
}

/// Size of the approval window.
const WINDOW_WIDTH: i32 = 480;
const WINDOW_HEIGHT: i32 = 600;

/// Brings the approval window to the front, opening it when needed, beside
/// the element it asks about (`place`) rather than over it.
async fn show_window(place: Option<ScreenPlace>) {
    let (existing, opening) = STATE.with(|s| {
        let s = s.borrow();
        (s.window, s.opening_window)
    });
    let mut position: Vec<(&str, JsValue)> = Vec::new();
    if let Some(p) = place {
        let (left, top) = p.window_beside(WINDOW_WIDTH, WINDOW_HEIGHT);
        position.push(("left", JsValue::from_f64(left.into())));
        position.push(("top", JsValue::from_f64(top.into())));
    }
    if let Some(id) = existing {
        let mut update = vec![("focused", JsValue::TRUE)];
        update.extend(position.iter().cloned());
        if chrome::windows_update(id, &obj(&update)).await.is_ok() {
            return;
        }
        STATE.with(|s| s.borrow_mut().window = None);
    }
    if opening {
        return;
    }
    STATE.with(|s| s.borrow_mut().opening_window = true);
    let mut props = vec![
        ("type", JsValue::from_str("popup")),
        ("url", JsValue::from_str(&chrome::runtime_get_url("approval.html"))),
        ("focused", JsValue::TRUE),
        ("width", JsValue::from_f64(WINDOW_WIDTH.into())),
        ("height", JsValue::from_f64(WINDOW_HEIGHT.into())),
    ];
    props.extend(position);
    let props = obj(&props);
    let created = chrome::windows_create(&props).await;
    let id = match created {
        Ok(w) => get(&w, "id").as_f64(),
        Err(e) => {
            web_sys::console::warn_1(&JsValue::from_str(&format!(
                "chaperone: cannot open the approval window: {}",
                js_error_text(&e)
            )));
            None
        }
    };
    let orphan = STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.opening_window = false;
        s.window = id;
        s.pending.is_empty()
    });
    if orphan {
        close_window();
    }
}

fn close_window() {
    let id = STATE.with(|s| {
        let s = s.borrow();
        if s.opening_window { None } else { s.window }
    });
    if let Some(id) = id {
        STATE.with(|s| s.borrow_mut().window = None);
        spawn_local(async move {
            let _ = chrome::windows_remove(id).await;
        });
    }
}

enum Verdict {
    Approved,
    Denied,
    Timeout,
    Stopped,
}

/// Outlines the element an approval is about on its page and tells where
/// it is; `show: false` removes the outline. Best effort: a page that
/// cannot answer gets no outline, and the approval is asked all the same.
async fn highlight(tab: TabId, target: Option<&str>, show: bool) -> Option<ScreenPlace> {
    let msg = to_js(&PageRequest::Highlight { target: target.map(str::to_string), show });
    let at = match commands::ask_page(tab, &msg).await {
        Ok(CommandResult::Highlighted { at }) => at?,
        _ => return None,
    };
    Some(at.on_screen(window_of_tab(tab).await))
}

/// The bounds of the window that shows `tab`, as `chrome.windows` knows
/// them (a page is not always told where its window is).
async fn window_of_tab(tab: TabId) -> Option<Rect> {
    let t = chrome::tabs_get(tab as f64).await.ok()?;
    let w = chrome::windows_get(get(&t, "windowId").as_f64()?).await.ok()?;
    let n = |k: &str| get(&w, k).as_f64().map(|v| v.round() as i32);
    Some(Rect { left: n("left")?, top: n("top")?, width: n("width")?, height: n("height")? })
}

/// Waits for the person's answer about one request, with the element
/// outlined on its page (`on`: the tab and target, `None` for a tab
/// action) and the window placed beside it.
async fn ask_person(view: PendingView, timeout_secs: u32, on: Option<(TabId, Option<&str>)>) -> Verdict {
    let place = match on {
        Some((tab, target)) => highlight(tab, target, true).await,
        None => None,
    };
    let verdict = wait_for_person(view, timeout_secs, place).await;
    if let Some((tab, target)) = on {
        highlight(tab, target, false).await;
    }
    verdict
}

async fn wait_for_person(view: PendingView, timeout_secs: u32, place: Option<ScreenPlace>) -> Verdict {
    let request = view.request;
    let promise = Promise::new(&mut |resolve, _reject| {
        STATE.with(|s| s.borrow_mut().pending.push(Pending { view: view.clone(), resolve }));
    });
    changed();
    spawn_local(show_window(place));
    let r = with_timeout(promise, timeout_secs * 1000).await;
    match r {
        Ok(Some(v)) => match v.as_string().as_deref() {
            Some("approve") => Verdict::Approved,
            Some("stop") => Verdict::Stopped,
            _ => Verdict::Denied,
        },
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
            Verdict::Timeout
        }
    }
}

// ------------------------------------------------------------------ Act

type CmdResult = Result<CommandResult, WireError>;

fn refused_by_controls() -> Option<WireError> {
    STATE.with(|s| {
        let s = s.borrow();
        if s.stopped {
            Some(wire(
                ErrorCode::Stopped,
                "the person pressed STOP in the Chaperone popup; nothing runs until they press Resume there",
            ))
        } else if s.paused {
            Some(wire(
                ErrorCode::Stopped,
                "the person paused Chaperone; nothing runs until they press Resume in the popup",
            ))
        } else {
            None
        }
    })
}

fn action_kind(action: &Action) -> ActionKind {
    match action {
        Action::Click => ActionKind::Click,
        Action::Type { submit, .. } | Action::TypeSecret { submit, .. } => ActionKind::Type { submit: *submit },
        Action::SelectOption { values } => ActionKind::SelectOption { options: values.clone() },
        Action::PressKey { key } => ActionKind::press_key(key),
        Action::Scroll { .. } => ActionKind::Scroll,
        Action::Hover => ActionKind::Hover,
        // The bridge sends it only for a tab the agent did not open.
        Action::CloseTab => ActionKind::CloseTab { opened_by_agent: false },
    }
}

/// Live facts about `target` (or the focused element when absent).
async fn resolve_live(tab: TabId, target: Option<&str>) -> Result<Option<ResolvedElement>, WireError> {
    let msg = to_js(&PageRequest::Resolve { target: target.map(str::to_string) });
    match commands::ask_page(tab, &msg).await {
        Ok(CommandResult::Element { element }) => Ok(Some(element)),
        Ok(_) => Err(wire(ErrorCode::Internal, "the page sent an invalid element")),
        Err(e) if target.is_none() && e.code == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// `Command::Resolve`. (A tab without the content script gets it only
/// when it shows an http(s) page; the URL the element reports is checked
/// too, so no extra tab lookup is needed.)
pub async fn resolve(tab: TabId, target: &str) -> CmdResult {
    let Some(element) = resolve_live(tab, Some(target)).await? else {
        return Err(wire(ErrorCode::NotFound, "no such element"));
    };
    if !commands::is_web_url(&element.url) {
        return Err(commands::not_a_web_page());
    }
    STATE.with(|s| s.borrow_mut().last_resolved = Some((tab, target.to_string(), element.clone())));
    Ok(CommandResult::Element { element })
}

/// The element resolved for the bridge just before, if this `Act` is about
/// it (same tab, ref and fingerprint). Taken at the start of every `Act`,
/// so it serves at most the one that follows its `Resolve` directly.
fn take_resolved(tab: TabId, target: Option<&str>, expect: Option<&Fingerprint>) -> Option<ResolvedElement> {
    let (t, r, element) = STATE.with(|s| s.borrow_mut().last_resolved.take())?;
    let fits = t == tab
        && Some(r.as_str()) == target
        && expect == Some(&element.fingerprint)
        && commands::is_web_url(&element.url);
    fits.then_some(element)
}

/// `Command::Act`: the whole gate, then the action.
pub async fn act(
    tab: TabId,
    target: Option<String>,
    action: Action,
    expect: Option<Fingerprint>,
    gate: Gate,
) -> CmdResult {
    let resolved = take_resolved(tab, target.as_deref(), expect.as_ref());
    ensure_loaded().await;
    if let Some(e) = refused_by_controls() {
        return Err(e);
    }
    if gate.decision == Decision::Deny {
        return Err(wire(ErrorCode::PermissionDenied, "the policy denies this action"));
    }
    let first_use = STATE.with(|s| s.borrow_mut().seen.insert(gate.request));
    if !first_use {
        return Err(wire(ErrorCode::InvalidRequest, "this request id was used already"));
    }
    let generation = STATE.with(|s| s.borrow().stop_generation);
    let close_tab = matches!(action, Action::CloseTab);
    if close_tab && target.is_some() {
        return Err(wire(ErrorCode::InvalidRequest, "closing a tab takes no ref"));
    }
    if target.is_some() && expect.is_none() {
        return Err(wire(ErrorCode::InvalidRequest, "an action on a ref needs the fingerprint it was resolved with"));
    }

    // The live element, classified here again: the one this worker
    // resolved for the bridge a moment ago, or a fresh resolution. Either
    // way the content script acts only while the element still resolves to
    // exactly these facts (`verify`), so what was classified — and shown
    // to the person — is what is acted on.
    let live = match resolved {
        Some(element) => Some(element),
        None if close_tab => None,
        None => {
            // Any tab can be closed (behind the gate); page actions need a web page.
            commands::require_web_page(tab).await?;
            resolve_live(tab, target.as_deref()).await?
        }
    };
    if let (Some(l), Some(want)) = (live.as_ref(), expect.as_ref())
        && l.fingerprint != *want
    {
        return Err(wire(
            ErrorCode::StaleRef,
            format!(
                "the element changed since it was resolved (now {} \"{}\"); take a new browser_snapshot",
                l.fingerprint.role, l.fingerprint.name
            ),
        ));
    }
    let url = match live.as_ref() {
        Some(l) => l.url.clone(),
        None => commands::tab_url(tab).await?,
    };
    // The bridge decided (site rules included) for one site; the person
    // may have taken the tab elsewhere since.
    if origin_of(&url) != gate.origin {
        return Err(wire(
            ErrorCode::StaleRef,
            "the tab is no longer on the page the action was decided for; take a new browser_snapshot",
        ));
    }
    let sensitive = live.as_ref().and_then(|l| l.sensitive.as_deref()).and_then(SensitiveKind::parse);
    let password = sensitive == Some(SensitiveKind::Password)
        || live.as_ref().is_some_and(|l| l.facts.input_type.eq_ignore_ascii_case("password"));
    if action.types_text() && password {
        return Err(wire(
            ErrorCode::PermissionDenied,
            "Chaperone never types into password fields: ask the person to log in by hand in this tab",
        ));
    }
    if (action.types_text() || matches!(action, Action::SelectOption { .. }))
        && sensitive.is_some_and(SensitiveKind::agent_may_never_fill)
    {
        return Err(wire(
            ErrorCode::PermissionDenied,
            "Chaperone never fills card or bank fields: the person enters those themselves",
        ));
    }
    let c = classify(&action_kind(&action), live.as_ref().map(|l| &l.facts), &url, sensitive);
    let live_decision = gate.policy.get(c.risk);
    if live_decision == Decision::Deny {
        return Err(wire(
            ErrorCode::PermissionDenied,
            format!("the site policy denies {} risk actions here ({})", c.risk.as_str(), c.reasons.join("; ")),
        ));
    }
    if matches!(action, Action::TypeSecret { .. }) && sensitive.is_none() {
        return Err(wire(ErrorCode::PermissionDenied, "a secret goes only into a field Chaperone treats as sensitive"));
    }
    let confirm = gate.person_must_answer || gate.decision == Decision::Confirm || live_decision == Decision::Confirm;
    let shown_risk = c.risk.max(gate.risk);
    let mut shown_reasons = gate.reasons.clone();
    for r in &c.reasons {
        if !shown_reasons.contains(r) {
            shown_reasons.push(r.clone());
        }
    }

    let decided_by = if !confirm {
        DecidedBy::Policy
    } else if STATE.with(|s| s.borrow().yolo) && !gate.person_must_answer {
        add_history(&gate.summary, shown_risk, "auto (YOLO)", &url);
        DecidedBy::Yolo
    } else {
        let timeout = gate.timeout_secs.clamp(1, MAX_TIMEOUT_SECS);
        let view = PendingView {
            request: gate.request,
            summary: gate.summary.clone(),
            risk: shown_risk.as_str().to_string(),
            reasons: shown_reasons.clone(),
            role: live.as_ref().map(|l| l.facts.role.clone()).unwrap_or_default(),
            name: live.as_ref().map(|l| l.facts.name.clone()).unwrap_or_default(),
            url: strip_query(&url),
            shows: live.as_ref().map(|l| shown_text(&l.facts)).unwrap_or_default(),
            goes_to: live.as_ref().map(|l| goes_to(&l.facts, &url)).unwrap_or_default(),
            deadline: now_ms() + timeout as f64 * 1000.0,
        };
        let on = (!close_tab).then_some((tab, target.as_deref()));
        match ask_person(view, timeout, on).await {
            Verdict::Approved => {
                add_history(&gate.summary, shown_risk, "approved", &url);
                DecidedBy::Human
            }
            Verdict::Denied => {
                add_history(&gate.summary, shown_risk, "denied", &url);
                return Err(wire(ErrorCode::ApprovalDenied, "the person denied this action; it did not run"));
            }
            Verdict::Timeout => {
                add_history(&gate.summary, shown_risk, "timeout", &url);
                return Err(wire(
                    ErrorCode::ApprovalDenied,
                    format!("timeout: no answer from the person within {timeout} s; the action did not run"),
                ));
            }
            Verdict::Stopped => {
                add_history(&gate.summary, shown_risk, "stopped", &url);
                return Err(wire(
                    ErrorCode::Stopped,
                    "the person pressed STOP while this action waited for approval; it did not run",
                ));
            }
        }
    };

    // STOP (or Pause) pressed since this action started: it does not run.
    let halted = || {
        if STATE.with(|s| s.borrow().stop_generation != generation) {
            return Some(wire(ErrorCode::Stopped, "the person pressed STOP; the action did not run"));
        }
        refused_by_controls()
    };
    if let Some(e) = halted() {
        return Err(e);
    }
    // A secret's value, only now that the gate let the action through.
    let action = crate::secret::reveal(tab, gate.request, action, &gate.origin).await?;
    if let Some(e) = halted() {
        return Err(e);
    }

    let mut report = if close_tab {
        close(tab, &url).await?
    } else {
        perform(tab, target.as_deref(), &action, live.as_ref()).await?
    };
    report.risk = c.risk;
    report.reasons = c.reasons;
    report.decided_by = decided_by;
    Ok(CommandResult::Acted { report })
}

/// The element's visible text when it says something its name does not.
fn shown_text(facts: &ElementFacts) -> String {
    let shown = normalize(&facts.visible_text);
    let name = normalize(&facts.name);
    if shown.is_empty() || shown.iter().all(|w| name.contains(w)) { String::new() } else { facts.visible_text.clone() }
}

/// The element's link or form target, when it is not the page itself
/// (fragment dropped, credentials in it redacted).
fn goes_to(facts: &ElementFacts, page: &str) -> String {
    let target = facts.target.split('#').next().unwrap_or("");
    if target.is_empty() || target == page.split('#').next().unwrap_or("") {
        return String::new();
    }
    shared::redact::redact_url(target)
}

/// Removes the tab (after the gate let it through).
async fn close(tab: TabId, url: &str) -> Result<ActReport, WireError> {
    let id = tab as f64;
    chrome::tabs_remove(id).await.map_err(|e| {
        let text = js_error_text(&e);
        if text.contains("No tab") {
            wire(ErrorCode::NotFound, format!("no tab {tab}"))
        } else {
            wire(ErrorCode::Internal, text)
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
    let before = commands::tab_url(tab).await.unwrap_or_default();
    let waiter = LoadWaiter::register(tab, false);
    let msg = to_js(&PageRequest::Act {
        target: target.map(str::to_string),
        action: action.clone(),
        verify: verify.map(|v| Box::new(v.clone())),
    });
    let reply = commands::ask_page(tab, &msg).await;
    let mut report = match reply {
        Ok(CommandResult::Acted { report }) => report,
        Ok(_) => {
            waiter.cancel();
            return Err(wire(ErrorCode::Internal, "the page sent an invalid report"));
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
    let mut now = commands::tab_url(tab).await.unwrap_or_default();
    if report.effect == Effect::Unknown {
        // The page went away before it could answer: a navigation is the
        // usual reason, but the tab may not report it yet. Give it a moment.
        for _ in 0..LOST_REPLY_POLLS {
            if waiter.seen_loading() || now != before {
                break;
            }
            crate::util::sleep(LOST_REPLY_POLL_MS).await;
            now = commands::tab_url(tab).await.unwrap_or_default();
        }
    }
    let navigating = report.effect == Effect::Navigated || waiter.seen_loading() || now != before;
    if navigating {
        let _ = waiter.wait_ms(tab, NAV_WAIT_MS).await;
        report.effect = Effect::Navigated;
        report.url = commands::tab_url(tab).await.unwrap_or(now);
    } else {
        waiter.cancel();
    }
    Ok(report)
}
