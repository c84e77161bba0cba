//! Pages whose document goes away while the agent asks it something. The
//! worker asks a document over one port (docs/design.md, "One port per
//! document"); when that port closes before the answer, a read is asked
//! again of the tab's new document and an action never is, because whether
//! it was carried out cannot be known. Played here on `fixtures/sites/churn/`:
//! a button that reloads its page in the same task as its click (the
//! document asked to click is gone before it can answer), and a page that
//! reloads itself without end, from which the agent navigates away (the
//! page's reloads race the navigation: `extension/worker/src/navigation.rs`).
//! Every call answers, a result or an error with
//! a code, well within its bound; no click is carried out twice; a click
//! reported done happened.

use std::time::{Duration, Instant};

use serde_json::json;
use tests::{Stack, ToolResult, ref_of};

use super::{code, new_tab};

/// Far above any answer here (tens of ms), far below a hang.
const ANSWER_BOUND: Duration = Duration::from_secs(15);

/// How long the page is given to show a click's count after a reload.
const SETTLE: Duration = Duration::from_secs(3);

async fn timed(s: &mut Stack, tool: &str, args: serde_json::Value) -> ToolResult {
    let started = Instant::now();
    let r = s.mcp.call(tool, args.clone()).await.unwrap_or_else(|e| panic!("{tool} {args}: {e:#}"));
    assert!(started.elapsed() < ANSWER_BOUND, "{tool} took {:?}: {}", started.elapsed(), r.raw);
    if r.is_error() {
        assert!(!code(&r).is_empty(), "{tool}: an error without a code: {}", r.raw);
        assert_ne!(code(&r), "INTERNAL", "{tool}: {}", r.raw);
    }
    r
}

/// The count in the page's title ("clicks N") and the button's ref, from a
/// snapshot of the tab's current document.
async fn page_state(s: &mut Stack) -> (u64, Option<String>) {
    let r = timed(s, "browser_snapshot", json!({})).await;
    assert!(!r.is_error(), "a snapshot of a page that reloads is asked again, not refused: {}", r.raw);
    let title = r.data()["title"].as_str().unwrap_or_default().to_string();
    let count = title.strip_prefix("clicks ").and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("title {title:?}"));
    (count, ref_of(&r.snapshot(), "button", "Count"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_whose_document_goes_at_once_is_carried_out_once() {
    let mut s = Stack::start().await.expect("start the stack");
    let url = s.url("/churn/clicks.html");
    new_tab(&mut s.mcp, &url).await;

    let mut count = 0;
    let (mut done, mut refused) = (0, Vec::new());
    for round in 0..6 {
        let (now, button) = page_state(&mut s).await;
        assert_eq!(now, count, "round {round}: the page counted a click nobody made");
        let button = button.unwrap_or_else(|| panic!("round {round}: no Count button"));
        let r = timed(&mut s, "browser_click", json!({ "ref": button })).await;
        // The reload it starts shows the new count.
        let started = Instant::now();
        let after = loop {
            let (after, _) = page_state(&mut s).await;
            if after != count || started.elapsed() > SETTLE {
                break after;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert!(after <= count + 1, "round {round}: one click was carried out {} times: {}", after - count, r.raw);
        if r.is_error() {
            refused.push(code(&r));
        } else {
            assert_eq!(after, count + 1, "round {round}: a click reported done never reached the page: {}", r.raw);
            done += 1;
        }
        count = after;
    }
    assert!(count >= 1, "no click reached the page (errors: {refused:?})");
    eprintln!("churn clicks: {count} carried out of 6, {done} reported done, errors {refused:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_reloads_itself_is_read_or_refused_never_hangs() {
    let mut s = Stack::start().await.expect("start the stack");
    let url = s.url("/churn/reloading.moves.html?ms=50");
    new_tab(&mut s.mcp, &url).await;

    let mut loads_seen = Vec::new();
    let mut errors = Vec::new();
    for _ in 0..100 {
        let r = timed(&mut s, "browser_snapshot", json!({})).await;
        if r.is_error() {
            errors.push(code(&r));
            continue;
        }
        let title = r.data()["title"].as_str().unwrap_or_default().to_string();
        let loads: u64 =
            title.strip_prefix("loads ").and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("title {title:?}"));
        assert!(r.snapshot().contains("A page that reloads itself"), "{}", r.raw);
        loads_seen.push(loads);
    }
    // Reads keep working while the page keeps going away, and each is of a
    // document at least as new as the one before.
    assert!(loads_seen.len() >= 75, "only {} of 100 snapshots answered: errors {errors:?}", loads_seen.len());
    assert!(loads_seen.windows(2).all(|w| w[0] <= w[1]), "a snapshot of an older document: {loads_seen:?}");
    assert!(loads_seen.last() > loads_seen.first(), "the page never reloaded during the run: {loads_seen:?}");
}

/// The agent navigates away from a page that is about to reload itself:
/// the page's own reload can start before or after the agent's navigation
/// and must neither cancel it nor be taken for its load. A page that
/// reloads every quarter of a second lets every navigation through; one
/// that reloads every 30 ms may keep the tab (Chrome lets its reload
/// cancel ours each time), and then the agent is told so, never that the
/// tab is somewhere it is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_navigation_away_from_a_reloading_page_lands_where_it_was_sent() {
    let mut s = Stack::start().await.expect("start the stack");
    let targets = [s.url("/basic/index.html"), s.url("/basic/second.html")];
    // (reload every, navigations, refusals allowed: none counted at 30 ms).
    for (every_ms, rounds, may_refuse) in [(250u64, 8u64, Some(1usize)), (30, 12, None)] {
        let reloading = s.url(&format!("/churn/reloading.moves.html?ms={every_ms}"));
        new_tab(&mut s.mcp, &reloading).await;
        let mut errors = Vec::new();
        for round in 0..rounds {
            let target = &targets[(round % 2) as usize];
            // Anywhere between two of the page's loads.
            tokio::time::sleep(Duration::from_millis(round * every_ms / rounds)).await;
            let r = timed(&mut s, "browser_navigate", json!({ "url": target })).await;
            if r.is_error() {
                assert_eq!(code(&r), "PAGE_NOT_LOADED", "round {round}: {}", r.raw);
                errors.push(code(&r));
            } else {
                assert_eq!(
                    r.data()["tab"]["url"],
                    json!(target),
                    "every {every_ms} ms, round {round}: navigate reported another page: {}",
                    r.raw
                );
                let snap = timed(&mut s, "browser_snapshot", json!({})).await;
                assert_eq!(
                    snap.data()["url"],
                    json!(target),
                    "every {every_ms} ms, round {round}: the tab is not where it was sent: {}",
                    snap.raw
                );
            }
            let back = timed(&mut s, "browser_navigate", json!({ "url": reloading })).await;
            assert!(!back.is_error() || !code(&back).is_empty(), "{}", back.raw);
        }
        eprintln!("churn navigations away from a page reloading every {every_ms} ms: {rounds}, refused {errors:?}");
        if let Some(most) = may_refuse {
            assert!(errors.len() <= most, "every {every_ms} ms: navigations refused: {errors:?}");
        }
    }
}
