//! The browser's "download multiple files" question, for agent tabs
//! (issue 30). Chromium lets a tab download one file on its own and holds
//! every further one for the person's permission (headless, it refuses):
//! an agent clicking seven download links lost six, silently. In an agent
//! tab every download already goes through Chaperone (cancelled while
//! downloads are off; the policy, and the person per policy, otherwise),
//! so the browser's question is the same question asked twice, of someone
//! who cannot tell the agent's downloads from their own.
//!
//! So the worker keeps `chrome.contentSettings.automaticDownloads` at
//! `allow` for exactly the origins agent tabs show
//! (`shared::downloads::automatic_downloads_pattern`), recomputed whenever
//! the sessions list (`lib.rs`, on the bridge's `Sessions` frame) or an
//! agent tab's URL (this module's own `tabs.onUpdated` listener) changes,
//! and cleared when the worker starts and when no agent tab is left. Content settings are per
//! origin: while an agent tab shows an origin, the person's own tabs at
//! that origin are not asked either (SECURITY.md). Whatever the browser
//! still holds or refuses is reported (`downloads::HELD_MS`).

use std::cell::RefCell;
use std::collections::BTreeSet;

use js_sys::{Array, Object};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use crate::util::{get, obj};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["chrome", "contentSettings", "automaticDownloads"], js_name = set, catch)]
    async fn automatic_downloads_set(details: &Object) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "contentSettings", "automaticDownloads"], js_name = clear, catch)]
    async fn automatic_downloads_clear(details: &Object) -> Result<JsValue, JsValue>;
}

/// `tabs.onUpdated(tabId, changeInfo, tab)`.
type UpdatedListener = Closure<dyn FnMut(JsValue, JsValue, JsValue)>;

#[derive(Default)]
struct State {
    /// The patterns set to `allow` now.
    applied: BTreeSet<String>,
    /// Nothing applied yet since the worker started (a clear is due).
    fresh: bool,
    running: bool,
    dirty: bool,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State { fresh: true, ..State::default() });
    /// The `tabs.onUpdated` listener, for the worker's lifetime.
    static ON_UPDATED: RefCell<Option<UpdatedListener>> = const { RefCell::new(None) };
}

/// Listens for agent tabs' URL changes (once, at the worker's start).
pub fn install_listeners() {
    ON_UPDATED.with(|l| {
        let mut l = l.borrow_mut();
        if l.is_some() {
            return;
        }
        let cb = UpdatedListener::new(on_updated);
        crate::chrome::tabs_on_updated_add_listener(cb.as_ref().unchecked_ref());
        *l = Some(cb);
    });
}

fn on_updated(tab_id: JsValue, change: JsValue, _tab: JsValue) {
    let Some(tab) = tab_id.as_f64().map(|t| t as shared::protocol::TabId) else { return };
    if !get(&change, "url").is_undefined() && crate::sessions::owner_of(tab).is_some() {
        schedule();
    }
}

/// Recomputes the allowed origins soon (coalesced, one pass at a time).
pub fn schedule() {
    // Firefox has no content settings (crate::browser).
    if !crate::browser::has_content_settings() {
        return;
    }
    let start = STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.dirty = true;
        !std::mem::replace(&mut s.running, true)
    });
    if start {
        spawn_local(run());
    }
}

async fn run() {
    loop {
        STATE.with(|s| s.borrow_mut().dirty = false);
        pass().await;
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

/// The patterns of the origins agent tabs show now.
async fn wanted() -> BTreeSet<String> {
    let Ok(all) = crate::chrome::tabs_query(&obj(&[])).await else { return BTreeSet::new() };
    Array::from(&all)
        .iter()
        .filter_map(|t| {
            let id = get(&t, "id").as_f64()? as i64;
            crate::sessions::owner_of(id)?;
            let url =
                get(&t, "url").as_string().filter(|u| !u.is_empty()).or_else(|| get(&t, "pendingUrl").as_string())?;
            shared::downloads::automatic_downloads_pattern(&shared::url::Origin::wire(&url))
        })
        .collect()
}

async fn pass() {
    let want = wanted().await;
    let (same, fresh) = STATE.with(|s| {
        let s = s.borrow();
        (s.applied == want, s.fresh)
    });
    if same && !fresh {
        return;
    }
    let regular = || obj(&[("scope", JsValue::from_str("regular"))]);
    if let Err(e) = automatic_downloads_clear(&regular()).await {
        web_sys::console::warn_1(&e);
    }
    let mut applied = BTreeSet::new();
    for pattern in &want {
        let details = obj(&[
            ("primaryPattern", JsValue::from_str(pattern)),
            ("setting", JsValue::from_str("allow")),
            ("scope", JsValue::from_str("regular")),
        ]);
        match automatic_downloads_set(&details).await {
            Ok(_) => {
                applied.insert(pattern.clone());
            }
            Err(e) => web_sys::console::warn_1(&e),
        }
    }
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.applied = applied;
        s.fresh = false;
    });
}
