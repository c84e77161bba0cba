//! Every `cargo xtask <COMMAND> --help` answers at once with its usage:
//! the xtask binary is run for each, and must exit within seconds without
//! installing or building anything.

use std::process::Command;
use std::time::{Duration, Instant};

const SUBCOMMANDS: [&str; 8] = ["build", "up", "test", "clippy", "bench", "fuzz", "tools", "help"];

#[test]
fn every_subcommand_answers_help_at_once() {
    for cmd in SUBCOMMANDS {
        for flag in ["--help", "-h"] {
            let start = Instant::now();
            // CARGO points nowhere: a build started by mistake fails
            // instead of running for minutes.
            let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
                .args([cmd, flag])
                .env("CARGO", "/nonexistent/cargo")
                .env("PATH", "/nonexistent")
                .output()
                .expect("the xtask binary runs");
            let took = start.elapsed();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{cmd} {flag}: {out:?}");
            assert!(text.contains(&format!("cargo xtask {cmd}")) && text.contains("USAGE:"), "{cmd} {flag}: {text}");
            assert!(took < Duration::from_secs(5), "{cmd} {flag} took {took:?}");
        }
    }
    // Control: the same binary with an unknown command fails, so the
    // successes above are the help answering.
    let out = Command::new(env!("CARGO_BIN_EXE_xtask")).args(["nope", "--help"]).output().unwrap();
    assert!(!out.status.success());
}
