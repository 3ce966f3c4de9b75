//! When a study has repeated a stack enough: after its minimum of repeats, a stack gets
//! another (up to a maximum) while the 95% confidence interval of its ranked figure is wider
//! than a relative half-width, as the Phoronix Test Suite adds runs while the standard error is
//! high. The rule looks at the interval's width only, never at a p-value: stopping when a
//! difference turns significant would make differences significant by stopping.

use super::compare::Estimate;

/// How many repeats a stack gets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StopRule {
    /// Repeats every stack runs.
    pub min: usize,
    /// Repeats no stack goes beyond.
    pub max: usize,
    /// The half-width of the 95% interval, relative to the mean, that is narrow enough
    /// (0.02: ±2%); `None`: the minimum is the number of repeats.
    pub width: Option<f64>,
}

/// Why a stack is given another repeat or not.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decision {
    /// Fewer repeats than the minimum.
    BelowMinimum,
    /// The interval is wider than the rule's width (its relative half-width, `None` when it
    /// cannot be computed yet).
    TooWide(Option<f64>),
    /// The interval is narrow enough (its relative half-width).
    Narrow(f64),
    /// The maximum is reached.
    AtMaximum,
    /// The rule adds no repeats beyond the minimum.
    Fixed,
}

impl Decision {
    /// Whether the stack gets another repeat.
    pub fn more(self) -> bool {
        matches!(self, Decision::BelowMinimum | Decision::TooWide(_))
    }
}

/// The relative half-width of the 95% interval of `values` (half-width over |mean|; 0 when
/// the interval and the mean are both 0); `None` for fewer than two values.
pub fn relative_half_width(values: &[f64]) -> Option<f64> {
    let e = Estimate::of(values)?;
    let ci = e.ci95?;
    if ci == 0.0 {
        return Some(0.0);
    }
    Some(if e.mean == 0.0 {
        f64::INFINITY
    } else {
        ci / e.mean.abs()
    })
}

/// Whether a stack with the ranked figure's `values` so far gets another repeat.
pub fn decide(rule: &StopRule, values: &[f64]) -> Decision {
    let n = values.len();
    if n >= rule.max.max(rule.min) {
        return Decision::AtMaximum;
    }
    if n < rule.min {
        return Decision::BelowMinimum;
    }
    let Some(width) = rule.width else {
        return Decision::Fixed;
    };
    match relative_half_width(values) {
        Some(w) if w <= width => Decision::Narrow(w),
        w => Decision::TooWide(w),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: StopRule = StopRule {
        min: 3,
        max: 6,
        width: Some(0.02),
    };

    #[test]
    fn a_tiny_spread_stops_at_the_minimum() {
        assert_eq!(decide(&RULE, &[40.0, 40.1]), Decision::BelowMinimum);
        let d = decide(&RULE, &[40.0, 40.1, 40.05]);
        assert!(matches!(d, Decision::Narrow(w) if w < 0.01), "{d:?}");
        assert!(!d.more());
        assert!(!decide(&RULE, &[7.0, 7.0, 7.0]).more(), "no spread at all");
    }

    #[test]
    fn a_wide_interval_asks_for_more_and_never_beyond_the_maximum() {
        let wide = [30.0, 40.0, 35.0, 31.0, 39.0];
        assert!(matches!(decide(&RULE, &wide[..3]), Decision::TooWide(Some(w)) if w > 0.1));
        assert!(decide(&RULE, &wide).more());
        let six = [30.0, 40.0, 35.0, 31.0, 39.0, 33.0];
        assert_eq!(decide(&RULE, &six), Decision::AtMaximum);
        assert_eq!(decide(&RULE, &[1.0; 9]), Decision::AtMaximum);
        // Whatever the values, a stack repeated as the rule says ends at most at the maximum.
        let mut values: Vec<f64> = Vec::new();
        let mut x = 1.0f64;
        while decide(&RULE, &values).more() {
            x = -x * 3.0;
            values.push(x);
        }
        assert_eq!(values.len(), RULE.max);
    }

    #[test]
    fn a_fixed_rule_runs_the_minimum_only() {
        let fixed = StopRule {
            min: 3,
            max: 3,
            width: None,
        };
        assert!(decide(&fixed, &[1.0, 2.0]).more());
        assert_eq!(decide(&fixed, &[1.0, 50.0, 3.0]), Decision::AtMaximum);
        let open = StopRule { max: 10, ..fixed };
        assert_eq!(decide(&open, &[1.0, 50.0, 3.0]), Decision::Fixed);
    }

    #[test]
    fn a_zero_mean_with_spread_is_too_wide() {
        assert!(decide(&RULE, &[-1.0, 1.0, 0.0]).more());
        assert_eq!(decide(&RULE, &[0.0, 0.0, 0.0]), Decision::Narrow(0.0));
    }
}
