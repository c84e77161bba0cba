//! A minimal WebDriver BiDi client (Firefox speaks it natively): send a
//! command, await its result by id; events go to a broadcast. The tests'
//! eyes and hands in Firefox, as CDP is in Chromium; the product never
//! opens this port (`tests/src/firefox.rs` starts Firefox with it, on
//! loopback, for the tests only).
//!
//! The person is played with `input.performActions`, which Firefox
//! dispatches as trusted input (`isTrusted` is true in the page).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow, bail};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value>>>>>;

/// How long one BiDi command may take.
pub const BIDI_TIMEOUT: Duration = Duration::from_secs(30);

/// One BiDi session over one WebSocket.
#[derive(Clone)]
pub struct Bidi {
    inner: Arc<Inner>,
}

struct Inner {
    tx: mpsc::UnboundedSender<Message>,
    pending: Pending,
    next_id: AtomicU64,
    events: broadcast::Sender<Value>,
    reader: tokio::task::JoinHandle<()>,
    writer: tokio::task::JoinHandle<()>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.reader.abort();
        self.writer.abort();
    }
}

/// A top-level or nested browsing context as `browsingContext.getTree` lists it.
#[derive(Debug, Clone)]
pub struct Context {
    pub id: String,
    pub url: String,
}

impl Bidi {
    /// Connects to `ws://127.0.0.1:PORT/session` and starts a session.
    pub async fn connect(port: u16) -> Result<Bidi> {
        let url = format!("ws://127.0.0.1:{port}/session");
        let (ws, _) = tokio_tungstenite::connect_async(&url).await.with_context(|| format!("connect to {url}"))?;
        let (mut sink, mut stream) = ws.split();
        let (tx, mut rx) = mpsc::unbounded_channel::<Message>();
        let pending: Pending = Arc::default();
        let (events, _) = broadcast::channel(1024);
        let writer = tokio::spawn(async move {
            while let Some(msg) = rx.recv().await {
                if sink.send(msg).await.is_err() {
                    break;
                }
            }
        });
        let reader = {
            let pending = pending.clone();
            let events = events.clone();
            tokio::spawn(async move {
                while let Some(Ok(msg)) = stream.next().await {
                    let Message::Text(text) = msg else { continue };
                    let Ok(v) = serde_json::from_str::<Value>(text.as_str()) else { continue };
                    match v.get("type").and_then(Value::as_str) {
                        Some("event") => {
                            let _ = events.send(v);
                        }
                        _ => {
                            let Some(id) = v.get("id").and_then(Value::as_u64) else { continue };
                            let Some(tx) = pending.lock().unwrap().remove(&id) else { continue };
                            let result = if v.get("type").and_then(Value::as_str) == Some("error") {
                                Err(anyhow!(
                                    "BiDi error {}: {}",
                                    v["error"].as_str().unwrap_or("?"),
                                    v["message"].as_str().unwrap_or("")
                                ))
                            } else {
                                Ok(v.get("result").cloned().unwrap_or(Value::Null))
                            };
                            let _ = tx.send(result);
                        }
                    }
                }
                for (_, tx) in pending.lock().unwrap().drain() {
                    let _ = tx.send(Err(anyhow!("the BiDi connection closed")));
                }
            })
        };
        let bidi = Bidi { inner: Arc::new(Inner { tx, pending, next_id: AtomicU64::new(1), events, reader, writer }) };
        bidi.call("session.new", json!({ "capabilities": {} })).await?;
        Ok(bidi)
    }

    /// Sends `method` and waits (bounded) for its result.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.inner.pending.lock().unwrap().insert(id, tx);
        let msg = json!({ "id": id, "method": method, "params": params }).to_string();
        self.inner.tx.send(Message::Text(msg.into())).map_err(|_| anyhow!("the BiDi connection closed"))?;
        match tokio::time::timeout(BIDI_TIMEOUT, rx).await {
            Ok(Ok(r)) => r.with_context(|| format!("BiDi {method}")),
            Ok(Err(_)) => bail!("BiDi {method}: connection closed"),
            Err(_) => {
                self.inner.pending.lock().unwrap().remove(&id);
                bail!("BiDi {method}: no answer within {BIDI_TIMEOUT:?}")
            }
        }
    }

    pub fn events(&self) -> broadcast::Receiver<Value> {
        self.inner.events.subscribe()
    }

    /// Every browsing context, top-level ones and their frames, in tree order.
    pub async fn contexts(&self) -> Result<Vec<Context>> {
        fn walk(list: &Value, out: &mut Vec<Context>) {
            for c in list.as_array().into_iter().flatten() {
                out.push(Context {
                    id: c["context"].as_str().unwrap_or_default().to_string(),
                    url: c["url"].as_str().unwrap_or_default().to_string(),
                });
                walk(&c["children"], out);
            }
        }
        let tree = self.call("browsingContext.getTree", json!({})).await?;
        let mut out = Vec::new();
        walk(&tree["contexts"], &mut out);
        Ok(out)
    }

    /// Waits up to `within` for a context whose URL satisfies `want`.
    pub async fn wait_for_context(&self, within: Duration, want: impl Fn(&str) -> bool) -> Result<Context> {
        let found = crate::poll(within, Duration::from_millis(100), || async {
            self.contexts().await.ok()?.into_iter().find(|c| want(&c.url))
        })
        .await;
        found.ok_or_else(|| anyhow!("no browsing context appeared within {within:?}"))
    }

    /// Evaluates `expression` in `context` (promises awaited) and returns its
    /// value as JSON (the expression's result goes through `JSON.stringify`
    /// in the page; `undefined` is `null`).
    pub async fn evaluate(&self, context: &str, expression: &str) -> Result<Value> {
        let wrapped = format!("(async () => JSON.stringify(await ({expression})))()");
        let r = self
            .call(
                "script.evaluate",
                json!({ "expression": wrapped, "target": { "context": context }, "awaitPromise": true }),
            )
            .await?;
        if r["type"] == "exception" {
            bail!("script threw: {}", r["exceptionDetails"]["text"].as_str().unwrap_or("?"));
        }
        match r["result"]["value"].as_str() {
            Some(s) => serde_json::from_str(s).context("evaluate: not JSON"),
            None => Ok(Value::Null),
        }
    }

    /// A trusted left click at viewport coordinates of `context`.
    pub async fn click_at(&self, context: &str, x: f64, y: f64) -> Result<()> {
        let (x, y) = (x.round() as i64, y.round() as i64);
        self.call(
            "input.performActions",
            json!({ "context": context, "actions": [{
                "type": "pointer", "id": "mouse", "parameters": { "pointerType": "mouse" },
                "actions": [
                    { "type": "pointerMove", "x": x, "y": y, "origin": "viewport", "duration": 0 },
                    { "type": "pointerDown", "button": 0 },
                    { "type": "pointerUp", "button": 0 },
                ],
            }] }),
        )
        .await?;
        self.call("input.releaseActions", json!({ "context": context })).await?;
        Ok(())
    }

    /// A trusted click in the middle of the element `selector` matches
    /// (scrolled into view first).
    pub async fn click_selector(&self, context: &str, selector: &str) -> Result<()> {
        let sel = serde_json::to_string(selector)?;
        let r = self
            .evaluate(
                context,
                &format!(
                    "(() => {{ const e = document.querySelector({sel}); if (!e) return null; \
                     e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); \
                     return [r.left + r.width / 2, r.top + r.height / 2]; }})()"
                ),
            )
            .await?;
        let (Some(x), Some(y)) = (r[0].as_f64(), r[1].as_f64()) else { bail!("no element {selector} to click") };
        self.click_at(context, x, y).await
    }

    /// Trusted key presses typing `text` into whatever has focus in `context`.
    pub async fn type_text(&self, context: &str, text: &str) -> Result<()> {
        let mut actions = Vec::new();
        for ch in text.chars() {
            let v = ch.to_string();
            actions.push(json!({ "type": "keyDown", "value": v }));
            actions.push(json!({ "type": "keyUp", "value": v }));
        }
        self.call(
            "input.performActions",
            json!({ "context": context, "actions": [{ "type": "key", "id": "keyboard", "actions": actions }] }),
        )
        .await?;
        Ok(())
    }
}
