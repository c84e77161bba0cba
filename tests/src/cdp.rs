//! A minimal Chrome DevTools Protocol client over one browser-level
//! WebSocket: send a command, await its result by id; flat sessions for
//! attached targets; a broadcast of events.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value>>>>>;

/// How long one CDP command may take.
pub const CDP_TIMEOUT: Duration = Duration::from_secs(30);

/// A connection to the browser endpoint (`/devtools/browser/<id>`).
#[derive(Clone)]
pub struct Cdp {
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

/// `Target.TargetInfo`, the fields tests use.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetInfo {
    pub target_id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub url: String,
    #[serde(default)]
    pub attached: bool,
}

impl Cdp {
    /// Connects to a `ws://` DevTools URL.
    pub async fn connect(ws_url: &str) -> Result<Cdp> {
        let (ws, _) = tokio_tungstenite::connect_async(ws_url).await.with_context(|| format!("connect to {ws_url}"))?;
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
                    if let Some(id) = v.get("id").and_then(Value::as_u64) {
                        let waiter = pending.lock().unwrap().remove(&id);
                        if let Some(w) = waiter {
                            let r = match v.get("error") {
                                Some(e) => Err(anyhow!("CDP error: {e}")),
                                None => Ok(v.get("result").cloned().unwrap_or(Value::Null)),
                            };
                            let _ = w.send(r);
                        }
                    } else {
                        let _ = events.send(v);
                    }
                }
                // The socket closed: fail everyone still waiting.
                for (_, w) in pending.lock().unwrap().drain() {
                    let _ = w.send(Err(anyhow!("CDP connection closed")));
                }
            })
        };
        Ok(Cdp { inner: Arc::new(Inner { tx, pending, next_id: AtomicU64::new(1), events, reader, writer }) })
    }

    /// Subscribes to every event (`{"method", "params", "sessionId"?}`).
    pub fn events(&self) -> broadcast::Receiver<Value> {
        self.inner.events.subscribe()
    }

    async fn send(&self, session: Option<&str>, method: &str, params: Value) -> Result<Value> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let mut msg = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let (tx, rx) = oneshot::channel();
        self.inner.pending.lock().unwrap().insert(id, tx);
        self.inner.tx.send(Message::Text(msg.to_string().into())).map_err(|_| anyhow!("CDP connection closed"))?;
        match tokio::time::timeout(CDP_TIMEOUT, rx).await {
            Ok(Ok(r)) => r.with_context(|| method.to_string()),
            Ok(Err(_)) => bail!("CDP connection closed during {method}"),
            Err(_) => {
                self.inner.pending.lock().unwrap().remove(&id);
                bail!("CDP {method} timed out")
            }
        }
    }

    /// A browser-level command.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value> {
        self.send(None, method, params).await
    }

    /// All targets (pages, service workers, …).
    pub async fn targets(&self) -> Result<Vec<TargetInfo>> {
        let r = self.call("Target.getTargets", json!({})).await?;
        Ok(serde_json::from_value(r["targetInfos"].clone())?)
    }

    /// Attaches to a target with a flat session.
    pub async fn attach(&self, target_id: &str) -> Result<CdpSession> {
        let r = self.call("Target.attachToTarget", json!({ "targetId": target_id, "flatten": true })).await?;
        let session_id = r["sessionId"].as_str().context("no sessionId")?.to_string();
        Ok(CdpSession { cdp: self.clone(), session_id, target_id: target_id.to_string() })
    }

    /// Opens a new page target, attaches to it and loads `url` (waiting
    /// until the document is complete).
    pub async fn new_page(&self, url: &str) -> Result<CdpSession> {
        self.open_page(url, false).await
    }

    /// Like [`Cdp::new_page`], in a window of its own (so it keeps
    /// receiving input while the extension brings another tab to the front).
    pub async fn new_window_page(&self, url: &str) -> Result<CdpSession> {
        self.open_page(url, true).await
    }

    async fn open_page(&self, url: &str, new_window: bool) -> Result<CdpSession> {
        let r = self.call("Target.createTarget", json!({ "url": "about:blank", "newWindow": new_window })).await?;
        let id = r["targetId"].as_str().context("no targetId")?.to_string();
        let page = self.attach(&id).await?;
        page.call("Page.enable", json!({})).await?;
        if url != "about:blank" {
            page.navigate(url).await?;
        }
        Ok(page)
    }

    pub async fn close_target(&self, target_id: &str) -> Result<()> {
        self.call("Target.closeTarget", json!({ "targetId": target_id })).await?;
        Ok(())
    }

    /// Waits until a target matching `pred` exists.
    pub async fn wait_for_target(&self, within: Duration, pred: impl Fn(&TargetInfo) -> bool) -> Result<TargetInfo> {
        let found = crate::poll(within, Duration::from_millis(100), || async {
            self.targets().await.ok().and_then(|ts| ts.into_iter().find(|t| pred(t)))
        })
        .await;
        found.ok_or_else(|| anyhow!("no matching target within {within:?}"))
    }
}

/// A session attached to one target.
#[derive(Clone)]
pub struct CdpSession {
    cdp: Cdp,
    pub session_id: String,
    pub target_id: String,
}

impl CdpSession {
    pub async fn call(&self, method: &str, params: Value) -> Result<Value> {
        self.cdp.send(Some(&self.session_id), method, params).await
    }

    /// Evaluates a test-authored expression (awaiting promises) and
    /// returns its value.
    pub async fn evaluate(&self, expression: &str) -> Result<Value> {
        let r = self
            .call("Runtime.evaluate", json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }))
            .await?;
        if let Some(ex) = r.get("exceptionDetails") {
            bail!("evaluation threw: {ex}");
        }
        Ok(r["result"]["value"].clone())
    }

    /// Loads `url` and waits until `document.readyState` is `complete`.
    pub async fn navigate(&self, url: &str) -> Result<()> {
        let r = self.call("Page.navigate", json!({ "url": url })).await?;
        if let Some(e) = r.get("errorText").and_then(Value::as_str) {
            bail!("navigation to {url} failed: {e}");
        }
        self.wait_ready().await
    }

    /// Waits until `document.readyState === "complete"`.
    pub async fn wait_ready(&self) -> Result<()> {
        let ok = crate::poll(Duration::from_secs(20), Duration::from_millis(50), || async {
            match self.evaluate("document.readyState").await {
                Ok(v) if v == "complete" => Some(()),
                _ => None,
            }
        })
        .await;
        ok.ok_or_else(|| anyhow!("page did not finish loading"))
    }

    /// `Accessibility.getFullAXTree` nodes, reduced to the ones a person
    /// could perceive: `(role, name, value)` of non-ignored nodes.
    pub async fn ax_nodes(&self) -> Result<Vec<AxNode>> {
        self.call("Accessibility.enable", json!({})).await?;
        let r = self.call("Accessibility.getFullAXTree", json!({})).await?;
        let mut out = Vec::new();
        for n in r["nodes"].as_array().cloned().unwrap_or_default() {
            if n["ignored"].as_bool() == Some(true) {
                continue;
            }
            let s = |k: &str| n[k]["value"].as_str().unwrap_or("").to_string();
            let props = n["properties"].as_array().cloned().unwrap_or_default();
            let mut states = Vec::new();
            for p in props {
                let name = p["name"].as_str().unwrap_or("").to_string();
                let v = &p["value"]["value"];
                let on = v.as_bool() == Some(true) || v.as_str() == Some("true");
                if on {
                    states.push(name);
                } else if name == "level" {
                    states.push(format!("level={}", v));
                }
            }
            out.push(AxNode { role: s("role"), name: s("name"), value: s("value"), states });
        }
        Ok(out)
    }

    /// Clicks at the centre of the first element matching a CSS selector
    /// with real (trusted) mouse events.
    pub async fn click_selector(&self, selector: &str) -> Result<()> {
        self.click_selector_within(selector, Duration::from_secs(10)).await
    }

    /// [`CdpSession::click_selector`], waiting at most `within` for the element.
    pub async fn click_selector_within(&self, selector: &str, within: Duration) -> Result<()> {
        let sel = serde_json::to_string(selector)?;
        // A person clicks what they see: wait (bounded) until the element is
        // there, drawn, on top at its centre, and has stayed in place for one
        // look (a list drawn again above it moves it between look and click).
        let script = format!(
            "(() => {{ const e = document.querySelector({sel}); if (!e) return null; e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); if (r.width === 0 || r.height === 0) return null; const x = r.x + r.width / 2, y = r.y + r.height / 2; const hit = document.elementFromPoint(x, y); if (hit && hit !== e && !e.contains(hit)) return null; return [x, y]; }})()"
        );
        let last = std::cell::Cell::new(None::<(f64, f64)>);
        let found = crate::poll(within, Duration::from_millis(50), || async {
            let rect = tokio::time::timeout(Duration::from_secs(2), self.evaluate(&script)).await.ok()?.ok()?;
            let now = (rect[0].as_f64()?, rect[1].as_f64()?);
            (last.replace(Some(now)) == Some(now)).then_some(now)
        })
        .await;
        let Some((x, y)) = found else { bail!("no element matches {selector} (or it is not shown)") };
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({ "type": kind, "x": x, "y": y, "button": "left", "clickCount": 1 }),
            )
            .await?;
        }
        Ok(())
    }

    /// Types `text` into the focused element as a person's keyboard does
    /// (`Input.insertText`: trusted `input` events).
    pub async fn type_text(&self, text: &str) -> Result<()> {
        self.call("Input.insertText", json!({ "text": text })).await?;
        Ok(())
    }

    /// Clicks the field matching `selector` and types `text` into it.
    pub async fn click_and_type(&self, selector: &str, text: &str) -> Result<()> {
        self.click_selector(selector).await?;
        self.type_text(text).await
    }

    /// Presses one key (e.g. `Enter`, `Escape`) with trusted key events.
    pub async fn press_key(&self, key: &str) -> Result<()> {
        let code = match key {
            "Enter" => 13,
            "Escape" => 27,
            "Tab" => 9,
            "ArrowDown" => 40,
            "ArrowUp" => 38,
            _ => 0,
        };
        for kind in ["keyDown", "keyUp"] {
            let mut p = json!({ "type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code });
            if kind == "keyDown" && key == "Enter" {
                p["text"] = json!("\r");
            }
            self.call("Input.dispatchKeyEvent", p).await?;
        }
        Ok(())
    }
}

/// A node of Chromium's accessibility tree.
#[derive(Debug, Clone)]
pub struct AxNode {
    pub role: String,
    pub name: String,
    pub value: String,
    /// Boolean properties that are on (`checked`, `required`, …) and `level=N`.
    pub states: Vec<String>,
}
