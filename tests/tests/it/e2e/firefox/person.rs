//! The person's own part in Firefox (headed, on Xvfb): a challenge handed
//! to them and back with the popup's Done or Abort, and "Record me" with
//! the agent replaying what was recorded. The popup is the add-on's page
//! opened by the person in a window of its own (`FirefoxHuman::open_popup`:
//! WebDriver BiDi does not reach the add-on's pages) and answered with
//! real X keys; the page is used with BiDi's trusted input.

use std::time::Duration;

use serde_json::{Value, json};
use tests::bidi::Bidi;
use tests::firefox::FirefoxHuman;

use super::FxStack;
use crate::e2e::{code, new_tab};

async fn continued(bidi: &Bidi, page: &str) -> Value {
    bidi.evaluate(page, "document.body.dataset.continued || '0'").await.expect("read the page")
}

/// Polls `call` for `secs` seconds: it must still be waiting then (for
/// the person).
async fn still_waiting<F: std::future::Future>(call: &mut std::pin::Pin<&mut F>, secs: u64)
where
    F::Output: std::fmt::Debug,
{
    tokio::select! {
        r = call.as_mut() => panic!("the call did not wait for the person: {r:?}"),
        _ = tokio::time::sleep(Duration::from_secs(secs)) => {}
    }
}

/// Finishes `call` while the person, in a popup window of their own,
/// presses `keys` every half second until it returns (the popup draws its
/// state from the worker: a key before that decides nothing). The window
/// is closed after.
async fn in_popup<F: std::future::Future>(
    human: &FirefoxHuman,
    keys: &[&str],
    mut call: std::pin::Pin<&mut F>,
) -> F::Output {
    let popup = human.open_popup().await.expect("open the popup");
    let out = loop {
        tokio::select! {
            r = call.as_mut() => break r,
            _ = tokio::time::sleep(Duration::from_millis(500)) => {
                human.keys(&popup, keys).expect("press in the popup");
            }
        }
    };
    let _ = human.keys(&popup, &["ctrl+w"]);
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_challenge_goes_to_the_person_and_the_agent_carries_on_after_done() {
    let mut s = FxStack::start(Some("human_timeout_secs = 60\n"), true).await;
    let human = s.firefox.human().expect("a headed Firefox has a screen");
    let url = s.url("/handoff/captcha.html");
    new_tab(&mut s.mcp, &url).await;
    let page = s.page(&url).await;
    let show = s.ref_named("button", "Show the check").await;
    let cont = s.ref_named("button", "Continue").await;

    // Done after the person solved it: the click runs, once.
    s.mcp.ok("browser_click", json!({ "ref": show })).await;
    let bidi = &s.firefox.bidi;
    let r = {
        let mut call = std::pin::pin!(s.mcp.call("browser_click", json!({ "ref": cont })));
        still_waiting(&mut call, 3).await;
        assert_eq!(continued(bidi, &page).await, json!("0"), "the click ran on a CAPTCHA page");
        bidi.click_selector(&page, "#solve").await.expect("click I'm not a robot");
        let status = bidi.evaluate(&page, "document.getElementById('status').textContent").await.unwrap();
        assert_eq!(status, json!("Check passed"), "the person's click solved it");
        in_popup(&human, &["Return"], call.as_mut()).await.expect("browser_click").expect_untrusted()
    };
    assert_eq!(continued(bidi, &page).await, json!("1"), "the action ran exactly once after Done: {}", r.raw);
    // The status line changed: the agent is told so, not "no visible change".
    assert_eq!(r.data()["effect"], json!("page_changed"), "{}", r.raw);

    // Abort (the key after Done): nothing runs, the agent is told.
    s.mcp.ok("browser_click", json!({ "ref": show })).await;
    let r = {
        let mut call = std::pin::pin!(s.mcp.call("browser_click", json!({ "ref": cont })));
        still_waiting(&mut call, 2).await;
        in_popup(&human, &["Tab", "Return"], call.as_mut()).await.expect("browser_click")
    };
    assert_eq!(code(&r), "HUMAN_REQUIRED", "{}", r.raw);
    assert!(r.text().contains("aborted"), "{}", r.raw);
    assert_eq!(continued(&s.firefox.bidi, &page).await, json!("1"), "an aborted hand-off ran the click");
}
