//! Navigation is judged like a link (issue 29): `browser_navigate`,
//! `browser_tabs new` and a flow's navigate step classify the target URL
//! with the link-target rules (`shared::navigation`), and the person's
//! policy decides. A URL that acts when loaded (`/account/delete?confirm=1`)
//! is refused under `high = "deny"` and asked in the approval window under
//! `confirm`; a person's Deny (trusted click) loads nothing. Whether
//! anything loaded is read over CDP (the browser's own list of pages), not
//! from the bridge. A harmless URL loads (control), and an approved risky
//! one too (the approval really gates it).
//!
//! One stack: the fixture server answers on 127.0.0.1 (default policy:
//! high asks) and on localhost, where the policy denies high risk.

use std::time::Duration;

use serde_json::{Value, json};
use tests::{Human, Stack};

use super::{code, new_tab};

const CONFIG: &str = "approval_timeout_secs = 60\n\n[[sites]]\norigin = \"http://localhost:*\"\nhigh = \"deny\"\n";
const ASK_WITHIN: Duration = Duration::from_secs(60);

/// Whether any page of the browser shows (or loads) the delete URL.
async fn delete_page_loaded(s: &Stack) -> bool {
    let pages = s.browser.pages().await.expect("list pages over CDP");
    pages.iter().any(|p| p.url.contains("/account/delete"))
}

fn audit_rows(s: &Stack) -> Vec<Value> {
    let out = s.daemon.cli(&["audit", "--json"], "").expect("run chaperone audit");
    assert_eq!(out.code, 0, "chaperone audit --json: {}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("audit JSON: {e}: {}", out.stdout))
}

/// Runs `call` while the person denies the one request it raises (trusted
/// click on Deny); returns the call's result and what the window showed.
async fn person_denies(
    human: &Human,
    call: impl std::future::Future<Output = anyhow::Result<tests::ToolResult>>,
) -> (tests::ToolResult, String) {
    let person = async {
        let (win, req) = human.next_request(ASK_WITHIN).await.expect("the approval window shows the navigation");
        human.deny(&win, req.request).await.expect("click Deny");
        req.text
    };
    tests::with_person(call, person, Duration::from_secs(15)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navigations_that_act_are_refused_or_asked_like_links() {
    let mut s = Stack::start_with_config(Some(CONFIG)).await.expect("start the stack");
    let human = Human::new(&s.browser.cdp);
    let port = s.server.port();
    let home = s.url("/navrisk/index.html");
    let risky = s.url("/navrisk/account/delete/?confirm=1");
    let denied_home = format!("http://localhost:{port}/navrisk/index.html");
    let denied_risky = format!("http://localhost:{port}/navrisk/account/delete/?confirm=1");

    // Control: a harmless URL loads, on both host names.
    let tab = new_tab(&mut s.mcp, &home).await;
    s.mcp.ok("browser_navigate", json!({ "url": denied_home })).await.expect_untrusted();

    // ---- high = "deny" (localhost): refused, nothing loaded, nobody asked.
    let r = s.mcp.call("browser_navigate", json!({ "url": denied_risky })).await.unwrap();
    assert_eq!(code(&r), "PERMISSION_DENIED", "{}", r.raw);
    assert!(r.text().contains("nothing was loaded") && r.text().contains("delete"), "{}", r.text());
    let r = s.mcp.call("browser_tabs", json!({ "action": "new", "url": denied_risky })).await.unwrap();
    assert_eq!(code(&r), "PERMISSION_DENIED", "{}", r.raw);
    let tabs = s.mcp.ok("browser_tabs", json!({ "action": "list" })).await;
    assert_eq!(tabs.data()["tabs"].as_array().map(Vec::len), Some(1), "no tab was opened: {}", tabs.raw);
    let flow = json!({
        "title": "delete",
        "steps": [{ "type": "navigate", "url": denied_risky }]
    });
    tests::flowshop::import(&s, &flow, "delete-denied");
    let r = s.mcp.call("flow_run", json!({ "name": "delete-denied", "params": {} })).await.unwrap();
    assert!(r.text().contains("PERMISSION_DENIED"), "the flow's navigate step is refused: {}", r.text());
    assert!(!human.approval_window_open().await, "a denied navigation asks nobody");
    assert!(!delete_page_loaded(&s).await, "a denied navigation loaded the page");

    // ---- confirm (127.0.0.1): the person is asked; Deny loads nothing.
    let call = s.mcp.call("browser_navigate", json!({ "url": risky, "tab": tab }));
    let (r, shown) = person_denies(&human, call).await;
    assert_eq!(code(&r), "APPROVAL_DENIED", "{}", r.raw);
    assert!(shown.contains("/navrisk/account/delete/?confirm=1"), "the window names the URL: {shown}");
    assert!(shown.contains("may act when loaded"), "and why it asks: {shown}");
    assert!(!delete_page_loaded(&s).await, "a denied navigation loaded the page");

    let call = s.mcp.call("browser_tabs", json!({ "action": "new", "url": risky }));
    let (r, _) = person_denies(&human, call).await;
    assert_eq!(code(&r), "APPROVAL_DENIED", "{}", r.raw);
    let tabs = s.mcp.ok("browser_tabs", json!({ "action": "list" })).await;
    assert_eq!(tabs.data()["tabs"].as_array().map(Vec::len), Some(1), "no tab was opened: {}", tabs.raw);
    assert!(!delete_page_loaded(&s).await, "a denied new tab loaded the page");

    let flow = json!({ "title": "delete", "steps": [{ "type": "navigate", "url": risky }] });
    tests::flowshop::import(&s, &flow, "delete-asked");
    let call = s.mcp.call("flow_run", json!({ "name": "delete-asked", "params": {} }));
    let (r, _) = person_denies(&human, call).await;
    assert!(r.text().contains("APPROVAL_DENIED"), "the flow step is refused: {}", r.text());
    assert!(!delete_page_loaded(&s).await, "a denied flow step loaded the page");

    // Control: approved, it loads (the question really gated it).
    let (r, ()) = {
        let call = s.mcp.call("browser_navigate", json!({ "url": risky, "tab": tab }));
        let person = async {
            let (win, req) = human.next_request(ASK_WITHIN).await.expect("asked again");
            human.approve(&win, req.request).await.expect("click Approve");
        };
        tokio::join!(call, person)
    };
    let r = r.unwrap();
    assert!(!r.is_error(), "{}", r.raw);
    assert!(delete_page_loaded(&s).await, "the approved navigation loaded");

    // A reload of that URL acts again: asked again.
    let call = s.mcp.call("browser_navigate", json!({ "step": "reload", "tab": tab }));
    let (r, shown) = person_denies(&human, call).await;
    assert_eq!(code(&r), "APPROVAL_DENIED", "{}", r.raw);
    assert!(shown.contains("/navrisk/account/delete/"), "{shown}");

    // The audit log has each decision with its risk.
    let rows = audit_rows(&s);
    let nav: Vec<&Value> = rows.iter().filter(|r| r["summary"] == "navigate" && r["risk"] == "high").collect();
    let decisions: Vec<&str> = nav.iter().filter_map(|r| r["decision"].as_str()).collect();
    assert!(decisions.iter().filter(|d| **d == "deny").count() >= 3, "{decisions:?}");
    assert!(decisions.iter().filter(|d| **d == "denied").count() >= 4, "{decisions:?}");
    assert!(decisions.contains(&"approved"), "{decisions:?}");
}
