//! `cargo xtask bench` runs this (release build): Chaperone's benchmarks
//! through the real stack. See BENCHMARKS.md.
//!
//! ```text
//! bench [SUITE…] [--runs N] [--warmup N] [--cold N] [--no-profile] [--no-playwright] [--trace] [--model-intents N] [--out DIR]
//! bench --count-tokens FILE…
//! ```
//!
//! Exits 0 when targets are missed (it is a measurement; misses are
//! printed with ✗); non-zero only when the stack or a call fails.

#[path = "../bench/mod.rs"]
mod bench;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::json;

use bench::report::Suite;
use bench::{Bench, Config};

/// The suites, in the order they run. Add new ones here (e.g. `click`).
const SUITES: &[&str] =
    &["snapshot", "click", "files", "flows", "sessions", "network", "forge", "dashboard", "model", "firefox"];

async fn run_suite(name: &str, b: &mut Bench) -> Result<Suite> {
    match name {
        "snapshot" => bench::snapshot::run(b).await,
        "click" => bench::click::run(b).await,
        "files" => bench::files::run(b).await,
        "flows" => bench::flows::run(b).await,
        "sessions" => bench::sessions::run(b).await,
        "network" => bench::network::run(b).await,
        "forge" => bench::forge::run(b).await,
        "dashboard" => bench::dashboard::run(b).await,
        "model" => bench::model::run(b).await,
        "firefox" => bench::firefox::run(b).await,
        other => bail!("unknown suite {other} (known: {})", SUITES.join(", ")),
    }
}

fn main() -> ExitCode {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    match rt.block_on(real_main()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn real_main() -> Result<()> {
    let mut config = Config::default();
    let mut out = tests::workspace_root().join("target").join("bench");
    let mut suites: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = |what: &str| -> Result<usize> {
            args.next().and_then(|v| v.parse().ok()).with_context(|| format!("{what} needs a number"))
        };
        match a.as_str() {
            "--runs" => config.runs = num("--runs")?.max(1),
            "--warmup" => config.warmup = num("--warmup")?,
            "--cold" => config.cold_loads = num("--cold")?.max(1),
            // `cargo xtask bench -- --runs 5` (BENCHMARKS.md) may pass the `--` on.
            "--" => {}
            "--no-profile" => config.no_profile = true,
            "--no-playwright" => config.playwright = false,
            "--trace" => config.trace = true,
            "--model-intents" => config.model_intents = Some(num("--model-intents")?.max(1)),
            "--out" => out = PathBuf::from(args.next().context("--out needs a directory")?),
            "--count-tokens" => return count_tokens(args.by_ref().collect()),
            "-h" | "--help" => {
                println!(
                    "bench [SUITE…] [--runs N] [--warmup N] [--cold N] [--no-profile] [--no-playwright] [--trace] [--model-intents N] [--out DIR]\n       bench --count-tokens FILE…   (bytes and o200k_base tokens of each file, as the snapshot suite counts them)\nsuites: {}",
                    SUITES.join(", ")
                );
                return Ok(());
            }
            s if !s.starts_with('-') => suites.push(s.to_string()),
            other => bail!("unknown option {other}"),
        }
    }
    if suites.is_empty() {
        suites = SUITES.iter().map(|s| s.to_string()).collect();
    }
    for s in &suites {
        if !SUITES.contains(&s.as_str()) {
            bail!("unknown suite {s} (known: {})", SUITES.join(", "));
        }
    }
    config.model = suites.iter().any(|s| s == "model");

    let start = Instant::now();
    println!(
        "chaperone bench: {} (warm-up {}, {} timed runs, {} fresh loads), bridge {}",
        suites.join(", "),
        config.warmup,
        config.runs,
        config.cold_loads,
        tests::chaperone_bin().display()
    );
    let mut b = Bench::start(config.clone()).await?;
    println!("stack up in {:.1} s (chaperone {})", start.elapsed().as_secs_f64(), b.daemon.info.version);
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    for name in &suites {
        let t = Instant::now();
        let machine = bench::machine::start();
        let suite = run_suite(name, &mut b).await.with_context(|| format!("suite {name}"))?;
        let machine = machine.finish();
        bench::report::print(&suite);
        println!("\n{}", machine.line());
        let file = out.join(format!("{name}.json"));
        let doc = json!({
            "suite": name,
            "git_commit": git_commit(),
            "config": { "warmup": config.warmup, "runs": config.runs, "cold_loads": config.cold_loads },
            "wall_secs": t.elapsed().as_secs_f64(),
            "machine": machine,
            "result": suite,
        });
        std::fs::write(&file, serde_json::to_string_pretty(&doc)?)?;
        println!("\nwrote {} ({:.1} s)", file.display(), t.elapsed().as_secs_f64());
    }
    println!("bench done in {:.1} s", start.elapsed().as_secs_f64());
    Ok(())
}

/// Bytes and o200k_base tokens of each file (e.g. the
/// `target/bench/snapshot-*.txt` texts), counted as the snapshot suite
/// counts what the agent reads.
fn count_tokens(files: Vec<String>) -> Result<()> {
    if files.is_empty() {
        bail!("--count-tokens needs at least one file");
    }
    let tokens = bench::playwright::Tokens::new()?;
    for f in files {
        let text = std::fs::read_to_string(&f).with_context(|| format!("reading {f}"))?;
        println!("{f}: {} bytes, {} tokens", text.len(), tokens.count(&text));
    }
    Ok(())
}

fn git_commit() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(tests::workspace_root())
        .output()
        .ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}
