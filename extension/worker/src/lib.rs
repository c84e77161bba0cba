//! Chaperone extension: service worker and extension pages, Rust→WASM.
//!
//! `static/background.js` loads this module in the service worker, calls
//! [`start_worker`] and relays the wake-up events it registered
//! synchronously ([`on_runtime_message`], [`on_alarm`], [`on_wake`]).
//! `static/popup.js` loads the same module in the popup and calls
//! [`start_popup`].
//!
//! The crate root wires the worker's modules together, so that their
//! imports form a DAG, each module using only those listed after it
//! (besides `chrome`, the `chrome.*` bindings, and `util`):
//!
//! ```text
//! lib            every module (entry points, frame and message routing)
//! commands       gate, handoff, tabs, load_errors, bodies, navigation
//! gate           window, secret, upload, downloads, proceed, handoff, sessions, conn, tabs, messages, badge
//! record         conn, tabs, messages, badge
//! popup          ui, messages, refusals, handoff, sessions, sites
//! approval       ui, messages
//! ui             messages
//! sites          handoff, tabs, conn, messages
//! window         tabs
//! secret         typed, conn, tabs
//! upload         conn, tabs
//! downloads      sessions, conn, tabs, browser
//! autodownloads  sessions, browser
//! network        withheld, response_filter, bodies, typed, sessions, conn
//! response_filter  bodies, sessions
//! bodies         withheld, typed, sessions, conn
//! withheld       handoff, conn
//! handoff        conn, tabs, badge
//! proceed        conn
//! sessions       conn
//! conn           refusals, messages
//! tabs           load_errors, page_csp, channel
//! load_errors, page_csp, channel, refusals, messages, badge, typed, browser, navigation    (none)
//! ```
//!
//! `tests/tests/it/imports.rs` checks this table against every module's
//! `crate::` paths, both ways.
//!
//! `conn` hands what arrives on the socket to the `conn::Handlers` set
//! here: requests to `commands` (`on_bridge_frame`), secrets to
//! `secret`, second-browser notices to `refusals`; page messages are
//! parsed and routed by [`on_runtime_message`] (`messages`).

use js_sys::Promise;
use shared::protocol::{BridgeToExt, ExtToBridge};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

mod approval;
mod autodownloads;
mod badge;
mod bodies;
mod browser;
mod channel;
mod chrome;
mod commands;
mod conn;
mod downloads;
mod gate;
mod handoff;
mod load_errors;
mod messages;
mod navigation;
mod network;
mod page_csp;
mod popup;
mod proceed;
mod record;
mod refusals;
mod response_filter;
mod secret;
mod sessions;
mod sites;
mod tabs;
mod typed;
mod ui;
mod upload;
mod util;
mod window;
mod withheld;

use messages::{Control, HandBack, Message, Page, Reply};
use util::{get, obj, to_js};

/// Name of the alarm that revives the connection after the worker restarts.
const RECONNECT_ALARM: &str = "chaperone-reconnect";

/// Service worker entry point.
#[wasm_bindgen]
pub fn start_worker() {
    typed::load();
    tabs::install_listeners();
    window::install_listeners();
    gate::install_listeners();
    handoff::install_listeners();
    autodownloads::install_listeners();
    autodownloads::schedule();
    conn::set_handlers(conn::Handlers { connected: on_connected, frame: on_bridge_frame, closed: on_disconnected });
    spawn_local(gate::ensure_loaded());
    spawn_local(record::ensure_loaded());
    conn::publish();
    spawn_local(async {
        let info = obj(&[("periodInMinutes", JsValue::from_f64(0.5))]);
        if let Err(e) = browser::alarms_create(RECONNECT_ALARM, &info).await {
            web_sys::console::warn_1(&e);
        }
    });
    conn::ensure_connected();
    // The rule tables are built once, on first use: now, after the
    // listeners are in place, rather than inside the first action.
    spawn_local(async {
        util::sleep(0).await;
        shared::risk::warm();
        shared::challenge::warm();
    });
}

/// The bridge welcomed connection `generation`: it learns the person's
/// controls first.
fn on_connected(generation: u64) {
    conn::send(generation, &ExtToBridge::Control { state: gate::control_state() });
    conn::send(generation, &ExtToBridge::Waiting { tabs: handoff::waiting() });
}

/// A frame from the bridge on connection `generation`.
fn on_bridge_frame(generation: u64, frame: BridgeToExt) {
    match frame {
        BridgeToExt::Request { id, command } => {
            spawn_local(async move {
                match commands::run(*command).await {
                    commands::Answer::Outcome(outcome) => {
                        conn::send(generation, &ExtToBridge::Response { id, outcome: *outcome })
                    }
                    commands::Answer::Snapshot(snapshot) => {
                        conn::send_snapshot(generation, id, snapshot.head, &snapshot.nodes)
                    }
                }
            });
        }
        BridgeToExt::Secret { request, value } => secret::answer(generation, request, Ok(value)),
        BridgeToExt::SecretRefused { request, error } => secret::answer(generation, request, Err(error)),
        BridgeToExt::Proceed { request, go } => proceed::answer(generation, request, go),
        BridgeToExt::SecondBrowserRefused { refused, .. } => refusals::other_browser_refused(refused),
        BridgeToExt::UploadChunk { upload, file, data, last } => upload::chunk(generation, upload, file, data, last),
        BridgeToExt::UploadRefused { upload, error } => upload::refused(generation, upload, error),
        BridgeToExt::Download { id, verdict } => downloads::verdict(generation, id, verdict),
        BridgeToExt::Sessions { sessions } => {
            sessions::update(sessions);
            autodownloads::schedule();
            bodies::sync();
        }
        BridgeToExt::SiteRules { rules } => sites::update(rules),
        // `conn` answers these itself.
        BridgeToExt::Welcome { .. } | BridgeToExt::Pong { .. } => {}
    }
}

/// Connection `generation` closed: secrets it was to bring never come.
fn on_disconnected(generation: u64) {
    secret::connection_closed(generation);
    proceed::connection_closed(generation);
    upload::connection_closed(generation);
    downloads::connection_closed(generation);
    sites::forget();
}

/// Popup entry point.
#[wasm_bindgen]
pub fn start_popup() {
    popup::start();
}

/// Approval window entry point (`approval.html`).
#[wasm_bindgen]
pub fn start_approval() {
    approval::start();
}

#[wasm_bindgen]
pub fn on_alarm(name: String) {
    if name == RECONNECT_ALARM {
        conn::ensure_connected();
    }
}

/// `runtime.onStartup` / `runtime.onInstalled`.
#[wasm_bindgen]
pub fn on_wake(_why: String) {
    conn::ensure_connected();
}

/// The sending page, only for this extension's own pages: `sender.id` is
/// ours (`chrome.runtime.id`) and `sender.url` is under our own origin
/// (`chrome-extension://<id>/`, Firefox's `moz-extension://<uuid>/`). Content
/// scripts (whose `sender.url` is the web page), other extensions and web
/// pages get `None`.
fn own_page(sender: &JsValue) -> Option<Page> {
    let origin = chrome::runtime_get_url("");
    let our_id = chrome::runtime_id();
    if get(sender, "id").as_string() != Some(our_id.clone()) || our_id.is_empty() {
        return None;
    }
    let url = get(sender, "url").as_string()?;
    let path = url.strip_prefix(&origin)?;
    let path = &path[..path.find(['?', '#']).unwrap_or(path.len())];
    Some(match path {
        "popup.html" => Page::Popup,
        "approval.html" => Page::Approval,
        _ => Page::Other,
    })
}

/// Messages from the extension's own pages (popup, approval window),
/// parsed into [`Message`] (anything else is refused) and allowed per
/// page by [`Message::allowed_from`]; content scripts, web pages and other
/// extensions are refused before that.
#[wasm_bindgen]
pub fn on_runtime_message(msg: JsValue, sender: JsValue) -> Promise {
    // Our content script's reports: a filled sensitive field (`network`),
    // else "Record me" steps, heard by `record` alone.
    if record::is_content_script(&sender) {
        if let Some(heard) = withheld::on_content_report(&msg, &sender) {
            return Promise::resolve(&JsValue::from_bool(heard));
        }
        return record::on_page_message(msg, sender);
    }
    let Some(page) = own_page(&sender) else {
        return Promise::resolve(&error_reply("not allowed"));
    };
    let text = js_sys::JSON::stringify(&msg).ok().and_then(|t| t.as_string()).unwrap_or_default();
    let message = match Message::parse(&text) {
        Ok(m) => m,
        Err(e) => return Promise::resolve(&error_reply(&e)),
    };
    if !message.allowed_from(page) {
        return Promise::resolve(&error_reply("not allowed from this page"));
    }
    match message {
        Message::Status {} => {
            conn::ensure_connected();
            Promise::resolve(&to_js(&conn::status()))
        }
        Message::State {} => wasm_bindgen_futures::future_to_promise(async {
            gate::ensure_loaded().await;
            Ok(to_js(&gate::page_state()))
        }),
        Message::Decide { request, approve } => Promise::resolve(&ok_reply(gate::decide(request, approve))),
        Message::Settings { settings } => wasm_bindgen_futures::future_to_promise(async move {
            gate::set_settings(settings).await;
            Ok(ok_reply(true))
        }),
        Message::Control { action } => wasm_bindgen_futures::future_to_promise(async move {
            match action {
                Control::Stop => gate::stop().await,
                Control::Pause => gate::pause().await,
                Control::Resume => gate::resume().await,
            }
            Ok(ok_reply(true))
        }),
        Message::Yolo { on } => wasm_bindgen_futures::future_to_promise(async move {
            gate::set_yolo(on).await;
            Ok(ok_reply(true))
        }),
        Message::ClearHistory {} => wasm_bindgen_futures::future_to_promise(async {
            gate::clear_history().await;
            Ok(ok_reply(true))
        }),
        Message::DismissRefusals {} => wasm_bindgen_futures::future_to_promise(async {
            refusals::dismiss().await;
            Ok(ok_reply(true))
        }),
        Message::HandBack { id, answer } => wasm_bindgen_futures::future_to_promise(async move {
            let known = match answer {
                HandBack::Done => handoff::done(id).await,
                HandBack::Abort => handoff::abort(id),
            };
            Ok(ok_reply(known))
        }),
        Message::GiveTab { session } => wasm_bindgen_futures::future_to_promise(async move {
            // The person's own web tab in front; never an agent's.
            let given = match handoff::current_web_tab().await {
                Some(tab) if sessions::client_of(tab).is_none() => sessions::give(tab, session),
                _ => false,
            };
            Ok(ok_reply(given))
        }),
        Message::TakeOver {} => {
            wasm_bindgen_futures::future_to_promise(async { Ok(ok_reply(handoff::take_over().await)) })
        }
        Message::ThisSite {} => wasm_bindgen_futures::future_to_promise(async { Ok(to_js(&sites::this_site().await)) }),
        Message::SetSiteAccess { origin, access } => Promise::resolve(&ok_reply(sites::set(origin, access))),
        Message::NeverHere { request } => {
            // Never for the origin of the page the request is about, then
            // the request denied: the bridge has the rule before the
            // denial reaches the agent (frames are read in order).
            let origin = gate::pending_url(request).and_then(|u| shared::url::Origin::of(&u).map(|o| o.to_string()));
            if let Some(origin) = origin {
                sites::set(origin, shared::policy::SiteAccess::Deny);
            }
            Promise::resolve(&ok_reply(gate::decide(request, false)))
        }
        Message::Record { on, name, keep_text } => wasm_bindgen_futures::future_to_promise(async move {
            if !on {
                record::stop().await;
                return Ok(ok_reply(true));
            }
            Ok(match record::start(name, keep_text).await {
                Ok(()) => ok_reply(true),
                Err(e) => error_reply(&e),
            })
        }),
    }
}

fn ok_reply(done: bool) -> JsValue {
    to_js(&Reply::Ok { done })
}

fn error_reply(message: &str) -> JsValue {
    to_js(&Reply::Error { message: message.to_string() })
}
