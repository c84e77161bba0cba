//! The toolbar popup: connection state (DESIGN §5, first version).

use std::cell::RefCell;

use js_sys::Array;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use crate::chrome;
use crate::util::{get, obj};

type ChangedListener = Closure<dyn FnMut(JsValue, JsValue)>;

thread_local! {
    /// The storage listener lives as long as the popup page.
    static ON_CHANGED: RefCell<Option<ChangedListener>> = const { RefCell::new(None) };
}

pub fn start() {
    let cb = ChangedListener::new(|_changes: JsValue, area: JsValue| {
        if area.as_string().as_deref() == Some("session") {
            spawn_local(refresh());
        }
    });
    chrome::storage_on_changed_add_listener(cb.as_ref().unchecked_ref());
    ON_CHANGED.with(|c| *c.borrow_mut() = Some(cb));
    spawn_local(async {
        refresh().await;
        // Wakes the service worker (it reconnects if needed) and shows its view.
        match chrome::runtime_send_message(&obj(&[("type", JsValue::from_str("status"))]).into()).await {
            Ok(reply) if !get(&reply, "connected").is_undefined() => render(&reply),
            Ok(_) => {}
            Err(e) => web_sys::console::warn_1(&e),
        }
    });
}

async fn refresh() {
    let keys = Array::of4(
        &JsValue::from_str("connected"),
        &JsValue::from_str("port"),
        &JsValue::from_str("since"),
        &JsValue::from_str("reason"),
    );
    match chrome::storage_session_get(&keys).await {
        Ok(items) => render(&items),
        Err(e) => show(&format!("Not connected: {}", crate::util::js_error_text(&e)), false),
    }
}

fn render(state: &JsValue) {
    let connected = get(state, "connected").as_bool().unwrap_or(false);
    if connected {
        let port = get(state, "port").as_f64().map(|p| format!(" (port {p})")).unwrap_or_default();
        show(&format!("Connected to bridge{port}"), true);
    } else {
        let reason = get(state, "reason").as_string().filter(|r| !r.is_empty()).unwrap_or_else(|| "starting".into());
        show(&format!("Not connected: {reason}"), false);
    }
}

fn show(text: &str, connected: bool) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else { return };
    if let Some(el) = doc.get_element_by_id("status") {
        el.set_text_content(Some(text));
        el.set_class_name(if connected { "status connected" } else { "status disconnected" });
    }
}
