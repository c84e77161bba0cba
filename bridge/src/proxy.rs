//! `chaperone mcp`: a stdio MCP server for clients configured with a
//! command. Each JSON-RPC line on stdin is POSTed to the daemon's `/mcp`
//! (streamable HTTP, Bearer mcp-token); every JSON-RPC message in the
//! answer (plain JSON or an SSE stream) is written to stdout as one line.
//! When stdin ends, the session is ended with `DELETE /mcp` (the daemon
//! then releases its tabs to the person).

use std::sync::Arc;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, mpsc};

use crate::error::Error;

/// Longest line accepted on stdin (a JSON-RPC message).
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

struct Upstream {
    http: reqwest::Client,
    url: String,
    token: String,
    session: Mutex<Option<String>>,
    protocol: Mutex<Option<String>>,
}

/// Runs until stdin closes.
pub async fn run(port: u16, token: String) -> Result<(), Error> {
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
        url: format!("http://127.0.0.1:{port}/mcp"),
        token,
        session: Mutex::new(None),
        protocol: Mutex::new(None),
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
    let mut req = up.http.delete(&up.url).bearer_auth(&up.token).header("Mcp-Session-Id", session);
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
    if let Err(message) = post(up, &msg, id.as_ref(), tx).await {
        tracing::warn!(%message, "forwarding to the bridge failed");
        if let Some(id) = id {
            let _ = tx.send(error_line(&id, -32000, &message)).await;
        }
    }
}

/// Sends one message and relays every message of the answer. For an SSE
/// answer, stops once the response to `id` has been relayed.
async fn post(up: &Upstream, msg: &Value, id: Option<&Value>, tx: &mpsc::Sender<String>) -> Result<(), String> {
    use futures_util::StreamExt;
    let mut req =
        up.http.post(&up.url).bearer_auth(&up.token).header("Accept", "application/json, text/event-stream").json(msg);
    if let Some(s) = up.session.lock().await.as_deref() {
        req = req.header("Mcp-Session-Id", s);
    }
    if let Some(p) = up.protocol.lock().await.as_deref() {
        req = req.header("MCP-Protocol-Version", p);
    }
    let resp =
        req.send().await.map_err(|_| "the Chaperone bridge is not reachable (is the daemon running?)".to_string())?;
    if let Some(s) = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
        *up.session.lock().await = Some(s.to_string());
    }
    let status = resp.status();
    if status == reqwest::StatusCode::ACCEPTED {
        return Ok(());
    }
    if !status.is_success() {
        return Err(format!("the bridge answered HTTP {}", status.as_u16()));
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
        let body = resp.text().await.map_err(|_| "the bridge closed the answer early".to_string())?;
        if let Ok(v) = serde_json::from_str::<Value>(&body) {
            relay(v).await;
        }
        return Ok(());
    }
    let mut stream = resp.bytes_stream();
    let mut buf = String::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| "the bridge closed the answer early".to_string())?;
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
