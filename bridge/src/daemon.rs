//! Running the daemon for a home (`chaperone serve`), and starting it in
//! the background for `up`, `mcp` and the native host.

use std::future::Future;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use shared::protocol::DaemonInfo;
use tokio::net::TcpListener;

use crate::config::{FileConfig, ServeConfig};
use crate::error::Error;
use crate::home::Home;

/// Serves the bridge for `home` until `shutdown` completes: takes the
/// one-daemon lock, creates the tokens, binds loopback, writes
/// `daemon.json`, and removes it again on the way out. Logs also go to the
/// daily file in `home/logs/`, kept for the default retention.
pub async fn serve(
    home: &Home,
    port: Option<u16>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    serve_logging(home, port, Some(crate::logging::DEFAULT_LOG_RETENTION_DAYS), false, shutdown).await
}

/// [`serve`], with the log file kept `log_file` days (`None`: no log file,
/// stderr only). The file starts once the lock is held, so a daemon that
/// finds another running writes and deletes nothing there.
pub async fn serve_logging(
    home: &Home,
    port: Option<u16>,
    log_file: Option<u32>,
    allow_reveal: bool,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    home.ensure()?;
    let file = FileConfig::load(&home.config_toml())?;
    let ip = file.bind_ip()?;
    let origins = file.extension_origins()?;
    let _lock = home.lock()?;
    let log_path = log_file.and_then(|days| crate::logging::start_file(&home.logs(), days));
    tracing::info!(
        version = shared::VERSION,
        pid = std::process::id(),
        log_file = %log_path.as_deref().map_or("none".into(), |p| p.display().to_string()),
        "daemon starting"
    );
    // Room for the connection limit (which holds, lowered, if this fails).
    match crate::server::raise_open_files_limit() {
        Ok(open_files) => tracing::debug!(open_files, "open-file limit"),
        Err(e) => tracing::warn!(error = %e, "open-file limit not raised"),
    }
    let tokens = home.tokens()?;
    let port = port.or(file.server.port).unwrap_or(0);
    let addr = SocketAddr::new(ip, port);
    let listener = TcpListener::bind(addr).await.map_err(|e| {
        if e.kind() == std::io::ErrorKind::AddrInUse {
            Error::PortInUse { ip, port }
        } else {
            Error::Listen { addr, source: e }
        }
    })?;
    let local = listener.local_addr().map_err(|e| Error::Server(e.to_string()))?;
    let policy = file.policy().map_err(|message| Error::ConfigFile { path: home.config_toml(), message })?;
    let audit = crate::audit::AuditStore::open(&home.db())?;
    let retention = file.retention_days();
    prune(&audit, retention);
    let pruner = {
        let audit = audit.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(std::time::Duration::from_secs(86_400));
            every.tick().await; // the first tick is now; pruned above already
            loop {
                every.tick().await;
                // A DELETE with fsync: off the async runtime.
                let audit = audit.clone();
                if let Err(e) = tokio::task::spawn_blocking(move || prune(&audit, retention)).await {
                    tracing::warn!(error = %e, "audit retention failed");
                }
            }
        })
    };
    let mut config = ServeConfig::new(tokens);
    config.extension_origins = origins;
    config.policy = policy;
    config.human_timeout_secs = file.human_timeout_secs();
    config.files = file.files(home.root().join("downloads").join("default"));
    config.audit = Some(audit);
    config.flows = Some(crate::flows::FlowStore::open(&home.db())?);
    // Read when an action that names a secret runs; `chaperone secret set`
    // may add one while the daemon is up.
    config.secrets = Some(std::sync::Arc::new(crate::secrets::SecretStore::open(home)?));
    config.flows = Some(crate::flows::FlowStore::open(&home.db())?);
    config.exports_dir = Some(home.root().join("exports"));
    config.allow_reveal = allow_reveal;
    if allow_reveal {
        tracing::warn!("--allow-reveal: browser_network_request may show captured credentials unredacted");
    }
    if let Some(section) = file.model.clone() {
        let traces = (!crate::model::traces_off()).then(|| home.root().join("knowledge").join("traces.jsonl"));
        let tier = crate::model::ModelTier::new(section, traces)
            .map_err(|message| Error::ConfigFile { path: home.config_toml(), message })?;
        config.model = Some(std::sync::Arc::new(tier));
    }
    config.site_rules = Some(crate::site_rules::SiteRuleStore::open(&home.db())?);
    let pid = std::process::id();
    home.write_daemon_json(&DaemonInfo {
        pid,
        port: local.port(),
        started_at: crate::time::now_rfc3339(),
        version: shared::VERSION.to_string(),
    })?;
    tracing::info!(port = local.port(), pid, home = %home.root().display(), "bridge listening");
    let result = crate::server::run(config, listener, shutdown).await;
    pruner.abort();
    home.remove_daemon_json(pid);
    tracing::info!(pid, "bridge stopped");
    result
}

fn prune(audit: &crate::audit::AuditStore, days: u32) {
    match audit.prune(days) {
        Ok(0) => {}
        Ok(n) => tracing::info!(rows = n, days, "audit retention applied"),
        Err(e) => tracing::warn!(error = %e, "audit retention failed"),
    }
}

/// The running daemon of `home`, starting one in the background (`serve`
/// with the default log file, in its own process group) if none runs.
///
/// The daemon logs to `home/logs/`; its stdout goes nowhere and its stderr
/// is read here: a daemon that exits at start has its last lines in the
/// error, and a `warning:` line (e.g. an unwritable log directory) is
/// passed on to our stderr. Once we exit, its stderr is a closed pipe,
/// which it ignores.
pub fn ensure_running(home: &Home) -> Result<DaemonInfo, Error> {
    if let Some(info) = home.running_daemon() {
        return Ok(info);
    }
    home.ensure()?;
    let exe = std::env::current_exe().map_err(|e| Error::io("current executable", e))?;
    use std::os::unix::process::CommandExt;
    let mut child = Command::new(exe)
        .arg("serve")
        .arg("--home")
        .arg(home.root())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| Error::DaemonStart(format!("cannot start the daemon: {e}")))?;
    let output = StartupOutput::read(child.stderr.take());
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(info) = home.running_daemon() {
            return Ok(info);
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(Error::DaemonStart(format!("the daemon exited at start ({status}){}", output.tail())));
        }
        if Instant::now() > deadline {
            return Err(Error::DaemonStart(format!(
                "the daemon (pid {}) did not start within 15 s; its log is in {}{}",
                child.id(),
                home.logs().display(),
                output.tail()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The stderr of a daemon started in the background, drained by a thread
/// for as long as we run (so the daemon never blocks on a full pipe); the
/// last lines are kept.
struct StartupOutput {
    lines: std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<String>>>,
    done: std::sync::mpsc::Receiver<()>,
}

impl StartupOutput {
    const KEEP_LINES: usize = 20;
    const MAX_LINE_CHARS: usize = 500;

    fn read(stderr: Option<std::process::ChildStderr>) -> Self {
        use std::io::BufRead;
        let lines = std::sync::Arc::new(std::sync::Mutex::new(std::collections::VecDeque::new()));
        let (tx, done) = std::sync::mpsc::channel();
        if let Some(stderr) = stderr {
            let keep = lines.clone();
            let _ = std::thread::Builder::new().name("daemon-stderr".into()).spawn(move || {
                let mut reader = std::io::BufReader::new(stderr);
                let mut buf = Vec::new();
                while reader.read_until(b'\n', &mut buf).is_ok_and(|n| n > 0) {
                    let line = String::from_utf8_lossy(&buf).trim_end().to_string();
                    buf.clear();
                    if line.starts_with("warning:") {
                        crate::logging::warn_stderr(&format!("chaperone daemon: {line}"));
                    }
                    let line = crate::logging::cut_chars(&line, Self::MAX_LINE_CHARS).into_owned();
                    let mut l = keep.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    if l.len() == Self::KEEP_LINES {
                        l.pop_front();
                    }
                    l.push_back(line);
                }
                let _ = tx.send(());
            });
        }
        StartupOutput { lines, done }
    }

    /// `": <last lines>"` once the daemon's stderr is closed (or after a
    /// second), empty if it wrote nothing.
    fn tail(&self) -> String {
        let _ = self.done.recv_timeout(Duration::from_secs(1));
        let lines = self.lines.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if lines.is_empty() {
            return String::new();
        }
        format!(":\n{}", lines.iter().map(String::as_str).collect::<Vec<_>>().join("\n"))
    }
}
