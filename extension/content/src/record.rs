//! "Record me" in the page (docs/design.md, "Recording and flows").
//!
//! While the service worker has switched recording on for this page
//! ([`set`]), listeners on the window (capture phase, passive) note what
//! the person does and report it as a `shared::record::RecordedStep` with
//! `chrome.runtime.sendMessage({type: "recorded", step})`:
//!
//! - only events with `isTrusted`: anything a page script (or Chaperone's
//!   own agent actions) dispatches is ignored before anything else runs;
//! - and only right after the person's own input on that element: a page
//!   makes trusted events too (`checkbox.click()` and `label.click()` a
//!   trusted `change`, `execCommand('insertText')` a trusted `input`), so
//!   the last trusted `pointerdown`, `keydown`, `paste` or `drop` is noted
//!   (when, on which element) and a click, a check, a choice or typing
//!   counts only when `shared::record::person::step_counts` agrees: that
//!   input was on the element (inside it, on a `<label>` of it, or on a
//!   radio button of its group), recently enough, with the page's user
//!   activation on;
//! - Back/Forward the person pressed (the Navigation API's `navigate`
//!   event, `traverse` and `userInitiated`; `shared::record::person::navigation_counts`)
//!   is reported as a navigation; a script's `history.back()` is not. The
//!   worker reports what the person typed in the address bar;
//! - typing: `input` events mark the field; one fill per field is reported
//!   when the person leaves it (`change`, `focusout`), presses Enter,
//!   clicks elsewhere or the page goes away (`pagehide`). The value is
//!   read only then, only when "Also keep the text I type" is on, and
//!   never for a sensitive field (`shared::sensitive` on the field's type,
//!   `autocomplete`, `name`, id, label and placeholder, and
//!   `shared::record::descriptor_sensitivity`);
//! - `change` of a `<select>` (the chosen option's label), a checkbox or
//!   a radio button (checked or not);
//! - Enter in a single-line field (the click on the submit button that the
//!   browser's implicit submission makes right after is not a step);
//! - clicks on links, buttons and elements with a button-like role (a
//!   click into a field, a label or a checkbox is not a step of its own).
//!
//! Each report names its element with a descriptor: role, accessible
//! name, label, placeholder, tag and type, and locators (id, `name`, test
//! ids, `aria-label`, a CSS path last), each clamped to the bounds of
//! `shared::flow`, and its page: URL without query string or fragment,
//! title. No page text. At most `MAX_EVENTS_PER_SEC` reports a second
//! leave the page; the rest are dropped.

use std::cell::RefCell;

use js_sys::{Function, Reflect};
use shared::flow::{Descriptor, Locator, MAX_EVENTS_PER_SEC, MAX_LOCATOR_CHARS, MAX_LOCATORS, TEST_ID_ATTRS};
use shared::input::TEXT_TYPES;
use shared::limits::{MAX_NAME_CHARS, truncate_chars};
use shared::protocol::{CommandResult, Outcome};
use shared::record::person::{NavSignal, PersonInput, StepEvent, StepFacts, Touch};
use shared::record::{MAX_SHORT_CHARS, RecordedAction, RecordedStep, Typed};
use shared::sensitive::{FieldFacts, classify_field};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::Element;

use crate::dom::{self, attr, has};
use crate::name::{self, NameEnv, Pseudo};
use crate::roles;

/// The events listened to.
const EVENTS: &[&str] =
    &["click", "input", "change", "focusout", "keydown", "pagehide", "pointerdown", "paste", "drop"];
/// Trusted events that only the person's own input makes.
const PERSON_INPUT: &[&str] = &["pointerdown", "keydown", "paste", "drop"];
/// Ancestors walked from the person's input to the element of an event.
const MAX_TOUCH_DEPTH: usize = 256;
/// What a click is recorded on: the nearest of these around its target.
const CLICKABLE: &str = "a[href], button, input[type=submit], input[type=button], input[type=image], \
     input[type=reset], summary, [role=button], [role=link], [role=menuitem], [role=tab], [role=option], \
     [role=switch], [role=treeitem]";
/// How soon after an Enter a pointer-less click is its implicit submission.
const IMPLICIT_CLICK_MS: f64 = 500.0;
/// Ancestors walked for a CSS path.
const MAX_PATH_DEPTH: usize = 32;
/// Siblings counted for one `:nth-of-type`.
const MAX_SIBLINGS: usize = 2_000;

thread_local! {
    static REC: RefCell<Option<Rec>> = const { RefCell::new(None) };
    /// Swallows a failed send (the worker restarting).
    static NOOP: JsValue = Closure::<dyn FnMut(JsValue)>::new(|_: JsValue| {}).into_js_value();
}

struct Rec {
    keep_text: bool,
    listeners: Vec<(&'static str, JsValue)>,
    /// The `navigate` listener on `window.navigation`, where there is one.
    nav_listener: Option<(JsValue, JsValue)>,
    /// The person's last input: the element and when (`Date.now()`).
    last_input: Option<(Element, f64)>,
    /// The field typed into and not yet reported.
    pending: Option<Element>,
    /// The current one-second window and the reports sent in it.
    window_start: f64,
    sent: u32,
    /// When Enter was last reported in a field: the click on the form's
    /// submit button that implicit submission synthesises is not a step.
    enter_at: f64,
}

/// Recording on or off in this page (`PageRequest::Record`).
pub fn set(on: bool, keep_text: bool) -> Outcome {
    let installed = REC.with(|r| r.borrow().is_some());
    match (on, installed) {
        (true, true) => REC.with(|r| {
            if let Some(rec) = r.borrow_mut().as_mut() {
                rec.keep_text = keep_text;
            }
        }),
        (true, false) => install(keep_text),
        (false, true) => {
            flush();
            uninstall();
        }
        (false, false) => {}
    }
    Outcome::Ok(CommandResult::Recording { on })
}

fn install(keep_text: bool) {
    let Some(win) = web_sys::window() else { return };
    let opts = js_sys::Object::new();
    let _ = Reflect::set(&opts, &"capture".into(), &JsValue::TRUE);
    let _ = Reflect::set(&opts, &"passive".into(), &JsValue::TRUE);
    let mut listeners = Vec::new();
    for &kind in EVENTS {
        let cb = Closure::<dyn FnMut(JsValue)>::new(move |ev: JsValue| on_event(kind, &ev)).into_js_value();
        let _ = crate::dom::call(&win, "addEventListener", &[JsValue::from_str(kind), cb.clone(), opts.clone().into()]);
        listeners.push((kind, cb));
    }
    let navigation = dom::prop(&win, "navigation");
    let nav_listener = navigation.is_object().then(|| {
        let cb = Closure::<dyn FnMut(JsValue)>::new(|ev: JsValue| on_navigate(&ev)).into_js_value();
        let _ = crate::dom::call(&navigation, "addEventListener", &[JsValue::from_str("navigate"), cb.clone()]);
        (navigation, cb)
    });
    REC.with(|r| {
        *r.borrow_mut() = Some(Rec {
            keep_text,
            listeners,
            nav_listener,
            last_input: None,
            pending: None,
            window_start: 0.0,
            sent: 0,
            enter_at: f64::NEG_INFINITY,
        })
    });
}

fn uninstall() {
    let Some(rec) = REC.with(|r| r.borrow_mut().take()) else { return };
    let Some(win) = web_sys::window() else { return };
    for (kind, cb) in rec.listeners {
        let _ = crate::dom::call(&win, "removeEventListener", &[JsValue::from_str(kind), cb, JsValue::TRUE]);
    }
    if let Some((navigation, cb)) = rec.nav_listener {
        let _ = crate::dom::call(&navigation, "removeEventListener", &[JsValue::from_str("navigate"), cb]);
    }
}

/// The Navigation API's `navigate` event: Back/Forward the person pressed
/// is a navigation step (see the module docs).
fn on_navigate(ev: &JsValue) {
    if !dom::prop_bool(ev, "isTrusted") {
        return;
    }
    let navigation_type = dom::prop(ev, "navigationType").as_string().unwrap_or_default();
    let signal =
        NavSignal::Navigate { navigation_type: &navigation_type, user_initiated: dom::prop_bool(ev, "userInitiated") };
    if shared::record::person::navigation_counts(signal, true).is_err() {
        return;
    }
    let Some(to) = dom::prop(&dom::prop(ev, "destination"), "url").as_string() else { return };
    if !(to.starts_with("https://") || to.starts_with("http://")) {
        return;
    }
    flush();
    let url = shared::flow::step_url(&to);
    send(RecordedStep {
        action: RecordedAction::Navigate { url: url.clone() },
        target: None,
        autocomplete: String::new(),
        sensitive: false,
        url,
        title: page_title(),
    });
}

/// Whether the event is the person's step on `el` (see the module docs).
fn persons(event: StepEvent, ev: &JsValue, el: &Element) -> bool {
    let now = js_sys::Date::now();
    let last_input = REC.with(|r| r.borrow().as_ref().and_then(|rec| rec.last_input.clone()));
    let facts = StepFacts {
        event,
        trusted: dom::prop_bool(ev, "isTrusted"),
        last_input: last_input.map(|(on, at)| PersonInput { touch: touch(el, &on), age_ms: now - at }),
        activation: web_sys::window()
            .map(|w| dom::prop(&dom::prop(&dom::prop(&w, "navigator"), "userActivation"), "isActive"))
            .and_then(|v| v.as_bool()),
    };
    shared::record::person::step_counts(&facts).is_ok()
}

/// Where the person's input on `input` was, seen from `el`.
fn touch(el: &Element, input: &Element) -> Touch {
    let mut label = None;
    let mut cur: Option<web_sys::Node> = Some(input.clone().into());
    for _ in 0..MAX_TOUCH_DEPTH {
        let Some(node) = cur else { break };
        if node == **el {
            return Touch::On;
        }
        if label.is_none()
            && let Some(e) = node.dyn_ref::<Element>()
            && e.local_name() == "label"
        {
            label = Some(e.clone());
        }
        // Up through open and closed shadow roots to their hosts.
        cur = node.parent_node().or_else(|| node.dyn_ref::<web_sys::ShadowRoot>().map(|r| r.host().into()));
    }
    if label.is_some_and(|l| dom::prop(&l, "control").dyn_into::<Element>().is_ok_and(|c| &c == el)) {
        return Touch::Label;
    }
    // Arrow keys on a radio button check another of its group.
    let radio = |e: &Element| e.local_name() == "input" && roles::input_type(e) == "radio";
    if radio(el)
        && radio(input)
        && attr(el, "name").is_some_and(|n| !n.is_empty() && attr(input, "name").as_ref() == Some(&n))
        && dom::prop(el, "form") == dom::prop(input, "form")
    {
        return Touch::On;
    }
    Touch::Elsewhere
}

fn on_event(kind: &str, ev: &JsValue) {
    // Synthetic events never count, whoever dispatched them.
    if !dom::prop_bool(ev, "isTrusted") {
        return;
    }
    if kind == "pagehide" {
        flush();
        return;
    }
    let Some(el) = event_element(ev) else { return };
    if PERSON_INPUT.contains(&kind) {
        let at = js_sys::Date::now();
        REC.with(|r| {
            if let Some(rec) = r.borrow_mut().as_mut() {
                rec.last_input = Some((el.clone(), at));
            }
        });
    }
    match kind {
        "input" if is_text_field(&el) => {
            // Text a script inserted (`execCommand`) is not the person's.
            if !persons(StepEvent::Typing, ev, &el) {
                return;
            }
            let other = REC.with(|r| r.borrow().as_ref().and_then(|rec| rec.pending.clone()));
            if other.as_ref().is_some_and(|o| o != &el) {
                flush();
            }
            REC.with(|r| {
                if let Some(rec) = r.borrow_mut().as_mut() {
                    rec.pending = Some(el);
                }
            });
        }
        "change" => {
            let tag = el.local_name();
            let input_type = if tag == "input" { roles::input_type(&el) } else { String::new() };
            if tag == "select" {
                flush();
                if persons(StepEvent::Choose, ev, &el) {
                    let (label, option) = selected_option(&el);
                    report(&el, RecordedAction::Select { label, option });
                }
            } else if input_type == "checkbox" || input_type == "radio" {
                flush();
                // `checkbox.click()` / `label.click()` by a script: a trusted change.
                if persons(StepEvent::Check, ev, &el) {
                    report(&el, RecordedAction::Check { checked: dom::prop_bool(&el, "checked") });
                }
            } else if is_pending(&el) {
                flush();
            }
        }
        "focusout" if is_pending(&el) => flush(),
        "keydown" => {
            let key = dom::prop(ev, "key").as_string().unwrap_or_default();
            if key == "Enter"
                && !dom::prop_bool(ev, "isComposing")
                && submits_on_enter(&el)
                && persons(StepEvent::Enter, ev, &el)
            {
                flush();
                REC.with(|r| {
                    if let Some(rec) = r.borrow_mut().as_mut() {
                        rec.enter_at = js_sys::Date::now();
                    }
                });
                send(RecordedStep {
                    action: RecordedAction::PressKey { key },
                    target: is_text_field(&el).then(|| descriptor(&el).0),
                    autocomplete: String::new(),
                    sensitive: false,
                    url: page_url(),
                    title: page_title(),
                });
            }
        }
        "click" => {
            flush();
            // Implicit submission: Enter in a field "clicks" the submit
            // button (no pointer, `detail` 0) right after the Enter step.
            let after_enter =
                REC.with(|r| r.borrow().as_ref().map_or(f64::INFINITY, |rec| js_sys::Date::now() - rec.enter_at));
            if dom::prop_f64(ev, "detail") == Some(0.0) && after_enter < IMPLICIT_CLICK_MS {
                return;
            }
            if let Some(target) = clickable(&el)
                && persons(StepEvent::Click, ev, &target)
            {
                report(&target, RecordedAction::Click);
            }
        }
        _ => {}
    }
}

/// The element an event happened on, through open shadow roots.
fn event_element(ev: &JsValue) -> Option<Element> {
    let path = crate::dom::call(ev, "composedPath", &[]).ok()?;
    let first = Reflect::get_u32(&path, 0).ok().filter(|v| v.is_object());
    first.or_else(|| Some(dom::prop(ev, "target")))?.dyn_into::<Element>().ok()
}

fn is_pending(el: &Element) -> bool {
    REC.with(|r| r.borrow().as_ref().and_then(|rec| rec.pending.as_ref()).is_some_and(|p| p == el))
}

fn is_text_field(el: &Element) -> bool {
    match el.local_name().as_str() {
        "textarea" => true,
        "input" => TEXT_TYPES.contains(&roles::input_type(el).as_str()),
        _ => dom::prop_bool(el, "isContentEditable"),
    }
}

/// Enter submits (or activates) here: not a newline in a textarea or an
/// editable region.
fn submits_on_enter(el: &Element) -> bool {
    el.local_name() != "textarea" && !dom::prop_bool(el, "isContentEditable")
}

/// What a click on `el` is a click on; `None` for fields, labels and
/// checkboxes (their own events tell what happened) and plain text.
fn clickable(el: &Element) -> Option<Element> {
    let tag = el.local_name();
    if matches!(tag.as_str(), "select" | "textarea" | "option" | "label") || is_text_field(el) {
        return None;
    }
    if tag == "input" && matches!(roles::input_type(el).as_str(), "checkbox" | "radio" | "file" | "range" | "color") {
        return None;
    }
    if el.closest("label").ok().flatten().is_some() && el.closest(CLICKABLE).ok().flatten().is_none() {
        return None;
    }
    el.closest(CLICKABLE).ok().flatten()
}

/// Reports the pending fill, if any.
fn flush() {
    let Some((el, keep_text)) = REC.with(|r| {
        let mut r = r.borrow_mut();
        let rec = r.as_mut()?;
        Some((rec.pending.take()?, rec.keep_text))
    }) else {
        return;
    };
    let (target, autocomplete, sensitive) = descriptor(&el);
    // The value is read only when it is kept, and never from a sensitive field.
    let text = (keep_text && !sensitive).then(|| {
        let mut v = field_value(&el);
        truncate_chars(&mut v, shared::flow::MAX_VALUE_CHARS);
        Typed(v)
    });
    send(RecordedStep {
        action: RecordedAction::Fill { text },
        target: Some(target),
        autocomplete,
        sensitive,
        url: page_url(),
        title: page_title(),
    });
}

fn report(el: &Element, action: RecordedAction) {
    let (target, autocomplete, sensitive) = descriptor(el);
    send(RecordedStep { action, target: Some(target), autocomplete, sensitive, url: page_url(), title: page_title() });
}

fn field_value(el: &Element) -> String {
    if dom::prop_bool(el, "isContentEditable") && !matches!(el.local_name().as_str(), "input" | "textarea") {
        return el.text_content().unwrap_or_default();
    }
    dom::prop(el, "value").as_string().unwrap_or_default()
}

/// The chosen option's label and `value` attribute, clamped.
fn selected_option(el: &Element) -> (String, String) {
    let select = el.dyn_ref::<web_sys::HtmlSelectElement>();
    let mut label = select.map(name::selected_text).unwrap_or_default();
    let mut option = select.map(web_sys::HtmlSelectElement::value).unwrap_or_default();
    truncate_chars(&mut label, shared::flow::MAX_VALUE_CHARS);
    truncate_chars(&mut option, shared::flow::MAX_VALUE_CHARS);
    (label, option)
}

/// The element's descriptor, its `autocomplete`, and whether it is a
/// sensitive field.
fn descriptor(el: &Element) -> (Descriptor, String, bool) {
    let tag = el.local_name();
    let attrs = crate::dom::Attrs::of(el);
    let role = roles::role_of(el, &tag, attrs).unwrap_or("").to_string();
    let name = web_sys::window()
        .and_then(|w| w.document())
        .map(|doc| {
            let pseudo = Pseudo::scan(&doc);
            name::accessible_name(&NameEnv { pseudo: &pseudo }, el, &tag, &role, attrs)
        })
        .unwrap_or_default();
    let input_type = match tag.as_str() {
        "input" => roles::input_type(el),
        "button" => attr(el, "type").map(|t| t.trim().to_ascii_lowercase()).unwrap_or_else(|| "submit".into()),
        _ => String::new(),
    };
    let mut d = Descriptor {
        role,
        name,
        label: label_text(el),
        placeholder: attr(el, "placeholder").unwrap_or_default(),
        tag,
        input_type,
        locators: locators(el),
    };
    for (s, max) in [
        (&mut d.name, MAX_NAME_CHARS),
        (&mut d.label, MAX_NAME_CHARS),
        (&mut d.placeholder, MAX_NAME_CHARS),
        (&mut d.role, MAX_SHORT_CHARS),
        (&mut d.tag, MAX_SHORT_CHARS),
        (&mut d.input_type, MAX_SHORT_CHARS),
    ] {
        *s = dom::collapse(s, max * 4);
        truncate_chars(s, max);
    }
    let mut autocomplete = attr(el, "autocomplete").unwrap_or_default();
    truncate_chars(&mut autocomplete, MAX_SHORT_CHARS);
    let sensitive = classify_field(&FieldFacts {
        input_type: &d.input_type,
        autocomplete: &autocomplete,
        name: &attr(el, "name").unwrap_or_default(),
        id: &el.id(),
        label: &d.label,
        placeholder: &d.placeholder,
    })
    .is_some()
        || shared::record::descriptor_sensitivity(&d).is_some();
    (d, autocomplete, sensitive)
}

/// The text of the field's `<label>`s.
fn label_text(el: &Element) -> String {
    let labels = dom::prop(el, "labels");
    let n = dom::prop_f64(&labels, "length").unwrap_or(0.0) as u32;
    let mut parts = Vec::new();
    for i in 0..n.min(4) {
        if let Some(l) = Reflect::get_u32(&labels, i).ok().and_then(|l| l.dyn_into::<Element>().ok()) {
            // A label wrapping its control: the control's own content (a
            // select's options, a textarea's text) is not the label.
            let Some(copy) = l.clone_node_with_deep(true).ok().and_then(|n| n.dyn_into::<Element>().ok()) else {
                continue;
            };
            if let Ok(inner) = copy.query_selector_all("select, textarea, input, button, option") {
                for j in 0..inner.length() {
                    if let Some(n) = inner.item(j)
                        && let Some(parent) = n.parent_node()
                    {
                        let _ = parent.remove_child(&n);
                    }
                }
            }
            let t = dom::collapse(&copy.text_content().unwrap_or_default(), MAX_NAME_CHARS * 4);
            if !t.is_empty() {
                parts.push(t);
            }
        }
    }
    parts.join(" ")
}

/// Id, `name`, test ids, `aria-label`, then the CSS path; each at most
/// `MAX_LOCATOR_CHARS` (longer ones are left out), `MAX_LOCATORS` in all.
fn locators(el: &Element) -> Vec<Locator> {
    let fits = |s: &str| !s.trim().is_empty() && s.chars().count() <= MAX_LOCATOR_CHARS;
    let mut out = Vec::new();
    let id = el.id();
    if fits(&id) {
        out.push(Locator::Id(id));
    }
    if let Some(n) = attr(el, "name").filter(|n| fits(n)) {
        out.push(Locator::Name(n));
    }
    for &a in TEST_ID_ATTRS {
        if has(el, a)
            && let Some(v) = attr(el, a).filter(|v| fits(v))
        {
            out.push(Locator::TestId { attr: a.to_string(), value: v });
        }
    }
    if let Some(v) = attr(el, "aria-label").filter(|v| fits(v)) {
        out.push(Locator::AriaLabel(v));
    }
    out.truncate(MAX_LOCATORS - 1);
    if let Some(path) = css_path(el).filter(|p| fits(p)) {
        out.push(Locator::Css(path));
    }
    out
}

/// `#shop > form:nth-of-type(1) > input:nth-of-type(2)`: from the nearest
/// ancestor with a plain id (or `html`), `tag:nth-of-type(n)` per step.
/// Inside a shadow tree the path starts at its root.
fn css_path(el: &Element) -> Option<String> {
    let plain_id = |id: &str| {
        id.starts_with(|c: char| c.is_ascii_alphabetic())
            && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    let mut parts = Vec::new();
    let mut cur = el.clone();
    for _ in 0..MAX_PATH_DEPTH {
        let tag = cur.local_name();
        if !tag.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
            return None;
        }
        let id = cur.id();
        if plain_id(&id) {
            parts.push(format!("#{id}"));
            break;
        }
        if tag == "html" {
            parts.push(tag);
            break;
        }
        let mut n = 1;
        let mut sib = cur.previous_element_sibling();
        let mut seen = 0;
        while let Some(s) = sib {
            seen += 1;
            if seen > MAX_SIBLINGS {
                return None;
            }
            if s.local_name() == tag {
                n += 1;
            }
            sib = s.previous_element_sibling();
        }
        parts.push(format!("{tag}:nth-of-type({n})"));
        match cur.parent_element() {
            Some(p) => cur = p,
            None => break,
        }
    }
    parts.reverse();
    Some(parts.join(" > "))
}

fn page_url() -> String {
    let href = web_sys::window().and_then(|w| w.location().href().ok()).unwrap_or_default();
    shared::flow::step_url(&href)
}

fn page_title() -> String {
    let mut t = web_sys::window().and_then(|w| w.document()).map(|d| d.title()).unwrap_or_default();
    t = dom::collapse(&t, MAX_NAME_CHARS * 4);
    truncate_chars(&mut t, MAX_NAME_CHARS);
    t
}

thread_local! {
    /// The way to the worker (`chrome.runtime.sendMessage`), handed over by
    /// the loader: in a Firefox content script `chrome` is the loader's
    /// binding, not a property of the global object this module sees.
    static REPORT: std::cell::RefCell<Option<Function>> = const { std::cell::RefCell::new(None) };
}

/// The loader's `(message) => chrome.runtime.sendMessage(message)`.
pub fn set_report(send: Function) {
    REPORT.with(|r| *r.borrow_mut() = Some(send));
}

/// Sends one report to the service worker, unless this second's budget
/// is spent.
fn send(step: RecordedStep) {
    let now = js_sys::Date::now();
    let allowed = REC.with(|r| {
        let mut r = r.borrow_mut();
        let Some(rec) = r.as_mut() else { return false };
        if now - rec.window_start >= 1000.0 {
            rec.window_start = now;
            rec.sent = 0;
        }
        rec.sent += 1;
        rec.sent <= MAX_EVENTS_PER_SEC
    });
    if !allowed {
        return;
    }
    let Ok(json) = serde_json::to_string(&serde_json::json!({ "type": "recorded", "step": step })) else { return };
    let Ok(msg) = js_sys::JSON::parse(&json) else { return };
    let Some(report) = REPORT.with(|r| r.borrow().clone()) else { return };
    // The worker's answer does not matter; a closed worker port must not
    // become an unhandled rejection in the page's console.
    if let Ok(p) = report.call1(&JsValue::UNDEFINED, &msg)
        && p.is_object()
    {
        NOOP.with(|noop| {
            let _ = crate::dom::call(&p, "catch", std::slice::from_ref(noop));
        });
    }
}
