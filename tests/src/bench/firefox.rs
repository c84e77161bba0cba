//! The `firefox` suite (issue 38): the same snapshots and click in
//! Firefox ESR (the add-on of `dist/firefox`, headless, a daemon of its
//! own) beside Chromium's, on the same generated pages in the same run.
//! Firefox runs the plain (wasm2js) content script; Chromium runs the
//! WebAssembly one on these pages, which have no policy (ARCHITECTURE.md,
//! "The content script's two flavours").

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{Value, json};
use tests::Daemon;
use tests::firefox::Firefox;

use super::client::BenchMcp;
use super::pages;
use super::report::{Row, Suite};
use super::snapshot::FULL;
use super::stats::Stats;
use super::{Bench, fmt_ms};

/// What one browser measured: (case, stats).
type Figures = Vec<(String, Stats)>;

pub async fn run(b: &mut Bench) -> Result<Suite> {
    let daemon = Daemon::start_with_config(None).await.context("a daemon for Firefox")?;
    let firefox = Firefox::with_extension(daemon.home(), false).await.context("start Firefox")?;
    tokio::time::timeout(Duration::from_secs(60), tests::wait_for_extension(&daemon))
        .await
        .with_context(|| format!("Firefox's add-on did not connect: {}", firefox.stderr_tail(20)))?;
    let mut fx = BenchMcp::connect(daemon.port(), &daemon.mcp_token).await?;

    let plan = Plan {
        form: b.url(&pages::form_path()),
        rows: b.url(&pages::rows_path(2_000)),
        click: b.url(&pages::click_path()),
        warmup: b.config.warmup,
        runs: b.config.runs,
        loads: b.config.cold_loads,
    };
    let chromium = measure(&mut b.mcp, &plan, "Chromium").await.context("Chromium")?;
    let gecko = measure(&mut fx, &plan, "Firefox").await.context("Firefox")?;

    let mut rows = Vec::new();
    for ((case, c), (_, f)) in chromium.iter().zip(&gecko) {
        let ratio = f.median_ms / c.median_ms.max(0.001);
        rows.push(Row {
            case: format!("Chromium: {case}"),
            stats: c.clone(),
            bytes: None,
            rows: None,
            note: String::new(),
        });
        rows.push(Row {
            case: format!("Firefox: {case}"),
            stats: f.clone(),
            bytes: None,
            rows: None,
            note: format!("{ratio:.1}× Chromium's median ({} ms)", fmt_ms(c.median_ms)),
        });
    }
    drop(firefox);
    Ok(Suite { name: "firefox".into(), rows, checks: Vec::new(), reference: Vec::new(), extra: Value::Null })
}

/// The pages and counts both browsers get.
struct Plan {
    form: String,
    rows: String,
    click: String,
    warmup: usize,
    runs: usize,
    loads: usize,
}

/// Snapshots of the form and of 2,000 rows (the first after each of
/// `loads` loads, then warm), and the low-risk click, through `mcp`.
async fn measure(mcp: &mut BenchMcp, plan: &Plan, browser: &str) -> Result<Figures> {
    let (warmup, runs) = (plan.warmup, plan.runs);
    let mut out = Vec::new();
    mcp.ok("browser_tabs", json!({ "action": "new", "url": plan.form })).await?;
    out.push(("form (28 controls), warm snapshot".to_string(), warm(mcp, warmup, runs).await?));

    let mut firsts = Vec::new();
    for _ in 0..plan.loads {
        mcp.ok("browser_navigate", json!({ "url": plan.rows })).await?;
        firsts.push(mcp.ok("browser_snapshot", json!({ "max_chars": FULL })).await?.elapsed);
    }
    out.push(("2,000 rows, first snapshot after a load".to_string(), Stats::of(&firsts)));
    out.push(("2,000 rows, warm snapshot".to_string(), warm(mcp, warmup, runs).await?));

    mcp.ok("browser_navigate", json!({ "url": plan.click })).await?;
    let snap = mcp.ok("browser_snapshot", json!({ "interactive_only": true })).await?.snapshot_text();
    let r = tests::ref_of(&snap, "button", "Show details").context("no Show details button")?;
    let mut clicks = Vec::new();
    for i in 0..warmup + runs {
        let t = Instant::now();
        let res = mcp.ok("browser_click", json!({ "ref": r })).await?;
        if res.data()["decided_by"] != "policy" {
            anyhow::bail!("{browser}: the bench click was not allowed by the policy: {}", res.data());
        }
        if i >= warmup {
            clicks.push(t.elapsed());
        }
    }
    out.push(("simple page, low-risk click".to_string(), Stats::of(&clicks)));
    for (case, s) in &out {
        eprintln!("  {browser}: {case}: median {} ms", fmt_ms(s.median_ms));
    }
    Ok(out)
}

async fn warm(mcp: &mut BenchMcp, warmup: usize, runs: usize) -> Result<Stats> {
    Ok(super::snapshot::timed_runs(mcp, json!({ "max_chars": FULL }), warmup, runs).await?.0)
}
