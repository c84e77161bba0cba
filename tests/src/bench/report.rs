//! Result rows, targets and the printed table.

use serde::Serialize;
use serde_json::Value;

use super::stats::Stats;

/// One measured case.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub case: String,
    pub stats: Stats,
    /// Bytes of the rendered output (e.g. snapshot text), if relevant.
    pub bytes: Option<usize>,
    /// Rows on the page, for bytes a row.
    pub rows: Option<usize>,
    /// Free-form facts (pages, refs, completeness…).
    pub note: String,
}

impl Row {
    pub fn bytes_per_row(&self) -> Option<f64> {
        match (self.bytes, self.rows) {
            (Some(b), Some(r)) if r > 0 => Some(b as f64 / r as f64),
            _ => None,
        }
    }
}

/// A target from the issue, checked against a measured value.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub what: String,
    pub target: String,
    pub measured: String,
    pub pass: bool,
}

impl Check {
    /// `measured ≤ limit` (with `unit` for display).
    pub fn at_most(what: &str, measured: f64, limit: f64, unit: &str) -> Check {
        Check {
            what: what.to_string(),
            target: format!("≤ {} {unit}", fmt_num(limit)),
            measured: format!("{} {unit}", fmt_num(measured)),
            pass: measured <= limit,
        }
    }
}

/// What a suite hands back.
#[derive(Debug, Clone, Serialize)]
pub struct Suite {
    pub name: String,
    pub rows: Vec<Row>,
    pub checks: Vec<Check>,
    /// Reference figures quoted in the issue, printed as they are.
    pub reference: Vec<String>,
    /// Anything else worth keeping (bundle sizes, profile breakdown…).
    pub extra: Value,
}

pub fn fmt_num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Prints the suite's table, checks and references.
pub fn print(suite: &Suite) {
    println!();
    println!("== {} ==", suite.name);
    let w = suite.rows.iter().map(|r| r.case.chars().count()).max().unwrap_or(4).max(4);
    println!("{:<w$}  {:>9}  {:>9}  {:>11}  {:>9}  note", "case", "median ms", "p90 ms", "bytes", "bytes/row");
    for r in &suite.rows {
        println!(
            "{:<w$}  {:>9}  {:>9}  {:>11}  {:>9}  {}",
            r.case,
            fmt_num(r.stats.median_ms),
            fmt_num(r.stats.p90_ms),
            r.bytes.map(|b| b.to_string()).unwrap_or_else(|| "-".into()),
            r.bytes_per_row().map(fmt_num).unwrap_or_else(|| "-".into()),
            r.note
        );
    }
    if !suite.checks.is_empty() {
        println!();
        println!("targets (issue):");
        let w = suite.checks.iter().map(|c| c.what.chars().count()).max().unwrap_or(4);
        for c in &suite.checks {
            let mark = if c.pass { "✓" } else { "✗ MISSED" };
            println!("  {mark:<8} {:<w$}  target {:<14} measured {}", c.what, c.target, c.measured);
        }
    }
    if !suite.reference.is_empty() {
        println!();
        println!("for comparison (quoted in the issue, same machine type, same page shapes):");
        for r in &suite.reference {
            println!("  {r}");
        }
    }
}
