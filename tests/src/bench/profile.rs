//! Where the time of a snapshot goes, seen from outside the product:
//! CDP's sampling profiler on the page and on the service worker, and
//! direct calls into the content script from its own isolated world.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};
use tests::{Cdp, CdpSession};

/// Attaches to the page target showing `url`.
pub async fn attach_page(cdp: &Cdp, url: &str) -> Result<CdpSession> {
    let targets = cdp.targets().await?;
    let t = targets
        .into_iter()
        .find(|t| t.kind == "page" && t.url == url)
        .ok_or_else(|| anyhow!("no page target at {url}"))?;
    cdp.attach(&t.target_id).await
}

/// The execution context id of the extension's content-script world in
/// the page's main frame.
pub async fn content_world(cdp: &Cdp, page: &CdpSession) -> Result<i64> {
    let mut events = cdp.events();
    page.call("Runtime.enable", json!({})).await?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    let mut found = None;
    while let Ok(Ok(ev)) = tokio::time::timeout_at(deadline, events.recv()).await {
        if ev["sessionId"] != json!(page.session_id) || ev["method"] != "Runtime.executionContextCreated" {
            continue;
        }
        let ctx = &ev["params"]["context"];
        let isolated = ctx["auxData"]["type"] == "isolated";
        let ours =
            ctx["origin"].as_str().is_some_and(|o| o.starts_with("chrome-extension://")) || ctx["name"] == "Chaperone";
        let main_frame = ctx["auxData"]["frameId"] == json!(page.target_id);
        if isolated && ours && main_frame {
            found = ctx["id"].as_i64();
            if found.is_some() {
                break;
            }
        }
    }
    found.context("no content-script world in the page (has the extension talked to it yet?)")
}

/// Evaluates `expression` (awaiting promises) in context `ctx`.
pub async fn eval_in(page: &CdpSession, ctx: i64, expression: &str) -> Result<Value> {
    let r = page
        .call(
            "Runtime.evaluate",
            json!({ "expression": expression, "contextId": ctx, "returnByValue": true, "awaitPromise": true }),
        )
        .await?;
    if let Some(ex) = r.get("exceptionDetails") {
        bail!("evaluation threw: {}", ex["exception"]["description"].as_str().unwrap_or(&ex.to_string()));
    }
    Ok(r["result"]["value"].clone())
}

/// Calls the content script's `handle_message` directly, `n` times for a
/// full and `n` times for an interactive-only snapshot, and once more to
/// return the reply JSON. Times are `performance.now()` in the page.
pub const IN_PAGE_TIMING: &str = r#"(async (n, fullOnly) => {
  const m = await globalThis.__chaperoneContent; // set by the content script in this world
  // A snapshot comes as {head, nodes}: the answer as one JSON text again.
  const whole = (r) => typeof r === 'string' ? r : r.head.replace('"nodes":[]', () => '"nodes":' + r.nodes);
  const time = async (request) => {
    const ms = []; let len = 0;
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const s = await m.handle_message({ type: 'snapshot', request });
      ms.push(performance.now() - t0); len = whole(s).length;
    }
    return { ms, len };
  };
  const all = 100000000; // max_chars for one page holding everything, as the bench asks
  const full = await time({ max_chars: all });
  const interactive = fullOnly ? { ms: [], len: 0 } : await time({ max_chars: all, interactive_only: true });
  const reply = whole(await m.handle_message({ type: 'snapshot', request: { max_chars: all } }));
  reply.charCodeAt(0); // one flat string before timing its parse
  const t0 = performance.now(); JSON.parse(reply); const parse_ms = performance.now() - t0;
  const nodes = document.getElementsByTagName('*').length;
  return { full, interactive, parse_ms, reply, dom_elements: nodes };
})"#;

/// Starts the sampling profiler on a target (interval in µs).
pub async fn start_profiler(s: &CdpSession, interval_us: u32) -> Result<()> {
    s.call("Profiler.enable", json!({})).await?;
    s.call("Profiler.setSamplingInterval", json!({ "interval": interval_us })).await?;
    s.call("Profiler.start", json!({})).await?;
    Ok(())
}

/// Stops the profiler and sums self time (ms) by category.
pub async fn stop_profiler(s: &CdpSession) -> Result<Vec<(String, f64)>> {
    let r = s.call("Profiler.stop", json!({})).await?;
    let _ = s.call("Profiler.disable", json!({})).await;
    Ok(categorise(&r["profile"]))
}

/// Stops the profiler and returns the raw profile.
pub async fn stop_profiler_raw(s: &CdpSession) -> Result<Value> {
    let r = s.call("Profiler.stop", json!({})).await?;
    let _ = s.call("Profiler.disable", json!({})).await;
    Ok(r["profile"].clone())
}

/// Per function of the content script (a build with names, see
/// `CHAPERONE_KEEP_NAMES`): `(name, self ms, inclusive ms)`, by inclusive
/// time, the `n` largest. Inclusive counts a sample once per function even
/// when it recurses.
pub fn functions(profile: &Value, n: usize) -> Vec<(String, f64, f64)> {
    let mut parent: HashMap<i64, i64> = HashMap::new();
    let mut name: HashMap<i64, String> = HashMap::new();
    for node in profile["nodes"].as_array().into_iter().flatten() {
        let id = node["id"].as_i64().unwrap_or(-1);
        for c in node["children"].as_array().into_iter().flatten() {
            if let Some(c) = c.as_i64() {
                parent.insert(c, id);
            }
        }
        let f = node["callFrame"]["functionName"].as_str().unwrap_or("");
        let file = node["callFrame"]["url"].as_str().unwrap_or("").rsplit('/').next().unwrap_or("").to_string();
        let label = if f.is_empty() { format!("(anonymous) {file}") } else { format!("{f} {file}") };
        name.insert(id, label);
    }
    let samples = profile["samples"].as_array().cloned().unwrap_or_default();
    let deltas = profile["timeDeltas"].as_array().cloned().unwrap_or_default();
    let mut own: HashMap<String, f64> = HashMap::new();
    let mut incl: HashMap<String, f64> = HashMap::new();
    for (i, s) in samples.iter().enumerate() {
        let dt = deltas.get(i + 1).and_then(Value::as_f64).unwrap_or(0.0) / 1000.0;
        let mut id = s.as_i64().unwrap_or(-1);
        if let Some(f) = name.get(&id) {
            *own.entry(f.clone()).or_default() += dt;
        }
        let mut seen = std::collections::HashSet::new();
        while let Some(f) = name.get(&id) {
            if seen.insert(f.clone()) {
                *incl.entry(f.clone()).or_default() += dt;
            }
            match parent.get(&id) {
                Some(p) => id = *p,
                None => break,
            }
        }
    }
    let mut v: Vec<(String, f64, f64)> =
        incl.into_iter().map(|(f, t)| (f.clone(), own.get(&f).copied().unwrap_or(0.0), t)).collect();
    v.retain(|(f, _, _)| !f.starts_with('('));
    v.sort_by(|a, b| b.2.total_cmp(&a.2));
    v.truncate(n);
    v
}

/// Prints where a profile's time went: busy time against the run's wall
/// time, self time by category, and the `n` largest functions.
pub fn print_summary(what: &str, profile: &Value, wall_ms: f64, n: usize) {
    let by = categorise(profile);
    let busy: f64 = by.iter().filter(|(c, _)| c != "(idle)").map(|(_, t)| t).sum();
    println!(
        "{what}: script busy {} ms of {} ms ({:.0} %); self time by category:",
        super::fmt_ms(busy),
        super::fmt_ms(wall_ms),
        100.0 * busy / wall_ms.max(1.0)
    );
    for (c, t) in by.iter().filter(|(c, _)| c != "(idle)").take(12) {
        println!("  {:>9} ms  {c}", super::fmt_ms(*t));
    }
    println!("by function (self / inclusive ms):");
    for (f, own, incl) in functions(profile, n) {
        println!("  {:>9} {:>9}  {f}", super::fmt_ms(own), super::fmt_ms(incl));
    }
}

/// Self time by category: `(idle)`, `(program)`, `(garbage collector)`,
/// the wasm2js module, wasm-bindgen glue, other script files by name, and
/// native functions (DOM API calls) by name.
pub fn categorise(profile: &Value) -> Vec<(String, f64)> {
    let mut category: HashMap<i64, String> = HashMap::new();
    for n in profile["nodes"].as_array().into_iter().flatten() {
        let id = n["id"].as_i64().unwrap_or(-1);
        let f = n["callFrame"]["functionName"].as_str().unwrap_or("");
        let url = n["callFrame"]["url"].as_str().unwrap_or("");
        let file = url.rsplit('/').next().unwrap_or("");
        let c = if f.starts_with('(') {
            f.to_string()
        } else if file.ends_with(".wasm.js") {
            format!("wasm2js code ({file})")
        } else if file.ends_with("_bg.js") || (url.contains("chrome-extension://") && file.ends_with(".js")) {
            let line = n["callFrame"]["lineNumber"].as_i64().unwrap_or(-1) + 1;
            if f.is_empty() { format!("glue {file}: (anonymous, line {line})") } else { format!("glue {file}: {f}") }
        } else if url.starts_with("wasm://") {
            "wasm code".to_string()
        } else if url.is_empty() {
            format!("native: {}", if f.is_empty() { "(anonymous)" } else { f })
        } else {
            format!("script: {file}")
        };
        category.insert(id, c);
    }
    let samples = profile["samples"].as_array().cloned().unwrap_or_default();
    let deltas = profile["timeDeltas"].as_array().cloned().unwrap_or_default();
    let mut total: HashMap<String, f64> = HashMap::new();
    for (i, s) in samples.iter().enumerate() {
        // timeDeltas[i+1] is the time until the next sample: the time spent in sample i.
        let dt = deltas.get(i + 1).and_then(Value::as_f64).unwrap_or(0.0) / 1000.0;
        let c = category.get(&s.as_i64().unwrap_or(-1)).cloned().unwrap_or_else(|| "?".into());
        *total.entry(c).or_default() += dt;
    }
    let mut v: Vec<(String, f64)> = total.into_iter().collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    v
}

/// Waits (≤ ~90 s) until the page at `url` runs script again: a snapshot
/// that timed out in the bridge may still be walking the page.
pub async fn wait_page_idle(cdp: &Cdp, url: &str) {
    let Ok(page) = attach_page(cdp, url).await else { return };
    for _ in 0..3 {
        if page.evaluate("1").await.is_ok() {
            break;
        }
    }
    let _ = cdp.call("Target.detachFromTarget", json!({ "sessionId": page.session_id })).await;
}
