//! Whether one figure measured in repeated rounds on two systems (a device and its twin) is
//! the same within a relative margin: the ratio of their means with its interval, and the
//! verdict of the two one-sided tests (TOST), as equivalence is tested in bioequivalence
//! studies: equivalent when the 90% interval of the ratio lies within 1 ± margin, different
//! when the 95% interval lies wholly outside it, and undecided otherwise (the rounds' spread
//! is too wide to say). Rounds that come in pairs sharing what spreads them (the same
//! workload seed on both sides) get the interval of the pairs ([`paired`]), and an undecided
//! verdict the rounds in all that would decide it were the pairs to keep their ratio and
//! spread ([`Ratio::rounds_to_decide`]) and the interval's width that would
//! ([`Ratio::width_to_decide`]). Rounds are added by the interval's width
//! ([`Ratio::half_width`]), never by the verdict: stopping once a verdict is reached gives a
//! twin on the margin one more chance to pass at every look.

use super::compare::{t_quantile, Estimate};
use serde::Serialize;

/// The verdict on a ratio against its margin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The 90% interval of the ratio lies within 1 ± margin.
    Within,
    /// The 95% interval lies wholly above 1 + margin or below 1 - margin.
    Outside,
    /// Neither: the rounds do not tell.
    Undecided,
}

impl Verdict {
    /// The verdict in a table's words.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Within => "within",
            Verdict::Outside => "outside",
            Verdict::Undecided => "undecided",
        }
    }
}

/// The ratio `b / a` of two figures' means over their rounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ratio {
    pub ratio: f64,
    /// The 90% interval (the TOST's), then the 95% one.
    pub lo90: f64,
    pub hi90: f64,
    pub lo95: f64,
    pub hi95: f64,
    pub verdict: Verdict,
    /// Undecided pairs only: the fewest rounds in all whose interval, at the ratio and the
    /// spread of the pairs so far, would decide the verdict (within, or outside when the
    /// ratio lies beyond the margin). `None` when decided, with one pair, or when no number up
    /// to [`MAX_PROJECTED`] would (a ratio on the margin's edge).
    pub rounds_to_decide: Option<usize>,
    /// With [`Ratio::rounds_to_decide`]: the 90% interval's half-width over the ratio (0.03:
    /// ±3% of it) that would decide the verdict at this ratio, rounded down to 0.01%. Inside
    /// the margin it is the room to the nearer edge; beyond it, the room to the margin's edge
    /// with the 95% interval's wider reach taken off.
    pub width_to_decide: Option<f64>,
}

impl Ratio {
    /// The 90% interval's half-width over the ratio (0.05: ±5% of it); infinite with no
    /// interval (one pair), 0 when the pairs agree exactly.
    pub fn half_width(&self) -> f64 {
        let w = (self.hi90 - self.lo90) / 2.0;
        if w == 0.0 {
            0.0
        } else if self.ratio == 0.0 {
            f64::INFINITY
        } else {
            w / self.ratio.abs()
        }
    }
}

/// The most rounds [`Ratio::rounds_to_decide`] looks at.
pub const MAX_PROJECTED: usize = 1000;

/// The ratio of `b`'s mean to `a`'s with its intervals, by the delta method with the
/// Welch–Satterthwaite degrees of freedom, and its verdict against `margin` (0.10: ±10%).
/// `None` when a side has no values or `a`'s mean is not above zero. One round a side gives
/// the ratio with no interval, so "undecided".
pub fn ratio(a: &[f64], b: &[f64], margin: f64) -> Option<Ratio> {
    let (ea, eb) = (Estimate::of(a)?, Estimate::of(b)?);
    if ea.mean <= 0.0 {
        return None;
    }
    let r = eb.mean / ea.mean;
    // Relative variances of the two means.
    let va = (ea.stddev / ea.mean).powi(2) / ea.n as f64;
    let vb = if eb.mean != 0.0 {
        (eb.stddev / eb.mean).powi(2) / eb.n as f64
    } else {
        0.0
    };
    let rel2 = va + vb;
    let (w90, w95) = if ea.n < 2 || eb.n < 2 {
        (f64::INFINITY, f64::INFINITY)
    } else if rel2 == 0.0 {
        (0.0, 0.0)
    } else {
        let df = rel2 * rel2 / (va * va / (ea.n - 1) as f64 + vb * vb / (eb.n - 1) as f64);
        let se = r.abs() * rel2.sqrt();
        (t_quantile(0.95, df) * se, t_quantile(0.975, df) * se)
    };
    Some(judged(r, w90, w95, margin))
}

/// The same ratio of means when the rounds come in pairs that share what spreads them (round
/// `i` of `a` and of `b` ran the same workload seed, so the same filesystem layout): its
/// interval by the delta method over the pairs, each pair's deviation from the two means
/// (`b_i / mean(b) - a_i / mean(a)`), with n - 1 degrees of freedom. What both sides of a pair
/// share cancels; what differs within pairs is what is left. `None` as for [`ratio`], or when
/// the two sides do not have the same number of rounds.
pub fn paired(a: &[f64], b: &[f64], margin: f64) -> Option<Ratio> {
    if a.len() != b.len() {
        return None;
    }
    let (ea, eb) = (Estimate::of(a)?, Estimate::of(b)?);
    if ea.mean <= 0.0 {
        return None;
    }
    let r = eb.mean / ea.mean;
    let n = a.len();
    // The spread of the pairs: the interval's half-width at n pairs is t(n - 1) times it over
    // the square root of n.
    let spread = if n < 2 {
        f64::INFINITY
    } else {
        let rel = |x: f64, m: f64| if m != 0.0 { x / m } else { 0.0 };
        let z: Vec<f64> = a
            .iter()
            .zip(b)
            .map(|(&x, &y)| rel(y, eb.mean) - rel(x, ea.mean))
            .collect();
        r.abs() * Estimate::of(&z)?.stddev
    };
    let (w90, w95) = if n < 2 {
        (f64::INFINITY, f64::INFINITY)
    } else if spread == 0.0 {
        (0.0, 0.0)
    } else {
        let (df, root) = ((n - 1) as f64, (n as f64).sqrt());
        (
            t_quantile(0.95, df) * spread / root,
            t_quantile(0.975, df) * spread / root,
        )
    };
    let mut judged = judged(r, w90, w95, margin);
    if judged.verdict == Verdict::Undecided && n >= 2 {
        judged.rounds_to_decide = rounds_to_decide(r, spread, n, margin);
        judged.width_to_decide = judged
            .rounds_to_decide
            .map(|m| width_to_decide(r, m, margin));
    }
    Some(judged)
}

/// The fewest pairs `m` above `n` at which the ratio `r`, its pairs spreading by `spread` (the
/// interval's half-width is t(m - 1) spread / sqrt(m)), is decided against `margin`: inside
/// the margin its 90% interval within it, beyond it its 95% interval wholly beyond. `None`
/// when no `m` up to [`MAX_PROJECTED`] is.
fn rounds_to_decide(r: f64, spread: f64, n: usize, margin: f64) -> Option<usize> {
    let (lo, hi) = (1.0 - margin, 1.0 + margin);
    let inside = (lo..=hi).contains(&r);
    let (p, room) = if inside {
        (0.95, (r - lo).min(hi - r))
    } else {
        (0.975, (r - hi).max(lo - r))
    };
    let decided = |m: usize| {
        let w = t_quantile(p, (m - 1) as f64) * spread / (m as f64).sqrt();
        if inside {
            w <= room
        } else {
            w < room
        }
    };
    if !spread.is_finite() || !decided(MAX_PROJECTED) {
        return None;
    }
    // The half-width falls as m grows: the first m that decides, by halving.
    let (mut below, mut at) = (n, MAX_PROJECTED);
    while at - below > 1 {
        let mid = below + (at - below) / 2;
        if decided(mid) {
            at = mid;
        } else {
            below = mid;
        }
    }
    Some(at)
}

/// The 90% half-width over `r` that decides the ratio `r` against `margin` at `m` pairs,
/// rounded down to 0.01%: inside the margin the room to its nearer edge; beyond it the room to
/// its edge, which the 95% interval must clear, in the 90% interval's terms at `m` pairs.
fn width_to_decide(r: f64, m: usize, margin: f64) -> f64 {
    let (lo, hi) = (1.0 - margin, 1.0 + margin);
    let room = if (lo..=hi).contains(&r) {
        (r - lo).min(hi - r)
    } else {
        let df = (m.max(2) - 1) as f64;
        (r - hi).max(lo - r) * t_quantile(0.95, df) / t_quantile(0.975, df)
    };
    (room / r.abs() * 1e4).floor() / 1e4
}

/// The ratio `r` with its 90% and 95% half-widths, judged against `margin`.
fn judged(r: f64, w90: f64, w95: f64, margin: f64) -> Ratio {
    let (lo90, hi90, lo95, hi95) = (r - w90, r + w90, r - w95, r + w95);
    let verdict = if lo90 >= 1.0 - margin && hi90 <= 1.0 + margin {
        Verdict::Within
    } else if lo95 > 1.0 + margin || hi95 < 1.0 - margin {
        Verdict::Outside
    } else {
        Verdict::Undecided
    };
    Ratio {
        ratio: r,
        lo90,
        hi90,
        lo95,
        hi95,
        verdict,
        rounds_to_decide: None,
        width_to_decide: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Standard normal draws (Box-Muller) from `seed`.
    fn normals(seed: u64) -> impl FnMut() -> f64 {
        let mut rng = crate::engine::rng::SplitMix64::new(seed);
        move || {
            let mut unit = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let (u, v) = (unit().max(1e-12), unit());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
    }

    #[test]
    fn tight_rounds_close_together_are_within() {
        let r = ratio(&[100.0, 101.0, 99.0], &[103.0, 104.0, 102.0], 0.10).unwrap();
        assert!((r.ratio - 1.03).abs() < 1e-12);
        assert_eq!(r.verdict, Verdict::Within);
        assert!(r.lo90 > r.lo95 && r.hi90 < r.hi95);
        // Its 90% interval's half-width over the ratio.
        let w = r.half_width();
        assert!((w - (r.hi90 - r.ratio) / 1.03).abs() < 1e-12 && w > 0.0 && w < 0.1);
    }

    #[test]
    fn tight_rounds_far_apart_are_outside() {
        let r = ratio(&[100.0, 101.0, 99.0], &[130.0, 131.0, 129.0], 0.10).unwrap();
        assert_eq!(r.verdict, Verdict::Outside);
        let r = ratio(&[100.0, 101.0, 99.0], &[70.0, 71.0, 69.0], 0.10).unwrap();
        assert_eq!(r.verdict, Verdict::Outside);
    }

    #[test]
    fn wide_rounds_do_not_tell() {
        // The same means as above, but each side's rounds spread by ±30%.
        let r = ratio(&[70.0, 100.0, 130.0], &[73.0, 103.0, 133.0], 0.10).unwrap();
        assert_eq!(r.verdict, Verdict::Undecided, "{r:?}");
        let r = ratio(&[70.0, 100.0, 130.0], &[100.0, 130.0, 160.0], 0.10).unwrap();
        assert_eq!(r.verdict, Verdict::Undecided, "{r:?}");
    }

    #[test]
    fn single_rounds_and_constant_figures() {
        // One round a side: the ratio, but no interval to judge it by.
        let r = ratio(&[100.0], &[101.0], 0.10).unwrap();
        assert_eq!(r.verdict, Verdict::Undecided);
        assert!(r.half_width().is_infinite());
        // A count both sides always reach is the same.
        let r = ratio(&[128.0, 128.0, 128.0], &[128.0, 128.0, 128.0], 0.10).unwrap();
        assert_eq!((r.ratio, r.verdict), (1.0, Verdict::Within));
        assert_eq!(r.half_width(), 0.0);
        // Without a positive mean on the device there is no ratio.
        assert!(ratio(&[0.0, 0.0], &[1.0, 2.0], 0.10).is_none());
        assert!(ratio(&[], &[1.0], 0.10).is_none());
    }

    #[test]
    fn the_interval_covers_the_true_ratio_about_as_often_as_it_says() {
        // Rounds drawn around 100 and 105 with a 5% spread: the 90% interval should cover
        // 1.05 in about 90% of 2000 draws (the delta method is approximate: 85-95%).
        let mut normal = normals(7);
        let mut covered = 0;
        for _ in 0..2000 {
            let a: Vec<f64> = (0..5).map(|_| 100.0 + 5.0 * normal()).collect();
            let b: Vec<f64> = (0..5).map(|_| 105.0 + 5.25 * normal()).collect();
            let r = ratio(&a, &b, 0.10).unwrap();
            covered += usize::from(r.lo90 <= 1.05 && 1.05 <= r.hi90);
        }
        assert!((1700..=1900).contains(&covered), "{covered} of 2000");
    }

    #[test]
    fn pairs_sharing_their_spread_are_judged_by_what_differs_within_them() {
        // Each pair ran at its own place (55 to 92 apart), the twin 2% above the device at
        // every place, give or take 1%.
        let a = [92.0, 66.0, 83.0, 55.0, 71.0];
        let b: Vec<f64> = a
            .iter()
            .zip([1.03, 1.01, 1.02, 1.03, 1.01])
            .map(|(x, k)| x * k)
            .collect();
        let unpaired = ratio(&a, &b, 0.10).unwrap();
        assert_eq!(unpaired.verdict, Verdict::Undecided, "{unpaired:?}");
        let p = paired(&a, &b, 0.10).unwrap();
        assert!(
            (p.ratio - unpaired.ratio).abs() < 1e-12,
            "the same ratio of means"
        );
        assert_eq!(p.verdict, Verdict::Within, "{p:?}");
        assert!(p.lo90 > 1.0 && p.hi90 < 1.05, "{p:?}");
        // 25% apart at every place: outside.
        let c: Vec<f64> = a.iter().map(|x| x * 1.25).collect();
        assert_eq!(paired(&a, &c, 0.10).unwrap().verdict, Verdict::Outside);
        // Pairs that do not share anything are no narrower than the rounds unpaired.
        let d = [66.0, 92.0, 55.0, 83.0, 71.0];
        assert_eq!(paired(&a, &d, 0.10).unwrap().verdict, Verdict::Undecided);
        // Unequal rounds are not pairs; one pair has no interval.
        assert!(paired(&a, &b[..4], 0.10).is_none());
        assert_eq!(
            paired(&[90.0], &[91.0], 0.10).unwrap().verdict,
            Verdict::Undecided
        );
    }

    /// `n` pairs, each at a place drawn about 100 with a 15% spread: the device there with a
    /// 2% spread of its own, the twin `r` times it with `twin_spread`.
    fn placed_pairs(
        normal: &mut impl FnMut() -> f64,
        n: usize,
        r: f64,
        twin_spread: f64,
    ) -> (Vec<f64>, Vec<f64>) {
        let place: Vec<f64> = (0..n).map(|_| 100.0 * (1.0 + 0.15 * normal())).collect();
        let a = place.iter().map(|p| p * (1.0 + 0.02 * normal())).collect();
        let b = place
            .iter()
            .map(|p| r * p * (1.0 + twin_spread * normal()))
            .collect();
        (a, b)
    }

    #[test]
    fn the_paired_interval_covers_the_true_ratio_about_as_often_as_it_says() {
        // Each pair at a place drawn with a 15% spread, the twin 5% above it with a 2% spread
        // of its own: the 90% interval should cover 1.05 in about 90% of 2000 draws.
        let mut normal = normals(11);
        let mut covered = 0;
        for _ in 0..2000 {
            let (a, b) = placed_pairs(&mut normal, 6, 1.05, 0.02);
            let r = paired(&a, &b, 0.10).unwrap();
            covered += usize::from(r.lo90 <= 1.05 && 1.05 <= r.hi90);
        }
        assert!((1700..=1900).contains(&covered), "{covered} of 2000");
    }

    #[test]
    fn rounds_added_until_decided_pass_a_twin_on_the_margin_more_often_than_rounds_added_by_width()
    {
        // The twin exactly 10% over the device (the margin's edge), each pair at a place drawn
        // with a 15% spread, the twin's own spread 10%: judged at 5 rounds, or at 14, the 90%
        // interval lies inside the margin in about 5% of 1000 validations; judged after each
        // round from the 5th to the 14th, stopping at the first verdict, more than twice as
        // often; stopping once the interval is ±5% of the ratio or narrower (what
        // `--rounds 5 --fs-max-rounds 14` does), a little more often than at a fixed number
        // (a spread that happens to be small stops early with an interval too narrow) and far
        // less often than by the verdict (docs/twins.md).
        let mut normal = normals(43);
        let (mut at5, mut at14, mut added, mut by_width) = (0, 0, 0, 0);
        let within = |a: &[f64], b: &[f64]| paired(a, b, 0.10).unwrap().verdict == Verdict::Within;
        let narrow = |a: &[f64], b: &[f64]| {
            (5..14)
                .find(|&n| paired(&a[..n], &b[..n], 0.10).unwrap().half_width() <= 0.05)
                .unwrap_or(14)
        };
        for _ in 0..1000 {
            let (a, b) = placed_pairs(&mut normal, 14, 1.10, 0.10);
            at5 += usize::from(within(&a[..5], &b[..5]));
            at14 += usize::from(within(&a, &b));
            let first = (5..=14)
                .map(|n| paired(&a[..n], &b[..n], 0.10).unwrap().verdict)
                .find(|v| *v != Verdict::Undecided);
            added += usize::from(first == Some(Verdict::Within));
            let n = narrow(&a, &b);
            by_width += usize::from(within(&a[..n], &b[..n]));
        }
        assert!(at5 <= 70 && at14 <= 70, "{at5} and {at14} of 1000");
        assert!(
            added > 2 * at5.max(at14),
            "{added} against {at5} and {at14}"
        );
        assert!(
            by_width <= 80 && by_width + 50 <= added,
            "{by_width} against {added}"
        );
        // A twin that is right (the same ratio 1 at every place, its own spread 10%): rounds
        // added by width call it within far more often than five rounds alone.
        let (mut right5, mut right) = (0, 0);
        for _ in 0..300 {
            let (a, b) = placed_pairs(&mut normal, 14, 1.0, 0.10);
            right5 += usize::from(within(&a[..5], &b[..5]));
            let n = narrow(&a, &b);
            right += usize::from(within(&a[..n], &b[..n]));
        }
        assert!(
            right > 2 * right5 && right >= 240,
            "{right} against {right5} of 300"
        );
    }

    /// `m` pairs whose ratio of means is `r` and whose spread is `spread`: the device at 100
    /// every round, the twin at 100 r give or take 100 spread, in steps of equal size whose
    /// standard deviation is exactly 1 (one of them 0 when `m` is odd).
    fn spread_pairs(r: f64, spread: f64, m: usize) -> (Vec<f64>, Vec<f64>) {
        let step = if m % 2 == 0 {
            ((m - 1) as f64 / m as f64).sqrt()
        } else {
            1.0
        };
        let e = (0..m).map(|i| match (i, m % 2) {
            (0, 1) => 0.0,
            (i, _) if i % 2 == 0 => step,
            _ => -step,
        });
        let b = e.map(|e| 100.0 * r + 100.0 * spread * e).collect();
        (vec![100.0; m], b)
    }

    #[test]
    fn an_undecided_ratio_says_the_rounds_that_would_decide_it() {
        // Inside the margin (4% over, the pairs spreading by 8%) and beyond it (20% over,
        // spreading by 20%): undecided over 4 pairs, decided over the rounds said, and not
        // over one fewer, at the same ratio and spread.
        for (r, spread, want) in [(1.04, 0.08, Verdict::Within), (1.2, 0.2, Verdict::Outside)] {
            let (a, b) = spread_pairs(r, spread, 4);
            let four = paired(&a, &b, 0.10).unwrap();
            assert!((four.ratio - r).abs() < 1e-12, "{four:?}");
            assert_eq!(four.verdict, Verdict::Undecided, "{four:?}");
            let m = four.rounds_to_decide.unwrap();
            assert!(m > 4, "{four:?}");
            // The half-width that decides it at this ratio, and not much more than needed.
            let w = four.width_to_decide.unwrap();
            if want == Verdict::Within {
                assert!(r * (1.0 - w) >= 0.9 && r * (1.0 + w) <= 1.1, "{w}");
                assert!((1.1 - r) / r - w < 1e-4, "{w}");
            } else {
                let df = (m - 1) as f64;
                let w95 = w * t_quantile(0.975, df) / t_quantile(0.95, df);
                assert!(r * (1.0 - w95) > 1.1 && (r - 1.1) / r - w95 < 2e-4, "{w}");
            }
            let (a, b) = spread_pairs(r, spread, m);
            let at = paired(&a, &b, 0.10).unwrap();
            assert_eq!(
                (at.verdict, at.rounds_to_decide, at.width_to_decide),
                (want, None, None),
                "{m}: {at:?}"
            );
            let (a, b) = spread_pairs(r, spread, m - 1);
            let before = paired(&a, &b, 0.10).unwrap();
            assert_eq!(before.verdict, Verdict::Undecided, "{}: {before:?}", m - 1);
            assert_eq!(before.rounds_to_decide, Some(m), "{before:?}");
        }
        // A ratio on the margin's edge is never decided within; one pair has no spread.
        let (a, b) = spread_pairs(1.1, 0.05, 4);
        let edge = paired(&a, &b, 0.10).unwrap();
        assert_eq!(
            (edge.verdict, edge.rounds_to_decide),
            (Verdict::Undecided, None)
        );
        assert_eq!(
            paired(&[90.0], &[91.0], 0.10).unwrap().rounds_to_decide,
            None
        );
        // A decided verdict has nothing to project.
        let (a, b) = spread_pairs(1.02, 0.01, 5);
        assert_eq!(paired(&a, &b, 0.10).unwrap().rounds_to_decide, None);
    }
}
