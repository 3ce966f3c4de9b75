//! The rank agreement of a seed's figures with iotrial's, with its uncertainty: Spearman's rho
//! of the seed's figures against iotrial's means over the rows where both have a number, and a
//! 95% percentile bootstrap interval: each resample draws every stack's repeats with
//! replacement (the seed's figures, single published numbers, stay fixed) and takes rho again.
//! The generator is seeded, so the page is the same on every run.

use iotrial::analysis::stats::mean;
use iotrial::engine::rng::SplitMix64;
use iotrial::present::rankings::spearman;

/// Resamples drawn.
pub const RESAMPLES: usize = 2000;
/// The bootstrap's seed.
pub const SEED: u64 = 1;

/// Spearman's rho and its bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agreement {
    /// Rows compared.
    pub n: usize,
    pub rho: f64,
    /// The 2.5% and 97.5% points of the resampled rhos; `None` when some stack has fewer than
    /// two repeats (nothing to resample).
    pub interval: Option<(f64, f64)>,
    /// Resamples whose rho is undefined (every mean equal), left out of the interval.
    pub undefined: usize,
}

/// The agreement of `seed` (one figure per row) with `repeats` (iotrial's values per row);
/// `None` for fewer than 3 rows or a side without spread.
pub fn agreement(seed: &[f64], repeats: &[Vec<f64>]) -> Option<Agreement> {
    let means: Vec<f64> = repeats.iter().map(|r| mean(r)).collect();
    let rho = spearman(seed, &means)?;
    let n = seed.len();
    if repeats.iter().any(|r| r.len() < 2) {
        return Some(Agreement {
            n,
            rho,
            interval: None,
            undefined: 0,
        });
    }
    let mut rng = SplitMix64::new(SEED);
    let mut rhos = Vec::with_capacity(RESAMPLES);
    let mut undefined = 0;
    let mut drawn = vec![0.0; n];
    for _ in 0..RESAMPLES {
        for (d, r) in drawn.iter_mut().zip(repeats) {
            let sum: f64 = (0..r.len())
                .map(|_| r[rng.below(r.len() as u64) as usize])
                .sum();
            *d = sum / r.len() as f64;
        }
        match spearman(seed, &drawn) {
            Some(x) => rhos.push(x),
            None => undefined += 1,
        }
    }
    let interval = (!rhos.is_empty()).then(|| {
        rhos.sort_by(f64::total_cmp);
        (quantile(&rhos, 0.025), quantile(&rhos, 0.975))
    });
    Some(Agreement {
        n,
        rho,
        interval,
        undefined,
    })
}

/// The `q` quantile of sorted `v` (nearest rank).
fn quantile(v: &[f64], q: f64) -> f64 {
    let k = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[k - 1]
}

impl Agreement {
    /// `Spearman's ρ = 0.83, 95% interval 0.60 to 1.00`.
    pub fn text(&self) -> String {
        let interval = match self.interval {
            Some((lo, hi)) => format!(", 95% interval {lo:.2} to {hi:.2}"),
            None => ", no interval (a stack ran once)".into(),
        };
        let undefined = if self.undefined > 0 {
            format!(
                " ({} of {RESAMPLES} resamples without spread left out)",
                self.undefined
            )
        } else {
            String::new()
        };
        format!("Spearman's ρ = {:.2}{interval}{undefined}", self.rho)
    }
}

/// How the interval is made, for the page.
pub fn method() -> String {
    format!(
        "The interval is a percentile bootstrap: {RESAMPLES} resamples, each drawing every stack's repeats with replacement (the seed's figures held fixed), seeded ({SEED}), so the page is the same every time it is made."
    )
}
