//! `@puppeteer/replay`, the replayer of Chrome DevTools Recorder files,
//! installed once per checkout under `target/npm` and run on a file.
//!
//! Several tests replay files at the same time: the install is done once,
//! behind a lock, and counts only when it finished (a stamp file), so a
//! test never runs a half-installed package.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

static INSTALL: Mutex<()> = Mutex::new(());
static RUN: AtomicUsize = AtomicUsize::new(0);

/// The npm folder, with `@puppeteer/replay` and `puppeteer-core` installed.
fn npm_dir() -> PathBuf {
    let dir = crate::workspace_root().join("target/npm");
    let stamp = dir.join(".replay-installed");
    let _once = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
    if !stamp.exists() {
        std::fs::create_dir_all(&dir).expect("create target/npm");
        let status = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--silent", "@puppeteer/replay@3", "puppeteer-core@24"])
            .current_dir(&dir)
            .status()
            .expect("run npm");
        assert!(status.success(), "npm install @puppeteer/replay");
        std::fs::write(&stamp, b"").expect("write the install stamp");
    }
    dir
}

/// Replays the Recorder file `file` with `tests/replay-check.mjs` in the
/// test browser; its output (the last line is the page's state as JSON).
pub fn puppeteer_replay(file: &Path) -> Output {
    let dir = npm_dir();
    let n = RUN.fetch_add(1, Ordering::Relaxed);
    let script = dir.join(format!("replay-check-{}-{n}.mjs", std::process::id()));
    std::fs::copy(crate::workspace_root().join("tests/replay-check.mjs"), &script).expect("copy replay-check.mjs");
    let out = Command::new("node").arg(&script).arg(file).arg(crate::browser_path()).output().expect("run node");
    let _ = std::fs::remove_file(&script);
    out
}
