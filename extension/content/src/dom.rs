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

/// Slots of the [`js_name`] table (a power of two, more than the names
/// this crate uses).
const NAME_SLOTS: usize = 512;

/// A [`js_name`] table slot: the address and length of the name, its JS string.
type NameSlot = Option<(usize, usize, &'static JsValue)>;

thread_local! {
    /// JS strings for the attribute names, property names and selectors
    /// this crate uses, found by the address of the `&'static str`. The
    /// values live as long as the page (a few hundred short strings), so
    /// they are lent out, never cloned: a clone and its drop are two more
    /// calls into the glue per DOM call.
    static NAMES: std::cell::RefCell<Vec<NameSlot>> =
        std::cell::RefCell::new(vec![None; NAME_SLOTS]);
}

/// `name` as a JS string, made once per page (decoding a string from wasm
/// memory costs more than the DOM call it is passed to). Not generic on
/// purpose: under wasm2js every copy of a function warms up in the JIT on
/// its own.
fn js_name(name: &'static str) -> &'static JsValue {
    let (ptr, len) = (name.as_ptr() as usize, name.len());
    NAMES.with(|n| {
        let mut n = n.borrow_mut();
        let mut i = ((ptr >> 2) ^ len) & (NAME_SLOTS - 1);
        for _ in 0..NAME_SLOTS {
            match n[i] {
                Some((p, l, v)) if p == ptr && l == len => return v,
                Some(_) => i = (i + 1) & (NAME_SLOTS - 1),
                None => {
                    let v: &'static JsValue = Box::leak(Box::new(JsValue::from_str(name)));
                    // Keep a quarter free so probes stay short.
                    if n.iter().filter(|s| s.is_some()).count() < NAME_SLOTS * 3 / 4 {
                        n[i] = Some((ptr, len, v));
                    }
                    return v;
                }
            }
        }
        Box::leak(Box::new(JsValue::from_str(name)))
    })
}

/// An outcome as the JSON string the worker reads. Not inlined: the
/// encoding of every result kind is one function V8 compiles once, not a
/// copy in each caller (BENCHMARKS.md, "Less code to tier up").
#[inline(never)]
pub fn outcome_json(outcome: &shared::protocol::Outcome) -> JsValue {
    JsValue::from_str(
        &serde_json::to_string(outcome)
            .unwrap_or_else(|_| r#"{"err":{"code":"INTERNAL","message":"could not encode the reply"}}"#.to_string()),
    )
}

pub fn attr(el: &Element, name: &'static str) -> Option<String> {
    el.unchecked_ref::<JsElement>().get_attribute_js(js_name(name))
}

pub fn has(el: &Element, name: &'static str) -> bool {
    el.unchecked_ref::<JsElement>().has_attribute_js(js_name(name))
}

/// `el.matches(selector)`; false when the selector is invalid.
pub fn matches(el: &Element, selector: &'static str) -> bool {
    el.unchecked_ref::<JsElement>().matches_js(js_name(selector)).unwrap_or(false)
}

/// `el.closest(selector)`.
pub fn closest(el: &Element, selector: &'static str) -> Option<Element> {
    el.unchecked_ref::<JsElement>().closest_js(js_name(selector)).ok().flatten()
}

/// `el.querySelector(selector)`.
pub fn query_selector(el: &Element, selector: &'static str) -> Option<Element> {
    el.unchecked_ref::<JsElement>().query_selector_js(js_name(selector)).ok().flatten()
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
    Reflect::get(obj, js_name(name)).unwrap_or(JsValue::UNDEFINED)
}

pub fn prop_bool(obj: &JsValue, name: &'static str) -> bool {
    prop(obj, name).is_truthy()
}

pub fn prop_f64(obj: &JsValue, name: &'static str) -> Option<f64> {
    prop(obj, name).as_f64()
}

/// Open dialogs: `<dialog open>`, `role=dialog|alertdialog`,
/// `aria-modal=true` (the first `:is` lets most elements fail at once).
pub const OPEN_DIALOGS: &str =
    ":is(dialog,[role],[aria-modal]):is(dialog[open],[role=dialog],[role=alertdialog],[aria-modal=true])";

/// The attributes [`Attrs::aria`] stands for: the ones the walk's rules
/// read on most elements (role, hiding, naming, description, states).
const ARIA_ATTRS: &str = "[role],[inert],[aria-hidden],[aria-label],[aria-labelledby],[aria-labeledby],\
                          [aria-describedby],[aria-description],[aria-checked],[aria-selected],[aria-expanded],\
                          [aria-pressed],[aria-disabled],[aria-required],[aria-readonly],[aria-invalid]";

/// What two calls tell of an element's attributes, read once per element
/// and handed to the rules that would otherwise each ask again (most
/// elements have none, or only `class`, `id`, `href`, `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attrs {
    /// It has attributes at all.
    pub any: bool,
    /// It has one of [`ARIA_ATTRS`]: reading those is worth a call each.
    pub aria: bool,
}

impl Attrs {
    pub fn of(el: &Element) -> Attrs {
        let any = el.has_attributes();
        Attrs { any, aria: any && matches(el, ARIA_ATTRS) }
    }
}

/// [`ARIA_ATTRS`] as a JS string (for [`crate::reads`]).
pub fn aria_selector() -> &'static JsValue {
    js_name(ARIA_ATTRS)
}

/// `aria-hidden="true"` or `inert`: the subtree is out of the tree.
pub fn hidden_by_attribute(el: &Element, a: Attrs) -> bool {
    a.aria && matches(el, "[inert],[aria-hidden]") && (has(el, "inert") || attr_is(el, "aria-hidden", "true"))
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
        // Without a prototype: Chromium reads every member of the options
        // dictionary on each call, and on an ordinary object that cost
        // as much as the check itself (10,000 calls: 19 ms with
        // `Object.prototype`, 11 without, 7 with no options at all;
        // BENCHMARKS.md, "Faster walks").
        let opts: Object = Object::create(JsValue::NULL.unchecked_ref::<Object>());
        let _ = Reflect::set(&opts, &JsValue::from_str("visibilityProperty"), &JsValue::TRUE);
        Visibility { opts: opts.into() }
    }

    /// The options object every `checkVisibility` call is given.
    pub fn options(&self) -> &JsValue {
        &self.opts
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
    // Most texts are already collapsed: one copy, no split (a third of the
    // cost of a long page's text under wasm2js went to the split).
    if s.len() <= max && is_collapsed(s) {
        return s.to_owned();
    }
    collapse_runs(s, max)
}

fn collapse_runs(s: &str, max: usize) -> String {
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

/// Whether [`collapse`] would give `s` back as it is: no whitespace at
/// either end, and none inside but single spaces (U+00A0 is not
/// whitespace here). Bytes are checked one by one; a character is decoded
/// only where a multi-byte one starts.
fn is_collapsed(s: &str) -> bool {
    let bytes = s.as_bytes();
    if bytes.first() == Some(&b' ') || bytes.last() == Some(&b' ') {
        return false;
    }
    let mut after_space = false;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b' ' {
            if after_space {
                return false;
            }
            after_space = true;
            continue;
        }
        after_space = false;
        if (0x09..=0x0d).contains(&b) {
            return false;
        }
        if b >= 0xc0 && s[i..].chars().next().is_some_and(|c| c != '\u{a0}' && c.is_whitespace()) {
            return false;
        }
    }
    true
}

/// What the walk decides from an element's local name alone, worked out
/// once a name ([`classify_tag`]) and kept with the name's number
/// (`reads`): the walk asks it of every element, and string matches are
/// among the costliest code under wasm2js, to run and for V8 to optimise
/// (BENCHMARKS.md, "Reading a run").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TagClass {
    /// Never rendered or not content: `script`, `style`, `head`, … (and
    /// `datalist`, shown through its field).
    pub skipped: bool,
    /// No box of its own, shown through its select or image map: `option`,
    /// `optgroup`, `area`, `map`.
    pub boxless: bool,
    /// [`is_block_tag`].
    pub block: bool,
    /// A field or image: its content is a value or nothing (`textarea`,
    /// `input`, `img`); `select` only when shown as a drop-down.
    pub leaf: bool,
    pub select: bool,
    /// `iframe`, `frame`.
    pub frame: bool,
    pub slot: bool,
    /// `fieldset`, `optgroup`: `disabled` reaches their content.
    pub disables_content: bool,
    /// `ul`, `ol`, `menu`.
    pub list: bool,
}

/// The [`TagClass`] of a local name.
pub fn classify_tag(tag: &str) -> TagClass {
    TagClass {
        skipped: matches!(
            tag,
            "script" | "style" | "template" | "noscript" | "head" | "datalist" | "title" | "meta" | "link"
        ),
        boxless: matches!(tag, "option" | "optgroup" | "area" | "map"),
        block: is_block_tag(tag),
        leaf: matches!(tag, "textarea" | "input" | "img"),
        select: tag == "select",
        frame: matches!(tag, "iframe" | "frame"),
        slot: tag == "slot",
        disables_content: matches!(tag, "fieldset" | "optgroup"),
        list: matches!(tag, "ul" | "ol" | "menu"),
    }
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

/// Calls `obj[method](...args)` when it is a function.
pub fn call(obj: &JsValue, method: &str, args: &[JsValue]) -> Result<JsValue, JsValue> {
    let f: Function = Reflect::get(obj, &JsValue::from_str(method))?.dyn_into()?;
    let arr = js_sys::Array::new();
    for a in args {
        arr.push(a);
    }
    f.apply(obj, &arr)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name's class holds each decision the walk took from the name
    /// itself; names it has no rule for (custom elements, unknown tags)
    /// get none.
    #[test]
    fn tag_classes_hold_the_walks_name_rules() {
        assert_eq!(classify_tag("my-widget"), TagClass::default());
        assert_eq!(classify_tag("span"), TagClass::default());
        assert_eq!(classify_tag("DIV"), TagClass::default(), "local names of HTML elements are lower case");
        for tag in ["div", "p", "li", "table", "h1", "section", "br", "td"] {
            assert_eq!(classify_tag(tag), TagClass { block: true, ..TagClass::default() }, "{tag}");
        }
        for tag in ["script", "style", "template", "noscript", "head", "datalist", "title", "meta", "link"] {
            assert!(classify_tag(tag).skipped, "{tag}");
        }
        let optgroup = classify_tag("optgroup");
        assert!(optgroup.boxless && optgroup.disables_content && !optgroup.skipped);
        assert!(classify_tag("fieldset").disables_content && classify_tag("fieldset").block);
        assert!(classify_tag("select").select && !classify_tag("select").leaf);
        assert!(["input", "textarea", "img"].iter().all(|t| classify_tag(t).leaf));
        assert!(["iframe", "frame"].iter().all(|t| classify_tag(t).frame));
        assert!(["ul", "ol", "menu"].iter().all(|t| classify_tag(t).list));
        assert!(classify_tag("slot").slot);
    }

    /// The shortcut gives what collapsing word by word gives, for texts
    /// with every kind of whitespace at the ends, doubled and alone, in
    /// several scripts, and at limits around their length.
    #[test]
    fn collapsing_takes_the_shortcut_only_when_nothing_would_change() {
        let spaces = [
            " ", "  ", "\t", "\n", "\r\n", "\u{b}", "\u{c}", "\u{85}", "\u{a0}", "\u{2003}", "\u{2028}", "\u{3000}",
            "\u{202f}",
        ];
        let words = ["Order", "2", "·", "Zapłać", "アカウント", "حذف", "👩‍💻", "e\u{301}"];
        let mut texts = vec![String::new()];
        for (i, a) in words.iter().enumerate() {
            texts.push((*a).to_string());
            for s in spaces {
                let b = words[(i + 3) % words.len()];
                texts.push(format!("{a}{s}{b}"));
                texts.push(format!("{s}{a}"));
                texts.push(format!("{a}{s}"));
                texts.push(format!("{a} {b}{s}{a} {b}"));
                texts.push(s.to_string());
            }
        }
        for t in &texts {
            for max in [0, 1, t.len().saturating_sub(1), t.len(), t.len() + 1, 4096] {
                assert_eq!(collapse(t, max), collapse_runs(t, max), "{t:?} max {max}");
            }
        }
        assert!(is_collapsed("Order 2 · delivered to Madrid · 3 items"));
        assert!(is_collapsed("Zapłać\u{a0}teraz"));
        assert!(!is_collapsed("Radera\u{2003}konto"));
        assert!(!is_collapsed("Usuń  konto"));
    }
}

thread_local! {
    /// Fields the agent typed a stored secret into (`crate::fills`): their
    /// values stay masked whatever the page makes of them after.
    static SECRET_FIELDS: js_sys::WeakSet = js_sys::WeakSet::new();
}

/// `el` holds a secret the agent typed.
pub fn mark_secret(el: &Element) {
    SECRET_FIELDS.with(|s| {
        s.add(el.unchecked_ref::<Object>());
    });
}

/// Whether the agent typed a secret into `el`.
pub fn holds_secret(el: &Element) -> bool {
    SECRET_FIELDS.with(|s| s.has(el.unchecked_ref::<Object>()))
}

/// Whether what `el` holds is never shown or sent whole: a field of a
/// sensitive kind by its own attributes (`shared::sensitive`, without its
/// label: the caller may be computing that label), one whose `aria-label`
/// names a sensitive kind, or one the agent typed a secret into. Used
/// wherever a field's value is read for another element (an accessible
/// name or description through `aria-labelledby`, `<label>`, …) and for
/// the document's filled-field report.
pub fn value_is_sensitive(el: &Element) -> bool {
    if holds_secret(el) {
        return true;
    }
    let tag = el.local_name();
    if !matches!(tag.as_str(), "input" | "textarea") {
        return false;
    }
    let input_type =
        if tag == "input" { attr(el, "type").unwrap_or_default().to_ascii_lowercase() } else { String::new() };
    let autocomplete = attr(el, "autocomplete").unwrap_or_default();
    let name = attr(el, "name").unwrap_or_default();
    let placeholder = attr(el, "placeholder").unwrap_or_default();
    let id = el.id();
    let facts = shared::sensitive::FieldFacts {
        input_type: &input_type,
        autocomplete: &autocomplete,
        name: &name,
        id: &id,
        label: "",
        placeholder: &placeholder,
    };
    shared::sensitive::classify_field(&facts).is_some()
        || attr(el, "aria-label").is_some_and(|l| shared::sensitive::classify_name(&l).is_some())
}
