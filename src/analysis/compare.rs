//! Comparisons across repeats and stacks: mean, sample standard deviation, the 95% confidence
//! interval of a mean (Student's t), and Welch's two-sample t-test with the Welch–Satterthwaite
//! degrees of freedom and a two-sided p-value. The t distribution is computed through the
//! regularized incomplete beta function, so no statistics crate is needed.

use super::stats;

/// Significance level used when a difference is called significant.
pub const ALPHA: f64 = 0.05;

/// Mean of repeated measurements of one figure with its spread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n - 1); 0 for one value.
    pub stddev: f64,
    /// Half-width of the 95% confidence interval of the mean; `None` for fewer than 2 values.
    pub ci95: Option<f64>,
}

impl Estimate {
    /// The estimate of `xs`; `None` when there are no values.
    pub fn of(xs: &[f64]) -> Option<Estimate> {
        if xs.is_empty() {
            return None;
        }
        let n = xs.len();
        let sd = stats::stddev(xs);
        let ci95 = (n >= 2).then(|| t_quantile(0.975, (n - 1) as f64) * sd / (n as f64).sqrt());
        Some(Estimate {
            n,
            mean: stats::mean(xs),
            stddev: sd,
            ci95,
        })
    }

    /// The upper end of the one-sided 95% prediction interval for one more value of the
    /// figure, its values taken as normal: the mean plus t(0.95, n-1) times the standard
    /// deviation times sqrt(1 + 1/n). One more value exceeds it one time in 20. For a single
    /// value, which says nothing of the spread, that value.
    pub fn upper_prediction95(&self) -> f64 {
        if self.n < 2 {
            return self.mean;
        }
        let n = self.n as f64;
        self.mean + t_quantile(0.95, n - 1.0) * self.stddev * (1.0 + 1.0 / n).sqrt()
    }
}

/// Result of Welch's t-test of two samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    /// t statistic of mean(a) - mean(b).
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

impl Welch {
    /// Whether the difference is significant at [`ALPHA`].
    pub fn significant(&self) -> bool {
        self.p < ALPHA
    }
}

/// Welch's t-test of `a` against `b`. `None` when either has fewer than two values or both
/// have zero variance (no test is possible).
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (va, vb) = (stats::stddev(a).powi(2) / na, stats::stddev(b).powi(2) / nb);
    let se2 = va + vb;
    if se2 <= 0.0 || !se2.is_finite() {
        return None;
    }
    let t = (stats::mean(a) - stats::mean(b)) / se2.sqrt();
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let p = 2.0 * t_sf(t.abs(), df);
    Some(Welch {
        t,
        df,
        p: p.clamp(0.0, 1.0),
    })
}

/// Survival function of Student's t: P(T > t) for t >= 0 with `df` degrees of freedom.
pub fn t_sf(t: f64, df: f64) -> f64 {
    let x = df / (df + t * t);
    0.5 * inc_beta(df / 2.0, 0.5, x)
}

/// Cumulative distribution of Student's t with `df` degrees of freedom.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    if t >= 0.0 {
        1.0 - t_sf(t, df)
    } else {
        t_sf(-t, df)
    }
}

/// The `p` quantile of Student's t (0.5 < p < 1), by bisection on [`t_cdf`], until the two
/// ends are neighbouring floats (about 60 halvings; more would change nothing).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while t_cdf(hi, df) < p && hi < 1e12 {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Natural log of the gamma function (Lanczos approximation, g = 7, 9 terms).
pub fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Regularized incomplete beta function I_x(a, b), by its continued fraction (Lentz).
pub fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    // The continued fraction converges fast for x < (a + 1) / (a + b + 2); use symmetry otherwise.
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_cf(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * beta_cf(b, a, 1.0 - x) / b
    }
}

fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    // Reference values from scipy.stats / scipy.special (t.ppf, t.cdf, ttest_ind with
    // equal_var=False, betainc, gammaln); textbook t tables agree to their 3 decimals.
    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() <= tol, "{a} != {b} (tol {tol})");
    }

    #[test]
    fn special_functions() {
        close(ln_gamma(0.5), 0.572_364_942_924_7, 1e-12);
        close(ln_gamma(10.3), 13.482_036_786_138_359, 1e-10);
        close(inc_beta(2.5, 0.5, 0.3), 0.018_927_124_071_945_658, 1e-12);
        close(inc_beta(10.0, 3.0, 0.9), 0.889_130_022_255, 1e-11);
    }

    #[test]
    fn t_distribution() {
        close(t_cdf(1.5, 3.0), 0.884_708_067_377_588_6, 1e-12);
        close(t_cdf(-2.2, 7.5), 0.030_599_732_953_058_05, 1e-12);
        close(t_cdf(0.0, 5.0), 0.5, 1e-15);
        for (df, q) in [
            (1.0, 12.706_204_736_174_694),
            (2.0, 4.302_652_729_749_462),
            (4.0, 2.776_445_105_197_793_4),
            (9.0, 2.262_157_162_798_205),
            (29.0, 2.045_229_642_132_703),
        ] {
            close(t_quantile(0.975, df), q, 1e-9);
        }
    }

    #[test]
    fn confidence_interval() {
        let e = Estimate::of(&[20.1, 19.8, 20.5, 20.3, 19.9]).unwrap();
        assert_eq!(e.n, 5);
        close(e.mean, 20.12, 1e-12);
        close(e.stddev, 0.286_356_421_265_527_24, 1e-12);
        close(e.ci95.unwrap(), 0.355_558_458_939_875_9, 1e-9);
        let one = Estimate::of(&[3.0]).unwrap();
        assert_eq!((one.stddev, one.ci95), (0.0, None));
        assert!(Estimate::of(&[]).is_none());
    }

    #[test]
    fn prediction_bound() {
        // 20.12 + t(0.95, 4) = 2.131847 (tables: 2.132) x 0.286356 x sqrt(1.2).
        let e = Estimate::of(&[20.1, 19.8, 20.5, 20.3, 19.9]).unwrap();
        close(e.upper_prediction95(), 20.788_734_204_890_73, 1e-8);
        // Four values: t(0.95, 3) = 2.353363 (tables: 2.353), above the largest of them.
        let e = Estimate::of(&[0.25, 0.31, 0.28, 0.33]).unwrap();
        close(e.upper_prediction95(), 0.384_589_910_779_637_3, 1e-9);
        assert_eq!(Estimate::of(&[3.0]).unwrap().upper_prediction95(), 3.0);
    }

    #[test]
    fn welch_t_test() {
        let w = welch(&[20.1, 19.8, 20.5, 20.3, 19.9], &[18.2, 19.0, 18.7, 18.4]).unwrap();
        close(w.t, 7.124_658_977_820_537, 1e-9);
        close(w.df, 5.821_332_066_818_873, 1e-9);
        close(w.p, 0.000_440_052_220_808_123, 1e-9);
        assert!(w.significant());
        let w = welch(&[1.0, 2.0, 3.0], &[1.5, 2.5, 3.5, 2.0]).unwrap();
        close(w.t, -0.522_232_967_867_093_5, 1e-9);
        close(w.df, 3.990_093_635_500_068, 1e-9);
        close(w.p, 0.629_159_591_081_738_6, 1e-9);
        assert!(!w.significant());
        assert!(welch(&[1.0], &[2.0, 3.0]).is_none());
        assert!(welch(&[1.0, 1.0], &[2.0, 2.0]).is_none());
    }
}
