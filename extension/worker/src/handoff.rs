//! Hand-offs in the extension (docs/design.md, "Hand-off to the person";
//! the rules, pure and table-tested, are `shared::handoff`).
//!
//! Behaviour, exactly:
//! - [`clear_for_agent`] runs before every page action the gate lets
//!   through and after every navigation the agent waits for: a hand-off
//!   already open on the tab (the person took it over, the agent asked) is
//!   waited for first; then the challenge decision on the live page
//!   (`PageRequest::Signals`, `shared::challenge::detect`; for a page
//!   action, the signals read with its element in the same round trip,
//!   `PageRequest::ResolveWithSignals`, at most `gate::SIGNALS_FRESH_MS`
//!   before, and never when the person had the tab since). A challenge in a
//!   headless browser is `SECURITY_CHALLENGE` at once; otherwise the tab is
//!   handed to the person ([`hand_over`], trigger `detected`) and, after a
//!   good Done, checked again — at most
//!   `shared::handoff::MAX_HANDOFFS_PER_ACTION` hand-offs for one call.
//! - [`hand_over`]: the tab gets a card in the popup (what is needed, the
//!   site, the agent's reason in quotes, time waiting, Done and Abort), the
//!   badge says `YOU`, the tab is brought to the front. One hand-off per
//!   tab: a second caller waits on the same one. It ends only by the
//!   popup's Done (checked: [`done`]) or Abort ([`abort`]), STOP
//!   ([`stop_all`]) or its deadline (`human_timeout_secs` from the bridge's
//!   welcome). Every end is one `HandoffEnded` frame (the bridge audits it).
//! - [`take_over`]: the person's own hand-off of the tab they are looking
//!   at.
//! - While a hand-off is open its tab is the person's: the bridge refuses
//!   every command on it but the tab list (`HUMAN_REQUIRED`,
//!   `shared::handoff::check_handed`) and `crate::commands::run` checks
//!   again with [`handed_tabs`]. Only the call that opened the hand-off
//!   waits for it. The card shows the tab's current origin ([`moved`]),
//!   and where it began when that differs.
//! - The list of waiting tabs is published on every change: to the popup
//!   (`chrome.storage.session` key `handoffs`), to the bridge
//!   (`ExtToBridge::Waiting`, for `browser_status` and MCP progress) and to
//!   the badge.
//!
//! Nothing but the popup's messages (`crate::messages`, popup only) calls
//! [`done`], [`abort`] or [`take_over`]; no bridge frame, tool or page can
//! end a hand-off.

use std::cell::RefCell;

use js_sys::{Array, Function, Object, Promise};
use shared::challenge::{Challenge, PageSignals};
use shared::error::{ErrorCode, WireError};
use shared::handoff::{DoneCheck, MAX_HANDOFFS_PER_ACTION, Outcome, Record, Trigger, Waiting};
use shared::protocol::{CommandResult, ExtToBridge, PageRequest, TabId};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use crate::chrome::{self, Tab};
use crate::tabs;
use crate::util::{from_js, get, now_ms, obj, to_js};

/// The `chrome.storage.session` key the popup reads.
pub const KEY: &str = "handoffs";

struct Entry {
    view: Waiting,
    /// The URL where it began (its site is what Done is checked against).
    began: String,
    /// Resolve functions of the calls waiting on it (with the outcome).
    waiters: Vec<Function>,
    /// A Done is being checked: a second click waits for it.
    checking: bool,
}

#[derive(Default)]
struct State {
    next_id: u64,
    list: Vec<Entry>,
    /// The last http(s) tab the person activated: what "Take over" means
    /// when the popup itself is a tab.
    last_web_tab: Option<TabId>,
    listening: bool,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

type ActivatedListener = Closure<dyn FnMut(JsValue)>;

/// Remembers the last web tab the person looked at (for Take over).
pub fn install_listeners() {
    let fresh = STATE.with(|s| !std::mem::replace(&mut s.borrow_mut().listening, true));
    if !fresh {
        return;
    }
    let cb = ActivatedListener::new(|info: JsValue| {
        let Some(tab) = get(&info, "tabId").as_f64().map(|t| t as TabId) else { return };
        spawn_local(async move {
            if let Ok(url) = tabs::tab_url(tab).await
                && tabs::is_web_url(&url)
            {
                STATE.with(|s| s.borrow_mut().last_web_tab = Some(tab));
            }
        });
    });
    chrome::tabs_on_activated_add_listener(cb.as_ref().unchecked_ref());
    cb.forget();
    // The card shows where the tab is now: a tab that navigates while it
    // waits (the person's clicks, a page's redirect) updates its card.
    let cb = UpdatedListener::new(|tab_id: JsValue, change: JsValue, _tab: JsValue| {
        let (Some(tab), Some(url)) = (tab_id.as_f64().map(|t| t as TabId), get(&change, "url").as_string()) else {
            return;
        };
        moved(tab, &url);
    });
    chrome::tabs_on_updated_add_listener(cb.as_ref().unchecked_ref());
    cb.forget();
}

type UpdatedListener = Closure<dyn FnMut(JsValue, JsValue, JsValue)>;

/// The tab of an open hand-off is now at `url`: its card says so.
fn moved(tab: TabId, url: &str) {
    let origin =
        shared::url::Origin::of(url).map_or_else(|| "a page that is not a web site".to_string(), |o| o.to_string());
    let changed = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let Some(e) = s.list.iter_mut().find(|e| e.view.tab == tab) else { return false };
        let changed = e.view.origin != origin;
        e.view.origin = origin;
        changed
    });
    if changed {
        publish();
    }
}

/// The tabs handed to the person now: every command on them but the tab
/// list is refused (`shared::handoff::check_handed`; the bridge checks
/// first, this is the second check).
pub fn handed_tabs() -> Vec<TabId> {
    STATE.with(|s| s.borrow().list.iter().map(|e| e.view.tab).collect())
}

// ------------------------------------------------------------------ reading the page

/// Whether this browser runs headless: nobody can help there.
fn headless() -> bool {
    let ua = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("navigator"))
        .and_then(|n| js_sys::Reflect::get(&n, &JsValue::from_str("userAgent")))
        .ok()
        .and_then(|u| u.as_string())
        .unwrap_or_default();
    shared::handoff::is_headless(&ua, crate::conn::host_says_headless())
}

/// The challenge on the tab's live page, if any. A page that does not
/// answer (not a web page, gone) shows none: the check protects the
/// person's accounts from the agent, and a page gains nothing by hiding
/// its own challenge.
pub async fn challenge_on(tab: TabId) -> Option<Challenge> {
    let msg = PageRequest::Signals {};
    match tabs::ask_page(tab, &msg).await {
        Ok(CommandResult::Signals { signals }) => shared::challenge::detect(&signals),
        _ => None,
    }
}

// ------------------------------------------------------------------ the agent's side

/// Before an action is dispatched on `tab`, and after a navigation there:
/// waits for a hand-off already open on the tab, then hands the tab over
/// while its page shows a challenge (see the module docs). `Ok(true)` when
/// the person had the tab (the caller must look at the page again).
pub async fn clear_for_agent(tab: TabId, seen: Option<Box<PageSignals>>) -> Result<bool, WireError> {
    let mut handed = false;
    // The signals the caller read a moment ago with the element stand in
    // for the first look, unless the person had the tab since.
    let mut seen = seen;
    if let Some(id) = open_on(tab) {
        wait_for(id).await?;
        handed = true;
        seen = None;
    }
    let mut rounds = 0u8;
    loop {
        let challenge = match seen.take() {
            Some(signals) => shared::challenge::detect(&signals),
            None => challenge_on(tab).await,
        };
        let Some(challenge) = challenge else { break };
        if headless() {
            return Err(shared::handoff::headless_error(&challenge));
        }
        if rounds >= MAX_HANDOFFS_PER_ACTION {
            return Err(WireError::new(
                ErrorCode::HumanRequired,
                format!(
                    "the page shows a {} challenge again after the person handed it back {rounds} times",
                    challenge.kind.as_str()
                ),
            ));
        }
        rounds += 1;
        hand_over(tab, Trigger::Detected, Some(challenge), None).await?;
        handed = true;
    }
    Ok(handed)
}

/// Hands `tab` to the person and waits until the hand-off ends: the
/// milliseconds it took after a good Done, else the outcome's error.
pub async fn hand_over(
    tab: TabId,
    trigger: Trigger,
    challenge: Option<Challenge>,
    reason: Option<String>,
) -> Result<u64, WireError> {
    let started = now_ms();
    let id = match open_on(tab) {
        Some(id) => id,
        None => begin(tab, trigger, challenge, reason).await?,
    };
    wait_for(id).await?;
    Ok((now_ms() - started).max(0.0) as u64)
}

/// The hand-off open on `tab`, if any.
fn open_on(tab: TabId) -> Option<u64> {
    STATE.with(|s| s.borrow().list.iter().find(|e| e.view.tab == tab).map(|e| e.view.id))
}

/// Opens a hand-off: the card, the badge, the tab in front, the deadline.
async fn begin(
    tab: TabId,
    trigger: Trigger,
    challenge: Option<Challenge>,
    reason: Option<String>,
) -> Result<u64, WireError> {
    let page: Tab = tabs::get_tab(tab).await?;
    let url = tabs::info(&page).url;
    let id = STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.next_id += 1;
        let id = s.next_id;
        let view = Waiting {
            id,
            tab,
            challenge,
            origin: shared::url::Origin::wire(&url),
            began_origin: shared::url::Origin::wire(&url),
            reason,
            trigger,
            since_ms: now_ms() as u64,
            misses: 0,
            note: None,
        };
        s.list.push(Entry { view, began: url, waiters: Vec::new(), checking: false });
        id
    });
    publish();
    if trigger != Trigger::Person {
        // The person's attention: the tab in front of its window.
        let _ = chrome::tabs_update(tab as f64, &obj(&[("active", JsValue::TRUE)])).await;
        if let Some(w) = page.window_id() {
            let _ = chrome::windows_update(w, &obj(&[("focused", JsValue::TRUE)])).await;
        }
    }
    let timeout_ms = crate::conn::human_timeout_secs().saturating_mul(1000);
    spawn_local(async move {
        crate::util::sleep(timeout_ms).await;
        finish(id, Outcome::Timeout);
    });
    Ok(id)
}

/// Waits until hand-off `id` ends; its error unless it ended with a good
/// Done.
async fn wait_for(id: u64) -> Result<(), WireError> {
    let mut what = String::new();
    let promise = Promise::new(&mut |resolve, _reject| {
        STATE.with(|s| {
            let mut s = s.borrow_mut();
            match s.list.iter_mut().find(|e| e.view.id == id) {
                Some(e) => {
                    what = e.view.what().to_string();
                    e.waiters.push(resolve);
                }
                // Already over (it ended between the lookup and now):
                // nothing to wait for, and nothing to claim either.
                None => {
                    let _ = resolve.call1(&JsValue::NULL, &JsValue::from_str("gone"));
                }
            }
        });
    });
    let outcome = wasm_bindgen_futures::JsFuture::from(promise).await.ok().and_then(|v| v.as_string());
    match outcome.as_deref() {
        Some("done") => Ok(()),
        Some("abort") => Err(Outcome::Abort.error(&what).unwrap_or_else(lost)),
        Some("timeout") => Err(Outcome::Timeout.error(&what).unwrap_or_else(lost)),
        Some("stop") => Err(Outcome::Stop.error(&what).unwrap_or_else(lost)),
        Some("still_there") => Err(Outcome::StillThere.error(&what).unwrap_or_else(lost)),
        _ => Err(lost()),
    }
}

fn lost() -> WireError {
    WireError::new(ErrorCode::HumanRequired, "the hand-off ended before this call could learn how; look at the page")
}

/// Ends hand-off `id` with `outcome` (nothing when it is already over):
/// the waiting calls learn it, the bridge gets the audit record.
fn finish(id: u64, outcome: Outcome) {
    let Some(entry) = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let i = s.list.iter().position(|e| e.view.id == id)?;
        Some(s.list.remove(i))
    }) else {
        return;
    };
    let duration_ms = (now_ms() - entry.view.since_ms as f64).max(0.0) as u64;
    let kind = match &entry.view.challenge {
        Some(c) => c.kind.as_str().to_string(),
        None => entry.view.trigger.as_str().to_string(),
    };
    crate::conn::send_current(&ExtToBridge::HandoffEnded {
        record: Record {
            tab: entry.view.tab,
            kind,
            origin: entry.view.began_origin.clone(),
            trigger: entry.view.trigger,
            outcome,
            duration_ms,
        },
    });
    for w in entry.waiters {
        let _ = w.call1(&JsValue::NULL, &JsValue::from_str(outcome.as_str()));
    }
    publish();
}

// ------------------------------------------------------------------ the person's side (popup only)

/// Done: the live page is checked (no challenge, same site); else the tab
/// waits again with a note, and the last allowed miss ends it.
pub async fn done(id: u64) -> bool {
    let Some((tab, began, misses)) = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let e = s.list.iter_mut().find(|e| e.view.id == id && !e.checking)?;
        e.checking = true;
        Some((e.view.tab, e.began.clone(), e.view.misses))
    }) else {
        return false;
    };
    let now = tabs::tab_url(tab).await.unwrap_or_default();
    moved(tab, &now);
    let challenge = challenge_on(tab).await;
    match shared::handoff::check_done(&began, &now, challenge.as_ref(), misses) {
        DoneCheck::Resolved => finish(id, Outcome::Done),
        DoneCheck::GiveUp => finish(id, Outcome::StillThere),
        DoneCheck::Again(note) => {
            STATE.with(|s| {
                if let Some(e) = s.borrow_mut().list.iter_mut().find(|e| e.view.id == id) {
                    e.view.misses += 1;
                    e.view.note = Some(note);
                    e.checking = false;
                }
            });
            publish();
        }
    }
    true
}

/// Abort: the waiting calls get `HUMAN_REQUIRED`.
pub fn abort(id: u64) -> bool {
    let known = STATE.with(|s| s.borrow().list.iter().any(|e| e.view.id == id));
    finish(id, Outcome::Abort);
    known
}

/// STOP ends every hand-off.
pub fn stop_all() {
    let ids: Vec<u64> = STATE.with(|s| s.borrow().list.iter().map(|e| e.view.id).collect());
    for id in ids {
        finish(id, Outcome::Stop);
    }
}

/// Take over: the person's hand-off of the web tab they are looking at
/// (the active tab of the last focused window, or the last web tab they
/// activated when that is one of our pages). False when there is none.
pub async fn take_over() -> bool {
    let Some(tab) = current_web_tab().await else { return false };
    if open_on(tab).is_some() {
        return true;
    }
    begin(tab, Trigger::Person, None, None).await.is_ok()
}

/// The web page in front of the person (the popup's "Take over" and "Let
/// <client> use this tab").
pub async fn current_web_tab() -> Option<TabId> {
    let active_web = |query: Object| async move {
        let found = chrome::tabs_query(&query).await.ok()?;
        let ids: Vec<TabId> = Array::from(&found)
            .iter()
            .map(|t| tabs::info(t.unchecked_ref::<Tab>()))
            .filter(|i| tabs::is_web_url(&i.url))
            .map(|i| i.id)
            .collect();
        Some(ids)
    };
    // The page in front of the window the person used last…
    let focused = obj(&[("active", JsValue::TRUE), ("lastFocusedWindow", JsValue::TRUE)]);
    if let Some(&tab) = active_web(focused).await.unwrap_or_default().first() {
        return Some(tab);
    }
    // …else (the popup is a window or tab of its own) the one web page in
    // front of any window, else the last web tab they switched to.
    let fronts = active_web(obj(&[("active", JsValue::TRUE)])).await.unwrap_or_default();
    if let [tab] = fronts[..] {
        return Some(tab);
    }
    let last = STATE.with(|s| s.borrow().last_web_tab)?;
    tabs::get_tab(last).await.ok().map(|_| last)
}

// ------------------------------------------------------------------ publishing

/// Every tab waiting for the person now.
pub fn waiting() -> Vec<Waiting> {
    STATE.with(|s| s.borrow().list.iter().map(|e| e.view.clone()).collect())
}

/// To the popup, the bridge and the badge.
pub fn publish() {
    let list = waiting();
    crate::badge::set_handoffs(list.len());
    crate::conn::send_current(&ExtToBridge::Waiting { tabs: list.clone() });
    let items = obj(&[(KEY, to_js(&list))]);
    spawn_local(async move {
        let _ = chrome::storage_session_set(&items).await;
    });
}

/// What the popup shows (read from `chrome.storage.session`).
pub fn parse(v: &JsValue) -> Vec<Waiting> {
    from_js(v).unwrap_or_default()
}
