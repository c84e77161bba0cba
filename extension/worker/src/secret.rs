//! The value of a stored secret, fetched for one gated `Act` (see
//! `shared::action`'s module docs). The bridge's `Act` names the secret
//! (`Action::TypeSecret`); `gate::act` calls [`reveal`] only after its
//! whole gate let the action through, right before the content script
//! acts. Exactly:
//!
//! - The tab's URL is read again now; a tab that left the origin the
//!   action was decided for is `STALE_REF`, and nothing is asked.
//! - One `ExtToBridge::SecretRequest { request, origin }` goes to the
//!   bridge on the current connection. Its answer counts only when it
//!   comes on that same connection for that request, once ([`answer`]);
//!   anything else is dropped. No answer within `COMMAND_TIMEOUT_MS` →
//!   `TIMEOUT`; the connection closing → `EXTENSION_DISCONNECTED`; the
//!   bridge refusing → its error. Nothing is typed in any of these cases.
//! - The value goes only into the `Action::Type` handed to the content
//!   script; it is never stored, logged or shown.

use std::cell::RefCell;
use std::collections::HashMap;

use js_sys::{Function, Promise};
use shared::action::{Action, SecretText};
use shared::error::{ErrorCode, WireError};
use shared::protocol::{ExtToBridge, TabId};
use wasm_bindgen::prelude::*;

use crate::util::with_timeout;

struct Waiting {
    /// The connection the request went out on.
    generation: u64,
    resolve: Function,
    answer: Option<Result<SecretText, WireError>>,
}

thread_local! {
    /// Requests waiting for the bridge's answer, by gate request id.
    static WAITING: RefCell<HashMap<u64, Waiting>> = RefCell::new(HashMap::new());
}

/// `action` ready for the content script: a `TypeSecret` becomes a `Type`
/// with the value the bridge released for gate `request` on the live
/// origin; any other action is returned as it is.
pub async fn reveal(tab: TabId, request: u64, action: Action, decided_origin: &str) -> Result<Action, WireError> {
    let Action::TypeSecret { name, submit } = action else { return Ok(action) };
    let url = crate::tabs::tab_url(tab).await?;
    // Compared as origins (`shared::url::Origin`), only between web pages.
    let live = shared::url::Origin::of(&url);
    let Some(origin) = live.filter(|o| Some(o) == shared::url::Origin::of(decided_origin).as_ref()) else {
        return Err(WireError::new(
            ErrorCode::StaleRef,
            "the tab is no longer on the page the action was decided for; take a new browser_snapshot",
        ));
    };
    let origin = origin.to_string();
    let Some(generation) = crate::conn::connected_generation() else {
        return Err(WireError::new(
            ErrorCode::ExtensionDisconnected,
            format!("the extension lost the bridge before the secret {name} was typed; nothing was typed"),
        ));
    };
    if WAITING.with(|w| w.borrow().contains_key(&request)) {
        return Err(WireError::new(ErrorCode::InvalidRequest, "this request id already waits for a secret"));
    }
    let promise = Promise::new(&mut |resolve, _reject| {
        WAITING.with(|w| w.borrow_mut().insert(request, Waiting { generation, resolve, answer: None }));
    });
    crate::conn::send(generation, &ExtToBridge::SecretRequest { request, origin });
    let _ = with_timeout(promise, shared::limits::COMMAND_TIMEOUT_MS as u32).await;
    let waited = WAITING.with(|w| w.borrow_mut().remove(&request));
    match waited.and_then(|w| w.answer) {
        Some(Ok(value)) => {
            crate::typed::remember(&name, value.expose());
            Ok(Action::Type { text: value.into_inner(), submit })
        }
        Some(Err(e)) => Err(e),
        None if crate::conn::connected_generation() != Some(generation) => Err(WireError::new(
            ErrorCode::ExtensionDisconnected,
            format!("the connection to the bridge closed before the secret {name} arrived; nothing was typed"),
        )),
        None => Err(WireError::new(
            ErrorCode::Timeout,
            format!("the bridge did not send the secret {name} in time; nothing was typed"),
        )),
    }
}

/// The bridge's answer to the `SecretRequest` of gate `request`, on the
/// connection `generation`. Dropped unless exactly that request waits on
/// that connection and has no answer yet.
pub fn answer(generation: u64, request: u64, outcome: Result<SecretText, WireError>) {
    let resolve = WAITING.with(|w| {
        let mut w = w.borrow_mut();
        let waiting = w.get_mut(&request).filter(|x| x.generation == generation && x.answer.is_none())?;
        waiting.answer = Some(outcome);
        Some(waiting.resolve.clone())
    });
    match resolve {
        Some(resolve) => {
            let _ = resolve.call0(&JsValue::NULL);
        }
        None => web_sys::console::warn_1(&JsValue::from_str("chaperone: ignored a secret answer nobody waits for")),
    }
}

/// The connection `generation` closed: its requests end now (without an
/// answer, so [`reveal`] reports the lost connection).
pub fn connection_closed(generation: u64) {
    let ended: Vec<Function> = WAITING
        .with(|w| w.borrow().values().filter(|x| x.generation == generation).map(|x| x.resolve.clone()).collect());
    for resolve in ended {
        let _ = resolve.call0(&JsValue::NULL);
    }
}
