//! Acting in Firefox: a harmless click runs without a question; a
//! destructive one and a lying name ("Show more" on a button that shows
//! "Delete account") wait for the person; a stale ref never acts.

use std::time::Duration;

use serde_json::json;

use super::FxStack;
use crate::e2e::code;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_harmless_click_runs_without_asking() {
    let mut s = FxStack::start(None, false).await;
    let (_, page) = s.agent_tab("/lies/index.html").await;
    let r = s.ref_named("button", "Reload list").await;
    let res = s.mcp.ok("browser_click", json!({ "ref": r })).await.expect_untrusted();
    assert_eq!(res.data()["decided_by"], json!("policy"), "{}", res.raw);
    assert!(s.ran(&page).await.split(' ').any(|x| x == "refresh"), "the click did not run");
}

/// A destructive click and a lying name ("Show more" on a button that
/// shows "Delete account") wait for the person: nobody answers here, so
/// each ends as `APPROVAL_DENIED` at the approval timeout and nothing runs.
/// (The person's answers are played headed in `approvals.rs`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destructive_and_lying_clicks_wait_for_the_person() {
    const TIMEOUT_SECS: u64 = 5;
    let mut s = FxStack::start(Some(&format!("approval_timeout_secs = {TIMEOUT_SECS}\n")), false).await;
    let (url, page) = s.agent_tab("/lies/index.html").await;
    for (role, name) in [("button", "Show more"), ("button", "Dеlеtе аccount"), ("link", "Continue")] {
        let r = s.ref_named(role, name).await;
        let started = std::time::Instant::now();
        let res = s.mcp.call("browser_click", json!({ "ref": r })).await.expect("browser_click");
        assert_eq!(code(&res), "APPROVAL_DENIED", "{role} {name:?}: {}", res.raw);
        assert!(res.raw.to_string().contains("no answer from the person"), "{role} {name:?}: {}", res.raw);
        assert!(
            started.elapsed() >= Duration::from_secs(TIMEOUT_SECS - 1),
            "{role} {name:?} was refused without waiting for the person: {}",
            res.raw
        );
        assert_eq!(s.ran(&page).await, "", "{role} {name:?} ran without an answer");
        assert_eq!(s.eval(&page, "location.href").await, json!(url), "{role} {name:?} navigated");
    }
    // Control: the harmless control of the same page runs at once.
    let r = s.ref_named("button", "Show older drafts").await;
    let res = s.mcp.ok("browser_click", json!({ "ref": r })).await.expect_untrusted();
    assert_eq!(res.data()["decided_by"], json!("policy"), "{}", res.raw);
}

/// A ref whose element left the page is `STALE_REF`, never another
/// element's action; a fresh snapshot's ref works (control).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_ref_never_acts() {
    let mut s = FxStack::start(None, false).await;
    let (_, page) = s.agent_tab("/lies/index.html").await;
    let r = s.ref_named("button", "Reload list").await;
    s.eval(&page, "(document.getElementById('refresh').remove(), true)").await;
    let res = s.mcp.call("browser_click", json!({ "ref": r })).await.expect("browser_click");
    assert_eq!(code(&res), "STALE_REF", "{}", res.raw);
    assert_eq!(s.ran(&page).await, "", "something ran for a stale ref");
    let r = s.ref_named("button", "Close notice").await;
    let res = s.mcp.ok("browser_click", json!({ "ref": r })).await.expect_untrusted();
    assert_eq!(res.data()["decided_by"], json!("policy"), "{}", res.raw);
    assert!(s.ran(&page).await.contains("close-x"), "the fresh ref did not act");
}
