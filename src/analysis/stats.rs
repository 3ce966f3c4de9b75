//! Latency statistics of one stream: mean, nearest-rank percentiles, max, standard deviation.

use serde::{Deserialize, Serialize};

/// Summary of a set of latencies, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct LatencySummary {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    /// Sample standard deviation (n - 1 in the denominator; 0 for a single value).
    pub stddev: f64,
}

/// Nearest-rank percentile of sorted values: the smallest value with at least `p`% of values
/// at or below it. `sorted` must be non-empty and ascending.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    // The epsilon keeps 99.9% of 1000 at rank 999 despite 0.999 * 1000 = 999.0000000000001.
    let rank = ((p / 100.0) * n as f64 - 1e-9).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

/// Arithmetic mean (0 for no values).
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

/// Sample standard deviation (0 for fewer than two values).
pub fn stddev(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let m = mean(xs);
    (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64).sqrt()
}

/// Summarizes latencies given in milliseconds; `None` when there are none.
pub fn summarize(latencies_ms: &[f64]) -> Option<LatencySummary> {
    if latencies_ms.is_empty() {
        return None;
    }
    let mut s = latencies_ms.to_vec();
    s.sort_by(f64::total_cmp);
    Some(LatencySummary {
        mean: mean(&s),
        p50: percentile(&s, 50.0),
        p90: percentile(&s, 90.0),
        p99: percentile(&s, 99.0),
        p999: percentile(&s, 99.9),
        max: s[s.len() - 1],
        stddev: stddev(&s),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed() {
        let xs: Vec<f64> = (1..=10).map(|x| x as f64).collect();
        let s = summarize(&xs).unwrap();
        assert_eq!(s.mean, 5.5);
        assert_eq!(s.p50, 5.0);
        assert_eq!(s.p90, 9.0);
        assert_eq!(s.p99, 10.0);
        assert_eq!(s.max, 10.0);
        // sum of squared deviations = 82.5, / 9 = 9.1666..
        assert!((s.stddev - 9.166_666_666_666_666_f64.sqrt()).abs() < 1e-12);
        let one = summarize(&[3.0]).unwrap();
        assert_eq!((one.p999, one.stddev), (3.0, 0.0));
        assert!(summarize(&[]).is_none());
    }

    #[test]
    fn p999_of_a_thousand() {
        let xs: Vec<f64> = (1..=1000).map(|x| x as f64).collect();
        assert_eq!(percentile(&xs, 99.9), 999.0);
        assert_eq!(percentile(&xs, 50.0), 500.0);
    }
}
