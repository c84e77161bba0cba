//! Read-only sites (issue 37): `[[sites]] access = "read"` in
//! `config.toml`, and **Read only** chosen by the person in the popup's
//! "This site" section. Agents navigate, read, scroll and hover there;
//! every action that could change something is `PERMISSION_DENIED` naming
//! the rule and the origin before anything reaches the page — the page's
//! own counters (every click, input, change, key and submit) show nothing
//! ran and the field keeps what the person typed. Another site on another
//! port is unaffected (the control: there the same click runs).
//!
//! The popup is played with trusted CDP clicks: **Read only** refuses the
//! agent's next click, **Agents may act** restores it. No tool in
//! `tools/list` can change a site's access; a page's `postMessage` and a
//! runtime message from an extension page other than the popup cannot.

use std::time::Duration;

use serde_json::{Value, json};
use tests::{CdpSession, FixtureServer, Human, Mcp, Stack, ref_of};

use super::{code, new_tab, page_at, snapshot};

const PAGE: &str = "/readonly/index.html";

/// The page's own counters and the state of its controls.
async fn page_state(page: &CdpSession) -> Value {
    page.evaluate(
        "({ counters: document.getElementById('counters').textContent, \
            note: document.getElementById('note').value, plan: document.getElementById('plan').value, \
            paper: document.getElementById('paper').checked, url: location.href })",
    )
    .await
    .expect("read the page")
}

async fn refs(mcp: &mut Mcp) -> [String; 4] {
    let snap = snapshot(mcp, json!({})).await.snapshot();
    let r = |role: &str, name: &str| ref_of(&snap, role, name).unwrap_or_else(|| panic!("no {role} {name:?}:\n{snap}"));
    [r("button", "Add a note"), r("textbox", "Note"), r("combobox", "Plan"), r("checkbox", "Paper statements")]
}

/// Every acting tool on the page's controls: each must be refused.
fn acting_calls(button: &str, note: &str, plan: &str, paper: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("browser_click", json!({ "ref": button })),
        ("browser_type", json!({ "ref": note, "text": "the agent's words", "submit": true })),
        ("browser_fill_form", json!({ "fields": [{ "ref": note, "value": "filled" }], "submit": true })),
        ("browser_select_option", json!({ "ref": plan, "values": ["plus"] })),
        ("browser_press_key", json!({ "key": "Enter", "ref": note })),
        ("browser_press_key", json!({ "key": "x" })),
        ("browser_click", json!({ "ref": paper })),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_site_in_config_reads_but_refuses_every_action() {
    // The read-only site: its own server, so the rule names its one port.
    let ro = FixtureServer::start();
    let rule = ro.origin();
    let config = format!("approval_timeout_secs = 20\n\n[[sites]]\norigin = \"{rule}\"\naccess = \"read\"\n");
    let mut s = Stack::start_with_config(Some(&config)).await.expect("start the stack");
    let human = Human::new(&s.browser.cdp);
    let url = ro.url(PAGE);

    // ---- navigation, snapshot, text, scroll, hover and status work
    let tab = new_tab(&mut s.mcp, &url).await;
    let page = page_at(&s, &url).await;
    let [button, note, plan, paper] = refs(&mut s.mcp).await;
    let text = s.mcp.ok("browser_extract_text", json!({})).await.expect_untrusted();
    assert!(text.text().contains("1,234.56 EUR"), "extract_text reads the page: {}", text.raw);
    s.mcp.ok("browser_scroll", json!({ "direction": "down" })).await;
    s.mcp.ok("browser_hover", json!({ "ref": button })).await;
    let st = s.mcp.ok("browser_status", json!({})).await;
    assert_eq!(st.structured()["siteAccess"]["access"], json!("read"), "{}", st.raw);
    assert_eq!(st.structured()["siteAccess"]["rule"], json!(rule), "{}", st.raw);
    assert!(st.text().contains("Read only"), "browser_status tells the agent: {}", st.raw);

    // ---- the person writes their own note (trusted typing)
    page.click_and_type("#note", "my own words").await.expect("the person types");
    let before = page_state(&page).await;
    assert_eq!(before["note"], json!("my own words"));

    // ---- every acting tool: PERMISSION_DENIED naming the rule and the origin
    let origin = shared::url::Origin::of(&url).map(|o| o.to_string()).unwrap();
    for (tool, args) in acting_calls(&button, &note, &plan, &paper) {
        let r = s.mcp.call(tool, args.clone()).await.unwrap();
        assert_eq!(code(&r), "PERMISSION_DENIED", "{tool} {args}: {}", r.raw);
        assert!(r.text().contains(&rule), "{tool}: the refusal names the rule: {}", r.raw);
        assert!(r.text().contains(&origin) && r.text().contains("read only"), "{tool}: names the origin: {}", r.raw);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = page_state(&page).await;
    assert_eq!(after, before, "something ran on the read-only page");
    assert_eq!(after["plan"], json!("basic"));
    assert_eq!(after["paper"], json!(false));
    assert!(!human.approval_window_open().await, "a refused action asked the person");

    // ---- navigation on the read-only site still works
    let second = ro.url("/readonly/second.html");
    let r = s.mcp.ok("browser_navigate", json!({ "url": second, "tab": tab })).await.expect_untrusted();
    assert_eq!(r.data()["tab"]["url"], json!(second), "{}", r.raw);

    // ---- control: the same page on another port (another site) acts
    let other = s.url(PAGE);
    new_tab(&mut s.mcp, &other).await;
    let other_page = page_at(&s, &other).await;
    let [button, note, _, paper] = refs(&mut s.mcp).await;
    s.mcp.ok("browser_click", json!({ "ref": button })).await.expect_untrusted();
    s.mcp.ok("browser_type", json!({ "ref": note, "text": "agent" })).await.expect_untrusted();
    s.mcp.ok("browser_click", json!({ "ref": paper })).await.expect_untrusted();
    let o = page_state(&other_page).await;
    assert_eq!(o["note"], json!("agent"), "{o}");
    assert_eq!(o["paper"], json!(true), "{o}");
    assert_ne!(o["counters"], before["counters"], "{o}");

    // ---- `chaperone sites` lists the rule
    let out = s.daemon.cli(&["sites"], "").expect("chaperone sites");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains(&rule) && out.stdout.contains("Read only"), "{}", out.stdout);
}

/// What the popup's "This site" shows: (origin, current button id, source line).
async fn this_site(popup: &CdpSession) -> (String, String, String) {
    let v = popup
        .evaluate(
            "[document.getElementById('site-origin').textContent, \
              ([...document.querySelectorAll('.site-choices button')].find(b => b.getAttribute('aria-pressed') === 'true') || {}).id || '', \
              document.getElementById('site-source').textContent]",
        )
        .await
        .unwrap_or(Value::Null);
    let s = |i: usize| v[i].as_str().unwrap_or_default().to_string();
    (s(0), s(1), s(2))
}

async fn wait_site(popup: &CdpSession, origin: &str, current: &str) -> String {
    let ok = tests::poll(Duration::from_secs(10), Duration::from_millis(100), || async {
        let (o, c, source) = this_site(popup).await;
        (o == origin && c == current).then_some(source)
    })
    .await;
    match ok {
        Some(source) => source,
        None => panic!("the popup never showed {origin} as {current}: {:?}", this_site(popup).await),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_person_makes_a_site_read_only_in_the_popup() {
    let mut s = Stack::start_with_config(Some("approval_timeout_secs = 20\n")).await.expect("start the stack");
    let mut human = Human::new(&s.browser.cdp);
    let popup = human.popup_window().await.expect("open the popup in its own window");
    let url = s.url(PAGE);
    new_tab(&mut s.mcp, &url).await;
    let page = page_at(&s, &url).await;
    let [button, ..] = refs(&mut s.mcp).await;
    let origin = shared::url::Origin::of(&url).map(|o| o.to_string()).unwrap();

    // ---- the labels, exactly; the default marked
    let labels =
        popup.evaluate("[...document.querySelectorAll('.site-choices button')].map(b => b.textContent)").await.unwrap();
    assert_eq!(labels, json!(["Agents may act", "Read only", "Never"]));
    let source = wait_site(&popup, &origin, "site-act").await;
    assert!(source.contains("default"), "{source}");

    // ---- the agent's click works
    s.mcp.ok("browser_click", json!({ "ref": button })).await.expect_untrusted();
    let clicked = page_state(&page).await["counters"].clone();
    assert!(clicked.as_str().unwrap().starts_with("clicks 1"), "{clicked}");

    // ---- the person picks Read only: the agent's next click is refused
    popup.click_selector("#site-read").await.expect("click Read only");
    let source = wait_site(&popup, &origin, "site-read").await;
    assert!(source.contains("popup"), "the source is the popup: {source}");
    let r = s.mcp.call("browser_click", json!({ "ref": button })).await.unwrap();
    assert_eq!(code(&r), "PERMISSION_DENIED", "{}", r.raw);
    assert!(r.text().contains(&origin) && r.text().contains("popup"), "{}", r.raw);
    assert_eq!(page_state(&page).await["counters"], clicked, "the refused click ran");
    let st = s.mcp.ok("browser_status", json!({})).await;
    assert_eq!(st.structured()["siteAccess"]["access"], json!("read"), "{}", st.raw);
    assert_eq!(st.structured()["siteAccess"]["source"], json!("popup"), "{}", st.raw);
    let out = s.daemon.cli(&["sites", "--json"], "").expect("chaperone sites");
    let listed: Value = serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stdout));
    assert_eq!(listed["popup"][0]["origin"], json!(origin), "{listed}");
    assert_eq!(listed["popup"][0]["access"], json!("read"), "{listed}");

    // ---- nothing the agent or a page can send loosens it
    let tools = s.mcp.list_tools().await.unwrap();
    for t in &tools {
        let name = t["name"].as_str().unwrap_or_default();
        assert!(!name.contains("site") && !name.contains("access"), "a tool about site access: {name}");
        let props = t["inputSchema"]["properties"].as_object().cloned().unwrap_or_default();
        for key in ["access", "origin", "site", "sites", "readOnly"] {
            assert!(!props.contains_key(key), "{name} takes {key:?}: {t}");
        }
    }
    let r = s.mcp.call("browser_status", json!({ "access": "act" })).await.unwrap();
    assert_eq!(code(&r), "INVALID_REQUEST", "{}", r.raw);
    let forged = format!("{{type: 'set_site_access', origin: '{origin}', access: 'act'}}");
    page.evaluate(&format!("window.postMessage({forged}, '*'); true")).await.unwrap();
    let approval = s
        .browser
        .cdp
        .new_page(&format!("chrome-extension://{}/approval.html", shared::EXTENSION_ID))
        .await
        .expect("approval.html in a tab");
    let reply = approval.evaluate(&format!("chrome.runtime.sendMessage({forged})")).await.unwrap();
    assert_eq!(reply["type"], json!("error"), "approval.html set a site's access: {reply}");
    let reply = approval
        .evaluate(&format!("chrome.runtime.sendMessage({{type: 'never_here', request: 1, origin: '{origin}'}})"))
        .await
        .unwrap();
    assert_eq!(reply["type"], json!("error"), "an unknown field was accepted: {reply}");
    s.browser.cdp.close_target(&approval.target_id).await.ok();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let r = s.mcp.call("browser_click", json!({ "ref": button })).await.unwrap();
    assert_eq!(code(&r), "PERMISSION_DENIED", "a forged message loosened the site: {}", r.raw);
    assert_eq!(page_state(&page).await["counters"], clicked, "the refused click ran");

    // ---- Agents may act again: restored, and the popup rule is gone
    popup.click_selector("#site-act").await.expect("click Agents may act");
    wait_site(&popup, &origin, "site-act").await;
    s.mcp.ok("browser_click", json!({ "ref": button })).await.expect_untrusted();
    let counters = page_state(&page).await["counters"].clone();
    assert!(counters.as_str().unwrap().starts_with("clicks 2"), "{counters}");
    let out = s.daemon.cli(&["sites", "--json"], "").expect("chaperone sites");
    let listed: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(listed["popup"], json!([]), "{listed}");

    // ---- "Never on this site" in the approval window: denied, and Never
    let basic = s.url("/basic/index.html");
    s.mcp.ok("browser_navigate", json!({ "url": basic })).await.expect_untrusted();
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let delete = ref_of(&snap, "button", "Delete account").unwrap_or_else(|| panic!("no Delete account:\n{snap}"));
    let (r, _) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": delete })), async {
        let (win, req) = human.next_request(Duration::from_secs(20)).await.expect("the approval window asks");
        win.click_selector(&format!("#never-{}", req.request)).await.expect("click Never on this site");
    });
    let r = r.expect("browser_click");
    assert_eq!(code(&r), "APPROVAL_DENIED", "{}", r.raw);
    let source = wait_site(&popup, &origin, "site-deny").await;
    assert!(source.contains("popup"), "{source}");
    let r = s.mcp.call("browser_snapshot", json!({})).await.unwrap();
    assert_eq!(code(&r), "PERMISSION_DENIED", "Never refuses reading too: {}", r.raw);
    let r = s.mcp.call("browser_navigate", json!({ "url": url })).await.unwrap();
    assert_eq!(code(&r), "PERMISSION_DENIED", "and navigation: {}", r.raw);
    let out = s.daemon.cli(&["sites"], "").expect("chaperone sites");
    assert!(out.stdout.contains(&origin) && out.stdout.contains("Never"), "{}", out.stdout);
}
