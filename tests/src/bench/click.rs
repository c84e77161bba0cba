//! The `browser_click` suite (issue 4): agent call → result of a low-risk
//! click, on a simple page and on the 10,000-row page. Each click goes the
//! whole way: MCP → bridge (Resolve, classify, decide, audit) → extension
//! (live re-classification, DOM click, effect) → result.

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::Bench;
use super::pages::{self, ROW_SIZES};
use super::report::{Check, Row, Suite};
use super::stats::Stats;

/// Target from issue 4 (median, simple page).
const SIMPLE_MS: f64 = 30.0;
/// Target from issue 32 (median, simple page, another tab in front).
const BACKGROUND_MS: f64 = 50.0;

const REFERENCE: &[&str] = &[
    "Playwright MCP: click by ref 569 ms median on a 28-control form (waits for the page to settle, returns a snapshot)",
    "chrome-devtools-mcp: 252 ms on the same form",
];

pub async fn run(b: &mut Bench) -> Result<Suite> {
    let mut rows = Vec::new();
    let mut checks = Vec::new();

    let simple = b.url(&pages::click_path());
    b.mcp.ok("browser_tabs", json!({ "action": "new", "url": simple })).await?;
    let r = find_ref(b, "button", "Show details").await?;
    let (stats, last) = clicks(b, &r).await?;
    check_low_risk(&last)?;
    rows.push(Row {
        case: "simple page, button".into(),
        stats: stats.clone(),
        bytes: None,
        rows: None,
        note: format!("effect {}, decided by {}", last["effect"], last["decided_by"]),
    });
    checks.push(Check::at_most("simple page, low-risk click, median", stats.median_ms, SIMPLE_MS, "ms"));

    // The same click with another tab in front (another agent's, or the
    // person's): Chromium runs a background tab's timers once a second.
    match background_clicks(b, &simple, &r).await {
        Ok((stats, last, visibility)) => {
            check_low_risk(&last)?;
            checks.push(Check::at_most(
                "simple page in a background tab, low-risk click, median",
                stats.median_ms,
                BACKGROUND_MS,
                "ms",
            ));
            rows.push(Row {
                case: "simple page, button, tab in the background".into(),
                stats,
                bytes: None,
                rows: None,
                note: format!("agent tab {visibility}, effect {}", last["effect"]),
            });
        }
        Err(e) => rows.push(Row {
            case: "simple page, button, tab in the background".into(),
            stats: Stats::of_ms(&[]),
            bytes: None,
            rows: None,
            note: format!("FAILED: {e:#}"),
        }),
    }

    let largest = *ROW_SIZES.last().expect("sizes");
    let big = b.url(&pages::rows_path(largest));
    b.mcp.ok("browser_navigate", json!({ "url": big })).await?;
    match find_ref(b, "link", &pages::row_link_name(largest / 2)).await {
        Ok(_) => {
            // A link would navigate away; click a row's Edit button instead.
            let r = find_ref(b, "button", "Edit").await?;
            let (stats, last) = clicks(b, &r).await?;
            check_low_risk(&last)?;
            rows.push(Row {
                case: format!("{largest} rows, Edit button"),
                stats,
                bytes: None,
                rows: None,
                note: format!("effect {}", last["effect"]),
            });
        }
        Err(e) => rows.push(Row {
            case: format!("{largest} rows, Edit button"),
            stats: Stats::of_ms(&[]),
            bytes: None,
            rows: None,
            note: format!("FAILED: could not snapshot the page: {e:#}"),
        }),
    }
    Ok(Suite {
        name: "click".into(),
        rows,
        checks,
        reference: REFERENCE.iter().map(|s| s.to_string()).collect(),
        extra: Value::Null,
    })
}

/// Clicks `r` in the agent's tab (showing `url`) while a tab the agent
/// does not own is in front; returns the stats, the last result and the
/// agent tab's `document.visibilityState` during the runs.
async fn background_clicks(b: &mut Bench, url: &str, r: &str) -> Result<(Stats, Value, String)> {
    let cdp = b.browser.cdp.clone();
    let agent = cdp
        .targets()
        .await?
        .into_iter()
        .find(|t| t.kind == "page" && t.url.starts_with(url))
        .context("the agent's tab is not among the targets")?;
    let front = cdp.new_page("about:blank").await?;
    cdp.call("Target.activateTarget", json!({ "targetId": front.target_id })).await?;
    front.call("Page.bringToFront", json!({})).await?;
    let agent_page = cdp.attach(&agent.target_id).await?;
    let visibility = agent_page.evaluate("document.visibilityState").await?.as_str().unwrap_or("?").to_string();
    let result = clicks(b, r).await;
    let _ = cdp.close_target(&front.target_id).await;
    let (stats, last) = result?;
    Ok((stats, last, visibility))
}

/// The ref of the first `role "name"` line of an interactive snapshot.
pub(super) async fn find_ref(b: &mut Bench, role: &str, name: &str) -> Result<String> {
    let t = b.mcp.ok("browser_snapshot", json!({ "interactive_only": true, "max_chars": 100_000_000 })).await?;
    let text = t.snapshot_text();
    let want = format!("{role} \"{name}\" [");
    let line = text.lines().find(|l| l.contains(&want)).with_context(|| format!("no {want} in the snapshot"))?;
    let start = line.find(&want).map(|i| i + want.len()).context("ref")?;
    let end = line[start..].find(']').context("ref end")? + start;
    Ok(line[start..end].to_string())
}

async fn clicks(b: &mut Bench, r: &str) -> Result<(Stats, Value)> {
    let (warmup, runs) = (b.config.warmup, b.config.runs);
    for _ in 0..warmup {
        b.mcp.ok("browser_click", json!({ "ref": r })).await?;
    }
    let mut samples = Vec::with_capacity(runs);
    let mut last = Value::Null;
    for _ in 0..runs {
        let t = b.mcp.ok("browser_click", json!({ "ref": r })).await?;
        samples.push(t.elapsed);
        last = t.data().clone();
    }
    Ok((Stats::of(&samples), last))
}

fn check_low_risk(data: &Value) -> Result<()> {
    if data["decided_by"] != "policy" || data["risk"] != "low" {
        bail!("the benchmark click was not a low-risk policy-allowed click: {data}");
    }
    Ok(())
}
