//! The `chaperone` command line as a user meets it: real processes, real
//! files, clear errors and non-zero exits on bad input.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_chaperone");

fn temp_home(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chaperone-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).env_remove("CHAPERONE_HOME").output().expect("run chaperone")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A `chaperone serve` child, stopped on drop.
struct Serve {
    child: Child,
    home: PathBuf,
}

impl Serve {
    fn start(home: &Path, extra: &[&str]) -> Serve {
        let child = Command::new(BIN)
            .args(["serve", "--home"])
            .arg(home)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn serve");
        let s = Serve { child, home: home.to_path_buf() };
        s.wait_for_daemon_json();
        s
    }

    fn wait_for_daemon_json(&self) -> serde_json::Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Ok(text) = std::fs::read_to_string(self.home.join("daemon.json"))
                && let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
            {
                return v;
            }
            assert!(Instant::now() < deadline, "daemon.json did not appear");
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    fn port(&self) -> u16 {
        self.wait_for_daemon_json()["port"].as_u64().unwrap() as u16
    }

    fn terminate(mut self) -> (std::process::ExitStatus, String) {
        terminate(&self.child);
        let status = self.child.wait().unwrap();
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        (status, err)
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn terminate(child: &Child) {
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
}

#[test]
fn unknown_flags_are_refused_with_a_usage_error() {
    let o = run(&["serve", "--frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--frobnicate"), "{}", stderr(&o));
    let o = run(&["launch-rockets"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn every_command_explains_itself_with_help() {
    for cmd in ["serve", "up", "mcp", "status", "audit", "install-native-host"] {
        let o = run(&[cmd, "--help"]);
        assert!(o.status.success(), "{cmd} --help");
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("--home"), "{cmd} --help lacks --home:\n{out}");
    }
}

#[test]
fn serve_creates_a_private_home_and_tokens_writes_daemon_json_and_cleans_up() {
    let home = temp_home("serve");
    let serve = Serve::start(&home, &["--port", "0"]);
    let info = serve.wait_for_daemon_json();
    assert_eq!(info["pid"].as_u64().unwrap() as u32, serve.child.id());
    assert!(info["port"].as_u64().unwrap() > 0);
    assert!(info["startedAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"));
    let keys: Vec<&String> = info.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 4, "daemon.json holds only pid, port, startedAt, version: {keys:?}");
    assert_eq!(std::fs::metadata(&home).unwrap().permissions().mode() & 0o777, 0o700);
    for t in ["extension-token", "mcp-token", "dashboard-token"] {
        let p = home.join(t);
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600, "{t}");
        let v = std::fs::read_to_string(&p).unwrap();
        assert_eq!(v.len(), 64);
        assert!(!std::fs::read_to_string(home.join("daemon.json")).unwrap().contains(&v), "no token in daemon.json");
    }
    let (status, _) = serve.terminate();
    assert!(status.success(), "clean exit on SIGTERM: {status}");
    assert!(!home.join("daemon.json").exists(), "daemon.json removed on exit");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn a_second_daemon_for_the_same_home_says_where_the_first_is() {
    let home = temp_home("second");
    let first = Serve::start(&home, &["--port", "0"]);
    let port = first.port();
    let o = run(&["serve", "--home", home.to_str().unwrap(), "--port", "0"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("already running") && err.contains(&port.to_string()), "{err}");
    drop(first);
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn a_port_in_use_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let home = temp_home("port");
    let o = run(&["serve", "--home", home.to_str().unwrap(), "--port", &port]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("already in use"), "{}", stderr(&o));
    assert!(!home.join("daemon.json").exists());
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn an_unusable_home_is_a_clear_error() {
    let base = temp_home("unusable");
    std::fs::create_dir_all(&base).unwrap();
    let file = base.join("a-file");
    std::fs::write(&file, "x").unwrap();
    for home in [file.clone(), file.join("below")] {
        let o = run(&["serve", "--home", home.to_str().unwrap(), "--port", "0"]);
        assert!(!o.status.success(), "{}", home.display());
        assert!(stderr(&o).contains("a-file"), "names the path: {}", stderr(&o));
    }
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn config_asking_for_a_non_loopback_address_is_refused() {
    let home = temp_home("bind");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), "[server]\nbind = \"0.0.0.0\"\n").unwrap();
    let o = run(&["serve", "--home", home.to_str().unwrap(), "--port", "0"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("loopback"), "{}", stderr(&o));
    assert!(!home.join("daemon.json").exists(), "nothing listened");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn a_malformed_config_names_the_line_and_nothing_starts() {
    let home = temp_home("badconfig");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), "[server]\nport = 0\nbnid = \"127.0.0.1\"\n").unwrap();
    let o = run(&["serve", "--home", home.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("line 3"), "{}", stderr(&o));
    assert!(!home.join("daemon.json").exists());
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn status_says_when_no_daemon_runs_and_shows_a_running_one() {
    let home = temp_home("status");
    let o = run(&["status", "--home", home.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stdout).contains("not running"));
    let serve = Serve::start(&home, &["--port", "0"]);
    let port = serve.port();
    let o = run(&["status", "--home", home.to_str().unwrap()]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.contains(&format!("127.0.0.1:{port}")) && out.contains("none connected"), "{out}");
    drop(serve);
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn native_host_starts_the_daemon_and_hands_over_port_and_extension_token_only() {
    let home = temp_home("native");
    let origin = format!("chrome-extension://{}/", shared::EXTENSION_ID);
    let mut child = Command::new(BIN)
        .arg(&origin)
        .env("CHAPERONE_HOME", &home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let req = br#"{"type":"bootstrap"}"#;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&(req.len() as u32).to_ne_bytes()).unwrap();
    stdin.write_all(req).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let len = u32::from_ne_bytes(out.stdout[..4].try_into().unwrap()) as usize;
    let reply: serde_json::Value = serde_json::from_slice(&out.stdout[4..4 + len]).unwrap();
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(home.join("daemon.json")).unwrap()).unwrap();
    let ext_token = std::fs::read_to_string(home.join("extension-token")).unwrap();
    let mcp_token = std::fs::read_to_string(home.join("mcp-token")).unwrap();
    assert_eq!(reply["type"], "bridge");
    assert_eq!(reply["port"], info["port"]);
    assert_eq!(reply["token"], ext_token.as_str());
    assert!(!String::from_utf8_lossy(&out.stdout).contains(&mcp_token), "never the mcp token");
    // Its note for `up` is private and holds no token.
    let note = home.join("logs/native-host.log");
    assert_eq!(std::fs::metadata(home.join("logs")).unwrap().permissions().mode() & 0o777, 0o700);
    assert_eq!(std::fs::metadata(&note).unwrap().permissions().mode() & 0o777, 0o600);
    let text = std::fs::read_to_string(&note).unwrap();
    assert!(!text.contains(ext_token.as_str()) && !text.is_empty(), "{text}");
    // Stop the daemon it started.
    let pid = info["pid"].as_u64().unwrap().to_string();
    let _ = Command::new("kill").args(["-TERM", &pid]).status();
    let deadline = Instant::now() + Duration::from_secs(10);
    while home.join("daemon.json").exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!home.join("daemon.json").exists(), "daemon stopped cleanly");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn install_native_host_pins_our_extension_and_home() {
    let home = temp_home("install");
    let udd = home.join("udd");
    let o = run(&["install-native-host", "--home", home.to_str().unwrap(), "--user-data-dir", udd.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(udd.join("NativeMessagingHosts/com.chaperone.bridge.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(manifest["name"], "com.chaperone.bridge");
    assert_eq!(
        manifest["allowed_origins"],
        serde_json::json!([format!("chrome-extension://{}/", shared::EXTENSION_ID)])
    );
    let launcher = PathBuf::from(manifest["path"].as_str().unwrap());
    let script = std::fs::read_to_string(&launcher).unwrap();
    assert!(script.contains(home.to_str().unwrap()) && script.contains(BIN), "{script}");
    assert_eq!(std::fs::metadata(&launcher).unwrap().permissions().mode() & 0o111, 0o100);
    let _ = std::fs::remove_dir_all(&home);
}

fn fake_extension_dir(home: &Path) -> PathBuf {
    let ext = home.join("ext");
    std::fs::create_dir_all(&ext).unwrap();
    std::fs::write(ext.join("manifest.json"), "{}").unwrap();
    ext
}

#[test]
fn up_with_a_missing_browser_fails_before_starting_anything() {
    let home = temp_home("nobrowser");
    let ext = fake_extension_dir(&home);
    let o = run(&[
        "up",
        "--home",
        home.to_str().unwrap(),
        "--browser",
        "/nonexistent/chromium",
        "--extension-dir",
        ext.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("browser not found"), "{}", stderr(&o));
    assert!(!home.join("daemon.json").exists());
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn up_explains_an_extension_that_never_connects() {
    let home = temp_home("noconnect");
    let ext = fake_extension_dir(&home);
    // A "browser" that starts and stays up but never loads the extension.
    let fake = home.join("fake-browser");
    std::fs::write(&fake, "#!/bin/sh\nexec sleep 60\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let args = |fake: &Path, timeout: &'static str| {
        vec![
            "up".to_string(),
            "--home".into(),
            home.to_str().unwrap().into(),
            "--headless".into(),
            "--browser".into(),
            fake.to_str().unwrap().into(),
            "--extension-dir".into(),
            ext.to_str().unwrap().into(),
            "--connect-timeout".into(),
            timeout.into(),
        ]
    };
    let o = Command::new(BIN).args(args(&fake, "2")).output().unwrap();
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("did not connect within 2 s") && err.contains("never asked for the bridge"), "{err}");
    assert!(!home.join("daemon.json").exists(), "the daemon `up` started is stopped again");
    // A browser that exits at once is reported with its output.
    std::fs::write(&fake, "#!/bin/sh\necho 'cannot open display' >&2\nexit 1\n").unwrap();
    let o = Command::new(BIN).args(args(&fake, "20")).output().unwrap();
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("exited before the extension connected") && err.contains("cannot open display"), "{err}");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn up_refuses_a_non_http_start_url() {
    let home = temp_home("badurl");
    let o = run(&["up", "--home", home.to_str().unwrap(), "--url", "file:///etc/passwd"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--url"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&home);
}

fn profile(home: &Path, args: &[&str]) -> Output {
    let mut all = vec!["profile"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--home", home.to_str().unwrap()]);
    run(&all)
}

/// Fakes Chromium's profile lock: `SingletonLock` -> `<hostname>-<pid>`.
fn fake_lock(profile_dir: &Path, pid: u32) {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    std::os::unix::fs::symlink(format!("{}-{pid}", host.trim()), profile_dir.join("SingletonLock")).unwrap();
}

/// A live process to hold a fake lock; killed on drop.
struct Holder(Child);

impl Holder {
    fn spawn() -> Holder {
        Holder(Command::new("sleep").arg("30").spawn().unwrap())
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn profile_names_outside_the_rule_are_refused_and_nothing_is_created() {
    let home = temp_home("profile-badname");
    let too_long = "x".repeat(33);
    for bad in ["../x", "A", "x/y", too_long.as_str(), "", "..", "a_b"] {
        for cmd in ["create", "rm", "open"] {
            let o = profile(&home, &[cmd, bad]);
            assert_eq!(o.status.code(), Some(2), "{cmd} {bad:?}: {}", stderr(&o));
            assert!(stderr(&o).contains("a-z, 0-9"), "{cmd} {bad:?}: {}", stderr(&o));
        }
    }
    assert!(!home.exists(), "nothing is created for a bad name");
    assert!(!std::env::temp_dir().join("x").join("profiles").exists());
}

#[test]
fn profile_create_list_and_rm() {
    let home = temp_home("profile-crud");
    let o = profile(&home, &["create", "work-1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("one profile per identity") && out.contains("profile open work-1"), "{out}");
    assert!(out.contains("everyday browser profile"), "{out}");
    let dir = home.join("profiles").join("work-1");
    assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
    assert_eq!(std::fs::metadata(home.join("profiles")).unwrap().permissions().mode() & 0o777, 0o700);
    std::fs::create_dir_all(dir.join("Default")).unwrap();
    std::fs::write(dir.join("Default").join("Preferences"), vec![b'x'; 1000]).unwrap();

    let o = profile(&home, &["list", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["name"], "work-1");
    assert_eq!(rows[0]["sizeBytes"], 1000);
    assert_eq!(rows[0]["inUse"], false);
    assert!(rows[0]["lastUsed"].as_str().unwrap().ends_with('Z'), "{rows:?}");
    let o = profile(&home, &["list"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("work-1") && out.contains("not in use"), "{out}");

    let o = profile(&home, &["rm", "work-1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!dir.exists());
    let o = profile(&home, &["rm", "work-1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no profile named"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn profile_rm_refuses_a_symlink_and_never_follows_it() {
    let home = temp_home("profile-symlink");
    let outside = temp_home("profile-symlink-outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("keep"), "x").unwrap();
    std::fs::create_dir_all(home.join("profiles")).unwrap();
    std::os::unix::fs::symlink(&outside, home.join("profiles").join("evil")).unwrap();
    let o = profile(&home, &["rm", "evil"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("symlink"), "{}", stderr(&o));
    assert!(outside.join("keep").exists());
    let _ = std::fs::remove_dir_all(&home);
    let _ = std::fs::remove_dir_all(&outside);
}

#[test]
fn a_profile_in_use_is_not_removed_opened_or_used_by_up() {
    let home = temp_home("profile-locked");
    assert!(profile(&home, &["create", "busy"]).status.success());
    let dir = home.join("profiles").join("busy");
    let holder = Holder::spawn();
    let pid = holder.0.id();
    fake_lock(&dir, pid);

    let o = profile(&home, &["list", "--json"]);
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(rows[0]["inUse"], true, "{rows}");
    assert_eq!(rows[0]["holder"]["pid"], pid);

    let o = profile(&home, &["rm", "busy"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("in use") && stderr(&o).contains(&pid.to_string()), "{}", stderr(&o));
    assert!(dir.is_dir());

    // A "browser" that would record being started.
    let started = home.join("started");
    let fake = home.join("fake-browser");
    std::fs::write(&fake, format!("#!/bin/sh\necho \"$@\" > {}\n", started.display())).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();

    let o = profile(&home, &["open", "busy", "--browser", fake.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains(&pid.to_string()), "{}", stderr(&o));

    let ext = fake_extension_dir(&home);
    let o = run(&[
        "up",
        "--home",
        home.to_str().unwrap(),
        "--profile",
        "busy",
        "--headless",
        "--browser",
        fake.to_str().unwrap(),
        "--extension-dir",
        ext.to_str().unwrap(),
        "--connect-timeout",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("PROFILE_LOCKED") && err.contains(&pid.to_string()), "{err}");
    assert!(!started.exists(), "no browser was started");
    assert!(!home.join("profiles").join("busy.browser.log").exists(), "no browser was started");
    assert!(!home.join("daemon.json").exists() && !home.join("mcp-token").exists(), "no daemon was started");
    assert!(dir.join("SingletonLock").symlink_metadata().is_ok(), "the lock is left alone");

    // Once the holder is gone the lock is dangling: not in use.
    drop(holder);
    let o = profile(&home, &["list", "--json"]);
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(rows[0]["inUse"], false, "{rows}");
    let o = profile(&home, &["rm", "busy"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!dir.exists());
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn profile_open_starts_the_browser_without_extension_or_automation() {
    let home = temp_home("profile-open");
    let started = home.join("started");
    std::fs::create_dir_all(&home).unwrap();
    let fake = home.join("fake-browser");
    std::fs::write(&fake, format!("#!/bin/sh\necho \"$@\" > {}\n", started.display())).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = profile(&home, &["open", "login", "--browser", fake.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let args = std::fs::read_to_string(&started).unwrap();
    let dir = home.join("profiles").join("login");
    assert!(args.contains(&format!("--user-data-dir={}", dir.display())), "{args}");
    for banned in ["--load-extension", "remote-debugging", "--enable-automation", "--headless", "DisableLoadExtension"]
    {
        assert!(!args.contains(banned), "{banned} in {args}");
    }
    assert!(dir.is_dir());
    let _ = std::fs::remove_dir_all(&home);
}
