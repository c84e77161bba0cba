//! Helpers for the end-to-end tests: one helper per boundary.
//!
//! - [`FixtureServer`]: serves `fixtures/sites/` on 127.0.0.1 with per-directory
//!   headers (`_headers` files, see `fixtures/README.md`).
//! - [`Expectations`]: the data-driven snapshot expectations next to each
//!   fixture page (`<page>.expect.txt`).
//! - [`Daemon`]: `chaperone serve --home <temp> --port 0`, its tokens and logs.
//! - [`Browser`]: headless Chromium with the unpacked extension, a fresh
//!   user-data-dir and the native-messaging host installed; [`Cdp`] to look
//!   inside it.
//! - [`Mcp`]: an MCP streamable-HTTP client for `/mcp`; [`StdioMcp`] for
//!   `chaperone mcp`.
//! - [`ext_socket`]: the `/ext` socket from both sides — the real
//!   extension's frames ([`ExtFrames`]) and a second browser holding the
//!   extension token ([`Rogue`]).
//! - [`ax`]: Chromium's accessibility tree as the yardstick (interactive
//!   nodes, element tagging, alignment with snapshot lines).
//! - [`wait_for_extension`]: polls `GET /status` until the extension is
//!   connected.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub mod ax;
pub mod bidi;
mod browser;
mod cdp;
mod daemon;
mod expect;
pub mod ext_socket;
pub mod firefox;
mod fixtures;
pub mod flowshop;
pub mod har;
mod human;
pub mod leaks;
pub mod libraryapi;
mod mcp;
pub mod model_server;
pub mod netapp;
mod replay;
mod stack;
mod stdio;

pub use browser::{Browser, BrowserOptions};
pub use cdp::{AxNode, Cdp, CdpSession, TargetInfo};
pub use daemon::{CliOutput, Daemon, wait_for_extension, wait_for_extension_within};
pub use expect::{
    Choice, ChoiceLine, Expectation, Expectations, ParsedLine, elements, line_after, parse_choices, parse_line,
    ref_lines, ref_of,
};
pub use ext_socket::{ExtFrames, Rogue};
pub use fixtures::{FixtureServer, download_bytes};
pub use human::{Human, ShownRequest, with_person};
pub use mcp::{Mcp, ToolResult};
pub use replay::puppeteer_replay;
pub use stack::Stack;
pub use stdio::StdioMcp;

/// The workspace root (the parent of this crate's directory).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// `fixtures/sites` in the workspace.
pub fn sites_dir() -> PathBuf {
    workspace_root().join("fixtures").join("sites")
}

/// Every fixture page under `fixtures/sites/`, as `site/…/page.html`,
/// sorted: `*.html` files that are not symlinks (the `strict/` copies), not
/// `*.frame.html` (documents that only live inside an iframe) and not
/// `*.bulk.html` (stress pages, e.g. a 5,000-option select, that their own
/// tests load), not `*.moves.html` (pages that leave themselves when
/// loaded, such as a meta refresh).
pub fn fixture_pages() -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            let path = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if ft.is_symlink() || name.starts_with('.') {
                continue;
            }
            if ft.is_dir() {
                walk(&path, root, out);
            } else if name.ends_with(".html")
                && !name.ends_with(".frame.html")
                && !name.ends_with(".bulk.html")
                && !name.ends_with(".moves.html")
            {
                let rel = path.strip_prefix(root).unwrap_or(&path);
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let root = sites_dir();
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out.sort();
    out
}

fn path_from_env(var: &str, default: PathBuf) -> PathBuf {
    match std::env::var_os(var) {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => default,
    }
}

/// `CHAPERONE_BIN`, else `<workspace>/target/debug/chaperone`. Panics with a
/// hint when it does not exist.
pub fn chaperone_bin() -> PathBuf {
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace_root().join("target"));
    let p = path_from_env("CHAPERONE_BIN", target.join("debug").join("chaperone"));
    assert!(
        p.is_file(),
        "the chaperone binary is missing at {} (set CHAPERONE_BIN, or run `cargo xtask build` / `cargo build -p bridge`)",
        p.display()
    );
    p
}

/// `CHAPERONE_EXTENSION_DIR`, else `<workspace>/dist/extension`. Panics
/// with a hint when it holds no manifest.
pub fn extension_dir() -> PathBuf {
    let p = path_from_env("CHAPERONE_EXTENSION_DIR", workspace_root().join("dist").join("extension"));
    assert!(
        p.join("manifest.json").is_file(),
        "the unpacked extension is missing at {} (no manifest.json): run `cargo xtask build` (or set CHAPERONE_EXTENSION_DIR)",
        p.display()
    );
    p
}

/// The bodies build: `CHAPERONE_EXTENSION_BODIES_DIR`, else the sibling
/// `<extension dir>-bodies` (`dist/extension-bodies`). Panics with a hint
/// when it holds no manifest.
pub fn extension_bodies_dir() -> PathBuf {
    let default = extension_dir();
    let name = default.file_name().map_or_else(|| "extension".into(), |n| n.to_string_lossy().into_owned());
    let p = path_from_env("CHAPERONE_EXTENSION_BODIES_DIR", default.with_file_name(format!("{name}-bodies")));
    assert!(
        p.join("manifest.json").is_file(),
        "the bodies build is missing at {} (no manifest.json): run `cargo xtask build` (or set CHAPERONE_EXTENSION_BODIES_DIR)",
        p.display()
    );
    p
}

/// `CHAPERONE_TEST_BROWSER`, else `/usr/bin/chromium`.
pub fn browser_path() -> PathBuf {
    let p = path_from_env("CHAPERONE_TEST_BROWSER", PathBuf::from("/usr/bin/chromium"));
    assert!(p.is_file(), "no Chromium at {} (set CHAPERONE_TEST_BROWSER)", p.display());
    p
}

/// True when the tests run as root (Chromium then needs `--no-sandbox`).
pub fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("Uid:")).and_then(|l| l.split_whitespace().nth(2).map(|euid| euid == "0"))
        })
        .unwrap_or(false)
}

/// A fresh temporary directory (0700), removed on drop.
pub fn temp_dir(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("chaperone-{prefix}-")).tempdir().expect("create a temp dir")
}

/// Polls `check` every `every` until it returns `Some`, or `None` after `within`.
pub async fn poll<T, F, Fut>(within: Duration, every: Duration, mut check: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + within;
    loop {
        if let Some(v) = check().await {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(every).await;
    }
}

/// The last `max_lines` lines of a log file (for panic messages).
pub fn tail(path: &Path, max_lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(max_lines);
    lines[start..].join("\n")
}

/// Sends a signal to a process with the `kill` utility (no unsafe code here).
pub fn send_signal(pid: u32, signal: &str) -> bool {
    std::process::Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// True while a process with this pid exists and is not a zombie.
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            // The state follows the parenthesised command name.
            let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next());
            !matches!(state, Some("Z") | Some("X") | None)
        }
        Err(_) => false,
    }
}
