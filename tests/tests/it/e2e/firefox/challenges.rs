//! A challenge page stops an action in Firefox: with a CAPTCHA on the page
//! the agent's click is not dispatched. Headless Firefox keeps its normal
//! user agent; the native host finds `MOZ_HEADLESS` in the environment
//! Firefox started it with, so the add-on knows nobody can help and
//! refuses at once with `SECURITY_CHALLENGE` (as headless Chromium does),
//! instead of handing the tab to a person who is not there. The page never
//! sees the click. Before the CAPTCHA the same kind of click runs
//! (control).

use std::time::{Duration, Instant};

use serde_json::json;
use tests::ref_of;

use super::FxStack;
use crate::e2e::{code, snapshot};

const HUMAN_TIMEOUT_SECS: u64 = 6;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_challenge_page_stops_the_action() {
    let mut s = FxStack::start(Some(&format!("human_timeout_secs = {HUMAN_TIMEOUT_SECS}\n")), false).await;
    let (_, page) = s.agent_tab("/handoff/captcha.html").await;
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let show = ref_of(&snap, "button", "Show the check").unwrap_or_else(|| panic!("no Show the check:\n{snap}"));
    let cont = ref_of(&snap, "button", "Continue").unwrap_or_else(|| panic!("no Continue:\n{snap}"));
    // Control: a low-risk click runs while there is no challenge.
    s.mcp.ok("browser_click", json!({ "ref": show })).await.expect_untrusted();
    assert_eq!(s.eval(&page, "!!document.querySelector('.g-recaptcha')").await, json!(true), "the check is shown");
    let snap = snapshot(&mut s.mcp, json!({})).await;
    assert!(snap.raw.to_string().contains("captcha"), "the snapshot does not name the challenge: {}", snap.raw);

    let started = Instant::now();
    let r = tokio::time::timeout(
        Duration::from_secs(HUMAN_TIMEOUT_SECS + 30),
        s.mcp.call("browser_click", json!({ "ref": cont })),
    )
    .await
    .expect("the call is bounded by the hand-off's timeout")
    .expect("browser_click");
    assert_eq!(code(&r), "SECURITY_CHALLENGE", "headless: refused at once, no hand-off: {}", r.raw);
    assert!(r.text().contains("headless"), "{}", r.raw);
    assert!(started.elapsed() < Duration::from_secs(HUMAN_TIMEOUT_SECS), "it waited: {:?}", started.elapsed());
    assert_eq!(
        s.eval(&page, "document.body.dataset.continued || '0'").await,
        json!("0"),
        "the click ran on a CAPTCHA page"
    );
}
