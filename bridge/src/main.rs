//! `chaperone`: thin entry point; the logic lives in the `bridge` library.

use std::process::ExitCode;

use bridge::cli::Cmd;
use bridge::logging::warn_stderr;
use clap::Parser;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(origin) = bridge::native_host::caller(&args) {
        // Started by Chromium or Firefox: stdout is the native-messaging
        // channel, so logs go to stderr only.
        bridge::logging::init(false);
        let origin = origin.to_string();
        return match bridge::home::Home::resolve(None).and_then(|home| bridge::native_host::run(&origin, &home)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                warn_stderr(&format!("chaperone native host: {e}"));
                ExitCode::FAILURE
            }
        };
    }
    let cli = bridge::cli::Cli::parse();
    // The daemon (`serve`, and `up`, which runs it in-process) also logs to
    // HOME/logs/ once its home is ready; every other command logs to stderr
    // only.
    let runs_daemon = matches!(&cli.command, Cmd::Serve { no_log_file: false, .. } | Cmd::Up { .. });
    bridge::logging::init(runs_daemon);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            warn_stderr(&format!("error: cannot start the async runtime: {e}"));
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(bridge::cli::run(cli)) {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(e) => {
            // Not through tracing: a plain line, never cut, for the person
            // (or the process that started this daemon) to read.
            warn_stderr(&format!("error: {e}"));
            ExitCode::FAILURE
        }
    }
}
