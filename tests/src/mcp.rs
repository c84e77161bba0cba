//! A small MCP client for the daemon's streamable-HTTP endpoint (`POST
//! /mcp`): JSON-RPC over HTTP, answers as `application/json` or as a
//! `text/event-stream`, the `Mcp-Session-Id` header carried along.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use futures_util::StreamExt;
use serde_json::{Value, json};

/// The protocol version the client asks for.
pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// An initialized MCP session over HTTP.
pub struct Mcp {
    http: reqwest::Client,
    url: String,
    token: String,
    session: Option<String>,
    protocol_version: String,
    next_id: AtomicU64,
    /// The server's `initialize` result.
    pub server_info: Value,
    /// Every byte the server sent back (answers, notifications, errors),
    /// for tests that scan what an agent could have seen.
    received: Vec<u8>,
}

impl Mcp {
    /// Connects to `http://127.0.0.1:PORT/mcp` and runs the handshake, as
    /// client `chaperone-e2e`.
    pub async fn connect(port: u16, token: &str) -> Result<Mcp> {
        Mcp::connect_as(port, token, "chaperone-e2e").await
    }

    /// [`connect`](Self::connect) with `clientInfo.name` = `client`: a
    /// session of its own, as a second agent has.
    pub async fn connect_as(port: u16, token: &str, client: &str) -> Result<Mcp> {
        let mut mcp = Mcp {
            http: reqwest::Client::builder()
                // Above any bound a call has without a person (a tool that
                // waits for one is bounded by the test: `human_timeout_secs`
                // and the harness's own waits), below a hung run.
                .timeout(Duration::from_secs(300))
                .pool_idle_timeout(Duration::from_secs(3))
                .build()?,
            url: format!("http://127.0.0.1:{port}/mcp"),
            token: token.to_string(),
            session: None,
            protocol_version: PROTOCOL_VERSION.to_string(),
            next_id: AtomicU64::new(1),
            server_info: Value::Null,
            received: Vec::new(),
        };
        let init = mcp
            .request(
                "initialize",
                json!({
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": { "name": client, "version": "0" }
                }),
            )
            .await
            .context("MCP initialize")?;
        if let Some(v) = init["protocolVersion"].as_str() {
            mcp.protocol_version = v.to_string();
        }
        mcp.server_info = init;
        mcp.notify("notifications/initialized", json!({})).await.context("MCP notifications/initialized")?;
        Ok(mcp)
    }

    fn post(&self, body: &Value) -> reqwest::RequestBuilder {
        let mut rb = self
            .http
            .post(&self.url)
            .bearer_auth(&self.token)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .body(body.to_string());
        if let Some(s) = &self.session {
            rb = rb.header("Mcp-Session-Id", s);
        }
        if self.session.is_some() || body["method"] != "initialize" {
            rb = rb.header("MCP-Protocol-Version", &self.protocol_version);
        }
        rb
    }

    /// Sends a notification (no answer expected beyond 202/200).
    pub async fn notify(&mut self, method: &str, params: Value) -> Result<()> {
        let body = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        let resp = self.post(&body).send().await?;
        let status = resp.status();
        let text = resp.text().await.unwrap_or_default();
        self.received.extend_from_slice(text.as_bytes());
        if !status.is_success() {
            bail!("{method}: HTTP {status}: {text}");
        }
        Ok(())
    }

    /// A second handle on this same session (its own HTTP client, the same
    /// `Mcp-Session-Id`), for a request while another one is in flight.
    pub fn same_session(&self) -> Mcp {
        Mcp {
            http: self.http.clone(),
            url: self.url.clone(),
            token: self.token.clone(),
            session: self.session.clone(),
            protocol_version: self.protocol_version.clone(),
            next_id: AtomicU64::new(1_000_000 + self.next_id.load(Ordering::Relaxed)),
            server_info: self.server_info.clone(),
            received: Vec::new(),
        }
    }

    /// Ends the session (`DELETE /mcp`), as a client that is done does.
    pub async fn close(&mut self) -> Result<()> {
        let Some(session) = self.session.take() else { bail!("no session to end") };
        let resp = self
            .http
            .delete(&self.url)
            .bearer_auth(&self.token)
            .header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", &self.protocol_version)
            .send()
            .await?;
        if !resp.status().is_success() {
            bail!("DELETE /mcp: HTTP {}", resp.status());
        }
        Ok(())
    }

    /// Everything the server has sent this client so far, as raw bytes.
    pub fn received(&self) -> &[u8] {
        &self.received
    }

    /// Sends a request; returns its `result`, or an error carrying the
    /// JSON-RPC error.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let raw = self.request_raw(method, params).await?;
        if let Some(e) = raw.get("error") {
            bail!("{method}: JSON-RPC error {e}");
        }
        raw.get("result").cloned().ok_or_else(|| anyhow!("{method}: answer without result: {raw}"))
    }

    /// Sends a request; returns the whole JSON-RPC answer.
    pub async fn request_raw(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let resp = self.post(&body).send().await.with_context(|| format!("POST /mcp {method}"))?;
        if let Some(s) = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
            self.session = Some(s.to_string());
        }
        let status = resp.status();
        let ctype = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if !status.is_success() {
            let text = resp.text().await.unwrap_or_default();
            self.received.extend_from_slice(text.as_bytes());
            bail!("{method}: HTTP {status}: {text}");
        }
        if ctype.starts_with("text/event-stream") {
            read_sse_answer(resp, id, &mut self.received).await.with_context(|| format!("{method}: event stream"))
        } else {
            let text = resp.text().await?;
            self.received.extend_from_slice(text.as_bytes());
            let v: Value = serde_json::from_str(&text).with_context(|| format!("{method}: body {text}"))?;
            Ok(v)
        }
    }

    /// `tools/list` → the tools array.
    pub async fn list_tools(&mut self) -> Result<Vec<Value>> {
        let r = self.request("tools/list", json!({})).await?;
        Ok(r["tools"].as_array().cloned().unwrap_or_default())
    }

    /// `tools/call`.
    pub async fn call(&mut self, name: &str, arguments: Value) -> Result<ToolResult> {
        let r = self.request("tools/call", json!({ "name": name, "arguments": arguments })).await?;
        Ok(ToolResult::new(name, r))
    }

    /// `tools/call` that must succeed (panics with the error otherwise).
    pub async fn ok(&mut self, name: &str, arguments: Value) -> ToolResult {
        let args = arguments.to_string();
        let r = self.call(name, arguments).await.unwrap_or_else(|e| panic!("{name} {args}: {e:#}"));
        r.expect_ok(&args)
    }
}

/// Reads SSE events until the JSON-RPC answer with `id` arrives.
async fn read_sse_answer(resp: reqwest::Response, id: u64, received: &mut Vec<u8>) -> Result<Value> {
    let mut stream = resp.bytes_stream();
    let mut buf = String::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        received.extend_from_slice(&chunk);
        buf.push_str(&String::from_utf8_lossy(&chunk));
        loop {
            let norm = buf.replace("\r\n", "\n");
            let Some(end) = norm.find("\n\n") else {
                buf = norm;
                break;
            };
            let event = norm[..end].to_string();
            buf = norm[end + 2..].to_string();
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            if data.is_empty() {
                continue;
            }
            let Ok(v) = serde_json::from_str::<Value>(&data.join("\n")) else { continue };
            if v.get("id").and_then(Value::as_u64) == Some(id) {
                return Ok(v);
            }
        }
    }
    bail!("the event stream ended without an answer to request {id}")
}

/// A `tools/call` result with accessors for Chaperone's conventions.
#[derive(Debug, Clone)]
pub struct ToolResult {
    pub tool: String,
    pub raw: Value,
}

impl ToolResult {
    pub fn new(tool: &str, raw: Value) -> Self {
        ToolResult { tool: tool.to_string(), raw }
    }

    pub fn is_error(&self) -> bool {
        self.raw["isError"].as_bool() == Some(true)
    }

    /// All text content joined with newlines.
    pub fn text(&self) -> String {
        self.raw["content"]
            .as_array()
            .map(|items| items.iter().filter_map(|c| c["text"].as_str()).collect::<Vec<_>>().join("\n"))
            .unwrap_or_default()
    }

    pub fn structured(&self) -> &Value {
        &self.raw["structuredContent"]
    }

    /// `structuredContent.data` of a page-derived result (or the whole
    /// structured content when it is not wrapped).
    pub fn data(&self) -> &Value {
        let s = self.structured();
        if s.get("untrustedWebContent").is_some() { &s["data"] } else { s }
    }

    /// The error code of an `isError` result.
    pub fn error_code(&self) -> Option<&str> {
        self.structured()["code"].as_str()
    }

    /// The snapshot text of a `browser_snapshot` result.
    pub fn snapshot(&self) -> String {
        let text = self.text();
        shared::untrusted::unwrap_text(&text).map_or_else(|| text.clone(), str::to_string)
    }

    /// Panics with the error unless the call succeeded.
    pub fn expect_ok(self, context: &str) -> Self {
        assert!(!self.is_error(), "{} {context} failed: {}", self.tool, self.raw);
        self
    }

    /// Panics unless the call failed with `code`.
    pub fn expect_error(self, code: &str) -> Self {
        assert!(self.is_error(), "{} was expected to fail with {code} but succeeded: {}", self.tool, self.raw);
        assert_eq!(self.error_code(), Some(code), "{} failed with another code: {}", self.tool, self.raw);
        self
    }

    /// Panics unless this is a page-derived result wrapped as untrusted.
    pub fn expect_untrusted(self) -> Self {
        let s = self.structured();
        assert_eq!(s["untrustedWebContent"], json!(true), "{} result not marked untrusted: {}", self.tool, self.raw);
        let notice = s["notice"].as_str().unwrap_or_default().to_string();
        assert!(!notice.is_empty(), "{} result without notice: {}", self.tool, self.raw);
        assert!(self.text().starts_with(&notice), "{} text does not start with the notice: {}", self.tool, self.raw);
        self
    }
}
