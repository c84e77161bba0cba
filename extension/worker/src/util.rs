//! Small helpers: JS objects, timers, error text.

use js_sys::{Array, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use crate::chrome;

/// Builds a plain object from key/value pairs.
pub fn obj(pairs: &[(&str, JsValue)]) -> Object {
    let o = Object::new();
    for (k, v) in pairs {
        let _ = Reflect::set(&o, &JsValue::from_str(k), v);
    }
    o
}

/// `url` up to its fragment: two URLs equal so are the same document.
pub fn without_fragment(url: &str) -> &str {
    url.split_once('#').map_or(url, |(u, _)| u)
}

pub fn get(o: &JsValue, key: &str) -> JsValue {
    Reflect::get(o, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

/// A Promise resolving to `value` after `ms` milliseconds.
pub fn delay(ms: u32, value: JsValue) -> Promise {
    timer(ms, &value).0
}

/// [`delay`] and the id of its timer, for `clearTimeout`.
fn timer(ms: u32, value: &JsValue) -> (Promise, JsValue) {
    let mut id = JsValue::UNDEFINED;
    let promise = Promise::new(&mut |resolve, _reject| {
        let resolve: js_sys::Function = resolve.bind1(&JsValue::NULL, value).unchecked_into();
        id = chrome::set_timeout(&resolve, ms.min(i32::MAX as u32) as i32);
    });
    (promise, id)
}

pub async fn sleep(ms: u32) {
    let _ = JsFuture::from(delay(ms, JsValue::UNDEFINED)).await;
}

/// Marker value a timed-out race resolves to.
fn timeout_marker() -> JsValue {
    JsValue::from_str("\u{0}chaperone-timeout")
}

/// Waits for `p` at most `ms`. `Ok(None)` on timeout; `Err` when `p` rejects.
/// The timer goes when the race is decided: every page call waits this
/// way, and a timer left running would outlive it by its whole bound
/// (25 s for a page, holding the call's closures that long).
pub async fn with_timeout(p: Promise, ms: u32) -> Result<Option<JsValue>, JsValue> {
    let marker = timeout_marker();
    let (timeout, id) = timer(ms, &marker);
    let v = JsFuture::from(Promise::race(&Array::of2(&p, &timeout))).await;
    chrome::clear_timeout(&id);
    let v = v?;
    if v == marker { Ok(None) } else { Ok(Some(v)) }
}

/// Short text of a thrown JS value (its `message`, no stack).
pub fn js_error_text(e: &JsValue) -> String {
    if let Some(s) = e.as_string() {
        return s;
    }
    if let Some(m) = get(e, "message").as_string() {
        return m;
    }
    "unknown error".to_string()
}

/// Parses a JS value into a serde type through JSON.
pub fn from_js<T: serde::de::DeserializeOwned>(v: &JsValue) -> Result<T, String> {
    let text = js_sys::JSON::stringify(v).map_err(|e| js_error_text(&e))?;
    let text = text.as_string().ok_or("not JSON")?;
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// Serialises a serde value into a JS value through JSON.
pub fn to_js<T: serde::Serialize>(v: &T) -> JsValue {
    serde_json::to_string(v).ok().and_then(|s| js_sys::JSON::parse(&s).ok()).unwrap_or(JsValue::NULL)
}

pub fn now_ms() -> f64 {
    js_sys::Date::now()
}
