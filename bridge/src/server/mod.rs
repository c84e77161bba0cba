//! HTTP server: [`run`] (bind check + graceful shutdown) and [`app`] (the
//! router, testable with `tower::ServiceExt::oneshot`). Connections are
//! accepted and timed by [`conn`]: HTTP/1.1 only, request headers within
//! [`HEADER_READ_TIMEOUT`], keep-alive connections idle at most
//! [`IDLE_TIMEOUT`], at most [`AppState::connection_limit`] open, and at the
//! limit a waiting connection makes room for the new one, so half-open
//! sockets cannot lock the agent out.
//!
//! Routes:
//! - `POST|GET|DELETE /mcp` — MCP streamable HTTP (rmcp), `Authorization:
//!   Bearer <mcp token>`.
//! - `GET /status` — [`shared::protocol::BridgeStatus`], Bearer mcp token.
//! - `GET /ext` — the extension's WebSocket (Origin pinned, `hello{token}`).
//! - `GET /dashboard/` (page, `app.js`, `app.css`: no data, no token) and
//!   `GET /dashboard/data` (Bearer dashboard token; the one route besides
//!   `/ext` that accepts an `Origin`: its own page's), `dashboard/`.
//!
//! One middleware ([`guard`]) runs before every route, including unknown
//! paths: `Host` must be literally `127.0.0.1:P`, `localhost:P` or
//! `[::1]:P`; `OPTIONS` is refused with 405; a request carrying `Origin` is
//! refused with 403 except the `/ext` upgrade, where `Origin` must be one
//! of [`ServeConfig::extension_origins`]. No CORS header is ever sent.

mod act_model;
mod actions;
mod api;
mod audit;
mod conn;
pub mod dashboard;
mod downloads;
mod ext;
mod files;
mod flows;
mod guard;
mod handoff;
mod mcp;
mod navigate;
mod network;
mod record;
mod results;
mod screenshot;
mod sessions;
mod sites;

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use shared::error::{ErrorCode, WireError};
use shared::protocol::{BridgeStatus, BridgeToExt, BrowserStatus, TabId};
use shared::sessions::SessionKey;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::ServeConfig;
use crate::error::Error;

pub use conn::{
    EVICTION_WARNING_INTERVAL, HEADER_READ_TIMEOUT, IDLE_TIMEOUT, MAX_CONNECTIONS, RESERVED_FDS, raise_open_files_limit,
};
pub use ext::{ConnectionInfo, ExtHub};

/// Failed `/ext` hellos within [`AUTH_FAILURE_WINDOW`] after which new
/// `/ext` upgrades are refused (429) until the window has passed.
pub const MAX_AUTH_FAILURES: u32 = 10;
/// Window of the auth-failure rate limit.
pub const AUTH_FAILURE_WINDOW: Duration = Duration::from_secs(60);

/// Shared state of one running bridge. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

struct Inner {
    config: ServeConfig,
    port: u16,
    /// `127.0.0.1:P`, `localhost:P`, `[::1]:P`.
    allowed_hosts: [String; 3],
    hub: ExtHub,
    /// Every MCP session and the tabs it owns (`sessions.rs`).
    sessions: Mutex<sessions::Registry>,
    session_keys: sessions::Keys,
    /// Per-tab action locks, last seen URLs, gate ids.
    actions: actions::Actions,
    /// Staged uploads and this daemon's downloads.
    files: files::Files,
    downloads: downloads::Downloads,
    /// Permits for `/ext` sockets that have not said hello yet.
    unauthenticated: Arc<Semaphore>,
    ext_auth: guard::AuthLimiter,
    cancel: CancellationToken,
    tracker: TaskTracker,
    /// Open connections and their limit.
    connections: Arc<conn::Connections>,
    mcp_sessions: Arc<LocalSessionManager>,
    mcp_handlers: AtomicU64,
    started: Instant,
    /// The person's recording in progress (`record.rs`).
    recorder: record::Recorder,
    /// Each session's recent `browser_handoff`s (`handoff.rs`).
    handoff_limits: Mutex<std::collections::HashMap<SessionKey, shared::handoff::HandoffLimiter>>,
    /// Each session's network capture, in memory only (`network/`).
    network: network::Network,
    /// The person's popup choices of site access, as stored (`sites.rs`).
    popup_rules: Mutex<Vec<shared::policy::PopupRule>>,
    /// The title last seen on each tab, for the audit rows (`audit.rs`).
    page_titles: audit::PageTitles,
}

impl AppState {
    /// State for a bridge listening on `port` (used for the `Host` check).
    pub fn new(config: ServeConfig, port: u16) -> Self {
        let allowed_hosts = [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")];
        let popup_rules = sites::load(&config);
        AppState {
            inner: Arc::new(Inner {
                config,
                port,
                allowed_hosts,
                hub: ExtHub::new(),
                sessions: Mutex::new(sessions::Registry::default()),
                session_keys: sessions::Keys::default(),
                actions: actions::Actions::new(),
                files: files::Files::default(),
                downloads: downloads::Downloads::default(),
                unauthenticated: Arc::new(Semaphore::new(shared::limits::MAX_UNAUTHENTICATED_SOCKETS)),
                ext_auth: guard::AuthLimiter::new(MAX_AUTH_FAILURES, AUTH_FAILURE_WINDOW),
                cancel: CancellationToken::new(),
                tracker: TaskTracker::new(),
                connections: Arc::new(conn::Connections::for_this_process()),
                mcp_sessions: Arc::new(LocalSessionManager::default()),
                mcp_handlers: AtomicU64::new(0),
                started: Instant::now(),
                recorder: record::Recorder::default(),
                handoff_limits: Mutex::default(),
                network: network::Network::default(),
                popup_rules: Mutex::new(popup_rules),
                page_titles: audit::PageTitles::default(),
            }),
        }
    }

    pub fn config(&self) -> &ServeConfig {
        &self.inner.config
    }

    pub fn port(&self) -> u16 {
        self.inner.port
    }

    /// The authenticated extension connections and the command channel.
    pub fn hub(&self) -> &ExtHub {
        &self.inner.hub
    }

    /// Cancelled when the server shuts down; ends sockets and MCP sessions.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.inner.cancel.clone()
    }

    /// How many MCP handler instances rmcp has asked for. rmcp creates one
    /// per session or stateless request, only after our guards and the
    /// token check passed, so a refused request leaves this unchanged.
    pub fn mcp_handlers_created(&self) -> u64 {
        self.inner.mcp_handlers.load(Ordering::Relaxed)
    }

    /// Open MCP sessions (legacy session mode).
    pub async fn mcp_session_count(&self) -> usize {
        self.inner.mcp_sessions.sessions.read().await.len()
    }

    /// Tab ids session `me` owns, in order, and its current one.
    pub(crate) fn session_tabs(&self, me: SessionKey) -> (Vec<TabId>, Option<TabId>) {
        let s = self.registry().of(me);
        (s.tabs, s.current)
    }

    /// Every tab some session owns (in session order), and the current
    /// tab of the newest session that has one.
    pub fn agent_tabs(&self) -> (Vec<TabId>, Option<TabId>) {
        let registry = self.registry();
        (registry.all_tabs(), registry.newest_current())
    }

    /// Every tab some session owns.
    pub fn all_agent_tabs(&self) -> Vec<TabId> {
        self.registry().all_tabs()
    }

    /// The open sessions and their tabs, as the extension is told.
    pub fn sessions(&self) -> Vec<shared::sessions::SessionInfo> {
        self.registry().infos()
    }

    pub(crate) fn actions(&self) -> &actions::Actions {
        &self.inner.actions
    }

    /// Counts one `browser_handoff` of session `me`, or refuses it
    /// (`BUDGET_EXCEEDED`) past `shared::handoff::MAX_HANDOFFS_PER_MINUTE`.
    pub(crate) fn admit_handoff(&self, me: SessionKey) -> Result<(), WireError> {
        let now_ms = u64::try_from(self.inner.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut limits = self.inner.handoff_limits.lock().unwrap_or_else(|p| p.into_inner());
        limits.entry(me).or_default().admit(now_ms)
    }

    pub(crate) fn registry(&self) -> std::sync::MutexGuard<'_, sessions::Registry> {
        self.inner.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The one rule for which tab a tool of session `me` may touch: `tab`
    /// if `me` owns it (`shared::sessions::sees`; any other tab is
    /// `NOT_FOUND`, [`shared::sessions::no_such_tab`], as if it were not
    /// open), else `me`'s current tab, `None` when it has none. (Closing a
    /// tab of the person is not touching it: it goes through the gate,
    /// `actions::close_other_tab`.)
    pub(crate) fn agent_tab(&self, me: SessionKey, tab: Option<TabId>) -> Result<Option<TabId>, WireError> {
        let registry = self.registry();
        match tab {
            Some(t) if registry.sees(me, t) => Ok(Some(t)),
            Some(t) => Err(shared::sessions::no_such_tab(t)),
            None => Ok(registry.of(me).current),
        }
    }

    /// [`agent_tab`](Self::agent_tab), with `INVALID_REQUEST` when there is
    /// no current tab.
    pub(crate) fn require_agent_tab(&self, me: SessionKey, tab: Option<TabId>) -> Result<TabId, WireError> {
        self.agent_tab(me, tab)?
            .ok_or_else(|| WireError::new(ErrorCode::InvalidRequest, "no current tab: open one with browser_tabs new"))
    }

    /// `tab` becomes session `me`'s and its current tab (false: another
    /// session's tab, never taken).
    pub(crate) fn own_tab(&self, me: SessionKey, tab: TabId) -> bool {
        let added = self.registry().add(me, tab);
        if added {
            self.push_sessions();
        }
        added
    }

    /// `tab` was closed.
    pub(crate) fn tab_closed(&self, tab: TabId) {
        self.registry().remove(tab);
        self.actions().forget(tab);
        self.page_titles().forget(tab);
        self.push_sessions();
    }

    /// Registers session `me` on its first message (see `sessions.rs`).
    pub(crate) fn open_session(&self, me: SessionKey, client: &str, short: &str) {
        if self.registry().open(me, client, short) {
            tracing::info!(session = %short, client = %client, "agent session started");
            self.push_sessions();
            let caller = audit::Caller::session(me, short.to_string(), client.to_string());
            self.spawn_audit(audit::session_started(self.clone(), caller));
        }
    }

    /// Ends session `me`: its tabs stay open for the person, ungrouped,
    /// and no session can use them unless the person gives one.
    pub(crate) fn end_session(&self, me: SessionKey) {
        // Its network capture goes with it.
        self.inner.network.end(me);
        let (was_open, entry, released) = {
            let mut registry = self.registry();
            let entry = registry.of(me);
            (registry.is_open(me), entry, registry.end(me))
        };
        if !was_open {
            return;
        }
        for tab in &released {
            self.actions().forget(*tab);
        }
        tracing::info!(session = %entry.short, released = released.len(), "agent session ended");
        self.push_sessions();
        let caller = audit::Caller::session(me, entry.short, entry.client);
        self.spawn_audit(audit::session_ended(self.clone(), caller, released.len()));
    }

    /// The person gives their tab `tab` to session `to` (the popup's "Let
    /// <client> use this tab").
    pub(crate) fn give_tab(&self, tab: TabId, to: SessionKey) {
        let given = self.registry().give(tab, to);
        match given {
            Ok(()) => tracing::info!(tab, session = to.0, "the person gave a tab to an agent"),
            Err(e) => tracing::info!(tab, session = to.0, reason = e.message(), "tab not given"),
        }
        self.push_sessions();
    }

    /// Tells the extension every session and its tabs (`BridgeToExt::Sessions`).
    pub(crate) fn push_sessions(&self) {
        let sessions = self.registry().infos();
        self.hub().notify(BridgeToExt::Sessions { sessions });
    }

    /// A URL was seen on an agent tab (a snapshot, a resolved element, a
    /// tab listing, an action's report…): remembered as the tab's last URL
    /// (the next action's first site check), then checked against the site
    /// rules ([`Self::check_site`]).
    pub(crate) fn url_seen(&self, tab: TabId, url: &str) -> Result<(), WireError> {
        self.actions().remember_url(tab, url);
        self.check_site(url)
    }

    /// Writes an audit row from a task of its own (a session's start and
    /// end happen in synchronous code; the end maybe in a `Drop` outside
    /// the runtime, where the row is skipped and logged).
    fn spawn_audit(&self, write: impl Future<Output = ()> + Send + 'static) {
        if tokio::runtime::Handle::try_current().is_ok() {
            self.inner.tracker.spawn(write);
        } else {
            tracing::warn!("audit row of a session skipped: no runtime");
        }
    }

    /// A page was seen on an agent tab with its title (a snapshot,
    /// extracted text, a navigation, a tab selection): [`Self::url_seen`],
    /// and the title is kept for that tab's audit rows at that URL
    /// (`audit.rs`) — unless the site is denied: nothing of a page the
    /// person said never to is kept.
    pub(crate) fn page_seen(&self, tab: TabId, url: &str, title: &str) -> Result<(), WireError> {
        let seen = self.url_seen(tab, url);
        match &seen {
            Ok(()) => self.page_titles().seen(tab, url, title),
            Err(_) => self.page_titles().forget(tab),
        }
        seen
    }

    /// The title last seen on each tab (`audit.rs`).
    pub(crate) fn page_titles(&self) -> &audit::PageTitles {
        &self.inner.page_titles
    }

    /// The one site check: `PERMISSION_DENIED` naming the rule when the
    /// site's access (`config.toml` and the popup, `sites.rs`) is `deny`
    /// (compared in canonical form, `shared::policy::SiteRules`).
    pub(crate) fn check_site(&self, url: &str) -> Result<(), WireError> {
        self.check_site_use(url, shared::policy::SiteUse::Look)
    }

    /// Answers the extension's request for the secret of the `Act` with
    /// gate id `request`, from its own task (reading the store is blocking
    /// work); see `actions::release_secret`.
    pub(crate) fn spawn_secret_release(&self, connection: u64, request: u64, origin: String) {
        self.inner.tracker.spawn(actions::release_secret(self.clone(), connection, request, origin));
    }

    /// Answers the worker's `UploadRequest` from its own task
    /// (`files::send_upload`).
    pub(crate) fn spawn_send_upload(&self, connection: u64, upload: u64) {
        let state = self.clone();
        self.inner.tracker.spawn(async move { files::send_upload(&state, connection, upload).await });
    }

    /// Handles a download event from the worker in its own task
    /// (`downloads::on_download`).
    pub(crate) fn spawn_download_event(&self, connection: u64, event: shared::files::DownloadEvent) {
        let state = self.clone();
        self.inner.tracker.spawn(async move { downloads::on_download(&state, connection, event).await });
    }

    /// Writes the audit row of an ended hand-off from its own task.
    pub(crate) fn spawn_handoff_audit(&self, record: shared::handoff::Record) {
        let state = self.clone();
        self.inner.tracker.spawn(async move { handoff::audit(&state, &record).await });
    }

    /// What `GET /status` answers.
    pub fn status(&self) -> BridgeStatus {
        let agent_tabs = self.all_agent_tabs();
        BridgeStatus {
            version: shared::VERSION.to_string(),
            pid: std::process::id(),
            port: self.inner.port,
            browsers: self
                .hub()
                .connections()
                .into_iter()
                .map(|c| BrowserStatus {
                    connection: c.connection,
                    extension_version: c.extension_version,
                    connected_secs: c.connected_for.as_secs(),
                    agent_tabs: agent_tabs.clone(),
                })
                .collect(),
            refused: self.hub().refused(),
        }
    }

    /// Connections open now and counted against
    /// [`connection_limit`](Self::connection_limit): accepted, not closed and
    /// not being closed; upgraded ones included.
    pub fn open_connections(&self) -> usize {
        self.inner.connections.counted()
    }

    /// Most connections open at once: [`MAX_CONNECTIONS`], lower when the
    /// soft open-file limit when this state was created left less than that
    /// above [`RESERVED_FDS`].
    pub fn connection_limit(&self) -> usize {
        self.inner.connections.limit()
    }

    /// Seconds since this state was created.
    pub fn uptime(&self) -> Duration {
        self.inner.started.elapsed()
    }
}

/// The router with every route and the guards. Serve it with
/// [`serve`]/[`run`], or call it directly with `tower::ServiceExt::oneshot`
/// (requests then need a `Host` header naming the state's port).
pub fn app(state: AppState) -> Router {
    let mcp = mcp::service(&state);
    let authed = Router::new()
        .route_service(
            "/mcp",
            tower::ServiceBuilder::new().layer(axum::middleware::from_fn(guard::mcp_bad_body)).service(mcp),
        )
        .route("/status", get(status))
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), guard::require_mcp_token));
    Router::new()
        .merge(authed)
        .route("/ext", get(ext::upgrade))
        .merge(dashboard::routes())
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard::guard))
        .with_state(state)
}

async fn status(State(state): State<AppState>) -> axum::Json<BridgeStatus> {
    axum::Json(state.status())
}

async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "not found\n").into_response()
}

/// Serves the bridge on `listener` until `shutdown` completes. Refuses to
/// run on anything but a loopback address.
pub async fn run(
    config: ServeConfig,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    let addr = listener.local_addr().map_err(|e| Error::Server(format!("cannot read the listening address: {e}")))?;
    // `serve` refuses non-loopback addresses.
    serve(AppState::new(config, addr.port()), listener, shutdown).await
}

/// Like [`run`], with a state built by the caller (tests keep a clone to
/// look at the hub and the MCP sessions).
pub async fn serve(
    state: AppState,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    let addr = listener.local_addr().map_err(|e| Error::Server(format!("cannot read the listening address: {e}")))?;
    if !addr.ip().is_loopback() {
        return Err(Error::NotLoopback(addr));
    }
    if addr.port() != state.port() {
        return Err(Error::Server(format!(
            "the state expects port {} but the listener is on {}",
            state.port(),
            addr.port()
        )));
    }
    let cancel = state.shutdown_token();
    let tracker = state.inner.tracker.clone();
    tracing::debug!(%addr, limit = state.connection_limit(), "server listening");
    let signal = {
        let cancel = cancel.clone();
        async move {
            tokio::select! {
                _ = shutdown => {}
                _ = cancel.cancelled() => {}
            }
        }
    };
    let connections = state.inner.connections.clone();
    // Returns once `signal` completed, having cancelled `cancel` (which ends
    // WebSocket tasks and rmcp sessions/SSE streams, so connections do not
    // wait on them forever) and closed the connections waiting for a request.
    conn::accept_loop(listener, app(state), connections, cancel, tracker.clone(), signal).await;
    tracker.close();
    tracker.wait().await;
    tracing::debug!(%addr, "server stopped");
    Ok(())
}

/// The extension answered a command with a result of the wrong kind: a bug
/// on one side, logged; the agent gets `INTERNAL`.
pub(crate) fn unexpected_answer() -> WireError {
    tracing::error!("unexpected answer kind from the extension");
    WireError::internal("unexpected answer from the browser extension")
}

/// A tool's arguments as their `shared::tools` type; anything else (a
/// missing or unknown field, a wrong type) is `INVALID_REQUEST` with
/// serde's reason, for every tool alike.
pub(crate) fn parse_args<T: serde::de::DeserializeOwned>(args: rmcp::model::JsonObject) -> Result<T, WireError> {
    serde_json::from_value(serde_json::Value::Object(args))
        .map_err(|e| WireError::new(ErrorCode::InvalidRequest, format!("invalid arguments: {e}")))
}
