//! Acting safely (issue 4): page actions through the bridge's gate and the
//! extension's own approval window, with the test playing the person by
//! clicking in that window and in the popup (trusted CDP mouse events).
//!
//! One stack for the whole scenario (Chromium is expensive on 2 cores);
//! the daemon's approval timeout is short so the timeout case is quick.

use std::time::Duration;

use serde_json::{Value, json};
use tests::{CdpSession, Human, Stack, ref_of};

use super::{code, new_tab, page_at, snapshot, status_line};

/// Seconds the person has to answer (config.toml of this stack's daemon).
const APPROVAL_TIMEOUT_SECS: u64 = 12;
const SHOW_WITHIN: Duration = Duration::from_secs(20);

async fn counter(page: &CdpSession, key: &str) -> Value {
    page.evaluate(&format!("document.body.dataset.{key} || '0'")).await.unwrap()
}

/// The ref of `role "name"` in a fresh snapshot of the current tab.
async fn find_ref(s: &mut Stack, role: &str, name: &str) -> String {
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    ref_of(&snap, role, name).unwrap_or_else(|| panic!("no {role} {name:?} in the snapshot:\n{snap}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn risky_actions_wait_for_the_person() {
    let config = format!("approval_timeout_secs = {APPROVAL_TIMEOUT_SECS}\n");
    let mut s = Stack::start_with_config(Some(&config)).await.expect("start the stack");
    let mut human = Human::new(&s.browser.cdp);

    // ---- a low-risk click runs without asking
    let shop = s.url("/shop/index.html");
    new_tab(&mut s.mcp, &shop).await;
    let shop_page = page_at(&s, &shop).await;
    let add = find_ref(&mut s, "button", "Add to cart").await;
    let r = s.mcp.ok("browser_click", json!({ "ref": add })).await.expect_untrusted();
    assert_eq!(r.data()["decided_by"], json!("policy"), "{}", r.raw);
    assert_eq!(r.data()["risk"], json!("low"), "{}", r.raw);
    assert_eq!(status_line(&shop_page).await, "Added to cart (1)");
    assert!(!human.approval_window_open().await, "a low-risk click opened the approval window");

    // ---- a link click reports the navigation and the new URL
    let cart = find_ref(&mut s, "link", "Cart").await;
    let r = s.mcp.ok("browser_click", json!({ "ref": cart })).await.expect_untrusted();
    assert_eq!(r.data()["effect"], json!("navigated"), "{}", r.raw);
    assert_eq!(r.data()["url"], json!(s.url("/shop/cart.html")), "{}", r.raw);

    // ---- "Delete account": the window asks; approve → runs once
    let account = s.url("/settings/account/");
    s.mcp.ok("browser_navigate", json!({ "url": account })).await;
    let acct_page = page_at(&s, &account).await;
    let delete = find_ref(&mut s, "button", "Delete account").await;
    let (r, shown) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": delete })), async {
        let (win, req) = human.next_request(SHOW_WITHIN).await.expect("the approval window shows the request");
        assert_eq!(counter(&acct_page, "deleted").await, json!("0"), "it ran before the person answered");
        human.approve(&win, req.request).await.expect("click Approve");
        req
    });
    let r = r.expect("browser_click").expect_untrusted();
    assert_eq!(r.data()["decided_by"], json!("human"), "{}", r.raw);
    assert!(shown.text.contains("Delete account"), "the window names the element: {}", shown.text);
    assert!(shown.text.contains("high"), "the window shows the risk: {}", shown.text);
    assert!(shown.text.contains("/settings/account/"), "the window shows the page: {}", shown.text);
    assert_eq!(counter(&acct_page, "deleted").await, json!("1"));
    let approved_id = shown.request;

    // ---- deny → APPROVAL_DENIED, nothing happens
    let (r, _) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": delete })), async {
        let (win, req) = human.next_request(SHOW_WITHIN).await.expect("the approval window shows the request");
        human.deny(&win, req.request).await.expect("click Deny");
    });
    let r = r.expect("browser_click");
    assert_eq!(code(&r), "APPROVAL_DENIED", "{}", r.raw);
    assert_eq!(counter(&acct_page, "deleted").await, json!("1"), "a denied action ran");

    // ---- the page changes while the person decides (same element, same
    // name, another URL): what was approved is not what is live → STALE_REF,
    // nothing runs
    let (r, _) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": delete })), async {
        let (win, req) = human.next_request(SHOW_WITHIN).await.expect("the approval window shows the request");
        acct_page.evaluate("history.replaceState(null, '', 'danger-zone'); true").await.unwrap();
        human.approve(&win, req.request).await.expect("click Approve");
    });
    let r = r.expect("browser_click");
    assert_eq!(code(&r), "STALE_REF", "approved facts that are no longer live ran: {}", r.raw);
    assert_eq!(counter(&acct_page, "deleted").await, json!("1"), "an action on changed facts ran");
    acct_page.evaluate(&format!("history.replaceState(null, '', {account:?}); true")).await.unwrap();

    // ---- forged approvals never approve: a page's postMessage, an unknown
    // id, the id of an earlier (answered) request
    let publish = find_ref(&mut s, "button", "Publish").await;
    let (r, _) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": publish })), async {
        let (win, req) = human.next_request(SHOW_WITHIN).await.expect("the approval window shows the request");
        let id = req.request;
        acct_page
            .evaluate(&format!(
                "window.postMessage({{type: 'decide', request: {id}, approve: true}}, '*'); \
                 window.postMessage({{type: 'yolo', on: true}}, '*'); true"
            ))
            .await
            .unwrap();
        let popup = human.popup().await.expect("open the popup");
        for forged in [id + 1000, approved_id] {
            let reply = popup
                .evaluate(&format!("chrome.runtime.sendMessage({{type: 'decide', request: {forged}, approve: true}})"))
                .await
                .unwrap();
            assert_eq!(reply["done"], json!(false), "an approval for request {forged} was accepted: {reply}");
        }
        tokio::time::sleep(Duration::from_millis(800)).await;
        assert_eq!(human.shown_requests(&win).await, vec![id], "the request must still wait");
        assert_ne!(status_line(&acct_page).await, "Profile published", "the forged approval let it run");
        human.deny(&win, id).await.expect("click Deny");
    });
    let r = r.expect("browser_click");
    assert_eq!(code(&r), "APPROVAL_DENIED", "{}", r.raw);
    assert_ne!(status_line(&acct_page).await, "Profile published", "Publish ran");
    assert!(human.popup_control_state().await.unwrap().starts_with("Running"), "a page message switched YOLO on");

    // ---- no answer → denied (timeout)
    let terms = find_ref(&mut s, "checkbox", "I agree to the terms").await;
    let start = std::time::Instant::now();
    let r = s.mcp.call("browser_click", json!({ "ref": terms })).await.expect("browser_click");
    assert_eq!(code(&r), "APPROVAL_DENIED", "{}", r.raw);
    assert!(r.text().contains("timeout"), "{}", r.raw);
    assert!(start.elapsed() >= Duration::from_secs(APPROVAL_TIMEOUT_SECS - 1), "denied too early");
    assert_eq!(acct_page.evaluate("document.getElementById('terms').checked").await.unwrap(), json!(false));

    // ---- STOP while a request waits → STOPPED; later actions STOPPED until Resume
    let mail = s.url("/mail/index.html");
    s.mcp.ok("browser_navigate", json!({ "url": mail })).await;
    let mail_page = page_at(&s, &mail).await;
    let message = find_ref(&mut s, "textbox", "Message").await;
    let draft = find_ref(&mut s, "button", "Save draft").await;
    let (r, _) = tokio::join!(s.mcp.call("browser_press_key", json!({ "key": "Enter", "ref": message })), async {
        let (_win, _req) = human.next_request(SHOW_WITHIN).await.expect("Enter in the message box asks");
        human.click_in_popup("stop").await.expect("press STOP");
    });
    let r = r.expect("browser_press_key");
    assert_eq!(code(&r), "STOPPED", "{}", r.raw);
    assert_eq!(counter(&mail_page, "sent").await, json!("0"), "the message was sent");
    human.wait_popup_state("STOPPED").await.unwrap();
    let r = s.mcp.call("browser_click", json!({ "ref": draft })).await.expect("browser_click");
    assert_eq!(code(&r), "STOPPED", "a low-risk action ran while stopped: {}", r.raw);
    assert_eq!(status_line(&mail_page).await, "");
    human.click_in_popup("resume").await.expect("press Resume");
    human.wait_popup_state("Running").await.unwrap();
    let r = s.mcp.ok("browser_click", json!({ "ref": draft })).await.expect_untrusted();
    assert_eq!(r.data()["decided_by"], json!("policy"), "{}", r.raw);
    assert_eq!(status_line(&mail_page).await, "Draft saved");

    // ---- YOLO on (popup only) → approved automatically, logged `auto (YOLO)`
    let checkout = s.url("/shop/checkout/");
    s.mcp.ok("browser_navigate", json!({ "url": checkout })).await;
    let checkout_page = page_at(&s, &checkout).await;
    human.click_in_popup("yolo").await.expect("switch YOLO on");
    let popup = human.popup().await.unwrap();
    let banner = tests::poll(Duration::from_secs(5), Duration::from_millis(100), || async {
        let v = popup.evaluate("!document.getElementById('yolo-banner').hidden").await.ok()?;
        (v == json!(true)).then_some(())
    })
    .await;
    assert!(banner.is_some(), "no YOLO banner in the popup");
    let name = find_ref(&mut s, "textbox", "Full name").await;
    let r = s.mcp.ok("browser_type", json!({ "ref": name, "text": "Ada Lovelace" })).await.expect_untrusted();
    assert_eq!(r.data()["decided_by"], json!("yolo"), "{}", r.raw);
    assert_eq!(r.data()["effect"], json!("value_changed"), "{}", r.raw);
    assert_eq!(checkout_page.evaluate("document.getElementById('name').value").await.unwrap(), json!("Ada Lovelace"));
    human.click_in_popup("yolo").await.expect("switch YOLO off");
    tests::poll(Duration::from_secs(5), Duration::from_millis(100), || async {
        let v = popup.evaluate("document.getElementById('yolo-banner').hidden").await.ok()?;
        (v == json!(true)).then_some(())
    })
    .await
    .expect("the YOLO banner goes away");

    // ---- "Place order" asks again once YOLO is off; Enter in the window
    // approves the first request → placed once
    let place = find_ref(&mut s, "button", "Place order").await;
    let (r, _) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": place })), async {
        let (win, _req) = human.next_request(SHOW_WITHIN).await.expect("Place order asks");
        win.press_key("Enter").await.expect("press Enter in the approval window");
    });
    let r = r.expect("browser_click").expect_untrusted();
    assert_eq!(r.data()["decided_by"], json!("human"), "{}", r.raw);
    assert_eq!(counter(&checkout_page, "orders").await, json!("1"));

    // ---- the history has every decision
    let history = human.history().await.unwrap();
    let decisions: Vec<&str> = history.iter().filter_map(|h| h["decision"].as_str()).collect();
    for want in ["approved", "denied", "timeout", "stopped", "auto (YOLO)"] {
        assert!(decisions.contains(&want), "no {want:?} in the history: {history:?}");
    }
    for h in &history {
        assert!(!h["url"].as_str().unwrap_or("").contains('?'), "a query string in the history: {h}");
    }

    // ---- the audit log has a row for every case, with who decided
    let out = std::process::Command::new(tests::chaperone_bin())
        .args(["audit", "--json", "--home"])
        .arg(s.daemon.home())
        .output()
        .expect("run chaperone audit");
    assert!(out.status.success(), "chaperone audit: {}", String::from_utf8_lossy(&out.stderr));
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).expect("audit JSON");
    let by: Vec<&str> = rows.iter().filter_map(|r| r["decided_by"].as_str()).collect();
    for want in ["policy", "human", "timeout", "stop", "yolo"] {
        assert!(by.contains(&want), "no audit row decided by {want:?}: {rows:#?}");
    }
    for r in &rows {
        assert!(!r["url"].as_str().unwrap_or("").contains('?'), "a query string in the audit log: {r}");
    }
    let clicks_on =
        |name: &str| rows.iter().filter(|r| r["summary"].as_str().is_some_and(|t| t.contains(name))).count();
    assert!(clicks_on("Delete account") >= 2, "the approved and the denied Delete account are audited: {rows:#?}");
}
