//! Small DOM helpers shared by the walk, roles and names: attribute access,
//! visibility (one `checkVisibility()` call per element on the fast path,
//! `getComputedStyle` only when it says no), flat-tree children.

use js_sys::{Array, Function, Object, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{Element, Window};

#[wasm_bindgen]
extern "C" {
    /// An element seen through the one method web-sys lacks.
    type VisElement;
    /// `Element.checkVisibility(options)` (Chromium 105+).
    #[wasm_bindgen(method, js_name = checkVisibility)]
    fn check_visibility_js(this: &VisElement, opts: &JsValue) -> bool;
}

#[wasm_bindgen]
extern "C" {
    /// An element seen through methods taking JS strings, so attribute
    /// names and selectors cross into JS once per page, not once per call
    /// (decoding a string from wasm memory costs more than the DOM call).
    type JsElement;
    #[wasm_bindgen(method, js_name = getAttribute)]
    fn get_attribute_js(this: &JsElement, name: &JsValue) -> Option<String>;
    #[wasm_bindgen(method, js_name = hasAttribute)]
    fn has_attribute_js(this: &JsElement, name: &JsValue) -> bool;
    #[wasm_bindgen(method, catch, js_name = matches)]
    fn matches_js(this: &JsElement, selector: &JsValue) -> Result<bool, JsValue>;
    #[wasm_bindgen(method, catch, js_name = closest)]
    fn closest_js(this: &JsElement, selector: &JsValue) -> Result<Option<Element>, JsValue>;
    #[wasm_bindgen(method, catch, js_name = querySelector)]
    fn query_selector_js(this: &JsElement, selector: &JsValue) -> Result<Option<Element>, JsValue>;
}

thread_local! {
    /// JS strings for the attribute names, property names and selectors
    /// this crate uses.
    static NAMES: std::cell::RefCell<Vec<(&'static str, JsValue)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `name` as a JS string, cached (decoding a string from wasm memory costs
/// more than the DOM call it is passed to). Not generic on purpose: under
/// wasm2js every copy of a function warms up in the JIT on its own.
fn js_name(name: &'static str) -> JsValue {
    NAMES.with(|n| {
        let mut n = n.borrow_mut();
        if let Some((_, v)) = n.iter().find(|(k, _)| std::ptr::eq(k.as_ptr(), name.as_ptr()) && k.len() == name.len()) {
            return v.clone();
        }
        if let Some((_, v)) = n.iter().find(|(k, _)| k.len() == name.len() && *k == name) {
            return v.clone();
        }
        let v = JsValue::from_str(name);
        if n.len() < 256 {
            n.push((name, v.clone()));
        }
        v
    })
}

pub fn attr(el: &Element, name: &'static str) -> Option<String> {
    el.unchecked_ref::<JsElement>().get_attribute_js(&js_name(name))
}

pub fn has(el: &Element, name: &'static str) -> bool {
    el.unchecked_ref::<JsElement>().has_attribute_js(&js_name(name))
}

/// `el.matches(selector)`; false when the selector is invalid.
pub fn matches(el: &Element, selector: &'static str) -> bool {
    el.unchecked_ref::<JsElement>().matches_js(&js_name(selector)).unwrap_or(false)
}

/// `el.closest(selector)`.
pub fn closest(el: &Element, selector: &'static str) -> Option<Element> {
    el.unchecked_ref::<JsElement>().closest_js(&js_name(selector)).ok().flatten()
}

/// `el.querySelector(selector)`.
pub fn query_selector(el: &Element, selector: &'static str) -> Option<Element> {
    el.unchecked_ref::<JsElement>().query_selector_js(&js_name(selector)).ok().flatten()
}

/// `el.matches(selector)` for a selector held as a JS string.
pub fn matches_value(el: &Element, selector: &JsValue) -> Result<bool, JsValue> {
    el.unchecked_ref::<JsElement>().matches_js(selector)
}

/// The attribute trimmed, `None` when absent or blank.
pub fn attr_nonempty(el: &Element, name: &'static str) -> Option<String> {
    attr(el, name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

pub fn attr_is(el: &Element, name: &'static str, value: &str) -> bool {
    attr(el, name).is_some_and(|v| v.trim().eq_ignore_ascii_case(value))
}

/// A JS property of `obj` (`el.labels`, `input.checked`, …).
pub fn prop(obj: &JsValue, name: &'static str) -> JsValue {
    Reflect::get(obj, &js_name(name)).unwrap_or(JsValue::UNDEFINED)
}

pub fn prop_bool(obj: &JsValue, name: &'static str) -> bool {
    prop(obj, name).is_truthy()
}

pub fn prop_f64(obj: &JsValue, name: &'static str) -> Option<f64> {
    prop(obj, name).as_f64()
}

/// `aria-hidden="true"` or `inert`: the subtree is out of the tree.
pub fn hidden_by_attribute(el: &Element) -> bool {
    el.has_attributes()
        && matches(el, "[inert],[aria-hidden]")
        && (has(el, "inert") || attr_is(el, "aria-hidden", "true"))
}

/// How an element shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vis {
    /// Rendered and visible.
    Shown,
    /// `display: contents`: no box of its own, children may show.
    Contents,
    /// `visibility: hidden|collapse`: not shown, children may override.
    Invisible,
    /// `display: none`, skipped by `content-visibility`, …: the subtree is gone.
    Gone,
}

/// Per-document helper holding the reusable `checkVisibility` options.
pub struct Visibility {
    opts: JsValue,
}

impl Visibility {
    pub fn new() -> Self {
        let opts = Object::new();
        let _ = Reflect::set(&opts, &JsValue::from_str("visibilityProperty"), &JsValue::TRUE);
        Visibility { opts: opts.into() }
    }

    /// One `checkVisibility` call; computed style only when that says no.
    pub fn of(&self, el: &Element, win: &Window) -> Vis {
        if self.check(el) {
            return Vis::Shown;
        }
        self.classify(el, win)
    }

    pub fn check(&self, el: &Element) -> bool {
        el.unchecked_ref::<VisElement>().check_visibility_js(&self.opts)
    }

    /// Why an element is not visible, from its computed style.
    pub fn classify(&self, el: &Element, win: &Window) -> Vis {
        let Some(style) = win.get_computed_style(el).ok().flatten() else { return Vis::Gone };
        let display = style.get_property_value("display").unwrap_or_default();
        if display == "none" {
            return Vis::Gone;
        }
        let visibility = style.get_property_value("visibility").unwrap_or_default();
        if visibility == "hidden" || visibility == "collapse" {
            return Vis::Invisible;
        }
        if display == "contents" {
            return Vis::Contents;
        }
        // No box for another reason: inside a closed <details>, a
        // `content-visibility: hidden` ancestor, a never-rendered element.
        Vis::Gone
    }
}

/// `slot.assignedNodes({flatten: true})`.
pub fn assigned_nodes(slot: &Element) -> Array {
    let f = Reflect::get(slot, &JsValue::from_str("assignedNodes")).ok();
    let Some(f) = f.and_then(|f| f.dyn_into::<Function>().ok()) else { return Array::new() };
    let opts = Object::new();
    let _ = Reflect::set(&opts, &JsValue::from_str("flatten"), &JsValue::TRUE);
    f.call1(slot, &opts).ok().and_then(|a| a.dyn_into::<Array>().ok()).unwrap_or_default()
}

/// An element's children in the flat tree.
pub enum FlatChildren {
    /// A shadow host's shadow tree, a slot's assigned nodes (or its
    /// fallback content), else the DOM children.
    Nodes(Vec<web_sys::Node>),
    /// No shadow root, not a slot, no element children: its children are
    /// text (and comments), read at once with `textContent`, which leaves
    /// comments out as a walk would.
    TextOnly,
}

/// Children in the flat tree of `el` (its local name `tag`).
pub fn flat_children(el: &Element, tag: &str) -> FlatChildren {
    let mut out = Vec::new();
    if let Some(shadow) = el.shadow_root() {
        let mut c = shadow.first_child();
        while let Some(n) = c {
            c = n.next_sibling();
            out.push(n);
        }
        return FlatChildren::Nodes(out);
    }
    if tag == "slot" {
        let assigned = assigned_nodes(el);
        if assigned.length() > 0 {
            for n in assigned.iter() {
                if n.is_object() {
                    // Not `dyn_into`: nodes of iframes fail the top realm's instanceof.
                    out.push(n.unchecked_into::<web_sys::Node>());
                }
            }
            return FlatChildren::Nodes(out);
        }
    } else if el.child_element_count() == 0 {
        return FlatChildren::TextOnly;
    }
    let mut c = el.first_child();
    while let Some(n) = c {
        c = n.next_sibling();
        out.push(n);
    }
    FlatChildren::Nodes(out)
}

/// Collapses runs of whitespace (including U+00A0 kept as a space) to one
/// space and trims; stops growing after `max` bytes.
pub fn collapse(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max));
    for w in s.split(|c: char| c.is_whitespace() && c != '\u{a0}').filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
        if out.len() > max {
            break;
        }
    }
    out
}

/// Tags whose boxes are blocks by default: text on either side of them
/// does not run together.
pub fn is_block_tag(tag: &str) -> bool {
    matches!(
        tag,
        "address"
            | "article"
            | "aside"
            | "blockquote"
            | "br"
            | "caption"
            | "dd"
            | "details"
            | "dialog"
            | "div"
            | "dl"
            | "dt"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "footer"
            | "form"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "header"
            | "hgroup"
            | "hr"
            | "legend"
            | "li"
            | "main"
            | "menu"
            | "nav"
            | "ol"
            | "p"
            | "pre"
            | "search"
            | "section"
            | "summary"
            | "table"
            | "tbody"
            | "td"
            | "tfoot"
            | "th"
            | "thead"
            | "tr"
            | "ul"
    )
}
