//! The few statistics the probes need: medians, order statistics, least squares, and the
//! pseudo-random offsets they draw (seeded, so a characterization is repeatable).

use crate::engine::rng::SplitMix64;

/// Median of `xs` (NaN for none).
pub fn median(xs: &[f64]) -> f64 {
    quantile(xs, 0.5)
}

/// The `q` quantile of `xs` (linear between order statistics; NaN for none).
pub fn quantile(xs: &[f64], q: f64) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let pos = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let (i, f) = (pos.floor() as usize, pos.fract());
    if i + 1 < v.len() {
        v[i] * (1.0 - f) + v[i + 1] * f
    } else {
        v[i]
    }
}

/// Mean of `xs` (NaN for none).
pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The `k`-th smallest of `xs` (0-based), clamped to the slice.
pub fn kth(xs: &[f64], k: usize) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    v[k.min(v.len() - 1)]
}

/// Least-squares line through `(x, y)`: (intercept, slope).
pub fn line(pts: &[(f64, f64)]) -> (f64, f64) {
    let n = pts.len() as f64;
    let (sx, sy) = pts.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1));
    let (mx, my) = (sx / n, sy / n);
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for &(x, y) in pts {
        sxx += (x - mx) * (x - mx);
        sxy += (x - mx) * (y - my);
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    (my - slope * mx, slope)
}

/// Theil-Sen slope of `(x, y)`: the median of the slopes between every two points, which
/// a minority of points far off the line (a read the host delayed) does not move.
pub fn robust_slope(pts: &[(f64, f64)]) -> f64 {
    let mut slopes = Vec::with_capacity(pts.len() * pts.len() / 2);
    for (i, a) in pts.iter().enumerate() {
        for b in &pts[i + 1..] {
            if b.0 != a.0 {
                slopes.push((b.1 - a.1) / (b.0 - a.0));
            }
        }
    }
    median(&slopes)
}

/// Seeded offsets.
pub struct Draw(SplitMix64);

impl Draw {
    pub fn new(seed: u64) -> Draw {
        Draw(SplitMix64::new(seed))
    }

    /// A multiple of `align` in `[lo, hi)` (hi > lo).
    pub fn aligned(&mut self, lo: u64, hi: u64, align: u64) -> u64 {
        let slots = ((hi - lo) / align).max(1);
        lo.div_ceil(align) * align + self.0.below(slots) * align
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_quantiles_and_lines() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(quantile(&[1.0, 2.0, 3.0, 4.0, 5.0], 1.0), 5.0);
        assert_eq!(kth(&[5.0, 1.0, 3.0], 1), 3.0);
        let (a, b) = line(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]);
        assert!((a - 1.0).abs() < 1e-12 && (b - 2.0).abs() < 1e-12);
        // One point far off the line does not move the robust slope.
        let mut pts: Vec<(f64, f64)> = (0..10).map(|i| (i as f64, 3.0 * i as f64)).collect();
        pts[4].1 += 100.0;
        assert!((robust_slope(&pts) - 3.0).abs() < 1e-12);
        let mut d = Draw::new(1);
        for _ in 0..100 {
            let x = d.aligned(4096, 1 << 20, 4096);
            assert!((4096..(1 << 20)).contains(&x) && x % 4096 == 0);
        }
    }
}
