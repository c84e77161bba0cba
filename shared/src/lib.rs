//! `shared`: everything both sides of Chaperone must agree on.
//!
//! This crate does no IO and compiles to `wasm32-unknown-unknown`.
//!
//! # Modules
//!
//! The wire and its vocabulary:
//! - `protocol`: the frames of the extension socket (`/ext`) and the
//!   native-messaging bootstrap; `command`: what the bridge asks the
//!   extension to do; `tab`: a tab's id;
//! - `tools`: the agent's MCP tool arguments; `error`: stable error codes;
//!   `limits`: sizes and counts both sides bound;
//! - `action`: page actions, the facts of their element and the gate that
//!   goes with them; `audit`: the one typed audit row.
//!
//! Pages as the agent sees them:
//! - `snapshot`: the snapshot model and its text rendering; `untrusted`:
//!   the wrapper around page-derived data; `text`: which characters can
//!   reorder or hide text; `challenge`: CAPTCHA, login and block-page
//!   detection; `input`: which `<input type>`s take typed text; `csp`:
//!   whether a page's policy lets the content script run as WebAssembly.
//!
//! Decisions (pure functions with table tests):
//! - `risk`: an action's risk (with look-alike letters folded by
//!   `confusable`); `sensitive`: sensitive fields; `policy`: what a risk
//!   on a site does; `gate`: the decision about one action, the bridge's
//!   before it dispatches and the extension's before it acts, with one
//!   rule for sensitive fields; `navigation` and `url` (with `Origin`):
//!   which URLs an agent may load; `redact`: secrets masked in outgoing
//!   text; `mask`: one-line action summaries, masked; `names`: the shape
//!   of secret, flow and profile names.
//!
//! Subsystems:
//! - `handoff`: tabs handed to the person; `sessions`: MCP sessions and
//!   their tabs; `files` and `downloads`: uploads and downloads, their
//!   names, risk and attribution; `flow`, `record`, `replay` and `target`:
//!   the person's recorded flows, what they may hold, how they are
//!   replayed and what a changed target is;
//! - `network` and `typed_secrets`: the agent's tabs' captured traffic, its
//!   HAR export, and stored secrets recognised in it without their values;
//!   `withhold`: what of it is the person's (handed tabs, pages where a
//!   sensitive field was filled);
//! - `model`: the local model tier's request, candidates, answer and trace;
//! - `dashboard`: the review dashboard's and session report's data and who
//!   may read it.
//!
//! The modules' imports form a DAG, each module using only those listed
//! after it (`tests/tests/it/imports.rs` checks this table against every
//! module's `crate::` paths, both ways; a module's tests may use any):
//!
//! ```text
//! tools       protocol, network, names
//! dashboard   url, audit, risk
//! model       snapshot, limits
//! protocol    withhold, network, handoff, command, replay, action, files, sessions, record, flow, snapshot, tab, error, challenge, audit, policy
//! handoff     command, tab, text, url, error, challenge
//! command     action, flow, snapshot, tab
//! gate        replay, action, policy, risk, redact, url, error, sensitive, audit, limits
//! mask        action, files, snapshot, sensitive, limits
//! navigation  policy, risk, redact, error
//! replay      action, target, flow, risk, snapshot, url, error, audit
//! action      target, files, policy, risk, snapshot, sensitive, audit, limits
//! target      snapshot
//! downloads   files, sessions, tab
//! files       tab, text, error, limits
//! sessions    tab, text, error
//! record      flow, url, sensitive, limits
//! flow        risk
//! policy      risk, url, audit, limits
//! url         error, limits
//! error       challenge, audit, limits
//! audit       risk
//! risk        text, sensitive, input, limits
//! snapshot    redact, text, challenge, limits
//! typed_secrets  redact, network
//! withhold    network
//! redact      network, names, sensitive
//! network     tab
//! challenge   sensitive, input, limits
//! sensitive   confusable
//! names, tab, text, untrusted, confusable, input, limits, csp    (none)
//! ```

/// One `#[test]` per language table (`name => "code"`), each calling the
/// module's own `table_test(code)`, and a test that every table in `$tables`
/// (a slice of `(code, …)`) has one: the per-language table tests of
/// `risk::languages` and `challenge::lang`.
#[cfg(test)]
#[macro_export]
macro_rules! table_tests {
    ($tables:ident; $($name:ident => $code:literal),* $(,)?) => {
        $(#[test] fn $name() { table_test($code); })*

        #[test]
        fn every_table_has_its_test() {
            let tested = [$($code),*];
            for (code, _) in $tables {
                assert!(tested.contains(code), "no table test for {code}");
            }
        }
    };
}

pub mod action;
pub mod audit;
pub mod challenge;
pub mod command;
pub mod confusable;
pub mod csp;
pub mod dashboard;
pub mod downloads;
pub mod error;
pub mod files;
pub mod flow;
pub mod gate;
pub mod handoff;
pub mod input;
pub mod limits;
pub mod mask;
pub mod model;
pub mod names;
pub mod navigation;
pub mod network;
pub mod policy;
// Wire frames: each is built, sent or parsed once and dropped, never
// stored in bulk, so the size of their largest variant costs nothing that
// boxing it would save.
#[allow(clippy::large_enum_variant)]
pub mod protocol;
pub mod record;
pub mod redact;
pub mod replay;
pub mod risk;
pub mod sensitive;
pub mod sessions;
pub mod snapshot;
pub mod tab;
pub mod target;
pub mod text;
pub mod tools;
pub mod typed_secrets;
pub mod untrusted;
pub mod url;
pub mod withhold;

/// FNV-1a (64-bit) of a string: a cheap, stable hash for identities that
/// must match across a page's lifetime (an element's tree position, a hidden
/// field's value, challenge words), never for secrecy.
pub fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Version string exchanged in `hello`/`welcome` and written to `daemon.json`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Name of the native-messaging host (`chrome.runtime.connectNative`).
pub const NATIVE_HOST_NAME: &str = "com.chaperone.bridge";

/// The extension id derived from the fixed `key` in `manifest/manifest.json`.
/// `cargo xtask build` checks that the manifest key still produces this id.
pub const EXTENSION_ID: &str = "afcoapfcldjoabchcfnblibmoninpacc";

/// Firefox: the add-on id fixed in `manifest/firefox.json`
/// (`browser_specific_settings.gecko.id`); the native host's
/// `allowed_extensions` names it, and Firefox passes it to the host.
pub const FIREFOX_ADDON_ID: &str = "chaperone@chaperone.dev";
/// Firefox: the `moz-extension://` host of our add-on in the profiles
/// Chaperone owns. Firefox picks a random one per profile unless the
/// profile's `extensions.webextensions.uuids` pref names it, which
/// `chaperone up` writes into the profile's `user.js`; the bridge accepts
/// `/ext` sockets whose `Origin` is this (ARCHITECTURE.md, "Firefox").
pub const FIREFOX_EXTENSION_UUID: &str = "5b0a7e4e-2c6f-4a51-9d3b-6c1f0e8a7d24";

/// The `Origin` of the extension's own pages in Chromium.
pub fn chromium_extension_origin() -> String {
    format!("chrome-extension://{EXTENSION_ID}")
}

/// The `Origin` of the extension's own pages in a Firefox profile
/// Chaperone owns.
pub fn firefox_extension_origin() -> String {
    format!("moz-extension://{FIREFOX_EXTENSION_UUID}")
}
