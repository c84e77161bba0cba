//! A tab closed, or the whole browser gone, while a call is under way
//! (issue 14, "Restarts and crashes"): the agent gets a clear error within
//! a bound, never a hang, and nothing runs on its own afterwards.

use std::time::{Duration, Instant};

use serde_json::json;
use tests::{Cdp, Human, Stack, ref_of, send_signal};

use super::{code, new_tab, snapshot};

/// Far below every timeout a hang would hit (`COMMAND_TIMEOUT_MS`, 30 s;
/// the approval timeout of this stack, 60 s).
const CLEAR_ERROR_WITHIN: Duration = Duration::from_secs(10);

async fn close_tab_at(cdp: &Cdp, url: &str) {
    let t = cdp.targets().await.unwrap().into_iter().find(|t| t.kind == "page" && t.url == url);
    let t = t.unwrap_or_else(|| panic!("no page target at {url}"));
    cdp.close_target(&t.target_id).await.expect("close the tab");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tab_closed_or_a_browser_gone_mid_call_is_a_clear_error() {
    let mut s = Stack::start_with_config(Some("approval_timeout_secs = 60\n")).await.expect("start the stack");
    let human = Human::new(&s.browser.cdp);
    let cdp = &s.browser.cdp.clone();

    // ---- browser_wait_for on a tab that is closed while it waits
    let basic = s.url("/basic/index.html");
    new_tab(&mut s.mcp, &basic).await;
    let started = Instant::now();
    let (r, _) = tokio::join!(
        s.mcp.call("browser_wait_for", json!({ "text": "this text never appears", "ms": 25_000 })),
        async {
            tokio::time::sleep(Duration::from_millis(800)).await;
            close_tab_at(cdp, &basic).await;
        }
    );
    let r = r.expect("browser_wait_for");
    let took = started.elapsed();
    eprintln!("wait_for, tab closed: {} after {took:?}", r.raw);
    assert_eq!(code(&r), "NOT_FOUND", "{}", r.raw);
    assert!(took < Duration::from_millis(800) + CLEAR_ERROR_WITHIN, "took {took:?}");

    // ---- a click waiting for the person on a tab that is closed
    let account = s.url("/settings/account/");
    new_tab(&mut s.mcp, &account).await;
    let snap = snapshot(&mut s.mcp, json!({})).await.snapshot();
    let delete = ref_of(&snap, "button", "Delete account").expect("Delete account in the snapshot");
    let started = Instant::now();
    let (r, closed_at) = tokio::join!(s.mcp.call("browser_click", json!({ "ref": delete })), async {
        let _ = human.next_request(Duration::from_secs(20)).await.expect("the approval window shows the request");
        close_tab_at(cdp, &account).await;
        started.elapsed()
    });
    let r = r.expect("browser_click");
    let took = started.elapsed() - closed_at;
    eprintln!("pending click, tab closed: {} {took:?} after the close", r.raw);
    assert_eq!(code(&r), "NOT_FOUND", "{}", r.raw);
    assert!(took < CLEAR_ERROR_WITHIN, "took {took:?} after the tab closed");

    // ---- the whole browser killed while a call waits
    new_tab(&mut s.mcp, &basic).await;
    let pid = s.browser.pid().expect("the browser's pid");
    let started = Instant::now();
    let (r, _) = tokio::join!(
        s.mcp.call("browser_wait_for", json!({ "text": "this text never appears", "ms": 25_000 })),
        async {
            tokio::time::sleep(Duration::from_millis(800)).await;
            assert!(send_signal(pid, "KILL"), "kill the browser");
        }
    );
    let r = r.expect("browser_wait_for");
    let took = started.elapsed();
    eprintln!("wait_for, browser killed: {} after {took:?}", r.raw);
    assert_eq!(code(&r), "EXTENSION_DISCONNECTED", "{}", r.raw);
    assert!(took < Duration::from_millis(800) + CLEAR_ERROR_WITHIN, "took {took:?}");
    // Later calls say so at once.
    let r = s.mcp.call("browser_snapshot", json!({})).await.expect("browser_snapshot");
    assert_eq!(code(&r), "EXTENSION_DISCONNECTED", "{}", r.raw);
}
