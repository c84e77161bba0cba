//! Playwright MCP, measured side by side with Chaperone in the `snapshot`
//! suite: the npm package `@playwright/mcp` pinned by
//! `tests/bench-npm/package-lock.json`, installed with `npm ci` into
//! `target/bench-npm/` (no browser download:
//! `PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1`), run over its stdio MCP transport
//! with the same system Chromium the tests use (`--executable-path`,
//! headless, `--isolated`: an in-memory profile).
//!
//! What is timed is the same as for Chaperone: one `tools/call
//! browser_snapshot`, from writing the request to having the parsed
//! JSON-RPC answer. What is counted is the text the agent reads (every
//! `content[].text` of the result), for both.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// The folder of the pinned package files, in the repository.
fn package_dir() -> PathBuf {
    tests::workspace_root().join("tests/bench-npm")
}

/// Where `npm ci` installs it.
fn install_dir() -> PathBuf {
    tests::workspace_root().join("target/bench-npm")
}

/// Installs the pinned `@playwright/mcp` under `target/bench-npm` unless the
/// lock file there is already the one in the repository; returns its
/// `cli.js`.
pub fn install() -> Result<PathBuf> {
    let dir = install_dir();
    let cli = dir.join("node_modules/@playwright/mcp/cli.js");
    let lock =
        std::fs::read(package_dir().join("package-lock.json")).context("reading tests/bench-npm/package-lock.json")?;
    let stamp = dir.join(".installed-lock");
    if std::fs::read(&stamp).is_ok_and(|s| s == lock) && cli.exists() {
        return Ok(cli);
    }
    std::fs::create_dir_all(&dir)?;
    std::fs::copy(package_dir().join("package.json"), dir.join("package.json"))?;
    std::fs::write(dir.join("package-lock.json"), &lock)?;
    let status = std::process::Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
        .current_dir(&dir)
        .status()
        .context("running npm ci for @playwright/mcp (tests/bench-npm)")?;
    if !status.success() {
        bail!("npm ci for @playwright/mcp failed ({status})");
    }
    std::fs::write(&stamp, &lock)?;
    Ok(cli)
}

/// The version in the lock file (for the report).
pub fn pinned_version() -> String {
    std::fs::read_to_string(package_dir().join("package-lock.json"))
        .ok()
        .and_then(|s| serde_json::from_str::<Value>(&s).ok())
        .and_then(|v| v["packages"]["node_modules/@playwright/mcp"]["version"].as_str().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// A running Playwright MCP server; killed on drop.
pub struct PlaywrightMcp {
    _child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
    next_id: u64,
    _work: tempfile::TempDir,
}

/// One timed `tools/call`: the agent-visible text and the time.
pub struct Answer {
    pub text: String,
    pub elapsed: Duration,
}

impl PlaywrightMcp {
    pub async fn start(cli: &Path) -> Result<PlaywrightMcp> {
        let work = tests::temp_dir("playwright-mcp");
        let mut cmd = Command::new("node");
        cmd.arg(cli)
            .args(["--headless", "--browser", "chromium", "--isolated", "--executable-path"])
            .arg(tests::browser_path())
            .arg("--output-dir")
            .arg(work.path());
        if tests::running_as_root() {
            cmd.arg("--no-sandbox");
        }
        let mut child = cmd
            .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
            .current_dir(work.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .context("spawning node @playwright/mcp")?;
        let stdin = child.stdin.take().context("stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("stdout")?).lines();
        let mut p = PlaywrightMcp { _child: child, stdin, stdout, next_id: 1, _work: work };
        p.request(
            "initialize",
            json!({
                "protocolVersion": super::client::PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": { "name": "chaperone-bench", "version": "0" }
            }),
        )
        .await
        .context("Playwright MCP initialize")?;
        p.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await?;
        Ok(p)
    }

    async fn send(&mut self, msg: &Value) -> Result<()> {
        self.stdin.write_all(format!("{msg}\n").as_bytes()).await?;
        self.stdin.flush().await?;
        Ok(())
    }

    async fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await?;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(180);
        loop {
            let line = match tokio::time::timeout_at(deadline, self.stdout.next_line()).await {
                Err(_) => bail!("Playwright MCP: no answer to {method}"),
                Ok(r) => r?.ok_or_else(|| anyhow!("Playwright MCP closed stdout"))?,
            };
            let Ok(v) = serde_json::from_str::<Value>(&line) else { continue };
            if v.get("id").and_then(Value::as_u64) == Some(id) && v.get("method").is_none() {
                if let Some(e) = v.get("error") {
                    bail!("Playwright MCP {method}: {e}");
                }
                return v.get("result").cloned().ok_or_else(|| anyhow!("Playwright MCP {method}: no result"));
            }
        }
    }

    /// A timed tool call that must succeed.
    pub async fn call(&mut self, name: &str, arguments: Value) -> Result<Answer> {
        let start = Instant::now();
        let r = self.request("tools/call", json!({ "name": name, "arguments": arguments })).await?;
        let elapsed = start.elapsed();
        let text = content_text(&r);
        if r["isError"].as_bool() == Some(true) {
            bail!("Playwright MCP {name}: {}", text.chars().take(300).collect::<String>());
        }
        Ok(Answer { text, elapsed })
    }
}

/// Every `content[].text` of a tool result, joined by newlines: what the
/// agent reads.
pub fn content_text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|items| items.iter().filter_map(|c| c["text"].as_str()).collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}

/// Counts o200k_base tokens (the GPT-4o family's encoding).
pub struct Tokens(tiktoken_rs::CoreBPE);

impl Tokens {
    pub fn new() -> Result<Tokens> {
        Ok(Tokens(tiktoken_rs::o200k_base().map_err(|e| anyhow!("o200k_base: {e}"))?))
    }

    pub fn count(&self, text: &str) -> usize {
        self.0.encode_ordinary(text).len()
    }
}
