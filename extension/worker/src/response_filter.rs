//! Response bodies of the agent's tabs in Firefox's default build:
//! `webRequest.filterResponseData` (README "Firefox"), where Chromium
//! needs the bodies build and its debugger (`crate::bodies`).
//!
//! - The loader (`static/background.js`) opens a filter on the response
//!   stream in its `onBeforeRequest` listener, for the tabs
//!   [`wants_response_body`] names (an agent's, never the person's), and
//!   [`watch`] (from `network::on_net_request`) takes it. Every chunk is written on **at once and unchanged**
//!   (observe only: the page gets exactly the bytes the server sent, with
//!   no wait for us); a copy is kept up to `MAX_RESPONSE_BODY_BYTES` + 1.
//! - [`headers`] (from `network::on_net_headers`) lets a response that
//!   cannot have a text body go (`filter.disconnect()`: the rest of the
//!   stream no longer passes through the extension at all).
//! - At the end of the stream the copy is decoded (UTF-8, lossily), cut
//!   with the marker and handed to `crate::bodies`' short-lived store,
//!   where `network` takes it for its capture as it does the debugger's.
//!
//! Idle where `browser.webRequest.filterResponseData` does not exist
//! (Chromium). Nothing is kept beyond the store's short wait; the bridge
//! redacts every body before any output.

use std::cell::RefCell;
use std::collections::HashMap;

use js_sys::{Function, Reflect, Uint8Array};
use shared::network::{MAX_PENDING, MAX_RESPONSE_BODY_BYTES, ResponseBody, cut_text};
use shared::protocol::TabId;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::util::get;

#[wasm_bindgen]
extern "C" {
    /// Firefox's `StreamFilter`.
    type StreamFilter;
    #[wasm_bindgen(method, catch)]
    fn write(this: &StreamFilter, data: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn close(this: &StreamFilter) -> Result<(), JsValue>;
    #[wasm_bindgen(method, catch)]
    fn disconnect(this: &StreamFilter) -> Result<(), JsValue>;
}

/// One watched response.
struct Watched {
    tab: TabId,
    method: String,
    url: String,
    filter: StreamFilter,
    copy: Vec<u8>,
    /// The stream had more than the copy holds.
    cut: bool,
    /// Keeps the filter's handlers alive until the stream ends.
    _handlers: [Closure<dyn FnMut(JsValue)>; 3],
}

thread_local! {
    static WATCHED: RefCell<HashMap<String, Watched>> = RefCell::new(HashMap::new());
    /// Streams that ended, kept until the next [`watch`]: a handler must
    /// not be dropped while it runs (the stream's end is one).
    static ENDED: RefCell<Vec<Watched>> = const { RefCell::new(Vec::new()) };
    static ON: bool = {
        let browser = get(&js_sys::global(), "browser");
        get(&get(&browser, "webRequest"), "filterResponseData").is_instance_of::<Function>()
    };
}

/// Whether this browser gives response bodies by stream filter (Firefox).
pub fn on() -> bool {
    ON.with(|o| *o)
}

/// Whether `network` follows requests of `tab` (an agent's): the loader
/// opens a stream filter for them in its `onBeforeRequest` listener
/// itself, because Firefox accepts it only there and then (a filter opened
/// a moment later, once the worker's WASM has the request, is refused as
/// an "Invalid request ID"). The person's tabs get none.
#[wasm_bindgen]
pub fn wants_response_body(tab: f64) -> bool {
    on() && tab >= 0.0 && crate::sessions::owner_of(tab as TabId).is_some()
}

/// Watches the response of request `id` through `filter` (the loader's,
/// `undefined` when it opened none).
pub fn watch(id: &str, tab: TabId, method: &str, url: &str, filter: JsValue) {
    if filter.is_undefined() || filter.is_null() || !on() {
        return;
    }
    ENDED.with(|e| e.borrow_mut().clear());
    if WATCHED.with(|w| w.borrow().contains_key(id)) {
        return; // a redirect's next leg: the filter follows the request
    }
    let filter: StreamFilter = filter.unchecked_into();
    let on = |event: &str, id: String, f: fn(&str, JsValue)| {
        let handler = Closure::<dyn FnMut(JsValue)>::new(move |e: JsValue| f(&id, e));
        let _ = Reflect::set(&filter, &JsValue::from_str(event), handler.as_ref().unchecked_ref());
        handler
    };
    let handlers = [
        on("ondata", id.to_string(), on_data),
        on("onstop", id.to_string(), on_stop),
        on("onerror", id.to_string(), on_error),
    ];
    WATCHED.with(|w| {
        let mut w = w.borrow_mut();
        if w.len() >= MAX_PENDING {
            // Streams whose end never came: let them all go.
            for (_, old) in w.drain() {
                let _ = old.filter.disconnect();
                ENDED.with(|e| e.borrow_mut().push(old));
            }
        }
        w.insert(
            id.to_string(),
            Watched {
                tab,
                method: method.to_string(),
                url: url.to_string(),
                filter,
                copy: Vec::new(),
                cut: false,
                _handlers: handlers,
            },
        );
    });
}

/// Lets a filter the loader opened go unwatched (the tab was not an
/// agent's after all): the stream passes untouched.
pub fn release(filter: JsValue) {
    if filter.is_object() {
        let _ = filter.unchecked_into::<StreamFilter>().disconnect();
    }
}

/// The response's headers came: a response that cannot have a text body
/// (`keep` false) is let go.
pub fn headers(id: &str, keep: bool) {
    if keep {
        return;
    }
    if let Some(w) = WATCHED.with(|w| w.borrow_mut().remove(id)) {
        let _ = w.filter.disconnect();
        ENDED.with(|e| e.borrow_mut().push(w));
    }
}

fn on_data(id: &str, event: JsValue) {
    let data = get(&event, "data");
    WATCHED.with(|w| {
        let mut w = w.borrow_mut();
        let Some(watched) = w.get_mut(id) else { return };
        // The page's bytes first, unchanged.
        let _ = watched.filter.write(&data);
        let room = (MAX_RESPONSE_BODY_BYTES + 1).saturating_sub(watched.copy.len());
        let chunk = Uint8Array::new(&data);
        let n = (chunk.length() as usize).min(room);
        if n < chunk.length() as usize {
            watched.cut = true;
        }
        if n > 0 {
            let start = watched.copy.len();
            watched.copy.resize(start + n, 0);
            chunk.subarray(0, n as u32).copy_to(&mut watched.copy[start..]);
        }
    });
}

fn on_stop(id: &str, _event: JsValue) {
    let Some(mut w) = WATCHED.with(|w| w.borrow_mut().remove(id)) else { return };
    let _ = w.filter.close();
    let copy = std::mem::take(&mut w.copy);
    let text = String::from_utf8_lossy(&copy);
    let (text, cut) = cut_text(&text, MAX_RESPONSE_BODY_BYTES);
    let body = ResponseBody::Text { text, cut: cut || w.cut };
    crate::bodies::keep_body(w.tab, w.method.clone(), w.url.clone(), body);
    ENDED.with(|e| e.borrow_mut().push(w));
}

fn on_error(id: &str, _event: JsValue) {
    if let Some(w) = WATCHED.with(|w| w.borrow_mut().remove(id)) {
        let why = get(&w.filter, "error").as_string().unwrap_or_default();
        let _ = w.filter.disconnect();
        let reason = format!("Firefox's stream filter gave no body for it ({why})");
        crate::bodies::keep_body(w.tab, w.method.clone(), w.url.clone(), ResponseBody::Unavailable { reason });
        ENDED.with(|e| e.borrow_mut().push(w));
    }
}
