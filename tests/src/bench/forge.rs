//! The `forge` suite (issue 34): `chaperone api learn` on a 5,000-entry
//! HAR modelled on the library API (twelve operations, ids varying, one
//! bearer token and a session cookie in every request, pages, scripts and
//! beacons among the API calls): wall time per run and the process's peak
//! memory (`VmHWM`, read while it runs).

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::Bench;
use super::report::{Check, Row, Suite};
use super::stats::Stats;

/// Entries in the benchmark HAR.
pub const ENTRIES: usize = 5_000;
/// Target: learning from 5,000 entries takes at most this long.
const LEARN_MEDIAN_MS: f64 = 2_000.0;
/// Target: and at most this much memory (peak resident set).
const PEAK_MIB: f64 = 256.0;

fn entry(method: &str, url: String, body: Option<Value>, status: u16, answer: Option<Value>, kind: &str) -> Value {
    let mut req = json!({
        "method": method, "url": url, "httpVersion": "HTTP/1.1",
        "headers": [
            {"name": "Authorization", "value": "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJiZW5jaCJ9.c2lnbmF0dXJlYmVuY2g"},
            {"name": "Cookie", "value": "lib_session=s0123456789abcdef"},
        ],
        "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0,
    });
    if let Some(b) = body {
        req["postData"] = json!({"mimeType": "application/json", "text": b.to_string()});
    }
    let (mime, text) = match (kind, answer) {
        ("document", _) => ("text/html", "<!doctype html><title>Library</title>".to_string()),
        ("script", _) => ("text/javascript", "console.log(1)".to_string()),
        (_, Some(a)) => ("application/json", a.to_string()),
        _ => ("", String::new()),
    };
    json!({
        "startedDateTime": "2026-12-04T15:00:00.000Z", "time": 1, "request": req,
        "response": {"status": status, "statusText": "", "httpVersion": "HTTP/1.1",
                     "headers": [{"name": "Content-Type", "value": mime}], "cookies": [],
                     "content": {"size": text.len(), "mimeType": mime, "text": text},
                     "redirectURL": "", "headersSize": -1, "bodySize": -1},
        "cache": {}, "timings": {"send": 0, "wait": 1, "receive": 0}, "_resourceType": kind,
    })
}

/// A HAR of `n` entries on `base`.
pub fn har(base: &str, n: usize) -> Value {
    const STATUSES: [&str; 3] = ["available", "loaned", "repair"];
    const SHELVES: [&str; 4] = ["fantasy", "science-fiction", "classics", "humour"];
    let book = |i: usize| {
        let status = STATUSES[i % 3];
        json!({"id": i, "title": format!("Book {i}"), "slug": format!("book-{i}"),
               "author": {"id": format!("00000000-0000-4000-8000-{:012x}", i % 97), "name": "A"},
               "tags": ["fantasy", "award"], "published": "1990-01-01", "available": i.is_multiple_of(2),
               "copies": [{"barcode": format!("LIB-{i}"), "status": status}]})
    };
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let id = i % 500 + 1;
        let uuid = format!("00000000-0000-4000-8000-{:012x}", i % 300 + 1);
        out.push(match i % 14 {
            0 => entry("GET", format!("{base}/api/books?limit=20&page={}", i % 9 + 1), None, 200,
                       Some(json!({"items": (0..20).map(|k| book(id + k)).collect::<Vec<_>>(), "total": 500, "page": 1})), "fetch"),
            1 => entry("GET", format!("{base}/api/books/{id}"), None, 200, Some(book(id)), "fetch"),
            2 => entry("GET", format!("{base}/api/books/{id}/reviews?sort=rating"), None, 200,
                       Some(json!([{"id": i, "rating": 4, "text": "ok", "reviewer": {"name": "S"}, "created": "2026-01-02T10:00:00Z"}])), "fetch"),
            3 => entry("POST", format!("{base}/api/books/{id}/reviews"), Some(json!({"rating": 5, "text": "good"})), 201,
                       Some(json!({"id": i, "rating": 5, "text": "good", "reviewer": {"name": "S"}, "created": "2026-01-02T10:00:00Z"})), "fetch"),
            4 => entry("GET", format!("{base}/api/authors/{uuid}"), None, 200,
                       Some(json!({"id": uuid, "name": "A", "born": 1950, "books": [{"id": id, "title": "B"}]})), "fetch"),
            5 => entry("GET", format!("{base}/api/shelves/{}", SHELVES[(i / 14) % 4]), None, 200,
                       Some(json!({"slug": "s", "name": "S", "description": "d", "books": [{"id": id, "title": "B"}]})), "fetch"),
            6 => entry("GET", format!("{base}/api/loans?status=active"), None, 200,
                       Some(json!([{"id": uuid, "bookId": id, "due": "2026-12-20", "status": "active"}])), "fetch"),
            7 => entry("POST", format!("{base}/api/loans"), Some(json!({"bookId": id, "days": 14})), 201,
                       Some(json!({"id": uuid, "bookId": id, "due": "2026-12-20", "status": "active"})), "fetch"),
            8 => entry("DELETE", format!("{base}/api/loans/{uuid}"), None, 204, None, "fetch"),
            9 => entry("GET", format!("{base}/api/me"), None, 200,
                       Some(json!({"id": 42, "name": "R", "email": "r@example.org", "memberSince": "2019-04-02"})), "fetch"),
            10 => entry("PATCH", format!("{base}/api/me"), Some(json!({"name": "R"})), 200,
                        Some(json!({"id": 42, "name": "R", "email": "r@example.org", "memberSince": "2019-04-02"})), "fetch"),
            11 => entry("POST", format!("{base}/api/collect"), Some(json!({"event": "x"})), 204, None, "ping"),
            12 => entry("GET", format!("{base}/app.js"), None, 200, None, "script"),
            _ => entry("GET", format!("{base}/"), None, 200, None, "document"),
        });
    }
    json!({"log": {"version": "1.2", "creator": {"name": "bench", "version": "1"}, "entries": out}})
}

fn peak_kib(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

pub async fn run(b: &mut Bench) -> Result<Suite> {
    let dir = tests::temp_dir("bench-forge");
    let har_path = dir.path().join("bench.har");
    let text = har("https://library.example", ENTRIES).to_string();
    std::fs::write(&har_path, &text)?;
    let spec = dir.path().join("spec.json");
    let runs = b.config.runs.clamp(1, 10);
    let mut ms = Vec::new();
    let mut peak: u64 = 0;
    for _ in 0..runs + 1 {
        let start = Instant::now();
        let mut child = Command::new(tests::chaperone_bin())
            .args(["api", "learn"])
            .arg(&har_path)
            .arg("-o")
            .arg(&spec)
            .arg("--home")
            .arg(dir.path().join("home"))
            .stderr(std::process::Stdio::null())
            .spawn()
            .context("run chaperone api learn")?;
        let mut hwm = 0;
        let status = loop {
            if let Some(k) = peak_kib(child.id()) {
                hwm = hwm.max(k);
            }
            if let Some(s) = child.try_wait()? {
                break s;
            }
            if start.elapsed() > Duration::from_secs(120) {
                let _ = child.kill();
                bail!("api learn took over 120 s");
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        if !status.success() {
            bail!("api learn failed ({status})");
        }
        ms.push(start.elapsed().as_secs_f64() * 1000.0);
        peak = peak.max(hwm);
    }
    ms.remove(0);
    let stats = Stats::of_ms(&ms);
    let learned: Value = serde_json::from_str(&std::fs::read_to_string(&spec)?)?;
    let ops: usize =
        learned["paths"].as_object().map_or(0, |p| p.values().map(|i| i.as_object().map_or(0, |m| m.len())).sum());
    let peak_mib = peak as f64 / 1024.0;
    Ok(Suite {
        name: "forge".into(),
        rows: vec![Row {
            case: format!("api learn, {ENTRIES} entries ({} MiB HAR)", text.len() / (1024 * 1024)),
            stats: stats.clone(),
            bytes: Some(text.len()),
            rows: Some(ENTRIES),
            note: format!("{ops} operations learned; peak memory {peak_mib:.1} MiB"),
        }],
        checks: vec![
            Check::at_most("api learn, 5,000 entries, median", stats.median_ms, LEARN_MEDIAN_MS, "ms"),
            Check::at_most("api learn, 5,000 entries, peak memory", peak_mib, PEAK_MIB, "MiB"),
        ],
        reference: Vec::new(),
        extra: json!({"operations": ops, "peak_mib": peak_mib}),
    })
}
