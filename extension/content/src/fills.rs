//! Filled sensitive fields: what the worker must know so that nothing this
//! page sends afterwards is captured whole (`shared::withhold`, issue 47).
//!
//! - From the script's start, listeners on the window (capture phase,
//!   passive, in this isolated world: the page sees none) watch `input`
//!   and `change`; a sensitive field (`dom::value_is_sensitive`: a
//!   password, card, code or other sensitive kind, or a field the agent
//!   typed a secret into) that holds a value makes this document report
//!   `ContentReport::SensitiveFilled`, once, from the moment the value came
//!   (no request that started before it can hold it). Fields filled before
//!   the script came are found by one look at the document's inputs when
//!   it starts, and withhold from the document's start
//!   (`performance.timeOrigin`).
//! - The agent's secret typed into a field ([`secret_typed`], from `act`)
//!   marks the field for the rest of the document's life, whatever the
//!   page then makes of its type or name (`dom::mark_secret`), and
//!   reports at once.

use std::cell::{Cell, RefCell};

use js_sys::Function;
use shared::withhold::ContentReport;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::Element;

use crate::dom;

/// How much earlier than this script's clock a withheld window begins: the
/// browser process stamps requests with its own reading of the same clock.
const CLOCK_SLACK_MS: f64 = 50.0;

thread_local! {
    static REPORT: RefCell<Option<Function>> = const { RefCell::new(None) };
    static REPORTED: Cell<bool> = const { Cell::new(false) };
}

/// Called once when the script starts, with the loader's way to the worker.
pub fn start(send: Function) {
    REPORT.with(|r| *r.borrow_mut() = Some(send));
    let Some(win) = web_sys::window() else { return };
    let cb = Closure::<dyn FnMut(JsValue)>::new(|ev: JsValue| {
        if REPORTED.with(Cell::get) {
            return;
        }
        if dom::prop(&ev, "target").dyn_into::<Element>().ok().is_some_and(|el| filled_sensitive(&el)) {
            // No request that started before the value was there holds it.
            report(js_sys::Date::now() - CLOCK_SLACK_MS);
        }
    })
    .into_js_value();
    let opts = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&opts, &"capture".into(), &JsValue::TRUE);
    let _ = js_sys::Reflect::set(&opts, &"passive".into(), &JsValue::TRUE);
    for kind in ["input", "change"] {
        let _ = dom::call(&win, "addEventListener", &[JsValue::from_str(kind), cb.clone(), opts.clone().into()]);
    }
    // Filled before this script came (the person typed first).
    if let Some(doc) = win.document()
        && let Ok(list) = doc.query_selector_all("input, textarea")
    {
        for i in 0..list.length() {
            if let Some(el) = list.item(i).and_then(|n| n.dyn_into::<Element>().ok())
                && filled_sensitive(&el)
            {
                report(document_start());
                break;
            }
        }
    }
}

/// The agent's secret is being typed into `el`.
pub fn secret_typed(el: &Element) {
    dom::mark_secret(el);
    report(js_sys::Date::now() - CLOCK_SLACK_MS);
}

/// The document's start (`performance.timeOrigin`, ms since the epoch).
fn document_start() -> f64 {
    let performance = web_sys::window().map(|w| dom::prop(&w, "performance")).unwrap_or(JsValue::UNDEFINED);
    dom::prop_f64(&performance, "timeOrigin").unwrap_or(0.0)
}

fn filled_sensitive(el: &Element) -> bool {
    let value = dom::prop(el, "value").as_string().unwrap_or_default();
    !value.is_empty() && dom::value_is_sensitive(el)
}

/// Tells the worker once for this document: its requests that started at
/// `since_ms` or later are withheld.
fn report(since_ms: f64) {
    if REPORTED.with(|r| r.replace(true)) {
        return;
    }
    let Ok(json) = serde_json::to_string(&ContentReport::SensitiveFilled { since_ms }) else { return };
    let Ok(msg) = js_sys::JSON::parse(&json) else { return };
    let Some(send) = REPORT.with(|r| r.borrow().clone()) else { return };
    // The answer does not matter; a closed worker must not become an
    // unhandled rejection in the page's console.
    if let Ok(p) = send.call1(&JsValue::UNDEFINED, &msg)
        && p.is_object()
    {
        let noop = Closure::<dyn FnMut(JsValue)>::new(|_| {});
        let _ = dom::call(&p, "catch", &[noop.as_ref().clone()]);
        noop.forget();
    }
}
