//! The stored secrets the agent typed, kept as keyed hashes only
//! (`shared::typed_secrets`): every capture is masked with them before it
//! leaves the worker, so a page sending a typed secret on shows
//! `{secret:NAME}` and the value never comes back over the socket. The
//! key is drawn from `crypto.getRandomValues` when the worker starts and
//! never leaves it.

use std::cell::RefCell;

use js_sys::Uint8Array;
use shared::network::Captured;
use shared::typed_secrets::{Key, TypedSecrets};
use wasm_bindgen::JsCast;

use crate::util::get;

thread_local! {
    static TYPED: RefCell<TypedSecrets> = RefCell::new(TypedSecrets::new(random_key()));
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
}

/// Every text of `c` with the typed secrets masked.
pub fn mask_captured(c: &mut Captured) {
    TYPED.with(|t| t.borrow().mask_captured(c));
}

/// `text` with the typed secrets masked.
pub fn mask(text: &str) -> String {
    TYPED.with(|t| t.borrow().mask(text).into_owned())
}
