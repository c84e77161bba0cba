//! A tab handed to the person is theirs (issue "What the person sees, what
//! the person did"; `shared::handoff::check_handed`), played end to end,
//! headed on Xvfb with the person's trusted CDP clicks:
//!
//! - while `browser_handoff` waits, the agent's navigate, snapshot, click,
//!   extract-text, screenshot, wait-for, back, tab select and tab close on
//!   that tab are `HUMAN_REQUIRED` and nothing happens in the tab (its URL
//!   over CDP, still open);
//!   `browser_tabs list` still works (control: the same calls run once the
//!   tab is handed back);
//! - the person walks the tab to another port of the same host: the card
//!   names the tab's current origin, and Done there is refused (another
//!   port is another site); back on the first port Done counts;
//! - a sign-in form in an open shadow root, a CAPTCHA in a same-origin
//!   iframe and a sign-in in a shadow root inside a same-origin iframe hand
//!   the tab over on navigation, and Done is refused while they
//!   are still there (control: their benign twins load without a hand-off);
//! - the fourth `browser_handoff` within a minute is refused
//!   (`BUDGET_EXCEEDED`) and shows the person nothing.

use std::time::Duration;

use serde_json::json;
use tests::{CdpSession, Human, Stack, ref_of};

use super::{code, new_tab, page_at, snapshot};

const SHOW_WITHIN: Duration = Duration::from_secs(20);

async fn href(page: &CdpSession) -> String {
    page.evaluate("location.href").await.expect("read location").as_str().unwrap_or_default().to_string()
}

/// Waits until card `id` contains `needle`; its text.
async fn card_with(human: &mut Human, id: u64, needle: &str) -> String {
    let mut text = String::new();
    for _ in 0..100 {
        text = human.handoff_text(id).await.unwrap_or_default();
        if text.contains(needle) {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("card {id} never said {needle:?}: {text}")
}

fn encode(url: &str) -> String {
    url.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handed_tab_is_the_persons() {
    let mut s = Stack::start_with_config(Some("human_timeout_secs = 60\n")).await.expect("start the stack");
    let mut human = Human::new(&s.browser.cdp);
    human.popup_window().await.expect("open the popup in its own window");
    // Another port of the same host (127.0.0.1): the same pages.
    let other = tests::FixtureServer::start();
    let home = s.url("/handoff/home.html");
    let away = other.url(&format!("/handoff/elsewhere.html?to={}", encode(&home)));
    let start = s.url(&format!("/handoff/elsewhere.html?to={}", encode(&away)));
    let evil = other.url("/handoff/login.html");
    let tab = new_tab(&mut s.mcp, &start).await;
    let page = page_at(&s, &start).await;
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let go = ref_of(&snap, "link", "Go on").unwrap_or_else(|| panic!("no link in {snap}"));

    // ---- while the hand-off waits, the tab is the person's
    let mut agent = s.mcp.same_session();
    let cdp = s.browser.cdp.clone();
    let calls = [
        ("browser_navigate", json!({ "url": evil })),
        ("browser_snapshot", json!({})),
        ("browser_click", json!({ "ref": go })),
        ("browser_extract_text", json!({})),
        ("browser_screenshot", json!({})),
        ("browser_wait_for", json!({ "text": "Elsewhere" })),
        ("browser_tabs", json!({ "action": "select", "tab": tab })),
        ("browser_tabs", json!({ "action": "close", "tab": tab })),
        ("browser_navigate", json!({ "step": "back" })),
    ];
    let (r, (refused, listed, card, moved, note)) =
        tokio::join!(s.mcp.call("browser_handoff", json!({ "reason": "Please look at this page" })), async {
            let (id, card) = human.wait_handoff(SHOW_WITHIN, None).await.expect("the hand-off is shown");
            let mut refused = Vec::new();
            for (tool, args) in &calls {
                let r = agent.call(tool, args.clone()).await.expect(tool);
                refused.push((tool.to_string(), code(&r), r.text()));
            }
            assert_eq!(href(&page).await, start, "the agent moved a tab the person has");
            let listed = agent.ok("browser_tabs", json!({ "action": "list" })).await.expect_untrusted();
            // The person goes to another port of the same host.
            page.click_selector("#go").await.expect("the person clicks Go on");
            let at_away = cdp.wait_for_target(SHOW_WITHIN, |t| t.url == away).await.expect("at the other port");
            let moved = card_with(&mut human, id, &other.origin()).await;
            human.hand_back(id, true).await.expect("Done on the other port");
            let note = card_with(&mut human, id, "not on").await;
            // Back to the first port; Done counts there.
            let away_page = cdp.attach(&at_away.target_id).await.expect("attach");
            away_page.click_selector("#go").await.expect("the person goes back");
            cdp.wait_for_target(SHOW_WITHIN, |t| t.url == home).await.expect("back home");
            human.hand_back(id, true).await.expect("Done back home");
            (refused, listed, card, moved, note)
        });
    for (tool, code, text) in &refused {
        assert_eq!(code, "HUMAN_REQUIRED", "{tool} on a handed tab: {text}");
        assert!(text.contains("handed to the person"), "{tool}: {text}");
    }
    assert!(listed.raw.to_string().contains(&start), "the tab list still works and names the tab: {}", listed.raw);
    assert!(card.contains(&s.url("").trim_end_matches('/').replace("http://", "")), "the card names the site: {card}");
    assert!(moved.contains("It began on"), "the card says where it began: {moved}");
    assert!(note.contains(&other.origin().replace("http://", "")), "the note names the other port: {note}");
    let r = r.expect("browser_handoff");
    assert_eq!(r.data()["outcome"], json!("done"), "Done back on the first port counts: {}", r.raw);
    assert_eq!(r.data()["url"], json!(home), "{}", r.raw);

    // ---- control: the same calls run once the tab is the agent's again
    let r = s.mcp.ok("browser_snapshot", json!({})).await.expect_untrusted();
    assert_eq!(r.data()["url"], json!(home), "{}", r.raw);
    s.mcp.ok("browser_extract_text", json!({})).await;

    // ---- a sign-in form in an open shadow root and a CAPTCHA in a
    // same-origin frame hand the tab over; Done is refused while they are there
    for (path, need) in [
        ("/challenges/shadow-login.html", "Sign in"),
        ("/challenges/frame-captcha.html", "Solve the CAPTCHA"),
        ("/challenges/frame-shadow-login.html", "Sign in"),
    ] {
        let url = s.url(path);
        let (r, note) = tokio::join!(s.mcp.call("browser_navigate", json!({ "url": url })), async {
            let (id, card) = human.wait_handoff(SHOW_WITHIN, None).await.expect("the hand-off is shown");
            assert!(card.contains(need), "{path}: {card}");
            human.hand_back(id, true).await.expect("Done while the challenge is there");
            let note = card_with(&mut human, id, "still asks").await;
            human.hand_back(id, false).await.expect("Abort");
            note
        });
        let r = r.expect("browser_navigate");
        assert_eq!(code(&r), "HUMAN_REQUIRED", "{path}: {}", r.raw);
        assert!(note.contains(need), "{path}: {note}");
    }
    // Controls: the same structures without a challenge load and run.
    for path in ["/challenges/benign/shadow-search.html", "/challenges/benign/frame-order.html"] {
        let url = s.url(path);
        let r = s.mcp.call("browser_navigate", json!({ "url": url })).await.expect("browser_navigate");
        assert!(!r.is_error(), "{path}: {}", r.raw);
    }

    // ---- at most three browser_handoffs a minute (the first was above)
    for n in 2..=3 {
        let (r, _) = tokio::join!(s.mcp.call("browser_handoff", json!({ "reason": format!("Look {n}") })), async {
            let (id, _) = human.wait_handoff(SHOW_WITHIN, None).await.expect("the hand-off is shown");
            human.hand_back(id, false).await.expect("Abort");
        });
        assert_eq!(code(&r.expect("browser_handoff")), "HUMAN_REQUIRED", "hand-off {n} was shown and aborted");
    }
    let r = s.mcp.call("browser_handoff", json!({ "reason": "Look 4" })).await.expect("browser_handoff");
    assert_eq!(code(&r), "BUDGET_EXCEEDED", "{}", r.raw);
    assert!(r.text().contains("at most 3 a minute"), "{}", r.raw);
    let status = s.mcp.ok("browser_status", json!({})).await;
    assert!(status.text().contains("Tabs waiting for the person: none"), "the person was not asked: {}", status.raw);
}
