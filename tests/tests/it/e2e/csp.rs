//! Snapshots on pages with strict Content-Security-Policies (docs/design.md,
//! "Build and test facts": the content script must run where
//! `'wasm-unsafe-eval'` is not allowed), and the content script's flavour
//! (ARCHITECTURE.md, "The content script's two flavours"): WebAssembly
//! only where no policy of the page could refuse it, so that a page
//! listening for violations never hears one.

use std::time::Duration;

use serde_json::json;
use tests::{Cdp, CdpSession, Stack};

use super::{new_tab, page_at, snapshot_matches};

/// The extension scripts that ran in `page`'s document, by file name
/// (`content.js`, `content-wasm.js`), as the debugger lists them.
async fn extension_scripts(cdp: &Cdp, page: &CdpSession) -> Vec<String> {
    let mut events = cdp.events();
    page.call("Debugger.enable", json!({})).await.expect("Debugger.enable");
    let prefix = format!("chrome-extension://{}/", shared::EXTENSION_ID);
    let mut found = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_millis(700);
    while let Ok(Ok(e)) = tokio::time::timeout_at(deadline, events.recv()).await {
        if e["method"] == "Debugger.scriptParsed"
            && e["sessionId"] == json!(page.session_id)
            && let Some(file) = e["params"]["url"].as_str().and_then(|u| u.strip_prefix(&prefix))
        {
            found.push(file.to_string());
        }
    }
    page.call("Debugger.disable", json!({})).await.expect("Debugger.disable");
    found.sort();
    found.dedup();
    found
}

/// The violations the page heard (fixtures/sites/csp/watch.js).
async fn violations(page: &CdpSession) -> Vec<String> {
    let v = page.evaluate("window.violations || ['(the watcher did not run)']").await.expect("read the violations");
    serde_json::from_value(v).unwrap_or_default()
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_webassembly_flavour_runs_only_where_no_policy_could_refuse_it() {
    let mut s = Stack::start().await.expect("start the stack");
    // (page, the scripts that run, violations the page itself causes)
    let cases: [(&str, &[&str], &[&str]); 5] = [
        ("csp/open/index.html", &["content-wasm.js"], &[]),
        // The WebAssembly flavour sees the <meta> policy, compiles nothing
        // and steps aside for the plain one.
        ("csp/meta/index.html", &["content-wasm.js", "content.js"], &[]),
        ("csp/report/index.html", &["content.js"], &[]),
        ("csp/self/index.html", &["content.js"], &["inline script-src-elem"]),
        // A page without any policy (most of the web).
        ("basic/index.html", &["content-wasm.js"], &[]),
    ];
    let first = s.url(&format!("/{}", cases[0].0));
    new_tab(&mut s.mcp, &first).await;
    for (path, scripts, own) in cases {
        let url = s.url(&format!("/{path}"));
        s.mcp.ok("browser_navigate", json!({ "url": url })).await;
        if path.starts_with("csp/") {
            snapshot_matches(&mut s.mcp, &url, path).await;
        } else {
            super::snapshot(&mut s.mcp, json!({})).await;
        }
        let page = page_at(&s, &url).await;
        if path.starts_with("csp/") {
            let own: Vec<String> = own.iter().map(|v| v.to_string()).collect();
            assert_eq!(violations(&page).await, own, "{path}: the page heard a violation");
            if path == "csp/self/index.html" {
                // Control: the watcher hears a refused compilation here.
                page.evaluate(
                    "WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])).then(() => 1, () => 0)",
                )
                .await
                .expect("compile in the page");
                let heard = tests::poll(Duration::from_secs(3), Duration::from_millis(50), || async {
                    violations(&page).await.into_iter().find(|v| v.starts_with("wasm-eval"))
                })
                .await;
                assert!(
                    heard.is_some(),
                    "the watcher would not hear a refused compilation: {:?}",
                    violations(&page).await
                );
            }
        }
        assert_eq!(extension_scripts(&s.browser.cdp, &page).await, scripts, "{path}: the wrong flavour ran");
    }
}
