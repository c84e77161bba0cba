//! `chaperone mcp --home H`: the stdio MCP server most agents launch.

use std::time::Duration;

use serde_json::json;
use tests::{Expectations, Stack, StdioMcp};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_mcp_forwards_to_the_daemon() {
    let s = Stack::start().await.expect("start the stack");
    let mut mcp = StdioMcp::spawn(s.daemon.home()).expect("spawn chaperone mcp");

    let init = mcp.initialize().await.expect("initialize over stdio");
    assert!(init["serverInfo"]["name"].is_string(), "{init}");
    assert!(init["capabilities"]["tools"].is_object(), "{init}");

    let tools = mcp.list_tools().await.expect("tools/list over stdio");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for want in ["browser_tabs", "browser_navigate", "browser_snapshot", "browser_status"] {
        assert!(names.contains(&want), "tools/list lacks {want}: {names:?}");
    }

    let url = s.url("/basic/index.html");
    let r = mcp.call("browser_tabs", json!({ "action": "new", "url": url })).await.unwrap();
    let r = r.expect_ok("new tab over stdio").expect_untrusted();
    assert_eq!(r.data()["tab"]["url"], json!(url));

    let r = mcp.call("browser_snapshot", json!({})).await.unwrap().expect_ok("snapshot over stdio").expect_untrusted();
    assert_eq!(r.data()["url"], json!(url));
    Expectations::for_page("basic/index.html").assert_snapshot(&r.snapshot());

    // Errors keep their shape across the proxy.
    let r = mcp.call("browser_navigate", json!({ "url": "file:///etc/passwd" })).await.unwrap();
    r.expect_error("INVALID_REQUEST");

    // An unknown method is a JSON-RPC error, not a crash.
    let raw = mcp.request_within("no/such/method", json!({}), Duration::from_secs(20)).await.unwrap();
    assert!(raw.get("error").is_some(), "{raw}");

    assert!(mcp.transcript.iter().all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()));
    let status = mcp.close(Duration::from_secs(10)).await.expect("chaperone mcp exits when stdin closes");
    assert!(status.success(), "chaperone mcp exited with {status}");
}
