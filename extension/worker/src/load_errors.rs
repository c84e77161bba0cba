//! Pages that did not load (`shared::navigation`, "Pages that do not
//! load"). `webRequest.onErrorOccurred` (observe-only, registered in
//! `static/background.js` for top-level documents of http(s) URLs) tells
//! which net error (`net::ERR_NAME_NOT_RESOLVED`…) a tab's page failed
//! with; `webRequest.onBeforeRequest` of the tab's next page forgets it.
//! A navigation that lands on the browser's error page, and any later
//! read of such a tab (the content script cannot be injected into an error
//! page: Chrome answers "Frame with ID 0 is showing error page"), answer
//! `PAGE_NOT_LOADED` with what happened and the URL.

use std::cell::RefCell;
use std::collections::HashMap;

use shared::error::WireError;
use shared::protocol::TabId;
use wasm_bindgen::prelude::*;

use crate::util::{get, without_fragment};

struct Failed {
    url: String,
    error: String,
}

/// At most this many tabs remembered (the oldest entries go first).
const MAX_TABS: usize = 200;

thread_local! {
    static FAILED: RefCell<HashMap<TabId, Failed>> = RefCell::new(HashMap::new());
}

/// `webRequest.onErrorOccurred` for a tab's top-level document.
#[wasm_bindgen]
pub fn on_load_error(details: JsValue) {
    let Some(tab) = get(&details, "tabId").as_f64().filter(|t| *t >= 0.0).map(|t| t as TabId) else { return };
    if get(&details, "type").as_string().as_deref() != Some("main_frame") {
        return;
    }
    let (Some(url), Some(error)) = (get(&details, "url").as_string(), get(&details, "error").as_string()) else {
        return;
    };
    // Aborted: replaced by another navigation, or became a download.
    if error == "net::ERR_ABORTED" {
        return;
    }
    FAILED.with(|f| {
        let mut f = f.borrow_mut();
        if f.len() >= MAX_TABS && !f.contains_key(&tab) {
            f.clear();
        }
        f.insert(tab, Failed { url, error });
    });
}

/// `webRequest.onBeforeRequest` for a tab's top-level document: a new
/// page is on its way.
#[wasm_bindgen]
pub fn on_load_start(details: JsValue) {
    if let Some(tab) = get(&details, "tabId").as_f64().filter(|t| *t >= 0.0) {
        FAILED.with(|f| f.borrow_mut().remove(&(tab as TabId)));
    }
}

/// `PAGE_NOT_LOADED` when the page the tab shows (`url`) is the one that
/// failed to load. A page restored from the back/forward cache makes no
/// request, so an older failure stays recorded: it counts only while the
/// tab is still at its URL.
pub fn failed(tab: TabId, url: &str) -> Option<WireError> {
    FAILED.with(|f| {
        f.borrow()
            .get(&tab)
            .filter(|x| without_fragment(&x.url) == without_fragment(url))
            .map(|x| shared::navigation::page_not_loaded(&x.url, Some(&x.error)))
    })
}

/// `PAGE_NOT_LOADED` for a tab the browser says shows its error page:
/// with the net error when it was seen, else with the tab's URL only.
pub fn error_page(tab: TabId, url: &str) -> WireError {
    failed(tab, url).unwrap_or_else(|| shared::navigation::page_not_loaded(url, None))
}

/// Whether a failed injection says the tab shows the browser's error page.
pub fn is_error_page(text: &str) -> bool {
    text.contains("showing error page")
}
