//! The MV3 service worker is killed when idle; the extension must come back
//! on its own (chrome.alarms wake-up + reconnect with backoff).

use std::time::Duration;

use serde_json::json;
use tests::{Stack, poll, wait_for_extension_within};

use super::{new_tab, snapshot_matches};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_extension_reconnects_after_its_worker_is_stopped() {
    let mut s = Stack::start().await.expect("start the stack");
    let index = s.url("/basic/index.html");
    new_tab(&mut s.mcp, &index).await;
    snapshot_matches(&mut s.mcp, &index, "basic/index.html").await;

    let before = s.daemon.status().await.unwrap();
    let first_connection = before.browsers.iter().map(|b| b.connection).max().expect("a connected browser");
    let worker = s.browser.extension_worker(Duration::from_secs(10)).await.expect("the extension's service worker");

    // Stop every service worker the way Chromium does when it is idle.
    // ServiceWorker.stopAllWorkers lives on a page session.
    let page = s.browser.cdp.new_page("about:blank").await.unwrap();
    page.call("ServiceWorker.enable", json!({})).await.unwrap();
    page.call("ServiceWorker.stopAllWorkers", json!({})).await.unwrap();
    let stopped = poll(Duration::from_secs(10), Duration::from_millis(100), || async {
        let targets = s.browser.cdp.targets().await.ok()?;
        (!targets.iter().any(|t| t.target_id == worker.target_id)).then_some(())
    })
    .await;
    if stopped.is_none() {
        // Fall back to closing the worker target.
        let _ = s.browser.cdp.close_target(&worker.target_id).await;
    }
    browser_cdp_close(&s, &page.target_id).await;

    // The daemon notices the socket closed…
    let dropped = poll(Duration::from_secs(15), Duration::from_millis(100), || async {
        let st = s.daemon.status().await.ok()?;
        (!st.browsers.iter().any(|b| b.connection == first_connection)).then_some(())
    })
    .await;
    assert!(
        dropped.is_some(),
        "connection #{first_connection} still listed 15 s after the service worker was stopped; daemon stderr:\n{}",
        s.daemon.stderr_tail(30)
    );

    // …and the extension comes back on its own within ~40 s.
    let back = wait_for_extension_within(&s.daemon, Duration::from_secs(45)).await;
    assert!(
        back.browsers.iter().any(|b| b.connection > first_connection),
        "no new connection after the worker restart: {back:?}"
    );

    // The agent carries on where it was.
    snapshot_matches(&mut s.mcp, &index, "basic/index.html").await;
}

async fn browser_cdp_close(s: &Stack, target: &str) {
    let _ = s.browser.cdp.close_target(target).await;
}
