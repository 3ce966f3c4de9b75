//! Scaling fits: a power law `y = a · x^b` fitted by least squares on log-log axes (how a
//! checker's time grows with the file count, seed 004), its R² on those axes, and predictions
//! beyond the data with a prediction interval from Student's t. A prediction outside the range
//! of the data says so: extrapolation is a model's guess, not a measurement.

use super::compare::t_quantile;
use serde::Serialize;

/// A power law fitted to points `(x, y)`, x and y positive.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PowerLaw {
    /// `y = coefficient · x^exponent`.
    pub coefficient: f64,
    pub exponent: f64,
    /// Coefficient of determination of the fit of ln y on ln x.
    pub r2: f64,
    /// Points fitted.
    pub n: usize,
    /// Residual standard deviation on the ln scale.
    pub s: f64,
    /// Mean and sum of squares of ln x, for prediction intervals.
    mean_lx: f64,
    sxx: f64,
    /// The range of x the fit saw.
    pub x_min: f64,
    pub x_max: f64,
}

/// A prediction of the fit at one x.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    pub x: f64,
    pub y: f64,
    /// The interval a new observation at x falls in with the stated probability; `None` with
    /// fewer than three points (no residual degrees of freedom).
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// Probability of the interval (0.95).
    pub level: f64,
    /// x lies outside the fitted data: the interval assumes the law holds out there too.
    pub extrapolated: bool,
}

/// Why a fit cannot be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    #[error("a power-law fit needs at least two points with different x; got {0}")]
    TooFewPoints(usize),
    #[error("a power-law fit needs positive x and y; got ({0}, {1})")]
    NotPositive(f64, f64),
}

impl PowerLaw {
    /// Fits `points`.
    pub fn fit(points: &[(f64, f64)]) -> Result<PowerLaw, FitError> {
        if let Some(&(x, y)) = points
            .iter()
            .find(|(x, y)| !(x.is_finite() && y.is_finite() && *x > 0.0 && *y > 0.0))
        {
            return Err(FitError::NotPositive(x, y));
        }
        let n = points.len();
        let lx: Vec<f64> = points.iter().map(|p| p.0.ln()).collect();
        let ly: Vec<f64> = points.iter().map(|p| p.1.ln()).collect();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let (mx, my) = (mean(&lx), mean(&ly));
        let sxx: f64 = lx.iter().map(|x| (x - mx).powi(2)).sum();
        if n < 2 || sxx <= 0.0 {
            return Err(FitError::TooFewPoints(n));
        }
        let sxy: f64 = lx.iter().zip(&ly).map(|(x, y)| (x - mx) * (y - my)).sum();
        let b = sxy / sxx;
        let a = my - b * mx;
        let ss_res: f64 = lx
            .iter()
            .zip(&ly)
            .map(|(x, y)| (y - a - b * x).powi(2))
            .sum();
        let ss_tot: f64 = ly.iter().map(|y| (y - my).powi(2)).sum();
        let r2 = if ss_tot > 0.0 {
            1.0 - ss_res / ss_tot
        } else {
            1.0
        };
        let s = if n > 2 {
            (ss_res / (n - 2) as f64).sqrt()
        } else {
            0.0
        };
        let xs = points.iter().map(|p| p.0);
        Ok(PowerLaw {
            coefficient: a.exp(),
            exponent: b,
            r2,
            n,
            s,
            mean_lx: mx,
            sxx,
            x_min: xs.clone().fold(f64::INFINITY, f64::min),
            x_max: xs.fold(f64::NEG_INFINITY, f64::max),
        })
    }

    /// The fitted y at `x`.
    pub fn at(&self, x: f64) -> f64 {
        self.coefficient * x.powf(self.exponent)
    }

    /// The prediction at `x` with its 95% prediction interval.
    pub fn predict(&self, x: f64) -> Prediction {
        let level = 0.95;
        let y = self.at(x);
        let (low, high) = if self.n > 2 {
            let t = t_quantile(1.0 - (1.0 - level) / 2.0, (self.n - 2) as f64);
            let lx = x.ln();
            let se = self.s
                * (1.0 + 1.0 / self.n as f64 + (lx - self.mean_lx).powi(2) / self.sxx).sqrt();
            let ly = y.ln();
            (Some((ly - t * se).exp()), Some((ly + t * se).exp()))
        } else {
            (None, None)
        };
        Prediction {
            x,
            y,
            low,
            high,
            level,
            extrapolated: x < self.x_min || x > self.x_max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_an_exact_power_law() {
        let pts: Vec<(f64, f64)> = [1e4, 1e5, 1e6, 1e7]
            .iter()
            .map(|&x| (x, 3e-4 * f64::powf(x, 1.1)))
            .collect();
        let f = PowerLaw::fit(&pts).unwrap();
        assert!((f.exponent - 1.1).abs() < 1e-9, "{f:?}");
        assert!((f.coefficient / 3e-4 - 1.0).abs() < 1e-6, "{f:?}");
        assert!((f.r2 - 1.0).abs() < 1e-12);
        let p = f.predict(1e9);
        assert!(p.extrapolated);
        assert!((p.y / (3e-4 * f64::powf(1e9, 1.1)) - 1.0).abs() < 1e-6);
        // A perfect fit leaves no residual: the interval closes on the prediction.
        assert!((p.low.unwrap() / p.y - 1.0).abs() < 1e-6);
        assert!(!f.predict(5e5).extrapolated);
    }

    #[test]
    fn the_interval_widens_away_from_the_data() {
        // Seed 004's ext4 figures: files (millions) against fsck seconds.
        let pts = [
            (10.2, 1085.0),
            (51.0, 6183.0),
            (105.0, 11100.0),
            (415.0, 40500.0),
        ];
        let f = PowerLaw::fit(&pts).unwrap();
        assert!(f.r2 > 0.95, "{f:?}");
        let near = f.predict(100.0);
        let far = f.predict(1000.0);
        let width = |p: &Prediction| p.high.unwrap() / p.low.unwrap();
        assert!(near.low.unwrap() < near.y && near.y < near.high.unwrap());
        assert!(width(&far) > width(&near), "{near:?} {far:?}");
        assert!(far.extrapolated && !near.extrapolated);
    }

    #[test]
    fn bad_input_is_refused() {
        assert_eq!(PowerLaw::fit(&[(1.0, 2.0)]), Err(FitError::TooFewPoints(1)));
        assert_eq!(
            PowerLaw::fit(&[(5.0, 2.0), (5.0, 3.0)]),
            Err(FitError::TooFewPoints(2))
        );
        assert!(matches!(
            PowerLaw::fit(&[(1.0, 0.0), (2.0, 1.0)]),
            Err(FitError::NotPositive(..))
        ));
        let two = PowerLaw::fit(&[(1.0, 2.0), (2.0, 4.0)]).unwrap();
        assert_eq!(two.predict(4.0).low, None);
    }
}
