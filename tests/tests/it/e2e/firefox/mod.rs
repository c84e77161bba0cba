//! End-to-end in Firefox ESR (issue 38): the same extension (dist/firefox),
//! the same bridge, the same guarantees. Each test starts its own daemon
//! and Firefox (`tests::firefox`); the person is played with trusted
//! WebDriver BiDi input, which only the tests' Firefox listens for.
//!
//! Run with `cargo test -p tests --test it -- e2e::firefox` (under the
//! Chromium lock, like every browser run).

mod acts;
mod approvals;
mod challenges;
mod csp;
mod files;
mod network;
mod person;
mod second_browser;
mod secrets;
mod sessions;
mod snapshots;
mod undetectable;
mod up;

use std::time::Duration;

use serde_json::json;
use shared::protocol::BridgeStatus;
use tests::firefox::Firefox;
use tests::{Daemon, FixtureServer, Mcp};

/// Fixture server + daemon + Firefox with the add-on + MCP session.
pub struct FxStack {
    pub mcp: Mcp,
    pub firefox: Firefox,
    pub daemon: Daemon,
    pub server: FixtureServer,
    pub connected: BridgeStatus,
}

impl FxStack {
    pub async fn start(config: Option<&str>, headed: bool) -> FxStack {
        let server = FixtureServer::start();
        let daemon = Daemon::start_with_config(config).await.expect("start the daemon");
        let firefox = Firefox::with_extension(daemon.home(), headed).await.expect("start Firefox");
        let connected = tokio::time::timeout(Duration::from_secs(60), tests::wait_for_extension(&daemon))
            .await
            .unwrap_or_else(|_| panic!("Firefox's add-on did not connect; Firefox said:\n{}", firefox.stderr_tail(40)));
        let mcp = daemon.mcp().await.expect("MCP session");
        FxStack { mcp, firefox, daemon, server, connected }
    }

    pub fn url(&self, path: &str) -> String {
        self.server.url(path)
    }

    /// The agent opens a tab at `path` of the fixture server (and waits
    /// for it): its URL and its BiDi context id.
    pub async fn agent_tab(&mut self, path: &str) -> (String, String) {
        let url = self.url(path);
        crate::e2e::new_tab(&mut self.mcp, &url).await;
        let page = self.page(&url).await;
        (url, page)
    }

    /// The Firefox tab showing exactly `url`, as a BiDi context id.
    pub async fn page(&self, url: &str) -> String {
        self.firefox
            .bidi
            .wait_for_context(Duration::from_secs(10), |u| u == url)
            .await
            .unwrap_or_else(|e| panic!("no tab at {url}: {e:#}"))
            .id
    }

    /// Evaluates `expr` in the page.
    pub async fn eval(&self, context: &str, expr: &str) -> serde_json::Value {
        self.firefox.bidi.evaluate(context, expr).await.unwrap_or_else(|e| panic!("evaluate {expr}: {e:#}"))
    }

    /// The ref of the `role "name"` line of a fresh snapshot of the current tab.
    pub async fn ref_named(&mut self, role: &str, name: &str) -> String {
        let snap = crate::e2e::snapshot(&mut self.mcp, json!({})).await.snapshot();
        tests::ref_of(&snap, role, name).unwrap_or_else(|| panic!("no {role} {name:?} in:\n{snap}"))
    }

    /// What the `lies` fixture page says ran (`body[data-ran]`, ids in order).
    pub async fn ran(&self, page: &str) -> String {
        self.eval(page, "document.body.dataset.ran || ''").await.as_str().unwrap_or_default().to_string()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_addon_connects_from_firefox() {
    let s = FxStack::start(None, false).await;
    let b = &s.connected.browsers[0];
    assert!(b.connection > 0, "{:?}", s.connected);
    // The `moz-extension://` host is the one the profile fixed and the
    // bridge accepts; the add-on's own pages answer there.
    let ctx = s.firefox.bidi.contexts().await.expect("contexts");
    assert!(!ctx.is_empty());
    let _ = json!({});
}
