//! Tabs, navigation and snapshots on the basic fixture.

use serde_json::json;
use tests::{Stack, ref_lines};

use super::{list_tabs, new_tab, snapshot, snapshot_matches, tab_id};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tabs_navigation_and_snapshots() {
    let mut s = Stack::start().await.expect("start the stack");
    let index = s.url("/basic/index.html");
    let second = s.url("/basic/second.html");

    // The agent sees the browser tools.
    let tools = s.mcp.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for want in ["browser_tabs", "browser_navigate", "browser_snapshot", "browser_status"] {
        assert!(names.contains(&want), "tools/list lacks {want}: {names:?}");
    }

    // Open the fixture in a new tab; the snapshot lists what a person sees.
    let first_tab = new_tab(&mut s.mcp, &index).await;
    let snap1 = snapshot_matches(&mut s.mcp, &index, "basic/index.html").await;
    let r = snapshot(&mut s.mcp, json!({})).await;
    assert_eq!(r.data()["title"], json!("Account settings"));
    assert!(snap1.contains("Account settings"));

    // Refs are stable across two snapshots of the same page.
    let snap2 = snapshot_matches(&mut s.mcp, &index, "basic/index.html").await;
    let (a, b) = (ref_lines(&snap1), ref_lines(&snap2));
    assert!(a.len() >= 10, "too few elements with refs:\n{snap1}");
    assert_eq!(a, b, "refs changed between two snapshots of the same page");

    // Snapshots paginate.
    let small = snapshot(&mut s.mcp, json!({ "max_chars": 200 })).await;
    // The walk stops after page 1: `more` instead of a page count.
    assert_eq!(small.data()["more"], json!(true), "a 200-char page should not hold the whole snapshot: {}", small.raw);
    let p2 = snapshot(&mut s.mcp, json!({ "max_chars": 200, "page": 2 })).await;
    assert_eq!(p2.data()["page"], json!(2));
    assert_ne!(p2.snapshot(), small.snapshot());

    // Navigate to the second page, then back, forward and reload.
    let r = s.mcp.ok("browser_navigate", json!({ "url": second })).await.expect_untrusted();
    assert_eq!(r.data()["tab"]["url"], json!(second));
    assert_eq!(tab_id(&r), first_tab);
    snapshot_matches(&mut s.mcp, &second, "basic/second.html").await;

    let r = s.mcp.ok("browser_navigate", json!({ "step": "back" })).await;
    assert_eq!(r.data()["tab"]["url"], json!(index), "back: {}", r.raw);
    snapshot_matches(&mut s.mcp, &index, "basic/index.html").await;

    let r = s.mcp.ok("browser_navigate", json!({ "step": "forward" })).await;
    assert_eq!(r.data()["tab"]["url"], json!(second), "forward: {}", r.raw);
    snapshot_matches(&mut s.mcp, &second, "basic/second.html").await;

    let r = s.mcp.ok("browser_navigate", json!({ "step": "reload", "tab": first_tab })).await;
    assert_eq!(r.data()["tab"]["url"], json!(second), "reload: {}", r.raw);
    snapshot_matches(&mut s.mcp, &second, "basic/second.html").await;

    // A second tab becomes current; select switches back; close removes it.
    let other_tab = new_tab(&mut s.mcp, &index).await;
    assert_ne!(other_tab, first_tab);
    let tabs = list_tabs(&mut s.mcp).await;
    assert_eq!(tabs.len(), 2, "{tabs:?}");
    assert!(tabs.contains(&(first_tab, second.clone(), false)), "{tabs:?}");
    assert!(tabs.contains(&(other_tab, index.clone(), true)), "{tabs:?}");
    snapshot_matches(&mut s.mcp, &index, "basic/index.html").await;

    let r = s.mcp.ok("browser_tabs", json!({ "action": "select", "tab": first_tab })).await;
    assert_eq!(tab_id(&r), first_tab);
    snapshot_matches(&mut s.mcp, &second, "basic/second.html").await;
    // An explicit tab works without changing the current one.
    let r = snapshot(&mut s.mcp, json!({ "tab": other_tab })).await;
    assert_eq!(r.data()["url"], json!(index));

    s.mcp.ok("browser_tabs", json!({ "action": "close", "tab": other_tab })).await;
    let tabs = list_tabs(&mut s.mcp).await;
    assert_eq!(tabs.iter().map(|t| t.0).collect::<Vec<_>>(), vec![first_tab], "{tabs:?}");
    // Chromium agrees: no page shows the closed tab's URL any more.
    let pages = s.browser.pages().await.unwrap();
    assert!(!pages.iter().any(|p| p.url == index), "{pages:?}");
    assert!(pages.iter().any(|p| p.url == second), "{pages:?}");

    // browser_status answers and names the agent's tab.
    let st = s.mcp.ok("browser_status", json!({})).await;
    assert!(st.text().contains(&first_tab.to_string()), "{}", st.raw);

    // GET /status mirrors the agent's tabs.
    let status = s.daemon.status().await.unwrap();
    assert!(!status.browsers.is_empty());
}
