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

mod approval;
mod chrome;
mod commands;
mod conn;
mod gate;
mod popup;
mod refusals;
mod secret;
mod ui;
mod util;

use util::{get, obj, to_js};

/// Name of the alarm that revives the connection after the worker restarts.
const RECONNECT_ALARM: &str = "chaperone-reconnect";

/// Service worker entry point.
#[wasm_bindgen]
pub fn start_worker() {
    commands::install_listeners();
    gate::install_listeners();
    spawn_local(gate::ensure_loaded());
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

/// Approval window entry point (`approval.html`).
#[wasm_bindgen]
pub fn start_approval() {
    approval::start();
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

/// Which of the extension's own pages sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Page {
    Popup,
    Approval,
    Other,
}

/// The sending page, only for this extension's own pages: `sender.id` is
/// ours and `sender.url` is under `chrome-extension://<our id>/`. Content
/// scripts (whose `sender.url` is the web page), other extensions and web
/// pages get `None`.
fn own_page(sender: &JsValue) -> Option<Page> {
    let origin = chrome::runtime_get_url("");
    let our_id = origin.trim_start_matches("chrome-extension://").trim_end_matches('/');
    if get(sender, "id").as_string().as_deref() != Some(our_id) || our_id.is_empty() {
        return None;
    }
    let url = get(sender, "url").as_string()?;
    let path = url.strip_prefix(&origin)?;
    let path = &path[..path.find(['?', '#']).unwrap_or(path.len())];
    Some(match path {
        "popup.html" => Page::Popup,
        "approval.html" => Page::Approval,
        _ => Page::Other,
    })
}

/// Messages from the extension's own pages (popup, approval window).
/// Content scripts and other extensions are refused. Approvals come only
/// from `approval.html` and `popup.html`; STOP, Pause, Resume, YOLO and
/// dismissing the second-browser notices only from `popup.html`.
#[wasm_bindgen]
pub fn on_runtime_message(msg: JsValue, sender: JsValue) -> Promise {
    let Some(page) = own_page(&sender) else {
        return Promise::resolve(&error_reply("not allowed"));
    };
    let ui_page = matches!(page, Page::Popup | Page::Approval);
    let kind = get(&msg, "type").as_string().unwrap_or_default();
    match kind.as_str() {
        "status" => {
            conn::ensure_connected();
            Promise::resolve(&to_js(&conn::status()))
        }
        "state" if ui_page => wasm_bindgen_futures::future_to_promise(async {
            gate::ensure_loaded().await;
            Ok(gate::page_state())
        }),
        "decide" if ui_page => {
            let request = get(&msg, "request").as_f64().filter(|r| *r >= 0.0 && r.fract() == 0.0);
            let approve = get(&msg, "approve").as_bool();
            let done = match (request, approve) {
                (Some(r), Some(a)) => gate::decide(r as u64, a),
                _ => false,
            };
            Promise::resolve(&ok_reply(done))
        }
        "settings" if ui_page => {
            let settings = get(&msg, "settings");
            wasm_bindgen_futures::future_to_promise(async move {
                gate::set_settings(&settings).await;
                Ok(ok_reply(true))
            })
        }
        "control" if page == Page::Popup => {
            let action = get(&msg, "action").as_string().unwrap_or_default();
            wasm_bindgen_futures::future_to_promise(async move {
                match action.as_str() {
                    "stop" => gate::stop().await,
                    "pause" => gate::pause().await,
                    "resume" => gate::resume().await,
                    _ => return Ok(error_reply("unknown control")),
                }
                Ok(ok_reply(true))
            })
        }
        "yolo" if page == Page::Popup => match get(&msg, "on").as_bool() {
            Some(on) => wasm_bindgen_futures::future_to_promise(async move {
                gate::set_yolo(on).await;
                Ok(ok_reply(true))
            }),
            None => Promise::resolve(&error_reply("yolo needs on: true|false")),
        },
        "clear_history" if page == Page::Popup => wasm_bindgen_futures::future_to_promise(async {
            gate::clear_history().await;
            Ok(ok_reply(true))
        }),
        "dismiss_refusals" if page == Page::Popup => wasm_bindgen_futures::future_to_promise(async {
            refusals::dismiss().await;
            Ok(ok_reply(true))
        }),
        "state" | "decide" | "settings" | "control" | "yolo" | "clear_history" | "dismiss_refusals" => {
            Promise::resolve(&error_reply("not allowed from this page"))
        }
        _ => Promise::resolve(&error_reply("unknown message")),
    }
}

fn ok_reply(done: bool) -> JsValue {
    obj(&[("type", JsValue::from_str("ok")), ("done", JsValue::from_bool(done))]).into()
}

fn error_reply(message: &str) -> JsValue {
    obj(&[("type", JsValue::from_str("error")), ("message", JsValue::from_str(message))]).into()
}
