//! End-to-end: the real bridge, the real extension, headless Chromium.
//! One module per scenario, each with its own daemon, Chromium and fresh
//! user-data-dir (shared by the steps of that module).
//!
//! Needs `cargo xtask build` (dist/extension) and the `chaperone` binary;
//! see `tests::extension_dir` and `tests::chaperone_bin`.

mod approvals;
mod bad_input;
mod challenges;
mod csp;
mod injection;
mod navigation;
mod popup;
mod popup_controls;
mod risky_pages;
mod screenshot_close;
mod secrets;
mod site_deny;
mod stable_refs;
mod stdio;
mod strict_csp;
mod up;
mod worker_restart;

use serde_json::{Value, json};
use tests::{Expectations, Mcp, ToolResult};

/// The id of the tab a `browser_tabs new|select` or `browser_navigate` result names.
pub fn tab_id(r: &ToolResult) -> i64 {
    r.data()["tab"]["id"].as_i64().unwrap_or_else(|| panic!("no tab id in {}", r.raw))
}

/// `browser_tabs new` at `url`; returns the tab id.
pub async fn new_tab(mcp: &mut Mcp, url: &str) -> i64 {
    let r = mcp.ok("browser_tabs", json!({ "action": "new", "url": url })).await.expect_untrusted();
    assert_eq!(r.data()["tab"]["url"], json!(url), "{}", r.raw);
    tab_id(&r)
}

/// `browser_snapshot` of the current tab (or `args`); checks the wrapper.
pub async fn snapshot(mcp: &mut Mcp, args: Value) -> ToolResult {
    mcp.ok("browser_snapshot", args).await.expect_untrusted()
}

/// Snapshot of the current tab, checked against the page's expectations
/// and its URL; returns the snapshot text.
pub async fn snapshot_matches(mcp: &mut Mcp, url: &str, page: &str) -> String {
    let r = snapshot(mcp, json!({})).await;
    assert_eq!(r.data()["url"], json!(url), "snapshot of the wrong page: {}", r.raw);
    let text = r.snapshot();
    Expectations::for_page(page).assert_snapshot(&text);
    text
}

/// The agent's tabs as `browser_tabs list` reports them: (id, url, current).
pub async fn list_tabs(mcp: &mut Mcp) -> Vec<(i64, String, bool)> {
    let r = mcp.ok("browser_tabs", json!({ "action": "list" })).await.expect_untrusted();
    r.data()["tabs"]
        .as_array()
        .unwrap_or_else(|| panic!("no tabs array: {}", r.raw))
        .iter()
        .map(|t| {
            (
                t["id"].as_i64().unwrap_or_default(),
                t["url"].as_str().unwrap_or_default().to_string(),
                t["current"].as_bool().unwrap_or(false),
            )
        })
        .collect()
}
