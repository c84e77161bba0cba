//! The per-browser layer: what differs between Chromium and Firefox for
//! the worker, decided here and nowhere else (ARCHITECTURE.md, "Firefox").
//!
//! The same WASM runs as Chromium's service worker and as Firefox's event
//! page (`manifest/firefox.json`, `background.scripts`). Both expose the
//! `chrome.*` namespace with promises; the differences the worker meets:
//!
//! - What the loader must register synchronously differs (no
//!   `extraHeaders` in `webRequest` options, no
//!   `downloads.onDeterminingFilename` in Firefox): `static/background.js`
//!   tests the extension's own URL scheme (`moz-extension:`) for that.
//! - Firefox's `alarms.create` returns nothing, not a promise
//!   ([`alarms_create`]).
//! - Firefox has no `contentSettings` ([`has_content_settings`]): its
//!   downloads are not held per origin as Chromium's are, so the
//!   automatic-downloads setting has nothing to change there.
//! - The content script runs as WebAssembly only in Chromium
//!   ([`is_gecko`], `crate::page_csp`).
//! - Feature checks ([`has`]) read the live namespace, so a browser that
//!   gains an API uses it without a rebuild.

use js_sys::{Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["chrome", "alarms"], js_name = create, catch)]
    fn alarms_create_raw(name: &str, info: &Object) -> Result<JsValue, JsValue>;
}

/// Whether `chrome.<path…>` exists in this browser (e.g. `["contentSettings"]`).
pub fn has(path: &[&str]) -> bool {
    let mut v: JsValue = js_sys::global().into();
    for key in std::iter::once(&"chrome").chain(path) {
        v = Reflect::get(&v, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED);
        if v.is_undefined() || v.is_null() {
            return false;
        }
    }
    true
}

/// Whether this is Firefox (the extension's own URL scheme is
/// `moz-extension:`, as `static/background.js` tests it). Firefox gets
/// the plain content script only (`crate::page_csp`).
pub fn is_gecko() -> bool {
    crate::chrome::runtime_get_url("").starts_with("moz-extension:")
}

/// `chrome.contentSettings` (Chromium only).
pub fn has_content_settings() -> bool {
    has(&["contentSettings", "automaticDownloads"])
}

/// `chrome.alarms.create`: a promise in Chromium, nothing in Firefox.
pub async fn alarms_create(name: &str, info: &Object) -> Result<JsValue, JsValue> {
    let ret = alarms_create_raw(name, info)?;
    JsFuture::from(Promise::resolve(&ret)).await
}
