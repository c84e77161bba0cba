//! The toolbar popup (docs/design.md, "Policy, approvals and audit"): connection state, the tabs
//! waiting for the person (a card each with Done and Abort; "Take over this tab"; the chime for a new
//! one), pending requests (approve/deny), STOP, Pause/Resume, the YOLO switch (only this page can
//! set it), the chime switch, "Record me" (asks the flow's name; "Also keep the text I type";
//! `crate::record`), the approval history (export, clear), and a
//! warning when the bridge refused a second browser — another one while
//! this browser was connected, or this one while another was
//! (`crate::refusals`; dismissed here). Above the hand-offs, the
//! connected agents (`crate::sessions`): each one's name, its tab count and
//! its approvals waiting, and "Let <client> use this tab" for the person's
//! tab in front. STOP stops every agent. "This site" (`crate::sites`): the
//! site of the web page in front of the window the person used last, its
//! access (**Agents may act**, **Read only**, **Never**; the current one
//! marked, with where it comes from) and the choice of another; a choice
//! looser than `config.toml`'s is disabled.

use std::cell::RefCell;

use js_sys::Array;
use shared::action::ControlState;
use shared::handoff::Waiting;
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use crate::chrome;
use crate::messages::{
    CONNECTION_KEY, ConnectionStatus, Control, HistoryEntry, Message, PageState, RECORD_KEY, RecordState, Settings,
};
use crate::refusals::{Notice, Refusals};
use crate::ui::{self, by_id, el, on, send, set_hidden, set_text};
use crate::util::{from_js, get};

type ChangedListener = Closure<dyn FnMut(JsValue, JsValue)>;

/// History rows shown in the popup (the export holds all of them).
const HISTORY_SHOWN: usize = 50;

thread_local! {
    /// The storage listener lives as long as the popup page.
    static ON_CHANGED: RefCell<Option<ChangedListener>> = const { RefCell::new(None) };
    static HANDOFFS: RefCell<Shown> = RefCell::new(Shown::default());
    /// The agents as last published, and the approvals waiting.
    static AGENTS: RefCell<(Vec<shared::sessions::SessionInfo>, Vec<crate::messages::PendingView>)> =
        const { RefCell::new((Vec::new(), Vec::new())) };
    /// Whether a recording is on (as last published by the worker).
    static RECORDING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

pub fn start() {
    let cb = ChangedListener::new(|changes: JsValue, area: JsValue| match area.as_string().as_deref() {
        Some("session") => {
            let handoffs = get(&changes, crate::handoff::KEY);
            if !handoffs.is_undefined() {
                render_handoffs(crate::handoff::parse(&get(&handoffs, "newValue")));
            }
            let agents = get(&changes, crate::sessions::KEY);
            if !agents.is_undefined() {
                render_agents(Some(crate::sessions::parse(&get(&agents, "newValue"))), None);
            }
            if !get(&changes, crate::sites::KEY).is_undefined() {
                spawn_local(refresh_site());
            }
            let record = get(&changes, RECORD_KEY);
            if !record.is_undefined() {
                render_record(&from_js(&get(&record, "newValue")).unwrap_or_default());
            }
            spawn_local(refresh());
        }
        Some("local") if !get(&changes, "history").is_undefined() => spawn_local(refresh_history()),
        _ => {}
    });
    chrome::storage_on_changed_add_listener(cb.as_ref().unchecked_ref());
    ON_CHANGED.with(|c| *c.borrow_mut() = Some(cb));
    wire_controls();
    wire_record();
    wire_site();
    ui::on_gate_change(|state| render_gate(&state));
    spawn_local(async {
        refresh().await;
        // Wakes the service worker (it reconnects if needed) and shows its view.
        match ui::send_message(&Message::Status {}).await {
            Ok(reply) => {
                if let Ok(status) = from_js::<ConnectionStatus>(&reply) {
                    render(&status);
                }
            }
            Err(e) => web_sys::console::warn_1(&e),
        }
        if let Some(state) = ui::fetch_state().await {
            render_gate(&state);
        }
        refresh_history().await;
        let items = chrome::storage_session_get(&JsValue::from_str(crate::handoff::KEY)).await;
        if let Ok(items) = items {
            render_handoffs(crate::handoff::parse(&get(&items, crate::handoff::KEY)));
        }
        render_agents(Some(crate::sessions::load().await), None);
        if let Ok(items) = chrome::storage_session_get(&JsValue::from_str(RECORD_KEY)).await {
            render_record(&from_js(&get(&items, RECORD_KEY)).unwrap_or_default());
        }
        refresh_site().await;
        focus_first();
        // The "waiting for" times move on; the tab in front may change.
        loop {
            crate::util::sleep(1000).await;
            refresh_site().await;
            let list = HANDOFFS.with(|h| h.borrow().list.clone());
            if !list.is_empty() {
                draw_handoffs(&list);
            }
        }
    });
}

thread_local! {
    /// The site "This site" shows now.
    static SITE: RefCell<crate::messages::SiteView> = RefCell::new(crate::messages::SiteView::default());
}

/// The buttons of "This site", loosest first.
const SITE_BUTTONS: [(&str, shared::policy::SiteAccess); 3] = [
    ("site-act", shared::policy::SiteAccess::Act),
    ("site-read", shared::policy::SiteAccess::Read),
    ("site-deny", shared::policy::SiteAccess::Deny),
];

fn wire_site() {
    for (id, access) in SITE_BUTTONS {
        let Some(b) = by_id(id) else { continue };
        on(&b, "click", move |_| {
            // The choice is for the site shown when the person clicked.
            let origin = SITE.with(|s| s.borrow().origin.clone());
            if origin.is_empty() {
                return;
            }
            spawn_local(async move {
                let reply = send(&Message::SetSiteAccess { origin, access }).await;
                if !get(&reply, "done").as_bool().unwrap_or(false) {
                    set_text("site-source", "Not changed: the bridge is not connected.");
                }
            });
        });
    }
}

async fn refresh_site() {
    let view: crate::messages::SiteView = from_js(&send(&Message::ThisSite {}).await).unwrap_or_default();
    render_site(&view);
    SITE.with(|s| *s.borrow_mut() = view);
}

fn render_site(view: &crate::messages::SiteView) {
    use shared::policy::AccessSource;
    let Some(access) = view.access.as_ref().filter(|_| !view.origin.is_empty()) else {
        set_text("site-origin", "No web page in front.");
        set_text("site-source", "");
        for (id, _) in SITE_BUTTONS {
            if let Some(b) = by_id(id) {
                let _ = b.set_attribute("disabled", "");
                let _ = b.set_attribute("aria-pressed", "false");
                b.set_class_name("");
            }
        }
        return;
    };
    if let Some(o) = by_id("site-origin") {
        ui::clear(&o);
        o.append_child(&ui::line("bdi", "origin", &view.origin)).ok();
    }
    for (id, a) in SITE_BUTTONS {
        let Some(b) = by_id(id) else { continue };
        let current = a == access.access;
        b.set_class_name(if current { "current" } else { "" });
        let _ = b.set_attribute("aria-pressed", if current { "true" } else { "false" });
        if a < access.config_floor {
            let _ = b.set_attribute("disabled", "");
            let _ = b.set_attribute("title", "config.toml sets something stricter; the popup can only tighten it");
        } else {
            let _ = b.remove_attribute("disabled");
            let _ = b.remove_attribute("title");
        }
    }
    let from = match access.source {
        AccessSource::Default => "the default".to_string(),
        AccessSource::Config => format!("config.toml ({})", access.rule),
        AccessSource::Popup => "your choice here in the popup".to_string(),
    };
    set_text("site-source", &format!("Now: {} — from {from}", access.access.label()));
}

/// The hand-offs shown, and the ids seen (for the chime).
#[derive(Default)]
struct Shown {
    list: Vec<Waiting>,
    seen: std::collections::HashSet<u64>,
    chime: bool,
}

/// Cards for the tabs waiting for the person; the chime for a new one.
fn render_handoffs(list: Vec<Waiting>) {
    let (new, chime) = HANDOFFS.with(|h| {
        let mut h = h.borrow_mut();
        let mut new = false;
        for w in &list {
            new |= h.seen.insert(w.id);
        }
        h.list = list.clone();
        (new, h.chime)
    });
    draw_handoffs(&list);
    if new && chime {
        ui::beep();
    }
}

/// Draws the cards again only when the list changed; otherwise (the
/// one-second tick) only their "Waiting for" lines move on. A card drawn
/// again would lose the person's click between press and release, and
/// the keyboard focus of a person who tabbed to Done.
fn draw_handoffs(list: &[Waiting]) {
    let Some(container) = by_id("handoffs") else { return };
    let now = js_sys::Date::now();
    let shown = serde_json::to_string(list).unwrap_or_default();
    if container.get_attribute("data-shown").as_deref() == Some(shown.as_str()) {
        for w in list {
            if let Ok(Some(since)) = container.query_selector(&format!("#handoff-{} .since", w.id)) {
                since.set_text_content(Some(&ui::waiting_for(w, now)));
            }
        }
        return;
    }
    let _ = container.set_attribute("data-shown", &shown);
    ui::clear(&container);
    if list.is_empty() {
        container.append_child(&el("p", "empty", Some("No tab is waiting for you."))).ok();
    }
    for w in list {
        container.append_child(&ui::handoff_card(w, now)).ok();
    }
}

fn control(action: Control) {
    spawn_local(async move {
        send(&Message::Control { action }).await;
    });
}

fn wire_controls() {
    let click = |id: &str, f: fn()| {
        if let Some(b) = by_id(id) {
            on(&b, "click", move |_| f());
        }
    };
    click("stop", || control(Control::Stop));
    click("pause", || control(Control::Pause));
    click("resume", || control(Control::Resume));
    click("yolo-off", || set_yolo(false));
    click("export", export_history);
    click("take-over", || {
        spawn_local(async {
            let reply = send(&Message::TakeOver {}).await;
            let taken = get(&reply, "done").as_bool().unwrap_or(false);
            set_text(
                "take-over-result",
                if taken { "" } else { "No web page to take over: open the tab you want first." },
            );
        })
    });
    click("dismiss-refusals", || {
        spawn_local(async {
            send(&Message::DismissRefusals {}).await;
        })
    });
    click("clear-history", || {
        spawn_local(async {
            send(&Message::ClearHistory {}).await;
            refresh_history().await;
        })
    });
    if let Some(b) = by_id("yolo") {
        let input = b.clone();
        on(&b, "change", move |_| set_yolo(get(&input, "checked").is_truthy()));
    }
    if let Some(b) = by_id("chime") {
        let input = b.clone();
        on(&b, "change", move |_| {
            let on = get(&input, "checked").is_truthy();
            spawn_local(async move {
                send(&Message::Settings { settings: Settings { chime: Some(on) } }).await;
            });
        });
    }
}

/// Once the popup has drawn its state, the keyboard goes to what the
/// person most likely opened it for: Done on the first tab waiting for
/// them, else the Record me switch while a recording runs (to end it),
/// else STOP. Nothing is pressed: Enter or Space is still the person's.
fn focus_first() {
    let Some(doc) = ui::document() else { return };
    let target = doc
        .query_selector("#handoffs button.done")
        .ok()
        .flatten()
        .or_else(|| RECORDING.with(std::cell::Cell::get).then(|| by_id("record")).flatten())
        .or_else(|| by_id("stop"));
    if let Some(t) = target.and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok()) {
        let _ = t.focus();
    }
}

/// "Record me": switching it on asks for the flow's name first; "Start
/// recording" sends it with "Also keep the text I type"; switching it off
/// ends the recording (the bridge saves the flow).
fn wire_record() {
    let Some(switch) = by_id("record") else { return };
    let input = switch.clone();
    on(&switch, "change", move |_| {
        let checked = get(&input, "checked").is_truthy();
        let recording = RECORDING.with(std::cell::Cell::get);
        if checked && !recording {
            set_hidden("record-start-row", false);
            set_text("record-status", "Name the flow, then press Start recording.");
            if let Some(name) = by_id("record-name").and_then(|n| n.dyn_into::<web_sys::HtmlElement>().ok()) {
                let _ = name.focus();
            }
        } else if !checked {
            set_hidden("record-start-row", true);
            if recording {
                spawn_local(async {
                    send(&Message::Record { on: false, name: String::new(), keep_text: false }).await;
                });
            } else {
                set_text("record-status", "");
            }
        }
    });
    if let Some(start) = by_id("record-start") {
        on(&start, "click", move |_| start_recording());
    }
    // Enter in the name field starts, as a form would.
    if let Some(name) = by_id("record-name") {
        on(&name, "keydown", move |e| {
            if get(&e, "key").as_string().as_deref() == Some("Enter") && get(&e, "isTrusted").is_truthy() {
                start_recording();
            }
        });
    }
}

fn start_recording() {
    let name = by_id("record-name").map(|n| get(&n, "value").as_string().unwrap_or_default()).unwrap_or_default();
    let keep_text = by_id("record-keep-text").is_some_and(|k| get(&k, "checked").is_truthy());
    spawn_local(async move {
        let reply = send(&Message::Record { on: true, name, keep_text }).await;
        if let Some(message) = get(&reply, "message").as_string() {
            set_text("record-status", &format!("Not recording: {message}"));
        }
    });
}

fn render_record(state: &RecordState) {
    RECORDING.with(|r| r.set(state.on));
    if let Some(b) = by_id("record") {
        let _ = js_sys::Reflect::set(&b, &JsValue::from_str("checked"), &JsValue::from_bool(state.on));
    }
    if let Some(k) = by_id("record-keep-text") {
        if state.on {
            let _ = js_sys::Reflect::set(&k, &JsValue::from_str("checked"), &JsValue::from_bool(state.keep_text));
            let _ = k.set_attribute("disabled", "");
        } else {
            let _ = k.remove_attribute("disabled");
        }
    }
    if state.on {
        set_hidden("record-start-row", true);
        // The next recording is named afresh.
        if let Some(n) = by_id("record-name") {
            let _ = js_sys::Reflect::set(&n, &JsValue::from_str("value"), &JsValue::from_str(""));
        }
        let text = if state.keep_text { "keeping the text you type" } else { "not keeping the text you type" };
        set_text(
            "record-status",
            &format!("Recording \u{201c}{}\u{201d}: {} steps so far, {text}.", state.name, state.steps),
        );
    } else if !state.name.is_empty() {
        set_text(
            "record-status",
            &format!("Saved \u{201c}{}\u{201d} ({} steps) to the bridge.", state.name, state.steps),
        );
    }
}

fn set_yolo(on: bool) {
    spawn_local(async move {
        send(&Message::Yolo { on }).await;
    });
}

fn render_gate(state: &PageState) {
    let ControlState { stopped, paused, yolo, .. } = state.control;
    let chime = state.chime;
    HANDOFFS.with(|h| h.borrow_mut().chime = chime);
    set_text(
        "control-state",
        if stopped {
            "STOPPED: every agent action is refused until you press Resume."
        } else if paused {
            "Paused: agent actions are refused until you press Resume."
        } else {
            "Running: risky actions wait for your approval."
        },
    );
    if let Some(e) = by_id("control-state") {
        e.set_class_name(if stopped {
            "control stopped"
        } else if paused {
            "control paused"
        } else {
            "control running"
        });
    }
    set_hidden("stop", stopped);
    set_hidden("pause", stopped || paused);
    set_hidden("resume", !(stopped || paused));
    set_hidden("yolo-banner", !yolo);
    if let Some(b) = by_id("yolo") {
        let _ = js_sys::Reflect::set(&b, &JsValue::from_str("checked"), &JsValue::from_bool(yolo));
    }
    if let Some(b) = by_id("chime") {
        let _ = js_sys::Reflect::set(&b, &JsValue::from_str("checked"), &JsValue::from_bool(chime));
    }
    if let Some(list) = by_id("pending") {
        ui::render_requests(&list, &state.pending, "No requests are waiting.");
    }
    render_agents(None, Some(state.pending.clone()));
}

/// The agents' list (either part may change alone).
fn render_agents(
    sessions: Option<Vec<shared::sessions::SessionInfo>>,
    pending: Option<Vec<crate::messages::PendingView>>,
) {
    let (sessions, pending) = AGENTS.with(|a| {
        let mut a = a.borrow_mut();
        if let Some(s) = sessions {
            a.0 = s;
        }
        if let Some(p) = pending {
            a.1 = p;
        }
        a.clone()
    });
    let Some(container) = by_id("agents") else { return };
    ui::clear(&container);
    if sessions.is_empty() {
        container.append_child(&el("p", "empty", Some("No agent is connected."))).ok();
    }
    for s in sessions {
        let waiting = pending.iter().filter(|p| p.agent.as_ref().is_some_and(|a| a.session == s.key)).count();
        let row = el("div", "agent", None);
        row.set_id(&format!("agent-{}", s.key.0));
        let tabs = match s.tabs.len() {
            1 => "1 tab".to_string(),
            n => format!("{n} tabs"),
        };
        let approvals = match waiting {
            0 => String::new(),
            1 => ", 1 approval waiting".to_string(),
            n => format!(", {n} approvals waiting"),
        };
        row.append_child(&ui::labelled("p", "agent-name", "", &s.client)).ok();
        row.append_child(&el("p", "agent-tabs", Some(&format!("{tabs}{approvals}")))).ok();
        let give = el("button", "give", Some(&format!("Let {} use this tab", s.client)));
        give.set_id(&format!("give-{}", s.key.0));
        let (session, client) = (s.key, s.client.clone());
        on(&give, "click", move |_| {
            let client = client.clone();
            spawn_local(async move {
                let reply = send(&Message::GiveTab { session }).await;
                let given = get(&reply, "done").as_bool().unwrap_or(false);
                set_text(
                    "give-result",
                    &if given {
                        format!("{client} may now use this tab.")
                    } else {
                        "Not given: open your own web page first (a tab an agent already uses cannot be given)."
                            .to_string()
                    },
                );
            })
        });
        row.append_child(&give).ok();
        container.append_child(&row).ok();
    }
}

async fn load_history() -> Vec<HistoryEntry> {
    let items = chrome::storage_local_get(&Array::of1(&JsValue::from_str("history")).into()).await;
    items.ok().and_then(|i| from_js(&get(&i, "history")).ok()).unwrap_or_default()
}

async fn refresh_history() {
    let history = load_history().await;
    let Some(table) = by_id("history-rows") else { return };
    ui::clear(&table);
    set_text("history-count", &format!("{} entries", history.len()));
    for h in history.iter().rev().take(HISTORY_SHOWN) {
        let tr = el("tr", "history-entry", None);
        let time = h.time.get(11..19).unwrap_or(&h.time).to_string();
        for (class, text) in
            [("time", time.as_str()), ("summary", &h.summary), ("risk", &h.risk), ("decision", &h.decision)]
        {
            tr.append_child(&ui::line("td", class, text)).ok();
        }
        table.append_child(&tr).ok();
    }
}

/// Puts the whole history as JSON into the textarea and offers it as a
/// download.
fn export_history() {
    spawn_local(async {
        let history = load_history().await;
        let json = serde_json::to_string_pretty(&history).unwrap_or_else(|_| "[]".into());
        if let Some(t) = by_id("history-json") {
            let _ = js_sys::Reflect::set(&t, &JsValue::from_str("value"), &JsValue::from_str(&json));
            let _ = t.remove_attribute("hidden");
        }
        let parts = Array::of1(&JsValue::from_str(&json));
        let opts = web_sys::BlobPropertyBag::new();
        opts.set_type("application/json");
        let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) else { return };
        let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else { return };
        let a = el("a", "", None);
        let _ = a.set_attribute("href", &url);
        let _ = a.set_attribute("download", "chaperone-approvals.json");
        if let Some(h) = a.dyn_ref::<web_sys::HtmlElement>() {
            h.click();
        }
    });
}

async fn refresh() {
    let keys = Array::of2(&JsValue::from_str(CONNECTION_KEY), &JsValue::from_str(crate::refusals::KEY));
    match chrome::storage_session_get(&keys).await {
        Ok(items) => {
            // Nothing published yet reads as "starting".
            render(&from_js(&get(&items, CONNECTION_KEY)).unwrap_or_default());
            render_refusals(&from_js(&get(&items, crate::refusals::KEY)).unwrap_or_default());
        }
        Err(e) => show(&format!("Not connected: {}", crate::util::js_error_text(&e)), false),
    }
}

/// `10:42` in the person's time zone.
fn clock(ms: f64) -> String {
    let d = js_sys::Date::new(&JsValue::from_f64(ms));
    format!("{:02}:{:02}", d.get_hours(), d.get_minutes())
}

fn when(n: &Notice) -> String {
    if n.count > 1 {
        format!("{} times (first at {}, last at {})", n.count, clock(n.first_ms), clock(n.last_ms))
    } else {
        format!("at {}", clock(n.last_ms))
    }
}

/// The second-browser warning: one paragraph per kind.
fn render_refusals(r: &Refusals) {
    let mut lines = Vec::new();
    if let Some(n) = &r.other {
        lines.push(format!(
            "A second browser tried to connect {} and was refused. Something on this computer has Chaperone's \
             extension token; if you did not start another Chaperone browser, stop the bridge.",
            when(n)
        ));
    }
    if let Some(n) = &r.this {
        lines.push(format!(
            "This browser was refused by the bridge {}: another browser is connected to it, and the agent works \
             there, not here. If you did not start it, stop the bridge (`chaperone status` shows it).",
            when(n)
        ));
    }
    if let Some(text) = by_id("refusals-text") {
        ui::clear(&text);
        for l in &lines {
            text.append_child(&el("p", "refusal", Some(l))).ok();
        }
    }
    set_hidden("refusals", lines.is_empty());
}

fn render(status: &ConnectionStatus) {
    show(&status.line(), status.connected);
}

fn show(text: &str, connected: bool) {
    if let Some(el) = by_id("status") {
        el.set_text_content(Some(text));
        el.set_class_name(if connected { "status connected" } else { "status disconnected" });
    }
}
