//! `shared`: everything both sides of Chaperone must agree on.
//!
//! Wire types for the extension socket (`protocol`), the agent's tool
//! arguments (`tools`), stable error codes (`error`), limits (`limits`),
//! navigation URL rules (`url`), the snapshot model and its text rendering
//! (`snapshot`), the untrusted-content wrapper (`untrusted`), action risk
//! classification (`risk`, with look-alike letters folded by `confusable`) and
//! the approval policy (`policy`).
//!
//! This crate does no IO and compiles to `wasm32-unknown-unknown`.

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
pub mod confusable;
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
pub mod text;
pub mod tools;
pub mod untrusted;
pub mod url;

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
