//! Chaperone extension: service worker and extension pages, Rust→WASM.
//!
//! `static/background.js` loads this module in the service worker, calls
//! [`start_worker`] and relays the wake-up events it registered
//! synchronously ([`on_runtime_message`], [`on_alarm`], [`on_wake`]).
//! `static/popup.js` loads the same module in the popup and calls
//! [`start_popup`].

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

mod chrome;
mod commands;
mod conn;
mod popup;
mod util;

use util::{get, obj, to_js};

/// Name of the alarm that revives the connection after the worker restarts.
const RECONNECT_ALARM: &str = "chaperone-reconnect";

/// Service worker entry point.
#[wasm_bindgen]
pub fn start_worker() {
    commands::install_listeners();
    conn::publish();
    spawn_local(async {
        let info = obj(&[("periodInMinutes", JsValue::from_f64(0.5))]);
        if let Err(e) = chrome::alarms_create(RECONNECT_ALARM, &info).await {
            web_sys::console::warn_1(&e);
        }
    });
    conn::ensure_connected();
}

/// Popup entry point.
#[wasm_bindgen]
pub fn start_popup() {
    popup::start();
}

#[wasm_bindgen]
pub fn on_alarm(name: String) {
    if name == RECONNECT_ALARM {
        conn::ensure_connected();
    }
}

/// `runtime.onStartup` / `runtime.onInstalled`.
#[wasm_bindgen]
pub fn on_wake(_why: String) {
    conn::ensure_connected();
}

/// Messages from the extension's own pages (popup, later the approval
/// window). Content scripts and other extensions are refused.
#[wasm_bindgen]
pub fn on_runtime_message(msg: JsValue, sender: JsValue) -> Promise {
    let own_origin = chrome::runtime_get_url("");
    let from_page = get(&sender, "url").as_string().is_some_and(|u| u.starts_with(&own_origin));
    let same_extension = get(&sender, "id").as_string().is_some_and(|id| id == shared::EXTENSION_ID)
        || own_origin.contains(&get(&sender, "id").as_string().unwrap_or_else(|| "\u{0}".into()));
    if !(from_page && same_extension) {
        return Promise::resolve(&error_reply("not allowed"));
    }
    match get(&msg, "type").as_string().as_deref() {
        Some("status") => {
            conn::ensure_connected();
            Promise::resolve(&to_js(&conn::status()))
        }
        _ => Promise::resolve(&error_reply("unknown message")),
    }
}

fn error_reply(message: &str) -> JsValue {
    obj(&[("type", JsValue::from_str("error")), ("message", JsValue::from_str(message))]).into()
}
