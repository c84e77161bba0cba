//! The bridge's integration tests, one binary (one link) for all of them.
//! Each module is one area; `common` has the helpers they share: a bridge
//! on an ephemeral loopback port, raw HTTP, WebSocket clients, the fake
//! extensions, an MCP client, and the log capture.
//!
//! Run one area with `cargo test -p bridge --test it security::`.

mod actions;
mod api_cli;
mod app_oneshot;
mod audit_rows;
mod cli;
mod common;
mod deep_json;
mod flows;
mod logging;
mod mcp;
mod one_browser;
mod secrets;
mod security;
mod sessions;
