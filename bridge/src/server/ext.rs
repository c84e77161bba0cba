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
//!
//! # One browser at a time
//!
//! The hub holds at most one authenticated connection, and every command
//! goes to it. A socket whose hello is valid while another connection is
//! live is refused: closed with [`ANOTHER_BROWSER_CLOSE_CODE`] before any
//! other frame, logged (`warn`, the claimed version, never the token),
//! counted and remembered ([`ExtHub::refused`], shown by `GET /status`),
//! and the live connection is told with
//! [`BridgeToExt::SecondBrowserRefused`] so its popup shows it. A new
//! connection is accepted only once the live one's socket has closed.
//!
//! # Secret grants
//!
//! An `Act` that types a stored secret is sent with a grant
//! ([`ExtHub::call_granting`]): the gate request id, the connection it went
//! to, the secret's name and binding, the origin decided for. The grant
//! lives exactly as long as the bridge waits for that `Act`'s answer (and
//! no longer than its connection), and [`ExtHub::claim_secret`] hands it
//! out once, to that connection only. The value itself is read by
//! `actions::release_secret`.

use std::collections::{HashMap, VecDeque};
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
use shared::protocol::{
    ANOTHER_BROWSER_CLOSE_CODE, ANOTHER_BROWSER_CLOSE_REASON, BridgeToExt, Command, CommandResult, ExtToBridge,
    MAX_REMEMBERED_REFUSALS, Outcome, RefusedBrowser, RefusedBrowsers, TabId,
};
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
    /// Tabs waiting for the person, as the extension last reported them.
    pub waiting: Vec<shared::handoff::Waiting>,
}

struct Connection {
    number: u64,
    version: String,
    since: Instant,
    tx: mpsc::Sender<BridgeToExt>,
    control: ControlState,
    waiting: Vec<shared::handoff::Waiting>,
}

struct Pending {
    connection: u64,
    tx: oneshot::Sender<Outcome>,
}

/// What an `Act` that types a stored secret may release, once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SecretGrant {
    /// The `Act`'s `gate.request`.
    pub(crate) request: u64,
    pub(crate) name: String,
    /// The secret's binding when the action was decided (empty: unbound).
    pub(crate) sites: Vec<String>,
    /// The origin the action was decided for (`gate.origin`).
    pub(crate) origin: String,
}

struct Grant {
    connection: u64,
    grant: SecretGrant,
    claimed: bool,
}

/// Why [`ExtHub::claim_secret`] gave nothing (for the log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClaimRefused {
    /// No `Act` that types a secret waits under this id.
    NoSuchAct,
    /// The `Act` went to another connection.
    OtherConnection,
    /// The value was already released for this `Act`.
    AlreadyReleased,
}

impl ClaimRefused {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ClaimRefused::NoSuchAct => "no_such_act",
            ClaimRefused::OtherConnection => "other_connection",
            ClaimRefused::AlreadyReleased => "already_released",
        }
    }
}

/// A hello the hub refused because a connection is live.
struct Refusal {
    refused: RefusedBrowser,
    total: u64,
    live: u64,
    /// The live connection's queue, to tell it.
    notify: mpsc::Sender<BridgeToExt>,
}

#[derive(Default)]
struct HubInner {
    /// The one authenticated connection; it gets every command.
    live: Option<Connection>,
    pending: HashMap<u64, Pending>,
    /// Secret grants by gate request id.
    grants: HashMap<u64, Grant>,
    /// Where each `Act` waiting in the bridge is, by gate request id
    /// ([`ActStage`]).
    acts: HashMap<u64, ActStage>,
    refused_total: u64,
    refused_recent: VecDeque<RefusedBrowser>,
}

/// How far an `Act` got in the extension, as its frames said: what the
/// agent is told when the connection is lost before the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ActStage {
    /// Sent; the extension said nothing more (it may have run).
    Sent,
    /// The person was being asked (`ExtToBridge::Asking`) and had not
    /// approved: nothing ran.
    Asking,
    /// Approved and told to go (`BridgeToExt::Proceed { go: true }`): it
    /// may have run.
    Proceeding,
}

/// The authenticated extension connection (one at a time), the
/// request/response plumbing, secret grants and refused second browsers.
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

    /// The authenticated connection, if any (a list of at most one).
    pub fn connections(&self) -> Vec<ConnectionInfo> {
        self.lock()
            .live
            .iter()
            .map(|c| ConnectionInfo {
                connection: c.number,
                extension_version: c.version.clone(),
                connected_for: c.since.elapsed(),
                control: c.control,
                waiting: c.waiting.clone(),
            })
            .collect()
    }

    /// Tabs waiting for the person on the live connection.
    pub fn waiting(&self) -> Vec<shared::handoff::Waiting> {
        self.lock().live.as_ref().map(|c| c.waiting.clone()).unwrap_or_default()
    }

    /// Records the hand-offs a connection reported.
    pub fn set_waiting(&self, connection: u64, waiting: Vec<shared::handoff::Waiting>) {
        if let Some(c) = self.lock().live.as_mut().filter(|c| c.number == connection) {
            c.waiting = waiting;
        }
    }

    /// Second browsers refused since the daemon started.
    pub fn refused(&self) -> RefusedBrowsers {
        let inner = self.lock();
        RefusedBrowsers { total: inner.refused_total, recent: inner.refused_recent.iter().cloned().collect() }
    }

    /// Records the control state a connection reported.
    pub fn set_control(&self, connection: u64, control: ControlState) {
        if let Some(c) = self.lock().live.as_mut().filter(|c| c.number == connection) {
            c.control = control;
        }
    }

    pub fn is_connected(&self) -> bool {
        self.lock().live.is_some()
    }

    /// Requests waiting for their response.
    pub fn pending_count(&self) -> usize {
        self.lock().pending.len()
    }

    /// Sends `command` to the connection and waits for its response.
    /// `EXTENSION_DISCONNECTED` when nobody is connected or the socket
    /// drops before answering, `TIMEOUT` after `timeout`.
    pub async fn call(&self, command: Command, timeout: Duration) -> Result<CommandResult, WireError> {
        self.call_with(command, timeout, None).await
    }

    /// [`call`](Self::call) for an `Act` that types a stored secret: `grant`
    /// may be claimed ([`claim_secret`](Self::claim_secret)) once, by the
    /// connection the `Act` goes to, while this call waits for its answer.
    pub(crate) async fn call_granting(
        &self,
        command: Command,
        timeout: Duration,
        grant: SecretGrant,
    ) -> Result<CommandResult, WireError> {
        self.call_with(command, timeout, Some(grant)).await
    }

    async fn call_with(
        &self,
        command: Command,
        timeout: Duration,
        grant: Option<SecretGrant>,
    ) -> Result<CommandResult, WireError> {
        let id = self.next_request.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let granted = grant.as_ref().map(|g| g.request);
        let sender = {
            let mut inner = self.lock();
            let Some(conn) = inner.live.as_ref() else {
                return Err(disconnected());
            };
            // A tab handed to the person is theirs: nothing but the tab
            // list goes to the extension for it (`shared::handoff::check_handed`).
            let handed: Vec<TabId> = conn.waiting.iter().map(|w| w.tab).collect();
            if let Err(e) = shared::handoff::check_handed(&command, &handed) {
                tracing::info!(code = e.code.as_str(), "command refused: its tab is handed to the person");
                return Err(e);
            }
            let (number, sender) = (conn.number, conn.tx.clone());
            inner.pending.insert(id, Pending { connection: number, tx });
            if let Some(grant) = grant {
                inner.grants.insert(grant.request, Grant { connection: number, grant, claimed: false });
            }
            sender
        };
        // Removes the pending entry and the grant however this future ends
        // (answer, timeout, or the caller dropping it).
        let _cleanup = PendingGuard { hub: self, id, granted };
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
            // Who denied (`denied_by`) is kept for the audit row.
            Ok(Ok(Outcome::Err(e))) => Err(WireError {
                denied_by: e.denied_by,
                challenge: e.challenge,
                ..WireError::new(e.code, shared::redact::redact_text(&e.message))
            }),
        }
    }

    /// The grant of the secret-typing `Act` `request`, handed out once and
    /// only to the connection that `Act` went to.
    pub(crate) fn claim_secret(&self, connection: u64, request: u64) -> Result<SecretGrant, ClaimRefused> {
        let mut inner = self.lock();
        let Some(g) = inner.grants.get_mut(&request) else { return Err(ClaimRefused::NoSuchAct) };
        if g.connection != connection {
            return Err(ClaimRefused::OtherConnection);
        }
        if g.claimed {
            return Err(ClaimRefused::AlreadyReleased);
        }
        g.claimed = true;
        Ok(g.grant.clone())
    }

    /// Queues `frame` for the live connection without waiting (a full
    /// queue or no connection drops it); false when dropped.
    pub(crate) fn notify(&self, frame: BridgeToExt) -> bool {
        let tx = self.lock().live.as_ref().map(|c| c.tx.clone());
        tx.is_some_and(|tx| tx.try_send(frame).is_ok())
    }

    /// Queues `frame` for `connection`; false when it is no longer the
    /// live one (the frame is dropped).
    pub(crate) async fn send_to(&self, connection: u64, frame: BridgeToExt) -> bool {
        let tx = self.lock().live.as_ref().filter(|c| c.number == connection).map(|c| c.tx.clone());
        match tx {
            Some(tx) => tx.send(frame).await.is_ok(),
            None => false,
        }
    }

    /// An `Act` with gate id `request` is about to be sent.
    pub(crate) fn act_sent(&self, request: u64) {
        self.lock().acts.insert(request, ActStage::Sent);
    }

    /// The extension asks the person about `request`.
    fn act_asking(&self, request: u64) {
        if let Some(stage @ ActStage::Sent) = self.lock().acts.get_mut(&request) {
            *stage = ActStage::Asking;
        }
    }

    /// The person approved `request`: may it run? Only while its call
    /// still waits here, once.
    fn act_proceeding(&self, request: u64) -> bool {
        match self.lock().acts.get_mut(&request) {
            Some(stage) if *stage != ActStage::Proceeding => {
                *stage = ActStage::Proceeding;
                true
            }
            _ => false,
        }
    }

    /// The call of `request` ended: where it had got (`None` if unknown).
    /// A late `Proceeding` for it gets `go: false`.
    pub(crate) fn act_finished(&self, request: u64) -> Option<ActStage> {
        self.lock().acts.remove(&request)
    }

    /// Makes `version`'s socket the connection, unless one is live: then
    /// the attempt is counted, remembered and refused.
    fn register(&self, version: String) -> Result<(u64, mpsc::Receiver<BridgeToExt>), Refusal> {
        let mut inner = self.lock();
        if let Some(live) = inner.live.as_ref() {
            let (number, notify) = (live.number, live.tx.clone());
            let refused = RefusedBrowser { at_ms: crate::time::unix_now_millis(), extension_version: version };
            inner.refused_total += 1;
            if inner.refused_recent.len() == MAX_REMEMBERED_REFUSALS {
                inner.refused_recent.pop_front();
            }
            inner.refused_recent.push_back(refused.clone());
            return Err(Refusal { refused, total: inner.refused_total, live: number, notify });
        }
        let number = self.next_connection.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel(OUTGOING_QUEUE);
        inner.live = Some(Connection {
            number,
            version,
            since: Instant::now(),
            tx,
            control: ControlState::default(),
            waiting: Vec::new(),
        });
        Ok((number, rx))
    }

    /// Forgets a connection; its pending calls fail with
    /// `EXTENSION_DISCONNECTED` (their senders are dropped) and its grants
    /// are gone.
    fn unregister(&self, number: u64) {
        let mut inner = self.lock();
        if inner.live.as_ref().is_some_and(|c| c.number == number) {
            inner.live = None;
        }
        inner.pending.retain(|_, p| p.connection != number);
        inner.grants.retain(|_, g| g.connection != number);
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
    granted: Option<u64>,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        let mut inner = self.hub.lock();
        inner.pending.remove(&self.id);
        if let Some(request) = self.granted {
            inner.grants.remove(&request);
        }
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
    // Before the hello (and for a refused second browser) nothing else
    // is sent: the reason is the whole answer.
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
    let (number, mut outgoing) = match state.hub().register(version.clone()) {
        Ok(registered) => registered,
        Err(r) => {
            tracing::warn!(
                reason = "another_browser_connected",
                live_connection = r.live,
                extension_version = %version,
                refused_total = r.total,
                "second browser refused: an extension connection is already live"
            );
            // Tell the live connection (its popup shows it); a full queue
            // drops the notice rather than wait on the live socket.
            let _ = r.notify.try_send(BridgeToExt::SecondBrowserRefused { refused: r.refused, total: r.total });
            close(&mut socket, ANOTHER_BROWSER_CLOSE_CODE, ANOTHER_BROWSER_CLOSE_REASON).await;
            return;
        }
    };
    tracing::info!(connection = number, extension_version = %version, "extension connected");
    if send(
        &mut socket,
        &BridgeToExt::Welcome {
            version: shared::VERSION.to_string(),
            human_timeout_secs: state.config().human_timeout_secs,
        },
    )
    .await
    {
        if !state.registry().infos().is_empty() {
            state.push_sessions();
        }
        let rules = state.site_rules();
        if rules.config.iter().any(|r| r.access.is_some()) || !rules.popup.is_empty() {
            state.push_site_rules();
        }
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
                    Ok(ExtToBridge::Waiting { tabs }) => {
                        state.hub().set_waiting(number, tabs);
                        true
                    }
                    Ok(ExtToBridge::HandoffEnded { record }) => {
                        state.spawn_handoff_audit(record);
                        true
                    }
                    Ok(ExtToBridge::RecordStart { name, keep_text }) => state.record_start(&name, keep_text),
                    Ok(ExtToBridge::Recorded { tab, step }) => state.record_step(tab, step),
                    Ok(ExtToBridge::RecordStop {}) => {
                        state.record_stop();
                        true
                    }
                    Ok(ExtToBridge::Asking { request }) => {
                        state.hub().act_asking(request);
                        true
                    }
                    Ok(ExtToBridge::Proceeding { request }) => {
                        let go = state.hub().act_proceeding(request);
                        tracing::debug!(connection = number, request, go, "approved act may proceed");
                        if !send(socket, &BridgeToExt::Proceed { request, go }).await {
                            return;
                        }
                        true
                    }
                    Ok(ExtToBridge::SecretRequest { request, origin }) => {
                        // Answered from its own task, through this
                        // connection's queue.
                        state.spawn_secret_release(number, request, origin);
                        true
                    }
                    Ok(ExtToBridge::UploadRequest { upload }) => {
                        state.spawn_send_upload(number, upload);
                        true
                    }
                    Ok(ExtToBridge::Download { event }) => {
                        state.spawn_download_event(number, event);
                        true
                    }
                    Ok(ExtToBridge::Network { request, withheld }) => {
                        super::network::captured(state, *request, withheld);
                        true
                    }
                    Ok(ExtToBridge::Withhold { tab, since_ms }) => {
                        super::network::withhold(state, tab, since_ms);
                        true
                    }
                    Ok(ExtToBridge::NetworkFrames { tab, url, messages }) => {
                        super::network::frames(state, tab, url, messages);
                        true
                    }
                    Ok(ExtToBridge::GiveTab { tab, session }) => {
                        state.give_tab(tab, session);
                        true
                    }
                    Ok(ExtToBridge::SetSiteAccess { origin, access }) => {
                        state.set_site_access(origin, access);
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use shared::protocol::CommandResult;

    use super::*;

    fn grant(request: u64) -> SecretGrant {
        SecretGrant { request, name: "API_TOKEN".into(), sites: Vec::new(), origin: "https://a.example:443".into() }
    }

    fn act_like() -> Command {
        Command::TabsList { tabs: Vec::new() }
    }

    #[test]
    fn an_act_goes_ahead_once_and_only_while_its_call_waits() {
        let hub = ExtHub::new();
        assert!(!hub.act_proceeding(7), "no call waits for 7: no go");
        hub.act_sent(7);
        hub.act_asking(7);
        assert_eq!(hub.lock().acts.get(&7), Some(&ActStage::Asking));
        assert!(hub.act_proceeding(7));
        assert!(!hub.act_proceeding(7), "a second go for one approval");
        hub.act_asking(7);
        assert_eq!(hub.act_finished(7), Some(ActStage::Proceeding), "an Asking after the go does not undo it");
        assert!(!hub.act_proceeding(7), "the call ended: a late approval does not run");
        hub.act_sent(8);
        assert_eq!(hub.act_finished(8), Some(ActStage::Sent));
    }

    #[tokio::test]
    async fn a_grant_is_claimed_once_by_its_connection_while_its_call_waits() {
        let hub = Arc::new(ExtHub::new());
        let Ok((number, mut rx)) = hub.register("1".into()) else { panic!("the first connection is refused") };
        assert_eq!(hub.claim_secret(number, 42), Err(ClaimRefused::NoSuchAct), "no grant before the call");
        let call = {
            let hub = hub.clone();
            tokio::spawn(async move { hub.call_granting(act_like(), Duration::from_secs(5), grant(42)).await })
        };
        let Some(BridgeToExt::Request { id, .. }) = rx.recv().await else { panic!("no request") };
        assert_eq!(hub.claim_secret(number + 1, 42), Err(ClaimRefused::OtherConnection));
        assert_eq!(hub.claim_secret(number, 41), Err(ClaimRefused::NoSuchAct));
        assert_eq!(hub.claim_secret(number, 42), Ok(grant(42)));
        assert_eq!(hub.claim_secret(number, 42), Err(ClaimRefused::AlreadyReleased));
        assert!(hub.complete(number, id, Outcome::Ok(CommandResult::Closed { tab: 1 })));
        call.await.unwrap().unwrap();
        assert_eq!(hub.claim_secret(number, 42), Err(ClaimRefused::NoSuchAct), "the grant ends with its call");

        // A grant not claimed yet dies with its connection.
        let call = {
            let hub = hub.clone();
            tokio::spawn(async move { hub.call_granting(act_like(), Duration::from_secs(5), grant(43)).await })
        };
        assert!(rx.recv().await.is_some());
        hub.unregister(number);
        assert_eq!(hub.claim_secret(number, 43), Err(ClaimRefused::NoSuchAct));
        let e = call.await.unwrap().unwrap_err();
        assert_eq!(e.code, ErrorCode::ExtensionDisconnected);
    }

    #[test]
    fn a_second_connection_is_refused_until_the_first_is_gone() {
        let hub = ExtHub::new();
        let Ok((first, _rx)) = hub.register("1.0".into()) else { panic!("the first connection is refused") };
        let Err(r) = hub.register("6.6.6".into()) else { panic!("a second connection was accepted") };
        assert_eq!((r.live, r.total, r.refused.extension_version.as_str()), (first, 1, "6.6.6"));
        assert!(hub.register("6.6.7".into()).is_err());
        assert_eq!(hub.connections().len(), 1);
        assert_eq!(hub.connections()[0].connection, first);
        let refused = hub.refused();
        assert_eq!(refused.total, 2);
        assert_eq!(refused.recent.iter().map(|r| r.extension_version.as_str()).collect::<Vec<_>>(), ["6.6.6", "6.6.7"]);
        for _ in 0..MAX_REMEMBERED_REFUSALS + 3 {
            assert!(hub.register("x".into()).is_err());
        }
        assert_eq!(hub.refused().recent.len(), MAX_REMEMBERED_REFUSALS);
        assert_eq!(hub.refused().total, 2 + MAX_REMEMBERED_REFUSALS as u64 + 3);

        hub.unregister(first);
        let Ok((second, _rx)) = hub.register("1.0".into()) else { panic!("refused after the first left") };
        assert!(second > first);
    }
}
