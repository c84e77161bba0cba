//! A site the person's policy denies (`[[sites]] access = "deny"`, issue 4):
//! navigation there and every action there is refused with
//! `PERMISSION_DENIED` before the extension hears of it — the page shows
//! that nothing happened, no approval window opens — and the audit log has
//! each refusal.
//!
//! The fixture server answers on 127.0.0.1; `http://localhost:PORT` reaches
//! the same server under another origin, which this stack's policy denies.
//! When the person takes the agent's tab there by hand, the agent's first
//! read (refused) tells the bridge where the tab is; the actions follow.

use std::time::Duration;

use serde_json::{Value, json};
use tests::{CdpSession, Human, Stack, ref_of};

use super::{code, new_tab, page_at, snapshot};

const CONFIG: &str = "approval_timeout_secs = 20\n\n[[sites]]\norigin = \"http://localhost:*\"\naccess = \"deny\"\n";

/// What the mail page shows: status line, sent counter, the three fields,
/// the scroll position, and whether anything ever had focus or a hover.
async fn mail_state(page: &CdpSession) -> Value {
    page.evaluate(
        "({ url: location.href, status: document.getElementById('status').textContent, \
            sent: document.body.dataset.sent || '0', to: document.getElementById('to').value, \
            subject: document.getElementById('subject').value, \
            message: document.getElementById('message').value, scrollY: window.scrollY, \
            touched: window.__touched || [] })",
    )
    .await
    .expect("read the mail page")
}

/// Records every focus, key, pointer and input event the page sees (a
/// test probe in the page: anything dispatched there would show up).
async fn watch_events(page: &CdpSession) {
    page.evaluate(
        "window.__touched = []; for (const t of ['focusin', 'keydown', 'pointerover', 'mouseover', 'click', \
         'input', 'change', 'submit', 'scroll']) { document.addEventListener(t, e => \
         window.__touched.push(t + ':' + (e.target.id || e.target.nodeName)), true); } true",
    )
    .await
    .expect("install the event probe");
}

fn audit_rows(s: &Stack) -> Vec<Value> {
    let out = s.daemon.cli(&["audit", "--json"], "").expect("run chaperone audit");
    assert_eq!(out.code, 0, "chaperone audit --json: {}", out.stderr);
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("audit JSON: {e}: {}", out.stdout))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_site_refuses_navigation_and_every_action() {
    let mut s = Stack::start_with_config(Some(CONFIG)).await.expect("start the stack");
    let mut human = Human::new(&s.browser.cdp);
    let port = s.server.port();
    let allowed = s.url("/mail/index.html");
    let denied = format!("http://localhost:{port}/mail/index.html");
    let denied_with_query = format!("{denied}?draft=42");

    // ---- opening a tab there: refused, no tab appears
    let r = s.mcp.call("browser_tabs", json!({ "action": "new", "url": denied_with_query })).await.unwrap();
    assert_eq!(code(&r), "PERMISSION_DENIED", "{}", r.raw);
    assert!(r.text().contains("http://localhost:*"), "the refusal names the rule: {}", r.raw);
    // Other spellings the browser reads as the same host (percent-encoded,
    // full-width letters) are the same site.
    let spelled = [
        format!("http://loc%61lhost:{port}/mail/index.html"),
        format!("http://\u{ff4c}ocalhost:{port}/mail/index.html"),
    ];
    for url in &spelled {
        let r = s.mcp.call("browser_tabs", json!({ "action": "new", "url": url })).await.unwrap();
        assert_eq!(code(&r), "PERMISSION_DENIED", "browser_tabs new {url}: {}", r.raw);
    }
    let on_denied = |ts: &[tests::TargetInfo]| ts.iter().any(|t| t.url.starts_with("http://localhost:"));
    assert!(!on_denied(&s.browser.pages().await.unwrap()), "a tab was opened on the denied site");

    // ---- an allowed tab, then navigation to the denied site: refused, the tab stays
    let tab = new_tab(&mut s.mcp, &allowed).await;
    let page = page_at(&s, &allowed).await;
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let refs: Vec<String> = [("textbox", "To"), ("textbox", "Message"), ("button", "Send"), ("button", "Save draft")]
        .iter()
        .map(|(role, name)| ref_of(&snap, role, name).unwrap_or_else(|| panic!("no {role} {name:?}:\n{snap}")))
        .collect();
    let [to, message, send, draft] = [&refs[0], &refs[1], &refs[2], &refs[3]];

    for args in [json!({ "url": denied }), json!({ "url": denied_with_query, "tab": tab })] {
        let r = s.mcp.call("browser_navigate", args.clone()).await.unwrap();
        assert_eq!(code(&r), "PERMISSION_DENIED", "browser_navigate {args}: {}", r.raw);
    }
    // Spelled differently, the same origin: still refused before dispatch.
    let upper = format!("HTTP://LOCALHOST:{port}/mail/index.html");
    for url in spelled.iter().chain([&upper]) {
        let r = s.mcp.call("browser_navigate", json!({ "url": url })).await.unwrap();
        assert_eq!(code(&r), "PERMISSION_DENIED", "browser_navigate {url}: {}", r.raw);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(mail_state(&page).await["url"], json!(allowed), "the tab left the allowed page");
    assert!(!on_denied(&s.browser.pages().await.unwrap()), "a tab reached the denied site");

    // ---- the person takes the agent's tab to the denied site themselves:
    // reading it is refused and shows nothing of the page
    page.navigate(&denied).await.expect("the person navigates the tab");
    watch_events(&page).await;
    let before = mail_state(&page).await;
    assert_eq!(before["url"], json!(denied));
    // Before the agent has looked, the bridge still thinks the tab is on the
    // allowed site; an action without a ref is refused by the extension,
    // which sees where the tab really is (checked with `touched` below).
    let r = s.mcp.call("browser_press_key", json!({ "key": "Tab" })).await.unwrap();
    assert_eq!(code(&r), "STALE_REF", "an action decided for another site: {}", r.raw);
    for (tool, args) in [
        ("browser_snapshot", json!({})),
        ("browser_extract_text", json!({})),
        ("browser_wait_for", json!({ "text": "New message", "ms": 1000 })),
    ] {
        let r = s.mcp.call(tool, args).await.unwrap();
        assert_eq!(code(&r), "PERMISSION_DENIED", "{tool}: {}", r.raw);
        assert!(!r.raw.to_string().contains("New message"), "{tool} showed the denied page: {}", r.raw);
    }

    // ---- every action there: PERMISSION_DENIED, nothing reaches the page
    let actions: Vec<(&str, Value)> = vec![
        ("browser_click", json!({ "ref": draft })),
        ("browser_click", json!({ "ref": send, "tab": tab })),
        ("browser_type", json!({ "ref": to, "text": "eve@example.com" })),
        ("browser_type", json!({ "ref": message, "text": "hello", "submit": true })),
        ("browser_fill_form", json!({ "fields": [{ "ref": to, "value": "eve@example.com" }], "submit": true })),
        ("browser_select_option", json!({ "ref": to, "values": ["x"] })),
        ("browser_press_key", json!({ "key": "Enter", "ref": message })),
        ("browser_press_key", json!({ "key": "Enter" })),
        ("browser_scroll", json!({ "direction": "down" })),
        ("browser_scroll", json!({ "ref": send })),
        ("browser_hover", json!({ "ref": send })),
        ("browser_screenshot", json!({})),
    ];
    for (tool, args) in &actions {
        let r = s.mcp.call(tool, args.clone()).await.unwrap_or_else(|e| panic!("{tool}: {e:#}"));
        assert_eq!(code(&r), "PERMISSION_DENIED", "{tool} {args} on the denied site: {}", r.raw);
        assert!(
            !r.raw.to_string().contains(&format!("localhost:{port}/mail/index.html?")),
            "{tool} leaked the URL: {}",
            r.raw
        );
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = mail_state(&page).await;
    assert_eq!(after, before, "something happened on the denied page");
    assert_eq!(after["touched"], json!([]), "events reached the denied page: {after}");
    assert!(!human.approval_window_open().await, "an approval window opened for a denied site");
    assert!(human.history().await.unwrap().is_empty(), "the extension's history has a decision for a denied site");

    // ---- the allowed origin is unaffected: back there, a low-risk click runs
    s.mcp.ok("browser_navigate", json!({ "url": allowed })).await;
    let page = page_at(&s, &allowed).await;
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let draft = ref_of(&snap, "button", "Save draft").expect("Save draft");
    let r = s.mcp.ok("browser_click", json!({ "ref": draft })).await.expect_untrusted();
    assert_eq!(r.data()["decided_by"], json!("policy"), "{}", r.raw);
    assert_eq!(mail_state(&page).await["status"], json!("Draft saved"));

    // ---- the audit log has every refusal, decided by the site rule, without query strings
    let rows = audit_rows(&s);
    let refusals: Vec<&Value> =
        rows.iter().filter(|r| r["decision"] == json!("deny") && r["outcome"] == json!("PERMISSION_DENIED")).collect();
    for r in &refusals {
        assert_eq!(r["decided_by"], json!("site_rule"), "a refusal not named the site rule's: {r}");
        let url = r["url"].as_str().unwrap_or("");
        assert!(url.starts_with("http://localhost:") || url.starts_with("HTTP://LOCALHOST:"), "{r}");
        assert!(!url.contains('?'), "a query string in the audit log: {r}");
    }
    let count = |tool: &str| refusals.iter().filter(|r| r["tool"] == json!(tool)).count();
    assert_eq!(count("browser_tabs"), 1 + spelled.len(), "{refusals:#?}");
    assert_eq!(count("browser_navigate"), 3 + spelled.len(), "{refusals:#?}");
    for (tool, _) in &actions {
        let want = actions.iter().filter(|(t, _)| t == tool).count();
        assert_eq!(count(tool), want, "refusals of {tool} in the audit log: {refusals:#?}");
    }
    assert_eq!(refusals.len(), 4 + 2 * spelled.len() + actions.len(), "one row per refusal: {refusals:#?}");
    // Nothing was allowed on the denied site.
    for r in &rows {
        let on_denied = r["url"].as_str().is_some_and(|u| u.to_ascii_lowercase().starts_with("http://localhost:"));
        if on_denied {
            assert_eq!(r["decision"], json!("deny"), "an audit row allowed something on the denied site: {r}");
        }
    }
}
