//! Running the daemon for a home (`chaperone serve`), and starting it in
//! the background for `up`, `mcp` and the native host.

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use shared::protocol::DaemonInfo;
use tokio::net::TcpListener;

use crate::config::{FileConfig, ServeConfig};
use crate::error::Error;
use crate::home::{Home, write_private};

/// Serves the bridge for `home` until `shutdown` completes: takes the
/// one-daemon lock, creates the tokens, binds loopback, writes
/// `daemon.json`, and removes it again on the way out.
pub async fn serve(
    home: &Home,
    port: Option<u16>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    home.ensure()?;
    let file = FileConfig::load(&home.config_toml())?;
    let ip = file.bind_ip()?;
    let origins = file.extension_origins()?;
    let _lock = home.lock()?;
    let tokens = home.tokens()?;
    let port = port.or(file.server.port).unwrap_or(0);
    let addr = SocketAddr::new(ip, port);
    let listener = TcpListener::bind(addr).await.map_err(|e| {
        if e.kind() == std::io::ErrorKind::AddrInUse {
            Error::Config(format!(
                "port {port} is already in use on {ip}; pick another with --port (0 picks a free one)"
            ))
        } else {
            Error::Server(format!("cannot listen on {addr}: {e}"))
        }
    })?;
    let local = listener.local_addr().map_err(|e| Error::Server(e.to_string()))?;
    let policy = file.policy().map_err(|m| Error::Config(format!("{}: {m}", home.config_toml().display())))?;
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
                prune(&audit, retention);
            }
        })
    };
    let mut config = ServeConfig::new(tokens);
    config.extension_origins = origins;
    config.policy = policy;
    config.audit = Some(audit);
    let pid = std::process::id();
    home.write_daemon_json(&DaemonInfo {
        pid,
        port: local.port(),
        started_at: now_rfc3339(),
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

/// The running daemon of `home`, starting one in the background (its own
/// process group, output to `home/logs/daemon.log`) if none runs.
pub fn ensure_running(home: &Home) -> Result<DaemonInfo, Error> {
    if let Some(info) = home.running_daemon() {
        return Ok(info);
    }
    home.ensure()?;
    let logs = home.logs();
    std::fs::create_dir_all(&logs).map_err(|e| Error::io(&logs, e))?;
    let log_path = logs.join("daemon.log");
    let log = open_append_private(&log_path)?;
    let err = log.try_clone().map_err(|e| Error::io(&log_path, e))?;
    let exe = std::env::current_exe().map_err(|e| Error::io("current executable", e))?;
    use std::os::unix::process::CommandExt;
    let mut child = Command::new(exe)
        .arg("serve")
        .arg("--home")
        .arg(home.root())
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|e| Error::Server(format!("cannot start the daemon: {e}")))?;
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(info) = home.running_daemon() {
            return Ok(info);
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(Error::Server(format!("the daemon exited at start ({status}); see {}", log_path.display())));
        }
        if Instant::now() > deadline {
            return Err(Error::Server(format!("the daemon did not start within 15 s; see {}", log_path.display())));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn open_append_private(path: &Path) -> Result<std::fs::File, Error> {
    use std::os::unix::fs::OpenOptionsExt;
    if !path.exists() {
        write_private(path, b"")?;
    }
    std::fs::OpenOptions::new().append(true).mode(0o600).open(path).map_err(|e| Error::io(path, e))
}

/// Current UTC time as RFC 3339 (seconds), without a date crate.
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    rfc3339(secs)
}

pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    #[test]
    fn rfc3339_formats_known_instants() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(1_796_000_000), "2026-11-30T00:53:20Z");
        assert_eq!(super::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}
