//! `chaperone mcp --home H` as a stdio MCP server: newline-delimited
//! JSON-RPC on stdin/stdout.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::mcp::{PROTOCOL_VERSION, ToolResult};

/// A running `chaperone mcp`; killed on drop.
pub struct StdioMcp {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
    next_id: u64,
    stderr_file: tempfile::NamedTempFile,
    /// Every line the server wrote to stdout (for checking it wrote only JSON).
    pub transcript: Vec<String>,
}

impl StdioMcp {
    /// Spawns `chaperone mcp --home <home>` (no handshake yet).
    pub fn spawn(home: &Path) -> Result<StdioMcp> {
        let stderr_file = tempfile::NamedTempFile::new()?;
        let mut child = Command::new(crate::chaperone_bin())
            .arg("mcp")
            .arg("--home")
            .arg(home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr_file.reopen()?)
            .kill_on_drop(true)
            .spawn()
            .context("spawn chaperone mcp")?;
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().context("stdout")?).lines();
        Ok(StdioMcp { child, stdin, stdout, next_id: 1, stderr_file, transcript: Vec::new() })
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.stderr_file.path()).unwrap_or_default()
    }

    /// Writes one JSON-RPC message as one line.
    pub async fn send(&mut self, msg: &Value) -> Result<()> {
        let stdin = self.stdin.as_mut().ok_or_else(|| anyhow!("stdin closed"))?;
        stdin.write_all(format!("{msg}\n").as_bytes()).await?;
        stdin.flush().await?;
        Ok(())
    }

    /// Sends a request and waits (≤ `within`) for the answer with its id.
    pub async fn request_within(&mut self, method: &str, params: Value, within: Duration) -> Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await?;
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let line = match tokio::time::timeout_at(deadline, self.stdout.next_line()).await {
                Err(_) => bail!("no answer to {method} within {within:?}; stderr:\n{}", self.stderr()),
                Ok(Err(e)) => bail!("reading stdout: {e}"),
                Ok(Ok(None)) => {
                    bail!("chaperone mcp closed stdout before answering {method}; stderr:\n{}", self.stderr())
                }
                Ok(Ok(Some(line))) => line,
            };
            self.transcript.push(line.clone());
            let v: Value = serde_json::from_str(&line)
                .with_context(|| format!("chaperone mcp wrote a non-JSON line to stdout: {line:?}"))?;
            if v.get("id").and_then(Value::as_u64) == Some(id) && v.get("method").is_none() {
                return Ok(v);
            }
        }
    }

    /// Sends a request; returns its `result`.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let raw = self.request_within(method, params, Duration::from_secs(60)).await?;
        if let Some(e) = raw.get("error") {
            bail!("{method}: JSON-RPC error {e}");
        }
        raw.get("result").cloned().ok_or_else(|| anyhow!("{method}: answer without result: {raw}"))
    }

    /// `initialize` + `notifications/initialized`; returns the initialize result.
    pub async fn initialize(&mut self) -> Result<Value> {
        let r = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": { "name": "chaperone-e2e-stdio", "version": "0" }
                }),
            )
            .await?;
        self.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized", "params": {} })).await?;
        Ok(r)
    }

    pub async fn list_tools(&mut self) -> Result<Vec<Value>> {
        let r = self.request("tools/list", json!({})).await?;
        Ok(r["tools"].as_array().cloned().unwrap_or_default())
    }

    pub async fn call(&mut self, name: &str, arguments: Value) -> Result<ToolResult> {
        let r = self.request("tools/call", json!({ "name": name, "arguments": arguments })).await?;
        Ok(ToolResult::new(name, r))
    }

    /// Closes stdin and waits (≤ `within`) for the process to exit.
    pub async fn close(mut self, within: Duration) -> Result<std::process::ExitStatus> {
        drop(self.stdin.take());
        match tokio::time::timeout(within, self.child.wait()).await {
            Ok(r) => Ok(r?),
            Err(_) => {
                let _ = self.child.start_kill();
                bail!("chaperone mcp did not exit within {within:?} after stdin closed")
            }
        }
    }
}
