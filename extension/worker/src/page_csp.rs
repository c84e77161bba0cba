//! Which flavour of the content script a tab's document gets
//! (ARCHITECTURE.md, "The content script's two flavours").
//!
//! [`on_document_headers`] (`webRequest.onHeadersReceived` for top-level
//! documents, observe-only) notes, per tab, the URL of the last document
//! response and whether its policy headers let WebAssembly compile
//! (`shared::csp::allows_wasm`). [`flavour`] answers for the document a
//! tab shows now: WebAssembly only when the last response noted for the
//! tab is the one for the URL the tab shows (the fragment aside) and it
//! allowed it; anything unknown (no response seen, a URL changed by
//! `history.pushState`, a page from the back-forward cache after another
//! load) gets the plain flavour, which every page accepts. Firefox takes
//! the same rule.

use std::cell::RefCell;
use std::collections::HashMap;

use js_sys::Array;
use shared::protocol::TabId;
use wasm_bindgen::prelude::*;

use crate::util::{get, without_fragment};

/// The two files `cargo xtask build` writes for the content script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// `content-wasm.js`: WebAssembly (steps aside on a `<meta>` policy).
    Wasm,
    /// `content.js`: the same code as plain JavaScript (wasm2js).
    Plain,
}

impl Flavour {
    pub fn file(self) -> &'static str {
        match self {
            Flavour::Wasm => "content-wasm.js",
            Flavour::Plain => "content.js",
        }
    }
}

/// Tabs remembered at most (a tab's entry is replaced by its next load).
const MAX_TABS: usize = 512;

thread_local! {
    /// Tab → (document URL without fragment, WebAssembly allowed).
    static SEEN: RefCell<HashMap<TabId, (String, bool)>> = RefCell::new(HashMap::new());
}

/// `webRequest.onHeadersReceived` of a `main_frame` response.
#[wasm_bindgen]
pub fn on_document_headers(details: JsValue) {
    if get(&details, "type").as_string().as_deref() != Some("main_frame") {
        return;
    }
    let (Some(tab), Some(url)) = (get(&details, "tabId").as_f64(), get(&details, "url").as_string()) else { return };
    if tab < 0.0 {
        return;
    }
    let headers = Array::from(&get(&details, "responseHeaders"));
    let policies: Vec<String> = headers
        .iter()
        .filter(|h| get(h, "name").as_string().is_some_and(|n| shared::csp::is_policy_header(&n)))
        .map(|h| get(&h, "value").as_string().unwrap_or_default())
        .collect();
    let allowed = shared::csp::allows_wasm(policies.iter().map(String::as_str));
    SEEN.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() >= MAX_TABS && !s.contains_key(&(tab as TabId)) {
            s.clear();
        }
        s.insert(tab as TabId, (without_fragment(&url).to_string(), allowed));
    });
}

/// The flavour for the document `tab` shows at `url` now.
pub fn flavour(tab: TabId, url: &str) -> Flavour {
    let url = without_fragment(url);
    let allowed = SEEN.with(|s| s.borrow().get(&tab).is_some_and(|(seen, ok)| *ok && seen == url));
    if allowed { Flavour::Wasm } else { Flavour::Plain }
}
