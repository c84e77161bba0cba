//! A lean MCP streamable-HTTP client for timing: it reads the whole answer
//! as bytes and parses it once, so the client's own work stays a small,
//! fixed part of what is measured (an agent's client does the same work).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use futures_util::StreamExt;
use serde_json::{Value, json};

/// The protocol version the client asks for.
pub const PROTOCOL_VERSION: &str = "2025-06-18";

pub struct BenchMcp {
    http: reqwest::Client,
    url: String,
    token: String,
    session: Option<String>,
    protocol: String,
    next_id: AtomicU64,
}

/// One timed `tools/call`.
pub struct Timed {
    pub result: Value,
    pub elapsed: Duration,
    /// Bytes of the HTTP answer body.
    pub wire_bytes: usize,
}

impl Timed {
    pub fn is_error(&self) -> bool {
        self.result["isError"].as_bool() == Some(true)
    }

    /// The snapshot text of a `browser_snapshot` result: the first text
    /// content without the untrusted-content notice and markers (the text
    /// travels once; `structuredContent` has only the header fields).
    pub fn snapshot_text(&self) -> String {
        let text = self.result["content"][0]["text"].as_str().unwrap_or_default();
        shared::untrusted::unwrap_text(text).unwrap_or(text).to_string()
    }

    /// `structuredContent.data` (page-derived results are wrapped).
    pub fn data(&self) -> &Value {
        let s = &self.result["structuredContent"];
        if s.get("untrustedWebContent").is_some() { &s["data"] } else { s }
    }
}

impl BenchMcp {
    pub async fn connect(port: u16, token: &str) -> Result<BenchMcp> {
        let mut c = BenchMcp {
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(120))
                .pool_idle_timeout(Duration::from_secs(3))
                .build()?,
            url: format!("http://127.0.0.1:{port}/mcp"),
            token: token.to_string(),
            session: None,
            protocol: PROTOCOL_VERSION.to_string(),
            next_id: AtomicU64::new(1),
        };
        let init = c
            .request(
                "initialize",
                json!({
                    "protocolVersion": c.protocol,
                    "capabilities": {},
                    "clientInfo": { "name": "chaperone-bench", "version": "0" }
                }),
            )
            .await
            .context("MCP initialize")?;
        if let Some(v) = init.0["result"]["protocolVersion"].as_str() {
            c.protocol = v.to_string();
        }
        let body = json!({ "jsonrpc": "2.0", "method": "notifications/initialized", "params": {} });
        let resp = c.post(&body).send().await?;
        if !resp.status().is_success() {
            bail!("notifications/initialized: HTTP {}", resp.status());
        }
        Ok(c)
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
            rb = rb.header("Mcp-Session-Id", s).header("MCP-Protocol-Version", &self.protocol);
        }
        rb
    }

    /// Sends one request; returns the JSON-RPC answer and the body size.
    async fn request(&mut self, method: &str, params: Value) -> Result<(Value, usize)> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let resp = self.post(&body).send().await.with_context(|| format!("POST /mcp {method}"))?;
        if let Some(s) = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
            self.session = Some(s.to_string());
        }
        if !resp.status().is_success() {
            bail!("{method}: HTTP {}", resp.status());
        }
        let sse = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.to_ascii_lowercase().starts_with("text/event-stream"));
        let mut buf: Vec<u8> = Vec::new();
        let mut stream = resp.bytes_stream();
        // `scan`: start of the current event; `searched`: bytes already
        // searched for its end (so each byte is searched about once).
        let (mut scan, mut searched): (usize, usize) = (0, 0);
        while let Some(chunk) = stream.next().await {
            buf.extend_from_slice(&chunk?);
            if !sse {
                continue;
            }
            loop {
                let from = searched.saturating_sub(3).max(scan);
                let Some(end) = find_event_end(&buf[from..]) else {
                    searched = buf.len();
                    break;
                };
                let event = &buf[scan..from + end.0];
                scan = from + end.1;
                searched = scan;
                if let Some(v) = event_json(event)
                    && v.get("id").and_then(Value::as_u64) == Some(id)
                {
                    return Ok((v, buf.len()));
                }
            }
        }
        if sse {
            if let Some(v) = event_json(&buf[scan..])
                && v.get("id").and_then(Value::as_u64) == Some(id)
            {
                return Ok((v, buf.len()));
            }
            bail!("{method}: the event stream ended without an answer");
        }
        let v: Value = serde_json::from_slice(&buf).with_context(|| format!("{method}: answer is not JSON"))?;
        Ok((v, buf.len()))
    }

    /// A timed `tools/call`: from sending the request to the parsed result.
    pub async fn call(&mut self, name: &str, arguments: Value) -> Result<Timed> {
        let start = Instant::now();
        let (v, wire_bytes) = self.request("tools/call", json!({ "name": name, "arguments": arguments })).await?;
        let elapsed = start.elapsed();
        if let Some(e) = v.get("error") {
            bail!("{name}: JSON-RPC error {e}");
        }
        let result = v.get("result").cloned().ok_or_else(|| anyhow!("{name}: answer without result"))?;
        Ok(Timed { result, elapsed, wire_bytes })
    }

    /// A `tools/call` that must succeed.
    pub async fn ok(&mut self, name: &str, arguments: Value) -> Result<Timed> {
        let t = self.call(name, arguments.clone()).await?;
        if t.is_error() {
            bail!("{name} {arguments} failed: {}", t.result);
        }
        Ok(t)
    }
}

/// `(event length, bytes to skip)` of the first complete SSE event.
fn find_event_end(b: &[u8]) -> Option<(usize, usize)> {
    let lf = b.windows(2).position(|w| w == b"\n\n").map(|p| (p, p + 2));
    let crlf = b.windows(4).position(|w| w == b"\r\n\r\n").map(|p| (p, p + 4));
    match (lf, crlf) {
        (Some(a), Some(c)) => Some(if a.0 <= c.0 { a } else { c }),
        (a, c) => a.or(c),
    }
}

fn event_json(event: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(event).ok()?;
    let data: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim_end_matches('\r').strip_prefix("data:"))
        .map(|d| d.strip_prefix(' ').unwrap_or(d))
        .collect();
    if data.is_empty() {
        return None;
    }
    serde_json::from_str(&data.join("\n")).ok()
}
