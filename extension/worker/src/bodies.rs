//! Response bodies and WebSocket messages of the agent's tabs: the
//! bodies build only (issue 33; README "Network").
//!
//! Chrome cannot make `debugger` an optional permission, so it is in the
//! manifest of the second flavour only (`dist/extension-bodies`, same
//! code, same extension id); this module is idle when `chrome.debugger`
//! does not exist ([`on`]). In the bodies build:
//!
//! - [`sync`] (on every `Sessions` frame) attaches the debugger to each
//!   agent tab and enables the `Network` domain, and detaches it from a
//!   tab given back to the person: the person's own tabs are never
//!   attached, and an event of a tab no session owns is dropped. Chrome
//!   shows its "is debugging this browser" banner while attached; the
//!   person cancelling it detaches, and the tab is not attached again.
//! - A finished text response (`shared::network::may_have_text_body`)
//!   has its body read (`Network.getResponseBody`), cut at
//!   `MAX_RESPONSE_BODY_BYTES`, and kept for a short while under (tab,
//!   method, URL) until `network` takes it for its `webRequest` capture
//!   ([`take`]); `network` waits up to `BODY_WAIT_MS` for it.
//! - WebSocket messages (`Network.webSocketFrameSent/Received`) are cut at
//!   `MAX_WS_MESSAGE_BYTES`, masked for typed secrets (`crate::typed`)
//!   and sent in small batches (`ExtToBridge::NetworkFrames`).
//!
//! Nothing is stored beyond those short waits; the bridge redacts
//! everything again before any output.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet, VecDeque};

use js_sys::Object;
use shared::network::{
    MAX_PENDING, MAX_RESPONSE_BODY_BYTES, MAX_WS_MESSAGE_BYTES, ResponseBody, WsMessage, cut_text, may_have_text_body,
};
use shared::protocol::{ExtToBridge, TabId};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use crate::chrome;
use crate::util::{get, js_error_text, now_ms, obj, sleep};

/// How long a body waits for its `webRequest` capture.
const KEEP_BODY_MS: f64 = 30_000.0;
/// Most bodies waiting at once.
const MAX_BODIES: usize = 200;
/// How long WebSocket messages are gathered before they are sent.
const FRAMES_BATCH_MS: u32 = 200;
/// How long a navigation waits for the debugger to be attached.
const ATTACH_WAIT_MS: u32 = 2_000;

/// What the bodies build can say of a tab's response bodies.
pub enum Status {
    /// The default build: no `debugger` permission.
    Off,
    /// Attached: bodies come.
    Attached,
    /// Not attached (the person cancelled, attaching failed): why.
    Unavailable(String),
}

struct Req {
    url: String,
    method: String,
    mime: String,
    status: u16,
}

#[derive(Default)]
struct State {
    attached: HashSet<TabId>,
    attaching: HashSet<TabId>,
    /// Tabs not to attach (again), with the reason.
    refused: HashMap<TabId, String>,
    /// The debugger's requests in flight, by (tab, requestId).
    requests: HashMap<(TabId, String), Req>,
    /// Bodies read, waiting for their capture: (tab, method, URL).
    bodies: HashMap<(TabId, String, String), VecDeque<(f64, ResponseBody)>>,
    /// Open WebSockets' URLs by (tab, requestId).
    sockets: HashMap<(TabId, String), String>,
    /// Messages not sent yet, per (tab, URL), in order.
    outbox: Vec<(TabId, String, Vec<WsMessage>)>,
    flush_scheduled: bool,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
    static ON: bool = !get(&get(&js_sys::global(), "chrome"), "debugger").is_undefined();
}

/// Whether this is the bodies build (`chrome.debugger` exists).
pub fn on() -> bool {
    ON.with(|o| *o)
}

fn target(tab: TabId) -> Object {
    obj(&[("tabId", JsValue::from_f64(tab as f64))])
}

/// Attaches the debugger to every agent tab and detaches it from tabs
/// that are no longer an agent's.
pub fn sync() {
    if !on() {
        return;
    }
    let owned: HashSet<TabId> = crate::sessions::agent_tabs().into_iter().collect();
    let (attach, detach) = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let attach: Vec<TabId> = owned
            .iter()
            .copied()
            .filter(|t| !s.attached.contains(t) && !s.attaching.contains(t) && !s.refused.contains_key(t))
            .collect();
        let detach: Vec<TabId> = s.attached.iter().copied().filter(|t| !owned.contains(t)).collect();
        for t in &attach {
            s.attaching.insert(*t);
        }
        for t in &detach {
            s.attached.remove(t);
            forget_tab(&mut s, *t);
        }
        s.refused.retain(|t, _| owned.contains(t));
        (attach, detach)
    });
    for tab in attach {
        spawn_local(attach_tab(tab));
    }
    for tab in detach {
        spawn_local(async move {
            if let Err(e) = chrome::debugger_detach(&target(tab)).await {
                web_sys::console::warn_1(&e);
            }
        });
    }
}

fn forget_tab(s: &mut State, tab: TabId) {
    s.requests.retain(|(t, _), _| *t != tab);
    s.bodies.retain(|(t, _, _), _| *t != tab);
    s.sockets.retain(|(t, _), _| *t != tab);
}

async fn attach_tab(tab: TabId) {
    let t = target(tab);
    let result = match chrome::debugger_attach(&t, "1.3").await {
        Ok(_) => {
            let params = obj(&[
                ("maxTotalBufferSize", JsValue::from_f64(20_000_000.0)),
                ("maxResourceBufferSize", JsValue::from_f64(5_000_000.0)),
            ]);
            chrome::debugger_send_command(&t, "Network.enable", &params).await.map(|_| ())
        }
        Err(e) => Err(e),
    };
    let still_ours = crate::sessions::owner_of(tab).is_some();
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.attaching.remove(&tab);
        match &result {
            Ok(()) if still_ours => {
                s.attached.insert(tab);
            }
            Ok(()) => {}
            Err(e) => {
                s.refused.insert(tab, format!("the debugger could not be attached to this tab ({})", js_error_text(e)));
            }
        }
    });
    if result.is_ok() && !still_ours {
        // Given back to the person while attaching.
        let _ = chrome::debugger_detach(&t).await;
    }
}

/// Waits (at most `ATTACH_WAIT_MS`) until attaching to `tab` is over, so
/// that a page the agent opens is watched from its first request.
pub async fn ready(tab: TabId) {
    if !on() {
        return;
    }
    let mut waited = 0;
    while waited < ATTACH_WAIT_MS && STATE.with(|s| s.borrow().attaching.contains(&tab)) {
        sleep(25).await;
        waited += 25;
    }
}

/// What `tab`'s response bodies can be.
pub fn status(tab: TabId) -> Status {
    if !on() {
        return Status::Off;
    }
    STATE.with(|s| {
        let s = s.borrow();
        if s.attached.contains(&tab) {
            Status::Attached
        } else if let Some(why) = s.refused.get(&tab) {
            Status::Unavailable(why.clone())
        } else {
            Status::Unavailable("the debugger was not attached to this tab yet".into())
        }
    })
}

/// The body read for `method url` on `tab`, the oldest one, if any.
pub fn take(tab: TabId, method: &str, url: &str) -> Option<ResponseBody> {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let key = (tab, method.to_string(), url.to_string());
        let q = s.bodies.get_mut(&key)?;
        let body = q.pop_front().map(|(_, b)| b);
        if q.is_empty() {
            s.bodies.remove(&key);
        }
        body
    })
}

/// Keeps a body read for `method url` on `tab` until `network` takes it
/// (the debugger's here, Firefox's stream filter's in `crate::response_filter`).
pub fn keep_body(tab: TabId, method: String, url: String, body: ResponseBody) {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let now = now_ms();
        s.bodies.retain(|_, q| {
            q.retain(|(at, _)| now - at < KEEP_BODY_MS);
            !q.is_empty()
        });
        if s.bodies.values().map(VecDeque::len).sum::<usize>() >= MAX_BODIES {
            return;
        }
        s.bodies.entry((tab, method, url)).or_default().push_back((now, body));
    });
}

/// `chrome.debugger.onEvent` (registered by `static/background.js` in the
/// bodies build).
#[wasm_bindgen]
pub fn on_debugger_event(source: JsValue, method: String, params: JsValue) {
    let Some(tab) = get(&source, "tabId").as_f64().map(|t| t as TabId) else { return };
    let attached = STATE.with(|s| s.borrow().attached.contains(&tab));
    if !attached || crate::sessions::owner_of(tab).is_none() {
        return;
    }
    let Some(id) = get(&params, "requestId").as_string() else { return };
    let key = (tab, id);
    match method.as_str() {
        "Network.requestWillBeSent" => {
            let request = get(&params, "request");
            let req = Req {
                url: get(&request, "url").as_string().unwrap_or_default(),
                method: get(&request, "method").as_string().unwrap_or_default(),
                mime: String::new(),
                status: 0,
            };
            STATE.with(|s| {
                let mut s = s.borrow_mut();
                if s.requests.len() >= MAX_PENDING {
                    s.requests.clear();
                }
                s.requests.insert(key, req);
            });
        }
        "Network.responseReceived" => {
            let response = get(&params, "response");
            STATE.with(|s| {
                if let Some(r) = s.borrow_mut().requests.get_mut(&key) {
                    r.mime = get(&response, "mimeType").as_string().unwrap_or_default();
                    r.status = get(&response, "status").as_f64().unwrap_or(0.0) as u16;
                }
            });
        }
        "Network.loadingFinished" => {
            let Some(req) = STATE.with(|s| s.borrow_mut().requests.remove(&key)) else { return };
            if may_have_text_body(&req.method, req.status, &req.mime) {
                spawn_local(read_body(tab, key.1, req));
            }
        }
        "Network.loadingFailed" => {
            STATE.with(|s| s.borrow_mut().requests.remove(&key));
        }
        "Network.webSocketCreated" => {
            let url = get(&params, "url").as_string().unwrap_or_default();
            STATE.with(|s| {
                let mut s = s.borrow_mut();
                if s.sockets.len() < MAX_PENDING {
                    s.sockets.insert(key, url);
                }
            });
        }
        "Network.webSocketFrameSent" | "Network.webSocketFrameReceived" => {
            let response = get(&params, "response");
            let opcode = get(&response, "opcode").as_f64().unwrap_or(1.0) as u8;
            let payload = get(&response, "payloadData").as_string().unwrap_or_default();
            let (data, _) = cut_text(&payload, MAX_WS_MESSAGE_BYTES);
            let message = WsMessage {
                sent: method == "Network.webSocketFrameSent",
                time: now_ms() / 1000.0,
                opcode,
                data: crate::typed::mask(&data),
            };
            queue_message(&key, message);
        }
        "Network.webSocketClosed" => {
            STATE.with(|s| s.borrow_mut().sockets.remove(&key));
            flush();
        }
        _ => {}
    }
}

fn queue_message(key: &(TabId, String), message: WsMessage) {
    let schedule = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let Some(url) = s.sockets.get(key).cloned() else { return false };
        match s.outbox.iter_mut().find(|(t, u, _)| *t == key.0 && *u == url) {
            Some((_, _, list)) => list.push(message),
            None => s.outbox.push((key.0, url, vec![message])),
        }
        !std::mem::replace(&mut s.flush_scheduled, true)
    });
    if schedule {
        spawn_local(async {
            sleep(FRAMES_BATCH_MS).await;
            flush();
        });
    }
}

/// Sends the WebSocket messages gathered so far.
fn flush() {
    let out = STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.flush_scheduled = false;
        std::mem::take(&mut s.outbox)
    });
    for (tab, url, messages) in out {
        if !crate::withheld::keeps_messages(tab) {
            continue;
        }
        crate::conn::send_current(&ExtToBridge::NetworkFrames { tab, url, messages });
    }
}

async fn read_body(tab: TabId, request_id: String, req: Req) {
    let params = obj(&[("requestId", JsValue::from_str(&request_id))]);
    let body = match chrome::debugger_send_command(&target(tab), "Network.getResponseBody", &params).await {
        Ok(answer) => {
            let text = get(&answer, "body").as_string().unwrap_or_default();
            let text = if get(&answer, "base64Encoded").as_bool() == Some(true) { from_base64(&text) } else { text };
            let (text, cut) = cut_text(&text, MAX_RESPONSE_BODY_BYTES);
            ResponseBody::Text { text, cut }
        }
        Err(e) => {
            ResponseBody::Unavailable { reason: format!("the debugger had no body for it ({})", js_error_text(&e)) }
        }
    };
    keep_body(tab, req.method, req.url, body);
}

/// Text sent base64-encoded (not UTF-8 on the wire): decoded lossily.
fn from_base64(b64: &str) -> String {
    let bytes = shared::files::base64_decode(b64).unwrap_or_default();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `chrome.debugger.onDetach`: Chrome or the person (the banner's
/// Cancel) ended the debugging of a tab; it is not attached again.
#[wasm_bindgen]
pub fn on_debugger_detach(source: JsValue, reason: String) {
    let Some(tab) = get(&source, "tabId").as_f64().map(|t| t as TabId) else { return };
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        if s.attached.remove(&tab) {
            forget_tab(&mut s, tab);
            let why = if reason == "canceled_by_user" {
                "the person stopped the debugger on this tab".to_string()
            } else {
                format!("the debugger was detached from this tab ({reason})")
            };
            s.refused.insert(tab, why);
        }
    });
}
