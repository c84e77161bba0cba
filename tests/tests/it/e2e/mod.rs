//! End-to-end: the real bridge, the real extension, headless Chromium.
//! One module per scenario, each with its own daemon, Chromium and fresh
//! user-data-dir (shared by the steps of that module).
//!
//! Needs `cargo xtask build` (dist/extension) and the `chaperone` binary;
//! see `tests::extension_dir` and `tests::chaperone_bin`.

mod api_learn;
mod api_tool;
mod approvals;
mod bad_input;
mod bridge_kill;
mod challenges;
mod choices;
mod churn;
mod crashes;
mod csp;
mod dashboard;
mod downloads;
mod files;
mod firefox;
mod flows;
mod handed_tab;
mod handoff;
mod injection;
mod languages;
mod lies;
mod model;
mod nav_risk;
mod navigation;
mod network;
mod network_bodies;
mod page_errors;
mod paint;
mod popup;
mod popup_controls;
mod read_only;
mod recorder_files;
mod recording;
mod risky_pages;
mod screenshot_close;
mod second_browser;
mod secret_sites;
mod secrets;
mod sessions;
mod site_deny;
mod stable_refs;
mod stdio;
mod strict_csp;
mod undetectable;
mod up;
mod upload_paths;
mod withhold;
mod worker_restart;

use std::time::Duration;

use serde_json::{Value, json};
use tests::{CdpSession, Expectations, Mcp, Stack, ToolResult};

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

/// The error code of a tool result (empty when it succeeded).
pub fn code(r: &ToolResult) -> String {
    r.error_code().unwrap_or("").to_string()
}

/// The page target whose URL is `url` (≤ 10 s), attached, `Page` enabled.
pub async fn page_at(s: &Stack, url: &str) -> CdpSession {
    let t = s
        .browser
        .cdp
        .wait_for_target(Duration::from_secs(10), |t| t.kind == "page" && t.url == url)
        .await
        .unwrap_or_else(|e| panic!("no page target at {url}: {e:#}"));
    let p = s.browser.cdp.attach(&t.target_id).await.expect("attach to the tab");
    p.call("Page.enable", json!({})).await.expect("Page.enable");
    p
}

/// The text of the fixture page's `#status` line.
pub async fn status_line(page: &CdpSession) -> String {
    page.evaluate("document.getElementById('status').textContent").await.unwrap().as_str().unwrap_or("").to_string()
}
