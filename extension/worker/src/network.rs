//! Network capture of the agent's tabs (`shared::network`, issue 33).
//!
//! `static/background.js` registers observe-only `webRequest` listeners
//! (never blocking, so a page cannot be slowed by a decision here) for
//! every http(s) request. A request is followed only when its tab belongs
//! to an agent session at its start (`sessions::owner_of`): the person's
//! own tabs are never captured, their requests are not even copied. Each
//! followed request collects its headers (with `extraHeaders`, so `Cookie`
//! and `Set-Cookie` are seen — and always redacted by the bridge), its body
//! (form data or raw bytes, cut at `MAX_BODY_BYTES`), status and timing,
//! and is sent to the bridge once it completed, failed or redirected
//! (`ExtToBridge::Network`). At most `MAX_PENDING` requests are followed at
//! once. Nothing is stored in the extension.
//!
//! What is the person's is never sent whole (`shared::withhold`): a
//! request that starts while its tab is handed to the person is not
//! followed, and one that ends while it is handed is dropped; a request
//! that started on a page where a sensitive field was filled (the content
//! script's `ContentReport::SensitiveFilled`, [`on_content_report`]) is
//! sent without its parts, from that document's start until a top-frame
//! load replaces it. The report is passed on to the bridge
//! (`ExtToBridge::Withhold`), which strips what it kept of that page
//! before the report came.
//!
//! A secret crosses the socket once, in the one fill message. When the
//! agent types a stored secret, the worker keeps only its name and keyed
//! hashes of its spellings (`shared::typed_secrets`, under a key drawn at
//! random when the worker starts); every capture is masked with them
//! before it is sent,
//! so the page sending the value on, under any name, shows
//! `{secret:NAME}` and the value never comes back over the socket
//! (`crate::typed`).

use std::cell::RefCell;
use std::collections::HashMap;

use js_sys::{Array, Object, Uint8Array};
use shared::network::{
    BODY_WAIT_MS, CUT_MARKER, Captured, Header, MAX_BODY_BYTES, MAX_PENDING, RequestBody, ResponseBody, is_text_mime,
    may_have_text_body,
};
use shared::protocol::{ExtToBridge, TabId};
use shared::withhold::{Withheld, replaces_document, without_parts};

use crate::withheld::{handed, tainted};
use wasm_bindgen::prelude::*;

use crate::bodies::Status;
use crate::util::get;

/// How often a request waiting for its body looks for it.
const BODY_POLL_MS: u32 = 50;

thread_local! {
    static PENDING: RefCell<HashMap<String, Captured>> = RefCell::new(HashMap::new());
}

/// `c` with every typed secret masked, then sent to the bridge.
pub fn send(c: Captured) {
    if handed(c.tab) {
        return;
    }
    let withheld = tainted(c.tab, c.started_ms).then_some(Withheld::SensitiveField);
    let mut c = if withheld.is_some() { without_parts(&c) } else { c };
    if !crate::typed::is_loaded() {
        // A restarted worker: the typed secrets' hashes first.
        wasm_bindgen_futures::spawn_local(async move {
            crate::typed::loaded().await;
            crate::typed::mask_captured(&mut c);
            crate::conn::send_current(&ExtToBridge::Network { request: Box::new(c), withheld });
        });
        return;
    }
    crate::typed::mask_captured(&mut c);
    crate::conn::send_current(&ExtToBridge::Network { request: Box::new(c), withheld });
}

fn request_id(details: &JsValue) -> Option<String> {
    get(details, "requestId").as_string()
}

fn text(details: &JsValue, key: &str) -> String {
    get(details, key).as_string().unwrap_or_default()
}

fn headers(list: &JsValue) -> Vec<Header> {
    let Some(arr) = list.dyn_ref::<Array>() else { return Vec::new() };
    arr.iter()
        .filter_map(|h| {
            let name = get(&h, "name").as_string()?;
            let value = get(&h, "value").as_string().unwrap_or_default();
            Some(Header { name, value })
        })
        .collect()
}

fn body(details: &JsValue) -> Option<RequestBody> {
    let rb = get(details, "requestBody");
    if rb.is_undefined() || rb.is_null() {
        return None;
    }
    let form = get(&rb, "formData");
    if form.is_object() {
        let mut fields = Vec::new();
        for entry in Object::entries(form.unchecked_ref::<Object>()).iter() {
            let pair: Array = entry.unchecked_into();
            let name = pair.get(0).as_string().unwrap_or_default();
            let values = pair.get(1).dyn_into::<Array>().map(|a| a.iter().filter_map(|v| v.as_string()).collect());
            fields.push((name, values.unwrap_or_default()));
        }
        return Some(RequestBody::Form { fields });
    }
    let raw = get(&rb, "raw");
    let parts = raw.dyn_ref::<Array>()?;
    let mut bytes: Vec<u8> = Vec::new();
    let mut cut = false;
    for part in parts.iter() {
        let b = get(&part, "bytes");
        if b.is_undefined() {
            continue;
        }
        let arr = Uint8Array::new(&b);
        let room = MAX_BODY_BYTES.saturating_sub(bytes.len()) as u32;
        let take = arr.length().min(room);
        if take < arr.length() {
            cut = true;
        }
        bytes.extend(arr.subarray(0, take).to_vec());
    }
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if cut {
        text.push_str(CUT_MARKER);
    }
    Some(RequestBody::Raw { text, cut })
}

/// `webRequest.onBeforeRequest` (with `requestBody`): a request starts.
/// `filter`: in Firefox, the response's stream filter the loader opened
/// for an agent's tab (`crate::response_filter`), else `undefined`.
#[wasm_bindgen]
pub fn on_net_request(details: JsValue, filter: JsValue) {
    let tab = get(&details, "tabId").as_f64().filter(|t| *t >= 0.0).map(|t| t as TabId);
    let id = request_id(&details);
    // A redirect's next leg keeps the request id: followed as a new request.
    let followed = id.as_ref().is_some_and(|id| PENDING.with(|p| p.borrow().contains_key(id)));
    let (Some(tab), Some(id)) = (tab, id) else {
        crate::response_filter::release(filter);
        return;
    };
    // The person's tab (a hand-off) is not followed at all.
    if (!followed && crate::sessions::owner_of(tab).is_none()) || handed(tab) {
        crate::response_filter::release(filter);
        return;
    }
    let started = get(&details, "timeStamp").as_f64().unwrap_or_else(crate::util::now_ms);
    let captured = Captured {
        tab,
        url: text(&details, "url"),
        method: text(&details, "method"),
        resource_type: text(&details, "type"),
        status: 0,
        status_line: String::new(),
        error: None,
        started_ms: started,
        duration_ms: 0.0,
        request_headers: Vec::new(),
        response_headers: Vec::new(),
        request_body: body(&details),
        redirect_url: None,
        from_cache: false,
        response_body: None,
        websocket_messages: Vec::new(),
    };
    crate::response_filter::watch(&id, tab, &captured.method, &captured.url, filter);
    PENDING.with(|p| {
        let mut p = p.borrow_mut();
        if p.len() >= MAX_PENDING && !p.contains_key(&id) {
            // Requests that never finished (the worker missed their end).
            p.clear();
        }
        p.insert(id, captured);
    });
}

fn update(details: &JsValue, f: impl FnOnce(&mut Captured)) {
    let Some(id) = request_id(details) else { return };
    PENDING.with(|p| {
        if let Some(c) = p.borrow_mut().get_mut(&id) {
            f(c);
        }
    });
}

/// `webRequest.onSendHeaders` (with `requestHeaders`, `extraHeaders`).
#[wasm_bindgen]
pub fn on_net_send_headers(details: JsValue) {
    update(&details, |c| c.request_headers = headers(&get(&details, "requestHeaders")));
}

fn response(details: &JsValue, c: &mut Captured) {
    if let Some(s) = get(details, "statusCode").as_f64() {
        c.status = s as u16;
    }
    if let Some(l) = get(details, "statusLine").as_string() {
        c.status_line = l;
    }
    let h = get(details, "responseHeaders");
    if h.is_object() {
        c.response_headers = headers(&h);
    }
}

/// `webRequest.onHeadersReceived` (with `responseHeaders`, `extraHeaders`).
#[wasm_bindgen]
pub fn on_net_headers(details: JsValue) {
    update(&details, |c| {
        response(&details, c);
        if let Some(id) = request_id(&details) {
            crate::response_filter::headers(&id, may_have_text_body(&c.method, c.status, c.response_mime()));
        }
    });
}

fn finish(details: &JsValue, f: impl FnOnce(&mut Captured)) {
    let Some(id) = request_id(details) else { return };
    let Some(mut c) = PENDING.with(|p| p.borrow_mut().remove(&id)) else { return };
    f(&mut c);
    let end = get(details, "timeStamp").as_f64();
    if let Some(end) = end {
        c.duration_ms = (end - c.started_ms).max(0.0);
    }
    // A new top-frame document: the tab's open window ends (this request,
    // started in it, is judged by it first in `send`).
    let ends = c.resource_type == "main_frame" && replaces_document(c.status, &c.response_headers);
    let (tab, started) = (c.tab, c.started_ms);
    with_body(c);
    if ends {
        crate::withheld::document_replaced(tab, end.unwrap_or(started).max(started));
    }
}

/// Sends `c`, in the bodies build with what it can say of the response
/// body: the body the debugger read (waited for, at most `BODY_WAIT_MS`),
/// or why there is none.
fn with_body(mut c: Captured) {
    let mime = c.response_mime().to_string();
    let reason = |r: &str| Some(ResponseBody::Unavailable { reason: r.to_string() });
    let status = if crate::response_filter::on() { Status::Attached } else { crate::bodies::status(c.tab) };
    c.response_body = match status {
        Status::Off => None,
        _ if crate::response_filter::on() && c.resource_type == "websocket" => {
            reason(shared::network::NO_WEBSOCKET_MESSAGES_FIREFOX)
        }
        _ if c.status == 0 => reason("the request failed"),
        _ if (300..400).contains(&c.status) => reason("a redirect"),
        _ if !is_text_mime(&mime) => Some(ResponseBody::NotText { mime }),
        Status::Unavailable(why) => Some(ResponseBody::Unavailable { reason: why }),
        Status::Attached if may_have_text_body(&c.method, c.status, &mime) => {
            wasm_bindgen_futures::spawn_local(async move {
                let mut waited = 0;
                loop {
                    if let Some(body) = crate::bodies::take(c.tab, &c.method, &c.url) {
                        c.response_body = Some(body);
                        break;
                    }
                    if waited >= BODY_WAIT_MS {
                        c.response_body = reason("no body came from the debugger in time");
                        break;
                    }
                    crate::util::sleep(BODY_POLL_MS).await;
                    waited += BODY_POLL_MS;
                }
                send(c);
            });
            return;
        }
        Status::Attached => Some(ResponseBody::Text { text: String::new(), cut: false }),
    };
    send(c);
}

/// `webRequest.onBeforeRedirect`: this leg ends with a 3xx; the next leg
/// (same request id) is followed as a new request.
#[wasm_bindgen]
pub fn on_net_redirect(details: JsValue) {
    let Some(id) = request_id(&details) else { return };
    let tab = PENDING.with(|p| p.borrow().get(&id).map(|c| c.tab));
    finish(&details, |c| {
        response(&details, c);
        c.redirect_url = get(&details, "redirectUrl").as_string();
        c.from_cache = get(&details, "fromCache").as_bool().unwrap_or(false);
    });
    // Keep following: the next onBeforeRequest of this id is the next leg.
    if let Some(tab) = tab {
        PENDING.with(|p| {
            p.borrow_mut().insert(
                id,
                Captured {
                    tab,
                    url: String::new(),
                    method: String::new(),
                    resource_type: String::new(),
                    status: 0,
                    status_line: String::new(),
                    error: None,
                    started_ms: 0.0,
                    duration_ms: 0.0,
                    request_headers: Vec::new(),
                    response_headers: Vec::new(),
                    request_body: None,
                    redirect_url: None,
                    from_cache: false,
                    response_body: None,
                    websocket_messages: Vec::new(),
                },
            )
        });
    }
}

/// `webRequest.onCompleted` (with `responseHeaders`, `extraHeaders`).
#[wasm_bindgen]
pub fn on_net_completed(details: JsValue) {
    finish(&details, |c| {
        response(&details, c);
        c.from_cache = get(&details, "fromCache").as_bool().unwrap_or(false);
    });
}

/// `webRequest.onErrorOccurred`: the request failed (no answer).
#[wasm_bindgen]
pub fn on_net_error(details: JsValue) {
    finish(&details, |c| {
        c.status = 0;
        c.error = get(&details, "error").as_string();
    });
}
