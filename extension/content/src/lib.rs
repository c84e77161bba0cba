//! Chaperone content script (docs/design.md, "Observation" and "Build and
//! test facts").
//!
//! Runs in the http(s) pages the agent or a recording needs, compiled from
//! WASM to plain JS with binaryen's `wasm2js` so that strict page CSPs (no
//! `'wasm-unsafe-eval'`) cannot stop it, and bundled by `cargo xtask build`
//! with its loader (`static/content.js`) into one classic script, which the
//! worker injects the first time it needs a document (nothing is
//! web-accessible: SECURITY.md). Answers each message from the service
//! worker. Kept lean: DOM walking only; no policy, formatting or
//! redaction here. Reading a page leaves no trace a page can observe: no
//! attribute, node, event, message, global in the page's world or console
//! output.
//!
//! Refs (`e1`, `e2`, …) live only in this script's memory: a `WeakMap`
//! element → ref and a `Map` ref → `WeakRef(element)`. Nothing is written
//! into the page's DOM.
//!
//! The modules' imports form a DAG, each module using only those listed
//! after it (`tests/tests/it/imports.rs` checks this table against every
//! module's `crate::` paths, both ways):
//!
//! ```text
//! lib        every module (message routing)
//! act        fills, upload, events, highlight, facts, refs, dom
//! fills      dom
//! upload     events, dom
//! events     dom
//! highlight  facts, dom
//! locate     facts, name, roles, refs, dom
//! record     name, roles, dom
//! text       snapshot, refs
//! snapshot   challenge, choices, reads, name, roles, refs, dom
//! facts      paint, name, roles, refs, dom
//! paint      dom
//! name       roles, dom
//! choices    dom
//! reads      dom
//! roles      dom
//! challenge, refs, dom    (none)
//! ```

use js_sys::Promise;
use shared::action::{Action, ResolvedElement};
use shared::error::{ErrorCode, WireError};
use shared::protocol::{CommandResult, Outcome, PageRequest};
use wasm_bindgen::prelude::*;

mod act;
mod challenge;
mod choices;
mod dom;
mod events;
mod facts;
mod fills;
mod highlight;
mod locate;
mod name;
mod paint;
mod reads;
mod record;
mod refs;
mod roles;
mod snapshot;
mod text;
mod upload;

/// Called once by `static/content.js` when it installs the script, with
/// the one way to the worker the page's reports take ("Record me", a
/// filled sensitive field):
/// `(message) => chrome.runtime.sendMessage(message)`.
#[wasm_bindgen]
pub fn start_content(report: js_sys::Function) {
    fills::start(report.clone());
    record::set_report(report);
}

/// Entry point for `static/content.js`: answers one message with a Promise
/// of a JSON string holding a `shared::protocol::Outcome` — or, for a
/// snapshot, of `{head, nodes}` (`shared::protocol::snapshot_reply_parts`).
///
/// A thin dispatcher: each request is answered by its own `answer_*`
/// function, which neither rustc (`#[inline(never)]`) nor binaryen
/// (`cargo xtask build` keeps `content::answer_*` out of its inlining)
/// folds back in here. V8 compiles a hot WebAssembly function again with
/// its optimising compiler, whole; with every request's code in one
/// function, the first calls of a page compiled all of it in every tab
/// (BENCHMARKS.md, "Less code to tier up").
#[wasm_bindgen]
pub fn handle_message(msg: JsValue) -> Promise {
    match parse(&msg) {
        Ok(PageRequest::Act { target, action, verify }) => answer_act(target, action, verify.map(|v| *v)),
        Ok(PageRequest::UploadPart { file, data, first }) => answer_upload_part(file, &data, first),
        Ok(PageRequest::Snapshot { request }) => answer_snapshot(&request),
        Ok(PageRequest::ExtractText { request }) => answer_extract_text(&request),
        Ok(PageRequest::History { delta }) => answer_history(delta),
        Ok(PageRequest::Highlight { target, show }) => answer_highlight(target.as_deref(), show),
        Ok(PageRequest::Record { on, keep_text }) => answer_record(on, keep_text),
        Ok(PageRequest::Locate { target }) => answer_locate(&target),
        Ok(PageRequest::ResolveWithSignals { target }) => answer_resolve_with_signals(target.as_deref()),
        Ok(PageRequest::Signals {}) => answer_signals(),
        Err(e) => reply(Outcome::Err(e)),
    }
}

#[inline(never)]
fn answer_act(target: Option<String>, action: Action, verify: Option<ResolvedElement>) -> Promise {
    if !matches!(action, Action::UploadFiles { .. }) {
        upload::clear();
    }
    act::act(target, action, verify)
}

#[inline(never)]
fn answer_upload_part(file: u32, data: &str, first: bool) -> Promise {
    reply(match upload::part(file, data, first) {
        Ok(()) => Outcome::Ok(CommandResult::Tabs { tabs: Vec::new() }),
        Err(e) => Outcome::Err(e),
    })
}

#[inline(never)]
fn answer_snapshot(request: &shared::snapshot::SnapshotRequest) -> Promise {
    let outcome = match snapshot::take(request) {
        // In two parts, so that the worker need not copy the nodes
        // into its memory (`shared::protocol::snapshot_reply_parts`).
        Ok(snapshot) => match shared::protocol::snapshot_reply_parts(snapshot) {
            Ok((head, nodes)) => {
                warm_after_reply();
                let reply = js_sys::Object::new();
                let _ = js_sys::Reflect::set(&reply, &"head".into(), &JsValue::from_str(&head));
                let _ = js_sys::Reflect::set(&reply, &"nodes".into(), &JsValue::from_str(&nodes));
                return Promise::resolve(&JsValue::from(reply));
            }
            Err(_) => Outcome::Err(WireError::internal("could not encode the snapshot")),
        },
        Err(e) => Outcome::Err(e),
    };
    reply(outcome)
}

#[inline(never)]
fn answer_extract_text(request: &shared::snapshot::TextRequest) -> Promise {
    reply(match text::extract(request) {
        Ok(text) => Outcome::Ok(CommandResult::Text { text }),
        Err(e) => Outcome::Err(e),
    })
}

#[inline(never)]
fn answer_history(delta: i32) -> Promise {
    reply(match go(delta) {
        Ok(()) => Outcome::Ok(CommandResult::Tabs { tabs: Vec::new() }),
        Err(e) => Outcome::Err(e),
    })
}

#[inline(never)]
fn answer_highlight(target: Option<&str>, show: bool) -> Promise {
    let at = if show {
        highlight::show(target)
    } else {
        highlight::hide();
        None
    };
    reply(Outcome::Ok(CommandResult::Highlighted { at }))
}

#[inline(never)]
fn answer_record(on: bool, keep_text: bool) -> Promise {
    reply(record::set(on, keep_text))
}

#[inline(never)]
fn answer_locate(target: &shared::flow::Descriptor) -> Promise {
    reply(locate::locate(target))
}

#[inline(never)]
fn answer_resolve_with_signals(target: Option<&str>) -> Promise {
    reply(match act::resolve(target) {
        Outcome::Ok(CommandResult::Element { element }) => match snapshot::page_signals() {
            Some(signals) => Outcome::Ok(CommandResult::ElementSignals { element, signals: Box::new(signals) }),
            None => Outcome::Err(WireError::internal("the page has no document")),
        },
        other => other,
    })
}

#[inline(never)]
fn answer_signals() -> Promise {
    reply(match snapshot::page_signals() {
        Some(signals) => Outcome::Ok(CommandResult::Signals { signals: Box::new(signals) }),
        None => Outcome::Err(WireError::internal("the page has no document")),
    })
}

fn reply(outcome: Outcome) -> Promise {
    Promise::resolve(&dom::outcome_json(&outcome))
}

thread_local! {
    static WARMED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Once a document's first snapshot has been answered: a task later (the
/// answer is on its way), reads an element's facts and the page's
/// challenge signals and throws them away, and adds the listeners an
/// action watches the page with ([`act::warm`]). The first action on a
/// page otherwise paid for all that being done a first time (compiling the
/// code it runs, the browser noting the listeners), several times what a
/// later one costs; an agent reads a page before it acts, and thinks in
/// between. Nothing the page can see: reads like a snapshot's, and
/// listeners in this world.
fn warm_after_reply() {
    if WARMED.with(|w| w.replace(true)) {
        return;
    }
    wasm_bindgen_futures::spawn_local(async {
        act::next_task().await;
        act::warm();
        let first = facts::document()
            .ok()
            .and_then(|d| d.query_selector("button, input, a[href], select, textarea, [role=button]").ok().flatten());
        // Encoded too, as the answers are.
        if let Some(Ok(element)) = first.map(|el| facts::resolve(&el)) {
            let _ = serde_json::to_string(&element);
        }
        if let Some(signals) = snapshot::page_signals() {
            let _ = serde_json::to_string(&signals);
        }
    });
}

fn go(delta: i32) -> Result<(), WireError> {
    let history = web_sys::window().and_then(|w| w.history().ok()).ok_or_else(|| WireError::internal("no history"))?;
    if delta == 0 || history.length().unwrap_or(0) <= 1 {
        return Err(WireError::new(ErrorCode::InvalidRequest, "no page to go to in this tab's history"));
    }
    history.go_with_delta(delta).map_err(|_| WireError::internal("history navigation failed"))
}

fn parse(msg: &JsValue) -> Result<PageRequest, WireError> {
    let text = js_sys::JSON::stringify(msg)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or_else(|| WireError::new(ErrorCode::InvalidRequest, "message is not JSON"))?;
    serde_json::from_str(&text).map_err(|_| WireError::new(ErrorCode::InvalidRequest, "unknown message"))
}
