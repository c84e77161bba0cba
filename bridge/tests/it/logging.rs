//! The daemon's log file, through the real binary: `HOME/logs/` is 0700,
//! `chaperone-YYYY-MM-DD.log` 0600 with a start line, `--no-log-file`
//! writes none, retention deletes old days only, an unwritable log
//! directory costs one warning, and a daemon started in the background
//! keeps its start errors visible to the caller.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bridge::logging::{log_file_day, log_file_name};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

const BIN: &str = env!("CARGO_BIN_EXE_chaperone");

fn temp_home(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chaperone-logging-it-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn today() -> i64 {
    (SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() / 86_400) as i64
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// `chaperone serve --home HOME --port 0 EXTRA…`, up once daemon.json exists.
fn serve(home: &Path, extra: &[&str]) -> Child {
    let mut child = Command::new(BIN)
        .args(["serve", "--port", "0", "--home"])
        .arg(home)
        .args(extra)
        .env_remove("CHAPERONE_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn serve");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !home.join("daemon.json").exists() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("serve exited at start ({status}): {}", stderr_of(child));
        }
        assert!(Instant::now() < deadline, "daemon.json did not appear");
        std::thread::sleep(Duration::from_millis(25));
    }
    child
}

/// SIGTERM, then the exit status and everything written on stderr.
fn stop(child: Child) -> (std::process::ExitStatus, String) {
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
    let out = wait_output(child);
    (out.status, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn wait_output(child: Child) -> Output {
    child.wait_with_output().unwrap()
}

fn stderr_of(child: Child) -> String {
    String::from_utf8_lossy(&wait_output(child).stderr).into_owned()
}

/// The `chaperone-*.log` files in `dir`.
fn log_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut v: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("chaperone-")))
        .collect();
    v.sort();
    v
}

#[test]
fn serve_writes_a_private_daily_log_file_with_a_start_line() {
    let home = temp_home("file");
    let child = serve(&home, &[]);
    let (status, err) = stop(child);
    assert!(status.success(), "{err}");
    let logs = home.join("logs");
    assert_eq!(mode(&logs), 0o700);
    let files = log_files(&logs);
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_str().unwrap();
    let day = log_file_day(name).unwrap_or_else(|| panic!("unexpected name {name}"));
    assert!(day == today() || day == today() - 1, "{name} is not today's (UTC) file");
    assert_eq!(mode(&files[0]), 0o600);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.contains("daemon starting") && text.contains("bridge listening"), "{text}");
    assert!(text.contains("bridge stopped"), "the shutdown is logged too: {text}");
    assert!(!text.contains('\u{1b}'), "no colour codes in the file: {text:?}");
    // stderr has the same lines.
    assert!(err.contains("bridge listening"), "{err}");
    // The tokens never reach the log.
    for t in ["extension-token", "mcp-token", "dashboard-token"] {
        let token = std::fs::read_to_string(home.join(t)).unwrap();
        assert!(!text.contains(token.trim()) && !err.contains(token.trim()), "{t} in the log");
    }
    // A second run the same day appends to the same file.
    let (status, _) = stop(serve(&home, &[]));
    assert!(status.success());
    let again = std::fs::read_to_string(&files[0]).unwrap();
    assert!(again.starts_with(&text) && again.matches("daemon starting").count() == 2, "{again}");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn no_log_file_logs_to_stderr_only() {
    let home = temp_home("nofile");
    let (status, err) = stop(serve(&home, &["--no-log-file"]));
    assert!(status.success(), "{err}");
    assert!(err.contains("bridge listening"), "{err}");
    assert!(log_files(&home.join("logs")).is_empty(), "no log file with --no-log-file");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn retention_deletes_old_days_and_keeps_recent_ones_and_other_files() {
    let home = temp_home("retention");
    let logs = home.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    // A directory left 0755 (e.g. by an older version) is made private.
    std::fs::set_permissions(&logs, std::fs::Permissions::from_mode(0o755)).unwrap();
    let old = logs.join(log_file_name(today() - 30));
    let yesterday = logs.join(log_file_name(today() - 1));
    let other = logs.join("native-host.log");
    for p in [&old, &yesterday, &other] {
        std::fs::write(p, "planted\n").unwrap();
    }
    let (status, err) = stop(serve(&home, &["--log-retention-days", "14"]));
    assert!(status.success(), "{err}");
    assert!(!old.exists(), "a file dated 30 days ago is deleted");
    assert!(yesterday.exists(), "yesterday's file is kept");
    assert!(other.exists(), "files that are not daily logs are never touched");
    assert_eq!(mode(&logs), 0o700);
    let text: String = log_files(&logs).iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
    assert!(text.contains("log retention applied"), "{text}");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn out_of_range_retention_is_a_usage_error() {
    for bad in ["0", "3651", "-1", "many"] {
        let o = Command::new(BIN)
            .args(["serve", "--port", "0", &format!("--log-retention-days={bad}"), "--home"])
            .arg(temp_home("badretention"))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("--log-retention-days"), "{bad}: {err}");
    }
    let help = Command::new(BIN).args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("--log-retention-days") && help.contains("--no-log-file"), "{help}");
    assert!(help.contains("chaperone-YYYY-MM-DD.log") && help.contains("1 to 3650"), "{help}");
}

#[test]
fn an_unwritable_log_directory_costs_one_warning_and_the_daemon_runs_on() {
    let home = temp_home("unwritable");
    std::fs::create_dir_all(&home).unwrap();
    // A file where the directory should be: unusable even for root.
    std::fs::write(home.join("logs"), "not a directory").unwrap();
    let child = serve(&home, &[]);
    let (status, err) = stop(child);
    assert!(status.success(), "{err}");
    assert_eq!(err.matches("warning:").count(), 1, "{err}");
    assert!(err.contains("logs") && err.contains("stderr only"), "{err}");
    assert!(err.contains("bridge listening"), "logging goes on on stderr: {err}");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn a_background_daemon_logs_to_the_file_and_its_start_errors_reach_the_caller() {
    // `mcp` starts the daemon in the background: the log file is written.
    let home = temp_home("background");
    let mut mcp = Command::new(BIN)
        .args(["mcp", "--home"])
        .arg(&home)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !home.join("daemon.json").exists() {
        assert!(Instant::now() < deadline, "the background daemon did not start");
        std::thread::sleep(Duration::from_millis(25));
    }
    drop(mcp.stdin.take()); // end of input: the proxy exits
    let _ = mcp.wait();
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(home.join("daemon.json")).unwrap()).unwrap();
    let pid = info["pid"].as_u64().unwrap() as i32;
    // The daemon outlives the proxy whose stderr it had, and keeps logging.
    let status = Command::new(BIN).args(["status", "--home"]).arg(&home).output().unwrap();
    assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
    kill(Pid::from_raw(pid), Signal::SIGTERM).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while home.join("daemon.json").exists() {
        assert!(Instant::now() < deadline, "the background daemon did not stop");
        std::thread::sleep(Duration::from_millis(25));
    }
    let logs = home.join("logs");
    assert_eq!(mode(&logs), 0o700);
    let files = log_files(&logs);
    assert!(!files.is_empty());
    let text: String = files.iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
    assert!(text.contains("bridge listening") && text.contains("bridge stopped"), "{text}");
    assert!(!logs.join("daemon.log").exists(), "no more raw stdout/stderr file");
    let _ = std::fs::remove_dir_all(&home);

    // A daemon that cannot start: the caller says why.
    let home = temp_home("background-bad");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), "[server]\nport = 0\nbnid = \"127.0.0.1\"\n").unwrap();
    let o = Command::new(BIN).args(["mcp", "--home"]).arg(&home).stdin(Stdio::null()).output().unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("exited at start") && err.contains("line 3"), "{err}");
    let _ = std::fs::remove_dir_all(&home);
}
