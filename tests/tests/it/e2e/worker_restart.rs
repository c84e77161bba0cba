//! The MV3 service worker is killed when idle; the extension must come back
//! on its own (chrome.alarms wake-up + reconnect with backoff), and what was
//! under way when it stopped must end safely (issue 14, "Restarts and
//! crashes"): a pending approval is never approved by the restart, an
//! in-flight action reports its real result or `EFFECT_UNKNOWN`, and a
//! high-risk action never runs twice (presses counted on the page).

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tests::{Browser, CdpSession, Daemon, Human, Stack, poll, ref_of, wait_for_extension_within};

use super::{code, new_tab, page_at, snapshot, snapshot_matches};

/// Stops every service worker (CDP `ServiceWorker.stopAllWorkers`, what
/// Chromium does to an idle worker) and waits until the daemon has seen the
/// socket close; returns the connection number that was live.
async fn stop_worker(daemon: &Daemon, browser: &Browser) -> u64 {
    let s = Parts { daemon, browser };
    let before = s.daemon.status().await.unwrap();
    let first_connection = before.browsers.iter().map(|b| b.connection).max().expect("a connected browser");
    let worker = s.browser.extension_worker(Duration::from_secs(10)).await.expect("the extension's service worker");
    let page = s.browser.cdp.new_page("about:blank").await.unwrap();
    page.call("ServiceWorker.enable", json!({})).await.unwrap();
    page.call("ServiceWorker.stopAllWorkers", json!({})).await.unwrap();
    let stopped = poll(Duration::from_secs(10), Duration::from_millis(100), || async {
        let targets = s.browser.cdp.targets().await.ok()?;
        (!targets.iter().any(|t| t.target_id == worker.target_id)).then_some(())
    })
    .await;
    if stopped.is_none() {
        let _ = s.browser.cdp.close_target(&worker.target_id).await;
    }
    let _ = s.browser.cdp.close_target(&page.target_id).await;
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
    first_connection
}

struct Parts<'a> {
    daemon: &'a Daemon,
    browser: &'a Browser,
}

/// Waits (≤ 45 s) for a connection newer than `after`; returns how long it took.
async fn wait_back(s: &Stack, after: u64) -> Duration {
    let start = Instant::now();
    let back = wait_for_extension_within(&s.daemon, Duration::from_secs(45)).await;
    assert!(back.browsers.iter().any(|b| b.connection > after), "no new connection after the worker restart: {back:?}");
    start.elapsed()
}

async fn deleted(page: &CdpSession) -> Value {
    page.evaluate("document.body.dataset.deleted || '0'").await.unwrap()
}

async fn find_ref(s: &mut Stack, role: &str, name: &str) -> String {
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    ref_of(&snap, role, name).unwrap_or_else(|| panic!("no {role} {name:?} in the snapshot:\n{snap}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_under_way_when_the_worker_stops_ends_safely() {
    let mut s = Stack::start_with_config(Some("approval_timeout_secs = 60\n")).await.expect("start the stack");
    let human = Human::new(&s.browser.cdp);
    let account = s.url("/settings/account/");
    new_tab(&mut s.mcp, &account).await;
    let page = page_at(&s, &account).await;

    // ---- a high-risk click waits for the person; the worker stops
    let delete = find_ref(&mut s, "button", "Delete account").await;
    let (daemon, browser) = (&s.daemon, &s.browser);
    let (r, (old_window, old_request, connection)) =
        tokio::join!(s.mcp.call("browser_click", json!({ "ref": delete })), async {
            let (win, req) =
                human.next_request(Duration::from_secs(20)).await.expect("the approval window shows the request");
            let connection = stop_worker(daemon, browser).await;
            (win, req.request, connection)
        });
    let r = r.expect("browser_click");
    let waited = code(&r);
    assert_eq!(waited, "APPROVAL_DENIED", "a pending approval must end as denied when the worker stops: {}", r.raw);
    assert_eq!(deleted(&page).await, json!("0"), "an approval nobody gave ran");
    let took = wait_back(&s, connection).await;
    eprintln!("worker restart with an approval pending: back after {took:?}");
    // The old card is gone (or its window closed), and pressing Approve on
    // what is left of it approves nothing.
    let _ = human.approve(&old_window, old_request).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(deleted(&page).await, json!("0"), "a stale approval card approved after the restart");

    // ---- approved after the restart, it runs exactly once
    let delete = find_ref(&mut s, "button", "Delete account").await;
    let (r, _) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": delete })), async {
        let (win, req) =
            human.next_request(Duration::from_secs(20)).await.expect("the approval window shows the request");
        assert_ne!(req.request, old_request, "a request id was reused after the restart");
        human.approve(&win, req.request).await.expect("click Approve");
    });
    let r = r.expect("browser_click").expect_untrusted();
    assert_eq!(r.data()["decided_by"], json!("human"), "{}", r.raw);
    assert_eq!(deleted(&page).await, json!("1"));

    // ---- approved, then the worker stops at once: it ran once or not at all
    let delete = find_ref(&mut s, "button", "Delete account").await;
    let (daemon, browser) = (&s.daemon, &s.browser);
    let (r, connection) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": delete })), async {
        let (win, req) =
            human.next_request(Duration::from_secs(20)).await.expect("the approval window shows the request");
        human.approve(&win, req.request).await.expect("click Approve");
        stop_worker(daemon, browser).await
    });
    let r = r.expect("browser_click");
    let c = code(&r);
    assert!(c.is_empty() || c == "EFFECT_UNKNOWN", "approved then interrupted: {}", r.raw);
    wait_back(&s, connection).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = deleted(&page).await;
    assert!(
        after == json!("2") || (c == "EFFECT_UNKNOWN" && after == json!("1")),
        "ran {after} times in all: {}",
        r.raw
    );
    assert!(
        !human.approval_window_open().await
            || human.shown_requests(&human.approval_window(Duration::from_secs(1)).await.unwrap()).await.is_empty(),
        "a request is still shown after it ended"
    );

    // ---- a low-risk click in flight: its real result or EFFECT_UNKNOWN, once
    let publish = find_ref(&mut s, "button", "Publish").await;
    let (daemon, browser) = (&s.daemon, &s.browser);
    let (r, connection) =
        tokio::join!(s.mcp.call("browser_click", json!({ "ref": publish })), stop_worker(daemon, browser));
    let r = r.expect("browser_click");
    let c = code(&r);
    // "Publish" may ask the person under the default policy: stopped while
    // asking, the approval is void (APPROVAL_DENIED) and nothing ran.
    assert!(
        c.is_empty() || c == "EFFECT_UNKNOWN" || c == "EXTENSION_DISCONNECTED" || c == "APPROVAL_DENIED",
        "click in flight: {}",
        r.raw
    );
    wait_back(&s, connection).await;
    let published = page.evaluate("document.body.dataset.published || '0'").await.unwrap();
    if c.is_empty() {
        assert_eq!(published, json!("1"), "reported done but did not run: {}", r.raw);
    } else {
        assert!(published == json!("0") || published == json!("1"), "ran {published} times");
    }
    if c == "EXTENSION_DISCONNECTED" || c == "APPROVAL_DENIED" {
        assert_eq!(published, json!("0"), "{c} but it ran");
    }
    // The agent carries on.
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    assert!(snap.contains("Delete account"), "{snap}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_extension_reconnects_after_its_worker_is_stopped() {
    let mut s = Stack::start().await.expect("start the stack");
    let index = s.url("/basic/index.html");
    new_tab(&mut s.mcp, &index).await;
    snapshot_matches(&mut s.mcp, &index, "basic/index.html").await;

    // Stop every service worker the way Chromium does when it is idle; the
    // daemon notices the socket closed…
    let first_connection = stop_worker(&s.daemon, &s.browser).await;
    // …and the extension comes back on its own within ~40 s.
    wait_back(&s, first_connection).await;

    // The agent carries on where it was.
    snapshot_matches(&mut s.mcp, &index, "basic/index.html").await;
}
