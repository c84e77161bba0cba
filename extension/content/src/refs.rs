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

/// The ref of `el`, assigning the next free one on first sight. Both
/// tables key on the ref's number, not its text: a number crosses from JS
/// without a string copy (a snapshot asks this of every control).
pub fn ref_for(el: &Element) -> String {
    TABLE.with(|t| {
        let obj: &js_sys::Object = el.unchecked_ref();
        if let Some(n) = t.by_element.get(obj).as_f64() {
            return format!("e{}", n as u32);
        }
        let n = t.next.get() + 1;
        t.next.set(n);
        let key = JsValue::from_f64(f64::from(n));
        t.by_element.set(obj, &key);
        t.by_ref.set(&key, &WeakRef::new(el));
        format!("e{n}")
    })
}

/// The number of a ref as given out: `e` and a decimal without a sign or
/// leading zero.
fn number_of(r: &str) -> Option<u32> {
    let digits = r.strip_prefix('e')?;
    if digits.is_empty() || digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The live element behind `r`, if it still exists and is in a document.
pub fn lookup(r: &str) -> Option<Element> {
    let n = number_of(r)?;
    TABLE.with(|t| {
        let weak = t.by_ref.get(&JsValue::from_f64(f64::from(n)));
        if weak.is_undefined() {
            return None;
        }
        let el: Element = weak.unchecked_into::<WeakRef>().deref().dyn_into().ok()?;
        if el.is_connected() { Some(el) } else { None }
    })
}

#[cfg(test)]
mod tests {
    use super::number_of;

    #[test]
    fn only_refs_as_given_out_have_a_number() {
        assert_eq!(number_of("e1"), Some(1));
        assert_eq!(number_of("e4096"), Some(4096));
        for bad in ["", "e", "e0", "e01", "e-1", "e+1", "E1", "1", "e1 ", "e1.0", "e99999999999"] {
            assert_eq!(number_of(bad), None, "{bad:?}");
        }
    }
}
