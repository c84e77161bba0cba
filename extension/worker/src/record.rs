//! "Record me" in the service worker (docs/design.md, "Record me and
//! flows"; what the page notes: the content script's `record.rs`; how
//! steps become a flow: `shared::record`, in the bridge).
//!
//! Behaviour, exactly:
//! - Only the popup starts and stops a recording ([`start`], [`stop`],
//!   through `crate::messages`). Starting needs a flow name
//!   (`shared::flow::check_flow_name`), the bridge connected, and a window
//!   that is not incognito; it tells the bridge (`RecordStart`), arms
//!   every open web tab that is not incognito (`PageRequest::Record`),
//!   and records the active tab's page as the first step. The state
//!   (`chrome.storage.session` key `record`, `messages::RecordState`: on, name, keep text, steps
//!   reported, pages armed) survives a worker restart; the badge says
//!   `REC` while it is on.
//! - While on, each tab is armed again when it finishes loading. A
//!   navigation is reported only when the browser started it for the
//!   person in the tab they are using (`webNavigation.onCommitted` of the
//!   top frame, `shared::record::person::navigation_counts`: typed in the
//!   address bar, a bookmark, an address-bar search; in the active tab of
//!   the last focused normal window). A link, a form, a script
//!   (`location`, `history`, `requestSubmit()`, a timer, meta refresh,
//!   `window.open`) or a redirect is never a step: when the person clicked
//!   or pressed Enter, that is the step. Back/Forward is told apart in the
//!   page (the content script), and heard only from the active tab.
//! - Reports from content scripts ([`on_page_message`]) are heard only
//!   from our own content script in the top frame of a tab that is not
//!   incognito, only while recording, at most `MAX_EVENTS_PER_SEC` a
//!   second per tab, and only as one exact `RecordedStep` (anything else
//!   is refused). A typed value is dropped here unless "Also keep the
//!   text I type" is on and neither the page nor
//!   `shared::record::descriptor_sensitivity` finds the field sensitive;
//!   the bridge checks again.
//! - Incognito tabs are never armed and nothing from them is reported.

use std::cell::RefCell;
use std::collections::HashMap;

use js_sys::{Array, Promise};
use serde::Deserialize;
use shared::flow::MAX_EVENTS_PER_SEC;
use shared::protocol::{ExtToBridge, PageRequest, TabId};
use shared::record::{RecordedAction, RecordedStep};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use crate::chrome;
use crate::messages::{RECORD_KEY as KEY, RecordState};
use crate::util::{from_js, get, now_ms, obj, sleep, to_js};

/// Tries to arm a page that is still loading its content script.
const ARM_TRIES: u32 = 20;
const ARM_RETRY_MS: u32 = 100;

type UpdatedListener = Closure<dyn FnMut(JsValue, JsValue, JsValue)>;
type CommittedListener = Closure<dyn FnMut(JsValue)>;

#[derive(Default)]
struct Inner {
    loaded: bool,
    state: RecordState,
    /// Per tab: the start of its one-second window and reports in it.
    rate: HashMap<TabId, (f64, u32)>,
    listener: Option<UpdatedListener>,
    committed: Option<CommittedListener>,
}

thread_local! {
    static INNER: RefCell<Inner> = RefCell::new(Inner::default());
}

fn state() -> RecordState {
    INNER.with(|i| i.borrow().state.clone())
}

/// Reads the state once per worker life and registers the tab listener.
pub async fn ensure_loaded() {
    install_listener();
    if INNER.with(|i| i.borrow().loaded) {
        return;
    }
    let stored = chrome::storage_session_get(&JsValue::from_str(KEY)).await.ok();
    let state: RecordState = stored.and_then(|s| from_js(&get(&s, KEY)).ok()).unwrap_or_default();
    let on = state.on;
    INNER.with(|i| {
        let mut i = i.borrow_mut();
        if !i.loaded {
            i.loaded = true;
            i.state = state;
        }
    });
    crate::badge::set_recording(on);
}

fn install_listener() {
    INNER.with(|i| {
        let mut i = i.borrow_mut();
        if i.listener.is_some() {
            return;
        }
        let cb = UpdatedListener::new(|tab_id: JsValue, change: JsValue, tab: JsValue| {
            spawn_local(on_updated(tab_id, change, tab));
        });
        chrome::tabs_on_updated_add_listener(cb.as_ref().unchecked_ref());
        i.listener = Some(cb);
        // `chrome.webNavigation.onCommitted` (the `webNavigation` permission).
        let on_committed = get(&get(&get(&js_sys::global(), "chrome"), "webNavigation"), "onCommitted");
        if let Ok(add) = get(&on_committed, "addListener").dyn_into::<js_sys::Function>() {
            let cb = CommittedListener::new(|details: JsValue| spawn_local(on_committed_nav(details)));
            let _ = add.call1(&on_committed, cb.as_ref());
            i.committed = Some(cb);
        }
    });
}

fn save() {
    let s = state();
    let items = obj(&[(KEY, to_js(&s))]);
    spawn_local(async move {
        let _ = chrome::storage_session_set(&items).await;
    });
}

fn update(f: impl FnOnce(&mut RecordState)) {
    INNER.with(|i| f(&mut i.borrow_mut().state));
    save();
}

/// The popup's "Record me" switched on with a flow name.
pub async fn start(name: String, keep_text: bool) -> Result<(), String> {
    ensure_loaded().await;
    let name = name.trim().to_string();
    shared::flow::check_flow_name(&name).map_err(|e| e.message().to_string())?;
    if state().on {
        return Err("a recording is already on: switch it off first".into());
    }
    if !crate::conn::status().connected {
        return Err("the bridge is not connected: recordings are saved there".into());
    }
    let window = chrome::windows_get_last_focused().await.unwrap_or(JsValue::UNDEFINED);
    if get(&window, "incognito").as_bool() == Some(true) {
        return Err("Record me is never on in incognito windows".into());
    }
    crate::conn::send_current(&ExtToBridge::RecordStart { name: name.clone(), keep_text });
    update(|s| *s = RecordState { on: true, name, keep_text, steps: 0, armed: 0 });
    crate::badge::set_recording(true);
    let tabs = web_tabs().await;
    // The page the person is on is where the flow starts.
    let active = tabs.iter().find(|t| get(t, "active").as_bool() == Some(true) && window_of(t) == window_id(&window));
    if let Some(tab) = active
        && let (Some(id), Some(url)) = (tab_id_of(tab), get(tab, "url").as_string())
    {
        report_navigation(id, &url, &get(tab, "title").as_string().unwrap_or_default());
    }
    for tab in tabs {
        if let Some(id) = tab_id_of(&tab) {
            spawn_local(arm(id, true));
        }
    }
    Ok(())
}

/// The popup's "Record me" switched off: the bridge saves the flow.
pub async fn stop() {
    ensure_loaded().await;
    if !state().on {
        return;
    }
    update(|s| s.on = false);
    crate::badge::set_recording(false);
    crate::conn::send_current(&ExtToBridge::RecordStop {});
    for tab in web_tabs().await {
        if let Some(id) = tab_id_of(&tab) {
            spawn_local(arm(id, false));
        }
    }
}

/// Open http(s) tabs that are not incognito.
async fn web_tabs() -> Vec<JsValue> {
    let all = chrome::tabs_query(&obj(&[])).await.unwrap_or(JsValue::UNDEFINED);
    let all: Array = all.dyn_into().unwrap_or_default();
    all.iter()
        .filter(|t| get(t, "incognito").as_bool() != Some(true))
        .filter(|t| get(t, "url").as_string().is_some_and(|u| crate::tabs::is_web_url(&u)))
        .collect()
}

fn tab_id_of(tab: &JsValue) -> Option<TabId> {
    get(tab, "id").as_f64().map(|t| t as TabId)
}

fn window_of(tab: &JsValue) -> Option<f64> {
    get(tab, "windowId").as_f64()
}

fn window_id(window: &JsValue) -> Option<f64> {
    get(window, "id").as_f64()
}

/// Switches the tab's page recording on or off, retrying while its
/// content script is not there yet (a page still loading).
async fn arm(tab: TabId, on: bool) {
    let keep_text = state().keep_text;
    let msg = PageRequest::Record { on, keep_text };
    for _ in 0..ARM_TRIES {
        if on && !state().on {
            return;
        }
        match crate::tabs::ask_page(tab, &msg).await {
            Ok(_) => {
                if on {
                    update(|s| s.armed += 1);
                }
                return;
            }
            Err(_) => sleep(ARM_RETRY_MS).await,
        }
    }
}

async fn on_updated(tab_id: JsValue, change: JsValue, tab: JsValue) {
    ensure_loaded().await;
    if !state().on || get(&tab, "incognito").as_bool() == Some(true) {
        return;
    }
    let Some(id) = tab_id.as_f64().map(|t| t as TabId) else { return };
    let url = get(&tab, "url").as_string().unwrap_or_default();
    if get(&change, "status").as_string().as_deref() == Some("complete") && crate::tabs::is_web_url(&url) {
        arm(id, true).await;
    }
}

/// A top-frame commit: a step when the person typed it (see the module docs).
async fn on_committed_nav(details: JsValue) {
    ensure_loaded().await;
    if !state().on || get(&details, "frameId").as_f64() != Some(0.0) {
        return;
    }
    let (Some(tab), Some(url)) = (get(&details, "tabId").as_f64(), get(&details, "url").as_string()) else { return };
    if !crate::tabs::is_web_url(&url) {
        return;
    }
    let transition = get(&details, "transitionType").as_string().unwrap_or_default();
    let qualifiers: Vec<String> = get(&details, "transitionQualifiers")
        .dyn_into::<Array>()
        .map(|a| a.iter().filter_map(|q| q.as_string()).take(16).collect())
        .unwrap_or_default();
    let qualifiers: Vec<&str> = qualifiers.iter().map(String::as_str).collect();
    let signal = shared::record::person::NavSignal::Committed { transition_type: &transition, qualifiers: &qualifiers };
    // Only what the browser started for the person is worth asking about.
    if shared::record::person::navigation_counts(signal, true).is_err() {
        return;
    }
    let info = chrome::tabs_get(tab).await.unwrap_or(JsValue::UNDEFINED);
    let person_tab = is_person_tab(&info).await;
    if shared::record::person::navigation_counts(signal, person_tab).is_err() {
        return;
    }
    report_navigation(tab as TabId, &url, &get(&info, "title").as_string().unwrap_or_default());
}

/// The tab the person is using: the active tab of the last focused normal
/// window, not incognito.
async fn is_person_tab(tab: &JsValue) -> bool {
    if get(tab, "active").as_bool() != Some(true) || get(tab, "incognito").as_bool() != Some(false) {
        return false;
    }
    let windows = get(&get(&js_sys::global(), "chrome"), "windows");
    let Ok(last_focused) = get(&windows, "getLastFocused").dyn_into::<js_sys::Function>() else { return false };
    let types = obj(&[("windowTypes", Array::of1(&JsValue::from_str("normal")).into())]);
    let Ok(promise) = last_focused.call1(&windows, &types).and_then(|p| p.dyn_into::<Promise>()) else { return false };
    let window = wasm_bindgen_futures::JsFuture::from(promise).await.unwrap_or(JsValue::UNDEFINED);
    window_id(&window).is_some() && window_id(&window) == window_of(tab)
}

fn report_navigation(tab: TabId, url: &str, title: &str) {
    let mut title = title.to_string();
    shared::limits::truncate_chars(&mut title, shared::limits::MAX_NAME_CHARS);
    let url = shared::flow::step_url(url);
    relay(
        tab,
        RecordedStep {
            action: RecordedAction::Navigate { url: url.clone() },
            target: None,
            autocomplete: String::new(),
            sensitive: false,
            url,
            title,
        },
    );
}

/// One report from a content script (`sender` is checked by the caller
/// to be this extension's): see the module docs.
pub fn on_page_message(msg: JsValue, sender: JsValue) -> Promise {
    wasm_bindgen_futures::future_to_promise(async move {
        ensure_loaded().await;
        Ok(JsValue::from_bool(heard(&msg, &sender)))
    })
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum PageMessage {
    Recorded { step: RecordedStep },
}

fn heard(msg: &JsValue, sender: &JsValue) -> bool {
    let tab = get(sender, "tab");
    if !state().on || get(&tab, "incognito").as_bool() != Some(false) || get(sender, "frameId").as_f64() != Some(0.0) {
        return false;
    }
    let Some(id) = tab_id_of(&tab) else { return false };
    let Ok(PageMessage::Recorded { mut step }) = from_js::<PageMessage>(msg) else { return false };
    // Back/Forward (the page tells it apart) only from the tab in front.
    if matches!(step.action, RecordedAction::Navigate { .. }) && get(&tab, "active").as_bool() != Some(true) {
        return false;
    }
    let s = state();
    if let RecordedAction::Fill { text } = &mut step.action {
        let sensitive =
            step.sensitive || step.target.as_ref().is_some_and(|d| shared::record::descriptor_sensitivity(d).is_some());
        if !s.keep_text || sensitive {
            *text = None;
        }
    }
    relay(id, step)
}

/// Sends one step to the bridge within the tab's rate.
fn relay(tab: TabId, step: RecordedStep) -> bool {
    let now = now_ms();
    let allowed = INNER.with(|i| {
        let mut i = i.borrow_mut();
        let entry = i.rate.entry(tab).or_insert((now, 0));
        if now - entry.0 >= 1000.0 {
            *entry = (now, 0);
        }
        entry.1 += 1;
        entry.1 <= MAX_EVENTS_PER_SEC
    });
    if !allowed {
        return false;
    }
    crate::conn::send_current(&ExtToBridge::Recorded { tab, step });
    update(|s| s.steps += 1);
    true
}

/// Whether `sender` is our content script (not one of our pages).
pub fn is_content_script(sender: &JsValue) -> bool {
    let our_id = chrome::runtime_id();
    !our_id.is_empty()
        && get(sender, "id").as_string() == Some(our_id)
        && get(sender, "tab").is_object()
        && get(sender, "url").as_string().is_some_and(|u| crate::tabs::is_web_url(&u))
}
