//! Downloads that pages start (docs/design.md, "Files"; the bridge's side
//! is `bridge/src/server/files.rs`). `static/background.js` registers the
//! three listeners synchronously and hands them here.
//!
//! - [`on_headers_received`] (`chrome.webRequest`, observe-only: it never
//!   blocks or changes a request) notes, for top-level and frame responses
//!   of http(s) tabs, which tab a URL was loaded in and the raw
//!   `Content-Disposition` name; the last [`SEEN_MAX`] responses of the
//!   last [`SEEN_MS`] are kept. `chrome.downloads` does not say which tab
//!   a download came from; this does.
//! - [`on_determining_filename`]: Chromium waits for our answer before it
//!   names (and so before it finishes) any download. One that is not from
//!   a tab seen above, or arrives while no bridge is connected, is
//!   answered at once with no suggestion: the person's own downloads go on
//!   untouched. Any other is reported to the bridge
//!   (`DownloadEvent::Started`), which answers with a
//!   [`DownloadVerdict`] ([`verdict`]): `Leave` (not an agent tab) →
//!   no suggestion; `Cancel` → `downloads.cancel` and `erase` (nothing
//!   stays on disk); `Keep` → the name `shared::files::sanitize_download_name`
//!   makes of the server's (Chromium finishes into its own folder under
//!   it; `uniquify` on a clash), and its completion is reported with the file's path
//!   (`Complete`) for the bridge to copy; `Discard` → Chromium's copy is
//!   removed (`removeFile`, `erase`). Nothing here opens a file.
//! - The connection closing answers every download still waiting with no
//!   suggestion (the person may be using the browser).

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

use js_sys::{Array, Function, Object};
use shared::files::{DownloadEvent, DownloadVerdict};
use shared::protocol::ExtToBridge;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use crate::util::{get, now_ms, obj};

/// Responses remembered for matching downloads to tabs.
const SEEN_MAX: usize = 64;
/// How long a response is remembered.
const SEEN_MS: f64 = 60_000.0;

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
    generation: u64,
    /// Chromium's `suggest` callback, until it is called (once).
    suggest: Option<Function>,
    kept: bool,
    /// The server's name as reported, sanitised when it is kept.
    name: String,
}

thread_local! {
    static SEEN: RefCell<VecDeque<Seen>> = const { RefCell::new(VecDeque::new()) };
    static WAITING: RefCell<HashMap<u64, Waiting>> = RefCell::new(HashMap::new());
    /// When each tab last started a download (ms).
    static LAST_IN_TAB: RefCell<HashMap<i64, f64>> = RefCell::new(HashMap::new());
}

/// Whether a download started in `tab` at or after `since` (ms): the
/// "navigation" an action began was a download, and no page will load.
pub fn started_since(tab: i64, since: f64) -> bool {
    LAST_IN_TAB.with(|l| l.borrow().get(&tab).is_some_and(|t| *t >= since))
}

fn text(v: &JsValue, key: &str) -> Option<String> {
    get(v, key).as_string()
}

/// `webRequest.onHeadersReceived` (see the module docs).
#[wasm_bindgen]
pub fn on_headers_received(details: JsValue) {
    let tab = get(&details, "tabId").as_f64().unwrap_or(-1.0);
    let Some(url) = text(&details, "url") else { return };
    if tab < 0.0 || !crate::tabs::is_web_url(&url) {
        return;
    }
    let headers = Array::from(&get(&details, "responseHeaders"));
    let disposition = headers
        .iter()
        .find(|h| text(h, "name").is_some_and(|n| n.eq_ignore_ascii_case("content-disposition")))
        .and_then(|h| text(&h, "value"));
    let now = now_ms();
    if disposition.as_deref().is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("attachment")) {
        // An attachment: this response becomes a download, not a page (an
        // action waiting for the page to load stops waiting).
        LAST_IN_TAB.with(|l| l.borrow_mut().insert(tab as i64, now));
    }
    let name = disposition.and_then(|v| shared::files::content_disposition_filename(&v));
    SEEN.with(|s| {
        let mut s = s.borrow_mut();
        s.retain(|x| now - x.at < SEEN_MS);
        if s.len() >= SEEN_MAX {
            s.pop_front();
        }
        s.push_back(Seen { url, tab: tab as i64, name, at: now });
    });
}

/// `downloads.onDeterminingFilename` (see the module docs).
#[wasm_bindgen]
pub fn on_determining_filename(item: JsValue, suggest: Function) {
    let id = get(&item, "id").as_f64().unwrap_or(-1.0);
    let url = text(&item, "finalUrl").filter(|u| !u.is_empty()).or_else(|| text(&item, "url")).unwrap_or_default();
    let now = now_ms();
    let seen = SEEN.with(|s| {
        let mut s = s.borrow_mut();
        let i = s.iter().rposition(|x| x.url == url && now - x.at < SEEN_MS)?;
        s.remove(i)
    });
    if let Some(s) = &seen {
        LAST_IN_TAB.with(|l| l.borrow_mut().insert(s.tab, now));
    }
    let (Some(seen), Some(generation)) = (seen, crate::conn::connected_generation()) else {
        let _ = suggest.call0(&JsValue::NULL);
        return;
    };
    if id < 0.0 {
        let _ = suggest.call0(&JsValue::NULL);
        return;
    }
    let id = id as u64;
    let name = seen.name.or_else(|| text(&item, "filename")).unwrap_or_default();
    let size = get(&item, "totalBytes").as_f64().filter(|b| *b > 0.0).map(|b| b as u64);
    WAITING.with(|w| {
        w.borrow_mut().insert(id, Waiting { generation, suggest: Some(suggest), kept: false, name: name.clone() })
    });
    let event =
        DownloadEvent::Started { id, tab: seen.tab, url, name, mime: text(&item, "mime").unwrap_or_default(), size };
    crate::conn::send(generation, &ExtToBridge::Download { event });
}

/// `downloads.onChanged`: a kept download completed or was interrupted.
#[wasm_bindgen]
pub fn on_download_changed(delta: JsValue) {
    let Some(id) = get(&delta, "id").as_f64().map(|i| i as u64) else { return };
    let Some(state) = text(&get(&delta, "state"), "current") else { return };
    let Some(generation) = WAITING.with(|w| w.borrow().get(&id).filter(|x| x.kept).map(|x| x.generation)) else {
        return;
    };
    match state.as_str() {
        "complete" => spawn_local(async move {
            let found = downloads_search(&obj(&[("id", JsValue::from_f64(id as f64))])).await.ok();
            let path = found.map(|a| Array::from(&a).get(0)).and_then(|i| text(&i, "filename")).unwrap_or_default();
            crate::conn::send(generation, &ExtToBridge::Download { event: DownloadEvent::Complete { id, path } });
        }),
        "interrupted" => {
            WAITING.with(|w| w.borrow_mut().remove(&id));
            let reason = text(&get(&delta, "error"), "current").unwrap_or_else(|| "unknown".into());
            crate::conn::send(generation, &ExtToBridge::Download { event: DownloadEvent::Interrupted { id, reason } });
        }
        _ => {}
    }
}

fn suggest_nothing(suggest: Option<Function>) {
    if let Some(s) = suggest {
        let _ = s.call0(&JsValue::NULL);
    }
}

/// The bridge's verdict on download `id`, on connection `generation`.
pub fn verdict(generation: u64, id: u64, verdict: DownloadVerdict) {
    let known = WAITING.with(|w| w.borrow().get(&id).is_some_and(|x| x.generation == generation));
    if !known {
        return;
    }
    let idf = id as f64;
    match verdict {
        DownloadVerdict::Leave => {
            let w = WAITING.with(|w| w.borrow_mut().remove(&id));
            suggest_nothing(w.and_then(|w| w.suggest));
        }
        DownloadVerdict::Keep => {
            let kept = WAITING.with(|w| {
                let mut w = w.borrow_mut();
                let x = w.get_mut(&id)?;
                x.kept = true;
                Some((x.suggest.take()?, x.name.clone()))
            });
            // Chromium's own (temporary) copy gets the same sanitised name
            // the bridge saves under: a name the disk accepts.
            if let Some((suggest, name)) = kept {
                let name = shared::files::sanitize_download_name(&name);
                let how =
                    obj(&[("filename", JsValue::from_str(&name)), ("conflictAction", JsValue::from_str("uniquify"))]);
                let _ = suggest.call1(&JsValue::NULL, &how);
            }
        }
        DownloadVerdict::Cancel => {
            let w = WAITING.with(|w| w.borrow_mut().remove(&id));
            spawn_local(async move {
                if let Err(e) = downloads_cancel(idf).await {
                    web_sys::console::warn_1(&e);
                }
                let _ = downloads_erase(&obj(&[("id", JsValue::from_f64(idf))])).await;
                // Chromium needs no name for a cancelled download; the
                // callback is dropped unanswered.
                drop(w);
            });
        }
        DownloadVerdict::Discard => {
            WAITING.with(|w| w.borrow_mut().remove(&id));
            spawn_local(async move {
                if let Err(e) = downloads_remove_file(idf).await {
                    web_sys::console::warn_1(&e);
                }
                let _ = downloads_erase(&obj(&[("id", JsValue::from_f64(idf))])).await;
            });
        }
    }
}

/// Connection `generation` closed: downloads still waiting for a verdict
/// go on untouched.
pub fn connection_closed(generation: u64) {
    let ended: Vec<Option<Function>> = WAITING.with(|w| {
        let mut w = w.borrow_mut();
        let ids: Vec<u64> = w.iter().filter(|(_, x)| x.generation == generation && !x.kept).map(|(k, _)| *k).collect();
        ids.into_iter().filter_map(|id| w.remove(&id)).map(|x| x.suggest).collect()
    });
    for s in ended {
        suggest_nothing(s);
    }
}
