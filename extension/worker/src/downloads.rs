//! Downloads (docs/design.md, "Secrets, sensitive fields and files"; issues 29 and 30; the bridge's side
//! is `bridge/src/server/downloads.rs`, the rules `shared::downloads`).
//! `static/background.js` registers the listeners synchronously and hands
//! them here.
//!
//! - [`on_headers_received`] (`chrome.webRequest`, observe-only: it never
//!   blocks or changes a request) notes, for top-level, frame and "other"
//!   (`<a download>`) responses of http(s) tabs, which tab a URL was
//!   loaded in and the raw `Content-Disposition` name. `chrome.downloads`
//!   does not say which tab a download came from; this does, when it can.
//! - [`on_tab_created`] notes who opened each tab (`openerTabId`): a
//!   download in a tab an agent's tab opened is that agent's.
//! - [`on_determining_filename`]: Chromium waits for our answer before it
//!   names (and so before it finishes) any download. **Every** download is
//!   described ([`shared::downloads::Provenance`]: the tab, its openers,
//!   the origin it came from — referrer or `blob:` origin — and the tabs
//!   showing that origin) and reported to the bridge, which decides whose
//!   it is (`shared::downloads::attribute`) and answers a
//!   [`DownloadVerdict`] ([`verdict`]): `Leave` (the person's) → no
//!   suggestion; `Cancel` → `downloads.cancel` and `erase` (nothing stays
//!   on disk); `Keep` → the name `shared::files::sanitize_download_name`
//!   makes of the server's, and the download is watched: past
//!   `max_bytes` it is cancelled while it runs ([`DownloadEvent::TooLarge`]),
//!   complete it is reported with its path for the bridge to copy;
//!   `Discard` → Chromium's copy is removed. Nothing here opens a file.
//! - With no bridge connected, the same attribution runs on the last
//!   sessions list the bridge sent: a download that is not positively the
//!   person's is cancelled. The connection closing cancels the downloads
//!   still waiting for a verdict unless they are the person's.
//! - An attachment response in an agent tab that never became a download
//!   within [`HELD_MS`] (Chromium held or refused it: "download multiple
//!   files") is reported ([`DownloadEvent::NotStarted`]); the click that
//!   caused it says so ([`outcome_since`]).

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

use js_sys::{Array, Function, Object};
use shared::downloads::{Attribution, Provenance};
use shared::files::{DownloadEvent, DownloadVerdict};
use shared::protocol::{ExtToBridge, TabId};
use shared::sessions::Owner;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use crate::util::{get, now_ms, obj};

/// Responses remembered for matching downloads to tabs.
const SEEN_MAX: usize = 256;
/// How long a response is remembered.
const SEEN_MS: f64 = 60_000.0;
/// Tabs whose opener is remembered.
const OPENERS_MAX: usize = 1024;
/// How often a kept download's size is looked at while it runs.
const WATCH_MS: u32 = 200;
/// An attachment response that has not become a download after this long
/// was held or refused by the browser.
pub const HELD_MS: u32 = 3_000;
/// How long a Firefox download waits for its response's headers.
const GECKO_HEADERS_WAIT_MS: u32 = 500;
/// How long a click waits for the verdict on the download it started.
const VERDICT_WAIT_MS: f64 = 2_000.0;
/// Downloads remembered for click results.
const RECENT_MAX: usize = 64;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["chrome", "downloads"], js_name = cancel, catch)]
    async fn downloads_cancel(id: f64) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "downloads"], js_name = erase, catch)]
    async fn downloads_erase(query: &Object) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "downloads"], js_name = removeFile, catch)]
    async fn downloads_remove_file(id: f64) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_namespace = ["chrome", "downloads"], js_name = search, catch)]
    async fn downloads_search(query: &Object) -> Result<JsValue, JsValue>;
}

struct Seen {
    url: String,
    tab: i64,
    /// The raw `Content-Disposition` file name.
    name: Option<String>,
    at: f64,
}

struct Waiting {
    generation: Option<u64>,
    /// Chromium's `suggest` callback, until it is called (once).
    suggest: Option<Function>,
    kept: bool,
    /// Its completion was reported (once: [`report_complete`]).
    completed: bool,
    /// The server's name as reported, sanitised when it is kept.
    name: String,
    /// What the worker's own sessions list says (used when no bridge answers).
    local: Attribution,
}

/// What became of a download, for the click that started it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fate {
    Pending,
    Cancelled,
    Kept,
    Left,
    TooLarge,
    /// The server sent it; the browser never started it.
    NotStarted,
}

struct Recent {
    id: u64,
    /// The tab it was started in, or the tabs showing its origin.
    tabs: Vec<TabId>,
    at: f64,
    fate: Fate,
}

/// An attachment response in a tab, until it becomes a download.
struct Attachment {
    url: String,
    tab: TabId,
    name: Option<String>,
    at: f64,
    became_download: bool,
}

thread_local! {
    static SEEN: RefCell<VecDeque<Seen>> = const { RefCell::new(VecDeque::new()) };
    static WAITING: RefCell<HashMap<u64, Waiting>> = RefCell::new(HashMap::new());
    static OPENERS: RefCell<HashMap<TabId, TabId>> = RefCell::new(HashMap::new());
    static RECENT: RefCell<VecDeque<Recent>> = const { RefCell::new(VecDeque::new()) };
    static ATTACHMENTS: RefCell<Vec<Attachment>> = const { RefCell::new(Vec::new()) };
}

fn text(v: &JsValue, key: &str) -> Option<String> {
    get(v, key).as_string()
}

/// `tabs.onCreated`: remembers `openerTabId`.
#[wasm_bindgen]
pub fn on_tab_created(tab: JsValue) {
    let (Some(id), Some(opener)) = (get(&tab, "id").as_f64(), get(&tab, "openerTabId").as_f64()) else { return };
    let (id, opener) = (id as TabId, opener as TabId);
    OPENERS.with(|o| {
        let mut o = o.borrow_mut();
        if o.len() >= OPENERS_MAX {
            o.clear();
        }
        o.insert(id, opener);
    });
}

/// The tabs that opened `tab`, nearest first.
fn openers_of(tab: TabId) -> Vec<TabId> {
    OPENERS.with(|o| {
        let o = o.borrow();
        let mut chain = Vec::new();
        let mut cur = tab;
        while let Some(&next) = o.get(&cur) {
            if chain.len() >= shared::downloads::MAX_OPENERS || next == tab || chain.contains(&next) {
                break;
            }
            chain.push(next);
            cur = next;
        }
        chain
    })
}

/// `webRequest.onHeadersReceived` (see the module docs).
#[wasm_bindgen]
pub fn on_headers_received(details: JsValue) {
    let tab = get(&details, "tabId").as_f64().unwrap_or(-1.0);
    let Some(url) = text(&details, "url") else { return };
    if tab < 0.0 || !crate::tabs::is_web_url(&url) {
        return;
    }
    let tab = tab as TabId;
    let headers = Array::from(&get(&details, "responseHeaders"));
    let disposition = headers
        .iter()
        .find(|h| text(h, "name").is_some_and(|n| n.eq_ignore_ascii_case("content-disposition")))
        .and_then(|h| text(&h, "value"));
    let now = now_ms();
    let name = disposition.as_deref().and_then(shared::files::content_disposition_filename);
    if disposition.as_deref().is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("attachment")) {
        // An attachment: this response becomes a download, not a page (an
        // action waiting for the page to load stops waiting). If it never
        // does, the browser held or refused it: say so.
        ATTACHMENTS.with(|a| {
            let mut a = a.borrow_mut();
            a.retain(|x| now - x.at < SEEN_MS);
            a.push(Attachment { url: url.clone(), tab, name: name.clone(), at: now, became_download: false });
        });
        let url = url.clone();
        spawn_local(async move {
            crate::util::sleep(HELD_MS).await;
            held(tab, &url, now).await;
        });
    }
    SEEN.with(|s| {
        let mut s = s.borrow_mut();
        s.retain(|x| now - x.at < SEEN_MS);
        if s.len() >= SEEN_MAX {
            s.pop_front();
        }
        s.push_back(Seen { url, tab, name, at: now });
    });
}

/// [`HELD_MS`] after an attachment response: reported when it never became
/// a download and its tab is an agent's.
async fn held(tab: TabId, url: &str, at: f64) {
    let found = ATTACHMENTS.with(|a| {
        let mut a = a.borrow_mut();
        let i = a.iter().position(|x| x.tab == tab && x.url == url && x.at == at)?;
        let x = a.remove(i);
        (!x.became_download).then_some(x)
    });
    let Some(x) = found else { return };
    if crate::sessions::owner_of(tab).is_none()
        && openers_of(tab).iter().all(|t| crate::sessions::owner_of(*t).is_none())
    {
        return;
    }
    RECENT.with(|r| {
        push_recent(&mut r.borrow_mut(), Recent { id: 0, tabs: vec![tab], at, fate: Fate::NotStarted });
    });
    let name = x.name.unwrap_or_default();
    crate::conn::send_current(&ExtToBridge::Download { event: DownloadEvent::NotStarted { tab, url: x.url, name } });
}

fn push_recent(r: &mut VecDeque<Recent>, x: Recent) {
    if r.len() >= RECENT_MAX {
        r.pop_front();
    }
    r.push_back(x);
}

/// The worker's own view of whose a download is (its sessions list).
fn local_owner(tab: TabId) -> Owner {
    crate::sessions::owner_of(tab).map_or(Owner::Person, |(k, _)| Owner::Session(k))
}

/// `downloads.onDeterminingFilename` (see the module docs).
#[wasm_bindgen]
pub fn on_determining_filename(item: JsValue, suggest: Function) {
    let Some(id) = get(&item, "id").as_f64().filter(|i| *i >= 0.0).map(|i| i as u64) else {
        let _ = suggest.call0(&JsValue::NULL);
        return;
    };
    spawn_local(async move { determine(id, item, suggest).await });
}

async fn determine(id: u64, item: JsValue, suggest: Function) {
    let url = text(&item, "url").unwrap_or_default();
    let final_url = text(&item, "finalUrl").filter(|u| !u.is_empty()).unwrap_or_else(|| url.clone());
    let referrer = text(&item, "referrer").unwrap_or_default();
    let now = now_ms();
    let take_seen = || {
        SEEN.with(|s| {
            let mut s = s.borrow_mut();
            let i = s.iter().rposition(|x| (x.url == final_url || x.url == url) && now_ms() - x.at < SEEN_MS)?;
            s.remove(i)
        })
    };
    let mut seen = take_seen();
    // Firefox may tell of the download before the response's headers
    // reach the worker (and holds nothing for our answer): wait a little
    // for them rather than lose the tab it came from.
    let mut waited = 0;
    while seen.is_none() && crate::browser::is_gecko() && waited < GECKO_HEADERS_WAIT_MS {
        crate::util::sleep(25).await;
        waited += 25;
        seen = take_seen();
    }
    if let Some(s) = &seen {
        ATTACHMENTS.with(|a| {
            for x in a.borrow_mut().iter_mut().filter(|x| x.tab == s.tab && (x.url == final_url || x.url == url)) {
                x.became_download = true;
            }
        });
    }
    let origin = shared::downloads::download_origin(&url, &referrer, shared::url::Origin::wire);
    let tab = seen.as_ref().map(|s| s.tab);
    let tabs_at_origin = match tab {
        Some(_) => Vec::new(),
        None => tabs_showing(origin.as_deref()).await,
    };
    let provenance = Provenance { tab, openers: tab.map(openers_of).unwrap_or_default(), origin, tabs_at_origin };
    let local = shared::downloads::attribute(&provenance, local_owner);
    let candidates: Vec<TabId> = provenance
        .tab
        .into_iter()
        .chain(provenance.openers.iter().copied())
        .chain(provenance.tabs_at_origin.iter().copied())
        .collect();
    RECENT.with(|r| push_recent(&mut r.borrow_mut(), Recent { id, tabs: candidates, at: now, fate: Fate::Pending }));
    let Some(generation) = crate::conn::connected_generation() else {
        // No bridge: only the person's own downloads go on.
        let now = if local == Attribution::Person { DownloadVerdict::Leave } else { DownloadVerdict::Cancel };
        let w = Waiting {
            generation: None,
            suggest: Some(suggest),
            kept: false,
            completed: false,
            name: String::new(),
            local,
        };
        WAITING.with(|x| x.borrow_mut().insert(id, w));
        apply(id, now);
        return;
    };
    let name = seen.as_ref().and_then(|s| s.name.clone()).or_else(|| text(&item, "filename")).unwrap_or_default();
    let size = get(&item, "totalBytes").as_f64().filter(|b| *b > 0.0).map(|b| b as u64);
    WAITING.with(|w| {
        w.borrow_mut().insert(
            id,
            Waiting {
                generation: Some(generation),
                suggest: Some(suggest),
                kept: false,
                completed: false,
                name: name.clone(),
                local,
            },
        )
    });
    let event = DownloadEvent::Started {
        id,
        provenance,
        url: final_url,
        name,
        mime: text(&item, "mime").unwrap_or_default(),
        size,
    };
    crate::conn::send(generation, &ExtToBridge::Download { event });
}

/// The open http(s) tabs showing `origin` (every one when `None`).
async fn tabs_showing(origin: Option<&str>) -> Vec<TabId> {
    let Ok(all) = crate::chrome::tabs_query(&obj(&[])).await else { return Vec::new() };
    Array::from(&all)
        .iter()
        .filter_map(|t| {
            let id = get(&t, "id").as_f64()? as TabId;
            let url = text(&t, "url").filter(|u| !u.is_empty()).or_else(|| text(&t, "pendingUrl"))?;
            if !crate::tabs::is_web_url(&url) {
                return None;
            }
            match origin {
                Some(o) if shared::url::Origin::of(&url) != shared::url::Origin::of(o) => None,
                _ => Some(id),
            }
        })
        .collect()
}

/// `downloads.onChanged`: a kept download completed or was interrupted.
#[wasm_bindgen]
pub fn on_download_changed(delta: JsValue) {
    let Some(id) = get(&delta, "id").as_f64().map(|i| i as u64) else { return };
    let Some(state) = text(&get(&delta, "state"), "current") else { return };
    let Some(generation) = WAITING.with(|w| w.borrow().get(&id).filter(|x| x.kept).and_then(|x| x.generation)) else {
        return;
    };
    match state.as_str() {
        "complete" => spawn_local(report_complete(generation, id)),
        "interrupted" => {
            WAITING.with(|w| w.borrow_mut().remove(&id));
            let reason = text(&get(&delta, "error"), "current").unwrap_or_else(|| "unknown".into());
            crate::conn::send(generation, &ExtToBridge::Download { event: DownloadEvent::Interrupted { id, reason } });
        }
        _ => {}
    }
}

/// A kept download completed: reported once, with its path (from its
/// `onChanged`, or from [`watch`] when it completed before the verdict
/// came, as a small one does in Firefox, which does not wait for us).
async fn report_complete(generation: u64, id: u64) {
    let first = WAITING
        .with(|w| w.borrow_mut().get_mut(&id).filter(|x| x.kept && !x.completed).map(|x| x.completed = true).is_some());
    if !first {
        return;
    }
    let found = downloads_search(&obj(&[("id", JsValue::from_f64(id as f64))])).await.ok();
    let path = found.map(|a| Array::from(&a).get(0)).and_then(|i| text(&i, "filename")).unwrap_or_default();
    crate::conn::send(generation, &ExtToBridge::Download { event: DownloadEvent::Complete { id, path } });
}

fn suggest_nothing(suggest: Option<Function>) {
    if let Some(s) = suggest {
        let _ = s.call0(&JsValue::NULL);
    }
}

fn set_fate(id: u64, fate: Fate) {
    RECENT.with(|r| {
        if let Some(x) = r.borrow_mut().iter_mut().rev().find(|x| x.id == id) {
            x.fate = fate;
        }
    });
}

/// The bridge's verdict on download `id`, on connection `generation`.
pub fn verdict(generation: u64, id: u64, verdict: DownloadVerdict) {
    let known = WAITING.with(|w| w.borrow().get(&id).is_some_and(|x| x.generation == Some(generation)));
    if known {
        apply(id, verdict);
    }
}

fn cancel_and_erase(id: u64) {
    let idf = id as f64;
    spawn_local(async move {
        if let Err(e) = downloads_cancel(idf).await {
            web_sys::console::warn_1(&e);
        }
        let _ = downloads_erase(&obj(&[("id", JsValue::from_f64(idf))])).await;
    });
}

fn apply(id: u64, verdict: DownloadVerdict) {
    match verdict {
        DownloadVerdict::Leave => {
            set_fate(id, Fate::Left);
            let w = WAITING.with(|w| w.borrow_mut().remove(&id));
            suggest_nothing(w.and_then(|w| w.suggest));
        }
        DownloadVerdict::Keep { max_bytes } => {
            set_fate(id, Fate::Kept);
            let kept = WAITING.with(|w| {
                let mut w = w.borrow_mut();
                let x = w.get_mut(&id)?;
                x.kept = true;
                Some((x.suggest.take()?, x.name.clone(), x.generation))
            });
            // Chromium's own (temporary) copy gets the same sanitised name
            // the bridge saves under: a name the disk accepts.
            if let Some((suggest, name, generation)) = kept {
                let name = shared::files::sanitize_download_name(&name);
                let how =
                    obj(&[("filename", JsValue::from_str(&name)), ("conflictAction", JsValue::from_str("uniquify"))]);
                let _ = suggest.call1(&JsValue::NULL, &how);
                if let Some(generation) = generation {
                    spawn_local(watch(generation, id, max_bytes));
                }
            }
        }
        DownloadVerdict::Cancel => {
            set_fate(id, Fate::Cancelled);
            // Chromium needs no name for a cancelled download; the callback
            // is dropped unanswered.
            WAITING.with(|w| w.borrow_mut().remove(&id));
            cancel_and_erase(id);
        }
        DownloadVerdict::Discard => {
            WAITING.with(|w| w.borrow_mut().remove(&id));
            let idf = id as f64;
            spawn_local(async move {
                if let Err(e) = downloads_remove_file(idf).await {
                    web_sys::console::warn_1(&e);
                }
                let _ = downloads_erase(&obj(&[("id", JsValue::from_f64(idf))])).await;
            });
        }
    }
}

/// Watches a kept download while it runs: past `max_bytes` (received, or
/// the total the server declared) it is cancelled and its partial file
/// erased at once.
async fn watch(generation: u64, id: u64, max_bytes: u64) {
    loop {
        if !WAITING.with(|w| w.borrow().get(&id).is_some_and(|x| x.kept)) {
            return;
        }
        let Ok(found) = downloads_search(&obj(&[("id", JsValue::from_f64(id as f64))])).await else { return };
        let item = Array::from(&found).get(0);
        if item.is_undefined() {
            return;
        }
        let received = get(&item, "bytesReceived").as_f64().unwrap_or(0.0).max(0.0) as u64;
        let total = get(&item, "totalBytes").as_f64().filter(|t| *t > 0.0).map(|t| t as u64);
        if shared::downloads::over_limit(received, total, max_bytes) {
            WAITING.with(|w| w.borrow_mut().remove(&id));
            set_fate(id, Fate::TooLarge);
            cancel_and_erase(id);
            crate::conn::send(generation, &ExtToBridge::Download { event: DownloadEvent::TooLarge { id, received } });
            return;
        }
        match text(&item, "state").as_deref() {
            Some("in_progress") => {}
            Some("complete") => return report_complete(generation, id).await,
            _ => return,
        }
        crate::util::sleep(WATCH_MS).await;
    }
}

/// Connection `generation` closed: downloads still waiting for a verdict
/// are cancelled unless the worker's own sessions list says they are the
/// person's.
pub fn connection_closed(generation: u64) {
    let ended: Vec<(u64, Attribution)> = WAITING.with(|w| {
        w.borrow()
            .iter()
            .filter(|(_, x)| x.generation == Some(generation) && !x.kept)
            .map(|(k, x)| (*k, x.local.clone()))
            .collect()
    });
    for (id, local) in ended {
        apply(id, if local == Attribution::Person { DownloadVerdict::Leave } else { DownloadVerdict::Cancel });
    }
}

/// Whether a download (or an attachment that never became one) started
/// in `tab` at or after `since` (ms).
pub fn started_since(tab: TabId, since: f64) -> bool {
    RECENT.with(|r| r.borrow().iter().any(|x| x.at >= since && x.tabs.contains(&tab)))
        || ATTACHMENTS.with(|a| a.borrow().iter().any(|x| x.tab == tab && x.at >= since))
}

/// What became of the downloads started in `tab` since `since`, for the
/// result of the action that started them (waits a moment for the
/// bridge's verdicts); `None` when none started.
pub async fn outcome_since(tab: TabId, since: f64) -> Option<String> {
    let deadline = now_ms() + VERDICT_WAIT_MS;
    loop {
        let fates: Vec<Fate> = RECENT
            .with(|r| r.borrow().iter().filter(|x| x.at >= since && x.tabs.contains(&tab)).map(|x| x.fate).collect());
        let unstarted = ATTACHMENTS
            .with(|a| a.borrow().iter().filter(|x| x.tab == tab && x.at >= since && !x.became_download).count());
        if fates.is_empty() && unstarted == 0 {
            return None;
        }
        let pending = fates.contains(&Fate::Pending) || unstarted > 0;
        if !pending || now_ms() >= deadline {
            return Some(describe(&fates, unstarted));
        }
        crate::util::sleep(100).await;
    }
}

fn describe(fates: &[Fate], unstarted: usize) -> String {
    let count = |f: Fate| fates.iter().filter(|x| **x == f).count();
    let mut parts = Vec::new();
    let n = count(Fate::Cancelled);
    if n > 0 {
        parts.push(format!("{n} cancelled by Chaperone"));
    }
    let n = count(Fate::Kept);
    if n > 0 {
        parts.push(format!("{n} being saved"));
    }
    let n = count(Fate::TooLarge);
    if n > 0 {
        parts.push(format!("{n} cancelled as too large"));
    }
    let n = count(Fate::Pending);
    if n > 0 {
        parts.push(format!("{n} waiting for the policy or the person's approval"));
    }
    let n = count(Fate::Left);
    if n > 0 {
        parts.push(format!("{n} left to the person"));
    }
    let unstarted = unstarted + count(Fate::NotStarted);
    if unstarted > 0 {
        parts.push(format!(
            "{unstarted} sent by the server but not started by the browser (it holds or refuses a page's further \
             automatic downloads until the person allows \"download multiple files\")"
        ));
    }
    let total = fates.len() + unstarted - count(Fate::NotStarted);
    let what = if total == 1 { "a download started".to_string() } else { format!("{total} downloads started") };
    format!("{what}: {} (see browser_downloads)", parts.join(", "))
}
