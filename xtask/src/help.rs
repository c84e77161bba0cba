//! `cargo xtask <COMMAND> --help` (or `-h`): that command's help, printed
//! before anything is installed or built.

/// Every subcommand and its help text.
pub const SUBCOMMANDS: &[(&str, &str)] = &[
    (
        "build",
        "\
cargo xtask build — build the unpacked MV3 extension

USAGE:
    cargo xtask build

Installs missing build tools (the wasm32 target, wasm-bindgen-cli, binaryen),
then builds the service worker and popup (WASM) and the content script (plain
JS through wasm2js) into dist/extension/.
",
    ),
    (
        "up",
        "\
cargo xtask up — build everything and start Chaperone

USAGE:
    cargo xtask up [ARGS…]

Installs missing tools (Chromium, chromium-driver and Xvfb too when run as
root), builds the extension and the bridge, then runs
    target/debug/chaperone up --extension-dir dist/extension ARGS…
which sets up the home, starts the bridge and a Chromium with the extension on
an owned profile, and prints how to connect an MCP client (the absolute path
of the binary and a JSON block to paste). ARGS are `chaperone up`'s own
(`--home DIR`, `--profile NAME`, `--browser PATH`, …; see
`target/debug/chaperone up --help` once built).
",
    ),
    (
        "test",
        "\
cargo xtask test — the whole check, as CI runs it

USAGE:
    cargo xtask test [ARGS…]

Installs missing tools, runs clippy (warnings fail the run: the workspace with
--all-targets, then worker and content on wasm32), builds the extension and
the bridge, then runs `cargo test --workspace ARGS…` with
CHAPERONE_EXTENSION_DIR and CHAPERONE_BIN set. ARGS after `--` go to the test
binaries (`cargo xtask test -- --test-threads=1`). Also installs the model
tier's test model and its llama.cpp server into target/model-tier/ (once) and
sets CHAPERONE_TEST_MODEL and CHAPERONE_MODEL_SERVER_DIR.
",
    ),
    (
        "clippy",
        "\
cargo xtask clippy — only the clippy step of `test`

USAGE:
    cargo xtask clippy
",
    ),
    (
        "bench",
        "\
cargo xtask bench — the benchmarks through the real stack

USAGE:
    cargo xtask bench [ARGS…]

Builds the extension and the bridge (release), then runs
`tests/src/bin/bench.rs` with ARGS (see BENCHMARKS.md); results also in
target/bench/<suite>.json. With no suite named or with `model`, the model
tier's test model and server are installed into target/model-tier/ first.
",
    ),
    (
        "fuzz",
        "\
cargo xtask fuzz — coverage-guided fuzzing of the decoders

USAGE:
    cargo xtask fuzz [--secs N] [TARGET…]

cargo-fuzz on a nightly toolchain with AddressSanitizer: each target (all when
none is named) for N seconds (default 60), seeded from fuzz/corpus/TARGET;
prints executions per target. Not part of `test` or CI.
",
    ),
    (
        "tools",
        "\
cargo xtask tools — only check and install the build and test tools

USAGE:
    cargo xtask tools [--browser] [--model]

--browser also installs Chromium, chromium-driver and Xvfb (as root).
--model also installs the model tier's test model and its llama.cpp server
into target/model-tier/ (what `test` and `bench model` install themselves).
",
    ),
    (
        "help",
        "\
cargo xtask help — the list of commands

USAGE:
    cargo xtask help
",
    ),
];

/// Whether the arguments after the subcommand ask for its help: `--help`
/// or `-h` before any `--` (after it, they belong to what the command runs).
pub fn wants_help(rest: &[String]) -> bool {
    rest.iter().take_while(|a| a.as_str() != "--").any(|a| a == "--help" || a == "-h")
}

/// The help of `cmd`, if it is a subcommand.
pub fn of(cmd: &str) -> Option<&'static str> {
    SUBCOMMANDS.iter().find(|(name, _)| *name == cmd).map(|(_, text)| *text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_is_asked_before_a_double_dash_only() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let cases = [
            ("long", v(&["--help"]), true),
            ("short", v(&["-h"]), true),
            ("after other args", v(&["--home", "/x", "--help"]), true),
            ("none", v(&["--home", "/x"]), false),
            ("for the test binaries", v(&["--", "--help"]), false),
            ("a value that only contains it", v(&["--helpful"]), false),
        ];
        for (name, args, want) in cases {
            assert_eq!(wants_help(&args), want, "{name}");
        }
    }

    #[test]
    fn every_subcommand_has_usage() {
        for (name, text) in SUBCOMMANDS {
            assert!(text.contains(&format!("cargo xtask {name}")), "{name}");
            assert!(text.contains("USAGE:"), "{name}");
            assert!(super::super::HELP.contains(&format!("    {name}")), "{name} is listed in the main help");
        }
    }
}
