//! The daemon's agent side without a browser: `/status`, `/mcp` over HTTP
//! and stdio, and the loopback guards on `/mcp`.

use std::time::Duration;

use serde_json::json;
use tests::{Daemon, StdioMcp};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemon_serves_status_and_mcp_without_a_browser() {
    let d = Daemon::start().await.expect("start the daemon");
    assert_eq!(d.info.version, shared::VERSION);
    assert_eq!(Some(d.info.pid), d.pid());

    let st = d.status().await.expect("GET /status");
    assert_eq!(st.port, d.port());
    assert!(st.browsers.is_empty(), "{st:?}");

    // MCP over HTTP: handshake, tools, and a clean error without a browser.
    let mut mcp = d.mcp().await.expect("MCP handshake");
    let tools = mcp.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for want in ["browser_tabs", "browser_navigate", "browser_snapshot", "browser_status"] {
        assert!(names.contains(&want), "tools/list lacks {want}: {names:?}");
    }
    let r = mcp.call("browser_tabs", json!({ "action": "new", "url": "http://127.0.0.1:9/" })).await.unwrap();
    r.expect_error("EXTENSION_DISCONNECTED");
    let r = mcp.call("browser_navigate", json!({ "url": "javascript:alert(1)" })).await.unwrap();
    r.expect_error("INVALID_REQUEST");
    let r = mcp.ok("browser_status", json!({})).await;
    assert!(!r.text().is_empty());

    // The same over stdio.
    let mut stdio = StdioMcp::spawn(d.home()).unwrap();
    stdio.initialize().await.expect("stdio initialize");
    assert_eq!(stdio.list_tools().await.unwrap().len(), tools.len());
    let r = stdio.call("browser_navigate", json!({ "url": "file:///etc/passwd" })).await.unwrap();
    r.expect_error("INVALID_REQUEST");
    let code = stdio.close(Duration::from_secs(10)).await.unwrap();
    assert!(code.success(), "{code}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_endpoint_refuses_foreign_origins_hosts_and_tokens() {
    let d = Daemon::start().await.expect("start the daemon");
    let http = reqwest::Client::new();
    let url = format!("{}/mcp", d.base_url());
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } }
    });
    let post = |token: Option<&str>| {
        let mut rb = http
            .post(&url)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .body(init.to_string());
        if let Some(t) = token {
            rb = rb.bearer_auth(t);
        }
        rb
    };

    let ok = post(Some(&d.mcp_token)).send().await.unwrap();
    assert!(ok.status().is_success(), "{}", ok.status());

    let r = post(None).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let r = post(Some("0".repeat(64).as_str())).send().await.unwrap();
    assert_eq!(r.status(), 401);
    let ext_token = std::fs::read_to_string(d.home().join("extension-token")).unwrap();
    let r = post(Some(ext_token.trim())).send().await.unwrap();
    assert_eq!(r.status(), 401, "the extension token must not open /mcp");

    let r = post(Some(&d.mcp_token)).header("Origin", "http://evil.example").send().await.unwrap();
    assert_eq!(r.status(), 403);
    let r = post(Some(&d.mcp_token)).header("Host", "evil.example").send().await.unwrap();
    assert!(r.status().is_client_error(), "foreign Host answered {}", r.status());
    assert!(r.headers().get("access-control-allow-origin").is_none());

    let r = http.request(reqwest::Method::OPTIONS, &url).send().await.unwrap();
    assert!(r.status().is_client_error(), "OPTIONS answered {}", r.status());
    assert!(r.headers().get("access-control-allow-origin").is_none());

    // Tokens on disk are private.
    use std::os::unix::fs::PermissionsExt;
    for f in ["mcp-token", "extension-token"] {
        let mode = std::fs::metadata(d.home().join(f)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{f}");
    }
}

/// `chaperone mcp` outlives its daemon: the daemon is killed with SIGKILL
/// under a stdio client; the next call is answered `EXTENSION_DISCONNECTED`
/// (never sent again), the proxy starts the daemon again and makes a new
/// session with the client's own `initialize`, and the calls after it work
/// without restarting the command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stdio_proxy_carries_on_after_the_daemon_is_killed() {
    let mut d = Daemon::start().await.expect("start the daemon");
    let mut stdio = StdioMcp::spawn(d.home()).unwrap();
    stdio.initialize().await.expect("stdio initialize");
    stdio.call("browser_status", json!({})).await.expect("status before the kill");
    let pid = d.pid().expect("the daemon's pid");
    let killed = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap();
    assert!(killed.success());
    let _ = d.stop();

    let raw = stdio
        .request_within("tools/call", json!({ "name": "browser_status", "arguments": {} }), Duration::from_secs(30))
        .await
        .expect("an answer while the daemon is gone");
    let message = raw["error"]["message"].as_str().unwrap_or_default().to_string();
    assert!(message.starts_with("EXTENSION_DISCONNECTED"), "{raw}");
    // The proxy started a daemon again and made a new session.
    let mut again = None;
    for _ in 0..60 {
        let raw = stdio
            .request_within("tools/call", json!({ "name": "browser_status", "arguments": {} }), Duration::from_secs(10))
            .await;
        if let Ok(raw) = raw
            && raw.get("result").is_some()
        {
            again = Some(raw);
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let info: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.home().join("daemon.json")).unwrap_or_default()).unwrap_or_default();
    let new_pid = info["pid"].as_u64();
    assert!(again.is_some(), "no call worked after the restart; stderr:\n{}", stdio.stderr());
    assert!(new_pid.is_some_and(|p| p != u64::from(pid)), "a new daemon runs: {info}");
    let code = stdio.close(Duration::from_secs(10)).await.unwrap();
    assert!(code.success(), "{code}");
    if let Some(p) = new_pid {
        let _ = std::process::Command::new("kill").arg(p.to_string()).status();
    }
}
