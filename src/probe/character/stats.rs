//! The few statistics the probes need: medians, order statistics, least squares, and the
//! pseudo-random offsets they draw (seeded, so a characterization is repeatable).

use crate::engine::rng::SplitMix64;

/// Median of `xs` (NaN for none).
pub fn median(xs: &[f64]) -> f64 {
    quantile(xs, 0.5)
}

/// Each of `xs` with the median of its measures in `ys`, taken in turn: `ys[i]`,
/// `ys[i + k]`, ... are `xs[i]`'s, for `k` the count of `xs`.
pub fn medians_in_turn(xs: &[f64], ys: &[f64]) -> Vec<(f64, f64)> {
    let k = xs.len();
    xs.iter()
        .enumerate()
        .map(|(i, &x)| {
            let own: Vec<f64> = ys.iter().skip(i).step_by(k).copied().collect();
            (x, median(&own))
        })
        .collect()
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

/// The period of a sawtooth that rises one for one with `x` and drops by a whole period:
/// `y = c + ((x - e) mod r)` for points `(x, y)`, searched in `[lo, hi]`.
///
/// At the right period, `(y - x) mod r` is the same for every point: the residues bunch on
/// the circle of circumference `r`. The period is where they bunch most, by their mean
/// resultant length (the statistic of Rayleigh's test). A point the host delayed adds one
/// stray phase whatever `r` is, so strays lower every candidate alike and do not favour short
/// periods. A divisor `r/m` bunches as well, but noise smears it `m` times as much; a found
/// period whose double or triple bunches nearly as well is such a divisor, and the multiple
/// is taken.
pub fn sawtooth_period(pts: &[(f64, f64)], lo: f64, hi: f64) -> f64 {
    let bunching = |r: f64| -> f64 {
        let (c, s) = residue_phases(pts, r);
        (c * c + s * s).sqrt() / pts.len().max(1) as f64
    };
    let best = |from: f64, to: f64, step: f64| -> f64 {
        let n = ((to - from) / step).round().max(0.0) as usize;
        (0..=n)
            .map(|i| from + i as f64 * step)
            .filter(|r| *r > 0.0)
            .max_by(|a, b| bunching(*a).total_cmp(&bunching(*b)))
            .unwrap_or(from)
    };
    let coarse = best(lo, hi, (hi - lo) / 2000.0);
    let mut r = best(
        coarse - (hi - lo) / 1000.0,
        coarse + (hi - lo) / 1000.0,
        1e-3 * coarse / 100.0,
    );
    for m in [3.0, 2.0] {
        let whole = best(r * m * 0.99, r * m * 1.01, 1e-3 * r * m / 100.0);
        if whole <= hi && bunching(whole) >= 0.9 * bunching(r) {
            r = whole;
            break;
        }
    }
    refine_period(pts, r)
}

/// The sum of the unit vectors at the phases of every point's `(y - x) mod r` on the circle of
/// circumference `r`: (cosines, sines).
fn residue_phases(pts: &[(f64, f64)], r: f64) -> (f64, f64) {
    pts.iter().fold((0.0, 0.0), |(c, s), &(x, y)| {
        let a = std::f64::consts::TAU * (y - x).rem_euclid(r) / r;
        (c + a.cos(), s + a.sin())
    })
}

/// Sharpens a sawtooth's period `r` with the points that lie on the tooth: each one's `y - x`
/// is `c - k r` for the whole number `k` of drops before it, so `r` is the slope of a line
/// through `(k, y - x)`. Points more than an eighth of a period off the tooth are left out,
/// then, twice, those more than four median deviations off the line so far (reads the host or
/// the drive delayed a little, which would tilt it).
fn refine_period(pts: &[(f64, f64)], r: f64) -> f64 {
    let (c, s) = residue_phases(pts, r);
    let centre = s.atan2(c).rem_euclid(std::f64::consts::TAU) / std::f64::consts::TAU * r;
    let mut on: Vec<(f64, f64)> = pts
        .iter()
        .filter_map(|&(x, y)| {
            let z = y - x;
            let k = ((centre - z) / r).round();
            ((z - (centre - k * r)).abs() < r / 8.0).then_some((k, z))
        })
        .collect();
    let spans = |on: &[(f64, f64)]| {
        on.len() >= 3
            && on.iter().map(|p| p.0).fold(f64::INFINITY, f64::min)
                < on.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max)
    };
    if !spans(&on) {
        return r;
    }
    for _ in 0..2 {
        let (a, b) = line(&on);
        let dev: Vec<f64> = on.iter().map(|&(k, z)| (z - a - b * k).abs()).collect();
        let cut = 4.0 * median(&dev);
        let kept: Vec<(f64, f64)> = on
            .iter()
            .zip(&dev)
            .filter(|(_, &d)| d <= cut)
            .map(|(p, _)| *p)
            .collect();
        if !spans(&kept) {
            break;
        }
        on = kept;
    }
    let found = -line(&on).1;
    if (found / r - 1.0).abs() < 0.05 {
        found
    } else {
        r
    }
}

/// The value at `x` of the points `pts` (sorted by x, at least one) joined by straight lines:
/// the nearest point's beyond the first and the last.
pub fn linear_at(pts: &[(f64, f64)], x: f64) -> f64 {
    let (first, last) = (pts[0], pts[pts.len() - 1]);
    if x <= first.0 {
        return first.1;
    }
    if x >= last.0 {
        return last.1;
    }
    // first.0 < x < last.0: a point at or past x, and one before it.
    let i = pts.iter().position(|p| p.0 >= x).unwrap_or(pts.len() - 1);
    let (a, b) = (pts[i - 1], pts[i]);
    a.1 + (x - a.0) / (b.0 - a.0) * (b.1 - a.1)
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

    /// Puts `xs` in a random order (Fisher-Yates).
    pub fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            xs.swap(i, self.0.below(i as u64 + 1) as usize);
        }
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
        // Three sizes timed in turn, three rounds; one round's second size delayed.
        let ys = [1.0, 2.0, 3.0, 1.1, 9.0, 3.1, 0.9, 2.1, 2.9];
        assert_eq!(
            medians_in_turn(&[10.0, 20.0, 30.0], &ys),
            vec![(10.0, 1.0), (20.0, 2.1), (30.0, 3.0)]
        );
        let mut d = Draw::new(1);
        for _ in 0..100 {
            let x = d.aligned(4096, 1 << 20, 4096);
            assert!((4096..(1 << 20)).contains(&x) && x % 4096 == 0);
        }
    }

    #[test]
    fn a_shuffle_is_a_permutation_in_an_order_the_seed_fixes() {
        let order = |seed| {
            let mut xs: Vec<u32> = (0..64).collect();
            Draw::new(seed).shuffle(&mut xs);
            xs
        };
        let a = order(3);
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..64).collect::<Vec<_>>());
        assert_ne!(a, sorted, "left in order");
        assert_eq!(a, order(3));
        assert_ne!(a, order(4));
        // Every place is reached: the first element lands anywhere over many seeds.
        let mut seen = [false; 8];
        for seed in 0..200 {
            let mut xs: Vec<usize> = (0..8).collect();
            Draw::new(seed).shuffle(&mut xs);
            seen[xs.iter().position(|&x| x == 0).unwrap()] = true;
        }
        assert!(seen.iter().all(|&s| s), "{seen:?}");
    }

    /// A sawtooth of period `r` over `x` in 0.1 ms steps from 1 ms, with a jitter of up to
    /// `jitter` and every `stray`-th point delayed by 2-20 ms.
    fn sawtooth(r: f64, jitter: f64, stray: usize) -> Vec<(f64, f64)> {
        let mut d = Draw::new(7);
        (0..833)
            .map(|j| {
                let x = 1e-3 + j as f64 * 0.1e-3;
                let noise = jitter * d.aligned(0, 1000, 1) as f64 / 1000.0;
                let delay = if j % stray == 0 {
                    2e-3 + 18e-3 * d.aligned(0, 1000, 1) as f64 / 1000.0
                } else {
                    0.0
                };
                (x, 0.2e-3 + (x - 0.5e-3 - noise).rem_euclid(r) + delay)
            })
            .collect()
    }

    #[test]
    fn sawtooth_period_is_found_through_jitter_and_strays() {
        let (lo, hi) = (60.0 / 15_000.0, 60.0 / 3_600.0);
        for rpm in [4200.0, 5400.0, 7389.0, 10_000.0, 14_000.0] {
            let r = 60.0 / rpm;
            for (jitter, stray) in [(0.0, usize::MAX), (0.3e-3, 7), (0.6e-3, 3)] {
                let found = sawtooth_period(&sawtooth(r, jitter, stray), lo, hi);
                assert!(
                    (found / r - 1.0).abs() < 0.005,
                    "{rpm} rpm, jitter {jitter}, every {stray}th delayed: found {:.1} rpm",
                    60.0 / found
                );
            }
        }
    }
}
