//! The content script's two flavours in Firefox (ARCHITECTURE.md, "The
//! content script's two flavours"): WebAssembly only where no policy of
//! the page could refuse it, wasm2js elsewhere. On every policy the
//! snapshot is the page's, and a page listening for violations
//! (`fixtures/sites/csp/watch.js`) hears none of ours.

use serde_json::json;

use super::FxStack;
use crate::e2e::{new_tab, snapshot_matches};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_policy_gets_a_snapshot_and_no_page_hears_a_violation() {
    let mut s = FxStack::start(None, false).await;
    // (page, violations the page itself causes)
    let cases: [(&str, &[&str]); 6] = [
        ("csp/open/index.html", &[]),
        ("csp/meta/index.html", &[]),
        ("csp/report/index.html", &[]),
        ("csp/self/index.html", &["inline script-src-elem"]),
        ("csp/none/index.html", &[]),
        ("csp/open/index.html", &[]),
    ];
    let first = s.url(&format!("/{}", cases[0].0));
    new_tab(&mut s.mcp, &first).await;
    for (path, own) in cases {
        let url = s.url(&format!("/{path}"));
        s.mcp.ok("browser_navigate", json!({ "url": url })).await;
        snapshot_matches(&mut s.mcp, &url, path).await;
        if path == "csp/none/index.html" {
            // default-src 'none': the watcher itself cannot run there.
            continue;
        }
        let page = s.page(&url).await;
        let heard = s.eval(&page, "window.violations || ['(the watcher did not run)']").await;
        let want: Vec<String> = own.iter().map(|v| v.to_string()).collect();
        assert_eq!(heard, json!(want), "{path}: the page heard a violation");
    }
}
