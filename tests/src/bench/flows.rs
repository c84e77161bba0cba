//! The `flows` suite (issue 11): replay time per step of a flow on the
//! flow shop (`fixtures/sites/flowshop/`), through the whole stack — for
//! each step `flow_run` finds the element on the live page (`Locate`),
//! resolves, classifies and decides it, and the extension gates and acts.
//! The flow is the recorded purchase up to the address form's last
//! low-risk step (14 steps, 13 on elements: the two high-risk ones would
//! wait for a person); each run starts from the shop's front page.

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::Bench;
use super::report::{Check, Row, Suite};
use super::stats::Stats;

/// Target: a step of a replay costs about one gated action.
const STEP_MEDIAN_MS: f64 = 100.0;

pub async fn run(b: &mut Bench) -> Result<Suite> {
    let shop = tests::FixtureServer::start();
    let base = shop.url("/flowshop/");
    let mut flow = tests::flowshop::purchase(&base);
    let steps = flow["steps"].as_array_mut().context("steps")?;
    steps.truncate(steps.len() - 2);
    let n = steps.len();
    tests::flowshop::import_into(&b.daemon, &flow, "bench");
    b.mcp.ok("browser_tabs", json!({ "action": "new" })).await?;
    let runs = b.config.runs.clamp(1, 10);
    let mut element_ms = Vec::new();
    let mut navigate_ms = Vec::new();
    let mut whole = Vec::new();
    for i in 0..b.config.warmup.min(1) + runs {
        let t = b.mcp.ok("flow_run", json!({ "name": "bench", "params": tests::flowshop::new_params() })).await?;
        let data = t.data();
        if data["ok"] != json!(true) {
            bail!("the benchmark flow failed: {data}");
        }
        if i < b.config.warmup.min(1) {
            continue;
        }
        whole.push(t.elapsed);
        for s in data["steps"].as_array().context("steps")? {
            let ms = s["ms"].as_f64().unwrap_or_default();
            if s["effect"] == "navigated" && s["via"].is_null() {
                navigate_ms.push(ms);
            } else {
                element_ms.push(ms);
            }
        }
    }
    let element = Stats::of_ms(&element_ms);
    let rows = vec![
        Row {
            case: format!("element step ({} per run)", n - 1),
            stats: element.clone(),
            bytes: None,
            rows: None,
            note: "locate + resolve + gate + act".into(),
        },
        Row {
            case: "navigation step".into(),
            stats: Stats::of_ms(&navigate_ms),
            bytes: None,
            rows: None,
            note: "load + challenge check".into(),
        },
        Row {
            case: format!("whole flow ({n} steps)"),
            stats: Stats::of(&whole),
            bytes: None,
            rows: None,
            note: String::new(),
        },
    ];
    Ok(Suite {
        name: "flows".into(),
        rows,
        checks: vec![Check::at_most("replay, element step, median", element.median_ms, STEP_MEDIAN_MS, "ms")],
        reference: Vec::new(),
        extra: Value::Null,
    })
}
