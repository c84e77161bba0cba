//! The stored secrets the agent typed, kept as keyed hashes only
//! (`shared::typed_secrets`): every capture is masked with them before it
//! leaves the worker, so a page sending a typed secret on shows
//! `{secret:NAME}` and the value never comes back over the socket. The
//! key is drawn from `crypto.getRandomValues` when the worker first
//! starts and never leaves the extension: key and hashes (never a value)
//! are kept in the memory-only `chrome.storage.session` (which only the
//! extension's own pages and worker can read) so that a restarted worker
//! masks the same secrets; captures wait for that read ([`loaded`],
//! bounded) before they are sent.

use std::cell::{Cell, RefCell};

use js_sys::Uint8Array;
use shared::network::Captured;
use shared::typed_secrets::{Key, TypedSecrets};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::spawn_local;

use crate::chrome;
use crate::util::{get, obj, sleep};

/// The `chrome.storage.session` key (a JSON string: `TypedSecrets::to_json`).
const KEY: &str = "typedSecrets";
/// Longest wait for the stored hashes before a capture is sent anyway.
const LOAD_WAIT_MS: u32 = 1_000;

thread_local! {
    static TYPED: RefCell<TypedSecrets> = RefCell::new(TypedSecrets::new(random_key()));
    static LOADED: Cell<bool> = const { Cell::new(false) };
}

/// Reads the hashes a previous run of the worker kept (once, at start).
pub fn load() {
    spawn_local(async {
        if let Ok(items) = chrome::storage_session_get(&JsValue::from_str(KEY)).await
            && let Some(text) = get(&items, KEY).as_string()
            && let Some(kept) = TypedSecrets::from_json(&text)
        {
            // Typed before the read finished (never, in practice): this run's win.
            TYPED.with(|t| {
                if t.borrow().is_empty() {
                    *t.borrow_mut() = kept;
                }
            });
        }
        LOADED.with(|l| l.set(true));
    });
}

/// Waits (at most `LOAD_WAIT_MS`) for [`load`] to finish.
pub async fn loaded() {
    let mut waited = 0;
    while !LOADED.with(Cell::get) && waited < LOAD_WAIT_MS {
        sleep(20).await;
        waited += 20;
    }
}

/// Whether [`load`] finished.
pub fn is_loaded() -> bool {
    LOADED.with(Cell::get)
}

async fn save() {
    let text = TYPED.with(|t| t.borrow().to_json());
    if let Err(e) = chrome::storage_session_set(&obj(&[(KEY, JsValue::from_str(&text))])).await {
        web_sys::console::warn_1(&e);
    }
}

/// 128 random bits from `crypto.getRandomValues`.
fn random_key() -> Key {
    let bytes = Uint8Array::new_with_length(16);
    let crypto = get(&js_sys::global(), "crypto");
    if let Some(f) = get(&crypto, "getRandomValues").dyn_ref::<js_sys::Function>() {
        let _ = f.call1(&crypto, &bytes);
    }
    let mut b = [0u8; 16];
    bytes.copy_to(&mut b);
    let half = |s: &[u8]| u64::from_le_bytes(s.try_into().unwrap_or_default());
    if b == [0; 16] {
        // No Web Crypto (a service worker always has it): still a key per run.
        return Key([crate::util::now_ms().to_bits() ^ 0x9e37_79b9_7f4a_7c15, js_sys::Math::random().to_bits()]);
    }
    Key([half(&b[..8]), half(&b[8..])])
}

/// The stored secret `name` with `value` is about to be typed: from now
/// on every capture shows it as `{secret:NAME}`, wherever it appears.
pub fn remember(name: &str, value: &str) {
    TYPED.with(|t| t.borrow_mut().remember(name, value));
    spawn_local(save());
}

/// Every text of `c` with the typed secrets masked.
pub fn mask_captured(c: &mut Captured) {
    TYPED.with(|t| t.borrow().mask_captured(c));
}

/// `text` with the typed secrets masked.
pub fn mask(text: &str) -> String {
    TYPED.with(|t| t.borrow().mask(text).into_owned())
}
