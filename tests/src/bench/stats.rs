//! Sample statistics for the benchmarks.

use serde::Serialize;
use std::time::Duration;

/// Timings of one measured case, in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct Stats {
    pub runs: usize,
    pub median_ms: f64,
    pub p90_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub mean_ms: f64,
    pub samples_ms: Vec<f64>,
}

impl Stats {
    pub fn of(samples: &[Duration]) -> Stats {
        let ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
        Stats::of_ms(&ms)
    }

    pub fn of_ms(ms: &[f64]) -> Stats {
        let mut sorted = ms.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let mean = if n == 0 { 0.0 } else { sorted.iter().sum::<f64>() / n as f64 };
        Stats {
            runs: n,
            median_ms: percentile(&sorted, 50.0),
            p90_ms: percentile(&sorted, 90.0),
            min_ms: sorted.first().copied().unwrap_or(0.0),
            max_ms: sorted.last().copied().unwrap_or(0.0),
            mean_ms: mean,
            samples_ms: ms.iter().map(|v| (v * 100.0).round() / 100.0).collect(),
        }
    }
}

/// Linear-interpolated percentile of sorted samples (`p` in 0..=100).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    match sorted.len() {
        0 => 0.0,
        1 => sorted[0],
        n => {
            let rank = p / 100.0 * (n - 1) as f64;
            let lo = rank.floor() as usize;
            let hi = rank.ceil() as usize;
            sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_p90() {
        let s = Stats::of_ms(&[5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!(s.median_ms, 3.0);
        assert!((s.p90_ms - 4.6).abs() < 1e-9);
        assert_eq!(Stats::of_ms(&[7.0]).p90_ms, 7.0);
    }
}
