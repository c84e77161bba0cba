//! `chaperone`: thin entry point; the logic lives in the `bridge` library.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let first = std::env::args().nth(1);
    if bridge::native_host::is_native_host_invocation(first.as_deref()) {
        // Started by Chrome: stdout is the native-messaging channel, so
        // logs go to stderr only.
        init_tracing();
        let origin = first.unwrap_or_default();
        return match bridge::home::Home::resolve(None).and_then(|home| bridge::native_host::run(&origin, &home)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("chaperone native host: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let cli = bridge::cli::Cli::parse();
    init_tracing();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(bridge::cli::run(cli)) {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("CHAPERONE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_target(false).init();
}
