//! Carrying out one approved action with real DOM operations (focus, the
//! native value setter with input/change events, `click()`, option
//! selection, keyboard events, scrolling, mouse-over events) and telling
//! what changed. Never evaluates a string.
//!
//! The service worker has already gated the action (STOP, policy, the
//! person's approval); this module re-checks that the element is the one
//! that was resolved (role, name, position) and refuses otherwise.

use std::cell::Cell;
use std::rc::Rc;

use js_sys::{Function, Object, Promise, Reflect};
use shared::action::{ActReport, Action, Effect, ResolvedElement, ScrollDirection};
use shared::audit::DecidedBy;
use shared::error::{ErrorCode, WireError};
use shared::input::IMPLICIT_SUBMISSION_TYPES;
use shared::protocol::{CommandResult, Outcome};
use shared::risk::RiskLevel;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Element, HtmlElement, MutationObserver, MutationObserverInit};

use crate::dom::{self, call};
use crate::events::{bubbling, dispatch, global_ctor, init};
use crate::facts::{self, form_of};

/// One wait of the settle loop, without using a core while it waits. In a
/// tab the person can see, a timer of `ms` (the page's own zero-delay
/// timers run before it). In a hidden tab, Chromium runs timers at most
/// once a second, so the wait is one posted message on a `MessageChannel`
/// of this world instead: the page's tasks already queued (a framework's
/// scheduler posts messages too) run first, and its timers would not have
/// run within `ms` anyway. The old wait posted messages to itself until `ms`
/// had passed, which kept the tab's thread busy the whole time: with eight
/// agents' tabs at once, that spinning was most of the machine.
#[wasm_bindgen(inline_js = r#"
export function chaperoneTick(ms) {
  return new Promise((resolve) => {
    if (document.visibilityState === 'visible') {
      setTimeout(resolve, ms);
      return;
    }
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(0);
  });
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = chaperoneTick)]
    fn tick(ms: f64) -> Promise;
}

/// How the outcome is watched for after acting: every tick the page's DOM
/// mutations since the previous tick are taken; the first tick without any
/// (the page has gone quiet) ends the wait, and so does a navigation or a
/// new dialog. Handlers that react to an action (frameworks included)
/// mostly run before it returns, in the microtasks after it, in a task
/// they post, or (in a visible tab) in a zero-delay timer — all before the
/// first tick ([`tick`]). A page that keeps changing is given at most
/// [`SETTLE_MAX_MS`].
const SETTLE_TICK_MS: f64 = 2.0;
const SETTLE_MAX_MS: f64 = 12.0;

/// `resolve`: facts of the element behind `target`, or of the focused
/// element when `target` is absent (NOT_FOUND when nothing is focused).
pub fn resolve(target: Option<&str>) -> Outcome {
    let el = match target {
        Some(t) => facts::element(t),
        None => facts::focused().ok_or_else(|| WireError::new(ErrorCode::NotFound, "no element has the focus")),
    };
    match el.and_then(|el| facts::resolve(&el)) {
        Ok(element) => Outcome::Ok(CommandResult::Element { element }),
        Err(e) => Outcome::Err(e),
    }
}

/// What the page looked like before acting.
struct Before {
    el: Option<Element>,
    value: Option<String>,
    dialogs: Vec<Element>,
    href: String,
    /// [`leaving`] when the action began.
    leaving_at: u64,
    /// Watches the document for changes while the outcome settles. Its
    /// records reach the callback at the next microtask checkpoint (which
    /// marks `dirty` and `changed`) or are taken by [`settle`] first.
    observer: Option<MutationObserver>,
    _observer_callback: Closure<dyn FnMut()>,
    /// A change since the last tick.
    dirty: Rc<Cell<bool>>,
    /// A change since the action ran.
    changed: Rc<Cell<bool>>,
}

/// `act`: a Promise of the JSON `Outcome` (an `Acted` report whose risk
/// and decision fields the worker fills in).
pub fn act(target: Option<String>, action: Action, verify: Option<ResolvedElement>) -> Promise {
    let before = match start(target.as_deref(), &action, verify.as_ref()) {
        Ok(b) => b,
        Err(e) => return Promise::resolve(&crate::dom::outcome_json(&Outcome::Err(e))),
    };
    wasm_bindgen_futures::future_to_promise(async move {
        settle(&before).await;
        Ok(crate::dom::outcome_json(&finish(before)))
    })
}

/// Waits until the outcome is clear: a navigation or a new dialog, a tick
/// without DOM changes, or [`SETTLE_MAX_MS`].
async fn settle(b: &Before) {
    let started = js_sys::Date::now();
    while !already_settled(b) {
        let _ = JsFuture::from(tick(SETTLE_TICK_MS)).await;
        let taken = b.observer.as_ref().is_some_and(|o| o.take_records().length() > 0);
        let quiet = !b.dirty.replace(false) && !taken;
        if !quiet {
            b.changed.set(true);
        }
        if quiet || js_sys::Date::now() - started >= SETTLE_MAX_MS {
            return;
        }
    }
}

/// Whether the outcome is clear right after acting: a navigation has begun
/// (the page is about to go, or the URL changed) or a dialog opened.
fn already_settled(b: &Before) -> bool {
    let href = web_sys::window().and_then(|w| w.location().href().ok()).unwrap_or_default();
    left(b) || href != b.href || open_dialogs().iter().any(|d| !b.dialogs.contains(d))
}

fn start(target: Option<&str>, action: &Action, verify: Option<&ResolvedElement>) -> Result<Before, WireError> {
    // The approval (if any) is over: its outline goes before anything runs.
    crate::highlight::hide();
    let el = match target {
        Some(t) => Some(facts::element(t)?),
        None => facts::focused(),
    };
    if let (Some(el), Some(want)) = (el.as_ref(), verify) {
        // The worker classified (and the person approved) exactly these
        // facts: anything different now — another element, a new name or
        // form, another URL — and nothing is done.
        let live = facts::resolve(el)?;
        if live != *want {
            let fp = &live.fingerprint;
            return Err(WireError::new(
                ErrorCode::StaleRef,
                format!(
                    "{} changed while the action was being decided (now {} \"{}\"); take a new browser_snapshot",
                    target.unwrap_or("the focused element"),
                    fp.role,
                    fp.name
                ),
            ));
        }
        // The worker's gate refused this already (`shared::gate::fields`);
        // the text arrives here as a `Type` even from a secret, so only the
        // never-filled kinds are checked again, on the live element.
        if matches!(action, Action::Type { .. } | Action::SelectOption { .. })
            && shared::gate::field_kind(Some(&live)).is_some_and(shared::sensitive::SensitiveKind::agent_may_never_fill)
        {
            return Err(WireError::new(
                ErrorCode::PermissionDenied,
                "Chaperone never fills password, card or bank fields: the person enters those themselves",
            ));
        }
        // Text typed into a sensitive field is a stored secret (a literal
        // there is refused before): the field is marked for the rest of
        // the document and the page's requests are withheld from now on.
        if matches!(action, Action::Type { .. }) && shared::gate::field_kind(Some(&live)).is_some() {
            crate::fills::secret_typed(el);
        }
    } else if target.is_some() {
        return Err(WireError::new(
            ErrorCode::InvalidRequest,
            "an action on a ref needs the facts it was classified on",
        ));
    } else if el.is_some() {
        return Err(WireError::new(
            ErrorCode::StaleRef,
            "the focus moved while the action was being decided; try again",
        ));
    } else if verify.is_some() {
        return Err(WireError::new(
            ErrorCode::StaleRef,
            "the element that was classified has lost the focus; try again",
        ));
    }
    if matches!(
        action,
        Action::Click | Action::Type { .. } | Action::SelectOption { .. } | Action::Hover | Action::UploadFiles { .. }
    ) && el.is_none()
    {
        return Err(WireError::new(ErrorCode::InvalidRequest, "this action needs a ref"));
    }

    let win = web_sys::window().ok_or_else(|| WireError::internal("no window"))?;
    let leaving_at = leaving();
    let dirty = Rc::new(Cell::new(false));
    let changed = Rc::new(Cell::new(false));
    let (d, c) = (dirty.clone(), changed.clone());
    let observer_callback = Closure::<dyn FnMut()>::new(move || {
        d.set(true);
        c.set(true);
    });
    let observer = MutationObserver::new(observer_callback.as_ref().unchecked_ref()).ok().filter(|o| {
        let opts = MutationObserverInit::new();
        opts.set_subtree(true);
        opts.set_child_list(true);
        opts.set_attributes(true);
        opts.set_character_data(true);
        win.document().is_some_and(|d| o.observe_with_options(&d, &opts).is_ok())
    });
    let before = Before {
        value: el.as_ref().map(value_state),
        dialogs: open_dialogs(),
        href: win.location().href().unwrap_or_default(),
        el: el.clone(),
        leaving_at,
        observer,
        _observer_callback: observer_callback,
        dirty,
        changed,
    };
    let r = perform(el.as_ref(), action);
    if r.is_err() {
        stop_watching(&before);
    }
    r.map(|()| before)
}

fn stop_watching(b: &Before) {
    if let Some(o) = &b.observer {
        o.disconnect();
    }
}

thread_local! {
    /// How many times this document has begun to leave: `beforeunload` or
    /// `pagehide` (the page is about to go), or the Navigation API's
    /// `navigate` (a link, form or script navigation the moment it starts,
    /// before the old page unloads; a download does not leave the page).
    static LEAVING: Rc<Cell<u64>> = {
        let count = Rc::new(Cell::new(0u64));
        if let Some(win) = web_sys::window() {
            let c = count.clone();
            let unload = Closure::<dyn FnMut(JsValue)>::new(move |_: JsValue| c.set(c.get() + 1)).into_js_value();
            for ev in ["beforeunload", "pagehide"] {
                let _ = call(&win, "addEventListener", &[JsValue::from_str(ev), unload.clone()]);
            }
            let c = count.clone();
            let navigate = Closure::<dyn FnMut(JsValue)>::new(move |ev: JsValue| {
                let download = Reflect::get(&ev, &JsValue::from_str("downloadRequest")).unwrap_or(JsValue::NULL);
                if download.is_null() || download.is_undefined() {
                    c.set(c.get() + 1);
                }
            })
            .into_js_value();
            let navigation = Reflect::get(&win, &JsValue::from_str("navigation")).unwrap_or(JsValue::UNDEFINED);
            if navigation.is_object() {
                let _ = call(&navigation, "addEventListener", &[JsValue::from_str("navigate"), navigate]);
            }
        }
        count
    };
}

/// [`LEAVING`]'s count, its listeners added on the document's first
/// action and kept: adding and removing a `beforeunload` or `pagehide`
/// listener tells the browser process each time (it tracks which pages
/// may be closed without running script), two messages an action.
fn leaving() -> u64 {
    LEAVING.with(|c| c.get())
}

/// Adds [`LEAVING`]'s listeners now (`crate::warm_after_reply`).
pub fn warm() {
    leaving();
}

/// The next task of this world (a zero-delay timer in a visible tab, a
/// posted message in a hidden one: [`tick`]).
pub async fn next_task() {
    let _ = JsFuture::from(tick(0.0)).await;
}

/// Whether the document began to leave since the action began.
fn left(b: &Before) -> bool {
    leaving() != b.leaving_at
}

fn finish(b: Before) -> Outcome {
    if b.observer.as_ref().is_some_and(|o| o.take_records().length() > 0) {
        b.changed.set(true);
    }
    stop_watching(&b);
    let href = web_sys::window().and_then(|w| w.location().href().ok()).unwrap_or_default();
    let mut changes = Vec::new();
    let new_dialogs: Vec<Element> = open_dialogs().into_iter().filter(|d| !b.dialogs.contains(d)).collect();
    for d in &new_dialogs {
        let name = dom::attr_nonempty(d, "aria-label")
            .or_else(|| d.query_selector("h1, h2, h3, h4, h5, h6").ok().flatten().and_then(|h| h.text_content()))
            .map(|n| dom::collapse(&n, 120))
            .unwrap_or_default();
        changes.push(if name.is_empty() { "dialog opened".to_string() } else { format!("dialog \"{name}\" opened") });
    }
    let effect = if left(&b) || href != b.href {
        Effect::Navigated
    } else if !new_dialogs.is_empty() {
        Effect::DialogOpened
    } else if let (Some(el), Some(v)) = (b.el.as_ref(), b.value.as_ref())
        && el.is_connected()
        && value_state(el) != *v
    {
        Effect::ValueChanged
    } else {
        if b.el.as_ref().is_some_and(|el| !el.is_connected()) {
            changes.push("the element is gone".to_string());
        }
        if b.changed.get() { Effect::PageChanged } else { Effect::None }
    };
    Outcome::Ok(CommandResult::Acted {
        report: ActReport {
            effect,
            url: href,
            risk: RiskLevel::Low,
            reasons: Vec::new(),
            decided_by: DecidedBy::Policy,
            changes,
        },
    })
}

/// A comparable picture of an element's value: field value, checked
/// state, selected options, or the text of an editor.
fn value_state(el: &Element) -> String {
    let v = dom::prop(el, "value").as_string().unwrap_or_default();
    let checked = dom::prop_bool(el, "checked");
    let aria = dom::attr(el, "aria-checked").unwrap_or_default();
    let text =
        if dom::prop_bool(el, "isContentEditable") { el.text_content().unwrap_or_default() } else { String::new() };
    let mut selected = String::new();
    if el.local_name() == "select" {
        let opts = dom::prop(el, "selectedOptions");
        let n = dom::prop_f64(&opts, "length").unwrap_or(0.0) as u32;
        for i in 0..n {
            if let Ok(o) = Reflect::get_u32(&opts, i) {
                selected.push_str(&dom::prop(&o, "value").as_string().unwrap_or_default());
                selected.push('\u{0}');
            }
        }
    }
    format!("{v}\u{1}{checked}\u{1}{aria}\u{1}{text}\u{1}{selected}")
}

/// Open dialogs: `<dialog open>`, `role=dialog|alertdialog`,
/// `aria-modal=true`, that are rendered.
fn open_dialogs() -> Vec<Element> {
    let Ok(doc) = facts::document() else { return Vec::new() };
    let Ok(list) = doc.query_selector_all(dom::OPEN_DIALOGS) else {
        return Vec::new();
    };
    let vis = dom::Visibility::new();
    let mut out = Vec::new();
    for i in 0..list.length().min(200) {
        if let Some(el) = list.item(i).and_then(|n| n.dyn_into::<Element>().ok())
            && vis.check(&el)
        {
            out.push(el);
        }
    }
    out
}

// ------------------------------------------------------------------ actions

fn perform(el: Option<&Element>, action: &Action) -> Result<(), WireError> {
    match action {
        Action::Click => click(el.expect("checked above")),
        Action::Type { text, submit } => {
            let el = el.expect("checked above");
            type_text(el, text)?;
            if *submit {
                press_key(Some(el), "Enter")?;
            }
            Ok(())
        }
        Action::SelectOption { values } => select(el.expect("checked above"), values),
        Action::PressKey { key } => press_key(el, key),
        Action::Scroll { direction } => scroll(el, *direction),
        Action::Hover => {
            hover(el.expect("checked above"));
            Ok(())
        }
        Action::CloseTab => Err(WireError::new(ErrorCode::InvalidRequest, "closing a tab is not a page action")),
        // The service worker turns it into a `Type` once the bridge released
        // the value; a name alone is never typed.
        Action::TypeSecret { .. } => {
            Err(WireError::new(ErrorCode::InvalidRequest, "a secret reaches the page only as its value"))
        }
        Action::UploadFiles { files, .. } => crate::upload::set_files(el.expect("checked above"), files),
        Action::KeepDownload { .. } => {
            Err(WireError::new(ErrorCode::InvalidRequest, "keeping a download is not a page action"))
        }
    }
}

fn scroll_into_view(el: &Element, block: &str) {
    let opts = init(&[("block", JsValue::from_str(block)), ("inline", JsValue::from_str("nearest"))]);
    let _ = call(el, "scrollIntoView", &[opts.into()]);
}

fn center(el: &Element) -> (f64, f64) {
    let r = el.get_bounding_client_rect();
    (r.x() + r.width() / 2.0, r.y() + r.height() / 2.0)
}

fn mouse_init(el: &Element, bubbles: bool) -> Object {
    let (x, y) = center(el);
    init(&[
        ("bubbles", JsValue::from_bool(bubbles)),
        ("cancelable", JsValue::from_bool(bubbles)),
        ("composed", JsValue::TRUE),
        ("clientX", JsValue::from_f64(x)),
        ("clientY", JsValue::from_f64(y)),
        ("button", JsValue::from_f64(0.0)),
        ("view", web_sys::window().map(JsValue::from).unwrap_or(JsValue::NULL)),
    ])
}

fn focus(el: &Element) {
    if let Some(h) = el.dyn_ref::<HtmlElement>() {
        let _ = h.focus();
    }
}

fn click(el: &Element) -> Result<(), WireError> {
    scroll_into_view(el, "nearest");
    let t: &JsValue = el.as_ref();
    dispatch(t, "PointerEvent", "pointerdown", &mouse_init(el, true));
    dispatch(t, "MouseEvent", "mousedown", &mouse_init(el, true));
    focus(el);
    dispatch(t, "PointerEvent", "pointerup", &mouse_init(el, true));
    dispatch(t, "MouseEvent", "mouseup", &mouse_init(el, true));
    if let Some(h) = el.dyn_ref::<HtmlElement>() {
        h.click();
    } else {
        dispatch(t, "MouseEvent", "click", &mouse_init(el, true));
    }
    Ok(())
}

fn hover(el: &Element) {
    scroll_into_view(el, "nearest");
    let t: &JsValue = el.as_ref();
    dispatch(t, "PointerEvent", "pointerover", &mouse_init(el, true));
    dispatch(t, "PointerEvent", "pointerenter", &mouse_init(el, false));
    dispatch(t, "MouseEvent", "mouseover", &mouse_init(el, true));
    dispatch(t, "MouseEvent", "mouseenter", &mouse_init(el, false));
    dispatch(t, "PointerEvent", "pointermove", &mouse_init(el, true));
    dispatch(t, "MouseEvent", "mousemove", &mouse_init(el, true));
}

/// The prototype's `value` setter (bypasses instance-level overrides the
/// way a person's typing does).
fn set_value(el: &Element, value: &str) -> Result<(), WireError> {
    let proto_name = match el.local_name().as_str() {
        "input" => "HTMLInputElement",
        "textarea" => "HTMLTextAreaElement",
        "select" => "HTMLSelectElement",
        _ => return Err(WireError::new(ErrorCode::InvalidRequest, "this element has no value to set")),
    };
    let ctor = global_ctor(proto_name)?;
    let proto = Reflect::get(&ctor, &JsValue::from_str("prototype")).unwrap_or(JsValue::UNDEFINED);
    let desc = Object::get_own_property_descriptor(proto.unchecked_ref::<Object>(), &JsValue::from_str("value"));
    let setter = dom::prop(&desc, "set").dyn_into::<Function>().map_err(|_| WireError::internal("no value setter"))?;
    setter.call1(el, &JsValue::from_str(value)).map_err(|_| WireError::internal("the value could not be set"))?;
    Ok(())
}

fn input_events(el: &Element, data: Option<&str>) {
    let i = bubbling();
    let _ = Reflect::set(&i, &JsValue::from_str("inputType"), &JsValue::from_str("insertText"));
    if let Some(d) = data {
        let _ = Reflect::set(&i, &JsValue::from_str("data"), &JsValue::from_str(d));
    }
    dispatch(el, "InputEvent", "input", &i);
}

fn change_event(el: &Element) {
    dispatch(el, "Event", "change", &init(&[("bubbles", JsValue::TRUE)]));
}

fn type_text(el: &Element, text: &str) -> Result<(), WireError> {
    scroll_into_view(el, "nearest");
    focus(el);
    if dom::prop_bool(el, "disabled") || dom::prop_bool(el, "readOnly") {
        return Err(WireError::new(ErrorCode::InvalidRequest, "the field is disabled or read-only"));
    }
    match el.local_name().as_str() {
        "input" | "textarea" => {
            set_value(el, text)?;
            input_events(el, Some(text));
            change_event(el);
            Ok(())
        }
        _ if dom::prop_bool(el, "isContentEditable") => {
            // Select the editor's content and insert, as typing over a selection does.
            let doc = facts::document()?;
            if let Ok(range) = call(&doc, "createRange", &[]) {
                let _ = call(&range, "selectNodeContents", &[el.clone().into()]);
                if let Some(win) = web_sys::window()
                    && let Ok(sel) = call(&win, "getSelection", &[])
                    && !sel.is_null()
                {
                    let _ = call(&sel, "removeAllRanges", &[]);
                    let _ = call(&sel, "addRange", &[range]);
                }
            }
            let inserted = call(&doc, "execCommand", &[JsValue::from_str("insertText"), JsValue::FALSE, text.into()])
                .map(|v| v.is_truthy())
                .unwrap_or(false);
            if !inserted {
                el.set_text_content(Some(text));
                input_events(el, Some(text));
            }
            Ok(())
        }
        _ => Err(WireError::new(ErrorCode::InvalidRequest, "this element does not take typed text")),
    }
}

fn select(el: &Element, values: &[String]) -> Result<(), WireError> {
    if el.local_name() != "select" {
        return Err(WireError::new(ErrorCode::InvalidRequest, "browser_select_option works on <select> elements"));
    }
    if dom::prop_bool(el, "disabled") {
        return Err(WireError::new(ErrorCode::InvalidRequest, "the list is disabled"));
    }
    let multiple = dom::prop_bool(el, "multiple");
    if !multiple && values.len() > 1 {
        return Err(WireError::new(ErrorCode::InvalidRequest, "this list takes one option"));
    }
    let opts = dom::prop(el, "options");
    let n = dom::prop_f64(&opts, "length").unwrap_or(0.0) as u32;
    // The options as they were classified (the same list, the same rule):
    // what is chosen is what the classifier read.
    let indexed = facts::options_indexed(el);
    let seen: Vec<shared::risk::OptionFacts> = indexed.iter().map(|(_, o)| o.clone()).collect();
    let mut chosen = Vec::new();
    for want in values {
        match shared::risk::chosen_option(&seen, want) {
            Some(i) => chosen.push(indexed[i].0),
            None => {
                let msg = shared::action::missing_option_message(&seen, want, Some(&crate::refs::ref_for(el)));
                return Err(WireError::new(ErrorCode::InvalidRequest, msg));
            }
        }
    }
    focus(el);
    for i in 0..n {
        let o = Reflect::get_u32(&opts, i).unwrap_or(JsValue::UNDEFINED);
        let on = chosen.contains(&i);
        if on || multiple {
            let _ = Reflect::set(&o, &JsValue::from_str("selected"), &JsValue::from_bool(on));
        }
    }
    input_events(el, None);
    change_event(el);
    Ok(())
}

/// `Shift+Enter` → ("Enter", shift, ctrl, alt, meta).
fn parse_combo(combo: &str) -> (String, bool, bool, bool, bool) {
    let parts: Vec<&str> = if combo == "+" { vec!["+"] } else { combo.split('+').collect() };
    let (key, mods) = parts.split_last().map(|(k, m)| (*k, m.to_vec())).unwrap_or(("", Vec::new()));
    let has = |names: &[&str]| mods.iter().any(|m| names.contains(&m.to_ascii_lowercase().as_str()));
    let key = match key {
        "Space" | "space" => " ".to_string(),
        "Esc" => "Escape".to_string(),
        k => k.to_string(),
    };
    (
        key,
        has(&["shift"]),
        has(&["ctrl", "control"]),
        has(&["alt", "option"]),
        has(&["meta", "cmd", "command", "super"]),
    )
}

fn key_code(key: &str) -> String {
    match key {
        " " => "Space".into(),
        k if k.chars().count() == 1 => {
            let c = k.chars().next().unwrap_or(' ');
            if c.is_ascii_alphabetic() {
                format!("Key{}", c.to_ascii_uppercase())
            } else if c.is_ascii_digit() {
                format!("Digit{c}")
            } else {
                String::new()
            }
        }
        k => k.to_string(),
    }
}

fn press_key(el: Option<&Element>, combo: &str) -> Result<(), WireError> {
    let (key, shift, ctrl, alt, meta) = parse_combo(combo);
    if key.is_empty() {
        return Err(WireError::new(ErrorCode::InvalidRequest, "no key given"));
    }
    let doc = facts::document()?;
    let target: Element = match el {
        Some(e) => {
            focus(e);
            e.clone()
        }
        None => facts::focused()
            .or_else(|| doc.body().map(Into::into))
            .ok_or_else(|| WireError::new(ErrorCode::NotFound, "no element to type into"))?,
    };
    let key_init = || {
        let o = bubbling();
        for (k, v) in [
            ("key", JsValue::from_str(&key)),
            ("code", JsValue::from_str(&key_code(&key))),
            ("shiftKey", JsValue::from_bool(shift)),
            ("ctrlKey", JsValue::from_bool(ctrl)),
            ("altKey", JsValue::from_bool(alt)),
            ("metaKey", JsValue::from_bool(meta)),
            ("view", web_sys::window().map(JsValue::from).unwrap_or(JsValue::NULL)),
        ] {
            let _ = Reflect::set(&o, &JsValue::from_str(k), &v);
        }
        o
    };
    let t: &JsValue = target.as_ref();
    let printable = key.chars().count() == 1;
    let not_cancelled = dispatch(t, "KeyboardEvent", "keydown", &key_init());
    let mut proceed = not_cancelled;
    if proceed && (printable || key == "Enter") && !ctrl && !meta && !alt {
        proceed = dispatch(t, "KeyboardEvent", "keypress", &key_init());
    }
    if proceed && target.is_connected() {
        default_action(&target, &key, shift, ctrl || meta || alt)?;
    }
    dispatch(t, "KeyboardEvent", "keyup", &key_init());
    Ok(())
}

/// What the browser would do for an uncancelled key press.
fn default_action(target: &Element, key: &str, shift: bool, other_modifier: bool) -> Result<(), WireError> {
    let tag = target.local_name();
    let editor = dom::prop_bool(target, "isContentEditable");
    if key == "Enter" && !other_modifier {
        if tag == "textarea" {
            let v = dom::prop(target, "value").as_string().unwrap_or_default();
            set_value(target, &format!("{v}\n"))?;
            input_events(target, None);
            return Ok(());
        }
        if editor {
            let doc = facts::document()?;
            let cmd = if shift { "insertLineBreak" } else { "insertParagraph" };
            let _ = call(&doc, "execCommand", &[JsValue::from_str(cmd), JsValue::FALSE, JsValue::from_str("")]);
            return Ok(());
        }
        if tag == "input" && !shift {
            implicit_submit(target);
            return Ok(());
        }
        if (tag == "button"
            || tag == "a"
            || dom::attr_is(target, "role", "button")
            || dom::attr_is(target, "role", "link"))
            && let Some(h) = target.dyn_ref::<HtmlElement>()
        {
            h.click();
        }
        return Ok(());
    }
    if key == " " && !other_modifier && (tag == "button" || dom::attr_is(target, "role", "button")) {
        if let Some(h) = target.dyn_ref::<HtmlElement>() {
            h.click();
        }
        return Ok(());
    }
    if key.chars().count() == 1 && !other_modifier {
        if matches!(tag.as_str(), "input" | "textarea") && !dom::prop_bool(target, "readOnly") {
            let v = dom::prop(target, "value").as_string().unwrap_or_default();
            set_value(target, &format!("{v}{key}"))?;
            input_events(target, Some(key));
        } else if editor {
            let doc = facts::document()?;
            let _ =
                call(&doc, "execCommand", &[JsValue::from_str("insertText"), JsValue::FALSE, JsValue::from_str(key)]);
        }
    }
    Ok(())
}

/// HTML implicit submission: the form's default button is clicked; with
/// no submit button, a form with a single field of
/// `shared::input::IMPLICIT_SUBMISSION_TYPES` is submitted.
fn implicit_submit(input: &Element) {
    let Some(form) = form_of(input) else { return };
    let elements = dom::prop(&form, "elements");
    let n = dom::prop_f64(&elements, "length").unwrap_or(0.0) as u32;
    let mut fields = 0;
    for i in 0..n {
        let Ok(e) = Reflect::get_u32(&elements, i).and_then(|e| e.dyn_into::<Element>()) else {
            continue;
        };
        let tag = e.local_name();
        let t = dom::attr(&e, "type").unwrap_or_default().to_ascii_lowercase();
        let submit =
            (tag == "button" && (t.is_empty() || t == "submit")) || (tag == "input" && (t == "submit" || t == "image"));
        if submit {
            // The default button: disabled means nothing happens.
            if !dom::prop_bool(&e, "disabled")
                && let Some(h) = e.dyn_ref::<HtmlElement>()
            {
                h.click();
            }
            return;
        }
        if tag == "input" && IMPLICIT_SUBMISSION_TYPES.contains(&t.as_str()) {
            fields += 1;
        }
    }
    if fields == 1 {
        let _ = call(&form, "requestSubmit", &[]);
    }
}

fn scroll(el: Option<&Element>, direction: ScrollDirection) -> Result<(), WireError> {
    let win = web_sys::window().ok_or_else(|| WireError::internal("no window"))?;
    let step = win.inner_height().ok().and_then(|h| h.as_f64()).unwrap_or(600.0) * 0.8;
    match (direction, el) {
        (ScrollDirection::IntoView, Some(el)) => scroll_into_view(el, "center"),
        (ScrollDirection::IntoView, None) => {
            return Err(WireError::new(ErrorCode::InvalidRequest, "scrolling into view needs a ref"));
        }
        (d, target) => {
            let dy = if d == ScrollDirection::Up { -step } else { step };
            let scroller: JsValue = match target {
                Some(e) if e.scroll_height() > e.client_height() + 1 => e.clone().into(),
                _ => win.into(),
            };
            let _ = call(&scroller, "scrollBy", &[JsValue::from_f64(0.0), JsValue::from_f64(dy)]);
        }
    }
    Ok(())
}
