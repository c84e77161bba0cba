//! The bridge's MCP sessions as the browser shows them
//! (`shared::sessions`; the bridge decides who owns which tab and sends
//! `BridgeToExt::Sessions` on every change).
//!
//! - Tab groups: each session's tabs in its own tab group per window,
//!   titled with the client's label and coloured
//!   (`shared::sessions::group_colour`). A tab that no session has any more
//!   (its session ended, or the person took it back) is ungrouped if it is
//!   still in a group we made. Groups are reconciled one pass at a time,
//!   always towards the latest frame; a closed tab or a group the person
//!   removed costs nothing but a skipped step.
//! - The popup: the list is published under `chrome.storage.session` key
//!   [`KEY`] (agent, tab count), and "Let <client> use this tab" sends
//!   `ExtToBridge::GiveTab` ([`give`]).
//! - Approval cards name the agent whose tab asks ([`client_of`]).

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

use shared::protocol::{ExtToBridge, TabId};
use shared::sessions::{SessionInfo, SessionKey};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use crate::chrome;
use crate::util::{get, obj, to_js};

/// The `chrome.storage.session` key of the sessions list (`Vec<SessionInfo>`).
pub const KEY: &str = "sessions";

#[derive(Default)]
struct State {
    sessions: Vec<SessionInfo>,
    /// Our group of each (session, window).
    groups: HashMap<(SessionKey, i64), f64>,
    /// Tabs we put in a group (to ungroup when released).
    grouped: HashSet<TabId>,
    /// A pass is running; `dirty`: another frame came meanwhile.
    running: bool,
    dirty: bool,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// The bridge's latest list.
pub fn update(mut sessions: Vec<SessionInfo>) {
    // The bridge sanitised them; once more before they reach a page.
    for s in &mut sessions {
        s.client = shared::sessions::client_label(&s.client);
    }
    let start = STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.sessions = sessions;
        s.dirty = true;
        !std::mem::replace(&mut s.running, true)
    });
    spawn_local(publish());
    if start {
        spawn_local(reconcile());
    }
}

/// The label of the agent that owns `tab`, if one does.
pub fn client_of(tab: TabId) -> Option<String> {
    owner_of(tab).map(|(_, client)| client)
}

/// The session that owns `tab` and its label, if one does.
pub fn owner_of(tab: TabId) -> Option<(SessionKey, String)> {
    STATE.with(|s| s.borrow().sessions.iter().find(|i| i.tabs.contains(&tab)).map(|i| (i.key, i.client.clone())))
}

/// Every agent tab (of any session).
pub fn agent_tabs() -> Vec<TabId> {
    STATE.with(|s| s.borrow().sessions.iter().flat_map(|i| i.tabs.iter().copied()).collect())
}

/// The person's "Let <client> use this tab".
pub fn give(tab: TabId, session: SessionKey) -> bool {
    let known = STATE.with(|s| s.borrow().sessions.iter().any(|i| i.key == session));
    if known {
        crate::conn::send_current(&ExtToBridge::GiveTab { tab, session });
    }
    known
}

async fn publish() {
    let value = STATE.with(|s| to_js(&s.borrow().sessions));
    if let Err(e) = chrome::storage_session_set(&obj(&[(KEY, value)])).await {
        web_sys::console::warn_1(&e);
    }
}

/// Passes until no frame came during the last one.
async fn reconcile() {
    loop {
        let sessions = STATE.with(|s| {
            let mut s = s.borrow_mut();
            s.dirty = false;
            s.sessions.clone()
        });
        pass(&sessions).await;
        let again = STATE.with(|s| {
            let mut s = s.borrow_mut();
            if !s.dirty {
                s.running = false;
            }
            s.dirty
        });
        if !again {
            return;
        }
    }
}

async fn pass(sessions: &[SessionInfo]) {
    let owned: HashSet<TabId> = sessions.iter().flat_map(|i| i.tabs.iter().copied()).collect();
    // Released tabs first: ungrouped if still in a group of ours.
    let released: Vec<TabId> =
        STATE.with(|s| s.borrow().grouped.iter().copied().filter(|t| !owned.contains(t)).collect());
    let ours: HashSet<i64> = STATE.with(|s| s.borrow().groups.values().map(|g| *g as i64).collect());
    for tab in released {
        STATE.with(|s| s.borrow_mut().grouped.remove(&tab));
        let Some(t) = get_tab(tab).await else { continue };
        if t.group_id().is_some_and(|g| ours.contains(&(g as i64))) {
            let _ = chrome::tabs_ungroup(tab as f64).await;
        }
    }
    for info in sessions {
        for &tab in &info.tabs {
            group_tab(info, tab).await;
        }
    }
    // Forget groups of sessions that are gone.
    let keys: HashSet<SessionKey> = sessions.iter().map(|i| i.key).collect();
    STATE.with(|s| s.borrow_mut().groups.retain(|(k, _), _| keys.contains(k)));
}

async fn get_tab(tab: TabId) -> Option<chrome::Tab> {
    chrome::tabs_get(tab as f64).await.ok().map(|t| t.unchecked_into())
}

/// Puts `tab` into `info`'s group of its window (made when there is none).
async fn group_tab(info: &SessionInfo, tab: TabId) {
    let Some(t) = get_tab(tab).await else { return };
    let Some(window) = t.window_id().map(|w| w as i64) else { return };
    let current = t.group_id().filter(|g| *g >= 0.0);
    let mine = STATE.with(|s| s.borrow().groups.get(&(info.key, window)).copied());
    if mine.is_some() && current == mine {
        STATE.with(|s| s.borrow_mut().grouped.insert(tab));
        return;
    }
    // A group of ours that the person closed is gone: make a new one.
    let alive = match mine {
        Some(g) => chrome::tab_groups_get(g).await.is_ok().then_some(g),
        None => None,
    };
    let options = match alive {
        Some(g) => obj(&[("tabIds", JsValue::from_f64(tab as f64)), ("groupId", JsValue::from_f64(g))]),
        None => obj(&[
            ("tabIds", JsValue::from_f64(tab as f64)),
            ("createProperties", obj(&[("windowId", JsValue::from_f64(window as f64))]).into()),
        ]),
    };
    let Ok(group) = chrome::tabs_group(&options).await else { return };
    let Some(group) = group.as_f64() else { return };
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.groups.insert((info.key, window), group);
        s.grouped.insert(tab);
    });
    if alive.is_none() {
        let props =
            obj(&[("title", JsValue::from_str(&info.client)), ("color", JsValue::from_str(info.colour.as_str()))]);
        if let Err(e) = chrome::tab_groups_update(group, &props).await {
            web_sys::console::warn_1(&e);
        }
    }
}

/// The sessions as the popup reads them from storage.
pub fn parse(value: &JsValue) -> Vec<SessionInfo> {
    if value.is_undefined() || value.is_null() {
        return Vec::new();
    }
    crate::util::from_js(value).unwrap_or_default()
}

/// The list as last published (for the popup).
pub async fn load() -> Vec<SessionInfo> {
    match chrome::storage_session_get(&JsValue::from_str(KEY)).await {
        Ok(items) => parse(&get(&items, KEY)),
        Err(_) => Vec::new(),
    }
}
