//! How busy the machine was while a suite ran, printed beside its figures.
//!
//! The times of one build swing by a factor of two between runs on a
//! shared 2-core machine (BENCHMARKS.md, "Reading a run"): the same form
//! snapshot measured 9.4 ms in one run and 21 ms in another, with
//! Playwright MCP slowed alike. Two readings tell such runs apart:
//!
//! - **Reference work**: a fixed, single-threaded integer loop, timed
//!   before and after the suite (median of a few short runs). It slows
//!   down when the host gives this machine less CPU, whatever the cause
//!   (other guests, frequency), which steal time alone does not show.
//! - **CPU use** from `/proc/stat` over the suite: busy and steal, as a
//!   share of both cores. Busy includes the stack under test.
//!
//! Neither changes a figure or a target; they are there to read a run by.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::stats::Stats;

/// Iterations of the reference loop (11–17 ms on this 2-core machine when
/// quiet, 20–36 when slow).
const REFERENCE_STEPS: u64 = 4_000_000;
/// Runs of the loop; their median is the reading.
const REFERENCE_RUNS: usize = 7;

/// The reference loop's median time, in ms.
pub fn reference_ms() -> f64 {
    let times: Vec<Duration> = (0..REFERENCE_RUNS)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(reference_work(std::hint::black_box(REFERENCE_STEPS)));
            t.elapsed()
        })
        .collect();
    Stats::of(&times).median_ms
}

/// A chain of dependent integer steps (xorshift and multiply) the compiler
/// cannot shorten or vectorise.
fn reference_work(steps: u64) -> u64 {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..steps {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = x.wrapping_mul(0x2545_f491_4f6c_dd1d).wrapping_add(i);
    }
    x
}

/// CPU time the whole machine has spent busy (all cores, not idle, not
/// stolen) since it started, in ms: the difference over a run is the work
/// the run cost, steadier from run to run than its latencies.
pub fn busy_cpu_ms() -> Option<f64> {
    let (total, idle, steal) = cpu_ticks()?;
    // /proc/stat counts in USER_HZ, 100 a second on Linux.
    Some((total - idle - steal) as f64 * 10.0)
}

/// The `cpu` line of `/proc/stat`: (all ticks, idle + iowait, steal).
/// `None` where there is no such file.
fn cpu_ticks() -> Option<(u64, u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    parse_cpu_line(stat.lines().next()?)
}

fn parse_cpu_line(line: &str) -> Option<(u64, u64, u64)> {
    let mut fields = line.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let v: Vec<u64> = fields.map(|f| f.parse().ok()).collect::<Option<_>>()?;
    if v.len() < 8 {
        return None;
    }
    // user nice system idle iowait irq softirq steal [guest guest_nice]:
    // guest time is already counted in user and nice.
    let total = v[..8].iter().sum();
    Some((total, v[3] + v[4], v[7]))
}

/// Readings taken when a suite starts.
pub struct Start {
    reference_ms: f64,
    ticks: Option<(u64, u64, u64)>,
}

/// What [`Start::finish`] found, kept in the suite's JSON.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub reference_ms_before: f64,
    pub reference_ms_after: f64,
    /// Share of both cores busy over the suite (the stack included), %.
    pub busy_pct: Option<f64>,
    /// Share of both cores the host took for others (steal), %.
    pub steal_pct: Option<f64>,
}

pub fn start() -> Start {
    Start { reference_ms: reference_ms(), ticks: cpu_ticks() }
}

impl Start {
    pub fn finish(self) -> Machine {
        let after = cpu_ticks();
        let reference_ms_after = reference_ms();
        let (busy_pct, steal_pct) = match (self.ticks, after) {
            (Some(a), Some(b)) => shares(a, b),
            _ => (None, None),
        };
        Machine { reference_ms_before: self.reference_ms, reference_ms_after, busy_pct, steal_pct }
    }
}

/// Busy and steal shares between two `cpu` readings.
fn shares(a: (u64, u64, u64), b: (u64, u64, u64)) -> (Option<f64>, Option<f64>) {
    let total = b.0.saturating_sub(a.0);
    if total == 0 {
        return (None, None);
    }
    let pct = |n: u64| Some(100.0 * n as f64 / total as f64);
    (pct(total.saturating_sub(b.1.saturating_sub(a.1))), pct(b.2.saturating_sub(a.2)))
}

impl Machine {
    /// One line for the report.
    pub fn line(&self) -> String {
        let pct = |p: Option<f64>| p.map_or_else(|| "unknown".to_string(), |p| format!("{p:.0} %"));
        format!(
            "machine: reference work {:.1} ms before, {:.1} ms after (BENCHMARKS.md, \"Reading a run\"); CPU busy {}, steal {}",
            self.reference_ms_before,
            self.reference_ms_after,
            pct(self.busy_pct),
            pct(self.steal_pct)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_cpu_line_and_its_shares() {
        let a = parse_cpu_line("cpu  100 0 50 800 20 0 0 30 0 0").unwrap();
        assert_eq!(a, (1000, 820, 30));
        let b = parse_cpu_line("cpu  300 0 100 1300 20 0 0 80 5 0").unwrap();
        let (busy, steal) = shares(a, b);
        // 800 ticks passed: 500 idle, 50 stolen.
        assert_eq!(busy, Some(37.5));
        assert_eq!(steal, Some(6.25));
        assert_eq!(parse_cpu_line("cpu0 1 2 3 4 5 6 7 8"), None);
        assert_eq!(parse_cpu_line("cpu 1 2 3"), None);
        assert_eq!(shares(a, a), (None, None));
    }

    #[test]
    fn the_reference_work_is_deterministic() {
        assert_eq!(reference_work(1_000), reference_work(1_000));
        assert_ne!(reference_work(1_000), reference_work(1_001));
    }
}
