//! Snapshots on pages with strict Content-Security-Policies (docs/design.md,
//! "Build and test facts": the content script must run where
//! `'wasm-unsafe-eval'` is not allowed).

use serde_json::json;
use tests::Stack;

use super::{new_tab, snapshot_matches};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshots_work_under_strict_csp() {
    let mut s = Stack::start().await.expect("start the stack");

    // The server really sends the policies.
    let http = reqwest::Client::new();
    for (path, csp) in [("/csp/self/index.html", "script-src 'self'"), ("/csp/none/index.html", "default-src 'none'")] {
        let r = http.get(s.url(path)).send().await.unwrap();
        assert_eq!(r.headers()["content-security-policy"], csp, "{path}");
    }

    let strict = s.url("/csp/self/index.html");
    new_tab(&mut s.mcp, &strict).await;
    snapshot_matches(&mut s.mcp, &strict, "csp/self/index.html").await;

    let none = s.url("/csp/none/index.html");
    s.mcp.ok("browser_navigate", json!({ "url": none })).await;
    snapshot_matches(&mut s.mcp, &none, "csp/none/index.html").await;

    // Back to the script-src 'self' page in the same tab.
    s.mcp.ok("browser_navigate", json!({ "step": "back" })).await;
    snapshot_matches(&mut s.mcp, &strict, "csp/self/index.html").await;
}
