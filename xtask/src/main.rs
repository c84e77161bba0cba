//! `cargo xtask …`: build the extension, run Chaperone, run the tests.
//!
//! Dependency-light on purpose (anyhow, serde_json, std::process).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use anyhow::{Context, Result, bail};

mod sha256;

const HELP: &str = "\
cargo xtask — Chaperone build helper

USAGE:
    cargo xtask <COMMAND> [ARGS…]

COMMANDS:
    build           Build the unpacked MV3 extension into dist/extension/
                    (service worker + popup WASM, content script as plain JS)
    up [ARGS…]      Build the extension and the bridge, then run
                    `target/debug/chaperone up --extension-dir dist/extension ARGS…`
    test [ARGS…]    Install missing tools, run clippy (warnings fail the run: the workspace
                    with --all-targets, then worker and content on wasm32), build the
                    extension and the bridge, then run `cargo test --workspace ARGS…` with
                    CHAPERONE_EXTENSION_DIR and CHAPERONE_BIN set
    clippy          Only the clippy step of `test`
    bench [ARGS…]   Build the extension and the bridge (release), then run the benchmarks
                    through the real stack (`tests/src/bin/bench.rs`; see BENCHMARKS.md);
                    results also in target/bench/<suite>.json
    tools           Only check/install the build and test tools
    help            Show this text

Tools are installed when missing: the wasm32-unknown-unknown target (rustup),
wasm-bindgen-cli of exactly the version in Cargo.lock (cargo install),
binaryen from xtask/npm/package-lock.json (npm ci into target/xtask-npm/),
and for `test`/`up`, when running as root, Debian's chromium + chromium-driver + xvfb.
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
            c.arg("up").arg("--extension-dir").arg(root.join("dist/extension")).args(&rest).current_dir(&root);
            return exec(c);
        }
        "test" => {
            let start = Instant::now();
            ensure_tools(&root, true)?;
            clippy(&root)?;
            build_extension(&root)?;
            cargo(&root, &["build", "-p", "bridge"])?;
            let ext = root.join("dist/extension");
            let bin = root.join("target/debug/chaperone");
            let mut c = Command::new(cargo_bin());
            c.arg("test").arg("--workspace").args(&rest).current_dir(&root);
            c.env("CHAPERONE_EXTENSION_DIR", &ext).env("CHAPERONE_BIN", &bin);
            let status = c.status().context("running cargo test")?;
            eprintln!("xtask: test finished in {:.1} s", start.elapsed().as_secs_f64());
            if !status.success() {
                bail!("cargo test failed ({status})");
            }
        }
        "bench" => {
            let start = Instant::now();
            ensure_tools(&root, true)?;
            build_extension(&root)?;
            cargo(&root, &["build", "--release", "-p", "bridge"])?;
            let mut c = Command::new(cargo_bin());
            c.args(["run", "--release", "-p", "tests", "--bin", "bench", "--"]).args(&rest).current_dir(&root);
            c.env("CHAPERONE_EXTENSION_DIR", root.join("dist/extension"))
                .env("CHAPERONE_BIN", root.join("target/release/chaperone"));
            run_cmd(&mut c)?;
            eprintln!("xtask: bench finished in {:.1} s", start.elapsed().as_secs_f64());
        }
        "clippy" => {
            ensure_tools(&root, false)?;
            clippy(&root)?;
        }
        "tools" => ensure_tools(&root, rest.iter().any(|a| a == "--browser"))?,
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

fn run_cmd(c: &mut Command) -> Result<()> {
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

fn have(program: &str) -> bool {
    Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success())
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

    // 5. Chromium for the end-to-end tests, and Xvfb for the ones that
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
    }
    Ok(())
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
/// `web`), content script (wasm2js; docs/design.md, "Build and test facts").
pub fn build_extension(root: &Path) -> Result<()> {
    let start = Instant::now();
    let manifest = check_manifest(root)?;
    let dist = root.join("dist/extension");
    if dist.exists() {
        fs::remove_dir_all(&dist).with_context(|| format!("removing {}", dist.display()))?;
    }
    fs::create_dir_all(&dist)?;

    build_worker(root, &dist)?;
    build_content(root, &dist)?;

    for entry in fs::read_dir(root.join("extension/static"))? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            fs::copy(entry.path(), dist.join(entry.file_name()))?;
        }
    }
    fs::write(dist.join("manifest.json"), manifest)?;

    for f in [
        "manifest.json",
        "background.js",
        "popup.html",
        "popup.js",
        "content.js",
        "worker/worker.js",
        "content/content.js",
    ] {
        if !dist.join(f).exists() {
            bail!("dist/extension/{f} is missing after the build");
        }
    }
    let content_size = fs::metadata(dist.join("content/content_bg.wasm.js"))?.len()
        + fs::metadata(dist.join("content/content_bg.js"))?.len();
    let worker_size = fs::metadata(dist.join("worker/worker_bg.wasm"))?.len();
    eprintln!(
        "xtask: built {} in {:.1} s (worker wasm {} KiB, content script {} KiB of JS)",
        dist.display(),
        start.elapsed().as_secs_f64(),
        worker_size / 1024,
        content_size / 1024
    );
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

fn build_content(root: &Path, dist: &Path) -> Result<()> {
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
    let optimised = work.join("content_bg.opt.wasm");
    run_cmd(
        Command::new(binaryen_bin(root, "wasm-opt"))
            .args(CONTENT_WASM_FEATURES)
            .args(["-O3", "--strip-producers"])
            // CHAPERONE_KEEP_NAMES=1 keeps the function names, so that a
            // CPU profile of the content script names Rust functions
            // (`cargo xtask bench` then lists them; a bigger bundle).
            .args(if keep_names { &["-g"][..] } else { &["--strip-debug"][..] })
            .arg(bindgen_dir.join("content_bg.wasm"))
            .arg("-o")
            .arg(&optimised),
    )?;
    let out = dist.join("content");
    fs::create_dir_all(&out)?;
    let js = out.join("content_bg.wasm.js");
    run_cmd(
        Command::new(binaryen_bin(root, "wasm2js"))
            .args(CONTENT_WASM_FEATURES)
            .arg("-O3")
            .args(if keep_names { &["-g"][..] } else { &[][..] })
            .arg(&optimised)
            .arg("-o")
            .arg(&js),
    )?;
    let converted = fs::read_to_string(&js)?;
    fs::write(&js, patch_memory_copy(&patch_memory_grow(&converted)?)?)?;

    let glue = fs::read_to_string(bindgen_dir.join("content.js"))?;
    let patched = glue.replace("\"./content_bg.wasm\"", "\"./content_bg.wasm.js\"");
    if patched == glue {
        bail!("wasm-bindgen's content.js does not import ./content_bg.wasm; the glue layout changed");
    }
    fs::write(out.join("content.js"), patched)?;
    fs::copy(bindgen_dir.join("content_bg.js"), out.join("content_bg.js"))?;
    Ok(())
}

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
    if wasm.len() < 8 || &wasm[..4] != b"\0asm" {
        bail!("not a wasm module");
    }
    let mut out = wasm[..8].to_vec();
    let mut i = 8;
    while i < wasm.len() {
        let start = i;
        let id = wasm[i];
        let (size, body) = leb(wasm, i + 1)?;
        let end = body.checked_add(size).filter(|&e| e <= wasm.len()).context("truncated wasm section")?;
        let skip = id == 0 && {
            let (len, at) = leb(wasm, body)?;
            wasm.get(at..at + len) == Some(name.as_bytes())
        };
        if !skip {
            out.extend_from_slice(&wasm[start..end]);
        }
        i = end;
    }
    Ok(out)
}

/// wasm2js turns `memory.copy` into a `copyWithin` call, a trip into the
/// engine's native code for every copy. The content script makes millions
/// of small ones (string and vector growth); copying up to 32 bytes in a
/// plain loop is several times cheaper. Overlapping ranges copy in the
/// safe direction, as `memory.copy` requires.
fn patch_memory_copy(js: &str) -> Result<String> {
    const ORIGINAL: &str = "bufferView.copyWithin(dest, source, source + size);";
    let start = js.find("function wasm2js_memory_copy(").context("wasm2js output has no wasm2js_memory_copy")?;
    let at = js[start..].find(ORIGINAL).context("wasm2js_memory_copy has an unexpected shape")? + start;
    let mut out = String::with_capacity(js.len() + 400);
    out.push_str(&js[..at]);
    out.push_str(
        "/* chaperone: small copies without a native call */ \
         if (size <= 32) { var i; \
           if (dest <= source) { for (i = 0; i < size; i++) bufferView[dest + i] = bufferView[source + i]; } \
           else { for (i = size - 1; i >= 0; i--) bufferView[dest + i] = bufferView[source + i]; } \
           return; } ",
    );
    out.push_str(&js[at..]);
    Ok(out)
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
    fn memory_copy_patch_copies_small_ranges_in_a_loop() {
        let js = "a\n  function wasm2js_memory_copy(dest, source, size) {\n    bufferView.copyWithin(dest, source, source + size);\n  }\n";
        let out = patch_memory_copy(js).unwrap();
        let small = out.find("if (size <= 32)").unwrap();
        assert!(small < out.find("copyWithin").unwrap(), "the loop must come first: {out}");
        assert!(out.contains("for (i = size - 1; i >= 0; i--)"), "overlap copying backwards: {out}");
        assert!(patch_memory_copy("nothing").is_err());
    }

    #[test]
    fn manifest_key_gives_the_pinned_id() {
        let root = workspace_root();
        check_manifest(&root).unwrap();
    }
}
