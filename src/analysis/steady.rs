//! When a throughput series has settled: a steady-state rule in the manner of fio's
//! `steadystate=bw_slope:` criterion. Over a sliding window of W intervals, fit a least-squares
//! line to the series; the series has settled at the first window whose fitted change across
//! the window (|slope| x the window's length) is at most `tolerance` of the window's mean. The
//! settled level is the mean from that window's start to the end of the series.

/// Where and at what level a series settled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settled {
    /// Index of the first interval of the first steady window.
    pub from: usize,
    /// Mean of the series from `from` to its end.
    pub level: f64,
}

/// Least-squares slope of `ys` against their indices (per interval); 0 for fewer than 2.
pub fn slope(ys: &[f64]) -> f64 {
    let n = ys.len() as f64;
    if ys.len() < 2 {
        return 0.0;
    }
    let mx = (n - 1.0) / 2.0;
    let my = ys.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in ys.iter().enumerate() {
        let dx = i as f64 - mx;
        sxy += dx * (y - my);
        sxx += dx * dx;
    }
    sxy / sxx
}

/// Whether one window is steady: its fitted change over its length is within `tolerance`
/// (a fraction, 0.1 = 10%) of its mean, and its mean is above zero.
pub fn steady(window: &[f64], tolerance: f64) -> bool {
    let mean = window.iter().sum::<f64>() / window.len().max(1) as f64;
    mean > 0.0 && (slope(window) * window.len() as f64).abs() <= tolerance * mean
}

/// The first steady window of `w` intervals (at least 2) in `series`, or `None` when no window
/// is (or the series is shorter than one window).
pub fn settle(series: &[f64], w: usize, tolerance: f64) -> Option<Settled> {
    let w = w.max(2);
    if series.len() < w {
        return None;
    }
    let from = (0..=series.len() - w).find(|&j| steady(&series[j..j + w], tolerance))?;
    let rest = &series[from..];
    Some(Settled {
        from,
        level: rest.iter().sum::<f64>() / rest.len() as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slope_of_a_line_is_its_slope() {
        assert!((slope(&[1.0, 3.0, 5.0, 7.0]) - 2.0).abs() < 1e-12);
        assert_eq!(slope(&[4.0; 5]), 0.0);
        assert_eq!(slope(&[4.0]), 0.0);
    }

    #[test]
    fn a_page_cache_burst_then_a_level_settles_after_the_burst() {
        // Two seconds at memory speed, then the disk's rate with some noise (seed 001's
        // buffered dd: "after some time it settled down").
        let mut s = vec![1500.0, 1400.0];
        s.extend([300.0, 290.0, 305.0, 298.0, 301.0, 295.0, 299.0, 302.0]);
        let got = settle(&s, 4, 0.10).unwrap();
        assert_eq!(got.from, 2);
        let level = s[2..].iter().sum::<f64>() / 8.0;
        assert!((got.level - level).abs() < 1e-9);
    }

    #[test]
    fn a_rising_or_empty_series_never_settles() {
        let rising: Vec<f64> = (1..=20).map(|i| 10.0 * i as f64).collect();
        assert_eq!(settle(&rising, 5, 0.10), None);
        assert_eq!(settle(&[0.0; 10], 3, 0.10), None, "nothing moved");
        assert_eq!(settle(&[5.0, 5.0], 3, 0.10), None, "shorter than a window");
        // Within tolerance: a change of 8% of the mean over the window.
        let gentle = [96.0, 98.0, 100.0, 102.0];
        assert!(steady(&gentle, 0.10));
        assert!(!steady(&gentle, 0.05));
    }
}
