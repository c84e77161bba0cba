//! Security tests of the bridge's loopback server: every refusal asserts
//! the status (or close code) AND that nothing happened behind it.

use std::time::{Duration, Instant};

use crate::common::*;
use bridge::ServeConfig;
use bridge::home::Tokens;
use bridge::server::{HEADER_READ_TIMEOUT, IDLE_TIMEOUT};
use futures_util::SinkExt;
use shared::protocol::{BridgeStatus, BridgeToExt, Command, ExtToBridge};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
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
async fn a_frame_over_the_limit_closes_the_socket_and_one_under_it_is_read() {
    use shared::limits::MAX_FRAME_BYTES;
    let b = Bridge::start().await;
    let mut ws = authenticated_ws(&b).await;
    // A valid ping padded with JSON whitespace to just under the limit: read.
    let ping = |seq: u64, size: usize| {
        let mut f = format!("{{\"type\":\"ping\",\"seq\":{seq}");
        f.push_str(&" ".repeat(size - f.len() - 1));
        f.push('}');
        f
    };
    ws.send(Message::text(ping(1, MAX_FRAME_BYTES - 1024))).await.unwrap();
    assert_eq!(next_frame(&mut ws).await, BridgeToExt::Pong { seq: 1 });
    // One byte over: the bridge drops the socket without reading it.
    // (The bridge may reset the connection while the frame is still being sent.)
    if ws.send(Message::text(ping(2, MAX_FRAME_BYTES + 1))).await.is_ok() {
        let got = read_until_closed(&mut ws, Duration::from_secs(5)).await;
        assert!(got.ended, "an oversized frame left the socket open");
        assert!(got.frames.is_empty(), "an oversized frame was answered: {:?}", got.frames);
    }
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
async fn six_malformed_recorded_steps_close_the_socket() {
    // Well-formed frames whose step breaks the recording rules (a page that
    // is not http(s)) count as invalid frames: a flood of forged reports
    // ends the connection, while good steps keep it open.
    let b = Bridge::start().await;
    let mut ws = authenticated_ws(&b).await;
    ws.send(Message::text(r#"{"type":"record_start","name":"forged","keep_text":false}"#)).await.unwrap();
    let good = r#"{"type":"recorded","tab":9,"step":{"action":{"kind":"click"},"target":{"role":"button","name":"Add to cart","tag":"button"},"url":"https://shop.example/cart"}}"#;
    let bad = r#"{"type":"recorded","tab":9,"step":{"action":{"kind":"click"},"target":{"role":"button","name":"Add to cart","tag":"button"},"url":"javascript:alert(1)"}}"#;
    for _ in 0..5 {
        ws.send(Message::text(bad)).await.unwrap();
        ws.send(Message::text(good)).await.unwrap();
    }
    send_json(&mut ws, &ExtToBridge::Ping { seq: 8 }).await;
    assert_eq!(next_frame(&mut ws).await, BridgeToExt::Pong { seq: 8 }, "five bad steps: still open");
    ws.send(Message::text(bad)).await.unwrap();
    let got = read_until_closed(&mut ws, Duration::from_secs(3)).await;
    assert_eq!(got.close, Some(CloseCode::Policy));
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
    assert_eq!(
        next_frame(&mut ws).await,
        BridgeToExt::Welcome {
            version: shared::VERSION.to_string(),
            human_timeout_secs: shared::limits::DEFAULT_HUMAN_TIMEOUT_SECS,
        }
    );
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

// ---------------------------------------------------------------------------
// Connection timeouts and the connection limit (`bridge::server` module
// docs): half-open sockets neither stay open nor lock the agent out.
// ---------------------------------------------------------------------------

/// Half-open connections the flood test holds, when the open-file limit
/// allows (see `half_open_connections_...`).
const HALF_OPEN: usize = 1_500;
/// Descriptors left for everything else in this process meanwhile (the
/// other tests of this binary run in parallel).
const FD_HEADROOM: usize = 512;
/// Slack for the server to close a socket once its deadline has passed.
const CLOSE_MARGIN: Duration = Duration::from_secs(3);

/// Reads from `s` until the server closes it (EOF or reset), discarding what
/// it sends; the instant it was seen closed, or `None` at `deadline`.
async fn wait_closed(s: &mut TcpStream, deadline: Instant) -> Option<Instant> {
    let mut buf = [0u8; 1024];
    loop {
        match tokio::time::timeout_at(deadline.into(), s.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0) | Err(_)) => return Some(Instant::now()),
            Ok(Ok(_)) => {}
        }
    }
}

/// One HTTP/1.1 response with a `Content-Length` body: status and body.
async fn read_response(s: &mut TcpStream) -> (u16, String) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut chunk))
            .await
            .expect("no response within 5 s")
            .expect("read failed");
        assert!(n > 0, "closed before the response head");
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("status line");
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("content-length");
    while buf.len() < head_end + length {
        let n = tokio::time::timeout(Duration::from_secs(5), s.read(&mut chunk))
            .await
            .expect("body not complete within 5 s")
            .expect("read failed");
        assert!(n > 0, "closed within the body");
        buf.extend_from_slice(&chunk[..n]);
    }
    (status, String::from_utf8_lossy(&buf[head_end..head_end + length]).to_string())
}

/// 1,500 half-open connections (nothing sent, half a request line, a request
/// line and `Host` without the blank line) are held while an extension says
/// hello and an agent initializes and calls a tool: both get in, the agent
/// within 2 s. Every half-open socket is closed by the server: those beyond
/// the connection limit at once (evicted for the newer ones), the others at
/// the header timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_open_connections_neither_lock_the_agent_out_nor_stay_open() {
    let open_files = bridge::server::raise_open_files_limit().unwrap_or_else(|e| {
        eprintln!("{e}; assuming 1024 open files");
        1024
    });
    let b = Bridge::start().await;
    let limit = b.state.connection_limit();
    assert!(limit <= bridge::server::MAX_CONNECTIONS, "connection limit {limit}");
    // A held socket costs this process one descriptor, and one more while
    // the server has it (at most `limit` of them).
    let budget = usize::try_from(open_files).unwrap_or(usize::MAX).saturating_sub(FD_HEADROOM);
    let count = HALF_OPEN.min(budget.saturating_sub(limit).max(budget / 2));
    if count < HALF_OPEN {
        eprintln!(
            "open-file limit {open_files} (hard): holding {count} half-open connections instead of {HALF_OPEN}{}",
            if count <= limit { ", not more than the connection limit: nothing is evicted" } else { "" }
        );
    }

    let partial = format!("POST /mcp HTTP/1.1\r\nHost: {}\r\n", b.host());
    let flood_started = Instant::now();
    let mut held = Vec::with_capacity(count);
    for i in 0..count {
        let connected = Instant::now();
        let mut s = TcpStream::connect(b.addr).await.unwrap_or_else(|e| panic!("connect #{i}: {e}"));
        let sent: &[u8] = match i % 3 {
            0 => b"",
            1 => b"POST /mcp HTT",
            _ => partial.as_bytes(),
        };
        // A socket evicted already refuses the write; the read sees it.
        let _ = s.write_all(sent).await;
        held.push(tokio::spawn(async move {
            let closed = wait_closed(&mut s, connected + HEADER_READ_TIMEOUT + CLOSE_MARGIN).await;
            closed.map(|at| at - connected)
        }));
    }
    let flood_took = flood_started.elapsed();

    // The extension's hello authenticates while they are held.
    let ext_started = Instant::now();
    let _ext = tokio::time::timeout(HEADER_READ_TIMEOUT, FakeExt::connect(&b, browser_like()))
        .await
        .expect("the extension did not get in while the half-open connections were held");
    let ext_took = ext_started.elapsed();

    // The agent: initialize, then a real tools/call, within 2 s.
    let agent_started = Instant::now();
    let (client, status) = tokio::time::timeout(Duration::from_secs(2), async {
        let client = mcp_client(&b).await;
        let status = call_tool(&client, "browser_status", serde_json::json!({})).await;
        (client, status)
    })
    .await
    .expect("the agent's initialize + tools/call did not complete within 2 s");
    let agent_took = agent_started.elapsed();
    assert_eq!(status.is_error, Some(false), "{status:?}");
    let browsers = status.structured_content.as_ref().expect("structured status")["browsers"].clone();
    assert_eq!(browsers.as_array().map(Vec::len), Some(1), "{browsers}");
    assert!(b.state.open_connections() <= limit);

    let (mut early, mut still_open, mut last) = (0usize, 0usize, Duration::ZERO);
    for h in held {
        match h.await.unwrap() {
            None => still_open += 1,
            Some(after) => {
                if after < HEADER_READ_TIMEOUT {
                    early += 1;
                }
                last = last.max(after);
            }
        }
    }
    eprintln!(
        "{count} half-open connections opened in {flood_took:?} (limit {limit}); extension hello {ext_took:?}, \
         agent initialize + tools/call {agent_took:?}; {early} closed before the header timeout, the last after \
         {last:?}, {still_open} still open"
    );
    assert_eq!(
        still_open,
        0,
        "half-open connections still open {:?} after they connected",
        HEADER_READ_TIMEOUT + CLOSE_MARGIN
    );
    if count > limit {
        assert!(early >= count - limit, "{early} of {count} closed before the header timeout with a limit of {limit}");
    }
    client.cancel().await.unwrap();
}

/// After a complete exchange, a keep-alive connection that sends nothing
/// more is closed after the idle timeout (and not before: a second request
/// within it is answered on the same connection).
#[tokio::test]
async fn a_keep_alive_connection_is_closed_after_the_idle_timeout() {
    let b = Bridge::start().await;
    let request = format!("GET /status HTTP/1.1\r\nHost: {}\r\n{}\r\n\r\n", b.host(), bearer(b.mcp_token()));
    let mut s = TcpStream::connect(b.addr).await.unwrap();
    s.write_all(request.as_bytes()).await.unwrap();
    assert_eq!(read_response(&mut s).await.0, 200);
    tokio::time::sleep(IDLE_TIMEOUT / 2).await;
    s.write_all(request.as_bytes()).await.unwrap();
    let (status, body) = read_response(&mut s).await;
    assert_eq!(status, 200);
    assert_eq!(serde_json::from_str::<BridgeStatus>(&body).unwrap().port, b.port);
    let answered = Instant::now();
    let closed = wait_closed(&mut s, answered + IDLE_TIMEOUT + CLOSE_MARGIN).await;
    let after = closed.expect("the idle keep-alive connection stayed open") - answered;
    // The server's timer starts when the body has been handed over, a little
    // before it was read here.
    assert!(after + Duration::from_millis(250) >= IDLE_TIMEOUT, "closed after {after:?}, before the idle timeout");
    assert_eq!(b.state.open_connections(), 0);
}

/// Request headers trickled a line at a time are cut at the header
/// deadline: sending something does not extend it.
#[tokio::test]
async fn trickled_request_headers_are_cut_at_the_header_deadline() {
    let b = Bridge::start().await;
    let started = Instant::now();
    let s = TcpStream::connect(b.addr).await.unwrap();
    let (mut rd, mut wr) = s.into_split();
    wr.write_all(format!("GET /status HTTP/1.1\r\nHost: {}\r\n", b.host()).as_bytes()).await.unwrap();
    let trickle = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(500)).await;
            if wr.write_all(b"X-Slow: 1\r\n").await.is_err() {
                return;
            }
        }
    });
    let mut buf = [0u8; 1024];
    let deadline = started + HEADER_READ_TIMEOUT + CLOSE_MARGIN;
    let closed = loop {
        match tokio::time::timeout_at(deadline.into(), rd.read(&mut buf)).await {
            Err(_) => break None,
            Ok(Ok(0) | Err(_)) => break Some(started.elapsed()),
            Ok(Ok(_)) => {}
        }
    };
    trickle.abort();
    let after = closed.expect("a connection trickling its headers stayed open");
    assert!(after >= HEADER_READ_TIMEOUT, "closed after {after:?}, before the header timeout");
}
