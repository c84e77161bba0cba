//! The person answers in Firefox's approval window (headed, on Xvfb):
//! a destructive click approved with Enter runs, a lying name ("Show more"
//! on a button that shows "Delete account") denied with Escape does not,
//! and what changes while the person decides (the page's URL, the element
//! itself) is refused after the approval instead of run. The keys are
//! real X input (`tests::firefox::FirefoxHuman`): WebDriver BiDi does not
//! reach the add-on's pages, and nothing the page or the agent can send
//! answers for the person.

use std::time::Duration;

use serde_json::json;

use super::FxStack;
use crate::e2e::code;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_person_approves_and_denies_in_the_approval_window_and_changed_facts_never_run() {
    let mut s = FxStack::start(Some("approval_timeout_secs = 60\n"), true).await;
    let human = s.firefox.human().expect("a headed Firefox has a screen");
    let (_, page) = s.agent_tab("/lies/index.html").await;

    // Approved with Enter: the destructive click runs, once.
    let glyph = s.ref_named("button", "Dеlеtе аccount").await;
    let (r, presses) = human.answering("Return", s.mcp.call("browser_click", json!({ "ref": glyph }))).await;
    let r = r.expect("browser_click").expect_untrusted();
    assert_eq!(r.data()["decided_by"], json!("human"), "{}", r.raw);
    assert!(presses >= 1, "the click ran without the person: {}", r.raw);
    assert_eq!(s.ran(&page).await, "glyph-lie ", "the approved click did not run exactly once");

    // Denied with Escape: the lying name does not run.
    let lie = s.ref_named("button", "Show more").await;
    let (r, _) = human.answering("Escape", s.mcp.call("browser_click", json!({ "ref": lie }))).await;
    let r = r.expect("browser_click");
    assert_eq!(code(&r), "APPROVAL_DENIED", "{}", r.raw);
    assert_eq!(s.ran(&page).await, "glyph-lie ", "a denied click ran");

    // The page's URL changes while the person decides: what was approved
    // is not what is live.
    human.approval_windows_closed(Duration::from_secs(10)).await;
    let bidi = &s.firefox.bidi;
    let call = s.mcp.call("browser_click", json!({ "ref": lie }));
    let change = async {
        human.approval_window(Duration::from_secs(20)).await.expect("the approval window opens");
        bidi.evaluate(&page, "(history.replaceState(null, '', 'danger-zone'), true)").await.expect("change the URL");
    };
    let (r, _) = human.answering_after(change, "Return", call).await;
    let r = r.expect("browser_click");
    assert_eq!(code(&r), "STALE_REF", "approved facts that are no longer live ran: {}", r.raw);
    assert_eq!(s.ran(&page).await, "glyph-lie ", "an action on changed facts ran");

    // The element is swapped for another while the person decides.
    s.eval(&page, "(history.replaceState(null, '', 'index.html'), true)").await;
    let lie = s.ref_named("button", "Show more").await;
    human.approval_windows_closed(Duration::from_secs(10)).await;
    let bidi = &s.firefox.bidi;
    let call = s.mcp.call("browser_click", json!({ "ref": lie }));
    let swap = async {
        human.approval_window(Duration::from_secs(20)).await.expect("the approval window opens");
        bidi.evaluate(
            &page,
            "(() => { const old = document.getElementById('aria-lie'); const b = old.cloneNode(true); \
             b.addEventListener('click', () => { document.body.dataset.ran += 'swapped '; }); \
             old.replaceWith(b); return true; })()",
        )
        .await
        .expect("swap the element");
    };
    let (r, _) = human.answering_after(swap, "Return", call).await;
    let r = r.expect("browser_click");
    assert_eq!(code(&r), "STALE_REF", "a swapped element was clicked after the approval: {}", r.raw);
    assert_eq!(s.ran(&page).await, "glyph-lie ", "the swapped element or the old one ran");
}

/// STOP in the popup (its page opened by the person in a new window:
/// Ctrl+N, the address, Enter): the agent's next click is `STOPPED` and
/// does not run. The keys are real X input: a click on the popup's header
/// bar gives it the keyboard, Tab reaches STOP (the first control after
/// it), Enter presses it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_in_the_popup_stops_the_agent() {
    let mut s = FxStack::start(None, true).await;
    let human = s.firefox.human().expect("a headed Firefox has a screen");
    let (_, page) = s.agent_tab("/lies/index.html").await;
    let reload = s.ref_named("button", "Reload list").await;
    // Control: it runs before STOP.
    let r = s.mcp.ok("browser_click", json!({ "ref": reload })).await.expect_untrusted();
    assert_eq!(r.data()["decided_by"], json!("policy"), "{}", r.raw);
    assert_eq!(s.ran(&page).await, "refresh ");

    let popup = human.open_popup().await.expect("open the popup page");
    // The page's header bar (below Firefox's tab strip and address bar,
    // 85 px) does nothing when clicked; the first control after it is STOP.
    human.click_and_press(&popup, (400, 103), &["Tab", "Return"]).expect("press STOP");
    tokio::time::sleep(Duration::from_millis(500)).await;

    let r = s.mcp.call("browser_click", json!({ "ref": reload })).await.expect("browser_click");
    assert_eq!(code(&r), "STOPPED", "STOP in the popup did not stop the agent: {}", r.raw);
    assert_eq!(s.ran(&page).await, "refresh ", "a click ran after STOP");
}
