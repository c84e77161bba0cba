//! Sessions in Firefox: two MCP sessions on one bridge and one Firefox.
//! Session B does not see session A's tab, and every tool B points at A's
//! tab id or refs is `NOT_FOUND` (the words of a closed tab) while A's
//! page stays as it was; B's own tab works for B and is not listed to A.

use serde_json::json;
use tests::ref_of;

use super::FxStack;
use crate::e2e::sessions::assert_foreign_tab_refused;
use crate::e2e::{new_tab, snapshot};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_never_see_each_others_tabs() {
    let mut s = FxStack::start(None, false).await;
    let page_url = s.url("/basic/index.html");
    let tab_a = new_tab(&mut s.mcp, &page_url).await;
    let before = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let city = ref_of(&before, "textbox", "City").unwrap_or_else(|| panic!("no City in {before}"));
    let save = ref_of(&before, "button", "Save changes").unwrap_or_else(|| panic!("no Save in {before}"));

    let mut b = s.daemon.mcp_as("agent-b").await.expect("session B");
    let r = b.ok("browser_tabs", json!({ "action": "list" })).await;
    assert_eq!(r.data()["tabs"], json!([]), "B sees A's tab: {}", r.raw);
    assert_foreign_tab_refused(&mut b, tab_a, &save, &city, &s.url("/basic/second.html")).await;

    // A's page is as it was; B's own tab is B's alone.
    let after = snapshot(&mut s.mcp, json!({ "tab": tab_a })).await;
    assert_eq!(after.data()["url"], json!(page_url));
    assert_eq!(after.snapshot(), before, "A's page changed");
    let tab_b = new_tab(&mut b, &s.url("/basic/second.html")).await;
    let r = b.ok("browser_tabs", json!({ "action": "list" })).await;
    let ids: Vec<i64> = r.data()["tabs"].as_array().unwrap().iter().filter_map(|t| t["id"].as_i64()).collect();
    assert_eq!(ids, vec![tab_b], "{}", r.raw);
    let r = s.mcp.ok("browser_tabs", json!({ "action": "list" })).await;
    let ids: Vec<i64> = r.data()["tabs"].as_array().unwrap().iter().filter_map(|t| t["id"].as_i64()).collect();
    assert_eq!(ids, vec![tab_a], "{}", r.raw);
    let r = s.mcp.call("browser_snapshot", json!({ "tab": tab_b })).await.unwrap();
    assert_eq!(r.text(), format!("NOT_FOUND: no tab {tab_b}"), "A reached B's tab: {}", r.raw);
}
