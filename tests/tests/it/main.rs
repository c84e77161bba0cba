//! The `tests` crate's test binary (one link for all): the harness's own
//! tests, the daemon without a browser, snapshot faithfulness against
//! Chromium's accessibility tree, WPT conformance, and the end-to-end
//! scenarios (`e2e`) in headless Chromium with the real extension, and the
//! import maps of the crates' `lib.rs` checked against their code
//! (`imports`).
//!
//! Run one area with a filter: `cargo test -p tests --test it e2e::lies`,
//! `… --test it daemon::`, `… --test it faithfulness`.

mod conformance;
mod daemon;
mod e2e;
mod faithfulness;
mod harness;
mod imports;
