//! Issue 14, sessions, end to end: two MCP sessions on one bridge and one
//! real browser. Session A opens a tab and reads it; session B does not
//! see it, and every tool B points at A's tab id or refs is `NOT_FOUND`
//! (the words of a closed tab) while A's page stays as it was. Each
//! session's tabs sit in a Chrome tab group named after its client; the
//! popup lists the agents. Ending A (`DELETE /mcp`) leaves its tab open for
//! the person, ungrouped, and a new session cannot use the old id; the
//! person gives it to a session from the popup ("Let <client> use this
//! tab"), and only that session can use it.

use std::time::Duration;

use serde_json::{Value, json};
use tests::{Human, Stack};

use super::{new_tab, snapshot};

/// The ref of the line `- ROLE "NAME" [eN]` in a snapshot.
fn ref_of(snapshot: &str, role: &str, name: &str) -> String {
    let head = format!("{role} \"{name}\" [");
    let line = snapshot.lines().find(|l| l.contains(&head)).unwrap_or_else(|| panic!("no {head} in {snapshot}"));
    let start = line.find(&head).unwrap() + head.len();
    line[start..].split(']').next().unwrap().to_string()
}

/// The tab's group, as the extension's popup page reads it: `(groupId,
/// group title, colour)`; `groupId` -1 when ungrouped, -2 when the group
/// went away between the two reads (an ungrouping in progress).
async fn group_of(popup: &tests::CdpSession, tab: i64) -> (i64, String, String) {
    let v = popup
        .evaluate(&format!(
            "chrome.tabs.get({tab}).then(async t => t.groupId === -1 ? [-1, '', ''] : \
             chrome.tabGroups.get(t.groupId).then(g => [t.groupId, g.title, g.color]))\
             .catch(() => [-2, '', ''])"
        ))
        .await
        .expect("read the tab's group");
    (v[0].as_i64().unwrap_or(-2), v[1].as_str().unwrap_or("").into(), v[2].as_str().unwrap_or("").into())
}

/// Fails the test once `deadline` has passed; else waits a little.
async fn tick(deadline: tokio::time::Instant, what: &str) {
    assert!(tokio::time::Instant::now() < deadline, "not within 15 s: {what}");
    tokio::time::sleep(Duration::from_millis(200)).await;
}

fn soon() -> tokio::time::Instant {
    tokio::time::Instant::now() + Duration::from_secs(15)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_never_see_each_others_tabs() {
    let mut s = Stack::start().await.expect("start the stack");
    let mut human = Human::new(&s.browser.cdp);
    let page_url = s.url("/basic/index.html");

    // ---- A (the stack's session, client `chaperone-e2e`) opens a tab and reads it.
    let tab_a = new_tab(&mut s.mcp, &page_url).await;
    let before = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let city = ref_of(&before, "textbox", "City");
    let save = ref_of(&before, "button", "Save changes");

    // ---- B: another client, its own session.
    let mut b = s.daemon.mcp_as("agent-b").await.expect("session B");
    let r = b.ok("browser_tabs", json!({ "action": "list" })).await;
    assert_eq!(r.data()["tabs"], json!([]), "B sees A's tab: {}", r.raw);
    let r = b.call("browser_snapshot", json!({})).await.unwrap();
    assert_eq!(r.error_code(), Some("INVALID_REQUEST"), "B has no current tab: {}", r.raw);

    assert_foreign_tab_refused(&mut b, tab_a, &save, &city, &s.url("/basic/second.html")).await;
    let not_found = format!("NOT_FOUND: no tab {tab_a}");
    // A tab that is not open at all reads the same.
    let r = b.call("browser_snapshot", json!({ "tab": 987654 })).await.unwrap();
    assert_eq!(r.text(), "NOT_FOUND: no tab 987654");

    // A's page is as it was (nothing typed, clicked or navigated), and its
    // tab is still open and A's.
    let after = snapshot(&mut s.mcp, json!({ "tab": tab_a })).await;
    assert_eq!(after.data()["url"], json!(page_url));
    assert_eq!(after.snapshot(), before, "A's page changed");
    assert!(!after.snapshot().contains("Evil town"));
    let r = s.mcp.ok("browser_tabs", json!({ "action": "list" })).await;
    assert_eq!(r.data()["tabs"][0]["id"], json!(tab_a), "{}", r.raw);

    // ---- Tab groups: A's tab in a group named after its client; B's own
    // tab in another group.
    let tab_b = new_tab(&mut b, &s.url("/basic/second.html")).await;
    let popup = human.popup().await.expect("open the popup");
    let deadline = soon();
    loop {
        let (ga, gb) = (group_of(&popup, tab_a).await, group_of(&popup, tab_b).await);
        if ga.1 == "chaperone-e2e" && gb.1 == "agent-b" {
            assert!(ga.0 >= 0 && ga.0 != gb.0, "{ga:?} {gb:?}");
            assert_ne!(ga.2, gb.2, "both groups are {}", ga.2);
            break;
        }
        tick(deadline, &format!("A's and B's tabs grouped by client: {ga:?} {gb:?}")).await;
    }

    // The popup lists both agents with their tab counts.
    let deadline = soon();
    loop {
        let text = popup.evaluate("document.getElementById('agents').textContent").await.unwrap_or(Value::Null);
        let text = text.as_str().unwrap_or("").to_string();
        if text.contains("chaperone-e2e") && text.contains("agent-b") && text.matches("1 tab").count() == 2 {
            break;
        }
        tick(deadline, &format!("the popup lists both agents: {text:?}")).await;
    }

    // ---- A ends: its tab stays open for the person, ungrouped.
    s.mcp.close().await.expect("end session A");
    let deadline = soon();
    while group_of(&popup, tab_a).await.0 != -1 {
        tick(deadline, "A's tab is ungrouped").await;
    }
    let targets = s.browser.cdp.targets().await.unwrap();
    assert!(targets.iter().any(|t| t.kind == "page" && t.url == page_url), "A's tab was closed");
    assert_eq!(group_of(&popup, tab_b).await.1, "agent-b", "B's group is untouched");

    // Nobody inherits it by its id: neither B nor a new session.
    let mut c = s.daemon.mcp_as("agent-c").await.expect("session C");
    for m in [&mut b, &mut c] {
        for (tool, args) in [
            ("browser_snapshot", json!({ "tab": tab_a })),
            ("browser_click", json!({ "tab": tab_a, "ref": save })),
            ("browser_tabs", json!({ "action": "select", "tab": tab_a })),
        ] {
            let r = m.call(tool, args.clone()).await.unwrap();
            assert_eq!(r.text(), not_found, "{tool} {args}: {}", r.raw);
        }
    }
    let r = c.ok("browser_tabs", json!({ "action": "list" })).await;
    assert_eq!(r.data()["tabs"], json!([]), "{}", r.raw);

    // ---- The person gives their tab (A's old one, in front) to C from the popup.
    let popup_win = {
        // The popup as its own window, so the person's tab stays in front.
        let mut h = Human::new(&s.browser.cdp);
        h.popup_window().await.expect("the popup window")
    };
    let target = targets.iter().find(|t| t.kind == "page" && t.url == page_url).unwrap().target_id.clone();
    s.browser
        .cdp
        .call("Target.activateTarget", json!({ "targetId": target }))
        .await
        .expect("bring the tab to the front");
    let give_button = popup_win
        .evaluate(
            "Array.from(document.querySelectorAll('#agents button.give')).filter(b => b.textContent === \
             'Let agent-c use this tab').map(b => b.id)",
        )
        .await
        .unwrap();
    let id = give_button[0].as_str().unwrap_or_else(|| panic!("no give button for agent-c: {give_button}")).to_string();
    popup_win.click_selector(&format!("#{id}")).await.expect("press Let agent-c use this tab");
    let deadline = soon();
    loop {
        let r = c.call("browser_tabs", json!({ "action": "select", "tab": tab_a })).await.unwrap();
        if !r.is_error() {
            break;
        }
        let shown = popup_win.evaluate("document.getElementById('give-result').textContent").await;
        tick(deadline, &format!("C may use the given tab: {} (popup: {shown:?})", r.raw)).await;
    }
    let r = c.ok("browser_snapshot", json!({ "tab": tab_a })).await;
    assert_eq!(r.data()["url"], json!(page_url));
    let r = b.call("browser_snapshot", json!({ "tab": tab_a })).await.unwrap();
    assert_eq!(r.text(), not_found, "B got C's tab: {}", r.raw);
    let deadline = soon();
    while group_of(&popup, tab_a).await.1 != "agent-c" {
        tick(deadline, "the given tab joins C's group").await;
    }
}

/// Every tool session `b` might aim at another session's tab `tab_a`
/// (`save` a button and `city` a field on it; `second` a URL) answers
/// `NOT_FOUND: no tab …`, exactly as for a tab that is not open.
pub(super) async fn assert_foreign_tab_refused(b: &mut tests::Mcp, tab_a: i64, save: &str, city: &str, second: &str) {
    let not_found = format!("NOT_FOUND: no tab {tab_a}");
    for (tool, args) in [
        ("browser_snapshot", json!({ "tab": tab_a })),
        ("browser_extract_text", json!({ "tab": tab_a })),
        ("browser_click", json!({ "tab": tab_a, "ref": save })),
        ("browser_type", json!({ "tab": tab_a, "ref": city, "text": "Evil town" })),
        ("browser_press_key", json!({ "tab": tab_a, "ref": city, "key": "Enter" })),
        ("browser_hover", json!({ "tab": tab_a, "ref": save })),
        ("browser_select_option", json!({ "tab": tab_a, "ref": city, "values": ["x"] })),
        ("browser_screenshot", json!({ "tab": tab_a })),
        ("browser_wait_for", json!({ "tab": tab_a, "text": "Account settings", "ms": 500 })),
        ("browser_navigate", json!({ "tab": tab_a, "url": second })),
        ("browser_tabs", json!({ "action": "select", "tab": tab_a })),
        ("browser_tabs", json!({ "action": "close", "tab": tab_a })),
    ] {
        let r = b.call(tool, args.clone()).await.unwrap_or_else(|e| panic!("{tool}: {e:#}"));
        assert_eq!(r.error_code(), Some("NOT_FOUND"), "{tool} {args}: {}", r.raw);
        assert_eq!(r.text(), not_found, "{tool} {args}");
    }
}
