//! What the risk classifier needs to know about one element
//! (`shared::risk::ElementFacts`), its identity (`Fingerprint`) and whether
//! it is a sensitive field (`shared::sensitive`). Read from the live DOM;
//! roles and names come from the snapshot engine's public functions so a
//! resolved element reads like its snapshot line.

use js_sys::{Function, Reflect};
use shared::action::{Fingerprint, ResolvedElement};
use shared::error::{ErrorCode, WireError};
use shared::input::TEXT_TYPES;
use shared::limits::{MAX_NAME_CHARS, truncate_chars};
use shared::risk::{ElementFacts, MAX_OPTIONS_SEEN, OptionFacts};
use shared::sensitive::{FieldFacts, classify_field};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{Document, Element};

use crate::dom::{self, attr, attr_is, collapse, has};
use crate::name::{self, NameEnv, Pseudo};
use crate::{refs, roles};

/// Context labels kept per element.
const MAX_CONTEXT: usize = 4;
/// Headings looked at when searching the nearest one above an element.
const MAX_HEADINGS: u32 = 2_000;

pub fn document() -> Result<Document, WireError> {
    web_sys::window().and_then(|w| w.document()).ok_or_else(|| WireError::internal("no document"))
}

pub fn stale(target: &str) -> WireError {
    WireError::new(
        ErrorCode::StaleRef,
        format!("ref {target} is not on the page any more (or was never given out here); take a new browser_snapshot"),
    )
}

/// The live element behind a ref.
pub fn element(target: &str) -> Result<Element, WireError> {
    refs::lookup(target).ok_or_else(|| stale(target))
}

/// The focused element, when it is not the body.
pub fn focused() -> Option<Element> {
    let doc = document().ok()?;
    let mut el = doc.active_element()?;
    // Into open shadow roots and same-origin frames are not followed: the
    // focused host is what a person sees as focused.
    if let Some(sr) = el.shadow_root()
        && let Some(inner) = dom::prop(&sr, "activeElement").dyn_into::<Element>().ok()
    {
        el = inner;
    }
    let tag = el.local_name();
    (tag != "body" && tag != "html").then_some(el)
}

/// Everything the bridge and the worker classify on.
pub fn resolve(el: &Element) -> Result<ResolvedElement, WireError> {
    let doc = document()?;
    let pseudo = Pseudo::scan(&doc);
    let env = NameEnv { pseudo: &pseudo };
    let tag = el.local_name();
    let role = role_of(el, &tag);
    let mut name = name::accessible_name(&env, el, &tag, &role, crate::dom::Attrs::of(el));
    truncate_chars(&mut name, MAX_NAME_CHARS);

    let input_type = match tag.as_str() {
        "input" => roles::input_type(el),
        "button" => {
            attr(el, "type").map(|t| t.trim().to_ascii_lowercase()).filter(|t| !t.is_empty()).unwrap_or("submit".into())
        }
        _ => String::new(),
    };
    let content_editable = dom::prop_bool(el, "isContentEditable");
    let editable = content_editable
        || tag == "textarea"
        || (tag == "input" && TEXT_TYPES.contains(&input_type.as_str()))
        || (role == "textbox" || role == "searchbox") && !matches!(tag.as_str(), "input" | "select");
    // A click on a label (or on plain text inside one) activates its
    // control: the form facts are the control's.
    let label_control = label_control(el, &tag);
    let via_label = label_control.is_some();
    let (acting, acting_tag, acting_type) = match &label_control {
        Some(c) => {
            let t = c.local_name();
            let ty = match t.as_str() {
                "input" => roles::input_type(c),
                "button" => attr(c, "type")
                    .map(|t| t.trim().to_ascii_lowercase())
                    .filter(|t| !t.is_empty())
                    .unwrap_or("submit".into()),
                _ => String::new(),
            };
            (c.clone(), t, ty)
        }
        None => (el.clone(), tag.clone(), input_type.clone()),
    };
    let form = form_of(&acting);
    let is_submit_button = form.is_some()
        && match acting_tag.as_str() {
            "button" => acting_type == "submit",
            "input" => acting_type == "submit" || acting_type == "image",
            _ => false,
        };
    let in_form = form.is_some();
    let form_is_search = in_search(el) || form.as_ref().is_some_and(is_search_form);
    let is_rich_text = content_editable || (role == "textbox" && attr_is(el, "aria-multiline", "true"));
    let consent_hint = consent_hint(el, &tag, &input_type);
    let context = context(&env, el);
    let (visible_text, (painted_text, paint_tricks)) = if editable || matches!(tag.as_str(), "select" | "textarea") {
        // A field's content is what is typed into it, not a label.
        (String::new(), (String::new(), Vec::new()))
    } else {
        (visible_text(el, &tag, &input_type, &pseudo), crate::paint::painted(el))
    };
    let (target, form_method, form_fields) =
        if via_label { target_of(&acting, &acting_tag, form.as_ref()) } else { target_of(el, &tag, form.as_ref()) };
    let pings = pings_of(el);
    let options = if tag == "select" { options_of(el) } else { Vec::new() };

    let sensitive = if matches!(tag.as_str(), "input" | "textarea" | "select") || content_editable {
        let autocomplete = attr(el, "autocomplete").unwrap_or_default();
        let n = attr(el, "name").unwrap_or_default();
        let id = el.id();
        let placeholder = attr(el, "placeholder").unwrap_or_default();
        classify_field(&FieldFacts {
            input_type: &input_type,
            autocomplete: &autocomplete,
            name: &n,
            id: &id,
            label: &name,
            placeholder: &placeholder,
        })
    } else {
        None
    };

    let url = web_sys::window().and_then(|w| w.location().href().ok()).unwrap_or_default();
    Ok(ResolvedElement {
        fingerprint: Fingerprint { role: role.clone(), name: name.clone(), path: path_of(el) },
        facts: ElementFacts {
            role,
            name,
            input_type,
            editable,
            is_submit_button,
            in_form,
            form_is_search,
            is_rich_text,
            consent_hint,
            context,
            visible_text,
            target,
            form_method,
            form_fields,
            options,
            painted_text,
            paint_tricks,
            via_label,
            pings,
        },
        sensitive,
        url,
    })
}

/// Fields of a form looked at for [`ElementFacts::form_fields`].
const MAX_FORM_FIELDS: u32 = 200;
/// Elements under a control whose generated content is read.
const MAX_PSEUDO_PARTS: u32 = 64;
/// Elements under a control looked at for icon hints.
const MAX_ICON_PARTS: u32 = 12;

/// What the person sees on a control (`ElementFacts::visible_text`): its
/// `::before`, rendered text (`innerText`, which leaves out what is not
/// rendered but keeps what is merely clipped) and `::after`; the `value`
/// of an input button; else its `title` and the label of its icon.
fn visible_text(el: &Element, tag: &str, input_type: &str, pseudo: &Pseudo) -> String {
    let mut text = String::new();
    if tag == "input" {
        match input_type {
            "button" | "submit" | "reset" => {
                let v = dom::prop(el, "value").as_string().unwrap_or_default();
                text = if v.is_empty() && input_type != "button" {
                    if input_type == "submit" { "Submit".into() } else { "Reset".into() }
                } else {
                    v
                };
            }
            "image" => text = attr(el, "alt").unwrap_or_default(),
            _ => {}
        }
    } else {
        name::pseudo_text(el, "::before", &mut text);
        match el.dyn_ref::<web_sys::HtmlElement>() {
            Some(h) => text.push_str(&h.inner_text()),
            None => text.push_str(&el.text_content().unwrap_or_default()),
        }
        name::pseudo_text(el, "::after", &mut text);
        // Generated content of descendants shows too (`innerText` leaves
        // it out): a `<span>` whose `::before` says "Delete account".
        if let Ok(all) = el.query_selector_all("*") {
            for i in 0..all.length().min(MAX_PSEUDO_PARTS) {
                let Some(d) = all.item(i).and_then(|n| n.dyn_into::<Element>().ok()) else { continue };
                if pseudo.may_have(&d) {
                    text.push(' ');
                    name::pseudo_text(&d, "::before", &mut text);
                    text.push(' ');
                    name::pseudo_text(&d, "::after", &mut text);
                }
            }
        }
    }
    let mut text = collapse(&text, 400);
    if shared::sensitive::words(&text).is_empty() {
        // Nothing to read: the tooltip and the icon are what the person has.
        let mut shown = attr(el, "title").map(|t| collapse(&t, 200)).unwrap_or_default();
        if let Some(label) = shared::risk::icon_label(&icon_hints(el, &text)) {
            if !shown.is_empty() {
                shown.push(' ');
            }
            shown.push_str(label);
        }
        if !shown.is_empty() {
            text = shown;
        }
    }
    truncate_chars(&mut text, MAX_NAME_CHARS);
    text
}

/// Class names, `<svg><title>`, `<use href>` fragments, image `alt`/file
/// names of the control and its first descendants, and its text (emoji).
fn icon_hints(el: &Element, text: &str) -> String {
    let mut hints = String::from(text);
    let mut add = |s: Option<String>| {
        if let Some(s) = s {
            hints.push(' ');
            hints.push_str(&s.chars().take(200).collect::<String>());
        }
    };
    add(attr(el, "class"));
    if let Ok(parts) = el.query_selector_all("[class], svg title, use, img") {
        for i in 0..parts.length().min(MAX_ICON_PARTS) {
            let Some(p) = parts.item(i).and_then(|n| n.dyn_into::<Element>().ok()) else { continue };
            add(attr(&p, "class"));
            match p.local_name().as_str() {
                "title" => add(p.text_content()),
                "use" => add(attr(&p, "href").or_else(|| p.get_attribute("xlink:href"))),
                "img" => {
                    add(attr(&p, "alt"));
                    add(attr(&p, "src").map(|s| s.rsplit('/').next().unwrap_or("").to_string()));
                }
                _ => {}
            }
        }
    }
    hints
}

/// Where activating `el` goes, the form's method and its fields: the link
/// it is (or is inside) wins; else, in a form, the submission URL
/// (`formaction` of the control, else the form's `action`, else the page).
/// Attributes are read, not the DOM properties, which a page can shadow
/// with a field named `action` or `method`.
fn target_of(el: &Element, tag: &str, form: Option<&Element>) -> (String, String, Vec<String>) {
    if let Some(link) = link_of(el) {
        return (absolute(&link_href(&link)), String::new(), Vec::new());
    }
    let Some(form) = form else { return (String::new(), String::new(), Vec::new()) };
    let submitter = matches!(tag, "button" | "input");
    let action = submitter.then(|| attr(el, "formaction")).flatten().or_else(|| attr(form, "action"));
    let method = submitter
        .then(|| attr(el, "formmethod"))
        .flatten()
        .or_else(|| attr(form, "method"))
        .map(|m| m.trim().to_ascii_lowercase())
        .filter(|m| matches!(m.as_str(), "get" | "post" | "dialog"))
        .unwrap_or_else(|| "get".into());
    (absolute(action.as_deref().unwrap_or("")), method, form_fields(form))
}

/// The link `el` is or is inside: `<a href>`, `<area href>`, or an SVG
/// `<a>` whose target is `xlink:href` (`[*|href]`: in any namespace).
fn link_of(el: &Element) -> Option<Element> {
    el.closest("a[href], area[href], a[*|href]").ok().flatten()
}

/// A link's `href`, else its `xlink:href`.
fn link_href(link: &Element) -> String {
    attr(link, "href").or_else(|| link.get_attribute("xlink:href")).unwrap_or_default()
}

/// The URLs a click on the link also posts to (`ping`), resolved, at most
/// [`shared::risk::MAX_PINGS`].
fn pings_of(el: &Element) -> Vec<String> {
    let Some(link) = link_of(el) else { return Vec::new() };
    let ping = attr(&link, "ping").unwrap_or_default();
    ping.split_ascii_whitespace().take(shared::risk::MAX_PINGS).map(absolute).collect()
}

/// The control a click on `el` activates through a `<label>`: `el` is the
/// label, or plain content inside it (not itself a control or a link),
/// and the label has a control other than `el`.
fn label_control(el: &Element, tag: &str) -> Option<Element> {
    if matches!(tag, "a" | "button" | "input" | "select" | "textarea") {
        return None;
    }
    let label = if tag == "label" { el.clone() } else { el.closest("label").ok().flatten()? };
    if el.closest("a[href], button, input, select, textarea").ok().flatten().is_some_and(|c| label.contains(Some(&c))) {
        return None;
    }
    let control = dom::prop(&label, "control").dyn_into::<Element>().ok()?;
    (control != *el && !el.contains(Some(&control))).then_some(control)
}

/// The options of a `<select>` as the person sees them (label collapsed
/// like the snapshot's), at most `MAX_OPTIONS_SEEN`; options with `hidden`
/// (or in a hidden `<optgroup>`) are left out: the person never sees them,
/// so nobody chooses them (the snapshot does not list them either).
pub fn options_of(el: &Element) -> Vec<OptionFacts> {
    options_indexed(el).into_iter().map(|(_, o)| o).collect()
}

/// [`options_of`] with each option's index in `select.options`.
pub fn options_indexed(el: &Element) -> Vec<(u32, OptionFacts)> {
    let opts = dom::prop(el, "options");
    let n = dom::prop_f64(&opts, "length").unwrap_or(0.0) as u32;
    let mut out = Vec::new();
    for i in 0..n {
        if out.len() >= MAX_OPTIONS_SEEN {
            break;
        }
        let o = Reflect::get_u32(&opts, i).unwrap_or(JsValue::UNDEFINED);
        if o.is_object() {
            let opt: &Element = o.unchecked_ref();
            let group_hidden =
                opt.parent_element().is_some_and(|p| p.local_name() == "optgroup" && dom::has(&p, "hidden"));
            if dom::has(opt, "hidden") || group_hidden {
                continue;
            }
        }
        let mut label = collapse(&dom::prop(&o, "label").as_string().unwrap_or_default(), 400);
        truncate_chars(&mut label, MAX_NAME_CHARS);
        out.push((
            i,
            OptionFacts {
                value: dom::prop(&o, "value").as_string().unwrap_or_default().chars().take(400).collect(),
                label,
                disabled: dom::prop_bool(&o, "disabled"),
            },
        ));
    }
    out
}

/// `href` resolved against the document's base URL, as the browser would.
fn absolute(href: &str) -> String {
    let base = document().ok().and_then(|d| d.base_uri().ok().flatten()).unwrap_or_default();
    match web_sys::Url::new_with_base(href.trim(), &base) {
        Ok(u) => u.href(),
        Err(_) => href.trim().chars().take(2_000).collect(),
    }
}

/// `type:name` of each field of `form` (its descendants and the controls
/// that name it with `form=`); hidden fields carry a digest of their value.
fn form_fields(form: &Element) -> Vec<String> {
    let mut out = Vec::new();
    let mut add_all = |list: Result<web_sys::NodeList, JsValue>| {
        let Ok(list) = list else { return };
        for i in 0..list.length() {
            if out.len() as u32 >= MAX_FORM_FIELDS {
                return;
            }
            let Some(f) = list.item(i).and_then(|n| n.dyn_into::<Element>().ok()) else { continue };
            let tag = f.local_name();
            let kind = if tag == "input" { roles::input_type(&f) } else { tag };
            let name = attr(&f, "name").unwrap_or_default();
            if kind == "hidden" {
                let value = dom::prop(&f, "value").as_string().unwrap_or_default();
                out.push(format!("hidden:{name}#{}", fnv(&value)));
            } else {
                out.push(format!("{kind}:{name}"));
            }
        }
    };
    add_all(form.query_selector_all("input, select, textarea, button"));
    let id = form.id();
    if !id.is_empty()
        && let Ok(doc) = document()
    {
        let escaped = id.replace('\\', "\\\\").replace('"', "\\\"");
        add_all(doc.query_selector_all(&format!("[form=\"{escaped}\"]")));
    }
    out
}

/// [`shared::fnv1a`] of a string, hex.
fn fnv(s: &str) -> String {
    format!("{:016x}", shared::fnv1a(s))
}

fn role_of(el: &Element, tag: &str) -> String {
    roles::role_of(el, tag, crate::dom::Attrs::of(el)).unwrap_or("generic").to_string()
}

/// `el.form` for form-associated elements, else the nearest `<form>`.
pub fn form_of(el: &Element) -> Option<Element> {
    let f = dom::prop(el, "form");
    if let Ok(f) = f.dyn_into::<Element>() {
        return Some(f);
    }
    el.closest("form").ok().flatten()
}

fn in_search(el: &Element) -> bool {
    el.closest("[role=search], search").ok().flatten().is_some()
}

/// `role=search` on the form, or its only text field is a search box.
fn is_search_form(form: &Element) -> bool {
    if attr_is(form, "role", "search") || in_search(form) {
        return true;
    }
    let Ok(fields) = form.query_selector_all("input, textarea") else { return false };
    let mut text_fields = Vec::new();
    for i in 0..fields.length() {
        let Some(f) = fields.item(i).and_then(|n| n.dyn_into::<Element>().ok()) else { continue };
        let t = if f.local_name() == "textarea" { "textarea".to_string() } else { roles::input_type(&f) };
        if TEXT_TYPES.contains(&t.as_str()) || t == "textarea" {
            text_fields.push((f, t));
        }
    }
    if text_fields.len() != 1 {
        return false;
    }
    let (f, t) = &text_fields[0];
    if t == "search" {
        return true;
    }
    let words = [attr(f, "name"), Some(f.id()), attr(f, "aria-label"), attr(f, "placeholder")];
    words.into_iter().flatten().any(|w| {
        shared::sensitive::words(&w)
            .iter()
            .any(|w| matches!(w.as_str(), "q" | "query" | "search" | "suche" | "recherche"))
    })
}

fn consent_hint(el: &Element, tag: &str, input_type: &str) -> bool {
    let checkbox = (tag == "input" && input_type == "checkbox") || attr_is(el, "role", "checkbox");
    if !checkbox {
        return false;
    }
    let id_words = [attr(el, "name"), Some(el.id())];
    let named = id_words.into_iter().flatten().any(|w| {
        shared::sensitive::words(&w).iter().any(|w| {
            matches!(w.as_str(), "terms" | "tos" | "consent" | "gdpr" | "agree" | "privacy" | "conditions" | "legal")
        })
    });
    if named {
        return true;
    }
    // A label that links somewhere (terms, privacy).
    let labels = dom::prop(el, "labels");
    let n = dom::prop_f64(&labels, "length").unwrap_or(0.0) as u32;
    for i in 0..n {
        if let Ok(l) = Reflect::get_u32(&labels, i)
            && let Ok(l) = l.dyn_into::<Element>()
            && l.query_selector("a[href]").ok().flatten().is_some()
        {
            return true;
        }
    }
    false
}

/// Names of the enclosing dialog, form, fieldset/region and the nearest
/// heading above, innermost first.
fn context(env: &NameEnv, el: &Element) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: String| {
        let mut s = collapse(&s, 400);
        truncate_chars(&mut s, MAX_NAME_CHARS);
        if !s.is_empty() && !out.contains(&s) && out.len() < MAX_CONTEXT {
            out.push(s);
        }
    };
    let mut cur = el.parent_element();
    let mut steps = 0;
    while let Some(a) = cur {
        steps += 1;
        if steps > 200 {
            break;
        }
        let tag = a.local_name();
        let role = attr(&a, "role").unwrap_or_default().to_ascii_lowercase();
        if tag == "dialog" || role == "dialog" || role == "alertdialog" {
            push(name::accessible_name(env, &a, &tag, "dialog", crate::dom::Attrs::of(&a)));
        } else if tag == "form" || role == "form" {
            push(name::accessible_name(env, &a, &tag, "form", crate::dom::Attrs::of(&a)));
        } else if tag == "fieldset" {
            if let Some(legend) = a.query_selector(":scope > legend").ok().flatten() {
                push(legend.text_content().unwrap_or_default());
            }
        } else if (tag == "section" || role == "region") && (has(&a, "aria-label") || has(&a, "aria-labelledby")) {
            push(name::accessible_name(env, &a, &tag, "region", crate::dom::Attrs::of(&a)));
        }
        cur = a.parent_element();
    }
    if let Some(h) = heading_above(el) {
        push(h.text_content().unwrap_or_default());
    }
    out
}

/// The last heading before `el` in document order.
fn heading_above(el: &Element) -> Option<Element> {
    let doc = el.owner_document()?;
    let hs = doc.query_selector_all("h1, h2, h3, h4, h5, h6, [role=heading]").ok()?;
    let mut best = None;
    for i in 0..hs.length().min(MAX_HEADINGS) {
        let Some(h) = hs.item(i).and_then(|n| n.dyn_into::<Element>().ok()) else { continue };
        // DOCUMENT_POSITION_FOLLOWING (4): `el` follows `h`.
        if h.compare_document_position(el) & 4 != 0 && !h.contains(Some(el)) {
            best = Some(h);
        } else {
            break;
        }
    }
    best
}

/// The element's position in the tree: tag and index among element
/// siblings from the root, through shadow hosts; hashed (FNV-1a).
pub fn path_of(el: &Element) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur = Some(el.clone());
    let mut steps = 0;
    let index_of = Reflect::get(&js_sys::Array::new(), &JsValue::from_str("indexOf"))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok());
    while let Some(e) = cur {
        steps += 1;
        if steps > 1_000 {
            break;
        }
        // One native indexOf over the parent's children: a row among
        // 10,000 siblings costs one call, not 10,000 sibling steps.
        let index = match e.parent_node() {
            Some(parent) => {
                let children = dom::prop(&parent, "children");
                let found = index_of.as_ref().and_then(|f| f.call1(&children, &e).ok()).and_then(|i| i.as_f64());
                found.unwrap_or(-1.0) as i32
            }
            None => 0,
        };
        parts.push(format!("{}:{index}", e.local_name()));
        cur = match e.parent_element() {
            Some(p) => Some(p),
            None => {
                // The top of a shadow tree: continue at its host.
                let root = e.parent_node();
                let host = root.as_ref().map(|r| dom::prop(r, "host")).and_then(|h| h.dyn_into::<Element>().ok());
                if host.is_some() {
                    parts.push("#shadow".into());
                }
                host
            }
        };
    }
    parts.reverse();
    fnv(&parts.join(">"))
}
