//! Issue 4's last two tools end to end: `browser_screenshot` (a real PNG
//! of the agent's tab; refused on a challenge page) and `browser_tabs
//! close` of a tab the person opened (high risk: the approval window asks;
//! Deny keeps the tab, Approve closes it; audit rows say `human`).

use std::time::Duration;

use serde_json::{Value, json};
use tests::{Human, Stack};

use super::new_tab;

const SHOW_WITHIN: Duration = Duration::from_secs(20);

/// Every audit row of the daemon (`chaperone audit --json`).
fn audit_rows(s: &Stack) -> Vec<Value> {
    let out = std::process::Command::new(tests::chaperone_bin())
        .arg("audit")
        .arg("--home")
        .arg(s.daemon.home())
        .arg("--json")
        .output()
        .expect("run chaperone audit");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("audit --json is a JSON array")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screenshots_and_closing_the_persons_tab() {
    let mut s = Stack::start_with_config(Some("approval_timeout_secs = 30\n")).await.expect("start the stack");
    let mut human = Human::new(&s.browser.cdp);

    // ---- a screenshot of the agent's tab is a real PNG
    let shop = s.url("/shop/index.html");
    let agent_tab = new_tab(&mut s.mcp, &shop).await;
    let r = s.mcp.ok("browser_screenshot", json!({})).await.expect_untrusted();
    let image = r.raw["content"]
        .as_array()
        .and_then(|c| c.iter().find(|b| b["type"] == "image"))
        .unwrap_or_else(|| panic!("no image block: {}", r.raw))
        .clone();
    assert_eq!(image["mimeType"], json!("image/png"));
    let png =
        shared::files::base64_decode(image["data"].as_str().expect("image data")).expect("the image data is base64");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG: {:?}", &png[..png.len().min(16)]);
    assert!(png.len() > 200, "a suspiciously small PNG: {} bytes", png.len());
    assert_eq!(r.data()["tab"], json!(agent_tab));
    assert_eq!(r.data()["url"], json!(shop));

    // ---- a page with a challenge is refused
    // (The navigation hands the tab to the person; they abort it.)
    let captcha = s.url("/challenges/recaptcha.html");
    human.popup_window().await.expect("the popup");
    let (r, _) = tokio::join!(s.mcp.call("browser_navigate", json!({ "url": captcha })), async {
        let (id, _) = human.wait_handoff(Duration::from_secs(20), None).await.expect("the hand-off is shown");
        human.hand_back(id, false).await.expect("press Abort");
    });
    assert_eq!(r.expect("browser_navigate").error_code(), Some("HUMAN_REQUIRED"));
    let r = s.mcp.call("browser_screenshot", json!({})).await.expect("browser_screenshot");
    assert_eq!(r.error_code(), Some("SECURITY_CHALLENGE"), "{}", r.raw);
    assert!(!r.raw.to_string().contains("\"image\""), "an image came back: {}", r.raw);

    // ---- the person's own tab (opened by them, not by the agent)
    let mail = s.url("/mail/index.html");
    let _person = s.browser.cdp.new_page(&mail).await.expect("the person opens a tab");
    let popup = human.popup().await.expect("open the popup");
    let ids = popup
        .evaluate(&format!("chrome.tabs.query({{}}).then(ts => ts.filter(t => t.url === {mail:?}).map(t => t.id))"))
        .await
        .unwrap();
    let person_tab = ids[0].as_i64().unwrap_or_else(|| panic!("no tab at {mail}: {ids}"));
    let open = |s: &Stack| {
        let cdp = s.browser.cdp.clone();
        let mail = mail.clone();
        async move { cdp.targets().await.unwrap().iter().any(|t| t.kind == "page" && t.url == mail) }
    };

    // Deny → APPROVAL_DENIED, the tab stays.
    let (r, shown) = tokio::join!(s.mcp.call("browser_tabs", json!({ "action": "close", "tab": person_tab })), async {
        let (win, req) = human.next_request(SHOW_WITHIN).await.expect("the approval window asks");
        human.deny(&win, req.request).await.expect("click Deny");
        req
    });
    let r = r.expect("browser_tabs close");
    assert_eq!(r.error_code(), Some("APPROVAL_DENIED"), "{}", r.raw);
    assert!(shown.text.contains("high"), "the window shows the risk: {}", shown.text);
    assert!(shown.text.contains("/mail/index.html"), "the window shows the tab's page: {}", shown.text);
    assert!(open(&s).await, "a denied close closed the tab");

    // Approve → closed.
    let (r, _) = tokio::join!(s.mcp.call("browser_tabs", json!({ "action": "close", "tab": person_tab })), async {
        let (win, req) = human.next_request(SHOW_WITHIN).await.expect("the approval window asks again");
        human.approve(&win, req.request).await.expect("click Approve");
    });
    let r = r.expect("browser_tabs close");
    assert!(!r.is_error(), "{}", r.raw);
    let gone =
        tests::poll(Duration::from_secs(5), Duration::from_millis(100), || async { (!open(&s).await).then_some(()) })
            .await;
    assert!(gone.is_some(), "the approved close did not close the tab");

    // A tab that does not exist.
    let r = s.mcp.call("browser_tabs", json!({ "action": "close", "tab": person_tab })).await.unwrap();
    assert_eq!(r.error_code(), Some("NOT_FOUND"), "{}", r.raw);

    // The agent's own tab closes without asking (once the window from the
    // last answer has gone away).
    let closed = tests::poll(Duration::from_secs(5), Duration::from_millis(100), || async {
        (!human.approval_window_open().await).then_some(())
    })
    .await;
    assert!(closed.is_some(), "the approval window stays open with nothing pending");
    let r = s.mcp.call("browser_tabs", json!({ "action": "close", "tab": agent_tab })).await.unwrap();
    assert!(!r.is_error(), "{}", r.raw);
    assert!(!human.approval_window_open().await, "closing the agent's own tab asked the person");

    // ---- the audit log
    let rows = audit_rows(&s);
    let shots: Vec<&Value> = rows.iter().filter(|r| r["tool"] == "browser_screenshot").collect();
    assert_eq!(shots.len(), 2, "{shots:?}");
    assert_eq!(shots[0]["outcome"], json!("ok"));
    assert_eq!(shots[1]["outcome"], json!("SECURITY_CHALLENGE"));
    let closes: Vec<&Value> =
        rows.iter().filter(|r| r["tool"] == "browser_tabs" && r["tab"] == json!(person_tab)).collect();
    let decided = |d: &str| closes.iter().any(|r| r["decision"] == json!(d) && r["decided_by"] == json!("human"));
    assert!(decided("denied"), "no denied/human row: {closes:#?}");
    assert!(decided("approved"), "no approved/human row: {closes:#?}");
    for r in &closes {
        assert!(!r["url"].as_str().unwrap_or("").contains('?'), "a query string: {r}");
    }
}
