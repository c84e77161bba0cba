//! Runs one bridge command against the browser (docs/design.md, "Processes
//! and channels" and "Observation").

use std::cell::RefCell;

use js_sys::{Array, Function, Promise};
use shared::error::{ErrorCode, WireError};
use shared::limits::{COMMAND_TIMEOUT_MS, NAVIGATION_TIMEOUT_MS};
use shared::protocol::{Command, CommandResult, HistoryStep, Outcome, PageRequest, TabId, TabInfo};
use shared::snapshot::{PageSnapshot, SnapshotRequest, TextRequest};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::chrome::{self, Tab};
use crate::util::{get, js_error_text, obj, to_js, wire, with_timeout};

pub async fn run(command: Command) -> Outcome {
    let result = match command {
        Command::TabsList { tabs } => tabs_list(&tabs).await,
        Command::TabNew { url } => tab_new(url).await,
        Command::TabSelect { tab } => tab_select(tab).await,
        Command::TabClose { tab } => tab_close(tab).await,
        Command::Navigate { tab, url } => navigate(tab, &url).await,
        Command::History { tab, step } => history(tab, step).await,
        Command::Snapshot { tab, request } => snapshot(tab, request).await,
        Command::ExtractText { tab, request } => extract_text(tab, request).await,
        Command::Screenshot { tab } => screenshot(tab).await,
        Command::Resolve { tab, target } => crate::gate::resolve(tab, &target).await,
        // Every action goes through the gate: STOP/Pause, live
        // re-classification, the person's approval (crate::gate).
        Command::Act { tab, target, action, expect, gate } => crate::gate::act(tab, target, action, expect, gate).await,
    };
    match result {
        Ok(r) => Outcome::Ok(r),
        Err(e) => Outcome::Err(e),
    }
}

type CmdResult = Result<CommandResult, WireError>;

fn tab_id(tab: TabId) -> Result<f64, WireError> {
    if (0..=i32::MAX as i64).contains(&tab) {
        Ok(tab as f64)
    } else {
        Err(wire(ErrorCode::NotFound, format!("no tab {tab}")))
    }
}

fn info(tab: &Tab) -> TabInfo {
    TabInfo {
        id: tab.id().unwrap_or(-1.0) as TabId,
        url: tab.url().filter(|u| !u.is_empty()).or_else(|| tab.pending_url()).unwrap_or_default(),
        title: tab.title().unwrap_or_default(),
        active: tab.active().unwrap_or(false),
    }
}

/// Maps a rejected tabs API call to NOT_FOUND when the tab is gone.
fn tab_error(tab: TabId, e: &JsValue) -> WireError {
    let text = js_error_text(e);
    if text.contains("No tab with id") || text.contains("No tab") {
        wire(ErrorCode::NotFound, format!("no tab {tab}"))
    } else {
        wire(ErrorCode::Internal, text)
    }
}

async fn get_tab(tab: TabId) -> Result<Tab, WireError> {
    let id = tab_id(tab)?;
    chrome::tabs_get(id).await.map(JsCast::unchecked_into).map_err(|e| tab_error(tab, &e))
}

/// The tab's URL (its pending URL while a navigation starts).
pub(crate) async fn tab_url(tab: TabId) -> Result<String, WireError> {
    Ok(info(&get_tab(tab).await?).url)
}

async fn tabs_list(tabs: &[TabId]) -> CmdResult {
    let mut out = Vec::new();
    for &t in tabs {
        if let Ok(tab) = get_tab(t).await {
            out.push(info(&tab));
        }
    }
    Ok(CommandResult::Tabs { tabs: out })
}

async fn tab_new(url: Option<String>) -> CmdResult {
    let target = url.clone().unwrap_or_else(|| "about:blank".into());
    let props = obj(&[("url", JsValue::from_str(&target)), ("active", JsValue::TRUE)]);
    let created: Tab =
        chrome::tabs_create(&props).await.map_err(|e| wire(ErrorCode::Internal, js_error_text(&e)))?.unchecked_into();
    let id = created.id().ok_or_else(|| wire(ErrorCode::Internal, "the new tab has no id"))? as TabId;
    if url.is_some() {
        let waiter = LoadWaiter::register(id, true);
        if created.status().as_deref() == Some("complete") {
            waiter.cancel();
        } else {
            waiter.wait(id).await?;
        }
    }
    Ok(CommandResult::Tab { tab: info(&get_tab(id).await?) })
}

async fn tab_select(tab: TabId) -> CmdResult {
    let id = tab_id(tab)?;
    let updated: Tab = chrome::tabs_update(id, &obj(&[("active", JsValue::TRUE)]))
        .await
        .map_err(|e| tab_error(tab, &e))?
        .unchecked_into();
    if let Some(w) = updated.window_id() {
        let _ = chrome::windows_update(w, &obj(&[("focused", JsValue::TRUE)])).await;
    }
    Ok(CommandResult::Tab { tab: info(&get_tab(tab).await?) })
}

async fn tab_close(tab: TabId) -> CmdResult {
    let id = tab_id(tab)?;
    get_tab(tab).await?;
    chrome::tabs_remove(id).await.map_err(|e| tab_error(tab, &e))?;
    Ok(CommandResult::Closed { tab })
}

async fn navigate(tab: TabId, url: &str) -> CmdResult {
    // The bridge has validated the URL already; refuse anything but http(s) anyway.
    if !is_web_url(url) {
        return Err(wire(ErrorCode::InvalidRequest, "only http(s) URLs can be opened"));
    }
    let id = tab_id(tab)?;
    get_tab(tab).await?;
    let waiter = LoadWaiter::register(tab, false);
    if let Err(e) = chrome::tabs_update(id, &obj(&[("url", JsValue::from_str(url))])).await {
        waiter.cancel();
        return Err(tab_error(tab, &e));
    }
    waiter.wait(tab).await?;
    Ok(CommandResult::Tab { tab: info(&get_tab(tab).await?) })
}

async fn history(tab: TabId, step: HistoryStep) -> CmdResult {
    let id = tab_id(tab)?;
    get_tab(tab).await?;
    let waiter = LoadWaiter::register(tab, false);
    let r = match step {
        HistoryStep::Back => chrome::tabs_go_back(id).await,
        HistoryStep::Forward => chrome::tabs_go_forward(id).await,
        HistoryStep::Reload => chrome::tabs_reload(id).await,
    };
    if let Err(e) = r {
        let text = js_error_text(&e);
        let delta = match step {
            HistoryStep::Back => -1,
            HistoryStep::Forward => 1,
            HistoryStep::Reload => 0,
        };
        if delta != 0 && text.contains("Cannot find") {
            // Chrome skips entries its history intervention marks (pages
            // left without a user gesture); the page's own history does not.
            let msg = to_js(&PageRequest::History { delta });
            if let Err(e) = ask_page(tab, &msg).await {
                waiter.cancel();
                return Err(e);
            }
        } else {
            waiter.cancel();
            return Err(tab_error(tab, &e));
        }
    }
    waiter.wait(tab).await?;
    Ok(CommandResult::Tab { tab: info(&get_tab(tab).await?) })
}

// ---------------------------------------------------------------- snapshot

// Only http(s) pages have the content script; other pages are refused when
// they do not answer (`ask_page_text`), which saves a `tabs.get` a call.
async fn snapshot(tab: TabId, request: SnapshotRequest) -> CmdResult {
    Ok(CommandResult::Snapshot { snapshot: page_snapshot(tab, request).await? })
}

/// A snapshot from the page, its challenge decided here from the signals
/// the content script gathered (which go no further).
async fn page_snapshot(tab: TabId, request: SnapshotRequest) -> Result<PageSnapshot, WireError> {
    let msg = to_js(&PageRequest::Snapshot { request });
    let text = ask_page_text(tab, &msg).await?;
    // Read straight into its one expected shape (no buffering of a
    // snapshot that can hold tens of thousands of nodes).
    match shared::protocol::snapshot_outcome_from_json(&text) {
        Ok(Ok(mut snapshot)) => {
            snapshot.decide_challenge();
            Ok(snapshot)
        }
        Ok(Err(e)) => Err(e),
        Err(_) => Err(wire(ErrorCode::Internal, "the page sent an invalid snapshot")),
    }
}

async fn extract_text(tab: TabId, request: TextRequest) -> CmdResult {
    let msg = to_js(&PageRequest::ExtractText { request });
    match ask_page(tab, &msg).await? {
        r @ CommandResult::Text { .. } => Ok(r),
        _ => Err(wire(ErrorCode::Internal, "the page sent invalid text")),
    }
}

/// `Command::Screenshot`: asks the page whether it shows a security
/// challenge (a fresh interactive-only snapshot; refused when it does),
/// makes the tab the active one of its window, then captures it as PNG.
async fn screenshot(tab: TabId) -> CmdResult {
    let request = SnapshotRequest { interactive_only: true, ..SnapshotRequest::default() };
    let snapshot = page_snapshot(tab, request).await?;
    if snapshot.challenge.is_some() {
        return Err(wire(
            ErrorCode::SecurityChallenge,
            "the page shows a security challenge (CAPTCHA or similar); no screenshot is taken. Ask the person to \
             solve it by hand",
        ));
    }
    let url = snapshot.url;
    let page = get_tab(tab).await?;
    let window = page.window_id().ok_or_else(|| wire(ErrorCode::Internal, "the tab has no window"))?;
    if page.active() != Some(true) {
        chrome::tabs_update(tab_id(tab)?, &obj(&[("active", JsValue::TRUE)])).await.map_err(|e| tab_error(tab, &e))?;
    }
    // The tab may have navigated since the check: capture only the same page.
    let now = info(&get_tab(tab).await?).url;
    if now != url {
        return Err(wire(ErrorCode::StaleRef, "the page changed while the screenshot was prepared; try again"));
    }
    let data = chrome::tabs_capture_visible_tab(window, &obj(&[("format", JsValue::from_str("png"))]))
        .await
        .map_err(|e| wire(ErrorCode::Internal, format!("cannot capture the tab: {}", js_error_text(&e))))?;
    let data = data.as_string().unwrap_or_default();
    let png_base64 = data
        .strip_prefix("data:image/png;base64,")
        .ok_or_else(|| wire(ErrorCode::Internal, "the capture is not a PNG"))?
        .to_string();
    Ok(CommandResult::Image { png_base64, url })
}

/// Only http(s) pages have our content script.
pub(crate) async fn require_web_page(tab: TabId) -> Result<(), WireError> {
    let page = get_tab(tab).await?;
    if is_web_url(&page.url().unwrap_or_default()) { Ok(()) } else { Err(not_a_web_page()) }
}

/// `http://` or `https://`, in any case.
pub(crate) fn is_web_url(url: &str) -> bool {
    let scheme = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    scheme.starts_with("http://") || scheme.starts_with("https://")
}

pub(crate) fn not_a_web_page() -> WireError {
    wire(ErrorCode::InvalidRequest, "only http(s) pages can be read")
}

/// Sends `msg` to the content script of `tab` (injecting it once if the
/// tab has none yet) and decodes its `Outcome`.
pub(crate) async fn ask_page(tab: TabId, msg: &JsValue) -> CmdResult {
    let text = ask_page_text(tab, msg).await?;
    match serde_json::from_str::<Outcome>(&text) {
        Ok(Outcome::Ok(r)) => Ok(r),
        Ok(Outcome::Err(e)) => Err(e),
        Err(_) => Err(wire(ErrorCode::Internal, "the page sent an invalid answer")),
    }
}

/// Sends `msg` to the content script of `tab` and returns its answer (JSON
/// text). A tab without the content script gets it injected once, if it
/// shows an http(s) page (`INVALID_REQUEST` otherwise).
async fn ask_page_text(tab: TabId, msg: &JsValue) -> Result<String, WireError> {
    let id = tab_id(tab)?;
    let reply = match ask_content(id, msg).await {
        Err(e) if no_receiver(&e) => {
            require_web_page(tab).await?;
            // Tab loaded before the extension: inject the loader and retry once.
            let injection = obj(&[
                ("target", obj(&[("tabId", JsValue::from_f64(id))]).into()),
                ("files", Array::of1(&JsValue::from_str("content.js")).into()),
            ]);
            chrome::scripting_execute_script(&injection)
                .await
                .map_err(|e| wire(ErrorCode::Internal, format!("cannot reach the page: {}", js_error_text(&e))))?;
            ask_content(id, msg).await
        }
        other => other,
    };
    let reply = reply.map_err(|e| match e {
        AskError::Timeout => wire(ErrorCode::Timeout, "the page did not answer in time"),
        AskError::Js(e) => tab_error(tab, &e),
    })?;
    reply.as_string().ok_or_else(|| wire(ErrorCode::Internal, "the page gave no answer"))
}

enum AskError {
    Timeout,
    Js(JsValue),
}

fn no_receiver(e: &AskError) -> bool {
    match e {
        AskError::Js(e) => {
            let t = js_error_text(e);
            t.contains("Receiving end does not exist") || t.contains("Could not establish connection")
        }
        AskError::Timeout => false,
    }
}

async fn ask_content(id: f64, msg: &JsValue) -> Result<JsValue, AskError> {
    let p = chrome::tabs_send_message(id, msg).map_err(AskError::Js)?;
    match with_timeout(p, COMMAND_TIMEOUT_MS as u32 - 5_000).await {
        Ok(Some(v)) => Ok(v),
        Ok(None) => Err(AskError::Timeout),
        Err(e) => Err(AskError::Js(e)),
    }
}

// ---------------------------------------------------------------- page loads

struct Waiting {
    key: u64,
    tab: TabId,
    seen_loading: bool,
    resolve: Function,
}

type UpdatedListener = Closure<dyn FnMut(JsValue, JsValue, JsValue)>;

#[derive(Default)]
struct Loads {
    next_key: u64,
    waiting: Vec<Waiting>,
    listener: Option<UpdatedListener>,
}

thread_local! {
    static LOADS: RefCell<Loads> = RefCell::new(Loads::default());
}

/// Registers the `tabs.onUpdated` listener once for the worker's lifetime.
pub fn install_listeners() {
    LOADS.with(|l| {
        let mut l = l.borrow_mut();
        if l.listener.is_some() {
            return;
        }
        let cb = UpdatedListener::new(on_updated);
        chrome::tabs_on_updated_add_listener(cb.as_ref().unchecked_ref());
        l.listener = Some(cb);
    });
}

fn on_updated(tab_id: JsValue, change: JsValue, _tab: JsValue) {
    let Some(tab) = tab_id.as_f64().map(|t| t as TabId) else { return };
    let status = get(&change, "status").as_string();
    let url_changed = !get(&change, "url").is_undefined();
    let done: Vec<Function> = LOADS.with(|l| {
        let mut l = l.borrow_mut();
        let mut done = Vec::new();
        l.waiting.retain_mut(|w| {
            if w.tab != tab {
                return true;
            }
            if status.as_deref() == Some("loading") || url_changed {
                w.seen_loading = true;
            }
            if status.as_deref() == Some("complete") && w.seen_loading {
                done.push(w.resolve.clone());
                return false;
            }
            true
        });
        done
    });
    for f in done {
        let _ = f.call0(&JsValue::NULL);
    }
}

/// Waits for `tabs.onUpdated` to report the tab's next complete load.
pub(crate) struct LoadWaiter {
    key: u64,
    promise: Promise,
}

impl LoadWaiter {
    pub(crate) fn register(tab: TabId, seen_loading: bool) -> LoadWaiter {
        install_listeners();
        let key = LOADS.with(|l| {
            let mut l = l.borrow_mut();
            l.next_key += 1;
            l.next_key
        });
        let promise = Promise::new(&mut |resolve, _reject| {
            LOADS.with(|l| l.borrow_mut().waiting.push(Waiting { key, tab, seen_loading, resolve }));
        });
        LoadWaiter { key, promise }
    }

    pub(crate) fn cancel(&self) {
        LOADS.with(|l| l.borrow_mut().waiting.retain(|w| w.key != self.key));
    }

    /// A load started (or already finished) since registration.
    pub(crate) fn seen_loading(&self) -> bool {
        LOADS.with(|l| l.borrow().waiting.iter().find(|w| w.key == self.key).is_none_or(|w| w.seen_loading))
    }

    async fn wait(self, tab: TabId) -> Result<(), WireError> {
        self.wait_ms(tab, NAVIGATION_TIMEOUT_MS as u32).await
    }

    pub(crate) async fn wait_ms(self, tab: TabId, ms: u32) -> Result<(), WireError> {
        let r = with_timeout(self.promise.clone(), ms).await;
        self.cancel();
        match r {
            Ok(Some(_)) => Ok(()),
            Ok(None) | Err(_) => {
                // Same-document navigations may not report a new load: accept a
                // tab that has finished loading by now.
                match get_tab(tab).await {
                    Ok(t) if t.status().as_deref() == Some("complete") => Ok(()),
                    Ok(_) => Err(wire(ErrorCode::Timeout, "the page did not finish loading in time")),
                    Err(e) => Err(e),
                }
            }
        }
    }
}
