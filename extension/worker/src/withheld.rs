//! Which of an agent tab's requests the worker sends without their parts,
//! or not at all (`shared::withhold`, issue 47): the tabs handed to the
//! person now, and each tab's windows since a sensitive field of its page
//! was filled (the content script's report, [`on_content_report`]) until a
//! top-frame load replaced that page ([`document_replaced`], from
//! `crate::network`). Kept in this run of the worker's memory; a restarted
//! worker forgets its windows (the bridge has stripped what it kept of
//! them already).

use std::cell::RefCell;
use std::collections::HashMap;

use shared::protocol::{ExtToBridge, TabId};
use shared::withhold::{ContentReport, Windows};
use wasm_bindgen::prelude::*;

use crate::util::get;

thread_local! {
    /// Each tab's windows of requests sent without their parts.
    static TAINTED: RefCell<HashMap<TabId, Windows>> = RefCell::new(HashMap::new());
}

pub fn handed(tab: TabId) -> bool {
    crate::handoff::handed_tabs().contains(&tab)
}

pub fn tainted(tab: TabId, started_ms: f64) -> bool {
    TAINTED.with(|t| t.borrow().get(&tab).is_some_and(|w| w.covers(started_ms)))
}

/// Whether a WebSocket message of `tab` may be sent now (bodies build):
/// not while the tab is handed or its page had a sensitive field filled.
pub fn keeps_messages(tab: TabId) -> bool {
    !handed(tab) && !TAINTED.with(|t| t.borrow().get(&tab).is_some_and(Windows::is_open))
}

/// A report from our content script (`sender` checked by the caller to be
/// this extension's): `Some` when it was a [`ContentReport`].
pub fn on_content_report(msg: &JsValue, sender: &JsValue) -> Option<bool> {
    let report = crate::util::from_js::<ContentReport>(msg).ok()?;
    let Some(tab) = get(&get(sender, "tab"), "id").as_f64().map(|t| t as TabId) else { return Some(false) };
    let ContentReport::SensitiveFilled { since_ms } = report;
    // A document's start is in the past; anything else is read as "now or
    // earlier", whichever is earlier.
    let since_ms = if since_ms.is_finite() { since_ms.min(crate::util::now_ms()) } else { 0.0 };
    TAINTED.with(|t| t.borrow_mut().entry(tab).or_default().open(since_ms));
    crate::conn::send_current(&ExtToBridge::Withhold { tab, since_ms });
    Some(true)
}

/// Tab `tab` loaded a new top-frame document at `at_ms`: its open window ends.
pub fn document_replaced(tab: TabId, at_ms: f64) {
    TAINTED.with(|t| {
        if let Some(w) = t.borrow_mut().get_mut(&tab) {
            w.close(at_ms);
        }
    });
}
