//! One long-lived port to each tab's content script, for the requests after
//! the first.
//!
//! `chrome.tabs.sendMessage` opens a new channel for every message: the
//! browser process finds the frame, the content script's world makes a
//! port and an `onConnect` for it, then the message, the answer and the
//! closing each cross the browser once more. With eight agents at once that
//! traffic was the largest part of the browser process's work. So once a
//! tab's content script has answered a `sendMessage`, the worker connects a
//! port to the tab's top frame (`frameId: 0`, [`PORT_NAME`]) and sends the
//! next requests over it, each with a number the answer carries back.
//!
//! A port belongs to one document. When the tab starts a load or changes
//! its URL ([`retire`], from `crate::tabs`' `onUpdated` listener), nothing
//! new is sent over it; what was sent waits for its answer. When it closes
//! (navigation, a closed tab, the back/forward cache, the content script
//! refusing it, or no answer in time: [`forget`]), every request still
//! waiting resolves to [`closed_marker`] and the port is forgotten: the
//! next request goes by `sendMessage` again (which reaches the new
//! document, or finds none and injects the content script). Whether a request that met a closing port
//! was carried out cannot be known, so only requests that may be repeated
//! ([`shared::protocol::PageRequest::may_repeat`]) are sent again; an
//! action never is (`crate::tabs::ask_page_value`).

use std::cell::RefCell;
use std::collections::HashMap;

use js_sys::{Function, Promise};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::util::{get, obj};

/// The name the content script's loader accepts (`static/content.js`).
pub const PORT_NAME: &str = "chaperone";

#[wasm_bindgen]
extern "C" {
    type Port;
    #[wasm_bindgen(js_namespace = ["chrome", "tabs"], js_name = connect, catch)]
    fn tabs_connect(tab_id: f64, info: &js_sys::Object) -> Result<Port, JsValue>;
    #[wasm_bindgen(method, js_name = postMessage, catch)]
    fn post_message(this: &Port, message: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(method)]
    fn disconnect(this: &Port);
    #[wasm_bindgen(method, getter, js_name = onMessage)]
    fn on_message(this: &Port) -> JsValue;
    #[wasm_bindgen(method, getter, js_name = onDisconnect)]
    fn on_disconnect(this: &Port) -> JsValue;
}

type Listener = Closure<dyn FnMut(JsValue)>;

struct Channel {
    tab: i64,
    port: Port,
    next_id: u32,
    waiting: HashMap<u32, Function>,
    /// `onMessage` and `onDisconnect`, kept alive with the port.
    _listeners: [Listener; 2],
}

/// Channels by connection (a tab's next port is a new one, so a late event
/// of an old port never touches its successor), and each tab's current one.
#[derive(Default)]
struct Channels {
    by_serial: HashMap<u64, Channel>,
    current: HashMap<i64, u64>,
    serial: u64,
}

thread_local! {
    static CHANNELS: RefCell<Channels> = RefCell::new(Channels::default());
    static CLOSED: JsValue = js_sys::Object::new().into();
}

/// Connects a port to the tab's top frame, unless one is open.
pub fn open(id: f64) {
    let tab = id as i64;
    if CHANNELS.with(|c| c.borrow().current.contains_key(&tab)) {
        return;
    }
    let info = obj(&[("frameId", JsValue::from_f64(0.0)), ("name", JsValue::from_str(PORT_NAME))]);
    let Ok(port) = tabs_connect(id, &info) else { return };
    let serial = CHANNELS.with(|c| {
        let mut c = c.borrow_mut();
        c.serial += 1;
        c.serial
    });
    let on_message = Listener::new(move |m: JsValue| answered(serial, &m));
    let on_disconnect = Listener::new(move |_: JsValue| close(serial));
    for (event, cb) in [(port.on_message(), &on_message), (port.on_disconnect(), &on_disconnect)] {
        if let Ok(add) = get(&event, "addListener").dyn_into::<Function>() {
            let _ = add.call1(&event, cb.as_ref());
        }
    }
    let ch = Channel { tab, port, next_id: 0, waiting: HashMap::new(), _listeners: [on_message, on_disconnect] };
    CHANNELS.with(|c| {
        let mut c = c.borrow_mut();
        c.by_serial.insert(serial, ch);
        c.current.insert(tab, serial);
    });
}

/// Sends `msg` over the tab's port: `None` when it has none, else a
/// promise of the answer that resolves to [`closed_marker`] when the port
/// closes first.
pub fn send(id: f64, msg: &JsValue) -> Option<Promise> {
    let tab = id as i64;
    let (p, serial, failed) = CHANNELS.with(|c| {
        let mut c = c.borrow_mut();
        let serial = *c.current.get(&tab)?;
        let ch = c.by_serial.get_mut(&serial)?;
        ch.next_id = ch.next_id.wrapping_add(1);
        let id = ch.next_id;
        let mut resolve = None;
        let p = Promise::new(&mut |res, _| resolve = Some(res));
        ch.waiting.insert(id, resolve?);
        let frame = obj(&[("id", JsValue::from_f64(id.into())), ("msg", msg.clone())]);
        // Already closed on the other side: its disconnect is on its way.
        let failed = ch.port.post_message(&frame).is_err();
        Some((p, serial, failed))
    })?;
    if failed {
        close(serial);
    }
    Some(p)
}

/// What a request's promise resolves to when its port closed first.
pub fn closed_marker() -> JsValue {
    CLOSED.with(JsValue::clone)
}

fn answered(serial: u64, m: &JsValue) {
    let Some(id) = get(m, "id").as_f64() else { return };
    let (resolve, done) = CHANNELS.with(|c| {
        let c = &mut *c.borrow_mut();
        let Some(ch) = c.by_serial.get_mut(&serial) else { return (None, None) };
        let r = ch.waiting.remove(&(id as u32));
        // A retired port goes once nothing waits on it.
        let retired = c.current.get(&ch.tab) != Some(&serial);
        let idle = ch.waiting.is_empty();
        (r, if retired && idle { c.by_serial.remove(&serial) } else { None })
    });
    if let Some(r) = resolve {
        let _ = r.call1(&JsValue::UNDEFINED, &get(m, "reply"));
    }
    if let Some(ch) = done {
        finish(ch);
    }
}

/// The port closed (or could not be posted to).
fn close(serial: u64) {
    let ch = CHANNELS.with(|c| {
        let mut c = c.borrow_mut();
        let ch = c.by_serial.remove(&serial)?;
        if c.current.get(&ch.tab) == Some(&serial) {
            c.current.remove(&ch.tab);
        }
        Some(ch)
    });
    if let Some(ch) = ch {
        finish(ch);
    }
}

/// Fails every request still waiting on a channel that is gone.
fn finish(ch: Channel) {
    let marker = closed_marker();
    for (_, r) in ch.waiting {
        let _ = r.call1(&JsValue::UNDEFINED, &marker);
    }
    ch.port.disconnect();
}

/// The tab's document is going (a load began, the URL changed): no new
/// request goes over its port; the ones already sent wait for their answer
/// or for the port to close.
pub fn retire(id: f64) {
    let tab = id as i64;
    let idle = CHANNELS.with(|c| {
        let mut c = c.borrow_mut();
        let serial = c.current.remove(&tab)?;
        if c.by_serial.get(&serial).is_some_and(|ch| ch.waiting.is_empty()) {
            c.by_serial.remove(&serial)
        } else {
            None
        }
    });
    if let Some(ch) = idle {
        finish(ch);
    }
}

/// Closes the tab's port now, failing what waits on it (its content script
/// did not answer in time).
pub fn forget(id: f64) {
    let tab = id as i64;
    if let Some(serial) = CHANNELS.with(|c| c.borrow().current.get(&tab).copied()) {
        close(serial);
    }
}
