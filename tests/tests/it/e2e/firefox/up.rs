//! `chaperone up --browser firefox-esr --headless`: the daemon and Firefox
//! on an owned profile in Firefox's format, with the add-on connected and
//! no port open for other programs (no BiDi/CDP, no Marionette).

use std::fs::File;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tests::firefox::firefox_path;
use tests::{chaperone_bin, extension_dir, poll, process_alive, send_signal, temp_dir};

/// Pids of processes whose command line mentions `needle`.
fn pids_mentioning(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else { return out };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline"))
            && String::from_utf8_lossy(&cmd).contains(needle)
            && process_alive(pid)
        {
            out.push(pid);
        }
    }
    out
}

/// Every process whose parent chain reaches `root` (and `root`).
fn descendants(root: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let Some(after) = stat.rsplit_once(')').map(|(_, a)| a.to_string()) else { continue };
        if let Some(ppid) = after.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok()) {
            parent_of.push((pid, ppid));
        }
    }
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        out.extend(parent_of.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    out
}

/// Inodes of listening TCP sockets (`/proc/net/tcp{,6}`, state 0A).
fn listening_inodes() -> Vec<String> {
    let mut out = Vec::new();
    for f in ["/proc/net/tcp", "/proc/net/tcp6"] {
        for line in std::fs::read_to_string(f).unwrap_or_default().lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.get(3) == Some(&"0A")
                && let Some(inode) = cols.get(9)
            {
                out.push(inode.to_string());
            }
        }
    }
    out
}

/// The listening sockets `pid` holds.
fn listening_sockets_of(pid: u32, listening: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for fd in std::fs::read_dir(format!("/proc/{pid}/fd")).into_iter().flatten().flatten() {
        if let Ok(target) = std::fs::read_link(fd.path()) {
            let t = target.to_string_lossy().to_string();
            if let Some(inode) = t.strip_prefix("socket:[").and_then(|s| s.strip_suffix(']'))
                && listening.iter().any(|l| l == inode)
            {
                out.push(inode.to_string());
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_starts_firefox_on_an_owned_profile_with_no_port_open() {
    let home = temp_dir("ff-up-home");
    let logs = temp_dir("ff-up-logs");
    let out_path = logs.path().join("up.stdout");
    let err_path = logs.path().join("up.stderr");
    let mut up = Command::new(chaperone_bin())
        .args(["up", "--headless", "--profile", "fx", "--connect-timeout", "90", "--home"])
        .arg(home.path())
        .arg("--browser")
        .arg(firefox_path())
        .arg("--extension-dir")
        .arg(extension_dir())
        .stdin(Stdio::null())
        .stdout(File::create(&out_path).unwrap())
        .stderr(File::create(&err_path).unwrap())
        .spawn()
        .expect("spawn chaperone up");
    let logs_now = || {
        format!(
            "--- stdout ---\n{}\n--- stderr ---\n{}",
            std::fs::read_to_string(&out_path).unwrap_or_default(),
            tests::tail(&err_path, 30)
        )
    };
    let started = Instant::now();
    loop {
        let out = std::fs::read_to_string(&out_path).unwrap_or_default();
        if out.contains("chaperone mcp") && out.contains("/mcp") {
            break;
        }
        if let Ok(Some(code)) = up.try_wait() {
            panic!("chaperone up exited early ({code}):\n{}", logs_now());
        }
        if started.elapsed() > Duration::from_secs(100) {
            let _ = send_signal(up.id(), "INT");
            panic!("Firefox's add-on did not connect within 100 s:\n{}", logs_now());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // The profile is Firefox's, owned, with the add-on and its prefs.
    let profile = home.path().join("profiles").join("fx");
    let user_js = std::fs::read_to_string(profile.join("user.js")).expect("user.js");
    assert!(user_js.contains(shared::FIREFOX_EXTENSION_UUID), "{user_js}");
    let proxy = std::fs::read_to_string(profile.join("extensions").join(shared::FIREFOX_ADDON_ID)).expect("proxy file");
    assert!(proxy.trim().ends_with("/firefox"), "the proxy names {proxy}");
    let manifest =
        profile.join("home/.mozilla/native-messaging-hosts").join(format!("{}.json", shared::NATIVE_HOST_NAME));
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest).expect("host manifest")).unwrap();
    assert_eq!(manifest["allowed_extensions"], serde_json::json!([shared::FIREFOX_ADDON_ID]), "{manifest}");
    assert!(manifest.get("allowed_origins").is_none(), "{manifest}");

    // Firefox runs on it; no process of it listens on a TCP port, and its
    // command line asks for no debugging protocol.
    let needle = format!("{}", profile.display());
    let firefox = pids_mentioning(&needle);
    assert!(!firefox.is_empty(), "no Firefox with {needle}");
    let listening = listening_inodes();
    for root in &firefox {
        for pid in descendants(*root) {
            let cmd = String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default())
                .replace('\0', " ");
            for banned in ["remote-debugging", "marionette", "start-debugger-server"] {
                assert!(!cmd.contains(banned), "up asked Firefox for {banned}: {cmd}");
            }
            let held = listening_sockets_of(pid, &listening);
            assert!(held.is_empty(), "Firefox process {pid} listens on a TCP port ({held:?}): {cmd}");
        }
    }
    // Control: the check sees a listening socket where there is one (the daemon's).
    let daemon_listens = listening_sockets_of(up.id(), &listening);
    assert!(!daemon_listens.is_empty(), "the socket check found not even the daemon's port");

    // The profile is in use while Firefox has it: `profile rm` refuses.
    let rm = Command::new(chaperone_bin()).args(["profile", "rm", "fx", "--home"]).arg(home.path()).output().unwrap();
    assert!(!rm.status.success(), "profile rm removed a profile Firefox has open");
    assert!(profile.join("user.js").exists());

    // Ctrl-C: clean exit, Firefox gone.
    assert!(send_signal(up.id(), "INT"));
    let deadline = Instant::now() + Duration::from_secs(30);
    let code = loop {
        if let Some(code) = up.try_wait().unwrap() {
            break code;
        }
        if Instant::now() > deadline {
            let _ = up.kill();
            panic!("chaperone up did not exit within 30 s of SIGINT:\n{}", logs_now());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(code.success(), "chaperone up exited with {code}:\n{}", logs_now());
    let gone = poll(Duration::from_secs(15), Duration::from_millis(100), || async {
        pids_mentioning(&needle).is_empty().then_some(())
    })
    .await;
    assert!(gone.is_some(), "Firefox still running after up exited");
}
