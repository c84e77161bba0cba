//! The DOM walk behind a snapshot (DESIGN §4): visible elements in document
//! order (open shadow roots via their slots, same-origin iframes), with
//! role, accessible name, ref, level, states and masked value.

use js_sys::{Array, Function, Object, Reflect};
use shared::error::{ErrorCode, WireError};
use shared::limits::{MAX_NAME_CHARS, MAX_TEXT_CHARS, truncate_chars};
use shared::snapshot::{Node, PageSnapshot, SnapshotRequest, State};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{Document, Element, HtmlIFrameElement, HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement, Window};

use shared::sensitive::{FieldFacts, MASK, classify_field, classify_name};

use crate::refs;

/// More nodes than this are not collected (the frame limit is 12 MiB).
const MAX_NODES: usize = 50_000;
/// Deeper nesting than this is not walked.
const MAX_DEPTH: u32 = 512;
/// Text gathered for a name stops growing here (it is cut to 120 later).
const NAME_SCAN_CHARS: usize = 600;

/// Roles that get a ref: things a person can act on.
const INTERACTIVE: &[&str] = &[
    "link",
    "button",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "slider",
    "spinbutton",
    "treeitem",
];

/// Roles whose accessible name may come from their content.
const NAME_FROM_CONTENT: &[&str] = &[
    "link",
    "button",
    "heading",
    "checkbox",
    "radio",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "treeitem",
    "cell",
    "gridcell",
    "columnheader",
    "rowheader",
    "row",
    "tooltip",
    "label",
    "legend",
    "caption",
];

pub fn take(req: &SnapshotRequest) -> Result<PageSnapshot, WireError> {
    let window = web_sys::window().ok_or_else(|| internal("no window"))?;
    let document = window.document().ok_or_else(|| internal("no document"))?;
    let mut w = Walker {
        nodes: Vec::new(),
        interactive_only: req.interactive_only,
        focused: deep_active_element(&document),
        window: window.clone(),
    };
    match &req.scope {
        Some(r) => {
            let el = refs::lookup(r)
                .ok_or_else(|| WireError::new(ErrorCode::StaleRef, format!("ref {r} is not on the page any more")))?;
            if let Some(win) = el.owner_document().and_then(|d| d.default_view()) {
                w.window = win;
            }
            w.visit(&el, 0, 0);
        }
        None => {
            if let Some(root) = document.document_element() {
                w.visit(&root, 0, 0);
            }
        }
    }
    let url = window.location().href().unwrap_or_default();
    let mut title = document.title();
    truncate_chars(&mut title, MAX_TEXT_CHARS);
    Ok(PageSnapshot { url, title, nodes: w.nodes, challenge: None })
}

fn internal(msg: &str) -> WireError {
    WireError::new(ErrorCode::Internal, msg)
}

struct Walker {
    nodes: Vec<Node>,
    interactive_only: bool,
    focused: Option<Element>,
    /// Window of the document being walked (changes inside iframes).
    window: Window,
}

impl Walker {
    /// Visits `el` and its subtree; `depth` is the number of emitted
    /// ancestors, `nesting` the DOM depth (bounded).
    fn visit(&mut self, el: &Element, depth: u16, nesting: u32) {
        if self.nodes.len() >= MAX_NODES || nesting > MAX_DEPTH {
            return;
        }
        let tag = el.local_name();
        if matches!(tag.as_str(), "script" | "style" | "template" | "noscript" | "head" | "option" | "datalist") {
            return;
        }
        if hidden_by_attribute(el) {
            return;
        }
        let style = self.window.get_computed_style(el).ok().flatten();
        let display = style.as_ref().and_then(|s| s.get_property_value("display").ok()).unwrap_or_default();
        if display == "none" {
            return;
        }
        let visibility = style.as_ref().and_then(|s| s.get_property_value("visibility").ok()).unwrap_or_default();
        let visible = visibility != "hidden" && visibility != "collapse" && (display == "contents" || has_size(el));

        let mut child_depth = depth;
        let mut descend = true;
        if visible && let Some(role) = role_of(el, &tag) {
            let interactive = INTERACTIVE.contains(&role.as_str());
            let is_heading = role == "heading";
            if !self.interactive_only || interactive || is_heading {
                let node = self.describe(el, &tag, role, interactive, depth);
                self.nodes.push(node);
                child_depth = depth.saturating_add(1);
            }
            // Form fields show their content as a value, not as children.
            descend = !matches!(tag.as_str(), "select" | "textarea" | "input");
        }
        if !descend {
            return;
        }

        if tag == "iframe" || tag == "frame" {
            self.visit_frame(el, child_depth, nesting);
            return;
        }
        if tag == "slot" {
            let assigned = assigned_elements(el);
            if assigned.length() > 0 {
                for child in assigned.iter() {
                    if let Ok(child) = child.dyn_into::<Element>() {
                        self.visit(&child, child_depth, nesting + 1);
                    }
                }
                return;
            }
        }
        if let Some(shadow) = el.shadow_root() {
            // Light-DOM children are reached through the shadow tree's slots.
            let mut child = shadow.first_element_child();
            while let Some(c) = child {
                self.visit(&c, child_depth, nesting + 1);
                child = c.next_element_sibling();
            }
            return;
        }
        let mut child = el.first_element_child();
        while let Some(c) = child {
            self.visit(&c, child_depth, nesting + 1);
            child = c.next_element_sibling();
        }
    }

    /// Same-origin iframes are walked in place; others are skipped.
    fn visit_frame(&mut self, el: &Element, depth: u16, nesting: u32) {
        let Some(frame) = el.dyn_ref::<HtmlIFrameElement>() else { return };
        let Some(doc) = frame.content_document() else { return };
        let (Some(root), Some(win)) = (doc.document_element(), doc.default_view()) else { return };
        let outer = std::mem::replace(&mut self.window, win);
        self.visit(&root, depth, nesting + 1);
        self.window = outer;
    }

    fn describe(&self, el: &Element, tag: &str, role: String, interactive: bool, depth: u16) -> Node {
        let input_type = if tag == "input" { input_type(el) } else { String::new() };
        let mut name = accessible_name(el, tag, &role, &input_type);
        let level = if role == "heading" { heading_level(el, tag) } else { None };
        let states = states_of(el, tag, &role, self.focused.as_ref());
        let value = value_of(el, tag, &role, &input_type, &name);
        truncate_chars(&mut name, MAX_NAME_CHARS);
        Node { depth, role, name, element_ref: interactive.then(|| refs::ref_for(el)), level, states, value }
    }
}

fn attr(el: &Element, name: &str) -> Option<String> {
    el.get_attribute(name)
}

fn attr_is(el: &Element, name: &str, value: &str) -> bool {
    attr(el, name).is_some_and(|v| v.trim().eq_ignore_ascii_case(value))
}

fn hidden_by_attribute(el: &Element) -> bool {
    el.has_attribute("hidden") || el.has_attribute("inert") || attr_is(el, "aria-hidden", "true")
}

fn has_size(el: &Element) -> bool {
    let r = el.get_bounding_client_rect();
    r.width() > 0.0 || r.height() > 0.0
}

fn input_type(el: &Element) -> String {
    attr(el, "type").map(|t| t.trim().to_ascii_lowercase()).filter(|t| !t.is_empty()).unwrap_or_else(|| "text".into())
}

/// The element's role: the first token of an explicit `role`, else the
/// implicit role of the HTML element, else none (not listed).
fn role_of(el: &Element, tag: &str) -> Option<String> {
    if let Some(r) = attr(el, "role") {
        let first = r.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
        if !first.is_empty() && first.chars().all(|c| c.is_ascii_lowercase()) {
            if matches!(first.as_str(), "presentation" | "none" | "generic") {
                return None;
            }
            return Some(first);
        }
    }
    let role = match tag {
        "a" | "area" if el.has_attribute("href") => "link",
        "button" => "button",
        "input" => match input_type(el).as_str() {
            "hidden" => return None,
            "button" | "submit" | "reset" | "image" | "file" | "color" => "button",
            "checkbox" => "checkbox",
            "radio" => "radio",
            "search" => "searchbox",
            "range" => "slider",
            "number" => "spinbutton",
            _ if el.has_attribute("list") => "combobox",
            _ => "textbox",
        },
        "textarea" => "textbox",
        "select" => {
            let multi = el.has_attribute("multiple")
                || attr(el, "size").and_then(|s| s.trim().parse::<u32>().ok()).is_some_and(|s| s > 1);
            if multi { "listbox" } else { "combobox" }
        }
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => "heading",
        "summary" => "button",
        "dialog" if el.has_attribute("open") => "dialog",
        _ => {
            let editable = attr(el, "contenteditable").map(|v| v.trim().to_ascii_lowercase());
            let parent_editable = el.parent_element().and_then(|p| attr(&p, "contenteditable")).is_some();
            match editable.as_deref() {
                Some("" | "true" | "plaintext-only") if !parent_editable => "textbox",
                _ => return None,
            }
        }
    };
    Some(role.to_string())
}

fn heading_level(el: &Element, tag: &str) -> Option<u8> {
    if let Some(l) = attr(el, "aria-level").and_then(|l| l.trim().parse::<u8>().ok()).filter(|l| (1..=6).contains(l)) {
        return Some(l);
    }
    match tag.as_bytes() {
        [b'h', d @ b'1'..=b'6'] => Some(d - b'0'),
        _ => Some(2),
    }
}

/// Simplified W3C AccName: aria-labelledby, aria-label, `<label>`, alt,
/// content (for roles named by content), title, placeholder.
fn accessible_name(el: &Element, tag: &str, role: &str, input_type: &str) -> String {
    let mut out = String::new();
    if let Some(ids) = attr(el, "aria-labelledby") {
        let root = el.get_root_node();
        for id in ids.split_whitespace() {
            if let Some(target) = element_by_id(&root, id) {
                let mut part = String::new();
                if let Some(l) = attr(&target, "aria-label").filter(|l| !l.trim().is_empty()) {
                    part.push_str(&l);
                } else {
                    text_content(&target, None, &mut part);
                }
                out.push(' ');
                out.push_str(&part);
            }
        }
        let n = collapse(&out);
        if !n.is_empty() {
            return n;
        }
    }
    if let Some(l) = attr(el, "aria-label") {
        let n = collapse(&l);
        if !n.is_empty() {
            return n;
        }
    }
    let is_field = matches!(tag, "input" | "select" | "textarea");
    if tag == "input" && matches!(input_type, "button" | "submit" | "reset") {
        let v = collapse(&attr(el, "value").unwrap_or_default());
        if !v.is_empty() {
            return v;
        }
    }
    if (is_field || matches!(tag, "button" | "meter" | "output" | "progress"))
        && let Ok(labels) = Reflect::get(el, &JsValue::from_str("labels"))
        && let Ok(list) = labels.dyn_into::<web_sys::NodeList>()
    {
        let mut text = String::new();
        for i in 0..list.length() {
            if let Some(label) = list.item(i).and_then(|n| n.dyn_into::<Element>().ok()) {
                text.push(' ');
                text_content(&label, Some(el), &mut text);
            }
        }
        let n = collapse(&text);
        if !n.is_empty() {
            return n;
        }
    }
    if (tag == "img" || tag == "area" || (tag == "input" && input_type == "image"))
        && let Some(alt) = attr(el, "alt")
    {
        let n = collapse(&alt);
        if !n.is_empty() {
            return n;
        }
    }
    if !is_field && NAME_FROM_CONTENT.contains(&role) {
        text_content(el, None, &mut out);
        let n = collapse(&out);
        if !n.is_empty() {
            return n;
        }
    }
    if let Some(t) = attr(el, "title") {
        let n = collapse(&t);
        if !n.is_empty() {
            return n;
        }
    }
    for a in ["placeholder", "aria-placeholder"] {
        if let Some(p) = attr(el, a) {
            let n = collapse(&p);
            if !n.is_empty() {
                return n;
            }
        }
    }
    if tag == "input" {
        match input_type {
            "submit" => return "Submit".into(),
            "reset" => return "Reset".into(),
            _ => {}
        }
    }
    String::new()
}

fn element_by_id(root: &web_sys::Node, id: &str) -> Option<Element> {
    if let Some(doc) = root.dyn_ref::<Document>() {
        return doc.get_element_by_id(id);
    }
    if let Some(frag) = root.dyn_ref::<web_sys::DocumentFragment>() {
        return frag.get_element_by_id(id);
    }
    None
}

/// Appends the visible text of `el`'s subtree (alt of images, aria-label
/// of elements that have one), skipping `skip` and hidden parts.
fn text_content(el: &Element, skip: Option<&Element>, out: &mut String) {
    let mut child = el.first_child();
    while let Some(c) = child {
        if out.len() > NAME_SCAN_CHARS {
            return;
        }
        match c.node_type() {
            web_sys::Node::TEXT_NODE => {
                if let Some(t) = c.node_value() {
                    out.push_str(&t);
                }
            }
            web_sys::Node::ELEMENT_NODE => {
                let e: &Element = c.unchecked_ref();
                if skip.is_none_or(|s| s != e) {
                    element_text(e, skip, out);
                }
            }
            _ => {}
        }
        child = c.next_sibling();
    }
}

fn element_text(e: &Element, skip: Option<&Element>, out: &mut String) {
    let tag = e.local_name();
    if matches!(tag.as_str(), "script" | "style" | "template" | "noscript" | "input" | "select" | "textarea")
        || hidden_by_attribute(e)
    {
        return;
    }
    if let Some(win) = e.owner_document().and_then(|d| d.default_view())
        && let Ok(Some(style)) = win.get_computed_style(e)
        && style.get_property_value("display").is_ok_and(|d| d == "none")
    {
        return;
    }
    let block = matches!(
        tag.as_str(),
        "div"
            | "p"
            | "br"
            | "li"
            | "td"
            | "th"
            | "tr"
            | "section"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "dd"
            | "dt"
    );
    if block {
        out.push(' ');
    }
    if let Some(l) = attr(e, "aria-label").filter(|l| !l.trim().is_empty()) {
        out.push(' ');
        out.push_str(&l);
        out.push(' ');
    } else if tag == "img" {
        if let Some(alt) = attr(e, "alt") {
            out.push(' ');
            out.push_str(&alt);
            out.push(' ');
        }
    } else if let Some(shadow) = e.shadow_root() {
        let mut child = shadow.first_element_child();
        while let Some(c) = child {
            element_text(&c, skip, out);
            child = c.next_element_sibling();
        }
    } else {
        text_content(e, skip, out);
    }
    if block {
        out.push(' ');
    }
}

/// Collapses runs of whitespace to one space and trims.
fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(NAME_SCAN_CHARS));
    for w in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
        if out.len() > NAME_SCAN_CHARS {
            break;
        }
    }
    out
}

fn states_of(el: &Element, tag: &str, role: &str, focused: Option<&Element>) -> Vec<State> {
    let mut s = Vec::new();
    if let Some(input) = el.dyn_ref::<HtmlInputElement>()
        && matches!(role, "checkbox" | "radio" | "switch")
    {
        if input.indeterminate() {
            s.push(State::Mixed);
        } else if input.checked() {
            s.push(State::Checked);
        }
    } else {
        match attr(el, "aria-checked").map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            Some("true") => s.push(State::Checked),
            Some("mixed") => s.push(State::Mixed),
            _ => {}
        }
    }
    if attr_is(el, "aria-selected", "true") {
        s.push(State::Selected);
    }
    if tag == "summary" {
        let open = el.parent_element().is_some_and(|p| p.local_name() == "details" && p.has_attribute("open"));
        s.push(if open { State::Expanded } else { State::Collapsed });
    } else {
        match attr(el, "aria-expanded").map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            Some("true") => s.push(State::Expanded),
            Some("false") => s.push(State::Collapsed),
            _ => {}
        }
    }
    if attr_is(el, "aria-pressed", "true") {
        s.push(State::Pressed);
    }
    if el.matches(":disabled").unwrap_or(false) || attr_is(el, "aria-disabled", "true") {
        s.push(State::Disabled);
    }
    let field = matches!(tag, "input" | "select" | "textarea");
    if (field && el.has_attribute("required")) || attr_is(el, "aria-required", "true") {
        s.push(State::Required);
    }
    if (matches!(tag, "input" | "textarea") && el.has_attribute("readonly")) || attr_is(el, "aria-readonly", "true") {
        s.push(State::Readonly);
    }
    if attr_is(el, "aria-invalid", "true") {
        s.push(State::Invalid);
    }
    if focused.is_some_and(|f| f == el) {
        s.push(State::Focused);
    }
    s
}

fn value_of(el: &Element, tag: &str, role: &str, input_type: &str, name: &str) -> Option<String> {
    let raw = match tag {
        "input" => {
            if matches!(input_type, "checkbox" | "radio" | "button" | "submit" | "reset" | "image" | "file" | "hidden")
            {
                return None;
            }
            el.dyn_ref::<HtmlInputElement>()?.value()
        }
        "textarea" => el.dyn_ref::<HtmlTextAreaElement>()?.value(),
        "select" => {
            let select = el.dyn_ref::<HtmlSelectElement>()?;
            let opts = select.selected_options();
            let mut parts = Vec::new();
            for i in 0..opts.length() {
                if let Some(o) = opts.item(i) {
                    let t = collapse(&o.text_content().unwrap_or_default());
                    parts.push(t);
                }
            }
            parts.join(", ")
        }
        _ => {
            if matches!(role, "slider" | "spinbutton" | "progressbar" | "scrollbar") {
                attr(el, "aria-valuetext").or_else(|| attr(el, "aria-valuenow")).unwrap_or_default()
            } else {
                return None;
            }
        }
    };
    if raw.is_empty() {
        return None;
    }
    if is_sensitive(el, input_type, name) {
        return Some(MASK.to_string());
    }
    let mut v = raw;
    truncate_chars(&mut v, MAX_TEXT_CHARS);
    Some(v)
}

fn is_sensitive(el: &Element, input_type: &str, name: &str) -> bool {
    let autocomplete = attr(el, "autocomplete").unwrap_or_default();
    let field_name = attr(el, "name").unwrap_or_default();
    let id = el.id();
    let placeholder = attr(el, "placeholder").unwrap_or_default();
    let facts = FieldFacts {
        input_type,
        autocomplete: &autocomplete,
        name: &field_name,
        id: &id,
        label: name,
        placeholder: &placeholder,
    };
    classify_field(&facts).is_some() || attr(el, "aria-label").is_some_and(|l| classify_name(&l).is_some())
}

/// `document.activeElement`, followed into open shadow roots and
/// same-origin iframes.
fn deep_active_element(doc: &Document) -> Option<Element> {
    let mut active = doc.active_element()?;
    for _ in 0..32 {
        let inner = if let Some(shadow) = active.shadow_root() {
            shadow.active_element()
        } else if let Some(frame) = active.dyn_ref::<HtmlIFrameElement>() {
            frame.content_document().and_then(|d| d.active_element())
        } else {
            None
        };
        match inner {
            Some(i) => active = i,
            None => break,
        }
    }
    Some(active)
}

/// `slot.assignedElements({flatten: true})`.
fn assigned_elements(slot: &Element) -> Array {
    let f = Reflect::get(slot, &JsValue::from_str("assignedElements")).ok();
    let Some(f) = f.and_then(|f| f.dyn_into::<Function>().ok()) else { return Array::new() };
    let opts = Object::new();
    let _ = Reflect::set(&opts, &JsValue::from_str("flatten"), &JsValue::TRUE);
    f.call1(slot, &opts).ok().and_then(|a| a.dyn_into::<Array>().ok()).unwrap_or_default()
}
