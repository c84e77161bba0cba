//! Element refs: stable for the same element across snapshots of the same
//! document, never reused, never written into the DOM.

use std::cell::Cell;

use js_sys::{Map, WeakMap};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::Element;

#[wasm_bindgen]
extern "C" {
    /// `WeakRef` (not in js-sys 0.3): lets the ref table keep no element alive.
    type WeakRef;
    #[wasm_bindgen(constructor)]
    fn new(target: &JsValue) -> WeakRef;
    #[wasm_bindgen(method)]
    fn deref(this: &WeakRef) -> JsValue;
}

struct Table {
    by_element: WeakMap,
    by_ref: Map,
    next: Cell<u32>,
}

thread_local! {
    static TABLE: Table = Table { by_element: WeakMap::new(), by_ref: Map::new(), next: Cell::new(0) };
}

/// The ref of `el`, assigning the next free one on first sight.
pub fn ref_for(el: &Element) -> String {
    TABLE.with(|t| {
        let obj: &js_sys::Object = el.unchecked_ref();
        if let Some(r) = t.by_element.get(obj).as_string() {
            return r;
        }
        let n = t.next.get() + 1;
        t.next.set(n);
        let r = format!("e{n}");
        let key = JsValue::from_str(&r);
        t.by_element.set(obj, &key);
        t.by_ref.set(&key, &WeakRef::new(el));
        r
    })
}

/// The live element behind `r`, if it still exists and is in a document.
pub fn lookup(r: &str) -> Option<Element> {
    TABLE.with(|t| {
        let weak = t.by_ref.get(&JsValue::from_str(r));
        if weak.is_undefined() {
            return None;
        }
        let el: Element = weak.unchecked_into::<WeakRef>().deref().dyn_into().ok()?;
        if el.is_connected() { Some(el) } else { None }
    })
}
