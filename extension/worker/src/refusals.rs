//! Second browsers refused by the bridge, as the popup shows them (one
//! browser per bridge: see `shared::protocol`'s module docs). Two kinds:
//!
//! - `other`: another socket presented the extension token while this
//!   browser was connected, and was refused; the bridge says so with
//!   `BridgeToExt::SecondBrowserRefused`.
//! - `this`: this browser was refused because another one holds the
//!   bridge; the bridge closed the socket with
//!   `ANOTHER_BROWSER_CLOSE_CODE` (the worker keeps retrying with backoff
//!   and connects once the other one is gone).
//!
//! Kept in `chrome.storage.session` under `refusals` (they survive a worker
//! restart, not the browser session) until the person dismisses them in
//! the popup.

use std::cell::RefCell;

use serde::{Deserialize, Serialize};
use shared::protocol::RefusedBrowser;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use crate::chrome;
use crate::util::{from_js, get, now_ms, obj, to_js};

/// The `chrome.storage.session` key.
pub const KEY: &str = "refusals";

/// What the popup shows.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Refusals {
    /// Other browsers refused while this one was connected.
    pub other: Option<Notice>,
    /// This browser, refused while another one was connected.
    pub this: Option<Notice>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Notice {
    /// Epoch ms of the first and the latest refusal.
    pub first_ms: f64,
    pub last_ms: f64,
    pub count: u64,
    /// The extension version the refused browser claimed (`other` only).
    pub version: String,
}

#[derive(Default)]
struct State {
    loaded: bool,
    refusals: Refusals,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

#[derive(Clone, Copy)]
enum Kind {
    Other,
    This,
}

/// The bridge refused another browser while this one was connected.
pub fn other_browser_refused(refused: RefusedBrowser) {
    web_sys::console::warn_1(&JsValue::from_str("chaperone: the bridge refused a second browser"));
    spawn_local(record(Kind::Other, refused.at_ms as f64, refused.extension_version));
}

/// The bridge refused this browser: another one holds it.
pub fn this_browser_refused() {
    web_sys::console::warn_1(&JsValue::from_str("chaperone: refused by the bridge: another browser is connected"));
    spawn_local(record(Kind::This, now_ms(), String::new()));
}

/// The person dismissed the notices in the popup.
pub async fn dismiss() {
    load().await;
    STATE.with(|s| s.borrow_mut().refusals = Refusals::default());
    save().await;
}

/// Reads what an earlier worker stored, once per worker lifetime.
async fn load() {
    if STATE.with(|s| s.borrow().loaded) {
        return;
    }
    let items = chrome::storage_session_get(&JsValue::from_str(KEY)).await.unwrap_or(JsValue::UNDEFINED);
    let stored: Refusals = from_js(&get(&items, KEY)).unwrap_or_default();
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        if !s.loaded {
            s.loaded = true;
            s.refusals = stored;
        }
    });
}

async fn record(kind: Kind, at_ms: f64, version: String) {
    load().await;
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let slot = match kind {
            Kind::Other => &mut s.refusals.other,
            Kind::This => &mut s.refusals.this,
        };
        match slot {
            Some(n) => {
                n.count += 1;
                n.last_ms = n.last_ms.max(at_ms);
                n.version = version;
            }
            None => *slot = Some(Notice { first_ms: at_ms, last_ms: at_ms, count: 1, version }),
        }
    });
    save().await;
}

async fn save() {
    let value = STATE.with(|s| to_js(&s.borrow().refusals));
    if let Err(e) = chrome::storage_session_set(&obj(&[(KEY, value)])).await {
        web_sys::console::warn_1(&e);
    }
}
