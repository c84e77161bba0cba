//! The toolbar popup tells the person whether the bridge is connected.

use std::time::Duration;

use tests::{Stack, poll, send_signal};

const STATUS_TEXT: &str = "document.getElementById('status').textContent";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_popup_shows_the_connection_and_its_loss() {
    let s = Stack::start().await.expect("start the stack");
    let popup_url = format!("chrome-extension://{}/popup.html", shared::EXTENSION_ID);
    let popup = s.browser.cdp.new_page(&popup_url).await.expect("open the popup page");

    let want = format!("Connected to bridge (port {})", s.daemon.info.port);
    let shown = poll(Duration::from_secs(10), Duration::from_millis(100), || async {
        let v = popup.evaluate(STATUS_TEXT).await.ok()?;
        (v.as_str() == Some(want.as_str())).then_some(())
    })
    .await;
    assert!(shown.is_some(), "popup never showed {want:?}; it shows {:?}", popup.evaluate(STATUS_TEXT).await);

    // The daemon goes away: the popup must not keep claiming that
    // connection. (The worker's native bootstrap starts a new daemon for
    // the home, so it may show a new port, never the old one.)
    assert!(send_signal(s.daemon.info.pid, "TERM"), "stop the daemon");
    let changed = poll(Duration::from_secs(15), Duration::from_millis(100), || async {
        let v = popup.evaluate(STATUS_TEXT).await.ok()?;
        v.as_str().filter(|t| *t != want).map(str::to_string)
    })
    .await;
    let text = changed.unwrap_or_else(|| panic!("popup still shows {want:?} after the daemon stopped"));
    assert!(text.starts_with("Not connected") || text.starts_with("Connected to bridge (port "), "{text}");
    // Stop the daemon the native host started, if any.
    if let Ok(info) = std::fs::read_to_string(s.daemon.home().join("daemon.json"))
        && let Some(pid) = serde_json::from_str::<serde_json::Value>(&info).ok().and_then(|v| v["pid"].as_u64())
    {
        send_signal(pid as u32, "TERM");
    }
}
