//! Chaperone content script (DESIGN §4, §8).
//!
//! Runs inside every http(s) page, compiled from WASM to plain JS with
//! binaryen's `wasm2js` so that strict page CSPs (no `'wasm-unsafe-eval'`)
//! cannot stop it. Loaded lazily by `static/content.js` on the first
//! message from the service worker. Kept lean: DOM walking only; no
//! policy, formatting or redaction here.
//!
//! Refs (`e1`, `e2`, …) live only in this script's memory: a `WeakMap`
//! element → ref and a `Map` ref → `WeakRef(element)`. Nothing is written
//! into the page's DOM.

use js_sys::Promise;
use serde::Deserialize;
use shared::error::{ErrorCode, WireError};
use shared::protocol::{CommandResult, Outcome};
use shared::snapshot::{SnapshotRequest, TextRequest};
use wasm_bindgen::prelude::*;

mod act;
mod challenge;
mod dom;
mod facts;
mod name;
mod refs;
mod roles;
mod snapshot;
mod text;

/// Messages from the service worker (`chrome.tabs.sendMessage`).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentRequest {
    Snapshot {
        #[serde(default)]
        request: SnapshotRequest,
    },
    ExtractText {
        #[serde(default)]
        request: TextRequest,
    },
    /// `history.go(delta)`: used when `chrome.tabs.goBack/goForward` refuse
    /// entries that Chrome's history intervention marks as skippable.
    History { delta: i32 },
    /// Facts about the element behind a ref (or the focused element).
    Resolve { target: Option<String> },
    /// One action the service worker has gated, on the element it
    /// classified (`verify`: acted on only while the live element still
    /// resolves to exactly these facts).
    Act { target: Option<String>, action: shared::action::Action, verify: Option<shared::action::ResolvedElement> },
}

/// Entry point for `static/content.js`: answers one message with a Promise
/// of a JSON string holding a `shared::protocol::Outcome`.
#[wasm_bindgen]
pub fn handle_message(msg: JsValue) -> Promise {
    let outcome = match parse(&msg) {
        Ok(ContentRequest::Act { target, action, verify }) => return act::act(target, action, verify),
        Ok(ContentRequest::Resolve { target }) => act::resolve(target.as_deref()),
        Ok(ContentRequest::Snapshot { request }) => match snapshot::take(&request) {
            Ok(snapshot) => Outcome::Ok(CommandResult::Snapshot { snapshot }),
            Err(e) => Outcome::Err(e),
        },
        Ok(ContentRequest::ExtractText { request }) => match text::extract(&request) {
            Ok(text) => Outcome::Ok(CommandResult::Text { text }),
            Err(e) => Outcome::Err(e),
        },
        Ok(ContentRequest::History { delta }) => match go(delta) {
            Ok(()) => Outcome::Ok(CommandResult::Tabs { tabs: Vec::new() }),
            Err(e) => Outcome::Err(e),
        },
        Err(e) => Outcome::Err(e),
    };
    let json = serde_json::to_string(&outcome)
        .unwrap_or_else(|_| r#"{"err":{"code":"INTERNAL","message":"could not encode the reply"}}"#.to_string());
    Promise::resolve(&JsValue::from_str(&json))
}

fn go(delta: i32) -> Result<(), WireError> {
    let history = web_sys::window()
        .and_then(|w| w.history().ok())
        .ok_or_else(|| WireError::new(ErrorCode::Internal, "no history"))?;
    if delta == 0 || history.length().unwrap_or(0) <= 1 {
        return Err(WireError::new(ErrorCode::InvalidRequest, "no page to go to in this tab's history"));
    }
    history.go_with_delta(delta).map_err(|_| WireError::new(ErrorCode::Internal, "history navigation failed"))
}

fn parse(msg: &JsValue) -> Result<ContentRequest, WireError> {
    let text = js_sys::JSON::stringify(msg)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| WireError::new(ErrorCode::InvalidRequest, "message is not JSON"))?;
    serde_json::from_str(&text).map_err(|_| WireError::new(ErrorCode::InvalidRequest, "unknown message"))
}
