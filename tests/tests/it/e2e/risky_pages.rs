//! The risky controls of the mail, settings and shop fixtures (issue 4)
//! that `approvals.rs` does not already walk through: "Send" (deny, then
//! approve → sent once), Enter in the message box (deny), "Publish"
//! (approve → once), the consent checkbox (Esc in the window denies),
//! typing into a field on /checkout (deny) and `browser_fill_form` there
//! (each field asks on its own). Every one opens the approval window, which
//! names the element, the risk and the page; a denial leaves the page as it
//! was. The test plays the person in the extension's own window.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{Value, json};
use tests::{CdpSession, Human, ShownRequest, Stack, ref_of};

use super::{code, new_tab, page_at, snapshot};

const SHOW_WITHIN: Duration = Duration::from_secs(20);

/// Refs of `(role, name)` pairs in one fresh snapshot of the current tab.
async fn refs(s: &mut Stack, want: &[(&str, &str)]) -> Vec<String> {
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    want.iter()
        .map(|(role, name)| ref_of(&snap, role, name).unwrap_or_else(|| panic!("no {role} {name:?} in:\n{snap}")))
        .collect()
}

/// The page's visible state for the ids given, plus its URL and status line
/// and its counters (`data-*` on the body).
async fn page_state(page: &CdpSession, fields: &[&str]) -> Value {
    let ids = serde_json::to_string(fields).unwrap();
    page.evaluate(&format!(
        "(() => {{ const f = {{}}; for (const id of {ids}) {{ const e = document.getElementById(id); \
         f[id] = e.type === 'checkbox' ? e.checked : e.value; }} \
         return {{ url: location.href, status: document.getElementById('status').textContent, \
         counters: {{ ...document.body.dataset }}, fields: f }}; }})()"
    ))
    .await
    .expect("read the page")
}

/// Waits for a request the approval window shows that is not in `seen`
/// (the window may be closing after the previous answer and reopen).
async fn new_request(human: &Human, seen: &mut HashSet<u64>) -> (CdpSession, ShownRequest) {
    human.new_request(seen, SHOW_WITHIN).await.expect("the approval window shows a new request")
}

/// Checks what the window shows about the request.
fn assert_shown(shown: &ShownRequest, element: &str, page: &str) {
    assert!(shown.text.contains(element), "the window does not name {element:?}: {}", shown.text);
    assert!(shown.text.contains("Risk: high"), "the window does not show the risk: {}", shown.text);
    assert!(shown.text.contains(page), "the window does not show the page {page}: {}", shown.text);
    assert!(shown.text.contains("Approve") && shown.text.contains("Deny"), "no buttons: {}", shown.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn risky_controls_on_the_fixture_sites_ask_the_person() {
    let mut s = Stack::start_with_config(Some("approval_timeout_secs = 60\n")).await.expect("start the stack");
    let human = Human::new(&s.browser.cdp);
    let mut seen = HashSet::new();

    // ---- mail: compose (low risk, no window), then "Send"
    let mail = s.url("/mail/index.html");
    new_tab(&mut s.mcp, &mail).await;
    let mail_page = page_at(&s, &mail).await;
    let r =
        refs(&mut s, &[("textbox", "To"), ("textbox", "Subject"), ("textbox", "Message"), ("button", "Send")]).await;
    let (to, subject, message, send) = (&r[0], &r[1], &r[2], &r[3]);
    for (field, text) in [(to, "ada@example.com"), (subject, "Lunch"), (message, "See you at noon")] {
        let r = s.mcp.ok("browser_type", json!({ "ref": field, "text": text })).await.expect_untrusted();
        assert_eq!(r.data()["decided_by"], json!("policy"), "typing a draft asked the person: {}", r.raw);
    }
    assert!(!human.approval_window_open().await, "composing opened the approval window");
    let fields = ["to", "subject", "message"];
    let composed = page_state(&mail_page, &fields).await;
    assert_eq!(composed["fields"]["message"], json!("See you at noon"), "{composed}");

    // Send, denied: not sent, the draft is still there
    let (r, shown) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": send })), async {
        let (win, shown) = new_request(&human, &mut seen).await;
        assert_eq!(page_state(&mail_page, &fields).await, composed, "it ran before the person answered");
        human.deny(&win, shown.request).await.expect("click Deny");
        shown
    });
    let r = r.expect("browser_click");
    assert_eq!(code(&r), "APPROVAL_DENIED", "{}", r.raw);
    assert_shown(&shown, "Send", "/mail/index.html");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(page_state(&mail_page, &fields).await, composed, "a denied Send changed the page");

    // Send, approved: sent exactly once
    let (r, _) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": send })), async {
        let (win, shown) = new_request(&human, &mut seen).await;
        assert_eq!(page_state(&mail_page, &fields).await["counters"], json!({}), "sent before the approval");
        human.approve(&win, shown.request).await.expect("click Approve");
    });
    let r = r.expect("browser_click").expect_untrusted();
    assert_eq!(r.data()["decided_by"], json!("human"), "{}", r.raw);
    assert_eq!(r.data()["risk"], json!("high"), "{}", r.raw);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let sent = page_state(&mail_page, &fields).await;
    assert_eq!(sent["counters"], json!({ "sent": "1" }), "{sent}");
    assert_eq!(sent["status"], json!("Message sent (1)"));
    assert_eq!(sent["url"], json!(mail), "{sent}");

    // Enter in the message box, denied: not sent again, the text unchanged
    let (r, shown) = tokio::join!(s.mcp.call("browser_press_key", json!({ "key": "Enter", "ref": message })), async {
        let (win, shown) = new_request(&human, &mut seen).await;
        human.deny(&win, shown.request).await.expect("click Deny");
        shown
    });
    let r = r.expect("browser_press_key");
    assert_eq!(code(&r), "APPROVAL_DENIED", "{}", r.raw);
    assert_shown(&shown, "Message", "/mail/index.html");
    assert!(shown.text.contains("Enter"), "the window does not say which key: {}", shown.text);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(page_state(&mail_page, &fields).await, sent, "a denied Enter changed the page");

    // ---- settings: "Publish" approved → published once
    let account = s.url("/settings/account/");
    s.mcp.ok("browser_navigate", json!({ "url": account })).await;
    let acct_page = page_at(&s, &account).await;
    let r = refs(&mut s, &[("button", "Publish"), ("checkbox", "I agree to the terms")]).await;
    let (publish, terms) = (&r[0], &r[1]);
    let fields = ["bio", "terms"];
    let untouched = page_state(&acct_page, &fields).await;
    let (r, shown) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": publish })), async {
        let (win, shown) = new_request(&human, &mut seen).await;
        assert_eq!(page_state(&acct_page, &fields).await, untouched, "it ran before the person answered");
        human.approve(&win, shown.request).await.expect("click Approve");
        shown
    });
    let r = r.expect("browser_click").expect_untrusted();
    assert_eq!(r.data()["decided_by"], json!("human"), "{}", r.raw);
    assert_shown(&shown, "Publish", "/settings/account/");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let published = page_state(&acct_page, &fields).await;
    assert_eq!(published["counters"], json!({ "published": "1" }), "{published}");
    assert_eq!(published["status"], json!("Profile published"));

    // The consent checkbox: Esc in the window denies it; it stays unchecked
    let (r, shown) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": terms })), async {
        let (win, shown) = new_request(&human, &mut seen).await;
        win.press_key("Escape").await.expect("press Esc in the approval window");
        shown
    });
    let r = r.expect("browser_click");
    assert_eq!(code(&r), "APPROVAL_DENIED", "{}", r.raw);
    assert_shown(&shown, "I agree to the terms", "/settings/account/");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(page_state(&acct_page, &fields).await, published, "a denied consent checkbox changed the page");

    // ---- shop: typing into a field on /checkout asks; denied → the field stays empty
    let checkout = s.url("/shop/checkout/");
    s.mcp.ok("browser_navigate", json!({ "url": checkout })).await;
    let checkout_page = page_at(&s, &checkout).await;
    let r = refs(&mut s, &[("textbox", "Full name"), ("textbox", "Street"), ("textbox", "City")]).await;
    let (name, street, city) = (&r[0], &r[1], &r[2]);
    let fields = ["name", "street", "city"];
    let empty = page_state(&checkout_page, &fields).await;
    let (r, shown) = tokio::join!(s.mcp.call("browser_type", json!({ "ref": name, "text": "Grace Hopper" })), async {
        let (win, shown) = new_request(&human, &mut seen).await;
        human.deny(&win, shown.request).await.expect("click Deny");
        shown
    });
    let r = r.expect("browser_type");
    assert_eq!(code(&r), "APPROVAL_DENIED", "{}", r.raw);
    assert_shown(&shown, "Full name", "/shop/checkout/");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(page_state(&checkout_page, &fields).await, empty, "a denied typing changed the page");

    // browser_fill_form there: each field asks on its own; the first
    // approved, the second denied → only the first is filled
    let (r, _) = tokio::join!(
        s.mcp.call(
            "browser_fill_form",
            json!({ "fields": [{ "ref": street, "value": "1 Main St" }, { "ref": city, "value": "Arlington" }] })
        ),
        async {
            let (win, first) = new_request(&human, &mut seen).await;
            assert!(first.text.contains("Street"), "the first request is the first field: {}", first.text);
            human.approve(&win, first.request).await.expect("click Approve");
            let (win, second) = new_request(&human, &mut seen).await;
            assert!(second.text.contains("City"), "the second request is the second field: {}", second.text);
            assert_eq!(
                page_state(&checkout_page, &fields).await["fields"]["city"],
                json!(""),
                "the second field was filled before its approval"
            );
            human.deny(&win, second.request).await.expect("click Deny");
        }
    );
    let r = r.expect("browser_fill_form");
    assert_eq!(code(&r), "APPROVAL_DENIED", "{}", r.raw);
    assert!(r.text().contains("first 1 field"), "the error says what was filled: {}", r.raw);
    let state = page_state(&checkout_page, &fields).await;
    assert_eq!(state["fields"], json!({ "name": "", "street": "1 Main St", "city": "" }), "{state}");
    assert_eq!(state["counters"], json!({}), "an order was placed: {state}");

    // ---- the extension's history and the bridge's audit log agree
    let mut human = human;
    let history = human.history().await.unwrap();
    let decisions: Vec<&str> = history.iter().filter_map(|h| h["decision"].as_str()).collect();
    assert_eq!(
        decisions,
        ["denied", "approved", "denied", "approved", "denied", "denied", "approved", "denied"],
        "{history:#?}"
    );
    let out = s.daemon.cli(&["audit", "--json"], "").expect("run chaperone audit");
    assert_eq!(out.code, 0, "chaperone audit --json: {}", out.stderr);
    let rows: Vec<Value> = serde_json::from_str(&out.stdout).expect("audit JSON");
    let human_rows: Vec<&Value> = rows.iter().filter(|r| r["decided_by"] == json!("human")).collect();
    let approved = human_rows.iter().filter(|r| r["decision"] == json!("approved")).count();
    let denied = human_rows.iter().filter(|r| r["decision"] == json!("denied")).count();
    assert_eq!((approved, denied), (3, 5), "decision rows by the person: {human_rows:#?}");
    for r in &rows {
        assert!(!r["url"].as_str().unwrap_or("").contains('?'), "a query string in the audit log: {r}");
    }
}
