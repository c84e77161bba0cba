//! The `network` suite (issue 33): what the capture costs.
//!
//! - Page load with and without capture: `fixtures/sites/netapp/many.html`
//!   makes 500 API calls and writes the time since navigation into its
//!   title. The same page is loaded, in pairs, in an agent tab (captured)
//!   and in a tab of the person's (not captured: opened over CDP, never
//!   the session's), both navigated over CDP; the pair's order alternates.
//!   Target: capture slows the page by at most 5 % (medians).
//! - Listing 5,000 captured requests (`browser_network_requests`, which
//!   redacts and filters all of them for the totals) and exporting them as
//!   HAR (`browser_network_export`).

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tests::CdpSession;

use super::Bench;
use super::report::{Check, Row, Suite};
use super::stats::Stats;

/// Most a page may be slowed by the capture, in per cent.
const MAX_OVERHEAD_PCT: f64 = 5.0;
/// Target: listing 5,000 requests.
const LIST_MEDIAN_MS: f64 = 500.0;
/// Target: exporting 5,000 entries.
const EXPORT_MEDIAN_MS: f64 = 3000.0;

/// Loads `url` in `page` and waits (≤ 120 s) for the page's own timing.
async fn load(page: &CdpSession, url: &str) -> Result<f64> {
    page.call("Page.navigate", json!({ "url": url })).await?;
    let start = Instant::now();
    loop {
        let t = page.evaluate("document.title").await.unwrap_or(Value::Null);
        if let Some(ms) = t.as_str().and_then(|t| t.strip_prefix("done ")).and_then(|v| v.parse::<f64>().ok()) {
            return Ok(ms);
        }
        if start.elapsed() > Duration::from_secs(120) {
            bail!("{url} did not finish within 120 s");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn attach(b: &Bench, url: &str) -> Result<CdpSession> {
    let t = b.browser.cdp.wait_for_target(Duration::from_secs(10), |t| t.kind == "page" && t.url == url).await?;
    let p = b.browser.cdp.attach(&t.target_id).await?;
    p.call("Page.enable", json!({})).await?;
    Ok(p)
}

pub async fn run(b: &mut Bench) -> Result<Suite> {
    let site = tests::FixtureServer::start();
    let blank = site.url("/netapp/many.html?n=0");
    let many = site.url("/netapp/many.html?n=500");
    // The agent's tab (captured) and one of the person's (not captured).
    b.mcp.ok("browser_tabs", json!({ "action": "new" })).await?;
    b.mcp.ok("browser_navigate", json!({ "url": blank })).await?;
    let agent = attach(b, &blank).await.context("the agent's tab")?;
    let person_url = site.url("/netapp/many.html?n=0&person=1");
    let person = b.browser.cdp.new_page(&person_url).await.context("the person's tab")?;
    person.call("Page.enable", json!({})).await?;

    let runs = b.config.runs.clamp(4, 20);
    let warmup = b.config.warmup.min(2);
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for i in 0..warmup + runs {
        let order = if i % 2 == 0 { [true, false] } else { [false, true] };
        for captured in order {
            let ms = load(if captured { &agent } else { &person }, &many).await?;
            if i >= warmup {
                if captured { with.push(ms) } else { without.push(ms) }
            }
        }
    }
    // Everything the agent's tab made was captured (500 a load).
    let listed = b.mcp.ok("browser_network_requests", json!({ "filter": "/netapp/api/ping" })).await?;
    let total = listed.data()["total"].as_u64().unwrap_or(0);
    let dropped = listed.data()["dropped"].as_u64().unwrap_or(0);
    if total + dropped < 500 * (warmup + runs) as u64 {
        bail!("the capture missed requests: {total} listed, {dropped} dropped");
    }

    // 5,000 requests (the bound) in the session, then list and export.
    load(&agent, &site.url("/netapp/many.html?n=5000")).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut list_t = Vec::new();
    let mut listed_n = 0;
    for i in 0..warmup + runs.min(10) {
        let t = b.mcp.ok("browser_network_requests", json!({})).await?;
        listed_n = t.data()["total"].as_u64().unwrap_or(0);
        if i >= warmup {
            list_t.push(t.elapsed);
        }
    }
    let mut export_t = Vec::new();
    let mut entries = 0;
    for i in 0..1 + runs.min(5) {
        let t = b.mcp.ok("browser_network_export", json!({ "name": format!("bench-{i}") })).await?;
        entries = t.data()["entries"].as_u64().unwrap_or(0);
        if i >= 1 {
            export_t.push(t.elapsed);
        }
    }
    if entries < 5_000 {
        bail!("the export held {entries} entries, not 5,000");
    }

    let with_s = Stats::of_ms(&with);
    let without_s = Stats::of_ms(&without);
    let overhead = (with_s.median_ms / without_s.median_ms - 1.0) * 100.0;
    let list_s = Stats::of(&list_t);
    let export_s = Stats::of(&export_t);
    let rows = vec![
        Row {
            case: "page with 500 calls, captured (agent tab)".into(),
            stats: with_s.clone(),
            bytes: None,
            rows: None,
            note: "navigation → last call answered".into(),
        },
        Row {
            case: "same page, not captured (person's tab)".into(),
            stats: without_s.clone(),
            bytes: None,
            rows: None,
            note: format!("paired runs; capture overhead {overhead:+.1} % (medians)"),
        },
        Row {
            case: format!("list {listed_n} requests"),
            stats: list_s.clone(),
            bytes: None,
            rows: Some(listed_n as usize),
            note: "redact + filter all, first page".into(),
        },
        Row {
            case: format!("export {entries} entries (HAR)"),
            stats: export_s.clone(),
            bytes: None,
            rows: Some(entries as usize),
            note: "redact + HAR + 0600 file".into(),
        },
    ];
    Ok(Suite {
        name: "network".into(),
        rows,
        checks: vec![
            Check::at_most("capture overhead on a 500-call page, median", overhead, MAX_OVERHEAD_PCT, "%"),
            Check::at_most("list 5,000 requests, median", list_s.median_ms, LIST_MEDIAN_MS, "ms"),
            Check::at_most("export 5,000 entries, median", export_s.median_ms, EXPORT_MEDIAN_MS, "ms"),
        ],
        reference: Vec::new(),
        extra: json!({ "overhead_pct": overhead }),
    })
}
