//! The `browser_snapshot` suite (issue 3): agent call → result time and
//! output size on the form and the 200 / 2,000 / 10,000-row pages, the
//! first snapshot after a fresh load, the paginated snapshot of the
//! largest page, the content-script bundle, and a profile of where the
//! time of the largest snapshot goes.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use shared::protocol::{CommandResult, Outcome};
use shared::snapshot::{RenderOptions, render};

use super::client::{BenchMcp, Timed};
use super::pages::{self, ROW_SIZES};
use super::playwright::{self, PlaywrightMcp, Tokens};
use super::profile;
use super::report::{Check, Row, Suite};
use super::stats::Stats;
use super::{Bench, fmt_ms};

/// `max_chars` large enough for any generated page in one piece.
pub const FULL: usize = 100_000_000;

/// Targets from issue 3 (ms unless stated).
/// Issue 13 tightened the times (issue 3: form 15, 2,000 rows 250,
/// 10,000 rows 1,400) and added the content-script load and the bytes
/// against Playwright MCP.
const FORM_MS: f64 = 10.0;
const ROWS_2K_MS: f64 = 70.0;
const ROWS_10K_MS: f64 = 600.0;
const LOAD_MS: f64 = 40.0;
/// Our full snapshot's bytes ÷ Playwright MCP's, at 2,000 and 10,000 rows
/// (issue 32: also the div rows and the cards), and the tokens.
const BYTES_RATIO: f64 = 0.4;
const TOKENS_RATIO: f64 = 0.45;
/// Issue 32: Playwright MCP's median ÷ ours, the first snapshot after a
/// load of the 2,000 rows, and warm at 2,000 and 10,000 rows.
const FIRST_SPEEDUP: f64 = 5.0;
const WARM_SPEEDUP: f64 = 8.0;
const BYTES_PER_ROW: f64 = 160.0;
const PAGINATED_10K_MS: f64 = 300.0;
/// "Close to linear": time per row at 10,000 rows at most this times the
/// time per row at 2,000 rows.
const LINEAR_FACTOR: f64 = 1.5;
/// A first snapshot slower than this cuts a page's runs to 1 warm-up + 5.
const SLOW_MS: f64 = 3_000.0;

const REFERENCE: &[&str] = &[
    "Playwright MCP 0.0.83: 28-control form 29 ms; 2,000 rows 752 ms / 644 KB; 10,000 rows 4,263 ms / 3.2 MB (~320 bytes a row)",
    "chrome-devtools-mcp: 10,000 rows ~20 s",
];

struct Measured {
    row: Row,
    /// First snapshot after loading the page (lazy content-script load included).
    cold_ms: f64,
    /// What the agent reads of the last full snapshot: the result's text,
    /// untrusted-content wrapper included.
    agent_text: String,
}

/// A page measured for the side-by-side comparison.
struct Ours {
    case: String,
    url: String,
    rows: Option<usize>,
    stats: Stats,
    agent_text: String,
    /// Text a complete snapshot of the page holds (the last row's or card's name).
    reach: Option<String>,
    /// First snapshots after fresh loads, when measured for this page.
    first: Option<Stats>,
}

pub async fn run(b: &mut Bench) -> Result<Suite> {
    let mut rows = Vec::new();
    let mut checks = Vec::new();
    let mut extra = serde_json::Map::new();

    // One agent tab for everything.
    let form_url = b.url(&pages::form_path());
    b.mcp.ok("browser_tabs", json!({ "action": "new", "url": form_url })).await?;

    // Cold: the first snapshot after each fresh load of the form.
    let mut cold = Vec::new();
    for _ in 0..b.config.cold_loads {
        b.mcp.ok("browser_navigate", json!({ "url": form_url })).await?;
        cold.push(snapshot(b, json!({ "max_chars": FULL })).await?.elapsed);
    }
    let cold = Stats::of(&cold);

    let form = measure_page(b, &format!("form ({} controls)", pages::FORM_CONTROLS), &form_url, None).await?;
    let load_proxy = cold.median_ms - form.row.stats.median_ms;
    let form_median = form.row.stats.median_ms;
    checks.push(Check::at_most("form, full snapshot, median", form.row.stats.median_ms, FORM_MS, "ms"));
    checks.push(Check::at_most("content-script first load (cold − warm, form)", load_proxy, LOAD_MS, "ms"));
    let mut ours = vec![Ours {
        case: "form".into(),
        url: form_url.clone(),
        rows: None,
        stats: form.row.stats.clone(),
        agent_text: form.agent_text,
        reach: None,
        first: None,
    }];
    rows.push(form.row);

    let mut per_size = Vec::new();
    let mut failed = Vec::new();
    for n in ROW_SIZES {
        let url = b.url(&pages::rows_path(n));
        let case = format!("{n} rows");
        match measure_page(b, &case, &url, Some(n)).await {
            Ok(m) => {
                per_size.push((n, m.row.stats.median_ms, m.row.bytes.unwrap_or(0), m.cold_ms));
                if n >= 2_000 {
                    ours.push(Ours {
                        case: case.clone(),
                        url: url.clone(),
                        rows: Some(n),
                        stats: m.row.stats.clone(),
                        agent_text: m.agent_text,
                        reach: Some(format!("\"{}\"", pages::row_link_name(n))),
                        first: None,
                    });
                }
                rows.push(m.row);
            }
            Err(e) => {
                eprintln!("  {case}: FAILED: {e:#}");
                profile::wait_page_idle(&b.browser.cdp.clone(), &url).await;
                rows.push(failed_row(&case, &e));
                failed.push(n);
            }
        }
    }

    // The first snapshot after a load, the headline figure (issue 32): the
    // 2,000-row page loaded afresh, then one timed full snapshot, repeated.
    let url_2k = b.url(&pages::rows_path(2_000));
    let mut firsts = Vec::new();
    for _ in 0..b.config.cold_loads {
        b.mcp.ok("browser_navigate", json!({ "url": url_2k })).await?;
        firsts.push(snapshot(b, json!({ "max_chars": FULL })).await?.elapsed);
    }
    let first_2k = Stats::of(&firsts);
    rows.push(Row {
        case: "2,000 rows, first snapshot after a load".into(),
        stats: first_2k.clone(),
        bytes: None,
        rows: Some(2_000),
        note: format!("{} fresh loads, each: navigate, then one timed snapshot", firsts.len()),
    });
    if let Some(o) = ours.iter_mut().find(|o| o.rows == Some(2_000)) {
        o.first = Some(first_2k);
    }

    // Repeated structures no list holds (issue 32): plain `<div>` rows and
    // a grid of product cards.
    for (case, url, n, reach) in [
        (
            format!("{} div rows", pages::DIV_ROWS),
            b.url(&pages::divs_path()),
            pages::DIV_ROWS,
            format!("\"{}\"", pages::row_link_name(pages::DIV_ROWS)),
        ),
        (
            format!("{} cards", pages::CARDS),
            b.url(&pages::cards_path()),
            pages::CARDS,
            format!("\"{}\"", pages::card_name(pages::CARDS)),
        ),
    ] {
        match measure_page(b, &case, &url, None).await {
            Ok(mut m) => {
                if !m.agent_text.contains(&reach) {
                    m.row.note.push_str(&format!(", INCOMPLETE: no {reach}"));
                }
                m.row.rows = Some(n);
                ours.push(Ours {
                    case: case.clone(),
                    url,
                    rows: Some(n),
                    stats: m.row.stats.clone(),
                    agent_text: m.agent_text,
                    reach: Some(reach),
                    first: None,
                });
                rows.push(m.row);
            }
            Err(e) => {
                eprintln!("  {case}: FAILED: {e:#}");
                rows.push(failed_row(&case, &e));
            }
        }
    }
    // Back to the largest list page for what follows.
    let largest_url = b.url(&pages::rows_path(*ROW_SIZES.last().expect("sizes")));
    b.mcp.ok("browser_navigate", json!({ "url": largest_url })).await?;

    // Paginated (default max_chars) and interactive-only on the largest page.
    let largest = *ROW_SIZES.last().expect("sizes");
    let (warmup, runs) = b.adapted.unwrap_or((b.config.warmup, b.config.runs));
    if failed.contains(&largest) {
        for what in ["default page 1", "interactive_only"] {
            rows.push(failed_row(&format!("{largest} rows, {what}"), &anyhow::anyhow!("the full snapshot failed")));
        }
        checks.push(Check {
            what: format!("{largest} rows, default paginated snapshot, median"),
            target: format!("≤ {PAGINATED_10K_MS} ms"),
            measured: "failed".into(),
            pass: false,
        });
    } else {
        let paginated = timed_runs(&mut b.mcp, json!({}), warmup, runs).await?;
        // The walk stops after the page asked for: the page count is then unknown.
        let note = match (paginated.1["pages"].as_u64(), paginated.1["more"].as_bool()) {
            (Some(n), _) => format!("{n} pages of the default max_chars"),
            (None, Some(true)) => "page 1 of the default max_chars, more follow (walk stopped early)".to_string(),
            _ => "no page count in the answer".to_string(),
        };
        rows.push(Row {
            case: format!("{largest} rows, default page 1"),
            stats: paginated.0.clone(),
            bytes: paginated.1["snapshot"].as_str().map(str::len),
            rows: None,
            note,
        });
        checks.push(Check::at_most(
            &format!("{largest} rows, default paginated snapshot, median"),
            paginated.0.median_ms,
            PAGINATED_10K_MS,
            "ms",
        ));
        let interactive =
            timed_runs(&mut b.mcp, json!({ "max_chars": FULL, "interactive_only": true }), warmup, runs).await?;
        let ibytes = interactive.1["snapshot"].as_str().map(str::len);
        rows.push(Row {
            case: format!("{largest} rows, interactive_only"),
            stats: interactive.0.clone(),
            bytes: ibytes,
            rows: Some(largest),
            note: "full, refs and headings only".into(),
        });
    }
    for &n in &failed {
        let what = match n {
            2_000 => "2,000 rows, full snapshot, median",
            10_000 => "10,000 rows, full snapshot, median",
            _ => continue,
        };
        checks.push(Check { what: what.into(), target: "see above".into(), measured: "failed".into(), pass: false });
    }
    for &(n, median, bytes, _) in &per_size {
        if n == 2_000 {
            checks.push(Check::at_most("2,000 rows, full snapshot, median", median, ROWS_2K_MS, "ms"));
        }
        if n == largest {
            checks.push(Check::at_most("10,000 rows, full snapshot, median", median, ROWS_10K_MS, "ms"));
            checks.push(Check::at_most("10,000 rows, bytes a row", bytes as f64 / n as f64, BYTES_PER_ROW, "B"));
        }
    }
    if let (Some(mid), Some(big)) = (per_size.iter().find(|s| s.0 == 2_000), per_size.iter().find(|s| s.0 == largest)) {
        let per_row_mid = mid.1 / mid.0 as f64;
        let per_row_big = big.1 / big.0 as f64;
        let ratio = per_row_big / per_row_mid;
        checks.push(Check {
            what: "growth close to linear (ms a row at 10,000 ÷ at 2,000)".into(),
            target: format!("≤ {LINEAR_FACTOR}×"),
            measured: format!("{ratio:.2}× ({:.3} vs {:.3} ms a row)", per_row_big, per_row_mid),
            pass: ratio <= LINEAR_FACTOR,
        });
    }

    // The content-script bundle.
    let bundle = bundle_sizes(b)?;
    rows.push(Row {
        case: "first snapshot after fresh load (form)".into(),
        stats: cold.clone(),
        bytes: None,
        rows: None,
        note: format!("content-script load ≈ {} ms (cold median − warm median)", fmt_ms(load_proxy)),
    });
    for &(n, _, _, cold_ms) in &per_size {
        extra.insert(format!("first_snapshot_ms_{n}_rows"), json!(cold_ms));
    }
    extra.insert(
        "content_bundle".into(),
        json!({
            "files": bundle.iter().map(|f| json!({ "file": f.0, "bytes": f.1, "gzip_bytes": f.2 })).collect::<Vec<_>>(),
            "load_ms_proxy": load_proxy,
        }),
    );
    for (file, bytes, gz) in &bundle {
        let gz = gz.map_or("?".to_string(), |g| format!("{g} bytes ({} KiB)", g / 1024));
        println!("content script {file} (a document gets one): {bytes} bytes ({} KiB), gzip -9 {gz}", bytes / 1024);
    }
    println!(
        "content-script load (first snapshot on a fresh form load − warm snapshot): ≈ {} ms (cold median {} ms, p90 {} ms)",
        fmt_ms(load_proxy),
        fmt_ms(cold.median_ms),
        fmt_ms(cold.p90_ms)
    );

    if b.config.playwright {
        match side_by_side(b, &ours, &mut rows, &mut checks).await {
            Ok(v) => {
                extra.insert("playwright_mcp".into(), v);
            }
            Err(e) => {
                println!("side by side with Playwright MCP unavailable: {e:#}");
                extra.insert("playwright_mcp".into(), json!({ "error": format!("{e:#}") }));
            }
        }
    }

    if !b.config.no_profile {
        // Where the time goes: the form (fixed costs per call), the
        // 2,000-row page, the largest page that worked, and what a failing
        // page spends its time on.
        match profile_page(b, &form_url, form_median).await {
            Ok(p) => {
                extra.insert("profile_form".into(), p);
            }
            Err(e) => println!("profile of the form unavailable: {e:#}"),
        }
        // The 2,000-row page too: its time target is the tightest.
        let profiled = per_size.iter().filter(|s| s.0 == 2_000).chain(per_size.last().filter(|s| s.0 != 2_000));
        for &(n, median, _, _) in profiled {
            let url = b.url(&pages::rows_path(n));
            let key = format!("profile_{n}_rows");
            match profile_page(b, &url, median).await {
                Ok(p) => {
                    extra.insert(key, p);
                }
                Err(e) => {
                    println!("profile of the {n}-row page unavailable: {e:#}");
                    extra.insert(key, json!({ "error": format!("{e:#}") }));
                }
            }
        }
        if let Some(&n) = failed.first() {
            let url = b.url(&pages::rows_path(n));
            match profile_failure(b, &url).await {
                Ok(p) => {
                    extra.insert(format!("failure_profile_{n}_rows"), p);
                }
                Err(e) => println!("profile of the failing {n}-row page unavailable: {e:#}"),
            }
        }
    }

    Ok(Suite {
        name: "browser_snapshot (agent call → result, real MCP over HTTP)".into(),
        rows,
        checks,
        reference: REFERENCE.iter().map(|s| s.to_string()).collect(),
        extra: Value::Object(extra),
    })
}

async fn snapshot(b: &mut Bench, args: Value) -> Result<Timed> {
    b.mcp.ok("browser_snapshot", args).await
}

/// Warm-up then timed runs of `browser_snapshot` with `args`; returns the
/// stats and the last result's data.
pub(super) async fn timed_runs(mcp: &mut BenchMcp, args: Value, warmup: usize, runs: usize) -> Result<(Stats, Value)> {
    let (stats, data, _) = timed_runs_text(mcp, args, warmup, runs).await?;
    Ok((stats, data))
}

/// [`timed_runs`], also returning the text the agent read of the last run.
async fn timed_runs_text(
    mcp: &mut BenchMcp,
    args: Value,
    warmup: usize,
    runs: usize,
) -> Result<(Stats, Value, String)> {
    for _ in 0..warmup {
        mcp.ok("browser_snapshot", args.clone()).await?;
    }
    let mut samples = Vec::with_capacity(runs);
    let mut last = Value::Null;
    let mut text = String::new();
    for _ in 0..runs {
        let t = mcp.ok("browser_snapshot", args.clone()).await?;
        samples.push(t.elapsed);
        last = t.data().clone();
        last["snapshot"] = json!(t.snapshot_text());
        text = playwright::content_text(&t.result);
    }
    Ok((Stats::of(&samples), last, text))
}

/// Loads `url`, takes the first (cold) snapshot, then warm-up and timed
/// full snapshots.
async fn measure_page(b: &mut Bench, case: &str, url: &str, rows: Option<usize>) -> Result<Measured> {
    b.mcp.ok("browser_navigate", json!({ "url": url })).await?;
    let first = snapshot(b, json!({ "max_chars": FULL })).await?;
    let cold_ms = first.elapsed.as_secs_f64() * 1000.0;
    // Keep the wall time bounded when a page is very slow.
    let (warmup, runs) = if cold_ms > SLOW_MS {
        let w = (b.config.warmup.min(1), b.config.runs.min(5));
        b.adapted = Some(w);
        w
    } else {
        b.adapted = None;
        (b.config.warmup, b.config.runs)
    };
    eprintln!("  {case}: first snapshot {} ms; {warmup} warm-up, {runs} timed runs", fmt_ms(cold_ms));
    let (stats, data, agent_text) = timed_runs_text(&mut b.mcp, json!({ "max_chars": FULL }), warmup, runs).await?;
    // What the agent read, kept with or without Playwright MCP beside it
    // (`bench --count-tokens` counts it).
    let dir = tests::workspace_root().join("target").join("bench");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(dir.join(format!("snapshot-{}-chaperone.txt", case.replace([' ', ','], ""))), &agent_text);
    let text = data["snapshot"].as_str().unwrap_or_default();
    let pages = data["pages"].as_u64().unwrap_or(0);
    if pages != 1 {
        bail!("{case}: the full snapshot came in {pages} pages");
    }
    let refs = text.matches("[e").count();
    let mut note = format!("{refs} refs, {} lines, first {} ms", text.lines().count(), fmt_ms(cold_ms));
    if let Some(n) = rows {
        let last = format!("\"{}\"", pages::row_link_name(n));
        let links = text.matches("link \"Item ").count();
        if !text.contains(&last) {
            note.push_str(&format!(", INCOMPLETE: {links} of {n} row links"));
        }
        for (what, needle) in [("shadow", "Compact view"), ("iframe", "Subscribe")] {
            if !text.contains(needle) {
                note.push_str(&format!(", {what} content missing"));
            }
        }
    }
    Ok(Measured { row: Row { case: case.into(), stats, bytes: Some(text.len()), rows, note }, cold_ms, agent_text })
}

fn failed_row(case: &str, e: &anyhow::Error) -> Row {
    let mut msg = format!("{e:#}");
    msg.truncate(160);
    Row { case: case.into(), stats: Stats::of_ms(&[]), bytes: None, rows: None, note: format!("FAILED: {msg}") }
}

/// The content script's two flavours, each one classic script of which a
/// document gets one (ARCHITECTURE.md, "The content script's two
/// flavours"): (file, bytes, gzip -9 bytes).
fn bundle_sizes(b: &Bench) -> Result<Vec<(String, u64, Option<u64>)>> {
    let mut out = Vec::new();
    for file in ["content-wasm.js", "content.js"] {
        let path = b.extension_dir.join(file);
        let bytes = std::fs::metadata(&path).with_context(|| format!("reading {}", path.display()))?.len();
        let gz = std::process::Command::new("gzip")
            .arg("-9c")
            .arg(&path)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| o.stdout.len() as u64);
        out.push((file.to_string(), bytes, gz));
    }
    Ok(out)
}

/// Splits the time of a full snapshot of the page at `url` (already loaded
/// in the agent tab): content script (in-page `handle_message`, full and
/// interactive-only; CPU profile by category), service worker (CPU
/// profile), bridge decoding + rendering (the same `shared` code, native),
/// and the rest (messaging, WebSocket, MCP/HTTP).
/// The page CPU profile (1 ms samples) during one snapshot of a page whose
/// snapshot fails (e.g. TIMEOUT): what the content script spends its time on.
async fn profile_failure(b: &mut Bench, url: &str) -> Result<Value> {
    b.mcp.ok("browser_navigate", json!({ "url": url })).await?;
    let cdp = b.browser.cdp.clone();
    let page = profile::attach_page(&cdp, url).await?;
    profile::start_profiler(&page, 1000).await?;
    let t = Instant::now();
    let call = snapshot(b, json!({ "max_chars": FULL })).await;
    let elapsed = t.elapsed().as_secs_f64() * 1000.0;
    // The walk may still be running after the bridge gave up: wait for it.
    let _ = page.evaluate("1").await;
    let profile = profile::stop_profiler(&page).await?;
    let _ = cdp.call("Target.detachFromTarget", json!({ "sessionId": page.session_id })).await;
    let outcome = match &call {
        Ok(_) => "ok".to_string(),
        Err(e) => format!("{e:#}").chars().take(120).collect(),
    };
    println!();
    println!(
        "page CPU profile of a failing full snapshot of {} ({} ms until the answer: {outcome}):",
        url.rsplit('/').next().unwrap_or(url),
        fmt_ms(elapsed)
    );
    for (c, t) in profile.iter().filter(|(c, _)| c != "(idle)").take(20) {
        println!("    {:>9} ms  {c}", fmt_ms(*t));
    }
    Ok(json!({ "elapsed_ms": elapsed, "outcome": outcome, "page_profile_ms": profile }))
}

async fn profile_page(b: &mut Bench, url: &str, end_to_end_ms: f64) -> Result<Value> {
    // Load it again and take one snapshot so the content script is loaded and warm.
    b.mcp.ok("browser_navigate", json!({ "url": url })).await?;
    snapshot(b, json!({ "max_chars": FULL })).await?;
    let cdp = b.browser.cdp.clone();
    let page = profile::attach_page(&cdp, url).await?;
    let ctx = profile::content_world(&cdp, &page).await?;
    // Small pages vary more from run to run: more runs for their median.
    let n = if end_to_end_ms > SLOW_MS {
        1
    } else if end_to_end_ms < 100.0 {
        30
    } else {
        5
    };
    let v = profile::eval_in(&page, ctx, &format!("{}({n})", profile::IN_PAGE_TIMING)).await?;
    let ms = |k: &str| -> Stats {
        let xs: Vec<f64> = v[k]["ms"].as_array().into_iter().flatten().filter_map(Value::as_f64).collect();
        Stats::of_ms(&xs)
    };
    let (content_full, content_inter) = (ms("full"), ms("interactive"));
    let reply = v["reply"].as_str().unwrap_or_default().to_string();
    let reply_bytes = reply.len();
    let inter_bytes = v["interactive"]["len"].as_u64().unwrap_or(0);

    // With a named build (CHAPERONE_KEEP_NAMES=1), where the content
    // script's time goes, function by function.
    if std::env::var_os("CHAPERONE_KEEP_NAMES").is_some() {
        profile::start_profiler(&page, 100).await?;
        profile::eval_in(&page, ctx, &format!("{}({n}, true)", profile::IN_PAGE_TIMING)).await?;
        let raw = profile::stop_profiler_raw(&page).await?;
        // Kept for DevTools (Performance → load profile) and for callers.
        let stem = url.rsplit('/').next().unwrap_or("page").trim_end_matches(".html");
        let kept = tests::workspace_root().join(format!("target/bench/content-{stem}.cpuprofile"));
        let _ = std::fs::create_dir_all(kept.parent().unwrap_or(&kept));
        let _ = std::fs::write(&kept, raw.to_string());
        println!();
        println!("(CPU profile kept in {})", kept.display());
        println!("content script functions, {n} full snapshots (self / inclusive ms, profiler on):");
        let all = profile::functions(&raw, usize::MAX);
        for (f, own, incl) in all.iter().take(40) {
            println!("  {own:>9.1} {incl:>9.1}  {}", f.chars().take(110).collect::<String>());
        }
        let mut by_self = all.clone();
        by_self.sort_by(|a, b| b.1.total_cmp(&a.1));
        println!("  by self time:");
        for (f, own, incl) in by_self.iter().take(30) {
            println!("  {own:>9.1} {incl:>9.1}  {}", f.chars().take(110).collect::<String>());
        }
    }

    // Bridge side, natively, with the same shared code.
    let t = Instant::now();
    let outcome: Outcome = serde_json::from_str(&reply).context("the content script's reply is not an Outcome")?;
    let decode_ms = t.elapsed().as_secs_f64() * 1000.0;
    let Outcome::Ok(CommandResult::Snapshot { snapshot: snap }) = &outcome else {
        bail!("the reply is not a snapshot")
    };
    let t = Instant::now();
    let rendered = render(snap, RenderOptions { max_chars: FULL, page: 1 });
    let render_ms = t.elapsed().as_secs_f64() * 1000.0;
    let t = Instant::now();
    let encoded = serde_json::to_string(&outcome)?;
    let native_encode_ms = t.elapsed().as_secs_f64() * 1000.0;
    let t = Instant::now();
    let wrapped = json!({ "content": [{ "type": "text", "text": rendered.text }], "structuredContent": { "untrustedWebContent": true, "data": { "url": snap.url, "title": snap.title, "page": 1, "more": false } } }).to_string();
    let mcp_encode_ms = t.elapsed().as_secs_f64() * 1000.0;

    // CPU profiles of the page and the service worker during one MCP call.
    let worker = b.browser.extension_worker(Duration::from_secs(5)).await?;
    let worker = cdp.attach(&worker.target_id).await?;
    profile::start_profiler(&page, 100).await?;
    profile::start_profiler(&worker, 100).await?;
    let call = snapshot(b, json!({ "max_chars": FULL })).await?;
    let page_raw = profile::stop_profiler_raw(&page).await?;
    let worker_raw = profile::stop_profiler_raw(&worker).await?;
    let (page_profile, worker_profile) = (profile::categorise(&page_raw), profile::categorise(&worker_raw));
    if std::env::var_os("CHAPERONE_KEEP_NAMES").is_some() {
        // The one MCP call, page and worker side, for DevTools and callers.
        let stem = url.rsplit('/').next().unwrap_or("page").trim_end_matches(".html");
        let dir = tests::workspace_root().join("target/bench");
        let _ = std::fs::write(dir.join(format!("call-page-{stem}.cpuprofile")), page_raw.to_string());
        let _ = std::fs::write(dir.join(format!("call-worker-{stem}.cpuprofile")), worker_raw.to_string());
    }
    let _ = page.call("Runtime.disable", json!({})).await;
    let _ = cdp.call("Target.detachFromTarget", json!({ "sessionId": page.session_id })).await;
    let _ = cdp.call("Target.detachFromTarget", json!({ "sessionId": worker.session_id })).await;

    let busy = |p: &[(String, f64)]| p.iter().filter(|(c, _)| c != "(idle)").map(|(_, t)| t).sum::<f64>();
    let page_busy = busy(&page_profile);
    let worker_busy = busy(&worker_profile);
    let rest = end_to_end_ms - content_full.median_ms - worker_busy - decode_ms - render_ms - mcp_encode_ms;

    println!();
    println!("where the time of a full snapshot of the {} goes:", url.rsplit('/').next().unwrap_or(url));
    println!("  end to end (median above)                    {:>8} ms", fmt_ms(end_to_end_ms));
    println!(
        "  content script handle_message (in page)      {:>8} ms median ({} runs; reply {} bytes of JSON, DOM {} elements)",
        fmt_ms(content_full.median_ms),
        n,
        reply_bytes,
        v["dom_elements"]
    );
    println!(
        "    same walk, interactive_only                {:>8} ms median (reply {} bytes) → emitting+serialising the other nodes ≈ {} ms",
        fmt_ms(content_inter.median_ms),
        inter_bytes,
        fmt_ms(content_full.median_ms - content_inter.median_ms)
    );
    println!("    JSON.parse of the reply in the page        {:>8} ms", fmt_ms(v["parse_ms"].as_f64().unwrap_or(0.0)));
    println!(
        "    native serde_json encode of the same reply {:>8} ms (the content script does this in wasm2js)",
        fmt_ms(native_encode_ms)
    );
    println!("  service worker CPU (profile, one call)        {:>8} ms", fmt_ms(worker_busy));
    println!("  bridge: decode reply (native, same code)      {:>8} ms", fmt_ms(decode_ms));
    println!("  bridge: render {} bytes of text            {:>8} ms", rendered.text.len(), fmt_ms(render_ms));
    println!("  bridge: MCP result JSON ({} bytes)        {:>8} ms", wrapped.len(), fmt_ms(mcp_encode_ms));
    println!(
        "  rest: sendMessage IPC, WebSocket, HTTP, client ≈ {:>6} ms (answer {} bytes on the wire)",
        fmt_ms(rest.max(0.0)),
        call.wire_bytes
    );
    println!("  page CPU profile during one MCP call ({} ms busy, profiler on):", fmt_ms(page_busy));
    for (c, t) in page_profile.iter().filter(|(c, _)| c != "(idle)").take(16) {
        println!("    {:>8} ms  {c}", fmt_ms(*t));
    }
    println!("  service-worker CPU profile ({} ms busy):", fmt_ms(worker_busy));
    for (c, t) in worker_profile.iter().filter(|(c, _)| c != "(idle)").take(6) {
        println!("    {:>8} ms  {c}", fmt_ms(*t));
    }

    let _ = encoded;
    Ok(json!({
        "end_to_end_median_ms": end_to_end_ms,
        "content_handle_message": content_full,
        "content_handle_message_interactive_only": content_inter,
        "content_reply_bytes": reply_bytes,
        "content_reply_bytes_interactive_only": inter_bytes,
        "page_json_parse_ms": v["parse_ms"],
        "dom_elements": v["dom_elements"],
        "native_serde_encode_ms": native_encode_ms,
        "bridge_decode_ms": decode_ms,
        "bridge_render_ms": render_ms,
        "bridge_mcp_encode_ms": mcp_encode_ms,
        "worker_cpu_ms": worker_busy,
        "rest_ms": rest,
        "wire_bytes": call.wire_bytes,
        "page_profile_ms": page_profile,
        "worker_profile_ms": worker_profile,
    }))
}

/// The same pages through Playwright MCP, right after ours in the same run:
/// time (median / p90), bytes and o200k_base tokens of what the agent
/// reads, and the ratios. Adds a row per page and the bytes checks.
/// Playwright MCP loads `url`, then snapshots it.
async fn navigate_and_snapshot(pw: &mut PlaywrightMcp, url: &str) -> Result<playwright::Answer> {
    pw.call("browser_navigate", json!({ "url": url })).await?;
    pw.call("browser_snapshot", json!({})).await
}

async fn side_by_side(b: &mut Bench, ours: &[Ours], rows: &mut Vec<Row>, checks: &mut Vec<Check>) -> Result<Value> {
    let version = playwright::pinned_version();
    let cli = playwright::install()?;
    let mut pw = PlaywrightMcp::start(&cli).await?;
    let tokens = Tokens::new()?;
    let mut out = Vec::new();
    let mut table = Vec::new();
    for o in ours {
        // A page Playwright MCP fails on is tried once more (on a loaded
        // machine its navigation of the 10,000 rows has hit its own 30 s
        // limit), then reported, the others still measured.
        let mut first = navigate_and_snapshot(&mut pw, &o.url).await;
        if let Err(e) = &first {
            println!("  Playwright MCP, {}: {e:#}; trying once more", o.case);
            first = navigate_and_snapshot(&mut pw, &o.url).await;
        }
        let first = match first {
            Ok(f) => f,
            Err(e) => {
                println!("  Playwright MCP, {}: FAILED: {e:#}", o.case);
                rows.push(failed_row(&format!("Playwright MCP {version}: {}", o.case), &e));
                out.push(json!({ "case": o.case, "error": format!("{e:#}") }));
                continue;
            }
        };
        let first_ms = first.elapsed.as_secs_f64() * 1000.0;
        let (warmup, runs) = if first_ms > SLOW_MS {
            (b.config.warmup.min(1), b.config.runs.min(5))
        } else {
            (b.config.warmup, b.config.runs)
        };
        eprintln!(
            "  Playwright MCP, {}: first snapshot {} ms; {warmup} warm-up, {runs} timed runs",
            o.case,
            fmt_ms(first_ms)
        );
        for _ in 0..warmup {
            pw.call("browser_snapshot", json!({})).await?;
        }
        let mut samples = Vec::with_capacity(runs);
        let mut text = first.text;
        for _ in 0..runs {
            let a = pw.call("browser_snapshot", json!({})).await?;
            samples.push(a.elapsed);
            text = a.text;
        }
        let theirs = Stats::of(&samples);
        // Both texts, to compare the formats by eye.
        let dir = tests::workspace_root().join("target").join("bench");
        let stem = o.case.replace([' ', ','], "");
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(dir.join(format!("snapshot-{stem}-chaperone.txt")), &o.agent_text);
        let _ = std::fs::write(dir.join(format!("snapshot-{stem}-playwright.txt")), &text);
        if let Some(reach) = &o.reach
            && !text.contains(reach.as_str())
        {
            bail!("Playwright MCP's snapshot of {} does not reach {reach}", o.case);
        }
        // The first snapshot after a load, both sides the same way.
        let mut their_first = None;
        if let Some(ours_first) = &o.first {
            let mut samples = Vec::new();
            for _ in 0..b.config.cold_loads {
                pw.call("browser_navigate", json!({ "url": o.url })).await?;
                samples.push(pw.call("browser_snapshot", json!({})).await?.elapsed);
            }
            let theirs = Stats::of(&samples);
            let speedup = theirs.median_ms / ours_first.median_ms.max(0.001);
            println!(
                "  first snapshot after a load, {}: ours {} / {} ms, Playwright MCP {} / {} ms (median / p90): {speedup:.1}× faster",
                o.case,
                fmt_ms(ours_first.median_ms),
                fmt_ms(ours_first.p90_ms),
                fmt_ms(theirs.median_ms),
                fmt_ms(theirs.p90_ms)
            );
            rows.push(Row {
                case: format!("Playwright MCP {version}: {}, first snapshot after a load", o.case),
                stats: theirs.clone(),
                bytes: None,
                rows: o.rows,
                note: format!("ours {} ms median: {speedup:.1}× faster", fmt_ms(ours_first.median_ms)),
            });
            checks.push(Check {
                what: format!("{}, first snapshot after a load, Playwright MCP's median ÷ ours", o.case),
                target: format!("≥ {FIRST_SPEEDUP}×"),
                measured: format!(
                    "{speedup:.1}× ({} vs {} ms)",
                    fmt_ms(theirs.median_ms),
                    fmt_ms(ours_first.median_ms)
                ),
                pass: speedup >= FIRST_SPEEDUP,
            });
            their_first = Some(theirs);
        }
        let (our_bytes, their_bytes) = (o.agent_text.len(), text.len());
        let (our_tokens, their_tokens) = (tokens.count(&o.agent_text), tokens.count(&text));
        let bytes_ratio = our_bytes as f64 / their_bytes.max(1) as f64;
        let tokens_ratio = our_tokens as f64 / their_tokens.max(1) as f64;
        let time_ratio = o.stats.median_ms / theirs.median_ms.max(0.001);
        rows.push(Row {
            case: format!("Playwright MCP {version}: {}", o.case),
            stats: theirs.clone(),
            bytes: Some(their_bytes),
            rows: o.rows,
            note: format!(
                "{their_tokens} tokens; ours {our_bytes} B ({bytes_ratio:.2}×), {our_tokens} tokens ({tokens_ratio:.2}×), {:.2}× the time",
                time_ratio
            ),
        });
        if o.rows.is_some() {
            checks.push(Check {
                what: format!("{}, full snapshot bytes ÷ Playwright MCP's", o.case),
                target: format!("≤ {BYTES_RATIO}×"),
                measured: format!("{bytes_ratio:.3}× ({our_bytes} vs {their_bytes} B)"),
                pass: bytes_ratio <= BYTES_RATIO,
            });
            checks.push(Check {
                what: format!("{}, full snapshot tokens ÷ Playwright MCP's", o.case),
                target: format!("≤ {TOKENS_RATIO}×"),
                measured: format!("{tokens_ratio:.3}× ({our_tokens} vs {their_tokens} o200k_base tokens)"),
                pass: tokens_ratio <= TOKENS_RATIO,
            });
        }
        if matches!(o.rows, Some(2_000 | 10_000)) && o.case.ends_with("0 rows") {
            let speedup = theirs.median_ms / o.stats.median_ms.max(0.001);
            checks.push(Check {
                what: format!("{}, warm snapshot, Playwright MCP's median ÷ ours", o.case),
                target: format!("≥ {WARM_SPEEDUP}×"),
                measured: format!("{speedup:.1}×"),
                pass: speedup >= WARM_SPEEDUP,
            });
        }
        table.push(format!(
            "  {:<16} {:>8} / {:<8} {:>8} / {:<8} {:>6.2}×  {:>9} {:>9} {:>6.3}×  {:>8} {:>8} {:>6.3}×",
            o.case,
            fmt_ms(o.stats.median_ms),
            fmt_ms(o.stats.p90_ms),
            fmt_ms(theirs.median_ms),
            fmt_ms(theirs.p90_ms),
            time_ratio,
            our_bytes,
            their_bytes,
            bytes_ratio,
            our_tokens,
            their_tokens,
            tokens_ratio
        ));
        out.push(json!({
            "case": o.case,
            "ours": { "stats": o.stats, "bytes": our_bytes, "tokens": our_tokens },
            "playwright_mcp": { "stats": theirs, "first_ms": first_ms, "bytes": their_bytes, "tokens": their_tokens, "first_after_load": their_first },
            "ours_first_after_load": o.first,
            "ratios": { "time": time_ratio, "bytes": bytes_ratio, "tokens": tokens_ratio },
        }));
    }
    println!();
    println!(
        "side by side with Playwright MCP {version} (same pages, same Chromium, this run; bytes and o200k_base tokens of the text the agent reads, our untrusted-content wrapper included):"
    );
    println!(
        "  {:<16} {:>19} {:>19} {:>7}  {:>9} {:>9} {:>7}  {:>8} {:>8} {:>7}",
        "page",
        "ours ms med / p90",
        "theirs ms med / p90",
        "time",
        "ours B",
        "theirs B",
        "bytes",
        "ours tok",
        "their tok",
        "tokens"
    );
    for l in &table {
        println!("{l}");
    }
    Ok(json!({ "version": version, "pages": out }))
}
