//! A Chrome trace of a whole run (`--trace`), every process of the browser
//! at once: what the renderers, the browser process and the extension's
//! service worker did while the calls were slow. Written to
//! `target/bench/<suite>.trace.json` for chrome://tracing or Perfetto; the
//! suite prints where the CPU went over time.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::{Value, json};
use tests::Cdp;

/// Top-level tasks of every thread, V8's compilers, and the clock marker.
const CATEGORIES: &str = "toplevel,v8,v8.wasm,disabled-by-default-v8.compile,blink.user_timing,devtools.timeline";

pub async fn start(cdp: &Cdp) -> Result<()> {
    cdp.call(
        "Tracing.start",
        json!({ "traceConfig": { "includedCategories": CATEGORIES.split(',').collect::<Vec<_>>(), "recordMode": "recordContinuously" },
                "transferMode": "ReturnAsStream", "streamFormat": "json" }),
    )
    .await?;
    Ok(())
}

/// Marks "now" in the trace (the start of the measured run).
pub async fn mark(cdp: &Cdp, id: &str) -> Result<()> {
    cdp.call("Tracing.recordClockSyncMarker", json!({ "syncId": id })).await?;
    Ok(())
}

/// Ends the trace and returns its events.
pub async fn stop(cdp: &Cdp) -> Result<Vec<Value>> {
    let mut events = cdp.events();
    cdp.call("Tracing.end", json!({})).await?;
    let stream = loop {
        let ev = tokio::time::timeout(Duration::from_secs(30), events.recv()).await.context("no tracingComplete")??;
        if ev["method"] == "Tracing.tracingComplete" {
            break ev["params"]["stream"].as_str().context("no trace stream")?.to_string();
        }
    };
    let mut text = Vec::new();
    loop {
        let r = cdp.call("IO.read", json!({ "handle": stream, "size": 1 << 20 })).await?;
        let chunk = r["data"].as_str().unwrap_or("");
        anyhow::ensure!(r["base64Encoded"] != json!(true), "the trace stream came base64-encoded");
        text.extend_from_slice(chunk.as_bytes());
        if r["eof"] == json!(true) {
            break;
        }
    }
    let _ = cdp.call("IO.close", json!({ "handle": stream })).await;
    let v: Value = serde_json::from_slice(&text).context("trace JSON")?;
    Ok(match v {
        Value::Array(a) => a,
        mut o => o["traceEvents"].take().as_array().cloned().unwrap_or_default(),
    })
}

/// CPU milliseconds per process kind in each `bucket_ms` of the run (from
/// the marker `id` on): the thread time of every thread's top-level tasks
/// (wall time would count a task the OS had put aside).
pub fn busy_over_time(events: &[Value], id: &str, bucket_ms: f64) -> Vec<(f64, BTreeMap<String, f64>)> {
    let start = events
        .iter()
        .find(|e| e["name"] == "clock_sync" && e["args"]["sync_id"] == json!(id))
        .and_then(|e| e["ts"].as_f64())
        .unwrap_or(0.0);
    let mut names: HashMap<i64, String> = HashMap::new();
    for e in events.iter().filter(|e| e["ph"] == "M" && e["name"] == "process_name") {
        if let (Some(pid), Some(n)) = (e["pid"].as_i64(), e["args"]["name"].as_str()) {
            names.insert(pid, n.to_string());
        }
    }
    let kind = |pid: i64| names.get(&pid).cloned().unwrap_or_else(|| format!("pid {pid}"));
    // Top-level task slices, merged per thread (a few categories overlap).
    let mut by_thread: HashMap<(i64, i64), Vec<(f64, f64)>> = HashMap::new();
    for e in events.iter().filter(|e| e["ph"] == "X" && e["cat"] == "toplevel") {
        let (Some(pid), Some(tid), Some(ts), Some(cpu)) =
            (e["pid"].as_i64(), e["tid"].as_i64(), e["ts"].as_f64(), e["tdur"].as_f64())
        else {
            continue;
        };
        // Placed at the task's start, as long as its CPU time.
        by_thread.entry((pid, tid)).or_default().push((ts, ts + cpu));
    }
    let mut buckets: BTreeMap<i64, BTreeMap<String, f64>> = BTreeMap::new();
    for ((pid, _), mut spans) in by_thread {
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut end = f64::MIN;
        let k = kind(pid);
        for (s, e) in spans {
            let s = s.max(end);
            if e <= s {
                continue;
            }
            end = e;
            // Split across buckets.
            let mut t = s;
            while t < e {
                let b = ((t - start) / 1000.0 / bucket_ms).floor() as i64;
                let b_end = start + (b as f64 + 1.0) * bucket_ms * 1000.0;
                let upto = e.min(b_end);
                *buckets.entry(b).or_default().entry(k.clone()).or_default() += (upto - t) / 1000.0;
                t = upto;
            }
        }
    }
    buckets.into_iter().filter(|(b, _)| *b >= 0).map(|(b, m)| (b as f64 * bucket_ms, m)).collect()
}

/// Writes the trace for chrome://tracing or Perfetto and prints the CPU
/// each kind of process used over the run.
pub fn report(events: &[Value], id: &str, path: &std::path::Path) -> Result<()> {
    std::fs::write(path, serde_json::to_string(&json!({ "traceEvents": events }))?)?;
    println!("trace: {} events in {}; CPU ms per 250 ms of the run, by process:", events.len(), path.display());
    for (at, by) in busy_over_time(events, id, 250.0) {
        let parts: Vec<String> = by.iter().map(|(k, v)| format!("{k} {v:.0}")).collect();
        println!("  {:>6.2} s  {}", at / 1000.0, parts.join(", "));
    }
    Ok(())
}
