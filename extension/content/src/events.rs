//! Events dispatched on the page's elements as the page's own code would
//! build them (`new MouseEvent(type, init)` through the page's
//! constructors), for `act` and `upload`.

use js_sys::{Array, Function, Object, Reflect};
use shared::error::WireError;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::dom::call;

/// The page's global constructor `name` (`MouseEvent`, `DataTransfer`, …).
pub fn global_ctor(name: &str) -> Result<Function, WireError> {
    Reflect::get(&js_sys::global(), &JsValue::from_str(name))
        .ok()
        .and_then(|c| c.dyn_into::<Function>().ok())
        .ok_or_else(|| WireError::internal(format!("no {name} here")))
}

/// `new <ctor>(type, init)` dispatched on `target`; true when not cancelled.
pub fn dispatch(target: &JsValue, ctor: &str, kind: &str, init: &Object) -> bool {
    let Ok(c) = global_ctor(ctor) else { return true };
    let Ok(ev) = Reflect::construct(&c, &Array::of2(&JsValue::from_str(kind), init)) else { return true };
    call(target, "dispatchEvent", &[ev]).map(|v| v.as_bool().unwrap_or(true)).unwrap_or(true)
}

/// An event's init dictionary (or any options object) from `pairs`.
pub fn init(pairs: &[(&str, JsValue)]) -> Object {
    let o = Object::new();
    for (k, v) in pairs {
        let _ = Reflect::set(&o, &JsValue::from_str(k), v);
    }
    o
}

/// `{bubbles, cancelable, composed}`, as a person's input fires them.
pub fn bubbling() -> Object {
    init(&[("bubbles", JsValue::TRUE), ("cancelable", JsValue::TRUE), ("composed", JsValue::TRUE)])
}
