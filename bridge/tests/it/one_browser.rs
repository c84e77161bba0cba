//! One browser per bridge: while an extension connection is live, a second
//! socket that says a valid hello is refused — closed with the
//! another-browser close code before any other frame, logged, counted in
//! `/status`, and told to the live connection — and the live one keeps
//! every command. Once the live socket has closed, a new one is accepted.

use std::time::Duration;

use crate::common::*;
use futures_util::SinkExt;
use shared::protocol::{
    ANOTHER_BROWSER_CLOSE_CODE, ANOTHER_BROWSER_CLOSE_REASON, BridgeStatus, BridgeToExt, Command, CommandResult,
    ExtToBridge,
};
use tokio_tungstenite::tungstenite::Message;

/// A local program with the extension token: says hello as `version`,
/// then keeps talking as if it had been accepted. Returns what came back.
async fn rogue_hello(b: &Bridge, version: &str) -> Received {
    let mut ws = ws_connect(b.port, Some(&ext_origin()), None).await.unwrap();
    send_json(&mut ws, &ExtToBridge::Hello { token: b.ext_token().to_string(), version: version.to_string() }).await;
    let asks =
        serde_json::to_string(&ExtToBridge::SecretRequest { request: 1, origin: "https://a.example:443".into() });
    let _ = ws.send(Message::text(asks.unwrap())).await;
    read_until_closed(&mut ws, Duration::from_secs(3)).await
}

async fn http_status(b: &Bridge) -> BridgeStatus {
    let r = raw_http(b.addr, "GET", "/status", &[format!("Host: {}", b.host()), bearer(b.mcp_token())], "").await;
    assert_eq!(r.status, 200, "{}", r.body);
    serde_json::from_str(&r.body).unwrap()
}

fn bearer(token: &str) -> String {
    format!("Authorization: Bearer {token}")
}

#[tokio::test]
async fn a_second_browser_is_refused_while_one_is_live_and_accepted_after_it_closes() {
    logs();
    let b = Bridge::start().await;
    let first = FakeExt::connect(&b, browser_like()).await;
    let live = b.state.hub().connections()[0].connection;

    let got = rogue_hello(&b, "6.6.6-rogue").await;
    assert!(got.ended, "the second socket stayed open");
    assert_eq!(got.close.map(u16::from), Some(ANOTHER_BROWSER_CLOSE_CODE));
    assert_eq!(got.reason.as_deref(), Some(ANOTHER_BROWSER_CLOSE_REASON));
    assert!(got.frames.is_empty(), "the second socket got frames: {:?}", got.frames);

    // The live connection stays the one, keeps the commands, and is told.
    let conns = b.state.hub().connections();
    assert_eq!(conns.iter().map(|c| c.connection).collect::<Vec<_>>(), [live]);
    let r = b.state.hub().call(Command::TabClose { tab: 5 }, Duration::from_secs(5)).await.unwrap();
    assert_eq!(r, CommandResult::Closed { tab: 5 });
    assert_eq!(first.commands(), [Command::TabClose { tab: 5 }]);
    let told = tests_poll(|| {
        first.others.lock().unwrap().iter().find_map(|f| match f {
            BridgeToExt::SecondBrowserRefused { refused, total } => Some((refused.clone(), *total)),
            _ => None,
        })
    })
    .await
    .expect("the live connection was not told");
    assert_eq!((told.0.extension_version.as_str(), told.1), ("6.6.6-rogue", 1));
    let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    assert!(told.0.at_ms <= now_ms && told.0.at_ms + 60_000 > now_ms, "{told:?}");

    // /status shows it (one browser, one refusal).
    let st = http_status(&b).await;
    assert_eq!(st.browsers.len(), 1);
    assert_eq!(st.refused.total, 1);
    assert_eq!(st.refused.recent, std::slice::from_ref(&told.0));

    // Logged as a warning with the claimed version, never the token.
    let text = String::from_utf8_lossy(&logs().lock().unwrap()).to_string();
    // (The log is the whole test binary's: this test's line is the one
    // with its claimed version.)
    let line = text
        .lines()
        .find(|l| l.contains("second browser refused") && l.contains("6.6.6-rogue"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("WARN") && line.contains("another_browser_connected"), "{line}");
    assert!(!text.contains(b.ext_token()), "the token is in the log");

    // Refusals are not failed authentications: more of them do not lock
    // the extension out (the limit is 10 failures a minute).
    for i in 0..(bridge::server::MAX_AUTH_FAILURES + 2) {
        let got = rogue_hello(&b, &format!("rogue-{i}")).await;
        assert_eq!(got.close.map(u16::from), Some(ANOTHER_BROWSER_CLOSE_CODE));
    }
    assert_eq!(http_status(&b).await.refused.total, u64::from(bridge::server::MAX_AUTH_FAILURES) + 3);
    assert_eq!(
        http_status(&b).await.refused.recent.len(),
        shared::protocol::MAX_REMEMBERED_REFUSALS,
        "only the latest are kept in detail"
    );

    // Once the live socket has closed, the next browser is accepted.
    drop(first);
    tests_poll(|| (!b.state.hub().is_connected()).then_some(())).await.expect("the first connection stays listed");
    let mut second = authenticated_ws(&b).await;
    let conns = b.state.hub().connections();
    assert_eq!(conns.len(), 1);
    assert!(conns[0].connection > live);
    send_json(&mut second, &ExtToBridge::Ping { seq: 3 }).await;
    assert_eq!(next_frame(&mut second).await, BridgeToExt::Pong { seq: 3 });
}

/// Polls `f` every 10 ms for up to 5 s.
async fn tests_poll<T>(mut f: impl FnMut() -> Option<T>) -> Option<T> {
    for _ in 0..500 {
        if let Some(v) = f() {
            return Some(v);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    None
}
