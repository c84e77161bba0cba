//! `chaperone up --headless`: daemon + owned-profile Chromium, no CDP.

use std::fs::File;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tests::{browser_path, chaperone_bin, extension_dir, poll, process_alive, send_signal, temp_dir};

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

fn status_json(home: &std::path::Path) -> serde_json::Value {
    let out = Command::new(chaperone_bin()).arg("status").arg("--home").arg(home).arg("--json").output().unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("chaperone status --json printed no JSON ({e}): {}", String::from_utf8_lossy(&out.stdout))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn up_connects_a_headless_browser_and_stops_on_ctrl_c() {
    let home = temp_dir("up-home");
    let logs = temp_dir("up-logs");
    let out_path = logs.path().join("up.stdout");
    let err_path = logs.path().join("up.stderr");
    let mut up = Command::new(chaperone_bin())
        .arg("up")
        .arg("--home")
        .arg(home.path())
        .arg("--headless")
        .arg("--browser")
        .arg(browser_path())
        .arg("--profile")
        .arg("e2e")
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

    // It prints how to connect an agent once the extension is connected.
    let started = Instant::now();
    loop {
        let out = std::fs::read_to_string(&out_path).unwrap_or_default();
        if out.contains("chaperone mcp") && out.contains("/mcp") {
            break;
        }
        if let Ok(Some(code)) = up.try_wait() {
            panic!("chaperone up exited early ({code}):\n{}", logs_now());
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = send_signal(up.id(), "INT");
            panic!("chaperone up did not say how to connect an agent within 60 s:\n{}", logs_now());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let out = std::fs::read_to_string(&out_path).unwrap();
    assert!(out.contains(&home.path().display().to_string()), "the connect hint should name the home:\n{out}");
    // The binary by its absolute path (it is not on the PATH after
    // `cargo xtask up`), and JSON a person can paste into a client's config.
    let bin = std::fs::canonicalize(chaperone_bin()).unwrap();
    assert!(out.contains(&format!("{} mcp --home", bin.display())), "no absolute binary path:\n{out}");
    let json_start = out.find("    {").expect("a JSON block");
    let json_end = json_start + out[json_start..].find("\n    }").expect("its end") + 6;
    let block: serde_json::Value = serde_json::from_str(&out[json_start..json_end]).unwrap();
    let server = &block["mcpServers"]["chaperone"];
    assert_eq!(server["command"], serde_json::json!(bin.display().to_string()), "{block}");
    assert_eq!(server["args"][0], "mcp", "{block}");
    assert!(out.contains("\"servers\""), "no VS Code block:\n{out}");
    assert!(
        !out.contains(std::fs::read_to_string(home.path().join("mcp-token")).unwrap().trim()),
        "up printed the token"
    );

    // `chaperone status` sees the connected browser.
    let st = status_json(home.path());
    assert_eq!(st["running"], serde_json::json!(true), "{st}");
    let browsers = st["status"]["browsers"].as_array().cloned().unwrap_or_default();
    assert!(!browsers.is_empty(), "no browser in chaperone status: {st}");

    // The owned profile's Chromium is running, with no remote-debugging port.
    let profile = home.path().join("profiles").join("e2e");
    let needle = format!("--user-data-dir={}", profile.display());
    let chromium = pids_mentioning(&needle);
    assert!(!chromium.is_empty(), "no Chromium with {needle}");
    for pid in &chromium {
        let cmd =
            String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default()).to_string();
        assert!(!cmd.contains("--remote-debugging"), "up opened a debugging port: {cmd}");
    }

    // Ctrl-C: clean exit, browser gone, daemon gone.
    assert!(send_signal(up.id(), "INT"));
    let deadline = Instant::now() + Duration::from_secs(20);
    let code = loop {
        if let Some(code) = up.try_wait().unwrap() {
            break code;
        }
        if Instant::now() > deadline {
            let _ = up.kill();
            panic!("chaperone up did not exit within 20 s of SIGINT:\n{}", logs_now());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(code.success(), "chaperone up exited with {code}:\n{}", logs_now());
    let gone = poll(Duration::from_secs(10), Duration::from_millis(100), || async {
        pids_mentioning(&needle).is_empty().then_some(())
    })
    .await;
    assert!(gone.is_some(), "Chromium still running after up exited: {:?}", pids_mentioning(&needle));
    let st = status_json(home.path());
    assert_eq!(st["running"], serde_json::json!(false), "the daemon outlived up: {st}");
}
