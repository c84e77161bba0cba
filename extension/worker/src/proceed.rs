//! The last word of the bridge before an approved `Act` runs (issue 14,
//! "Restarts and crashes"). While the person is asked, the bridge knows
//! nothing has run (`ExtToBridge::Asking`, sent before the question is
//! shown); if the connection is lost then — the service worker stopped,
//! the bridge died — the agent is told `APPROVAL_DENIED` ("nothing ran").
//! So once the person approved, [`go_ahead`] sends
//! `ExtToBridge::Proceeding` and the action runs only after the bridge's
//! `BridgeToExt::Proceed { go: true }` for that request, on that same
//! connection: the bridge has then switched to "it may have run"
//! (`EFFECT_UNKNOWN` on a lost answer). `go: false` (its call no longer
//! waits: it timed out, or was already told), no answer within
//! `COMMAND_TIMEOUT_MS` or the connection closing → nothing runs.

use std::cell::RefCell;
use std::collections::HashMap;

use js_sys::{Function, Promise};
use shared::error::{ErrorCode, WireError};
use shared::protocol::ExtToBridge;
use wasm_bindgen::prelude::*;

use crate::util::with_timeout;

struct Waiting {
    generation: u64,
    resolve: Function,
    go: Option<bool>,
}

thread_local! {
    /// Approved requests waiting for the bridge's go, by gate request id.
    static WAITING: RefCell<HashMap<u64, Waiting>> = RefCell::new(HashMap::new());
}

/// Tells the bridge the person is being asked about `request`.
pub fn asking(request: u64) {
    if let Some(generation) = crate::conn::connected_generation() {
        crate::conn::send(generation, &ExtToBridge::Asking { request });
    }
}

/// Ok once the bridge said `request` may run now.
pub async fn go_ahead(request: u64) -> Result<(), WireError> {
    let lost = || {
        WireError::new(
            ErrorCode::ExtensionDisconnected,
            "the connection to the bridge was lost after the approval; the action did not run",
        )
    };
    let Some(generation) = crate::conn::connected_generation() else { return Err(lost()) };
    if WAITING.with(|w| w.borrow().contains_key(&request)) {
        return Err(WireError::new(ErrorCode::InvalidRequest, "this request already waits to proceed"));
    }
    let promise = Promise::new(&mut |resolve, _reject| {
        WAITING.with(|w| w.borrow_mut().insert(request, Waiting { generation, resolve, go: None }));
    });
    crate::conn::send(generation, &ExtToBridge::Proceeding { request });
    let _ = with_timeout(promise, shared::limits::COMMAND_TIMEOUT_MS as u32).await;
    match WAITING.with(|w| w.borrow_mut().remove(&request)).and_then(|w| w.go) {
        Some(true) => Ok(()),
        Some(false) => Err(WireError::new(
            ErrorCode::Timeout,
            "the bridge no longer waits for this action (it was approved too late); it did not run",
        )),
        None => Err(lost()),
    }
}

/// The bridge's `Proceed` for `request` on connection `generation`;
/// dropped unless exactly that request waits on that connection.
pub fn answer(generation: u64, request: u64, go: bool) {
    let resolve = WAITING.with(|w| {
        let mut w = w.borrow_mut();
        let waiting = w.get_mut(&request).filter(|x| x.generation == generation && x.go.is_none())?;
        waiting.go = Some(go);
        Some(waiting.resolve.clone())
    });
    if let Some(resolve) = resolve {
        let _ = resolve.call0(&JsValue::NULL);
    }
}

/// Connection `generation` closed: its approved requests do not run.
pub fn connection_closed(generation: u64) {
    let ended: Vec<Function> = WAITING
        .with(|w| w.borrow().values().filter(|x| x.generation == generation).map(|x| x.resolve.clone()).collect());
    for resolve in ended {
        let _ = resolve.call0(&JsValue::NULL);
    }
}
