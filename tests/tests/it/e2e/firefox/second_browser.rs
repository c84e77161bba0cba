//! One browser per bridge, across browsers: with Chromium's extension
//! connected, Firefox's add-on (same home, same native host) is refused
//! and reported, and every command still goes to Chromium; once Chromium
//! is gone, Firefox takes over.

use std::time::Duration;

use serde_json::json;
use tests::Stack;
use tests::firefox::Firefox;

use crate::e2e::new_tab;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn firefox_is_refused_while_chromium_is_connected_and_takes_over_later() {
    let mut s = Stack::start_headless(None).await.expect("start Chromium's stack");
    let first = s.connected.browsers[0].connection;
    let firefox = Firefox::with_extension(s.daemon.home(), false).await.expect("start Firefox");
    let refused = tests::poll(Duration::from_secs(60), Duration::from_millis(300), || async {
        let st = s.daemon.status().await.ok()?;
        (st.refused.total >= 1).then_some(st)
    })
    .await
    .unwrap_or_else(|| panic!("Firefox's add-on was never refused; Firefox said:\n{}", firefox.stderr_tail(30)));
    assert_eq!(refused.browsers.len(), 1, "{refused:?}");
    assert_eq!(refused.browsers[0].connection, first, "the connected browser changed: {refused:?}");

    // Commands still go to Chromium: the tab opens there, not in Firefox.
    let url = s.url("/basic/index.html");
    new_tab(&mut s.mcp, &url).await;
    let in_chromium = s.browser.pages().await.unwrap().iter().any(|p| p.url == url);
    assert!(in_chromium, "the agent's tab is not in Chromium");
    let in_firefox = firefox.contexts_at(&url).await.unwrap();
    assert!(in_firefox.is_empty(), "the agent's tab opened in the refused Firefox");

    // Chromium goes away: Firefox's add-on connects (it keeps trying).
    let pid = s.browser.pid().expect("Chromium's pid");
    assert!(tests::send_signal(pid, "KILL"), "could not stop Chromium");
    let took_over = tests::poll(Duration::from_secs(90), Duration::from_millis(500), || async {
        let st = s.daemon.status().await.ok()?;
        st.browsers.iter().any(|b| b.connection > first).then_some(())
    })
    .await;
    assert!(took_over.is_some(), "Firefox did not take over; it said:\n{}", firefox.stderr_tail(30));
    let mut mcp = s.daemon.mcp().await.expect("a new session");
    let r = mcp.ok("browser_tabs", json!({ "action": "new", "url": url })).await.expect_untrusted();
    assert!(!r.is_error(), "{}", r.raw);
    let opened = firefox.tab(&url, Duration::from_secs(10)).await;
    assert!(opened.is_ok(), "the tab did not open in Firefox");
}
