//! DOM helpers for the extension's own pages (popup, approval window).
//! Everything is built with `createElement` + `textContent`: text from
//! pages, the bridge or the agent can never become markup.

use js_sys::{Array, Function, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{Document, Element};

use crate::chrome;
use crate::messages::{HandBack, Message, PageState, PendingView};
use crate::util::{from_js, get, to_js};
use shared::handoff::{Trigger, Waiting};

pub fn document() -> Option<Document> {
    web_sys::window().and_then(|w| w.document())
}

pub fn by_id(id: &str) -> Option<Element> {
    document()?.get_element_by_id(id)
}

/// `<tag class=…>text</tag>`.
pub fn el(tag: &str, class: &str, text: Option<&str>) -> Element {
    let doc = document().expect("a page has a document");
    let e = doc.create_element(tag).expect("createElement");
    if !class.is_empty() {
        e.set_class_name(class);
    }
    if let Some(t) = text {
        e.set_text_content(Some(t));
    }
    e
}

/// `<tag class=…>` holding a line of Chaperone's words around quoted
/// strings from pages and agents: bidi controls removed from all of it
/// (`shared::text::strip_bidi`) and each quoted string in a `<bdi>` of its
/// own (`shared::text::quoted_spans`), so no string can move the quotes
/// around it or draw its words outside them.
pub fn line(tag: &str, class: &str, text: &str) -> Element {
    let e = el(tag, class, None);
    let text = shared::text::strip_bidi(text);
    for span in shared::text::quoted_spans(&text) {
        match span {
            shared::text::Span::Ours(t) => {
                let _ = e.insert_adjacent_text("beforeend", t);
            }
            shared::text::Span::Quoted(t) => {
                e.append_child(&el("bdi", "", Some(&t))).ok();
            }
        }
    }
    e
}

/// `<tag class=…>label <bdi>value</bdi></tag>`: a string from a page, an
/// agent or a client (a URL, a client's name) after Chaperone's label, in
/// an isolate, bidi controls removed.
pub fn labelled(tag: &str, class: &str, label: &str, value: &str) -> Element {
    let e = el(tag, class, Some(label));
    e.append_child(&el("bdi", "", Some(&shared::text::strip_bidi(value)))).ok();
    e
}

pub fn clear(e: &Element) {
    e.set_text_content(None);
}

pub fn set_text(id: &str, text: &str) {
    if let Some(e) = by_id(id) {
        e.set_text_content(Some(text));
    }
}

pub fn set_hidden(id: &str, hidden: bool) {
    if let Some(e) = by_id(id) {
        if hidden {
            let _ = e.set_attribute("hidden", "");
        } else {
            let _ = e.remove_attribute("hidden");
        }
    }
}

/// Adds a listener that lives as long as the page.
pub fn on(target: &JsValue, event: &str, f: impl FnMut(JsValue) + 'static) {
    let cb = Closure::<dyn FnMut(JsValue)>::new(f).into_js_value();
    if let Ok(add) = js_sys::Reflect::get(target, &JsValue::from_str("addEventListener"))
        && let Ok(add) = add.dyn_into::<Function>()
    {
        let _ = add.call2(target, &JsValue::from_str(event), &cb);
    }
}

/// Sends one message to the service worker; its reply, or why it could
/// not be sent.
pub async fn send_message(msg: &Message) -> Result<JsValue, JsValue> {
    chrome::runtime_send_message(&to_js(msg)).await
}

/// Sends one message to the service worker; the reply or `undefined`.
pub async fn send(msg: &Message) -> JsValue {
    match send_message(msg).await {
        Ok(v) => v,
        Err(e) => {
            web_sys::console::warn_1(&e);
            JsValue::UNDEFINED
        }
    }
}

/// The gate's state (`Message::State`), when the worker sends one.
pub async fn fetch_state() -> Option<PageState> {
    from_js(&send(&Message::State {}).await).ok()
}

/// Approve or deny one request.
pub fn decide(request: u64, approve: bool) {
    wasm_bindgen_futures::spawn_local(async move {
        send(&Message::Decide { request, approve }).await;
    });
}

/// One pending request with its Approve / Deny buttons
/// (`#approve-<id>`, `#deny-<id>`, classes `approve` / `deny`) and, for a
/// web page, "Never on this site" (`#never-<id>`, class `never`).
pub fn request_card(p: &PendingView) -> Element {
    let card = el("section", &format!("request risk-{}", p.risk), None);
    card.set_id(&format!("request-{}", p.request));
    let _ = card.set_attribute("data-request", &p.request.to_string());
    card.append_child(&line("h2", "summary", &p.summary)).ok();
    if let Some(a) = &p.agent {
        card.append_child(&labelled("p", "agent", "Asked by: ", &a.client)).ok();
    }
    card.append_child(&el("p", "risk", Some(&format!("Risk: {}", p.risk)))).ok();
    if !p.reasons.is_empty() {
        let ul = el("ul", "reasons", None);
        for r in &p.reasons {
            ul.append_child(&line("li", "", r)).ok();
        }
        card.append_child(&ul).ok();
    }
    // A question about no page (flow_delete) has no element to name.
    if !(p.url.is_empty() && p.role.is_empty() && p.name.is_empty()) {
        let element = if p.role.is_empty() && p.name.is_empty() {
            "Element: (the focused element or the page)".to_string()
        } else {
            format!("Element: {} \u{201c}{}\u{201d}", p.role, p.name)
        };
        card.append_child(&line("p", "element", &element)).ok();
    }
    if !p.shows.is_empty() {
        card.append_child(&line("p", "shows", &format!("Shows on the page: \u{201c}{}\u{201d}", p.shows))).ok();
    }
    if !p.goes_to.is_empty() {
        card.append_child(&labelled("p", "goes-to", "Goes to: ", &p.goes_to)).ok();
    }
    if let Some(c) = &p.changed {
        card.append_child(&changed_target(c)).ok();
    }
    if !p.url.is_empty() {
        card.append_child(&labelled("p", "url", "Page: ", &p.url)).ok();
    }
    let secs = ((p.deadline - js_sys::Date::now()) / 1000.0).max(0.0).round();
    card.append_child(&el("p", "deadline", Some(&format!("Denied automatically in {secs} s without an answer")))).ok();
    let buttons = el("div", "buttons", None);
    let approve = el("button", "approve", Some("Approve"));
    approve.set_id(&format!("approve-{}", p.request));
    let deny = el("button", "deny", Some("Deny"));
    deny.set_id(&format!("deny-{}", p.request));
    let id = p.request;
    on(&approve, "click", move |_| decide(id, true));
    on(&deny, "click", move |_| decide(id, false));
    buttons.append_child(&approve).ok();
    buttons.append_child(&deny).ok();
    // "Never on this site": Never for the page's origin, and Deny.
    if shared::url::Origin::of(&p.url).is_some() {
        let never = el("button", "never", Some("Never on this site"));
        never.set_id(&format!("never-{}", p.request));
        on(&never, "click", move |_| {
            wasm_bindgen_futures::spawn_local(async move {
                send(&Message::NeverHere { request: id }).await;
            });
        });
        buttons.append_child(&never).ok();
    }
    card.append_child(&buttons).ok();
    card
}

/// A flow step's changed target: what the person recorded beside what the
/// page has now (`#changed-<id>`, columns `.recorded` and `.live`).
fn changed_target(c: &shared::replay::ChangedTarget) -> Element {
    let block = el("div", "changed", None);
    block
        .append_child(&el(
            "p",
            "changed-why",
            Some("The element found now may not be the recorded one (another role or name, or its locators disagree)."),
        ))
        .ok();
    let columns = el("div", "columns", None);
    for (class, title, t, extra) in [
        ("recorded", "Recorded", &c.recorded, None),
        ("live", "Now on the page", &c.live, Some(format!("found by {}", c.via))),
    ] {
        let col = el("div", class, None);
        col.append_child(&el("h3", "", Some(title))).ok();
        let role = if t.role.is_empty() { "element" } else { t.role.as_str() };
        col.append_child(&line("p", "target", &format!("{role} \u{201c}{}\u{201d}", t.name))).ok();
        if let Some(x) = extra {
            col.append_child(&el("p", "via", Some(&x))).ok();
        }
        columns.append_child(&col).ok();
    }
    block.append_child(&columns).ok();
    block
}

/// "1 min 20 s".
/// A hand-off card's "Waiting for …" line at `now_ms`.
pub fn waiting_for(w: &Waiting, now_ms: f64) -> String {
    format!("Waiting for {}", duration(now_ms - w.since_ms as f64))
}

pub fn duration(ms: f64) -> String {
    let secs = (ms / 1000.0).max(0.0) as u64;
    if secs < 60 { format!("{secs} s") } else { format!("{} min {} s", secs / 60, secs % 60) }
}

/// One tab waiting for the person, with its Done and Abort buttons
/// (`#handoff-done-<id>`, `#handoff-abort-<id>`). The agent's reason is
/// shown in quotes, as its words.
pub fn handoff_card(w: &Waiting, now_ms: f64) -> Element {
    let card = el("section", "handoff", None);
    card.set_id(&format!("handoff-{}", w.id));
    let _ = card.set_attribute("data-handoff", &w.id.to_string());
    card.append_child(&el("h2", "need", Some(w.need()))).ok();
    card.append_child(&el("p", "site", Some(&format!("Site: {}", w.origin)))).ok();
    if !w.began_origin.is_empty() && w.began_origin != w.origin {
        card.append_child(&el("p", "began", Some(&format!("It began on {}", w.began_origin)))).ok();
    }
    if let Some(r) = &w.reason {
        card.append_child(&line("p", "reason", &format!("The agent says: \u{201c}{r}\u{201d}"))).ok();
    }
    if let Some(c) = &w.challenge {
        card.append_child(&labelled("p", "evidence", "Seen on the page: ", &c.evidence)).ok();
    }
    let how = match w.trigger {
        Trigger::Detected => "The agent stopped here and waits for you.",
        Trigger::Agent => "The agent handed you this tab and waits.",
        Trigger::Person => "You took this tab over; the agent cannot use it until you press Done.",
    };
    card.append_child(&el("p", "how", Some(how))).ok();
    card.append_child(&el("p", "since", Some(&waiting_for(w, now_ms)))).ok();
    if let Some(n) = &w.note {
        card.append_child(&el("p", "note", Some(n))).ok();
    }
    card.append_child(&el(
        "p",
        "help",
        Some("Press Done when you have finished on the page; Abort tells the agent it cannot go on."),
    ))
    .ok();
    let buttons = el("div", "buttons", None);
    let done = el("button", "done", Some("Done"));
    done.set_id(&format!("handoff-done-{}", w.id));
    let abort = el("button", "abort", Some("Abort"));
    abort.set_id(&format!("handoff-abort-{}", w.id));
    let id = w.id;
    on(&done, "click", move |_| hand_back(id, HandBack::Done));
    on(&abort, "click", move |_| hand_back(id, HandBack::Abort));
    buttons.append_child(&done).ok();
    buttons.append_child(&abort).ok();
    card.append_child(&buttons).ok();
    card
}

fn hand_back(id: u64, answer: HandBack) {
    wasm_bindgen_futures::spawn_local(async move {
        send(&Message::HandBack { id, answer }).await;
    });
}

/// Re-renders a list of requests into `container`.
pub fn render_requests(container: &Element, pending: &[PendingView], empty: &str) {
    // Drawn again only when the list changed: the state is published again
    // for other reasons (history, chime, sessions), and a card replaced
    // under the person's pointer between press and release loses the click.
    let shown = serde_json::to_string(pending).unwrap_or_default();
    if container.get_attribute("data-shown").as_deref() == Some(shown.as_str()) {
        return;
    }
    let _ = container.set_attribute("data-shown", &shown);
    clear(container);
    if pending.is_empty() {
        container.append_child(&el("p", "empty", Some(empty))).ok();
    }
    for p in pending {
        container.append_child(&request_card(p)).ok();
    }
}

/// Listens for the worker's published state (`storage.session` key
/// `gate`, a `PageState`).
pub fn on_gate_change(mut f: impl FnMut(PageState) + 'static) {
    let cb = Closure::<dyn FnMut(JsValue, JsValue)>::new(move |changes: JsValue, area: JsValue| {
        if area.as_string().as_deref() == Some("session") {
            let gate = get(&changes, "gate");
            if !gate.is_undefined()
                && let Ok(state) = from_js::<PageState>(&get(&gate, "newValue"))
            {
                f(state);
            }
        }
    })
    .into_js_value();
    chrome::storage_on_changed_add_listener(cb.unchecked_ref());
}

/// A short WebAudio tone (no sound file). Browsers may refuse audio
/// before a user gesture; then it is silently skipped.
pub fn beep() {
    let global = js_sys::global();
    let Ok(ctor) = Reflect::get(&global, &JsValue::from_str("AudioContext")) else { return };
    let Ok(ctor) = ctor.dyn_into::<Function>() else { return };
    let Ok(ctx) = Reflect::construct(&ctor, &Array::new()) else { return };
    let call = |o: &JsValue, m: &str, args: &[JsValue]| -> Option<JsValue> {
        let f: Function = Reflect::get(o, &JsValue::from_str(m)).ok()?.dyn_into().ok()?;
        let a = Array::new();
        for x in args {
            a.push(x);
        }
        f.apply(o, &a).ok()
    };
    let Some(osc) = call(&ctx, "createOscillator", &[]) else { return };
    let Some(gain) = call(&ctx, "createGain", &[]) else { return };
    let now = Reflect::get(&ctx, &JsValue::from_str("currentTime")).ok().and_then(|v| v.as_f64()).unwrap_or(0.0);
    let _ = Reflect::set(&osc, &JsValue::from_str("type"), &JsValue::from_str("sine"));
    let freq = Reflect::get(&osc, &JsValue::from_str("frequency")).unwrap_or(JsValue::UNDEFINED);
    let _ = Reflect::set(&freq, &JsValue::from_str("value"), &JsValue::from_f64(880.0));
    let g = Reflect::get(&gain, &JsValue::from_str("gain")).unwrap_or(JsValue::UNDEFINED);
    let _ = Reflect::set(&g, &JsValue::from_str("value"), &JsValue::from_f64(0.15));
    let dest = Reflect::get(&ctx, &JsValue::from_str("destination")).unwrap_or(JsValue::UNDEFINED);
    call(&osc, "connect", std::slice::from_ref(&gain));
    call(&gain, "connect", &[dest]);
    call(&osc, "start", &[JsValue::from_f64(now)]);
    call(&osc, "stop", &[JsValue::from_f64(now + 0.18)]);
}
