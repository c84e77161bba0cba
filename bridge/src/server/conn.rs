//! Connections of the loopback server: the accept loop, the timeouts and the
//! connection cap. Any local user can connect to the bridge's port, so
//! neither a connection that never sends a request nor a flood of them may
//! hold the daemon's file descriptors and lock the agent out.
//!
//! The server speaks HTTP/1.1 (hyper's `http1`, with upgrades for the `/ext`
//! WebSocket; no HTTP/2). Each accepted socket is a connection in one phase:
//!
//! - **new**: accepted, the headers of its first request not complete yet;
//! - **idle**: the previous response is finished, the headers of the next
//!   request are not complete yet;
//! - **busy**: a request is being answered, from its complete headers until
//!   its response body has ended or been dropped (an MCP SSE stream is busy
//!   for as long as it is open);
//! - **upgraded**: answered `101 Switching Protocols` and handed to the
//!   WebSocket handler, which closes it (hello timeout, shutdown, …).
//!
//! Rules:
//! 1. A new connection is closed [`HEADER_READ_TIMEOUT`] after it was
//!    accepted unless its request headers are complete by then, whether it
//!    sent nothing, part of them, or trickles a byte at a time: a deadline,
//!    not an inactivity timer.
//! 2. An idle connection is closed [`IDLE_TIMEOUT`] after its last response
//!    ended unless the next request's headers are complete by then.
//! 3. At most [`AppState::connection_limit`](super::AppState::connection_limit)
//!    connections are open ([`MAX_CONNECTIONS`], lower when the open-file
//!    limit leaves less than that above [`RESERVED_FDS`]). A socket accepted
//!    at the limit makes room: the oldest new connection is closed, else the
//!    connection idle the longest. Busy and upgraded connections are never
//!    closed for room; only when every open connection is busy or upgraded is
//!    the accepted socket closed instead. So a client that connects and sends
//!    its request gets in however many half-open sockets others hold; without
//!    a token a connection stays busy only while a refusal is written, or is
//!    an `/ext` socket before its hello (at most
//!    `MAX_UNAUTHENTICATED_SOCKETS`, each for `HELLO_TIMEOUT_SECS`). What
//!    this does not prevent: a flood that opens more new sockets than the
//!    limit in the instant between a client's connect and its headers can
//!    push that client out (it sees the connection closed and retries), and
//!    a client's idle keep-alive connection is closed for room once no new
//!    connection is left to close.
//!    Evictions are logged at debug level with the counts, and at warn level
//!    at most once per [`EVICTION_WARNING_INTERVAL`]; never with request
//!    contents.
//! 4. Shutdown stops accepting, closes new and idle connections at once, and
//!    lets busy ones finish their response (the shutdown token already ends
//!    WebSocket tasks and SSE streams).
//!
//! hyper's own `header_read_timeout` is set to [`HEADER_READ_TIMEOUT`] as a
//! second layer. hyper 1.x starts that timer each time it begins reading a
//! request head (on the connection's first poll, and again after each
//! response), so it covers the first request and idle keep-alive waits
//! alike (the unit test `hyper_header_timer_covers_first_and_keep_alive_waits`
//! checks hyper's timer alone). The deadlines above do not depend on that:
//! they are kept here, from the phase.
//!
//! Every accepted socket is counted from `accept` until its descriptor is
//! closed, wherever it went (an upgraded socket lives in the WebSocket task),
//! and gets `TCP_NODELAY`.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{Request, StatusCode};
use http_body::{Body as HttpBody, Frame, SizeHint};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

use crate::error::Error;

// These limits concern only the bridge's HTTP server, so they live here
// rather than in `shared::limits`, which holds what the extension shares.

/// Time a connection has, from `accept`, to send the complete headers of its
/// first request (5 s). A deadline: trickling bytes does not extend it. The
/// bridge's clients are local programs whose headers arrive in
/// microseconds; this only ends sockets that send nothing or too little.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// Time a keep-alive connection may wait, after its last response ended,
/// until the next request's headers are complete (5 s). Equal to
/// [`HEADER_READ_TIMEOUT`] because hyper's header timer, which also runs
/// between requests, would close it then anyway. Clients reconnect on
/// loopback at no real cost; an MCP SSE stream is a response in progress,
/// never idle.
pub const IDLE_TIMEOUT: Duration = HEADER_READ_TIMEOUT;

/// Most connections open at once, upgraded ones included (512). An agent
/// needs a few (MCP posts, one SSE stream per session) and each browser
/// profile one `/ext` socket; the rest is room for bursts. See the module
/// docs for what happens at the limit.
pub const MAX_CONNECTIONS: usize = 512;

/// File descriptors kept out of the connection budget for the daemon's own
/// files (database, log file, lock, runtime): the connection limit is at
/// most the soft `RLIMIT_NOFILE` minus this.
pub const RESERVED_FDS: u64 = 64;

/// The connection limit never goes below this, whatever the open-file limit.
const MIN_CONNECTIONS: usize = 16;

/// At most one warning about evictions per this interval (debug logs every
/// one).
pub const EVICTION_WARNING_INTERVAL: Duration = Duration::from_secs(60);

/// Pause after `accept` fails for lack of descriptors or memory (a waiting
/// connection is closed first, so the retry can succeed).
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(100);

/// Where a connection is in its life; see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    New { since: Instant },
    Idle { since: Instant },
    Busy { in_flight: usize },
    Upgraded,
}

impl Phase {
    /// When the connection is closed if no request headers complete first.
    fn deadline(self) -> Option<(Instant, &'static str)> {
        match self {
            Phase::New { since } => Some((since + HEADER_READ_TIMEOUT, "header_timeout")),
            Phase::Idle { since } => Some((since + IDLE_TIMEOUT, "idle_timeout")),
            Phase::Busy { .. } | Phase::Upgraded => None,
        }
    }
}

/// One accepted socket.
struct Conn {
    phase: watch::Sender<Phase>,
    /// Cancelled to close the connection (eviction); a cancelled connection
    /// no longer counts against the limit.
    close: CancellationToken,
}

impl Conn {
    fn new(accepted: Instant) -> Self {
        Conn { phase: watch::Sender::new(Phase::New { since: accepted }), close: CancellationToken::new() }
    }

    fn closing(&self) -> bool {
        self.close.is_cancelled()
    }
}

/// The open connections of one server and its limit.
pub(crate) struct Connections {
    limit: usize,
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    next_id: u64,
    /// By accept order.
    open: BTreeMap<u64, Arc<Conn>>,
    evicted_total: u64,
    evicted_unreported: u64,
    last_warning: Option<Instant>,
}

/// Which connection was closed to make room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Victim {
    New,
    Idle,
}

impl Victim {
    fn as_str(self) -> &'static str {
        match self {
            Victim::New => "new",
            Victim::Idle => "idle",
        }
    }
}

impl Table {
    fn counted(&self) -> usize {
        self.open.values().filter(|c| !c.closing()).count()
    }

    /// The oldest new connection, else the one idle the longest.
    fn victim(&self) -> Option<(Arc<Conn>, Victim)> {
        let mut idle: Option<(Instant, &Arc<Conn>)> = None;
        for conn in self.open.values().filter(|c| !c.closing()) {
            match *conn.phase.borrow() {
                Phase::New { .. } => return Some((conn.clone(), Victim::New)),
                Phase::Idle { since } if idle.is_none_or(|(oldest, _)| since < oldest) => idle = Some((since, conn)),
                _ => {}
            }
        }
        idle.map(|(_, conn)| (conn.clone(), Victim::Idle))
    }
}

/// Keeps a connection counted until its socket is closed.
struct Slot {
    conns: Arc<Connections>,
    id: u64,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.conns.table().open.remove(&self.id);
    }
}

impl Connections {
    pub(crate) fn new(limit: usize) -> Self {
        Connections { limit, table: Mutex::new(Table::default()) }
    }

    /// [`MAX_CONNECTIONS`], lowered to fit the process's open-file limit.
    pub(crate) fn for_this_process() -> Self {
        Self::new(limit_for(open_files_limit()))
    }

    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Connections counted against the limit.
    pub(crate) fn counted(&self) -> usize {
        self.table().counted()
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a socket accepted at `now`, closing a waiting connection
    /// first when at the limit. `None`: every open connection is busy or
    /// upgraded, the socket is to be closed.
    fn admit(self: &Arc<Self>, now: Instant) -> Option<(Arc<Conn>, Slot)> {
        let mut table = self.table();
        let counted = table.counted();
        if counted >= self.limit {
            let Some((victim, kind)) = table.victim() else {
                tracing::warn!(
                    open = counted,
                    limit = self.limit,
                    "connection refused: every open connection is busy or upgraded"
                );
                return None;
            };
            victim.close.cancel();
            self.record_eviction(&mut table, kind, counted, "connection limit");
        }
        let id = table.next_id;
        table.next_id += 1;
        let conn = Arc::new(Conn::new(now));
        table.open.insert(id, conn.clone());
        Some((conn, Slot { conns: self.clone(), id }))
    }

    /// Closes one waiting connection (accept failed for lack of resources).
    fn evict_one(&self) -> bool {
        let mut table = self.table();
        let Some((victim, kind)) = table.victim() else { return false };
        victim.close.cancel();
        let counted = table.counted();
        self.record_eviction(&mut table, kind, counted, "accept failed");
        true
    }

    fn record_eviction(&self, table: &mut Table, kind: Victim, open: usize, cause: &'static str) {
        table.evicted_total += 1;
        table.evicted_unreported += 1;
        tracing::debug!(
            closed = kind.as_str(),
            open,
            limit = self.limit,
            evicted_total = table.evicted_total,
            cause,
            "closed the oldest connection waiting for a request"
        );
        if table.last_warning.is_none_or(|at| at.elapsed() >= EVICTION_WARNING_INTERVAL) {
            tracing::warn!(
                evicted = table.evicted_unreported,
                evicted_total = table.evicted_total,
                open,
                limit = self.limit,
                cause,
                "connections waiting for a request were closed to make room"
            );
            table.evicted_unreported = 0;
            table.last_warning = Some(Instant::now());
        }
    }

    /// Closes every new and idle connection (shutdown).
    fn close_waiting(&self) {
        for conn in self.table().open.values() {
            if matches!(*conn.phase.borrow(), Phase::New { .. } | Phase::Idle { .. }) {
                conn.close.cancel();
            }
        }
    }
}

/// The soft `RLIMIT_NOFILE` of this process, if it can be read.
fn open_files_limit() -> Option<u64> {
    nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE).ok().map(|(soft, _)| soft)
}

fn limit_for(open_files: Option<u64>) -> usize {
    let Some(soft) = open_files else { return MAX_CONNECTIONS };
    let room = usize::try_from(soft.saturating_sub(RESERVED_FDS)).unwrap_or(usize::MAX);
    room.clamp(MIN_CONNECTIONS, MAX_CONNECTIONS)
}

/// Raises this process's soft `RLIMIT_NOFILE` to its hard limit (all an
/// unprivileged process may) and returns the soft limit now in force. The
/// daemon calls it at start; the connection limit holds either way.
pub fn raise_open_files_limit() -> Result<u64, Error> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE)
        .map_err(|e| Error::Server(format!("cannot read the open-file limit: {e}")))?;
    if soft >= hard {
        return Ok(soft);
    }
    setrlimit(Resource::RLIMIT_NOFILE, hard, hard)
        .map_err(|e| Error::Server(format!("cannot raise the open-file limit from {soft} to {hard}: {e}")))?;
    Ok(hard)
}

/// Accepts connections on `listener` and serves `router` on them until
/// `signal` completes, then closes waiting connections and returns once the
/// others have ended (their tasks run on `tracker`).
pub(crate) async fn accept_loop(
    listener: TcpListener,
    router: Router,
    conns: Arc<Connections>,
    shutdown: CancellationToken,
    tracker: TaskTracker,
    signal: impl Future<Output = ()>,
) {
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(HEADER_READ_TIMEOUT);
    let http = Arc::new(http);
    if conns.limit() < MAX_CONNECTIONS {
        tracing::warn!(limit = conns.limit(), max = MAX_CONNECTIONS, "the open-file limit lowers the connection limit");
    }
    let mut signal = std::pin::pin!(signal);
    loop {
        let accepted = tokio::select! {
            () = &mut signal => break,
            r = listener.accept() => r,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                // Out of descriptors or memory: free one and retry shortly.
                let freed = conns.evict_one();
                tracing::warn!(error = %e, open = conns.counted(), freed, "accepting a connection failed");
                tokio::select! {
                    () = &mut signal => break,
                    () = tokio::time::sleep(ACCEPT_ERROR_PAUSE) => continue,
                }
            }
        };
        // No Nagle delay: an MCP answer is a small event then the result, and
        // holding the second write until the first is acknowledged cost up to
        // 40 ms a call.
        let _ = stream.set_nodelay(true);
        let Some((conn, slot)) = conns.admit(Instant::now()) else { continue };
        let io = TokioIo::new(Counted { stream, _slot: slot });
        let task = drive(io, conn, router.clone(), http.clone(), shutdown.clone());
        tracker.spawn(task);
    }
    shutdown.cancel();
    conns.close_waiting();
}

/// Errors of one connection that `accept` reports; the listener is fine.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    )
}

/// Serves one connection until it ends, is closed for room, misses its
/// deadline, or the server shuts down.
async fn drive(
    io: TokioIo<Counted>,
    conn: Arc<Conn>,
    router: Router,
    http: Arc<http1::Builder>,
    shutdown: CancellationToken,
) {
    let service = {
        let conn = conn.clone();
        hyper::service::service_fn(move |req: Request<Incoming>| {
            let in_flight = InFlight::begin(conn.clone());
            let conn = conn.clone();
            let router = router.clone();
            async move {
                let response = match router.oneshot(req).await {
                    Ok(response) => response,
                    Err(never) => match never {},
                };
                if response.status() == StatusCode::SWITCHING_PROTOCOLS {
                    conn.phase.send_replace(Phase::Upgraded);
                }
                Ok::<_, Infallible>(response.map(|body| TrackedBody { body, _in_flight: in_flight }))
            }
        })
    };
    let connection = http.serve_connection(io, service).with_upgrades();
    let mut connection = std::pin::pin!(connection);
    let mut phase = conn.phase.subscribe();
    let mut draining = false;
    loop {
        let deadline = phase.borrow_and_update().deadline();
        if draining && deadline.is_some() {
            return;
        }
        let expired = async {
            match deadline {
                Some((at, _)) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            r = connection.as_mut() => {
                if let Err(e) = r {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                return;
            }
            () = conn.close.cancelled() => return,
            () = shutdown.cancelled(), if !draining => {
                draining = true;
                connection.as_mut().graceful_shutdown();
            }
            () = expired => {
                let reason = deadline.map_or("", |(_, reason)| reason);
                tracing::debug!(reason, "closing a connection without a complete request in time");
                return;
            }
            r = phase.changed() => {
                if r.is_err() {
                    return;
                }
            }
        }
    }
}

/// A request being answered: the connection is busy while one exists.
struct InFlight(Arc<Conn>);

impl InFlight {
    fn begin(conn: Arc<Conn>) -> Self {
        conn.phase.send_modify(|p| {
            *p = match *p {
                Phase::Busy { in_flight } => Phase::Busy { in_flight: in_flight + 1 },
                Phase::Upgraded => Phase::Upgraded,
                Phase::New { .. } | Phase::Idle { .. } => Phase::Busy { in_flight: 1 },
            }
        });
        InFlight(conn)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.phase.send_modify(|p| {
            if let Phase::Busy { in_flight } = *p {
                *p = if in_flight > 1 {
                    Phase::Busy { in_flight: in_flight - 1 }
                } else {
                    Phase::Idle { since: Instant::now() }
                };
            }
        });
    }
}

/// A response body that keeps its request in flight until it is dropped
/// (hyper drops it once it has ended, or when the connection goes).
struct TrackedBody {
    body: Body,
    _in_flight: InFlight,
}

impl HttpBody for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// An accepted socket that stays counted until it is closed.
struct Counted {
    stream: TcpStream,
    _slot: Slot,
}

impl AsyncRead for Counted {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(conn: &Conn, p: Phase) {
        conn.phase.send_replace(p);
    }

    #[test]
    fn at_the_limit_the_oldest_new_then_the_longest_idle_connection_makes_room() {
        let conns = Arc::new(Connections::new(4));
        let t0 = Instant::now();
        let at = |ms| t0 + Duration::from_millis(ms);
        let mut held = Vec::new();
        for i in 0..4 {
            held.push(conns.admit(at(i)).expect("under the limit"));
        }
        let [(busy, _), (idle_late, _), (upgraded, _), (new, _)] = &held[..] else { unreachable!() };
        phase(busy, Phase::Busy { in_flight: 1 });
        phase(idle_late, Phase::Idle { since: at(50) });
        phase(upgraded, Phase::Upgraded);
        // `new` is still new: it goes first, although it is the youngest.
        let fifth = conns.admit(at(10)).expect("room made");
        assert!(new.closing());
        assert!(!busy.closing() && !idle_late.closing() && !upgraded.closing());
        assert_eq!(conns.counted(), 4);
        // Then the longest-idle connection (`fifth` idle since earlier).
        phase(&fifth.0, Phase::Idle { since: at(20) });
        let sixth = conns.admit(at(60)).expect("room made");
        assert!(fifth.0.closing());
        assert!(!idle_late.closing());
        phase(&sixth.0, Phase::Busy { in_flight: 2 });
        let _seventh = conns.admit(at(70)).expect("room made");
        assert!(idle_late.closing());
        // Now everything counted is busy or upgraded except `_seventh`,
        // which is new: it makes room; then nothing can.
        let eighth = conns.admit(at(80)).expect("room made");
        phase(&eighth.0, Phase::Upgraded);
        assert!(conns.admit(at(90)).is_none(), "all busy or upgraded: refused");
        assert_eq!(conns.counted(), 4);
        assert!(!busy.closing() && !upgraded.closing() && !sixth.0.closing());
    }

    #[test]
    fn closed_sockets_leave_the_table() {
        let conns = Arc::new(Connections::new(2));
        let now = Instant::now();
        let a = conns.admit(now).unwrap();
        let b = conns.admit(now).unwrap();
        drop(a);
        assert_eq!(conns.counted(), 1);
        let c = conns.admit(now).unwrap();
        assert!(!b.0.closing() && !c.0.closing(), "room was free: nothing evicted");
        drop((b, c));
        assert_eq!(conns.table().open.len(), 0);
    }

    #[test]
    fn in_flight_requests_keep_a_connection_busy_until_the_last_ends() {
        let conn = Arc::new(Conn::new(Instant::now()));
        let first = InFlight::begin(conn.clone());
        let second = InFlight::begin(conn.clone());
        assert_eq!(*conn.phase.borrow(), Phase::Busy { in_flight: 2 });
        drop(first);
        assert_eq!(*conn.phase.borrow(), Phase::Busy { in_flight: 1 });
        drop(second);
        assert!(matches!(*conn.phase.borrow(), Phase::Idle { .. }));
        // An upgrade is final.
        let upgrade = InFlight::begin(conn.clone());
        conn.phase.send_replace(Phase::Upgraded);
        drop(upgrade);
        assert_eq!(*conn.phase.borrow(), Phase::Upgraded);
    }

    #[test]
    fn the_limit_fits_the_open_file_limit() {
        assert_eq!(limit_for(None), MAX_CONNECTIONS);
        assert_eq!(limit_for(Some(u64::MAX)), MAX_CONNECTIONS);
        assert_eq!(limit_for(Some(1024)), MAX_CONNECTIONS);
        assert_eq!(limit_for(Some(256)), 256 - RESERVED_FDS as usize);
        assert_eq!(limit_for(Some(10)), MIN_CONNECTIONS);
    }

    /// What hyper's `header_read_timeout` covers, without our deadlines: a
    /// connection that sends nothing, one that trickles its headers, and a
    /// keep-alive connection waiting after a response are all closed at the
    /// timeout.
    #[tokio::test]
    async fn hyper_header_timer_covers_first_and_keep_alive_waits() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        const TIMEOUT: Duration = Duration::from_millis(400);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let mut http = http1::Builder::new();
            http.timer(TokioTimer::new()).header_read_timeout(TIMEOUT);
            while let Ok((stream, _)) = listener.accept().await {
                let conn = http.serve_connection(
                    TokioIo::new(stream),
                    hyper::service::service_fn(|_req| async {
                        Ok::<_, Infallible>(axum::http::Response::new(Body::from("ok")))
                    }),
                );
                tokio::spawn(conn);
            }
        });
        /// Time until the server closes `s` (EOF or reset), reading what it
        /// sends meanwhile; `None` after 5 s.
        async fn closed_after(s: &mut TcpStream, from: Instant) -> (Option<Duration>, Vec<u8>) {
            let mut got = Vec::new();
            let mut buf = [0u8; 1024];
            loop {
                match tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await {
                    Err(_) => return (None, got),
                    Ok(Ok(0)) | Ok(Err(_)) => return (Some(from.elapsed()), got),
                    Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
                }
            }
        }
        let around = |d: Option<Duration>, what: &str| {
            let d = d.unwrap_or_else(|| panic!("{what}: still open after 5 s"));
            assert!(d >= TIMEOUT && d < TIMEOUT * 4, "{what}: closed after {d:?}");
        };

        // Sends nothing.
        let started = Instant::now();
        let mut s = TcpStream::connect(addr).await.unwrap();
        let (d, got) = closed_after(&mut s, started).await;
        around(d, "silent");
        assert!(got.is_empty(), "silent: hyper answered {:?}", String::from_utf8_lossy(&got));

        // Trickles a header line every 100 ms: a deadline, not idleness.
        let started = Instant::now();
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").await.unwrap();
        let (mut rd, mut wr) = s.split();
        let trickle = async {
            for _ in 0..30 {
                tokio::time::sleep(Duration::from_millis(100)).await;
                if wr.write_all(b"X-A: b\r\n").await.is_err() {
                    break;
                }
            }
            std::future::pending::<()>().await;
        };
        let mut buf = [0u8; 64];
        let d = tokio::select! {
            () = trickle => None,
            r = tokio::time::timeout(Duration::from_secs(5), rd.read(&mut buf)) => match r {
                Ok(Ok(0) | Err(_)) => Some(started.elapsed()),
                _ => None,
            },
        };
        around(d, "trickling");

        // A keep-alive connection after one complete exchange.
        let mut s = TcpStream::connect(addr).await.unwrap();
        tokio::time::sleep(TIMEOUT / 2).await;
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
        let mut head = [0u8; 17];
        s.read_exact(&mut head).await.unwrap();
        assert_eq!(&head[..], b"HTTP/1.1 200 OK\r\n");
        let answered = Instant::now();
        let (d, _) = closed_after(&mut s, answered).await;
        around(d, "keep-alive");
    }
}
