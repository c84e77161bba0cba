//! The bridge daemon under test: `chaperone serve --home <temp> --port 0`.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use shared::protocol::{BridgeStatus, DaemonInfo};

/// A running daemon with its own home; stopped on drop. Its stdout and
/// stderr are kept in files (see [`Daemon::logs`]) for later scanning.
pub struct Daemon {
    child: Option<Child>,
    pub info: DaemonInfo,
    pub mcp_token: String,
    home: tempfile::TempDir,
    logs: tempfile::TempDir,
    http: reqwest::Client,
}

impl Daemon {
    /// Starts the daemon and waits (≤ 20 s) until it wrote `daemon.json`.
    pub async fn start() -> Result<Daemon> {
        Daemon::start_with_config(None).await
    }

    /// Like [`Daemon::start`], with `config` written to `home/config.toml`
    /// first (policy, approval timeout…).
    pub async fn start_with_config(config: Option<&str>) -> Result<Daemon> {
        let home = crate::temp_dir("home");
        let logs = crate::temp_dir("daemon-logs");
        if let Some(text) = config {
            std::fs::write(home.path().join("config.toml"), text).context("write config.toml")?;
        }
        let child = Command::new(crate::chaperone_bin())
            .arg("serve")
            .arg("--home")
            .arg(home.path())
            .arg("--port")
            .arg("0")
            .env("RUST_BACKTRACE", "1")
            .stdin(Stdio::null())
            .stdout(File::create(logs.path().join("daemon.stdout"))?)
            .stderr(File::create(logs.path().join("daemon.stderr"))?)
            .spawn()
            .context("spawn chaperone serve")?;
        let mut d = Daemon {
            child: Some(child),
            info: DaemonInfo { pid: 0, port: 0, started_at: String::new(), version: String::new() },
            mcp_token: String::new(),
            home,
            logs,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(30))
                .pool_idle_timeout(Duration::from_secs(3))
                .build()?,
        };
        d.wait_ready().await?;
        Ok(d)
    }

    async fn wait_ready(&mut self) -> Result<()> {
        let path = self.home.path().join("daemon.json");
        for _ in 0..400 {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                bail!("chaperone serve exited early ({status}):\n{}", self.stderr_tail(40));
            }
            let info = std::fs::read_to_string(&path).ok().and_then(|t| serde_json::from_str::<DaemonInfo>(&t).ok());
            let token = std::fs::read_to_string(self.home.path().join("mcp-token")).ok();
            if let (Some(info), Some(token)) = (info, token)
                && info.port != 0
                && !token.trim().is_empty()
            {
                self.info = info;
                self.mcp_token = token.trim().to_string();
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        bail!("chaperone serve wrote no daemon.json + mcp-token within 20 s:\n{}", self.stderr_tail(40))
    }

    pub fn home(&self) -> &Path {
        self.home.path()
    }

    pub fn port(&self) -> u16 {
        self.info.port
    }

    /// `http://127.0.0.1:PORT`
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.info.port)
    }

    /// The daemon's stdout and stderr files.
    pub fn logs(&self) -> (PathBuf, PathBuf) {
        (self.logs.path().join("daemon.stdout"), self.logs.path().join("daemon.stderr"))
    }

    /// Everything the daemon printed so far (stdout then stderr).
    pub fn output(&self) -> String {
        let (o, e) = self.logs();
        format!("{}{}", std::fs::read_to_string(o).unwrap_or_default(), std::fs::read_to_string(e).unwrap_or_default())
    }

    pub fn stderr_tail(&self, lines: usize) -> String {
        crate::tail(&self.logs().1, lines)
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// `GET /status` with the mcp token.
    pub async fn status(&self) -> Result<BridgeStatus> {
        let resp = self
            .http
            .get(format!("{}/status", self.base_url()))
            .bearer_auth(&self.mcp_token)
            .send()
            .await
            .context("GET /status")?;
        let code = resp.status();
        let body = resp.text().await?;
        if !code.is_success() {
            bail!("GET /status answered {code}: {body}");
        }
        serde_json::from_str(&body).with_context(|| format!("GET /status body: {body}"))
    }

    /// An MCP client on this daemon's `/mcp`, initialized.
    pub async fn mcp(&self) -> Result<crate::Mcp> {
        crate::Mcp::connect(self.port(), &self.mcp_token).await
    }

    /// Another MCP session, as client `client`.
    pub async fn mcp_as(&self, client: &str) -> Result<crate::Mcp> {
        crate::Mcp::connect_as(self.port(), &self.mcp_token, client).await
    }

    /// Runs `chaperone ARGS --home <this home>` with `stdin` piped in (the
    /// CLI sees no terminal); returns its exit code, stdout and stderr.
    pub fn cli(&self, args: &[&str], stdin: &str) -> Result<CliOutput> {
        use std::io::Write;
        let mut child = Command::new(crate::chaperone_bin())
            .args(args)
            .arg("--home")
            .arg(self.home())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("spawn chaperone {args:?}"))?;
        if let Some(mut input) = child.stdin.take() {
            input.write_all(stdin.as_bytes()).context("write the CLI's stdin")?;
        }
        let out = child.wait_with_output().context("wait for the CLI")?;
        Ok(CliOutput {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    /// Stops the daemon with SIGTERM and waits (≤ 5 s) until it exited, so
    /// its files are complete; the home stays until the `Daemon` drops.
    pub fn stop(&mut self) -> Option<std::process::ExitStatus> {
        let mut child = self.child.take()?;
        crate::send_signal(child.id(), "TERM");
        for _ in 0..100 {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        child.wait().ok()
    }
}

/// What a `chaperone` command printed.
#[derive(Debug, Clone)]
pub struct CliOutput {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.stop();
        // A daemon someone else started in this home — the extension's
        // native host, when the test stopped ours while the browser was
        // still running, or `chaperone mcp` — ends with the test too.
        let info = std::fs::read_to_string(self.home().join("daemon.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<DaemonInfo>(&t).ok());
        if let Some(info) = info
            && info.pid != 0
        {
            let alive = || std::path::Path::new(&format!("/proc/{}", info.pid)).exists();
            crate::send_signal(info.pid, "TERM");
            for _ in 0..100 {
                if !alive() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            crate::send_signal(info.pid, "KILL");
        }
    }
}

/// Polls `GET /status` until a browser is connected (≤ 30 s).
pub async fn wait_for_extension(daemon: &Daemon) -> BridgeStatus {
    wait_for_extension_within(daemon, Duration::from_secs(30)).await
}

/// Polls `GET /status` until a browser is connected; panics after `within`
/// with the daemon's stderr tail.
pub async fn wait_for_extension_within(daemon: &Daemon, within: Duration) -> BridgeStatus {
    let mut last;
    let start = std::time::Instant::now();
    loop {
        match daemon.status().await {
            Ok(s) if !s.browsers.is_empty() => return s,
            Ok(s) => last = format!("{s:?}"),
            Err(e) => last = format!("{e:#}"),
        }
        if start.elapsed() >= within {
            panic!(
                "the extension did not connect to the daemon within {within:?}; last /status: {last}\n--- daemon stderr (tail) ---\n{}",
                daemon.stderr_tail(40)
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
