//! The whole chain for one test module: fixture server, daemon, Chromium
//! with the extension (connected), and an MCP client.

use anyhow::Result;
use shared::protocol::BridgeStatus;

use crate::{Browser, Daemon, FixtureServer, Mcp};

/// Fixture server + daemon + browser + MCP session. Dropped in reverse
/// order of need: the browser first, then the daemon.
pub struct Stack {
    pub mcp: Mcp,
    pub browser: Browser,
    pub daemon: Daemon,
    pub server: FixtureServer,
    /// `/status` once the extension connected.
    pub connected: BridgeStatus,
}

impl Stack {
    pub async fn start() -> Result<Stack> {
        Stack::start_with_config(None).await
    }

    /// The stack with the daemon's `config.toml` set to `config`.
    pub async fn start_with_config(config: Option<&str>) -> Result<Stack> {
        Stack::start_on(config, crate::browser::person_is_played_headed()).await
    }

    /// The stack with a headless browser: nobody can help with a challenge.
    pub async fn start_headless(config: Option<&str>) -> Result<Stack> {
        Stack::start_on(config, false).await
    }

    /// The stack with the bodies build of the extension
    /// ([`crate::extension_bodies_dir`]).
    pub async fn start_bodies(config: Option<&str>) -> Result<Stack> {
        let headed = crate::browser::person_is_played_headed();
        Stack::start_at(config, headed, crate::extension_bodies_dir()).await
    }

    async fn start_on(config: Option<&str>, headed: bool) -> Result<Stack> {
        Stack::start_at(config, headed, crate::extension_dir()).await
    }

    async fn start_at(config: Option<&str>, headed: bool, extension: std::path::PathBuf) -> Result<Stack> {
        let server = FixtureServer::start();
        let daemon = Daemon::start_with_config(config).await?;
        let browser = Browser::extension_browser_at(daemon.home(), headed, extension).await?;
        let connected = crate::wait_for_extension(&daemon).await;
        let mcp = daemon.mcp().await?;
        Ok(Stack { mcp, browser, daemon, server, connected })
    }

    /// A fixture URL, e.g. `url("/basic/index.html")`.
    /// Stops the daemon (it must stop cleanly) and returns the sinks a
    /// leak could reach besides the home: the MCP responses, `outputs`
    /// (what the test collected), the daemon's stdout and stderr.
    pub fn stop_for_scan(&mut self, outputs: Vec<u8>) -> Vec<(&'static str, Vec<u8>)> {
        let mcp_bytes = self.mcp.received().to_vec();
        let status = self.daemon.stop();
        assert!(status.is_some_and(|st| st.success()), "the daemon did not stop cleanly: {status:?}");
        let (o, e) = self.daemon.logs();
        vec![
            ("MCP responses", mcp_bytes),
            ("tool outputs", outputs),
            ("daemon stdout", std::fs::read(o).unwrap_or_default()),
            ("daemon stderr", std::fs::read(e).unwrap_or_default()),
        ]
    }

    pub fn url(&self, path: &str) -> String {
        self.server.url(path)
    }
}
