//! The `dashboard` suite (issue 36): `GET /dashboard/data` over an audit
//! log of [`ROWS`] rows (written straight into the daemon's SQLite file in
//! one transaction: [`SESSIONS`] agents over [`SITES`] sites and 30 days,
//! every kind of row), measured over HTTP with the dashboard token, as the
//! page asks for it: everything (the default view), one agent, one site,
//! and a search. Target: the default call's p90 within the page's poll
//! interval (`shared::dashboard::POLL_MS`), so a live page keeps up.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::json;

use super::Bench;
use super::report::{Check, Row, Suite};
use super::stats::Stats;

/// Audit rows in the store.
pub const ROWS: usize = 100_000;
/// Agents those rows belong to.
pub const SESSIONS: usize = 50;
/// Sites they visit.
pub const SITES: usize = 30;

const TOOLS: [&str; 8] = [
    "browser_click",
    "browser_type",
    "browser_navigate",
    "browser_select_option",
    "browser_tabs",
    "download",
    "handoff",
    "flow_run",
];

fn fill(db: &std::path::Path) -> Result<()> {
    let mut conn = rusqlite::Connection::open(db).with_context(|| format!("open {}", db.display()))?;
    conn.busy_timeout(Duration::from_secs(10))?;
    let tx = conn.transaction()?;
    {
        let mut insert = tx.prepare(
            "INSERT INTO audit (time, time_unix, session, tab, tool, summary, url, risk, reasons, decision, decided_by, outcome, client)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        )?;
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs() as i64;
        let start = now - 30 * 86_400;
        for i in 0..ROWS {
            let t = start + (i as i64 * 30 * 86_400) / ROWS as i64;
            let session = format!("mcp:{:08x}", (i * SESSIONS / ROWS) as u32 ^ 0x5a5a_0000);
            let tool = TOOLS[i % TOOLS.len()];
            let site = i % SITES;
            let url = format!("https://site{site}.example/account/page{}", i % 97);
            let (risk, decision, by) = match i % 10 {
                0 => ("high", "confirm", None),
                1 => ("high", "approved", Some("human")),
                2 => ("high", "deny", Some("policy")),
                3 => ("medium", "denied", Some("timeout")),
                _ => ("low", "allow", Some("policy")),
            };
            insert.execute(rusqlite::params![
                rfc3339(t),
                t,
                session,
                (i % 7) as i64,
                tool,
                format!("click button \"Row {i} of the bench\" {{secret:BENCH_{}}}", i % 5),
                url,
                risk,
                r#"["name matches \"delete\""]"#,
                decision,
                by,
                "ok",
                format!("bench-agent-{}", i * SESSIONS / ROWS),
            ])?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// `YYYY-MM-DDTHH:MM:SSZ` of Unix seconds (civil-from-days).
fn rfc3339(t: i64) -> String {
    let (days, secs) = (t.div_euclid(86_400), t.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", secs / 3600, secs % 3600 / 60, secs % 60)
}

pub async fn run(b: &mut Bench) -> Result<Suite> {
    let home = b.daemon.home().to_path_buf();
    let db = home.join("chaperone.db");
    let filled = Instant::now();
    tokio::task::block_in_place(|| fill(&db))?;
    let fill_s = filled.elapsed().as_secs_f64();
    let token = std::fs::read_to_string(home.join("dashboard-token")).context("the dashboard token")?;
    let base = format!("http://127.0.0.1:{}/dashboard/data", b.daemon.port());
    let http = reqwest::Client::builder().timeout(Duration::from_secs(60)).build()?;
    let cases: [(&str, String); 4] = [
        ("all agents (default view)", String::new()),
        ("one agent", format!("session=mcp:{:08x}", 7u32 ^ 0x5a5a_0000)),
        ("one site", "site=https%3A%2F%2Fsite3.example".to_string()),
        ("search", "q=Row%2099".to_string()),
    ];
    let mut rows = Vec::new();
    let mut checks = Vec::new();
    for (name, query) in cases {
        let url = if query.is_empty() { base.clone() } else { format!("{base}?{query}") };
        let mut samples = Vec::new();
        let mut bytes = 0;
        let mut timeline = 0;
        for i in 0..(b.config.warmup + b.config.runs) {
            let t = Instant::now();
            let resp = http.get(&url).header("Authorization", format!("Bearer {}", token.trim())).send().await?;
            let status = resp.status();
            let body = resp.bytes().await?;
            let took = t.elapsed();
            if !status.is_success() {
                bail!("{name}: {status}");
            }
            if i >= b.config.warmup {
                samples.push(took);
            }
            bytes = body.len();
            let v: serde_json::Value = serde_json::from_slice(&body)?;
            timeline = v["rows"].as_array().map_or(0, Vec::len);
        }
        let stats = Stats::of(&samples);
        if name.starts_with("all agents") {
            checks.push(Check::at_most(
                "data call p90, 100,000 rows",
                stats.p90_ms,
                f64::from(shared::dashboard::POLL_MS),
                "ms",
            ));
        }
        rows.push(Row {
            case: name.to_string(),
            stats,
            bytes: Some(bytes),
            rows: Some(timeline),
            note: format!("{timeline} timeline rows"),
        });
    }
    Ok(Suite {
        name: "dashboard".into(),
        rows,
        checks,
        reference: vec![format!(
            "{ROWS} audit rows, {SESSIONS} agents, {SITES} sites, 30 days; written in {fill_s:.1} s"
        )],
        extra: json!({ "audit_rows": ROWS, "sessions": SESSIONS, "sites": SITES }),
    })
}
