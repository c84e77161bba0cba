//! Deeply nested JSON (100,000 `[`) on every decoder a local program can
//! reach — `/mcp`, `/ext`, the native-messaging host, the stdio MCP
//! proxy — is refused cleanly: a 400 with a JSON-RPC parse error, an
//! invalid frame, an error reply.
//! Never a stack overflow (which would abort the whole daemon), and the
//! bridge answers the next good request.
//!
//! serde_json stops at 128 levels by default; nothing in the workspace
//! turns that off (no `disable_recursion_limit`, no `serde_stacker`), and
//! every walker over a `serde_json::Value` (`shared::redact::redact_json`,
//! the Recorder importer) only sees values that passed that limit.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::*;
use futures_util::SinkExt;
use shared::protocol::{BridgeToExt, ExtToBridge};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// Levels of nesting the tests send; a recursive decoder without a limit
/// overflows its stack long before this.
const DEPTH: usize = 100_000;

fn deep_array() -> String {
    "[".repeat(DEPTH)
}

/// `open` repeated, a value, then `close` repeated: well-formed and deep.
fn deep_closed(open: &str, close: &str) -> String {
    format!("{}0{}", open.repeat(DEPTH), close.repeat(DEPTH))
}

fn bearer(b: &Bridge) -> String {
    format!("Authorization: Bearer {}", b.mcp_token())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_json_on_mcp_is_a_400_and_the_bridge_goes_on() {
    let b = Bridge::start().await;
    let auth = [bearer(&b)];
    let bodies = [
        ("not JSON", "not json".to_string()),
        ("not a JSON-RPC message", "{}".to_string()),
        ("unclosed arrays", deep_array()),
        ("closed arrays", deep_closed("[", "]")),
        ("objects", deep_closed("{\"a\":", "}")),
        (
            "params of initialize",
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}}"#, deep_closed("{\"a\":", "}")),
        ),
    ];
    for (what, body) in &bodies {
        let r = raw_http(b.addr, "POST", "/mcp", &mcp_headers(&b.host(), &auth), body).await;
        assert_eq!(r.status, 400, "{what}: {}\n{}", r.head, r.body);
        let err: serde_json::Value =
            serde_json::from_str(r.body.trim()).unwrap_or_else(|e| panic!("{what}: {e}: {}", r.body));
        assert_eq!(err["error"]["code"], -32700, "{what}: a JSON-RPC parse error: {err}");
        assert_eq!(err["id"], serde_json::Value::Null, "{what}: {err}");
        assert!(!r.body.contains("recursion"), "{what}: serde's detail stays in the log: {}", r.body);
    }
    // Still serving: a good initialize is answered.
    let r = raw_http(b.addr, "POST", "/mcp", &mcp_headers(&b.host(), &auth), INITIALIZE).await;
    assert_eq!(r.status, 200, "{}", r.head);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_tool_arguments_are_refused_and_the_session_goes_on() {
    let b = Bridge::start().await;
    let c = mcp_client(&b).await;
    // Just under serde_json's limit, so it reaches the tools' own parsing
    // (and the redaction walk over the arguments): INVALID_REQUEST.
    let mut deep = serde_json::json!(0);
    for _ in 0..100 {
        deep = serde_json::json!({ "a": deep });
    }
    let calls = [
        ("browser_click", serde_json::json!({ "ref": deep })),
        ("browser_navigate", serde_json::json!({ "url": deep })),
        ("browser_fill_form", serde_json::json!({ "fields": [{ "ref": "e1", "value": deep }] })),
        ("flow_run", serde_json::json!({ "name": "x", "params": { "p": deep } })),
    ];
    for (tool, args) in calls {
        let r = call_tool(&c, tool, args).await;
        assert_tool_error(&r, "INVALID_REQUEST");
    }
    let r = call_tool(&c, "browser_status", serde_json::json!({})).await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let _ = c.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_frames_on_ext_are_invalid_frames() {
    let b = Bridge::start().await;

    // Before authentication: the socket is closed, nothing else happens.
    let mut ws = ws_connect(b.port, Some(&ext_origin()), None).await.unwrap();
    ws.send(Message::text(deep_array())).await.unwrap();
    let got = read_until_closed(&mut ws, Duration::from_secs(6)).await;
    assert!(got.ended, "a deep first frame left the socket open");
    assert!(
        !got.frames.iter().any(|f| matches!(f, BridgeToExt::Welcome { .. })),
        "answered with a welcome: {:?}",
        got.frames
    );
    assert!(!b.state.hub().is_connected());

    // Authenticated: each deep frame counts as one invalid frame; five
    // leave the socket serving, the sixth closes it.
    let mut ws = authenticated_ws(&b).await;
    let frames = [
        deep_array(),
        deep_closed("[", "]"),
        deep_closed("{\"a\":", "}"),
        format!(r#"{{"type":"response","id":1,"outcome":{{"ok":{}}}}}"#, deep_closed("{\"a\":", "}")),
        format!(
            r#"{{"type":"response","id":1,"outcome":{{"ok":{{"kind":"snapshot","snapshot":{}}}}}}}"#,
            deep_closed("[", "]")
        ),
    ];
    for f in &frames {
        ws.send(Message::text(f.clone())).await.unwrap();
    }
    send_json(&mut ws, &ExtToBridge::Ping { seq: 3 }).await;
    assert_eq!(next_frame(&mut ws).await, BridgeToExt::Pong { seq: 3 }, "five deep frames: still serving");
    assert!(b.state.hub().is_connected());
    ws.send(Message::text(format!(r#"{{"type":"recorded","tab":1,"step":{}}}"#, deep_array()))).await.unwrap();
    let got = read_until_closed(&mut ws, Duration::from_secs(3)).await;
    assert_eq!(got.close, Some(CloseCode::Policy), "{got:?}");

    // The bridge itself is fine: a new extension connects.
    let mut ws = authenticated_ws(&b).await;
    send_json(&mut ws, &ExtToBridge::Ping { seq: 4 }).await;
    assert_eq!(next_frame(&mut ws).await, BridgeToExt::Pong { seq: 4 });
}

const BIN: &str = env!("CARGO_BIN_EXE_chaperone");

#[test]
fn a_deeply_nested_native_messaging_request_gets_an_error_reply_and_starts_nothing() {
    let home = std::env::temp_dir().join(format!("chaperone-deep-native-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    let origin = format!("chrome-extension://{}/", shared::EXTENSION_ID);
    // Under the host's 64 KiB request limit, so the JSON reader sees it.
    let req = "[".repeat(60_000);
    let mut child = Command::new(BIN)
        .arg(&origin)
        .env("CHAPERONE_HOME", &home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&(req.len() as u32).to_ne_bytes()).unwrap();
    stdin.write_all(req.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the host exits normally, not by a signal: {:?}", out.status);
    let len = u32::from_ne_bytes(out.stdout[..4].try_into().unwrap()) as usize;
    let reply: serde_json::Value = serde_json::from_slice(&out.stdout[4..4 + len]).unwrap();
    assert_eq!(reply, serde_json::json!({ "type": "error", "message": "unknown request" }));
    assert!(!home.join("daemon.json").exists(), "no daemon was started for a bad request");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn a_deeply_nested_line_on_the_stdio_proxy_is_a_parse_error_and_the_next_line_is_served() {
    let home = std::env::temp_dir().join(format!("chaperone-deep-stdio-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    let mut child = Command::new(BIN)
        .args(["mcp", "--home"])
        .arg(&home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap());
    let mut read_line = || {
        let mut l = String::new();
        lines.read_line(&mut l).unwrap();
        serde_json::from_str::<serde_json::Value>(&l).unwrap_or_else(|e| panic!("{e}: {l}"))
    };
    for line in [deep_array(), deep_closed("{\"a\":", "}")] {
        writeln!(stdin, "{line}").unwrap();
        let r = read_line();
        assert_eq!(r["error"]["code"], -32700, "{r}");
    }
    writeln!(stdin, "{INITIALIZE}").unwrap();
    let r = read_line();
    assert_eq!(r["result"]["serverInfo"]["name"], "chaperone", "{r}");
    drop(stdin);
    let _ = child.wait();
    // Stop the daemon `mcp` started.
    if let Ok(info) = std::fs::read_to_string(home.join("daemon.json"))
        && let Ok(v) = serde_json::from_str::<serde_json::Value>(&info)
        && let Some(pid) = v["pid"].as_u64()
    {
        let _ = Command::new("kill").args(["-TERM", &pid.to_string()]).status();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while home.join("daemon.json").exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let mut rest = String::new();
    let _ = lines.read_to_string(&mut rest);
    let _ = std::fs::remove_dir_all(&home);
}
