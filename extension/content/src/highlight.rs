//! The outline around the element an approval is about, so the person sees
//! on the page what they are asked to approve.
//!
//! While the service worker waits for the person it asks this script to
//! scroll the target into view and outline it ([`show`]); after the answer,
//! whatever it was, the outline goes ([`hide`]). The outline is drawn in a
//! *closed* shadow root under a host element appended to `<html>`: the
//! page's scripts cannot reach into it and its style sheets cannot reach
//! the box (the inner box resets every inherited property). The host's own
//! style is inline with `!important` and shown in the top layer
//! (`popover="manual"`), above the page's own overlays. A tick every
//! [`TICK_MS`] follows the element when it moves and puts the host back
//! (and its style) if the page removes or restyles it. The host holds no
//! text and is `aria-hidden`, so snapshots never see it; it is appended
//! last, so no element's tree position (its fingerprint) changes.

use std::cell::RefCell;

use js_sys::{Object, Reflect};
use shared::protocol::{ElementBox, Rect};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{Element, HtmlElement};

use crate::dom;
use crate::dom::call;
use crate::facts;

/// How often the outline follows its element.
const TICK_MS: i32 = 100;
/// The outline's colour: the approval window's "high risk" red.
const COLOUR: &str = "#d00000";
/// The host's style, reasserted every tick.
const HOST_STYLE: &str = "all: initial !important; display: block !important; position: fixed !important; \
    inset: 0 !important; width: 100vw !important; height: 100vh !important; margin: 0 !important; \
    padding: 0 !important; border: 0 !important; background: transparent !important; \
    pointer-events: none !important; z-index: 2147483647 !important; overflow: visible !important; \
    opacity: 1 !important; visibility: visible !important; transform: none !important; \
    filter: none !important; clip-path: none !important;";

struct Shown {
    host: Element,
    interval: i32,
    _tick: Closure<dyn FnMut()>,
}

thread_local! {
    static SHOWN: RefCell<Option<Shown>> = const { RefCell::new(None) };
}

/// Outlines the element behind `target` (the focused element when `None`)
/// and tells where it is. `None` when there is no such
/// element (the approval is still asked, just without an outline).
pub fn show(target: Option<&str>) -> Option<ElementBox> {
    hide();
    let el = match target {
        Some(t) => facts::element(t).ok()?,
        None => facts::focused()?,
    };
    let win = web_sys::window()?;
    let doc = win.document()?;
    // Only the block is centred: the page scrolls, nothing else moves.
    let opts = Object::new();
    let _ = Reflect::set(&opts, &"block".into(), &"center".into());
    let _ = Reflect::set(&opts, &"inline".into(), &"nearest".into());
    let _ = call(&el, "scrollIntoView", &[opts.into()]);

    let host = doc.create_element("chaperone-highlight").ok()?;
    let _ = host.set_attribute("aria-hidden", "true");
    let _ = host.set_attribute("style", HOST_STYLE);
    let init = Object::new();
    let _ = Reflect::set(&init, &"mode".into(), &"closed".into());
    let root = call(&host, "attachShadow", &[init.into()]).ok()?;
    let outline: HtmlElement = doc.create_element("div").ok()?.dyn_into().ok()?;
    let _ = call(&root, "appendChild", &[outline.clone().into()]);
    attach(&doc, &host);
    place(&outline, &el);

    let tick = {
        let (host, outline, el) = (host.clone(), outline.clone(), el.clone());
        Closure::<dyn FnMut()>::new(move || {
            if let Some(doc) = web_sys::window().and_then(|w| w.document()) {
                if !host.is_connected() {
                    attach(&doc, &host);
                }
                if host.get_attribute("style").as_deref() != Some(HOST_STYLE) {
                    let _ = host.set_attribute("style", HOST_STYLE);
                }
            }
            place(&outline, &el);
        })
    };
    let interval =
        win.set_interval_with_callback_and_timeout_and_arguments_0(tick.as_ref().unchecked_ref(), TICK_MS).unwrap_or(0);
    let at = element_box(&win, &el);
    SHOWN.with(|s| *s.borrow_mut() = Some(Shown { host, interval, _tick: tick }));
    at
}

/// Removes the outline (nothing happens when there is none).
pub fn hide() {
    let Some(shown) = SHOWN.with(|s| s.borrow_mut().take()) else { return };
    if let Some(win) = web_sys::window() {
        win.clear_interval_with_handle(shown.interval);
    }
    let _ = call(&shown.host, "hidePopover", &[]);
    shown.host.remove();
}

/// Appends the host to `<html>` and lifts it into the top layer.
fn attach(doc: &web_sys::Document, host: &Element) {
    let Some(html) = doc.document_element() else { return };
    let _ = html.append_child(host);
    if !dom::has(host, "popover") {
        let _ = host.set_attribute("popover", "manual");
    }
    let _ = call(host, "hidePopover", &[]);
    let _ = call(host, "showPopover", &[]);
}

/// Draws the outline over the element's current box.
fn place(outline: &HtmlElement, el: &Element) {
    let r = el.get_bounding_client_rect();
    let pad = 4.0;
    let style = format!(
        "all: initial; position: fixed; box-sizing: border-box; pointer-events: none; \
         left: {}px; top: {}px; width: {}px; height: {}px; border: 3px solid {COLOUR}; border-radius: 4px; \
         box-shadow: 0 0 0 2px #ffffff, 0 0 0 9999px rgba(0, 0, 0, 0.18);",
        r.left() - pad,
        r.top() - pad,
        r.width() + 2.0 * pad,
        r.height() + 2.0 * pad
    );
    if outline.get_attribute("style").as_deref() != Some(style.as_str()) {
        let _ = outline.set_attribute("style", &style);
    }
}

/// The element's box in the viewport, the viewport's size, the window and
/// the screen as this page sees them.
fn element_box(win: &web_sys::Window, el: &Element) -> Option<ElementBox> {
    let n = |k: &'static str| dom::prop_f64(win, k).unwrap_or(0.0).round() as i32;
    let r = el.get_bounding_client_rect();
    let screen = dom::prop(win, "screen");
    let s = |k: &'static str| dom::prop_f64(&screen, k).unwrap_or(0.0).round() as i32;
    let round = |v: f64| v.round() as i32;
    Some(ElementBox {
        element: Rect {
            left: round(r.left()),
            top: round(r.top()),
            width: round(r.width()),
            height: round(r.height()),
        },
        viewport_width: n("innerWidth"),
        viewport_height: n("innerHeight"),
        window: Rect { left: n("screenX"), top: n("screenY"), width: n("outerWidth"), height: n("outerHeight") },
        screen: Rect { left: s("availLeft"), top: s("availTop"), width: s("availWidth"), height: s("availHeight") },
    })
}
