//! The extension socket `/ext` and the [`ExtHub`] that sends commands over
//! it.
//!
//! A socket is unauthenticated until its first text frame, a valid
//! `hello{token, version}` with the extension token, arrives within
//! [`HELLO_TIMEOUT_SECS`]. Anything else as a first frame, a wrong token,
//! or silence closes it. At most [`MAX_UNAUTHENTICATED_SOCKETS`] sockets
//! may wait for their hello (further upgrades get 503). Failed hellos are
//! counted; after [`super::MAX_AUTH_FAILURES`] within
//! [`super::AUTH_FAILURE_WINDOW`] new upgrades get 429 until the window
//! ends. Authenticated sockets: text frames only (a binary frame closes
//! with 1008), each frame at most [`MAX_FRAME_BYTES`] and parsed as an
//! [`ExtToBridge`] (unknown fields refused); [`MAX_INVALID_FRAMES`]
//! invalid frames close with 1008.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade, close_code};
use axum::http::StatusCode;
use axum::response::Response;
use shared::action::ControlState;
use shared::error::{ErrorCode, WireError};
use shared::limits::{HELLO_TIMEOUT_SECS, MAX_FRAME_BYTES, MAX_INVALID_FRAMES, MAX_UNAUTHENTICATED_SOCKETS};
use shared::protocol::{BridgeToExt, Command, CommandResult, ExtToBridge, Outcome};
use tokio::sync::{OwnedSemaphorePermit, mpsc, oneshot};

use super::AppState;
use super::guard::refuse_status;

const _: () = assert!(MAX_UNAUTHENTICATED_SOCKETS > 0);

/// Longest extension version string accepted in a hello.
const MAX_VERSION_CHARS: usize = 64;
/// Outgoing requests queued per connection.
const OUTGOING_QUEUE: usize = 64;

/// One authenticated extension connection, as reported by [`ExtHub::connections`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionInfo {
    /// Connection number since the daemon started (1, 2, …).
    pub connection: u64,
    pub extension_version: String,
    pub connected_for: Duration,
    /// The person's controls as the extension last reported them.
    pub control: ControlState,
}

struct Connection {
    number: u64,
    version: String,
    since: Instant,
    tx: mpsc::Sender<BridgeToExt>,
    control: ControlState,
}

struct Pending {
    connection: u64,
    tx: oneshot::Sender<Outcome>,
}

#[derive(Default)]
struct HubInner {
    /// In the order they said hello; the last one gets the commands.
    connections: Vec<Connection>,
    pending: HashMap<u64, Pending>,
}

/// Authenticated extension connections and the request/response plumbing.
pub struct ExtHub {
    inner: Mutex<HubInner>,
    next_request: AtomicU64,
    next_connection: AtomicU64,
}

impl Default for ExtHub {
    fn default() -> Self {
        Self::new()
    }
}

fn disconnected() -> WireError {
    WireError::new(ErrorCode::ExtensionDisconnected, "no browser extension is connected to the bridge")
}

impl ExtHub {
    pub fn new() -> Self {
        ExtHub {
            inner: Mutex::new(HubInner::default()),
            next_request: AtomicU64::new(1),
            next_connection: AtomicU64::new(1),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HubInner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Authenticated connections, oldest first.
    pub fn connections(&self) -> Vec<ConnectionInfo> {
        self.lock()
            .connections
            .iter()
            .map(|c| ConnectionInfo {
                connection: c.number,
                extension_version: c.version.clone(),
                connected_for: c.since.elapsed(),
                control: c.control,
            })
            .collect()
    }

    /// Records the control state a connection reported.
    pub fn set_control(&self, connection: u64, control: ControlState) {
        if let Some(c) = self.lock().connections.iter_mut().find(|c| c.number == connection) {
            c.control = control;
        }
    }

    pub fn is_connected(&self) -> bool {
        !self.lock().connections.is_empty()
    }

    /// Requests waiting for their response.
    pub fn pending_count(&self) -> usize {
        self.lock().pending.len()
    }

    /// Sends `command` to the most recent connection and waits for its
    /// response. `EXTENSION_DISCONNECTED` when nobody is connected or the
    /// socket drops before answering, `TIMEOUT` after `timeout`.
    pub async fn call(&self, command: Command, timeout: Duration) -> Result<CommandResult, WireError> {
        let id = self.next_request.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let sender = {
            let mut inner = self.lock();
            let Some(conn) = inner.connections.last() else {
                return Err(disconnected());
            };
            let (number, sender) = (conn.number, conn.tx.clone());
            inner.pending.insert(id, Pending { connection: number, tx });
            sender
        };
        // Removes the pending entry however this future ends (answer,
        // timeout, or the caller dropping it).
        let _cleanup = PendingGuard { hub: self, id };
        let exchange = async {
            sender.send(BridgeToExt::Request { id, command: Box::new(command) }).await.map_err(|_| disconnected())?;
            rx.await.map_err(|_| {
                WireError::new(ErrorCode::ExtensionDisconnected, "the browser extension disconnected before answering")
            })
        };
        match tokio::time::timeout(timeout, exchange).await {
            Err(_) => Err(WireError::new(ErrorCode::Timeout, "the browser extension did not answer in time")),
            Ok(Err(e)) => Err(e),
            Ok(Ok(Outcome::Ok(result))) => Ok(result),
            // The extension's messages can quote page text (names): redacted.
            Ok(Ok(Outcome::Err(e))) => Err(WireError::new(e.code, shared::redact::redact_text(&e.message))),
        }
    }

    fn register(&self, version: String) -> (u64, mpsc::Receiver<BridgeToExt>) {
        let number = self.next_connection.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel(OUTGOING_QUEUE);
        self.lock().connections.push(Connection {
            number,
            version,
            since: Instant::now(),
            tx,
            control: ControlState::default(),
        });
        (number, rx)
    }

    /// Forgets a connection; its pending calls fail with
    /// `EXTENSION_DISCONNECTED` (their senders are dropped).
    fn unregister(&self, number: u64) {
        let mut inner = self.lock();
        inner.connections.retain(|c| c.number != number);
        inner.pending.retain(|_, p| p.connection != number);
    }

    /// Delivers a response; false when no call with this id is waiting on
    /// this connection (late answer after a timeout, or a stray id).
    fn complete(&self, connection: u64, id: u64, outcome: Outcome) -> bool {
        let mut inner = self.lock();
        match inner.pending.get(&id) {
            Some(p) if p.connection == connection => {}
            _ => return false,
        }
        let pending = inner.pending.remove(&id).expect("checked above");
        drop(inner);
        pending.tx.send(outcome).is_ok()
    }
}

struct PendingGuard<'a> {
    hub: &'a ExtHub,
    id: u64,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.hub.lock().pending.remove(&self.id);
    }
}

/// `GET /ext` (Host and Origin were checked by the guard).
pub(crate) async fn upgrade(State(state): State<AppState>, ws: WebSocketUpgrade) -> Response {
    if state.inner.ext_auth.locked() {
        tracing::warn!(reason = "rate_limited", "extension socket refused");
        return refuse_status(StatusCode::TOO_MANY_REQUESTS);
    }
    let Ok(permit) = state.inner.unauthenticated.clone().try_acquire_owned() else {
        tracing::warn!(reason = "too_many_unauthenticated", "extension socket refused");
        return refuse_status(StatusCode::SERVICE_UNAVAILABLE);
    };
    let task = state.inner.tracker.token();
    ws.max_frame_size(MAX_FRAME_BYTES)
        .max_message_size(MAX_FRAME_BYTES)
        .on_failed_upgrade(|e| tracing::debug!(error = %e, "extension socket upgrade failed"))
        .on_upgrade(move |socket| async move {
            let _task = task;
            socket_task(state, socket, permit).await;
        })
}

enum Hello {
    Accepted(String),
    Refused(&'static str),
    Gone,
}

async fn read_hello(state: &AppState, socket: &mut WebSocket) -> Hello {
    loop {
        let text = match socket.recv().await {
            None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return Hello::Gone,
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            Some(Ok(Message::Binary(_))) => return Hello::Refused("binary frames are not accepted"),
            Some(Ok(Message::Text(t))) => t,
        };
        return match ExtToBridge::from_json(text.as_str()) {
            Ok(ExtToBridge::Hello { token, version }) => {
                if !state.inner.config.tokens.extension.matches(&token) {
                    Hello::Refused("authentication failed")
                } else if version.is_empty()
                    || version.chars().count() > MAX_VERSION_CHARS
                    || version.chars().any(|c| c.is_control())
                {
                    Hello::Refused("invalid version")
                } else {
                    Hello::Accepted(version)
                }
            }
            _ => Hello::Refused("the first frame must be a hello"),
        };
    }
}

async fn close(socket: &mut WebSocket, code: u16, reason: &'static str) {
    let frame = CloseFrame { code, reason: Utf8Bytes::from_static(reason) };
    let _ = socket.send(Message::Close(Some(frame))).await;
}

async fn send(socket: &mut WebSocket, msg: &BridgeToExt) -> bool {
    match serde_json::to_string(msg) {
        Ok(json) => socket.send(Message::text(json)).await.is_ok(),
        Err(e) => {
            tracing::error!(error = %e, "cannot serialise a frame for the extension");
            false
        }
    }
}

async fn socket_task(state: AppState, mut socket: WebSocket, permit: OwnedSemaphorePermit) {
    let cancel = state.shutdown_token();
    let hello = tokio::select! {
        _ = cancel.cancelled() => {
            close(&mut socket, close_code::AWAY, "bridge shutting down").await;
            return;
        }
        r = tokio::time::timeout(Duration::from_secs(HELLO_TIMEOUT_SECS), read_hello(&state, &mut socket)) => r,
    };
    let version = match hello {
        Err(_) => {
            tracing::warn!(reason = "hello_timeout", "extension socket refused");
            close(&mut socket, close_code::POLICY, "no hello in time").await;
            return;
        }
        Ok(Hello::Gone) => return,
        Ok(Hello::Refused(reason)) => {
            state.inner.ext_auth.record_failure();
            tracing::warn!(reason, "extension socket refused");
            close(&mut socket, close_code::POLICY, reason).await;
            return;
        }
        Ok(Hello::Accepted(version)) => version,
    };
    drop(permit);
    let (number, mut outgoing) = state.hub().register(version.clone());
    tracing::info!(connection = number, extension_version = %version, "extension connected");
    if send(&mut socket, &BridgeToExt::Welcome { version: shared::VERSION.to_string() }).await {
        authenticated_loop(&state, &mut socket, number, &mut outgoing).await;
    }
    state.hub().unregister(number);
    tracing::info!(connection = number, "extension disconnected");
}

async fn authenticated_loop(
    state: &AppState,
    socket: &mut WebSocket,
    number: u64,
    outgoing: &mut mpsc::Receiver<BridgeToExt>,
) {
    let cancel = state.shutdown_token();
    let mut invalid: u32 = 0;
    loop {
        tokio::select! {
            _ = cancel.cancelled() => {
                close(socket, close_code::AWAY, "bridge shutting down").await;
                return;
            }
            out = outgoing.recv() => {
                let Some(msg) = out else { return };
                if !send(socket, &msg).await {
                    return;
                }
            }
            frame = socket.recv() => {
                let text = match frame {
                    None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                    Some(Ok(Message::Binary(_))) => {
                        tracing::warn!(connection = number, reason = "binary_frame", "closing extension socket");
                        close(socket, close_code::POLICY, "binary frames are not accepted").await;
                        return;
                    }
                    Some(Ok(Message::Text(t))) => t,
                };
                let valid = match ExtToBridge::from_json(text.as_str()) {
                    Ok(ExtToBridge::Ping { seq }) => {
                        if !send(socket, &BridgeToExt::Pong { seq }).await {
                            return;
                        }
                        true
                    }
                    Ok(ExtToBridge::Response { id, outcome }) => {
                        if !state.hub().complete(number, id, outcome) {
                            tracing::debug!(connection = number, id, "response to no waiting request");
                        }
                        true
                    }
                    Ok(ExtToBridge::Control { state: control }) => {
                        state.hub().set_control(number, control);
                        true
                    }
                    Ok(ExtToBridge::Hello { .. }) | Err(_) => false,
                };
                if !valid {
                    invalid += 1;
                    tracing::debug!(connection = number, invalid, "invalid frame from the extension");
                    if invalid >= MAX_INVALID_FRAMES {
                        tracing::warn!(connection = number, reason = "invalid_frames", "closing extension socket");
                        close(socket, close_code::POLICY, "too many invalid frames").await;
                        return;
                    }
                }
            }
        }
    }
}
