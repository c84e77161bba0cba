//! Security tests of the bridge's loopback server: every refusal asserts
//! the status (or close code) AND that nothing happened behind it.

mod common;

use std::time::{Duration, Instant};

use bridge::ServeConfig;
use bridge::home::Tokens;
use common::*;
use futures_util::SinkExt;
use shared::protocol::{BridgeStatus, BridgeToExt, Command, ExtToBridge};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

fn bearer(token: &str) -> String {
    format!("Authorization: Bearer {token}")
}

async fn assert_no_mcp_effect(b: &Bridge) {
    assert_eq!(b.state.mcp_handlers_created(), 0, "rmcp was reached");
    assert_eq!(b.state.mcp_session_count().await, 0, "an MCP session was created");
}

#[tokio::test]
async fn mcp_refuses_missing_wrong_short_and_foreign_tokens() {
    let b = Bridge::start().await;
    let mcp = b.mcp_token().to_string();
    let cases: Vec<(&str, Vec<String>)> = vec![
        ("missing", vec![]),
        ("wrong", vec![bearer(&"0".repeat(64))]),
        ("short", vec![bearer(&mcp[..16])]),
        ("empty", vec!["Authorization: Bearer ".to_string()]),
        ("extension token", vec![bearer(b.ext_token())]),
        ("dashboard token", vec![bearer(b.tokens.dashboard.expose())]),
        ("not bearer", vec![format!("Authorization: Basic {mcp}")]),
        ("two headers", vec![bearer(&mcp), bearer(&mcp)]),
    ];
    for (what, extra) in cases {
        let r = raw_http(b.addr, "POST", "/mcp", &mcp_headers(&b.host(), &extra), INITIALIZE).await;
        assert_eq!(r.status, 401, "POST /mcp with {what} token");
        assert!(!r.body.contains(&mcp), "token echoed");
        let mut h = vec![format!("Host: {}", b.host())];
        h.extend(extra.clone());
        let r = raw_http(b.addr, "GET", "/status", &h, "").await;
        assert_eq!(r.status, 401, "GET /status with {what} token");
        assert!(!r.body.contains("\"port\""), "status leaked");
    }
    assert_no_mcp_effect(&b).await;

    // The witness works: the right token does reach rmcp.
    let r = raw_http(b.addr, "POST", "/mcp", &mcp_headers(&b.host(), &[bearer(&mcp)]), INITIALIZE).await;
    assert_eq!(r.status, 200, "{}", r.head);
    assert!(b.state.mcp_handlers_created() >= 1);
}

#[tokio::test]
async fn status_with_the_mcp_token_reports_the_bridge() {
    let b = Bridge::start().await;
    async fn get(b: &Bridge) -> RawResponse {
        raw_http(b.addr, "GET", "/status", &[format!("Host: {}", b.host()), bearer(b.mcp_token())], "").await
    }
    let r = get(&b).await;
    assert_eq!(r.status, 200);
    let status: BridgeStatus = serde_json::from_str(&r.body).unwrap();
    assert_eq!(status.port, b.port);
    assert_eq!(status.pid, std::process::id());
    assert!(status.browsers.is_empty());

    let _ext = FakeExt::connect(&b, browser_like()).await;
    let status: BridgeStatus = serde_json::from_str(&get(&b).await.body).unwrap();
    assert_eq!(status.browsers.len(), 1);
    assert_eq!(status.browsers[0].extension_version, "0.1.0-test");
    assert_eq!(status.browsers[0].connection, 1);
}

#[tokio::test]
async fn any_origin_on_mcp_and_status_is_refused() {
    let b = Bridge::start().await;
    for origin in ["https://evil.example", "null", &ext_origin(), "http://127.0.0.1:1"] {
        let extra = [bearer(b.mcp_token()), format!("Origin: {origin}")];
        let r = raw_http(b.addr, "POST", "/mcp", &mcp_headers(&b.host(), &extra), INITIALIZE).await;
        assert_eq!(r.status, 403, "Origin {origin} on /mcp");
        assert!(!r.has_cors_header());
        let r = raw_http(
            b.addr,
            "GET",
            "/status",
            &[format!("Host: {}", b.host()), extra[0].clone(), extra[1].clone()],
            "",
        )
        .await;
        assert_eq!(r.status, 403, "Origin {origin} on /status");
    }
    assert_no_mcp_effect(&b).await;
}

#[tokio::test]
async fn hosts_other_than_loopback_with_our_port_are_refused() {
    let b = Bridge::start().await;
    let p = b.port;
    let bad = [
        format!("evil.example:{p}"),
        format!("localhost6:{p}"),
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        format!("127.0.0.1:{}", p.wrapping_add(1)),
        format!("127.0.0.2:{p}"),
        format!("LOCALHOST:{p}"),
        format!("localhost.:{p}"),
        format!("[::1]:{}", p.wrapping_add(1)),
    ];
    for host in &bad {
        let r = raw_http(b.addr, "POST", "/mcp", &mcp_headers(host, &[bearer(b.mcp_token())]), INITIALIZE).await;
        assert_eq!(r.status, 403, "Host {host} on /mcp");
        let r = raw_http(b.addr, "GET", "/status", &[format!("Host: {host}"), bearer(b.mcp_token())], "").await;
        assert_eq!(r.status, 403, "Host {host} on /status");
    }
    // No Host at all (HTTP/1.0 style).
    let r = raw_http(b.addr, "GET", "/status", &[bearer(b.mcp_token())], "").await;
    assert_eq!(r.status, 403, "missing Host");
    // The WebSocket upgrade is checked too.
    let s = refused_status(ws_connect(b.port, Some(&ext_origin()), Some(&format!("evil.example:{p}"))).await);
    assert_eq!(s, 403);
    assert_no_mcp_effect(&b).await;
    assert!(!b.state.hub().is_connected());

    // The three accepted spellings.
    for host in [format!("127.0.0.1:{p}"), format!("localhost:{p}"), format!("[::1]:{p}")] {
        let r = raw_http(b.addr, "GET", "/status", &[format!("Host: {host}"), bearer(b.mcp_token())], "").await;
        assert_eq!(r.status, 200, "Host {host}");
    }
}

#[tokio::test]
async fn options_is_refused_everywhere_without_cors_headers() {
    let b = Bridge::start().await;
    for path in ["/mcp", "/status", "/ext", "/nope"] {
        let headers = [
            format!("Host: {}", b.host()),
            "Origin: https://evil.example".to_string(),
            "Access-Control-Request-Method: POST".to_string(),
            "Access-Control-Request-Headers: authorization".to_string(),
        ];
        let r = raw_http(b.addr, "OPTIONS", path, &headers, "").await;
        assert_eq!(r.status, 405, "OPTIONS {path}");
        assert!(!r.has_cors_header(), "CORS header on OPTIONS {path}: {}", r.head);
        let r = raw_http(b.addr, "OPTIONS", path, &[format!("Host: {}", b.host()), bearer(b.mcp_token())], "").await;
        assert_eq!(r.status, 405, "plain OPTIONS {path}");
        assert!(!r.has_cors_header());
    }
    assert_no_mcp_effect(&b).await;
}

#[tokio::test]
async fn ext_upgrade_needs_the_pinned_origin() {
    let b = Bridge::start().await;
    assert_eq!(refused_status(ws_connect(b.port, None, None).await), 403, "missing Origin");
    for origin in [
        "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "https://evil.example",
        "null",
        &format!("chrome-extension://{}/", shared::EXTENSION_ID),
        &format!("CHROME-EXTENSION://{}", shared::EXTENSION_ID),
    ] {
        assert_eq!(refused_status(ws_connect(b.port, Some(origin), None).await), 403, "Origin {origin}");
    }
    assert!(!b.state.hub().is_connected());
    assert_eq!(b.state.hub().connections().len(), 0);
}

#[tokio::test]
async fn ext_hello_with_a_bad_token_closes_without_welcome() {
    let b = Bridge::start().await;
    let ext = b.ext_token().to_string();
    let bad_hellos = [
        ("wrong", serde_json::json!({"type": "hello", "token": "f".repeat(64), "version": "1"})),
        ("short", serde_json::json!({"type": "hello", "token": &ext[..32], "version": "1"})),
        ("empty", serde_json::json!({"type": "hello", "token": "", "version": "1"})),
        ("missing", serde_json::json!({"type": "hello", "version": "1"})),
        ("mcp token", serde_json::json!({"type": "hello", "token": b.mcp_token(), "version": "1"})),
        ("dashboard token", serde_json::json!({"type": "hello", "token": b.tokens.dashboard.expose(), "version": "1"})),
        ("extra field", serde_json::json!({"type": "hello", "token": &ext, "version": "1", "approve": true})),
        ("ping first", serde_json::json!({"type": "ping", "seq": 1})),
    ];
    for (what, hello) in bad_hellos {
        let mut ws = ws_connect(b.port, Some(&ext_origin()), None).await.unwrap();
        send_json(&mut ws, &hello).await;
        let got = read_until_closed(&mut ws, Duration::from_secs(3)).await;
        assert!(got.ended, "{what}: socket stayed open");
        assert_eq!(got.close, Some(CloseCode::Policy), "{what}");
        assert!(got.frames.is_empty(), "{what}: got {:?}", got.frames);
        assert!(!b.state.hub().is_connected(), "{what}: connected");
    }
    assert!(b.state.hub().connections().is_empty());
}

#[tokio::test]
async fn ext_without_hello_is_closed_after_the_timeout() {
    let b = Bridge::start().await;
    let started = Instant::now();
    let mut ws = ws_connect(b.port, Some(&ext_origin()), None).await.unwrap();
    let got = read_until_closed(&mut ws, Duration::from_secs(8)).await;
    let elapsed = started.elapsed();
    assert!(got.ended, "still open after 8 s");
    assert_eq!(got.close, Some(CloseCode::Policy));
    assert!(got.frames.is_empty());
    assert!(elapsed >= Duration::from_millis(4500), "closed too early: {elapsed:?}");
    assert!(!b.state.hub().is_connected());
}

#[tokio::test]
async fn binary_frames_close_the_socket() {
    let b = Bridge::start().await;
    // Before hello.
    let mut ws = ws_connect(b.port, Some(&ext_origin()), None).await.unwrap();
    ws.send(Message::binary(b"{\"type\":\"hello\"}".to_vec())).await.unwrap();
    let got = read_until_closed(&mut ws, Duration::from_secs(3)).await;
    assert_eq!(got.close, Some(CloseCode::Policy));
    assert!(got.frames.is_empty());
    assert!(!b.state.hub().is_connected());

    // After hello: the connection is dropped from the hub.
    let mut ws = authenticated_ws(&b).await;
    assert!(b.state.hub().is_connected());
    ws.send(Message::binary(vec![1, 2, 3])).await.unwrap();
    let got = read_until_closed(&mut ws, Duration::from_secs(3)).await;
    assert_eq!(got.close, Some(CloseCode::Policy));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!b.state.hub().is_connected());
}

#[tokio::test]
async fn six_invalid_frames_close_an_authenticated_socket() {
    let b = Bridge::start().await;
    let mut ws = authenticated_ws(&b).await;
    let invalid = [
        "not json",
        r#"{"type":"approve","id":1}"#,
        r#"{"type":"ping","seq":1,"yolo":true}"#,
        r#"{"type":"hello","token":"x","version":"1"}"#,
        r#"{"type":"response","id":1,"outcome":{"ok":{"kind":"evaluate"}}}"#,
    ];
    for frame in invalid {
        ws.send(Message::text(frame)).await.unwrap();
    }
    // Five invalid frames: still open and answering.
    send_json(&mut ws, &ExtToBridge::Ping { seq: 7 }).await;
    assert_eq!(next_frame(&mut ws).await, BridgeToExt::Pong { seq: 7 });
    assert!(b.state.hub().is_connected());
    ws.send(Message::text("{}")).await.unwrap();
    let got = read_until_closed(&mut ws, Duration::from_secs(3)).await;
    assert_eq!(got.close, Some(CloseCode::Policy));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!b.state.hub().is_connected());
}

#[tokio::test]
async fn at_most_ten_unauthenticated_sockets() {
    let b = Bridge::start().await;
    let mut waiting = Vec::new();
    for _ in 0..shared::limits::MAX_UNAUTHENTICATED_SOCKETS {
        waiting.push(ws_connect(b.port, Some(&ext_origin()), None).await.unwrap());
    }
    assert_eq!(refused_status(ws_connect(b.port, Some(&ext_origin()), None).await), 503);
    // One authenticates: its slot is released.
    let mut first = waiting.remove(0);
    send_hello(&mut first, b.ext_token()).await;
    assert!(matches!(next_frame(&mut first).await, BridgeToExt::Welcome { .. }));
    // Another socket gets past the limit again (then, a browser being
    // connected, it is refused as a second one: see one_browser.rs).
    let mut another = ws_connect(b.port, Some(&ext_origin()), None).await.unwrap();
    send_hello(&mut another, b.ext_token()).await;
    let got = read_until_closed(&mut another, Duration::from_secs(3)).await;
    assert_eq!(got.close.map(u16::from), Some(shared::protocol::ANOTHER_BROWSER_CLOSE_CODE));
    assert_eq!(b.state.hub().connections().len(), 1);
}

#[tokio::test]
async fn failed_hellos_are_rate_limited() {
    let b = Bridge::start().await;
    for _ in 0..bridge::server::MAX_AUTH_FAILURES {
        let mut ws = ws_connect(b.port, Some(&ext_origin()), None).await.unwrap();
        send_hello(&mut ws, &"0".repeat(64)).await;
        assert!(read_until_closed(&mut ws, Duration::from_secs(3)).await.ended);
    }
    // Even the right token is refused until the window ends.
    assert_eq!(refused_status(ws_connect(b.port, Some(&ext_origin()), None).await), 429);
    assert!(!b.state.hub().is_connected());
}

#[tokio::test]
async fn ping_gets_pong_and_welcome_carries_the_version() {
    let b = Bridge::start().await;
    let mut ws = ws_connect(b.port, Some(&ext_origin()), None).await.unwrap();
    send_hello(&mut ws, b.ext_token()).await;
    assert_eq!(next_frame(&mut ws).await, BridgeToExt::Welcome { version: shared::VERSION.to_string() });
    send_json(&mut ws, &ExtToBridge::Ping { seq: 42 }).await;
    assert_eq!(next_frame(&mut ws).await, BridgeToExt::Pong { seq: 42 });
}

#[tokio::test]
async fn hub_calls_fail_cleanly_without_a_working_extension() {
    let b = Bridge::start().await;
    let hub = b.state.hub();
    let cmd = || Command::TabsList { tabs: vec![] };
    let e = hub.call(cmd(), Duration::from_secs(1)).await.unwrap_err();
    assert_eq!(e.code, shared::error::ErrorCode::ExtensionDisconnected);

    // Connected but silent: TIMEOUT, and nothing stays pending.
    let ext = FakeExt::connect(&b, silent()).await;
    let e = hub.call(cmd(), Duration::from_millis(200)).await.unwrap_err();
    assert_eq!(e.code, shared::error::ErrorCode::Timeout);
    assert_eq!(hub.pending_count(), 0);
    assert_eq!(ext.commands().len(), 1);

    // The socket drops mid-call: EXTENSION_DISCONNECTED.
    let call = {
        let state = b.state.clone();
        tokio::spawn(async move { state.hub().call(cmd(), Duration::from_secs(10)).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    drop(ext);
    let e = tokio::time::timeout(Duration::from_secs(5), call).await.unwrap().unwrap().unwrap_err();
    assert_eq!(e.code, shared::error::ErrorCode::ExtensionDisconnected);
    assert_eq!(hub.pending_count(), 0);
}

#[tokio::test]
async fn hub_sends_to_the_connection_and_matches_responses() {
    let b = Bridge::start().await;
    let ext = FakeExt::connect(&b, browser_like()).await;
    let r = b.state.hub().call(Command::TabClose { tab: 5 }, Duration::from_secs(5)).await.unwrap();
    assert_eq!(r, shared::protocol::CommandResult::Closed { tab: 5 });
    assert_eq!(ext.commands(), vec![Command::TabClose { tab: 5 }]);
}

#[tokio::test]
async fn run_refuses_a_non_loopback_listener() {
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = ServeConfig::new(Tokens::generate().unwrap());
    let r = bridge::run(config, listener, async {}).await;
    match r {
        Err(bridge::Error::NotLoopback(a)) => assert_eq!(a, addr),
        other => panic!("expected NotLoopback, got {other:?}"),
    }
}

#[tokio::test]
async fn run_serves_on_loopback_and_stops_on_shutdown() {
    let tokens = Tokens::generate().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(bridge::run(ServeConfig::new(tokens.clone()), listener, async move {
        let _ = stopped.await;
    }));
    let r = raw_http(
        addr,
        "GET",
        "/status",
        &[format!("Host: 127.0.0.1:{}", addr.port()), bearer(tokens.mcp.expose())],
        "",
    )
    .await;
    assert_eq!(r.status, 200);
    // An authenticated socket is closed by the shutdown.
    let mut ws = ws_connect(addr.port(), Some(&ext_origin()), None).await.unwrap();
    send_hello(&mut ws, tokens.extension.expose()).await;
    assert!(matches!(next_frame(&mut ws).await, BridgeToExt::Welcome { .. }));
    stop.send(()).unwrap();
    let got = read_until_closed(&mut ws, Duration::from_secs(5)).await;
    assert!(got.ended);
    assert_eq!(got.close, Some(CloseCode::Away));
    tokio::time::timeout(Duration::from_secs(10), server).await.unwrap().unwrap().unwrap();
}

#[tokio::test]
async fn shutdown_ends_unauthenticated_sockets_and_mcp_streams() {
    let b = Bridge::start().await;
    let mut ws = ws_connect(b.port, Some(&ext_origin()), None).await.unwrap();
    let started = Instant::now();
    b.shutdown().await.unwrap();
    let got = read_until_closed(&mut ws, Duration::from_secs(3)).await;
    assert!(got.ended);
    assert!(started.elapsed() < Duration::from_secs(4), "waited for the hello timeout");
}
