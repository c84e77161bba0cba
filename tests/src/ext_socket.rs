//! The extension socket `/ext` from both sides:
//!
//! - [`ExtFrames`]: every frame on the real extension's socket, as
//!   Chromium's network domain for the service worker reports them
//!   (direction, payload), readable while the test runs.
//! - [`Rogue`]: a second browser — a local program holding the extension
//!   token (read from the daemon's home), connecting with the extension's
//!   Origin. [`Rogue::keep_trying`] connects again and again and records
//!   everything each attempt received; [`Rogue::hold`] connects once and,
//!   when welcomed, keeps the socket open.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use shared::protocol::{BridgeToExt, ExtToBridge};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::{Browser, CdpSession};

/// Who sent a frame on the real extension's socket.
pub const TO_BRIDGE: &str = "ext→bridge";
pub const TO_EXTENSION: &str = "bridge→ext";

/// The real extension's `/ext` frames, collected from the moment
/// [`ExtFrames::watch`] returns.
pub struct ExtFrames {
    frames: Arc<Mutex<Vec<(String, String)>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    _worker: CdpSession,
}

impl ExtFrames {
    /// Attaches to the extension's service worker and enables its network
    /// domain.
    pub async fn watch(browser: &Browser) -> Result<ExtFrames> {
        let worker = browser.extension_worker(Duration::from_secs(10)).await.context("the extension's worker")?;
        let session = browser.cdp.attach(&worker.target_id).await.context("attach to the worker")?;
        let mut events = browser.cdp.events();
        let frames = Arc::new(Mutex::new(Vec::new()));
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let (sink, id) = (frames.clone(), session.session_id.clone());
        let task = tokio::spawn(async move {
            loop {
                let ev = tokio::select! {
                    _ = &mut stopped => break,
                    ev = events.recv() => ev,
                };
                match ev {
                    Ok(ev) => {
                        if ev["sessionId"].as_str() != Some(id.as_str()) {
                            continue;
                        }
                        let dir = match ev["method"].as_str() {
                            Some("Network.webSocketFrameSent") => TO_BRIDGE,
                            Some("Network.webSocketFrameReceived") => TO_EXTENSION,
                            _ => continue,
                        };
                        let payload = ev["params"]["response"]["payloadData"].as_str().unwrap_or_default();
                        sink.lock().unwrap().push((dir.to_string(), payload.to_string()));
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        sink.lock().unwrap().push(("lost".into(), format!("{n} events lost")));
                    }
                    Err(_) => break,
                }
            }
        });
        session.call("Network.enable", json!({})).await.context("Network.enable on the worker")?;
        Ok(ExtFrames { frames, stop: Some(stop), task: Some(task), _worker: session })
    }

    /// The frames so far: (direction, payload).
    pub fn so_far(&self) -> Vec<(String, String)> {
        self.frames.lock().unwrap().clone()
    }

    /// Stops collecting (after a moment for late events) and returns every
    /// frame.
    pub async fn finish(mut self) -> Vec<(String, String)> {
        tokio::time::sleep(Duration::from_millis(300)).await;
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        self.so_far()
    }
}

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// What one connection attempt of a [`Rogue`] got back.
#[derive(Debug, Clone, Default)]
pub struct Attempt {
    /// Text frames received, as sent.
    pub frames: Vec<String>,
    pub close_code: Option<u16>,
    pub close_reason: Option<String>,
}

/// A second browser on `/ext`.
pub struct Rogue {
    attempts: Arc<Mutex<Vec<Attempt>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

/// A rogue connection the bridge accepted, held open.
pub struct HeldSocket {
    ws: Ws,
}

fn extension_token(home: &Path) -> Result<String> {
    let t = std::fs::read_to_string(home.join("extension-token")).context("read the extension token")?;
    Ok(t.trim().to_string())
}

async fn connect(port: u16) -> Result<Ws> {
    let mut req = format!("ws://127.0.0.1:{port}/ext").into_client_request()?;
    req.headers_mut().insert("Origin", format!("chrome-extension://{}", shared::EXTENSION_ID).parse()?);
    Ok(tokio_tungstenite::connect_async(req).await?.0)
}

fn text(frame: &ExtToBridge) -> Message {
    Message::text(serde_json::to_string(frame).expect("a frame serialises"))
}

/// One attempt: hello, then a guessed secret request and a ping, as if
/// accepted; everything received until the socket ends (≤ 5 s).
async fn attempt(port: u16, token: &str, version: &str) -> Result<Attempt> {
    let mut ws = connect(port).await?;
    ws.send(text(&ExtToBridge::Hello { token: token.to_string(), version: version.to_string() })).await?;
    let _ = ws.send(text(&ExtToBridge::SecretRequest { request: 1, origin: "http://127.0.0.1:1".into() })).await;
    let _ = ws.send(text(&ExtToBridge::Ping { seq: 1 })).await;
    let mut a = Attempt::default();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        match tokio::time::timeout_at(deadline, ws.next()).await {
            Err(_) | Ok(None) | Ok(Some(Err(_))) => return Ok(a),
            Ok(Some(Ok(Message::Close(frame)))) => {
                a.close_code = frame.as_ref().map(|f| u16::from(f.code));
                a.close_reason = frame.map(|f| f.reason.to_string());
                return Ok(a);
            }
            Ok(Some(Ok(Message::Text(t)))) => a.frames.push(t.as_str().to_string()),
            Ok(Some(Ok(_))) => {}
        }
    }
}

impl Rogue {
    /// Connects to the daemon on `port` with the extension token of `home`
    /// every `every`, until [`stop`](Self::stop).
    pub fn keep_trying(port: u16, home: &Path, every: Duration) -> Result<Rogue> {
        let token = extension_token(home)?;
        let attempts = Arc::new(Mutex::new(Vec::new()));
        let (stop, mut stopped) = tokio::sync::oneshot::channel::<()>();
        let sink = attempts.clone();
        let task = tokio::spawn(async move {
            loop {
                let got = tokio::select! {
                    _ = &mut stopped => break,
                    got = attempt(port, &token, "6.6.6-rogue") => got,
                };
                if let Ok(a) = got {
                    sink.lock().unwrap().push(a);
                }
                tokio::select! {
                    _ = &mut stopped => break,
                    () = tokio::time::sleep(every) => {}
                }
            }
        });
        Ok(Rogue { attempts, stop: Some(stop), task: Some(task) })
    }

    /// The attempts that ended so far.
    pub fn attempts(&self) -> Vec<Attempt> {
        self.attempts.lock().unwrap().clone()
    }

    /// Stops trying; every attempt that ended.
    pub async fn stop(mut self) -> Vec<Attempt> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        self.attempts()
    }

    /// Connects once as extension `version` and waits for the welcome: the
    /// bridge took this socket as its browser.
    pub async fn hold(port: u16, home: &Path, version: &str) -> Result<HeldSocket> {
        let mut ws = connect(port).await?;
        ws.send(text(&ExtToBridge::Hello { token: extension_token(home)?, version: version.to_string() })).await?;
        match tokio::time::timeout(Duration::from_secs(5), ws.next()).await {
            Ok(Some(Ok(Message::Text(t)))) => match serde_json::from_str::<BridgeToExt>(t.as_str()) {
                Ok(BridgeToExt::Welcome { .. }) => Ok(HeldSocket { ws }),
                other => bail!("expected a welcome, got {other:?}"),
            },
            other => bail!("expected a welcome, got {other:?}"),
        }
    }
}

impl HeldSocket {
    /// Closes the socket (the browser went away).
    pub async fn close(mut self) {
        let _ = self.ws.close(None).await;
    }
}

impl Drop for Rogue {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
