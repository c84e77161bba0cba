//! `chaperone mcp`: a stdio MCP server for clients configured with a
//! command. Each JSON-RPC line on stdin is POSTed to the daemon's `/mcp`
//! (streamable HTTP, Bearer mcp-token); every JSON-RPC message in the
//! answer (plain JSON or an SSE stream) is written to stdout as one line.
//! When stdin ends, the session is ended with `DELETE /mcp` (the daemon
//! then releases its tabs to the person).
//!
//! # The daemon restarting under a client
//!
//! When the daemon cannot be reached, or no longer knows the session (it
//! was killed and started again), the call that failed is answered with a
//! JSON-RPC error whose message starts with `EXTENSION_DISCONNECTED`: it is
//! never sent again (it may or may not have run). The proxy then finds the
//! daemon again (starting it when it is not running, as at launch),
//! replays the client's own `initialize` and `notifications/initialized`
//! for a new session, and the client's next calls go on in that session,
//! without the client having to restart the command.

use std::sync::Arc;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, mpsc};

use crate::error::Error;

/// Longest line accepted on stdin (a JSON-RPC message).
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Finds the running daemon (starting it when needed): its port and the
/// MCP token.
pub type Discover = Arc<dyn Fn() -> Result<(u16, String), Error> + Send + Sync>;

struct Upstream {
    http: reqwest::Client,
    /// `/mcp` URL and Bearer token (both change when the daemon restarts).
    target: Mutex<(String, String)>,
    session: Mutex<Option<String>>,
    protocol: Mutex<Option<String>>,
    /// The client's `initialize` request, replayed for a new session.
    init: Mutex<Option<Value>>,
    /// Held while a new session is being made (one at a time).
    reconnecting: Mutex<()>,
    discover: Discover,
}

fn mcp_url(port: u16) -> String {
    format!("http://127.0.0.1:{port}/mcp")
}

/// Why a message could not be forwarded.
enum PostError {
    /// The daemon is gone or no longer knows the session: worth a new one.
    Lost(String),
    Other(String),
}

/// Runs until stdin closes.
pub async fn run(port: u16, token: String, discover: Discover) -> Result<(), Error> {
    // Idle connections are dropped before the daemon's idle timeout closes
    // them, so a request is never sent on a socket the daemon is closing.
    let idle = crate::server::IDLE_TIMEOUT.saturating_sub(std::time::Duration::from_secs(2));
    let http = reqwest::Client::builder()
        .no_proxy()
        .pool_idle_timeout(idle)
        .build()
        .map_err(|e| Error::Server(format!("http client: {e}")))?;
    let up = Arc::new(Upstream {
        http,
        target: Mutex::new((mcp_url(port), token)),
        session: Mutex::new(None),
        protocol: Mutex::new(None),
        init: Mutex::new(None),
        reconnecting: Mutex::new(()),
        discover,
    });
    let (tx, mut rx) = mpsc::channel::<String>(64);
    let writer = tokio::spawn(async move {
        let mut out = tokio::io::stdout();
        while let Some(line) = rx.recv().await {
            if out.write_all(line.as_bytes()).await.is_err()
                || out.write_all(b"\n").await.is_err()
                || out.flush().await.is_err()
            {
                break;
            }
        }
    });
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let tasks = tokio_util::task::TaskTracker::new();
    while let Ok(Some(line)) = lines.next_line().await {
        if line.trim().is_empty() {
            continue;
        }
        if line.len() > MAX_LINE_BYTES {
            let _ = tx.send(error_line(&Value::Null, -32600, "message too large")).await;
            continue;
        }
        let msg: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(_) => {
                let _ = tx.send(error_line(&Value::Null, -32700, "parse error")).await;
                continue;
            }
        };
        let is_initialize = msg.get("method").and_then(Value::as_str) == Some("initialize");
        let up = up.clone();
        let tx = tx.clone();
        // `initialize` establishes the session: wait for it before reading
        // on. Everything else runs concurrently (a long tool call must not
        // block a cancellation).
        let fut = async move { forward(&up, msg, &tx).await };
        if is_initialize {
            fut.await;
        } else {
            tasks.spawn(fut);
        }
    }
    tasks.close();
    tasks.wait().await;
    end_session(&up).await;
    drop(tx);
    let _ = writer.await;
    Ok(())
}

/// Input ended: `DELETE /mcp` ends the session, so the daemon releases its
/// tabs to the person at once (a failure only costs a debug line: the
/// session then ends when rmcp's keep-alive expires).
async fn end_session(up: &Upstream) {
    let Some(session) = up.session.lock().await.clone() else { return };
    let (url, token) = up.target.lock().await.clone();
    let mut req = up.http.delete(&url).bearer_auth(&token).header("Mcp-Session-Id", session);
    if let Some(p) = up.protocol.lock().await.as_deref() {
        req = req.header("MCP-Protocol-Version", p);
    }
    match req.timeout(std::time::Duration::from_secs(5)).send().await {
        Ok(r) => tracing::debug!(status = r.status().as_u16(), "session ended"),
        Err(e) => tracing::debug!(error = %e, "ending the session failed"),
    }
}

async fn forward(up: &Upstream, msg: Value, tx: &mpsc::Sender<String>) {
    let id = msg.get("id").cloned();
    if msg.get("method").and_then(Value::as_str) == Some("initialize") {
        *up.init.lock().await = Some(msg.clone());
    }
    let session = up.session.lock().await.clone();
    match post(up, &msg, id.as_ref(), tx).await {
        Ok(()) => {}
        Err(PostError::Other(message)) => {
            tracing::warn!(%message, "forwarding to the bridge failed");
            if let Some(id) = id {
                let _ = tx.send(error_line(&id, -32000, &message)).await;
            }
        }
        Err(PostError::Lost(message)) => {
            tracing::warn!(%message, "the bridge was lost; making a new session");
            if let Some(id) = &id {
                let text = format!(
                    "EXTENSION_DISCONNECTED: {message}; this call was not sent again and may or may not have \
                     run. The next calls go to a new session: list your tabs again."
                );
                let _ = tx.send(error_line(id, -32000, &text)).await;
            }
            reconnect(up, session).await;
        }
    }
}

/// A new session with the daemon (found again, started if need be), made
/// with the client's own `initialize`; `lost` is the session that failed
/// (another task may have replaced it already).
async fn reconnect(up: &Upstream, lost: Option<String>) {
    let _one = up.reconnecting.lock().await;
    if *up.session.lock().await != lost {
        return;
    }
    let Some(init) = up.init.lock().await.clone() else { return };
    let discover = up.discover.clone();
    let found = tokio::task::spawn_blocking(move || discover()).await;
    let Ok(Ok((port, token))) = found else {
        tracing::warn!("the daemon could not be found or started again");
        return;
    };
    *up.target.lock().await = (mcp_url(port), token);
    *up.session.lock().await = None;
    *up.protocol.lock().await = None;
    // The answers go nowhere: the client has had them once.
    let (sink, mut drain) = mpsc::channel::<String>(16);
    tokio::spawn(async move { while drain.recv().await.is_some() {} });
    let mut init = init;
    init["id"] = Value::from("chaperone-proxy-reconnect");
    let id = init["id"].clone();
    if post(up, &init, Some(&id), &sink).await.is_err() {
        tracing::warn!("a new session could not be made");
        return;
    }
    let note = serde_json::json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let _ = post(up, &note, None, &sink).await;
    tracing::info!(port, "a new session with the bridge");
}

/// Sends one message and relays every message of the answer. For an SSE
/// answer, stops once the response to `id` has been relayed.
async fn post(up: &Upstream, msg: &Value, id: Option<&Value>, tx: &mpsc::Sender<String>) -> Result<(), PostError> {
    use futures_util::StreamExt;
    let (url, token) = up.target.lock().await.clone();
    let mut req =
        up.http.post(&url).bearer_auth(&token).header("Accept", "application/json, text/event-stream").json(msg);
    if let Some(s) = up.session.lock().await.as_deref() {
        req = req.header("Mcp-Session-Id", s);
    }
    if let Some(p) = up.protocol.lock().await.as_deref() {
        req = req.header("MCP-Protocol-Version", p);
    }
    let resp = req
        .send()
        .await
        .map_err(|_| PostError::Lost("the Chaperone bridge is not reachable (is the daemon running?)".to_string()))?;
    if let Some(s) = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
        *up.session.lock().await = Some(s.to_string());
    }
    let status = resp.status();
    if status == reqwest::StatusCode::ACCEPTED {
        return Ok(());
    }
    // A daemon started again knows neither the session nor (when the
    // home's token was renewed) the token.
    let had_session = up.session.lock().await.is_some();
    if had_session && matches!(status.as_u16(), 401 | 404) {
        return Err(PostError::Lost(format!("the bridge no longer knows this session (HTTP {})", status.as_u16())));
    }
    if !status.is_success() {
        return Err(PostError::Other(format!("the bridge answered HTTP {}", status.as_u16())));
    }
    let is_sse = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/event-stream"));
    let relay = |v: Value| async move {
        if let Some(p) = v.get("result").and_then(|r| r.get("protocolVersion")).and_then(Value::as_str) {
            *up.protocol.lock().await = Some(p.to_string());
        }
        let done =
            id.is_some_and(|id| v.get("id") == Some(id) && (v.get("result").is_some() || v.get("error").is_some()));
        let _ = tx.send(v.to_string()).await;
        done
    };
    if !is_sse {
        let body = resp.text().await.map_err(|_| PostError::Lost("the bridge closed the answer early".to_string()))?;
        if let Ok(v) = serde_json::from_str::<Value>(&body) {
            relay(v).await;
        }
        return Ok(());
    }
    let mut stream = resp.bytes_stream();
    let mut buf = String::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| PostError::Lost("the bridge closed the answer early".to_string()))?;
        buf.push_str(&String::from_utf8_lossy(&chunk));
        let normalised = buf.replace("\r\n", "\n");
        let Some(cut) = normalised.rfind("\n\n") else {
            buf = normalised;
            continue;
        };
        let (complete, rest) = normalised.split_at(cut + 2);
        let messages = parse_sse(complete);
        buf = rest.to_string();
        for v in messages {
            if relay(v).await {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// JSON-RPC messages from the `data:` fields of an SSE body.
fn parse_sse(body: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for event in body.split("\n\n") {
        let data: Vec<&str> =
            event.lines().filter_map(|l| l.strip_prefix("data:")).map(|d| d.strip_prefix(' ').unwrap_or(d)).collect();
        if data.is_empty() {
            continue;
        }
        if let Ok(v) = serde_json::from_str::<Value>(&data.join("\n")) {
            out.push(v);
        }
    }
    out
}

fn error_line(id: &Value, code: i64, message: &str) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_bodies_yield_their_json_messages() {
        let body = "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\ndata:\n\n: comment\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\n";
        let msgs = parse_sse(body);
        assert_eq!(msgs.len(), 2);
        assert_eq!(msgs[0]["id"], 1);
        assert_eq!(msgs[1]["method"], "x");
    }
}
