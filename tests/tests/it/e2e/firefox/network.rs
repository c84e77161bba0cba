//! Network capture in Firefox's default build (issue 38): response bodies
//! come through `webRequest.filterResponseData`, where Chromium needs its
//! bodies build. The page `fixtures/sites/netapp/live.html` reads JSON
//! holding an access and a refresh token: the agent reads the body with
//! both redacted, the page itself receives exactly the bytes the server
//! sent (the filter only observes), the person's own tab is not captured,
//! and neither token is in any output.

use std::time::Duration;

use serde_json::{Value, json};
use tests::leaks::Needles;
use tests::netapp;

use super::FxStack;
use crate::e2e::network_bodies::{assert_live_document_listed, assert_session_body_redacted};
use crate::e2e::new_tab;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn response_bodies_come_redacted_and_the_page_gets_them_unchanged() {
    let mut s = FxStack::start(None, false).await;
    let creds = netapp::creds();
    let mut outputs: Vec<u8> = Vec::new();
    let live = s.url("/netapp/live.html");
    new_tab(&mut s.mcp, &live).await;
    let r = s.mcp.call("browser_wait_for", json!({ "text": "Live done", "ms": 30000 })).await.unwrap();
    r.expect_ok("the page read its JSON and heard its WebSocket messages");
    let page = s.page(&live).await;

    // The page's own copy, fetched again through the same filter: the
    // server's bytes exactly.
    let want = format!(
        r#"{{"user":"ann","plan":"pro","access_token":"{}","nested":{{"refresh_token":"{}"}}}}"#,
        creds.access, creds.refresh
    );
    let got = s.eval(&page, "fetch('/netapp/open/session').then((r) => r.text())").await;
    assert_eq!(got, json!(want), "the page did not get the server's body unchanged");

    // The person's own tab reads the same JSON: not captured (and given
    // no stream filter, which only an agent's tab gets).
    let person = s.firefox.bidi.call("browsingContext.create", json!({ "type": "tab" })).await.expect("a tab");
    let person_url = format!("{live}?person");
    s.firefox
        .bidi
        .call(
            "browsingContext.navigate",
            json!({ "context": person["context"], "url": person_url, "wait": "complete" }),
        )
        .await
        .expect("the person's page");
    let ctx = person["context"].as_str().unwrap_or_default().to_string();
    let got = s.eval(&ctx, "fetch('/netapp/open/session?person').then((r) => r.text())").await;
    assert_eq!(got, json!(want), "the person's page did not get the server's body");

    let mut session: Vec<Value> = Vec::new();
    for _ in 0..50 {
        let r = s.mcp.ok("browser_network_requests", json!({ "filter": "/netapp/open/session" })).await;
        outputs.extend_from_slice(r.raw.to_string().as_bytes());
        session = r.data()["requests"].as_array().cloned().unwrap_or_default();
        if session.len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(session.len(), 2, "the agent page's two reads, and not the person's: {session:?}");
    let r = s.mcp.ok("browser_network_requests", json!({ "filter": "person" })).await;
    assert_eq!(r.data()["requests"], json!([]), "the person's tab was captured: {}", r.raw);
    for req in &session {
        assert_session_body_redacted(&mut s.mcp, &req["id"], &mut outputs).await;
    }

    // The document's own HTML.
    assert_live_document_listed(&mut s.mcp, &mut outputs).await;

    // Its WebSocket: listed, and plainly without messages in Firefox.
    let r = s.mcp.ok("browser_network_requests", json!({ "filter": "/netapp/ws", "types": ["websocket"] })).await;
    let ws = r.data()["requests"].as_array().cloned().unwrap_or_default();
    assert_eq!(ws.len(), 1, "the page's WebSocket is not listed: {}", r.raw);
    let r = s.mcp.ok("browser_network_request", json!({ "id": ws[0]["id"] })).await;
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    assert!(r.text().contains("WebSocket messages are not captured in Firefox"), "{}", r.text());

    let needles = [Needles::for_secret(&creds.access), Needles::for_secret(&creds.refresh)];
    // Control: the scan finds the token where it is.
    assert!(!needles[0].find("control", want.as_bytes()).is_empty(), "the scan would not notice a leak");
    let mcp_bytes = s.mcp.received().to_vec();
    for n in &needles {
        let hits: Vec<_> =
            n.find("tool outputs", &outputs).into_iter().chain(n.find("MCP responses", &mcp_bytes)).collect();
        assert!(hits.is_empty(), "a token leaked: {hits:#?}");
    }
}
