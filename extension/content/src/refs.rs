//! Element refs: stable for the same element across snapshots of the same
//! document, never reused, never written into the DOM.

use shared::snapshot::ref_number;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::Element;

// The two tables live on the JS side: a ref is one call that answers a
// number, where a `WeakMap` driven from Rust was three (the lookup, the
// number read out of it, the handle dropped) for every control of every
// snapshot. `byElement` holds no element alive (a `WeakMap`), nor does
// `byRef` (`WeakRef`s); numbers only grow, so a ref is never reused.
#[wasm_bindgen(inline_js = r#"
const byElement = new WeakMap();
const byRef = new Map();
let last = 0;
export function chaperoneRefOf(el) {
  let n = byElement.get(el);
  if (n === undefined) {
    n = ++last;
    byElement.set(el, n);
    byRef.set(n, new WeakRef(el));
  }
  return n;
}
export function chaperoneRefTarget(n) {
  const weak = byRef.get(n);
  return weak === undefined ? null : (weak.deref() ?? null);
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = chaperoneRefOf)]
    fn ref_of(el: &Element) -> u32;
    #[wasm_bindgen(js_name = chaperoneRefTarget)]
    fn ref_target(n: u32) -> JsValue;
}

/// The ref of `el`, assigning the next free one on first sight.
pub fn ref_for(el: &Element) -> String {
    shared::snapshot::ref_name(ref_of(el))
}

/// The live element behind `r`, if it still exists and is in a document.
pub fn lookup(r: &str) -> Option<Element> {
    let el: Element = ref_target(ref_number(r)?).dyn_into().ok()?;
    if el.is_connected() { Some(el) } else { None }
}
