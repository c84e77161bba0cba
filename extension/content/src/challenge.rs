//! Challenge detection, DOM side (docs/design.md, "Observation"): gathers
//! [`PageSignals`] from the live page. The snapshot carries them to the
//! service worker, which runs the pure [`shared::challenge::detect`] (real
//! WASM there; classification stays out of the content script:
//! docs/design.md, "Build and test facts").
//!
//! Two ways to the same signals:
//! - the snapshot walker (`crate::snapshot::page_signals`, also what
//!   `PageRequest::Signals` — the check before an action and behind Done —
//!   answers): a walk that saw the whole page gathers headings, buttons,
//!   links, fields, frames and the first visible text as it goes
//!   (`snapshot::Walker`), and only the few page-wide facts the walk does
//!   not see (CAPTCHA widget markers, scripts, forms) are added here with
//!   [`add_page_facts`];
//! - otherwise (a modal dialog hides the page from the walk, or the page
//!   has more elements than a walk takes) [`gather`] scans the page on its own: a handful of targeted
//!   `querySelectorAll` calls, each read only up to [`MAX_SIGNAL_ITEMS`]
//!   visible matches, and a text walk that stops after
//!   [`MAX_SIGNAL_TEXT_CHARS`] characters of visible text.
//!
//! The main frame and same-origin iframes (two levels deep) are looked at;
//! cross-origin frames count only through their `src` and `title`. Open
//! shadow roots are not entered by the scan (their hosts' widget classes
//! still count).

use js_sys::{Function, Reflect};
use shared::challenge::{InputSignal, MAX_SIGNAL_ITEMS, MAX_SIGNAL_TEXT_CHARS, PageSignals};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{Document, Element, HtmlInputElement};

/// Most characters kept of one heading, button or link name.
const MAX_ITEM_CHARS: usize = 100;
/// Most text nodes looked at while gathering visible text.
const MAX_TEXT_NODES: usize = 1_500;
/// Most matches of one selector looked at (visible or not): bounds the
/// cost on pages with thousands of hidden buttons or links.
const MAX_CANDIDATES: u32 = 300;
/// Most `<script>` elements looked at for a `src`.
const MAX_SCRIPTS: u32 = 1_000;
/// Same-origin iframes looked into (in total) and how deep.
const MAX_FRAMES: usize = 8;
const MAX_FRAME_DEPTH: u32 = 2;

/// CAPTCHA widget and challenge-page markers: a selector and the token
/// the signals report for a visible match (`shared::challenge` names
/// them); the first that matches an element names it. Looked for with
/// [`WIDGET_QUERIES`].
const WIDGET_MARKERS: &[(&str, &str)] = &[
    (".g-recaptcha", "g-recaptcha"),
    (".h-captcha", "h-captcha"),
    (".cf-turnstile", "cf-turnstile"),
    (
        "#challenge-stage, #challenge-form, #challenge-running, #cf-challenge-running, #challenge-body-text, \
         .cf-browser-verification",
        "cf-challenge",
    ),
    ("[id*=funcaptcha i], [class*=funcaptcha i]", "funcaptcha"),
    ("[id*=arkose i], [class*=arkose i]", "arkose"),
    ("#px-captcha", "px-captcha"),
    ("#sec-if-cpt-container, #sec-cpt-if", "akamai-challenge"),
    ("[class*=geetest_]", "geetest"),
    (".frc-captcha", "frc-captcha"),
    ("altcha-widget, .altcha", "altcha"),
    ("[data-sitekey]", "data-sitekey"),
];
/// The queries that find [`WIDGET_MARKERS`]' elements (each marker is in
/// one; a test checks it), cheap on pages with thousands of elements:
/// one class, id, tag or attribute each, which the browser answers from
/// its indexes, and the substring markers together behind a test for the
/// attributes they need.
const WIDGET_QUERIES: &[&str] = &[
    ".g-recaptcha",
    ".h-captcha",
    ".cf-turnstile",
    "#challenge-stage",
    "#challenge-form",
    "#challenge-running",
    "#cf-challenge-running",
    "#challenge-body-text",
    ".cf-browser-verification",
    ":is([id],[class]):is([id*=funcaptcha i], [class*=funcaptcha i], [id*=arkose i], [class*=arkose i], \
     [class*=geetest_])",
    "#px-captcha",
    "#sec-if-cpt-container",
    "#sec-cpt-if",
    ".frc-captcha",
    "altcha-widget",
    ".altcha",
    "[data-sitekey]",
];
const INPUT_SELECTOR: &str = "input:not([type=hidden i]):not([type=submit i]):not([type=button i])\
     :not([type=image i]):not([type=reset i])";
const BUTTON_SELECTOR: &str = "button, [role=button], input[type=submit i], input[type=button i]";

/// Signals a complete walk gathered, plus the page-wide facts it cannot
/// see.
pub fn complete(mut signals: PageSignals, document: &Document) -> PageSignals {
    add_page_facts(document, &mut signals, 0, &mut 0);
    signals
}

/// Widget markers, scripts and forms of `doc` and its same-origin frames.
fn add_page_facts(doc: &Document, s: &mut PageSignals, depth: u32, frames: &mut usize) {
    let Some(root) = doc.document_element() else { return };
    widgets_scripts_forms(&root, s);
    for d in inner_documents(&root, depth, frames, None) {
        add_page_facts(&d, s, depth + 1, frames);
    }
}

/// Reads the signals of the current page.
pub fn gather() -> Option<PageSignals> {
    let window = web_sys::window()?;
    let document = window.document()?;
    let mut s = PageSignals {
        url: window.location().href().unwrap_or_default(),
        title: document.title(),
        ..PageSignals::default()
    };
    let mut frames = 0;
    gather_document(&document, &mut s, 0, &mut frames);
    Some(s)
}

fn gather_document(doc: &Document, s: &mut PageSignals, depth: u32, frames: &mut usize) {
    let Some(root) = doc.document_element() else { return };
    each_visible(&root, "h1, h2, h3, h4, h5, h6, [role=heading]", false, |el| push_name(&mut s.headings, name_of(el)));
    each_visible(&root, BUTTON_SELECTOR, false, |el| push_name(&mut s.buttons, name_of(el)));
    each_visible(&root, "a[href]", false, |el| push_name(&mut s.links, name_of(el)));
    each_visible(&root, INPUT_SELECTOR, true, |el| {
        if let Some(i) = input_signal(el) {
            s.inputs.push(i);
        }
        s.inputs.len() < MAX_SIGNAL_ITEMS
    });
    widgets_scripts_forms(&root, s);
    if s.text.chars().count() < MAX_SIGNAL_TEXT_CHARS
        && let Some(body) = doc.body()
    {
        visible_text(doc, &body, &mut s.text);
    }
    for d in inner_documents(&root, depth, frames, Some(s)) {
        gather_document(&d, s, depth + 1, frames);
    }
}

fn widgets_scripts_forms(root: &Element, s: &mut PageSignals) {
    for query in WIDGET_QUERIES {
        if s.widgets.len() >= MAX_SIGNAL_ITEMS {
            break;
        }
        each_visible(root, query, true, |el| {
            if let Some(w) = widget_token(el)
                && !s.widgets.iter().any(|x| x == w)
            {
                s.widgets.push(w.to_string());
            }
            s.widgets.len() < MAX_SIGNAL_ITEMS
        });
    }
    // Tag collections: kept by the browser between snapshots of a page
    // that did not change.
    let scripts = root.get_elements_by_tag_name("script");
    for i in 0..scripts.length().min(MAX_SCRIPTS) {
        if s.scripts.len() >= MAX_SIGNAL_ITEMS {
            break;
        }
        if let Some(src) = scripts.item(i).and_then(|n| prop_string(&n, "src")).filter(|src| !src.is_empty()) {
            s.scripts.push(src);
        }
    }
    s.forms += root.get_elements_by_tag_name("form").length() as usize;
}

/// Documents of the visible same-origin frames under `root` (within the
/// depth and count limits); their `src`s and titles go to `signals` when
/// given.
fn inner_documents(
    root: &Element,
    depth: u32,
    frames: &mut usize,
    mut signals: Option<&mut PageSignals>,
) -> Vec<Document> {
    let mut inner: Vec<Document> = Vec::new();
    let mut each = |el: &Element| {
        if let Some(s) = signals.as_deref_mut() {
            push_frame(s, prop_string(el, "src").unwrap_or_default(), &attr(el, "title"));
        }
        if depth < MAX_FRAME_DEPTH
            && inner.len() + *frames < MAX_FRAMES
            && let Ok(d) = Reflect::get(el, &JsValue::from_str("contentDocument"))
            && d.is_object()
        {
            // Not `dyn_into`: a frame's document fails the top realm's
            // `instanceof Document` (`crate::dom::flat_children`).
            inner.push(d.unchecked_into::<Document>());
        }
        signals.as_deref().is_none_or(|s| s.iframes.len() < MAX_SIGNAL_ITEMS)
    };
    for tag in ["iframe", "frame"] {
        let list = root.get_elements_by_tag_name(tag);
        if !visible_items(list.length(), |i| list.item(i), false, &mut each) {
            break;
        }
    }
    *frames += inner.len();
    inner
}

/// Calls `f` on the visible matches of `selector` until it returns false
/// or [`MAX_SIGNAL_ITEMS`] were seen. `allow_empty` keeps zero-size
/// elements (custom-styled checkboxes, widget containers) that CSS does
/// not hide.
fn each_visible(root: &Element, selector: &str, allow_empty: bool, mut f: impl FnMut(&Element) -> bool) {
    let Ok(list) = root.query_selector_all(selector) else { return };
    visible_items(list.length(), |i| list.item(i).and_then(|n| n.dyn_into::<Element>().ok()), allow_empty, &mut f);
}

/// [`each_visible`] over the first `len` items of a list; false when `f`
/// asked to stop.
fn visible_items(
    len: u32,
    item: impl Fn(u32) -> Option<Element>,
    allow_empty: bool,
    f: &mut dyn FnMut(&Element) -> bool,
) -> bool {
    let mut seen = 0;
    for i in 0..len.min(MAX_CANDIDATES) {
        let Some(el) = item(i) else { continue };
        if !is_visible(&el, allow_empty) {
            continue;
        }
        seen += 1;
        if !f(&el) {
            return false;
        }
        if seen >= MAX_SIGNAL_ITEMS {
            break;
        }
    }
    true
}

/// [`push_item`], then whether the list has room for more.
fn push_name(list: &mut Vec<String>, name: String) -> bool {
    push_item(list, &name);
    list.len() < MAX_SIGNAL_ITEMS
}

/// Visible per CSS (`checkVisibility`: no `display:none`, `visibility:
/// hidden` or `content-visibility` hiding up the tree), not inside an
/// `aria-hidden`/`inert` subtree, and with a box unless `allow_empty`.
fn is_visible(el: &Element, allow_empty: bool) -> bool {
    thread_local! {
        /// `Element.prototype.checkVisibility` and its options, looked up once.
        static CHECK: Option<(Function, js_sys::Object)> = check_visibility();
    }
    let hidden = CHECK
        .with(|c| c.as_ref().is_some_and(|(f, opts)| f.call1(el, opts).ok().and_then(|v| v.as_bool()) == Some(false)));
    if hidden {
        return false;
    }
    if el.closest("[aria-hidden=true i], [inert]").ok().flatten().is_some() {
        return false;
    }
    if allow_empty {
        return true;
    }
    let r = el.get_bounding_client_rect();
    r.width() > 0.0 && r.height() > 0.0
}

fn check_visibility() -> Option<(Function, js_sys::Object)> {
    let proto = Reflect::get(&js_sys::global(), &JsValue::from_str("Element"))
        .and_then(|e| Reflect::get(&e, &JsValue::from_str("prototype")))
        .ok()?;
    let f = Reflect::get(&proto, &JsValue::from_str("checkVisibility")).ok()?.dyn_into::<Function>().ok()?;
    let opts = js_sys::Object::new();
    let _ = Reflect::set(&opts, &JsValue::from_str("visibilityProperty"), &JsValue::TRUE);
    let _ = Reflect::set(&opts, &JsValue::from_str("checkVisibilityCSS"), &JsValue::TRUE);
    Some((f, opts))
}

fn attr(el: &Element, name: &str) -> String {
    el.get_attribute(name).unwrap_or_default()
}

fn prop_string(v: &JsValue, name: &str) -> Option<String> {
    Reflect::get(v, &JsValue::from_str(name)).ok().and_then(|v| v.as_string())
}

/// A name: `aria-label`, else the text, else `value`/`title` (shortened by
/// [`push_item`]).
fn name_of(el: &Element) -> String {
    let mut name = attr(el, "aria-label");
    if name.trim().is_empty() {
        name = el.text_content().unwrap_or_default();
    }
    if name.trim().is_empty() {
        name = el.get_attribute("value").or_else(|| el.get_attribute("title")).unwrap_or_default();
    }
    name
}

/// Whitespace collapsed and cut to [`MAX_ITEM_CHARS`].
fn short(s: &str) -> String {
    let mut out = String::new();
    for w in s.split_whitespace() {
        if out.len() >= MAX_ITEM_CHARS * 4 {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    shared::limits::truncate_chars(&mut out, MAX_ITEM_CHARS);
    out
}

fn widget_token(el: &Element) -> Option<&'static str> {
    // Invisible widgets are no challenge: bound to a button (reCAPTCHA v3
    // or invisible v2, hCaptcha), `data-size=invisible`, or Turnstile shown
    // only when it must ask (its frame is seen then).
    let appearance = attr(el, "data-appearance");
    if attr(el, "data-size").eq_ignore_ascii_case("invisible")
        || appearance.eq_ignore_ascii_case("interaction-only")
        || appearance.eq_ignore_ascii_case("execute")
        || matches!(el.local_name().as_str(), "button" | "input")
    {
        return None;
    }
    WIDGET_MARKERS.iter().find(|(sel, _)| el.matches(sel).unwrap_or(false)).map(|(_, token)| *token)
}

fn input_signal(el: &Element) -> Option<InputSignal> {
    let input = el.dyn_ref::<HtmlInputElement>()?;
    let mut label = String::new();
    if let Some(labels) = input.labels() {
        for i in 0..labels.length().min(2) {
            if let Some(l) = labels.item(i) {
                label.push_str(&l.text_content().unwrap_or_default());
                label.push(' ');
            }
        }
    }
    if label.trim().is_empty() {
        label = attr(el, "aria-label");
    }
    Some(field_signal(el, input.type_().to_ascii_lowercase(), &label))
}

/// Whether an `<input>` of this (lower-case) type is a field the signals
/// count (not hidden, submit, button, image or reset).
pub fn is_signal_input(input_type: &str) -> bool {
    !matches!(input_type, "hidden" | "submit" | "button" | "image" | "reset")
}

/// The signal of one field whose type and label are known.
pub fn field_signal(el: &Element, input_type: String, label: &str) -> InputSignal {
    InputSignal {
        input_type,
        autocomplete: attr(el, "autocomplete"),
        name: short(&attr(el, "name")),
        id: short(&el.id()),
        label: short(label),
        placeholder: short(&attr(el, "placeholder")),
        maxlength: el.get_attribute("maxlength").and_then(|m| m.trim().parse().ok()),
        inputmode: attr(el, "inputmode"),
    }
}

/// A visible frame's `src` and `title` as the signals keep them (a frame
/// with neither is left out).
pub fn push_frame(s: &mut PageSignals, src: String, title: &str) {
    if s.iframes.len() < MAX_SIGNAL_ITEMS && !(src.is_empty() && title.trim().is_empty()) {
        s.iframes.push(src);
        s.iframe_titles.push(short(title));
    }
}

/// A heading, button or link name as the signals keep it.
pub fn push_item(list: &mut Vec<String>, name: &str) {
    if list.len() < MAX_SIGNAL_ITEMS && !name.trim().is_empty() {
        list.push(short(name));
    }
}

/// Appends the words of `text` to the signals' visible text, `count` its
/// length in characters, up to [`MAX_SIGNAL_TEXT_CHARS`]; false once full.
pub fn push_text(out: &mut String, count: &mut usize, text: &str) -> bool {
    for w in text.split_whitespace() {
        if *count >= MAX_SIGNAL_TEXT_CHARS {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
            *count += 1;
        }
        out.push_str(w);
        *count += w.chars().count();
    }
    if *count >= MAX_SIGNAL_TEXT_CHARS {
        shared::limits::truncate_chars(out, MAX_SIGNAL_TEXT_CHARS);
        return false;
    }
    true
}

/// Moves `walker` to the last node inside the highest hidden ancestor of
/// `el` (below `body`), so that `nextNode` continues after it.
fn skip_hidden_subtree(walker: &JsValue, el: &Element, body: &Element) {
    let mut top = el.clone();
    while let Some(up) = top.parent_element() {
        if &up == body || is_visible(&up, true) {
            break;
        }
        top = up;
    }
    let mut last: web_sys::Node = top.into();
    while let Some(c) = last.last_child() {
        last = c;
    }
    let _ = Reflect::set(walker, &JsValue::from_str("currentNode"), &last);
}

/// Appends visible text of `body` to `out` until it holds
/// [`MAX_SIGNAL_TEXT_CHARS`] characters: a `TreeWalker` over text nodes,
/// each kept when its parent element is visible.
fn visible_text(doc: &Document, body: &Element, out: &mut String) {
    const SHOW_TEXT: u32 = 4;
    let Ok(create) = Reflect::get(doc, &JsValue::from_str("createTreeWalker")) else { return };
    let Ok(create) = create.dyn_into::<Function>() else { return };
    let Ok(walker) = create.call2(doc, body, &JsValue::from(SHOW_TEXT)) else { return };
    let Ok(next) = Reflect::get(&walker, &JsValue::from_str("nextNode")).and_then(|f| f.dyn_into::<Function>()) else {
        return;
    };
    let mut count = out.chars().count();
    let mut last_parent: Option<Element> = None;
    let mut last_visible = false;
    for _ in 0..MAX_TEXT_NODES {
        let Ok(node) = next.call0(&walker) else { break };
        let Ok(node) = node.dyn_into::<web_sys::Node>() else { break };
        let text = node.text_content().unwrap_or_default();
        if text.trim().is_empty() {
            continue;
        }
        let Some(parent) = node.parent_element() else { continue };
        if last_parent.as_ref() != Some(&parent) {
            let tag = parent.local_name();
            let skipped = matches!(tag.as_str(), "script" | "style" | "noscript" | "template" | "title");
            last_visible = !skipped && is_visible(&parent, false);
            if !skipped && !last_visible {
                // Jump past the largest hidden subtree around this text.
                skip_hidden_subtree(&walker, &parent, body);
                last_parent = None;
                continue;
            }
            last_parent = Some(parent);
        }
        if !last_visible {
            continue;
        }
        if !push_text(out, &mut count, &text) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every part of every marker is found by a query: alone, or inside
    /// the substring query's `:is(…)`.
    #[test]
    fn every_widget_marker_has_a_query() {
        let norm = |q: &str| q.split_whitespace().collect::<Vec<_>>().join(" ");
        let queries: Vec<String> = WIDGET_QUERIES.iter().map(|q| norm(q)).collect();
        for (selector, token) in WIDGET_MARKERS {
            for part in selector.split(',').map(str::trim) {
                let found = queries.iter().any(|q| {
                    q == part
                        || q.strip_prefix(":is([id],[class]):is(")
                            .and_then(|inner| inner.strip_suffix(')'))
                            .is_some_and(|inner| inner.split(',').any(|p| p.trim() == part))
                });
                assert!(found, "{token}: no query finds {part}");
            }
        }
        // And no query looks for something no marker names.
        for q in &queries {
            let named = WIDGET_MARKERS.iter().any(|(sel, _)| sel.split(',').any(|p| q == p.trim()));
            assert!(named || q.starts_with(":is([id],[class]):is("), "query {q} names no marker");
        }
    }
}
