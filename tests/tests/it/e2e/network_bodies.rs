//! The bodies build (issue 33): `dist/extension-bodies`, with the
//! `debugger` permission, captures the agent's tabs' text response bodies
//! and WebSocket messages. The page `fixtures/sites/netapp/live.html`
//! (opened with `browser_tabs new {url}`, so its first load counts) reads
//! JSON holding an access and a refresh token, then talks to the echo
//! server of `tests::netapp` (which greets with the access token). The
//! JSON body is readable with its sensitive keys redacted; the frames are
//! in the HAR (`_webSocketMessages`, checked by the npm `har-validator`);
//! and neither token is in any tool output, the export, the daemon's logs
//! or any file of the home.

use std::time::Duration;

use serde_json::{Value, json};
use tests::leaks::{Hit, Needles};
use tests::{Stack, netapp};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bodies_build_shows_json_bodies_redacted_and_websocket_frames() {
    let mut s = Stack::start_bodies(None).await.expect("start the stack with the bodies build");
    let creds = netapp::creds();
    let mut outputs: Vec<u8> = Vec::new();

    let live = s.url("/netapp/live.html");
    let r = s.mcp.ok("browser_tabs", json!({ "action": "new", "url": live })).await;
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    let tab = r.data()["tab"]["id"].as_i64().expect("tab id");
    let r = s.mcp.call("browser_wait_for", json!({ "text": "Live done", "ms": 30000 })).await.unwrap();
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    r.expect_ok("the page read its JSON and heard three WebSocket messages");

    // ---- the JSON answer: readable, sensitive keys redacted
    let mut session = Vec::new();
    for _ in 0..50 {
        let r = s.mcp.ok("browser_network_requests", json!({ "filter": "/netapp/open/session" })).await;
        outputs.extend_from_slice(r.raw.to_string().as_bytes());
        session = r.data()["requests"].as_array().cloned().unwrap_or_default();
        if !session.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(session.len(), 1, "{session:?}");
    assert_session_body_redacted(&mut s.mcp, &session[0]["id"], &mut outputs).await;

    // ---- the first load of the new tab: the page's own HTML is there
    assert_live_document_listed(&mut s.mcp, &mut outputs).await;

    // ---- WebSocket frames in the HAR
    let mut har = Value::Null;
    let mut path = std::path::PathBuf::new();
    for _ in 0..25 {
        let r = s.mcp.ok("browser_network_export", json!({ "name": "live", "tab": tab })).await;
        outputs.extend_from_slice(r.raw.to_string().as_bytes());
        path = std::path::PathBuf::from(r.data()["path"].as_str().unwrap());
        har = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let frames = socket_messages(&har);
        if frames.len() >= 5 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let frames = socket_messages(&har);
    let has = |kind: &str, data: &str| frames.iter().any(|m| m["type"] == kind && m["data"] == data);
    assert!(has("send", r#"{"n":1,"op":"ping"}"#), "{frames:#?}");
    assert!(has("send", "hello websocket"), "{frames:#?}");
    assert!(has("receive", "echo: hello websocket"), "{frames:#?}");
    assert!(has("receive", r#"{"hello":"ann","token":"••••"}"#), "the greeting's token is not redacted: {frames:#?}");
    netapp::validate_har(&path).unwrap_or_else(|e| panic!("the HAR is not valid HAR 1.2: {e}"));
    let session_entry = har["log"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["request"]["url"].as_str().unwrap_or("").ends_with("/netapp/open/session"))
        .cloned()
        .expect("the JSON answer in the HAR");
    let text = session_entry["response"]["content"]["text"].as_str().unwrap_or("");
    assert!(text.contains(r#""user":"ann""#) && text.contains(r#""access_token":"••••""#), "{text}");

    // ---- the canary scan: both tokens, everywhere
    let needles: Vec<(&str, Needles)> = vec![
        ("access token", Needles::for_secret(&creds.access)),
        ("refresh token", Needles::for_secret(&creds.refresh)),
    ];
    // Control: the scan finds the token the echo server really sent.
    let hello = format!(r#"{{"hello":"ann","token":"{}"}}"#, creds.access);
    assert!(!needles[0].1.find("control", hello.as_bytes()).is_empty(), "the scan would not notice a leak");
    let home = s.daemon.home().to_path_buf();
    let sinks = s.stop_for_scan(outputs);
    let mut hits: Vec<(&str, Hit)> = Vec::new();
    for (name, n) in &needles {
        for (place, bytes) in &sinks {
            hits.extend(n.find(place, bytes).into_iter().map(|h| (*name, h)));
        }
        hits.extend(n.find_in_tree(&home).0.into_iter().map(|h| (*name, h)));
    }
    assert!(hits.is_empty(), "credentials leaked: {hits:#?}");
}

/// Every `_webSocketMessages` item of the HAR's entries.
/// The `/netapp/open/session` answer `id` as the agent reads it: its
/// harmless keys readable, both tokens masked. The raw result is added
/// to `outputs` (for the leak scan).
pub(super) async fn assert_session_body_redacted(mcp: &mut tests::Mcp, id: &Value, outputs: &mut Vec<u8>) {
    let r = mcp.ok("browser_network_request", json!({ "id": id, "part": "response-body" })).await;
    let r = r.expect_untrusted();
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    let body = r.text();
    assert!(body.contains(r#""user":"ann""#) && body.contains(r#""plan":"pro""#), "harmless keys unreadable: {body}");
    assert!(body.contains(r#""access_token":"••••""#), "{body}");
    assert!(body.contains(r#""refresh_token":"••••""#), "{body}");
}

/// `live.html`'s first load is listed once, with the page's own HTML as
/// its body (added to `outputs`).
pub(super) async fn assert_live_document_listed(mcp: &mut tests::Mcp, outputs: &mut Vec<u8>) {
    let r = mcp.ok("browser_network_requests", json!({ "filter": "live.html" })).await;
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    let doc = r.data()["requests"].as_array().cloned().unwrap_or_default();
    assert_eq!(doc.len(), 1, "the first load is not listed: {doc:?}");
    let r = mcp.ok("browser_network_request", json!({ "id": doc[0]["id"], "part": "response-body" })).await;
    outputs.extend_from_slice(r.raw.to_string().as_bytes());
    assert!(r.text().contains("Net app live"), "the document's body: {}", r.text());
}

fn socket_messages(har: &Value) -> Vec<Value> {
    har["log"]["entries"]
        .as_array()
        .map(|es| es.iter().filter_map(|e| e["_webSocketMessages"].as_array()).flatten().cloned().collect())
        .unwrap_or_default()
}
