//! Accessible names per W3C AccName 1.2 (with HTML-AAM's host-language
//! rules), as Chromium computes them: aria-labelledby (hidden targets
//! included, no second labelledby hop), embedded controls, aria-label,
//! `<label>`, alt, legend, caption, value of input buttons,
//! title, placeholder, name from content with CSS `::before`/`::after`
//! strings, block vs inline spacing, open shadow roots and slots.

use js_sys::{Array, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{Document, Element, HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement, Window};

use crate::dom::{self, attr, attr_nonempty, collapse};
use crate::roles;

/// Text gathered for a name stops growing here (it is cut to 120 later).
pub const NAME_SCAN: usize = 600;
/// Elements visited while computing one name.
const NAME_STEPS: u32 = 2_000;

/// Which elements may carry `::before`/`::after` content: decided once per
/// snapshot from the page's style sheets so most elements need no
/// pseudo-element style lookup at all.
pub struct Pseudo {
    /// The document whose sheets were read.
    doc: Document,
    kind: PseudoKind,
}

enum PseudoKind {
    /// No rule in the document's sheets creates pseudo-elements.
    Never,
    /// Elements matching this selector list (a JS string) may have them.
    Matching(JsValue),
    /// Unknown (unreadable sheets): check every element.
    Always,
}

impl Pseudo {
    pub fn scan(doc: &Document) -> Pseudo {
        Pseudo { doc: doc.clone(), kind: Self::kind(doc) }
    }

    fn kind(doc: &Document) -> PseudoKind {
        let sheets = dom::prop(doc, "styleSheets");
        let mut selectors: Vec<String> = Vec::new();
        let n = dom::prop_f64(&sheets, "length").unwrap_or(0.0) as u32;
        for i in 0..n {
            let sheet = Reflect::get_u32(&sheets, i).unwrap_or(JsValue::UNDEFINED);
            let Ok(rules) = Reflect::get(&sheet, &JsValue::from_str("cssRules")) else { return PseudoKind::Always };
            if !collect(&rules, &mut selectors, 0) {
                return PseudoKind::Always;
            }
        }
        let adopted = dom::prop(doc, "adoptedStyleSheets");
        if let Some(arr) = adopted.dyn_ref::<Array>() {
            for sheet in arr.iter() {
                let rules = dom::prop(&sheet, "cssRules");
                if !collect(&rules, &mut selectors, 0) {
                    return PseudoKind::Always;
                }
            }
        }
        if selectors.is_empty() {
            PseudoKind::Never
        } else {
            PseudoKind::Matching(JsValue::from_str(&selectors.join(",")))
        }
    }

    pub fn may_have(&self, el: &Element) -> bool {
        // Shadow trees and frames bring their own sheets.
        if matches!(self.kind, PseudoKind::Always) || !self.doc.contains(Some(el)) {
            return true;
        }
        self.may_have_in_top(el)
    }

    /// Whether `el` is in the document this scan read, not in a shadow
    /// tree or a frame.
    pub fn covers(&self, el: &Element) -> bool {
        self.doc.contains(Some(el))
    }

    /// [`Pseudo::may_have`] for an element known to be in the scanned
    /// document's own tree.
    fn may_have_in_top(&self, el: &Element) -> bool {
        match &self.kind {
            PseudoKind::Never => false,
            PseudoKind::Always => true,
            PseudoKind::Matching(sel) => dom::matches_value(el, sel).unwrap_or(true),
        }
    }
}

/// Adds the selectors (without the pseudo-element part) of rules that
/// create `::before`/`::after`. False when a sheet cannot be read.
fn collect(rules: &JsValue, out: &mut Vec<String>, depth: u32) -> bool {
    if rules.is_undefined() || rules.is_null() || depth > 8 {
        return rules.is_undefined() || rules.is_null();
    }
    let n = dom::prop_f64(rules, "length").unwrap_or(0.0) as u32;
    for i in 0..n {
        let rule = Reflect::get_u32(rules, i).unwrap_or(JsValue::UNDEFINED);
        if let Some(sel) = dom::prop(&rule, "selectorText").as_string() {
            let lower = sel.to_ascii_lowercase();
            if lower.contains("before") || lower.contains("after") {
                if sel.contains('&') || sel.contains('(') {
                    out.push("*".into());
                } else {
                    for part in sel.split(',') {
                        let p = part.to_ascii_lowercase();
                        if p.contains(":before") || p.contains(":after") {
                            let stripped = p
                                .replace("::before", "")
                                .replace("::after", "")
                                .replace(":before", "")
                                .replace(":after", "");
                            let s = stripped.trim();
                            out.push(if s.is_empty() || s.ends_with(['>', '+', '~']) {
                                "*".into()
                            } else {
                                s.to_string()
                            });
                        }
                    }
                }
            }
        }
        let inner = dom::prop(&rule, "cssRules");
        if !inner.is_undefined() && !collect(&inner, out, depth + 1) {
            return false;
        }
    }
    true
}

/// What a name computation needs from the snapshot.
pub struct NameEnv<'a> {
    pub pseudo: &'a Pseudo,
}

thread_local! {
    /// The label index of the snapshot being taken (see [`Labels::install`]).
    static LABELS: std::cell::RefCell<Option<Labels>> = const { std::cell::RefCell::new(None) };
}

struct Cx<'a> {
    env: &'a NameEnv<'a>,
    root: &'a Element,
    /// Inside an aria-labelledby traversal: no second hop.
    in_labelledby: bool,
    /// The traversal started at a hidden referenced node: hidden content counts.
    hidden_ok: bool,
    steps: u32,
    /// Nodes already referenced by aria-labelledby in this computation.
    visited: Vec<Element>,
    /// Role of the element whose name is computed.
    root_role: &'a str,
    /// What the caller knew of it.
    known: Known,
}

/// What the caller already knows of the element whose name is computed
/// (the walk reads these once per element).
#[derive(Debug, Clone, Copy)]
pub struct Known {
    pub attrs: dom::Attrs,
    /// No shadow root, not a slot, no element children: its content is
    /// its `textContent`.
    pub text_only: bool,
    /// In the document [`Pseudo::scan`] read, not in a shadow tree or a
    /// frame (which bring their own style sheets).
    pub top_tree: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The element whose name is computed.
    Root,
    /// Directly referenced by aria-labelledby.
    Referenced,
    /// A descendant in a content or label traversal.
    Descendant,
}

/// The accessible name of `el` (whitespace collapsed, not yet cut); `a`
/// are its attributes ([`dom::Attrs::of`]).
pub fn accessible_name(env: &NameEnv, el: &Element, tag: &str, role: &str, a: dom::Attrs) -> String {
    accessible_name_known(env, el, tag, role, Known { attrs: a, text_only: false, top_tree: false })
}

/// [`accessible_name`] with more of the element known.
pub fn accessible_name_known(env: &NameEnv, el: &Element, tag: &str, role: &str, known: Known) -> String {
    let mut cx = Cx {
        env,
        root: el,
        in_labelledby: false,
        hidden_ok: false,
        steps: 0,
        visited: Vec::new(),
        root_role: role,
        known,
    };
    let raw = compute(&mut cx, el, tag, role, Mode::Root);
    collapse(&raw, NAME_SCAN)
}

/// The description of `el` in AccName order: the text of its
/// `aria-describedby` targets, else `aria-description`.
pub fn description(env: &NameEnv, el: &Element, a: dom::Attrs) -> Option<String> {
    if !a.aria || !dom::matches(el, "[aria-describedby],[aria-description]") {
        return None;
    }
    if let Some(ids) = attr_nonempty(el, "aria-describedby") {
        let mut cx = Cx {
            env,
            root: el,
            in_labelledby: true,
            hidden_ok: false,
            steps: 0,
            visited: Vec::new(),
            root_role: "",
            known: Known { attrs: a, text_only: false, top_tree: false },
        };
        let d = collapse(&referenced_text(&mut cx, el, &ids), NAME_SCAN);
        if !d.is_empty() {
            return Some(d);
        }
    }
    attr_nonempty(el, "aria-description").map(|d| collapse(&d, NAME_SCAN))
}

fn window_of(el: &Element) -> Option<Window> {
    el.owner_document().and_then(|d| d.default_view())
}

enum Hidden {
    No,
    /// `visibility: hidden|collapse`: own text hidden, children may show.
    Invisible,
    /// aria-hidden, display:none: the whole subtree.
    Gone,
}

fn hidden_state(el: &Element) -> Hidden {
    if dom::attr_is(el, "aria-hidden", "true") {
        return Hidden::Gone;
    }
    let Some(win) = window_of(el) else { return Hidden::No };
    let Some(style) = win.get_computed_style(el).ok().flatten() else { return Hidden::No };
    let display = style.get_property_value("display").unwrap_or_default();
    if display == "none" {
        return Hidden::Gone;
    }
    let vis = style.get_property_value("visibility").unwrap_or_default();
    if vis == "hidden" || vis == "collapse" { Hidden::Invisible } else { Hidden::No }
}

/// Hidden for name purposes: aria-hidden, display:none, visibility:hidden.
fn is_hidden(el: &Element) -> bool {
    !matches!(hidden_state(el), Hidden::No)
}

/// `aria-labelledby`, or the `aria-labeledby` spelling when that comes first.
fn labelledby(el: &Element) -> Option<String> {
    let a = attr_nonempty(el, "aria-labelledby");
    let b = attr_nonempty(el, "aria-labeledby");
    match (a, b) {
        (Some(a), Some(b)) => {
            let names = el.get_attribute_names();
            let first =
                names.iter().filter_map(|n| n.as_string()).find(|n| n == "aria-labelledby" || n == "aria-labeledby");
            Some(if first.as_deref() == Some("aria-labeledby") { b } else { a })
        }
        (a, b) => a.or(b),
    }
}

fn element_by_id(el: &Element, id: &str) -> Option<Element> {
    let root = el.get_root_node();
    // Node types, not `instanceof`: documents of iframes belong to another realm.
    match root.node_type() {
        web_sys::Node::DOCUMENT_NODE => root.unchecked_ref::<Document>().get_element_by_id(id),
        web_sys::Node::DOCUMENT_FRAGMENT_NODE => {
            root.unchecked_ref::<web_sys::DocumentFragment>().get_element_by_id(id)
        }
        _ => None,
    }
}

fn referenced_text(cx: &mut Cx, el: &Element, ids: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    let (outer_lb, outer_hidden) = (cx.in_labelledby, cx.hidden_ok);
    for id in ids.split_ascii_whitespace() {
        let Some(target) = element_by_id(el, id) else { continue };
        if cx.visited.contains(&target) {
            continue;
        }
        cx.visited.push(target.clone());
        cx.in_labelledby = true;
        cx.hidden_ok = is_hidden(&target);
        let tag = target.local_name();
        let role = roles::role_of(&target, &tag, dom::Attrs::of(&target)).unwrap_or("generic");
        let t = compute(cx, &target, &tag, role, Mode::Referenced);
        let t = collapse(&t, NAME_SCAN);
        if !t.is_empty() {
            parts.push(t);
        }
    }
    cx.in_labelledby = outer_lb;
    cx.hidden_ok = outer_hidden;
    parts.join(" ")
}

fn compute(cx: &mut Cx, el: &Element, tag: &str, role: &str, mode: Mode) -> String {
    cx.steps += 1;
    if cx.steps > NAME_STEPS {
        return String::new();
    }
    // Already used through aria-labelledby in this computation.
    if mode == Mode::Descendant && !cx.visited.is_empty() && cx.visited.iter().any(|v| v == el) {
        return String::new();
    }
    // 2A: hidden and not referenced. Under `visibility: hidden`, children
    // that are visible again still count.
    let mut own_text = true;
    if mode == Mode::Descendant && !cx.hidden_ok {
        match hidden_state(el) {
            Hidden::Gone => return String::new(),
            Hidden::Invisible => own_text = false,
            Hidden::No => {}
        }
    }
    if !own_text {
        return content_text(cx, el, tag, false);
    }
    let a = if mode == Mode::Root { cx.known.attrs } else { dom::Attrs::of(el) };
    let attrs = a.any;
    // One `matches` call before reading the naming attributes one by one.
    let aria_named = a.aria && dom::matches(el, "[aria-labelledby],[aria-labeledby],[aria-label]");
    // 2B: aria-labelledby (one hop only; Chromium also reads the
    // `aria-labeledby` spelling, whichever comes first).
    if aria_named
        && !cx.in_labelledby
        && let Some(ids) = labelledby(el)
    {
        let t = referenced_text(cx, el, &ids);
        if !t.trim().is_empty() {
            return t;
        }
    }
    // A sensitive field's value, or one holding the agent's secret, is
    // never part of another element's name or description, whatever
    // relation leads there (`dom::value_is_sensitive`).
    // An empty one referenced directly is named like Chromium does (by its
    // label, below).
    let sensitive = mode != Mode::Root && matches!(tag, "input" | "textarea") && dom::value_is_sensitive(el);
    if sensitive {
        let empty = dom::prop(el, "value").as_string().is_none_or(|v| v.is_empty());
        if !empty {
            return shared::sensitive::MASK.to_string();
        }
        if mode != Mode::Referenced {
            return String::new();
        }
    }
    // 2C: a control embedded in another element's label gives its value.
    if mode != Mode::Root
        && !sensitive
        && let Some(v) = embedded_value(el, tag, role)
    {
        return v;
    }
    // 2D: aria-label (not on slots, which have no role).
    if aria_named
        && tag != "slot"
        && let Some(l) = attr_nonempty(el, "aria-label")
    {
        return l;
    }
    // 2E: host language.
    if (role != "none" || mode != Mode::Root)
        && let Some(n) = native_name(cx, el, tag, role, mode)
    {
        return n;
    }
    // 2F: name from content.
    if mode != Mode::Root || roles::name_from_content(role) {
        let t = content_text(cx, el, tag, true);
        if !t.trim().is_empty() || mode == Mode::Descendant && !attrs {
            return t;
        }
    }
    // 2I: tooltip.
    if attrs && let Some(t) = attr_nonempty(el, "title") {
        return t;
    }
    if attrs
        && matches!(role, "textbox" | "searchbox" | "combobox")
        && let Some(p) = attr_nonempty(el, "aria-placeholder")
    {
        return p;
    }
    String::new()
}

/// The current value of a control embedded in a label (2C).
fn embedded_value(el: &Element, tag: &str, role: &str) -> Option<String> {
    match role {
        // Tags, not `instanceof`: elements of iframes belong to another realm.
        "textbox" | "searchbox" => {
            if tag == "input" {
                return Some(el.unchecked_ref::<HtmlInputElement>().value());
            }
            if tag == "textarea" {
                return Some(el.unchecked_ref::<HtmlTextAreaElement>().value());
            }
            Some(el.text_content().unwrap_or_default())
        }
        "combobox" | "listbox" => {
            if tag == "select" {
                return Some(selected_text(el.unchecked_ref::<HtmlSelectElement>()));
            }
            if tag == "input" {
                return Some(el.unchecked_ref::<HtmlInputElement>().value());
            }
            // ARIA combobox/listbox: the selected option(s).
            let sel = dom::query_selector(el, "[role=option][aria-selected=true]");
            Some(sel.and_then(|o| o.text_content()).unwrap_or_default())
        }
        "slider" | "spinbutton" | "progressbar" | "scrollbar" | "meter" => {
            if let Some(v) = attr_nonempty(el, "aria-valuetext") {
                return Some(v);
            }
            if let Some(v) = attr_nonempty(el, "aria-valuenow") {
                return Some(v);
            }
            if tag == "input" {
                return Some(el.unchecked_ref::<HtmlInputElement>().value());
            }
            None
        }
        _ => None,
    }
}

pub fn selected_text(s: &HtmlSelectElement) -> String {
    let opts = s.selected_options();
    let mut parts = Vec::new();
    for i in 0..opts.length() {
        if let Some(o) = opts.item(i) {
            parts.push(collapse(&o.text_content().unwrap_or_default(), NAME_SCAN));
        }
    }
    parts.join(" ")
}

/// 2E: names from the host language (HTML-AAM).
fn native_name(cx: &mut Cx, el: &Element, tag: &str, role: &str, mode: Mode) -> Option<String> {
    let nonempty = |s: String| (!s.trim().is_empty()).then_some(s);
    match tag {
        "input" => {
            let ty = roles::input_type(el);
            match ty.as_str() {
                "button" | "submit" | "reset" => {
                    if let Some(l) = labels_text(cx, el) {
                        return Some(l);
                    }
                    if let Some(v) = attr(el, "value") {
                        return nonempty(v);
                    }
                    if let Some(t) = attr_nonempty(el, "title") {
                        return Some(t);
                    }
                    return match ty.as_str() {
                        "submit" => Some("Submit".into()),
                        "reset" => Some("Reset".into()),
                        _ => None,
                    };
                }
                "image" => {
                    if let Some(l) = labels_text(cx, el) {
                        return Some(l);
                    }
                    if let Some(a) = attr_nonempty(el, "alt") {
                        return Some(a);
                    }
                    if let Some(v) = attr_nonempty(el, "value") {
                        return Some(v);
                    }
                    if let Some(t) = attr_nonempty(el, "title") {
                        return Some(t);
                    }
                    return Some("Submit".into());
                }
                _ => {
                    if let Some(l) = labels_text(cx, el) {
                        return Some(l);
                    }
                    if let Some(t) = attr_nonempty(el, "title") {
                        return Some(t);
                    }
                    if let Some(p) = attr_nonempty(el, "placeholder") {
                        return Some(p);
                    }
                    return None;
                }
            }
        }
        "textarea" | "select" => {
            if let Some(l) = labels_text(cx, el) {
                return Some(l);
            }
            if let Some(t) = attr_nonempty(el, "title") {
                return Some(t);
            }
            if tag == "textarea" {
                return attr_nonempty(el, "placeholder");
            }
            return None;
        }
        "button" | "meter" | "output" | "progress" => {
            if mode == Mode::Root
                && let Some(l) = labels_text(cx, el)
            {
                return Some(l);
            }
            return None;
        }
        "img" | "area" => {
            // alt="" means "no name", even with a title.
            return attr(el, "alt");
        }
        "fieldset" => {
            if let Some(legend) = dom::query_selector(el, ":scope > legend")
                && !is_hidden(&legend)
            {
                return nonempty(child_text(cx, &legend, "legend"));
            }
            return None;
        }
        "table" => {
            if let Some(caption) = dom::query_selector(el, ":scope > caption")
                && !is_hidden(&caption)
            {
                return nonempty(child_text(cx, &caption, "caption"));
            }
            return None;
        }
        "optgroup" => return attr_nonempty(el, "label"),
        "option" => {
            if let Some(l) = attr_nonempty(el, "label") {
                return Some(l);
            }
        }
        "svg" => {
            if let Some(t) = dom::query_selector(el, ":scope > title") {
                return t.text_content().and_then(nonempty);
            }
        }
        "iframe" | "frame" => return attr_nonempty(el, "title"),
        _ => {}
    }
    let _ = role;
    None
}

/// The text of `el`'s `<label>`s, each as a content traversal that skips
/// the labelled control itself. (`el.labels` is not used: Chromium builds
/// it by scanning the whole tree scope, per call.)
fn labels_text(cx: &mut Cx, el: &Element) -> Option<String> {
    let top = std::ptr::eq(el, cx.root) && cx.known.top_tree;
    let labels = LABELS.with(|l| l.borrow().as_ref().map(|l| l.of(el, top))).unwrap_or_else(|| {
        let list = dom::prop(el, "labels");
        let n = dom::prop_f64(&list, "length").unwrap_or(0.0) as u32;
        (0..n)
            .filter_map(|i| {
                Reflect::get_u32(&list, i).ok().filter(|l| l.is_object()).map(|l| l.unchecked_into::<Element>())
            })
            .collect()
    });
    if labels.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    for label in labels {
        // Hidden labels still name their control (as WPT's
        // comp_host_language_label expects; Chromium 156 ignores them).
        let t = child_text(cx, &label, "label");
        let t = collapse(&t, NAME_SCAN);
        if !t.is_empty() {
            parts.push(t);
        }
    }
    let joined = parts.join(" ");
    (!joined.is_empty()).then_some(joined)
}

/// `label[for]` elements of the top document by the id they point at,
/// gathered once per snapshot.
pub struct Labels {
    doc: Document,
    any: bool,
    by_for: Vec<(String, Element)>,
}

impl Labels {
    pub fn scan(doc: &Document) -> Labels {
        let mut by_for = Vec::new();
        let any = doc.query_selector("label").ok().flatten().is_some();
        if any && let Ok(list) = doc.query_selector_all("label[for]") {
            for i in 0..list.length() {
                if let Some(l) = list.item(i).and_then(|n| n.dyn_into::<Element>().ok()) {
                    by_for.push((attr(&l, "for").unwrap_or_default(), l));
                }
            }
            by_for.sort_by(|a, b| a.0.cmp(&b.0));
        }
        Labels { doc: doc.clone(), any, by_for }
    }

    /// Makes this index the one names use until [`Labels::uninstall`]
    /// (a snapshot names thousands of controls; one scan serves them all).
    pub fn install(self) {
        LABELS.with(|l| *l.borrow_mut() = Some(self));
    }

    pub fn uninstall() {
        LABELS.with(|l| *l.borrow_mut() = None);
    }

    /// The labels whose control is `el`, in document order (`top`: it is
    /// known to be in the scanned document's own tree).
    fn of(&self, el: &Element, top: bool) -> Vec<Element> {
        let mut found: Vec<Element> = Vec::new();
        // In the top document's own tree (not a shadow tree, not a frame).
        let in_top = top || self.doc.contains(Some(el));
        if in_top && !self.any {
            return found;
        }
        let is_control = |l: &Element| dom::prop(l, "control") == JsValue::from(el.clone());
        if let Some(wrapping) = dom::closest(el, "label")
            && is_control(&wrapping)
        {
            found.push(wrapping);
        }
        let id = el.id();
        if id.is_empty() {
            return found;
        }
        if in_top {
            let start = self.by_for.partition_point(|(k, _)| k.as_str() < id.as_str());
            for (k, l) in &self.by_for[start..] {
                if *k != id {
                    break;
                }
                if !found.contains(l) && is_control(l) {
                    found.push(l.clone());
                }
            }
        } else {
            // Shadow trees and frames: ask their own scope.
            let root = el.get_root_node();
            let list = dom::prop(&root, "querySelectorAll");
            if let Ok(f) = list.dyn_into::<js_sys::Function>()
                && let Ok(nodes) = f.call1(&root, &JsValue::from_str("label[for]"))
            {
                let n = dom::prop_f64(&nodes, "length").unwrap_or(0.0) as u32;
                for i in 0..n {
                    let Ok(l) = Reflect::get_u32(&nodes, i) else { continue };
                    if !l.is_object() {
                        continue;
                    }
                    let l: Element = l.unchecked_into();
                    if attr(&l, "for").as_deref() == Some(id.as_str()) && !found.contains(&l) && is_control(&l) {
                        found.push(l);
                    }
                }
            }
        }
        if found.len() > 1 {
            found.sort_by(|a, b| {
                let pos = a.compare_document_position(b);
                if pos & web_sys::Node::DOCUMENT_POSITION_FOLLOWING != 0 {
                    std::cmp::Ordering::Less
                } else {
                    std::cmp::Ordering::Greater
                }
            });
        }
        found
    }
}

/// The text of a label-like element (label, legend, caption, figcaption):
/// its aria-label, else its content.
fn child_text(cx: &mut Cx, el: &Element, tag: &str) -> String {
    if let Some(l) = attr_nonempty(el, "aria-label") {
        return l;
    }
    content_text(cx, el, tag, true)
}

/// 2F/2G/2H: `::before` + the flat-tree children + `::after`. Without
/// `own_text` (under `visibility: hidden`) only element children that are
/// visible again contribute.
fn content_text(cx: &mut Cx, el: &Element, tag: &str, own_text: bool) -> String {
    let mut out = String::new();
    // The element whose name this is: the caller may know more of it.
    let root = std::ptr::eq(el, cx.root);
    let pseudo = own_text
        && if root && cx.known.top_tree { cx.env.pseudo.may_have_in_top(el) } else { cx.env.pseudo.may_have(el) };
    if pseudo {
        pseudo_text(el, "::before", &mut out);
    }
    let children = if root && cx.known.text_only { dom::FlatChildren::TextOnly } else { dom::flat_children(el, tag) };
    let children = match children {
        dom::FlatChildren::Nodes(children) => children,
        dom::FlatChildren::TextOnly => {
            if own_text {
                out.push_str(&el.text_content().unwrap_or_default());
            }
            Vec::new()
        }
    };
    for child in children {
        if out.len() > NAME_SCAN {
            break;
        }
        match child.node_type() {
            web_sys::Node::TEXT_NODE => {
                if own_text && let Some(t) = child.node_value() {
                    out.push_str(&t);
                }
            }
            web_sys::Node::ELEMENT_NODE => {
                let e: Element = child.unchecked_into();
                if &e == cx.root {
                    continue;
                }
                let tag = e.local_name();
                if matches!(tag.as_str(), "script" | "style" | "template" | "noscript" | "datalist" | "rt" | "rp") {
                    continue;
                }
                if tag == "br" {
                    out.push(' ');
                    continue;
                }
                let role = roles::role_of(&e, &tag, dom::Attrs::of(&e)).unwrap_or("generic");
                // A tree item's or menu item's name leaves out its subtree
                // or submenu (as Chromium does).
                if matches!(role, "group" | "tree" | "menu" | "listbox")
                    && matches!(cx.root_role, "treeitem" | "menuitem" | "menuitemcheckbox" | "menuitemradio")
                {
                    continue;
                }
                let block = is_block(&e, &tag);
                let t = compute(cx, &e, &tag, role, Mode::Descendant);
                if block {
                    out.push(' ');
                }
                out.push_str(&t);
                if block {
                    out.push(' ');
                }
            }
            _ => {}
        }
    }
    if pseudo {
        pseudo_text(el, "::after", &mut out);
    }
    out
}

/// Block-level boxes separate their text from their neighbours'.
fn is_block(el: &Element, tag: &str) -> bool {
    let Some(win) = window_of(el) else { return dom::is_block_tag(tag) };
    let Some(style) = win.get_computed_style(el).ok().flatten() else { return dom::is_block_tag(tag) };
    let d = style.get_property_value("display").unwrap_or_default();
    !(d.starts_with("inline") || d == "contents" || d == "none" || d.is_empty())
}

/// Appends the string parts of a pseudo-element's `content`
/// (`"a" attr(x) "b"`; `url()` and counters give nothing).
pub(crate) fn pseudo_text(el: &Element, which: &str, out: &mut String) {
    let Some(win) = window_of(el) else { return };
    let Ok(Some(style)) = win.get_computed_style_with_pseudo_elt(el, which) else { return };
    let content = style.get_property_value("content").unwrap_or_default();
    if content.is_empty() || content == "none" || content == "normal" {
        return;
    }
    let display = style.get_property_value("display").unwrap_or_default();
    let block = !display.starts_with("inline") && !display.is_empty();
    // `content: url(x) / "alt"`: only the alternative text counts.
    let src = match content.rfind(" / ") {
        Some(i) => &content[i + 3..],
        None => &content[..],
    };
    let mut text = String::new();
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' => {
                let q = c;
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some(n) = chars.next() {
                                text.push(n);
                            }
                        }
                        c if c == q => break,
                        c => text.push(c),
                    }
                }
            }
            'a' if src.contains("attr(") => {
                let rest: String = std::iter::once(c).chain(chars.clone()).collect();
                if let Some(inner) = rest.strip_prefix("attr(").and_then(|r| r.split_once(')')) {
                    if let Some(v) = el.get_attribute(inner.0.trim()) {
                        text.push_str(&v);
                    }
                    for _ in 0..inner.0.len() + 5 {
                        chars.next();
                    }
                }
            }
            _ => {}
        }
    }
    if block {
        out.push(' ');
    }
    out.push_str(&text);
    if block {
        out.push(' ');
    }
}
