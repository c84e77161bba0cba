//! The bridge library; `main.rs` is a thin CLI over it.
//!
//! - [`home`]: the home directory, tokens, `daemon.json`, the one-daemon lock.
//! - [`config`]: what `serve` runs with.
//! - [`server`]: `run(config, listener, shutdown)` and `app(state) -> Router`:
//!   the `/ext` socket, the `/mcp` endpoint, `/status`, and the guards.
//! - [`native_host`]: Chrome's native-messaging bootstrap.
//! - [`launcher`]: finding and starting Chromium on an owned profile.
//! - [`profiles`]: `chaperone profile …`: owned profiles, their names and locks.
//! - [`logging`]: redacted `tracing` output to stderr and the daily log file.
//! - [`proxy`]: `chaperone mcp`, a stdio MCP server forwarding to the daemon.
//! - [`secrets`]: the encrypted secret store behind `chaperone secret`.
//! - [`flows`]: the flow store behind `chaperone flow` and the flow tools.
//! - [`flow_cli`]: `chaperone flow …`; [`recorder`]: Chrome DevTools Recorder JSON.
//! - [`api_cli`]: `chaperone api learn|client`, over the `forge` crate.
//! - [`connect`]: what `chaperone up` prints to connect an agent.
//! - [`site_rules`]: the person's popup choices of site access (SQLite) and `chaperone sites`.
//! - [`time`]: the clock, RFC 3339 timestamps and calendar dates (a leaf).

pub mod api_cli;
pub mod audit;
pub mod cli;
pub mod config;
pub mod connect;
pub mod daemon;
pub mod dashboard_cli;
pub mod error;
pub mod firefox;
pub mod flow_cli;
pub mod flows;
pub mod home;
pub mod launcher;
pub mod logging;
pub mod model;
pub mod native_host;
pub mod profiles;
pub mod proxy;
pub mod recorder;
pub mod secrets;
pub mod server;
pub mod site_rules;
pub mod time;

pub use config::ServeConfig;
pub use error::Error;
pub use server::{app, run};
