//! The socket to the bridge: native-messaging bootstrap, hello/welcome,
//! heartbeat, reconnect with backoff, request dispatch (docs/design.md, "Processes and channels").
//!
//! The extension token lives only in this module's memory; the popup sees
//! a `messages::ConnectionStatus` through `chrome.storage.session`.
//!
//! This module knows nothing of commands, the gate or secrets: what
//! arrives is handed to the [`Handlers`] `lib.rs` sets at start (so the
//! modules that answer frames may send on the socket without an import
//! cycle).
//!
//! The bridge serves one browser at a time: a socket it refuses because
//! another browser is connected is closed with
//! `shared::protocol::ANOTHER_BROWSER_CLOSE_CODE`; the popup then shows
//! that refusal (`crate::refusals`) and the loop keeps retrying with
//! backoff, so this browser connects once the other one is gone.

use std::cell::RefCell;

use js_sys::{Function, Promise};
use shared::protocol::{ANOTHER_BROWSER_CLOSE_CODE, BridgeToExt, ExtToBridge, NativeReply, NativeRequest};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;
use web_sys::{CloseEvent, Event, MessageEvent, WebSocket};

use crate::chrome;
use crate::messages::{CONNECTION_KEY, ConnectionStatus};
use crate::util::{from_js, js_error_text, now_ms, obj, sleep, to_js, with_timeout};

const FIRST_BACKOFF_MS: u32 = 1_000;
const MAX_BACKOFF_MS: u32 = 30_000;
const NATIVE_TIMEOUT_MS: u32 = 10_000;
const OPEN_TIMEOUT_MS: u32 = 10_000;

/// One WebSocket and the handlers it needs for its lifetime.
struct Socket {
    ws: WebSocket,
    generation: u64,
    _on_open: Closure<dyn FnMut(Event)>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_close: Closure<dyn FnMut(CloseEvent)>,
    _on_error: Closure<dyn FnMut(Event)>,
}

impl Drop for Socket {
    fn drop(&mut self) {
        self.ws.set_onopen(None);
        self.ws.set_onmessage(None);
        self.ws.set_onclose(None);
        self.ws.set_onerror(None);
        let _ = self.ws.close();
    }
}

#[derive(Default)]
struct State {
    socket: Option<Socket>,
    /// A connect loop is running.
    connecting: bool,
    /// Hello answered with welcome on the current socket.
    connected: bool,
    generation: u64,
    port: Option<u16>,
    since: f64,
    reason: String,
    ping_seq: u64,
    /// `human_timeout_secs` from the bridge's welcome (0 until then).
    human_timeout_secs: u32,
    /// The native host found this browser started headless (Firefox).
    host_says_headless: bool,
    /// Resolved (with "open"/"welcome") or rejected by socket events while
    /// a connect attempt waits for them.
    waiter: Option<(Function, Function)>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State { reason: "starting".into(), ..State::default() });
    static HANDLERS: std::cell::Cell<Option<Handlers>> = const { std::cell::Cell::new(None) };
}

/// What the rest of the worker does with the connection's events; each
/// gets the connection's generation ([`send`] answers on it).
#[derive(Clone, Copy)]
pub struct Handlers {
    /// The bridge answered `hello` with `welcome`: the connection is up.
    pub connected: fn(u64),
    /// A frame other than `welcome` and `pong` (requests, secrets,
    /// notices).
    pub frame: fn(u64, BridgeToExt),
    /// The connection closed (or failed).
    pub closed: fn(u64),
}

/// Sets the handlers, once at start (before [`ensure_connected`]).
pub fn set_handlers(handlers: Handlers) {
    HANDLERS.with(|h| h.set(Some(handlers)));
}

fn handlers() -> Option<Handlers> {
    HANDLERS.with(|h| h.get())
}

/// What the pages show.
pub fn status() -> ConnectionStatus {
    STATE.with(|s| {
        let s = s.borrow();
        ConnectionStatus {
            connected: s.connected,
            port: s.port,
            since: s.connected.then_some(s.since),
            reason: if s.connected { String::new() } else { s.reason.clone() },
        }
    })
}

/// Starts a connect loop unless connected or already connecting.
pub fn ensure_connected() {
    let start = STATE.with(|s| {
        let mut s = s.borrow_mut();
        if s.connecting || s.socket.is_some() {
            false
        } else {
            s.connecting = true;
            true
        }
    });
    if start {
        spawn_local(connect_loop());
    }
}

async fn connect_loop() {
    let mut backoff = FIRST_BACKOFF_MS;
    loop {
        match connect_once().await {
            Ok(()) => {
                STATE.with(|s| s.borrow_mut().connecting = false);
                return;
            }
            Err(reason) => {
                web_sys::console::warn_1(&JsValue::from_str(&format!("chaperone: not connected: {reason}")));
                drop_socket();
                set_disconnected(&reason);
                sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF_MS);
            }
        }
    }
}

/// Whether the native host found this browser started headless (see
/// `shared::handoff::is_headless`).
pub fn host_says_headless() -> bool {
    STATE.with(|s| s.borrow().host_says_headless)
}

/// Asks the native host where the bridge is.
async fn bootstrap() -> Result<(u16, String), String> {
    let req = to_js(&NativeRequest::Bootstrap);
    let call = chrome::send_native_message(shared::NATIVE_HOST_NAME, &req)
        .map_err(|e| format!("native host: {}", js_error_text(&e)))?;
    let reply = match with_timeout(call, NATIVE_TIMEOUT_MS).await {
        Ok(Some(v)) => v,
        Ok(None) => return Err("the native host did not answer".into()),
        Err(e) => return Err(format!("native host: {}", js_error_text(&e))),
    };
    match from_js::<NativeReply>(&reply) {
        Ok(NativeReply::Bridge { port, token, version, headless }) => {
            if port == 0 {
                return Err("native host gave port 0".into());
            }
            STATE.with(|s| s.borrow_mut().host_says_headless = headless);
            if version != shared::VERSION {
                web_sys::console::warn_1(&JsValue::from_str(&format!(
                    "chaperone: bridge version {version}, extension {}",
                    shared::VERSION
                )));
            }
            Ok((port, token))
        }
        Ok(NativeReply::Error { message }) => Err(format!("bridge: {message}")),
        Err(e) => Err(format!("native host sent an invalid reply: {e}")),
    }
}

async fn connect_once() -> Result<(), String> {
    set_reason("connecting");
    let (port, token) = bootstrap().await?;
    // Only ever loopback: the URL is built here from a validated port.
    let url = format!("ws://127.0.0.1:{port}/ext");
    let ws = WebSocket::new(&url).map_err(|e| js_error_text(&e))?;
    let generation = STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.generation += 1;
        s.port = Some(port);
        s.generation
    });
    let socket = make_socket(ws, generation);
    STATE.with(|s| s.borrow_mut().socket = Some(socket));

    let opened = wait_event(OPEN_TIMEOUT_MS).await?;
    if opened != "open" {
        return Err(format!("unexpected socket event {opened}"));
    }
    send(generation, &ExtToBridge::Hello { token, version: shared::VERSION.to_string() });
    let welcomed = wait_event(shared::limits::HELLO_TIMEOUT_SECS as u32 * 1000 + 1000).await?;
    if welcomed != "welcome" {
        return Err(format!("unexpected socket event {welcomed}"));
    }
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.connected = true;
        s.since = now_ms();
        s.reason.clear();
    });
    web_sys::console::info_1(&JsValue::from_str(&format!("chaperone: connected to bridge on port {port}")));
    publish();
    if let Some(h) = handlers() {
        (h.connected)(generation);
    }
    spawn_local(heartbeat(generation));
    Ok(())
}

/// Waits until a socket event resolves (or rejects) the current waiter.
async fn wait_event(ms: u32) -> Result<String, String> {
    let p = Promise::new(&mut |resolve, reject| {
        STATE.with(|s| s.borrow_mut().waiter = Some((resolve, reject)));
    });
    let r = with_timeout(p, ms).await;
    STATE.with(|s| s.borrow_mut().waiter = None);
    match r {
        Ok(Some(v)) => Ok(v.as_string().unwrap_or_default()),
        Ok(None) => Err("the bridge did not answer in time".into()),
        Err(e) => Err(js_error_text(&e)),
    }
}

fn settle(generation: u64, ok: Result<&str, &str>) {
    let waiter = STATE.with(|s| {
        let mut s = s.borrow_mut();
        if s.generation == generation { s.waiter.take() } else { None }
    });
    if let Some((resolve, reject)) = waiter {
        let _ = match ok {
            Ok(v) => resolve.call1(&JsValue::NULL, &JsValue::from_str(v)),
            Err(e) => reject.call1(&JsValue::NULL, &JsValue::from_str(e)),
        };
    }
}

fn make_socket(ws: WebSocket, generation: u64) -> Socket {
    let on_open = Closure::<dyn FnMut(Event)>::new(move |_: Event| settle(generation, Ok("open")));
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| {
        let Some(text) = ev.data().as_string() else {
            web_sys::console::warn_1(&JsValue::from_str("chaperone: ignored a non-text frame"));
            return;
        };
        on_frame(generation, &text);
    });
    let on_close = Closure::<dyn FnMut(CloseEvent)>::new(move |ev: CloseEvent| {
        if ev.code() == ANOTHER_BROWSER_CLOSE_CODE && is_current(generation) {
            crate::refusals::this_browser_refused();
            on_closed(generation, "the bridge refused this browser: another browser is connected to it");
        } else {
            on_closed(generation, &format!("the bridge closed the connection (code {})", ev.code()));
        }
    });
    let on_error = Closure::<dyn FnMut(Event)>::new(move |_: Event| {
        on_closed(generation, "could not reach the bridge");
    });
    ws.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    ws.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    ws.set_onclose(Some(on_close.as_ref().unchecked_ref()));
    ws.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    Socket { ws, generation, _on_open: on_open, _on_message: on_message, _on_close: on_close, _on_error: on_error }
}

fn on_frame(generation: u64, text: &str) {
    let frame: BridgeToExt = match serde_json::from_str(text) {
        Ok(f) => f,
        Err(_) => {
            web_sys::console::warn_1(&JsValue::from_str("chaperone: ignored an invalid frame from the bridge"));
            return;
        }
    };
    match frame {
        BridgeToExt::Welcome { human_timeout_secs, .. } => {
            STATE.with(|s| s.borrow_mut().human_timeout_secs = human_timeout_secs);
            settle(generation, Ok("welcome"))
        }
        BridgeToExt::Pong { .. } => {}
        other => match handlers() {
            Some(h) => (h.frame)(generation, other),
            None => web_sys::console::warn_1(&JsValue::from_str("chaperone: ignored a frame nobody handles")),
        },
    }
}

fn is_current(generation: u64) -> bool {
    STATE.with(|s| s.borrow().generation == generation && s.borrow().socket.is_some())
}

/// The connection commands arrive on, once its hello was answered.
pub fn connected_generation() -> Option<u64> {
    STATE.with(|s| {
        let s = s.borrow();
        (s.connected && s.socket.is_some()).then_some(s.generation)
    })
}

fn on_closed(generation: u64, reason: &str) {
    if let Some(h) = handlers() {
        (h.closed)(generation);
    }
    if !is_current(generation) {
        return;
    }
    // A connect attempt waiting on this socket fails; its loop retries.
    settle(generation, Err(reason));
    let was_connected = STATE.with(|s| s.borrow().connected);
    if was_connected {
        drop_socket();
        set_disconnected(reason);
        ensure_connected();
    }
}

fn drop_socket() {
    let old = STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.connected = false;
        s.socket.take()
    });
    drop(old);
}

/// Sends a frame on the socket of `generation`, if it is still the current one.
pub fn send(generation: u64, frame: &ExtToBridge) {
    let Ok(text) = serde_json::to_string(frame) else { return };
    send_text(generation, &text);
}

/// Answers request `id` with a snapshot whose nodes pass through unread:
/// the frame is joined as JS strings around them
/// (`shared::protocol::frame_around_nodes`): `head` is all but the nodes,
/// `nodes` the JS string the page sent.
pub fn send_snapshot(generation: u64, id: u64, head: shared::protocol::PassedSnapshot, nodes: &js_sys::JsString) {
    match shared::protocol::frame_around_nodes(id, head) {
        Ok((before, after)) => {
            let frame = js_sys::JsString::from(before).concat(nodes).concat(&JsValue::from_str(&after));
            send_js(generation, &frame);
        }
        Err(_) => {
            let e = shared::error::WireError::new(shared::error::ErrorCode::Internal, "could not encode the snapshot");
            send(generation, &ExtToBridge::Response { id, outcome: shared::protocol::Outcome::Err(e) });
        }
    }
}

#[wasm_bindgen]
extern "C" {
    /// A WebSocket seen through `send` with a JS string (web-sys's takes a
    /// Rust `&str`, which would copy the frame out of JS and back).
    type JsStringSocket;
    #[wasm_bindgen(method, catch, js_name = send)]
    fn send_js_string(this: &JsStringSocket, data: &js_sys::JsString) -> Result<(), JsValue>;
}

fn send_js(generation: u64, frame: &js_sys::JsString) {
    STATE.with(|s| {
        let s = s.borrow();
        if let Some(sock) = s.socket.as_ref().filter(|k| k.generation == generation)
            && sock.ws.ready_state() == WebSocket::OPEN
            && sock.ws.unchecked_ref::<JsStringSocket>().send_js_string(frame).is_err()
        {
            web_sys::console::warn_1(&JsValue::from_str("chaperone: could not send a frame"));
        }
    });
}

fn send_text(generation: u64, text: &str) {
    send_js(generation, &js_sys::JsString::from(text));
}

/// Tells the bridge about the person's controls (informational: the
/// extension enforces them itself).
pub fn send_control(state: shared::action::ControlState) {
    send_current(&ExtToBridge::Control { state });
}

/// Sends `frame` on the current connection, if there is one.
pub fn send_current(frame: &ExtToBridge) {
    let current = STATE.with(|s| {
        let s = s.borrow();
        s.connected.then_some(s.generation)
    });
    if let Some(generation) = current {
        send(generation, frame);
    }
}

/// How long a hand-off waits for the person: the bridge's
/// `human_timeout_secs`, clamped to the documented bounds (the default
/// before any welcome).
pub fn human_timeout_secs() -> u32 {
    use shared::limits::{DEFAULT_HUMAN_TIMEOUT_SECS, MAX_HUMAN_TIMEOUT_SECS, MIN_HUMAN_TIMEOUT_SECS};
    match STATE.with(|s| s.borrow().human_timeout_secs) {
        0 => DEFAULT_HUMAN_TIMEOUT_SECS,
        t => t.clamp(MIN_HUMAN_TIMEOUT_SECS, MAX_HUMAN_TIMEOUT_SECS),
    }
}

async fn heartbeat(generation: u64) {
    loop {
        sleep(shared::limits::HEARTBEAT_SECS as u32 * 1000).await;
        let seq = STATE.with(|s| {
            let mut s = s.borrow_mut();
            if s.generation != generation || !s.connected {
                return None;
            }
            s.ping_seq += 1;
            Some(s.ping_seq)
        });
        match seq {
            Some(seq) => send(generation, &ExtToBridge::Ping { seq }),
            None => return,
        }
    }
}

fn set_reason(reason: &str) {
    STATE.with(|s| s.borrow_mut().reason = reason.to_string());
    publish();
}

fn set_disconnected(reason: &str) {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.connected = false;
        s.reason = reason.to_string();
    });
    publish();
}

/// Mirrors the state (never the token) into chrome.storage.session.
pub fn publish() {
    let items = obj(&[(CONNECTION_KEY, to_js(&status()))]);
    spawn_local(async move {
        if let Err(e) = chrome::storage_session_set(&items).await {
            web_sys::console::warn_1(&JsValue::from_str(&format!("chaperone: storage.session: {}", js_error_text(&e))));
        }
    });
}
