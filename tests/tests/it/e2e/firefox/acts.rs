//! Acting in Firefox: a harmless click runs without a question; a
//! destructive one and a lying name ("Show more" on a button that shows
//! "Delete account") wait for the person, who approves or denies with
//! trusted clicks in the approval window (a Firefox popup window, headed
//! on Xvfb).

use std::collections::HashSet;
use std::time::Duration;

use serde_json::json;
use tests::firefox::FirefoxHuman;
use tests::ref_of;

use super::FxStack;
use crate::e2e::{code, new_tab, snapshot};

const SHOW_WITHIN: Duration = Duration::from_secs(30);

async fn ran(s: &FxStack, page: &str) -> String {
    s.eval(page, "document.body.dataset.ran || ''").await.as_str().unwrap_or_default().to_string()
}

async fn ref_named(s: &mut FxStack, role: &str, name: &str) -> String {
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    ref_of(&snap, role, name).unwrap_or_else(|| panic!("no {role} {name:?} in:\n{snap}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_harmless_click_runs_without_asking() {
    let mut s = FxStack::start(None, false).await;
    let url = s.url("/lies/index.html");
    new_tab(&mut s.mcp, &url).await;
    let page = s.page(&url).await;
    let r = ref_named(&mut s, "button", "Reload list").await;
    let res = s.mcp.ok("browser_click", json!({ "ref": r })).await.expect_untrusted();
    assert_eq!(res.data()["decided_by"], json!("policy"), "{}", res.raw);
    assert!(ran(&s, &page).await.split(' ').any(|x| x == "refresh"), "the click did not run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destructive_and_lying_clicks_wait_for_the_person() {
    let mut s = FxStack::start(Some("approval_timeout_secs = 60\n"), true).await;
    let bidi = s.firefox.bidi.clone();
    let human = FirefoxHuman { bidi: &bidi };
    let mut seen = HashSet::new();
    let url = s.url("/lies/index.html");
    new_tab(&mut s.mcp, &url).await;
    let page = s.page(&url).await;

    // A lying name: denied by the person, nothing runs.
    let r = ref_named(&mut s, "button", "Show more").await;
    let (res, shown) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": r })), async {
        let (win, id, text) = human.new_request(&mut seen, SHOW_WITHIN).await?;
        human.deny(&win, id).await.expect("click Deny");
        Some(text)
    });
    let res = res.expect("browser_click");
    let text = shown.unwrap_or_else(|| panic!("\"Show more\" did not ask the person: {}", res.raw));
    assert_eq!(code(&res), "APPROVAL_DENIED", "{}", res.raw);
    assert!(text.contains("Delete account"), "the window does not say what the page shows: {text}");
    assert_eq!(ran(&s, &page).await, "", "the denied control ran");

    // The same lie, approved: it runs once.
    let r = ref_named(&mut s, "button", "Show more").await;
    let (res, shown) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": r })), async {
        let (win, id, _) = human.new_request(&mut seen, SHOW_WITHIN).await?;
        human.approve(&win, id).await.expect("click Approve");
        Some(id)
    });
    let res = res.expect("browser_click");
    assert!(shown.is_some(), "the second click did not ask: {}", res.raw);
    assert!(!res.is_error(), "{}", res.raw);
    assert_eq!(res.data()["decided_by"], json!("human"), "{}", res.raw);
    assert!(ran(&s, &page).await.split(' ').any(|x| x == "aria-lie"), "the approved control did not run");
}

/// The page swaps the control while the person is asked: the approval
/// holds for what was shown only, so the click is `STALE_REF` and nothing
/// is sent; the unswapped control, approved, is sent once (control).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swap_after_approval_is_refused_and_nothing_is_sent() {
    let mut s = FxStack::start(Some("approval_timeout_secs = 60\n"), true).await;
    let bidi = s.firefox.bidi.clone();
    let human = FirefoxHuman { bidi: &bidi };
    let mut seen = HashSet::new();
    let url = s.url("/lies/swaps.html");
    new_tab(&mut s.mcp, &url).await;
    let page = s.page(&url).await;
    let swaps: &[(&str, &str, &str)] = &[
        ("button", "Delete draft", "swapText()"),
        ("button", "Delete selected draft", "swapAction()"),
        ("link", "Delete this draft", "swapHref()"),
    ];
    for (role, name, swap) in swaps {
        s.mcp.ok("browser_navigate", json!({ "url": url })).await;
        let page = s.page(&url).await;
        let r = ref_named(&mut s, role, name).await;
        let (res, asked) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": r })), async {
            let (win, id, _) = human.new_request(&mut seen, SHOW_WITHIN).await?;
            bidi.evaluate(&page, &format!("({swap}, true)")).await.expect("the page swaps");
            human.approve(&win, id).await.expect("click Approve");
            Some(())
        });
        let res = res.expect("browser_click");
        assert!(asked.is_some(), "{swap}: the approval window did not show the request: {}", res.raw);
        assert_eq!(code(&res), "STALE_REF", "{swap}: the swapped control ran after approval: {}", res.raw);
        assert!(s.server.posted().is_empty(), "{swap}: the form was sent: {:?}", s.server.posted());
    }
    s.mcp.ok("browser_navigate", json!({ "url": url })).await;
    let r = ref_named(&mut s, "button", "Delete selected draft").await;
    let (res, _) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": r })), async {
        let (win, id, _) = human.new_request(&mut seen, SHOW_WITHIN).await.expect("the window shows the request");
        human.approve(&win, id).await.expect("click Approve");
    });
    let res = res.expect("browser_click").expect_untrusted();
    assert_eq!(res.data()["decided_by"], json!("human"), "{}", res.raw);
    let posted = s.server.posted();
    assert_eq!(posted.len(), 1, "{posted:?}");
    assert_eq!((posted[0].0.as_str(), posted[0].1.as_slice()), ("/lies/drafts/delete.html", &b"draft_id=7"[..]));
    let _ = page;
}

/// A ref whose element left the page is `STALE_REF`, never another
/// element's action; a fresh snapshot's ref works (control).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_ref_never_acts() {
    let mut s = FxStack::start(None, false).await;
    let url = s.url("/lies/index.html");
    new_tab(&mut s.mcp, &url).await;
    let page = s.page(&url).await;
    let r = ref_named(&mut s, "button", "Reload list").await;
    s.eval(&page, "(document.getElementById('refresh').remove(), true)").await;
    let res = s.mcp.call("browser_click", json!({ "ref": r })).await.expect("browser_click");
    assert_eq!(code(&res), "STALE_REF", "{}", res.raw);
    assert_eq!(ran(&s, &page).await, "", "something ran for a stale ref");
    let r = ref_named(&mut s, "button", "Close notice").await;
    let res = s.mcp.ok("browser_click", json!({ "ref": r })).await.expect_untrusted();
    assert_eq!(res.data()["decided_by"], json!("policy"), "{}", res.raw);
    assert!(ran(&s, &page).await.contains("close-x"), "the fresh ref did not act");
}
