//! How a study repeats its stacks and ranks them: `repeats` (every stack's minimum, run
//! round-robin), `max_repeats` and `interval` (more repeats, up to the maximum, for a stack
//! whose 95% interval on its ranked figure is wider than ±interval of its mean), and `noise`
//! (the relative difference below which two stacks tie whatever the test says). A study file
//! writes the shares as percentages (`interval = "2%"`); `[quick]` and the command line may
//! replace `repeats`, `max_repeats` and `interval`.

use crate::analysis::groups::{self, Rule};
use crate::analysis::stopping::StopRule;
pub use crate::units::Percent;

/// How many repeats a study file without `repeats` asks for: the fewest that give an
/// interval and a test worth the name.
pub const DEFAULT_REPEATS: u32 = 3;

/// A study's repeats and ranking rule, as resolved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Repeats {
    pub min: u32,
    pub max: Option<u32>,
    pub interval: Option<Percent>,
    pub noise: Option<Percent>,
}

impl Repeats {
    /// The rule that decides whether a stack gets another repeat: up to `max` (never below
    /// `min`) while its interval is wider than `interval`; the minimum alone without
    /// `interval`.
    pub fn stop_rule(&self) -> StopRule {
        let min = self.min as usize;
        StopRule {
            min,
            max: self.max.map_or(min, |m| (m as usize).max(min)),
            width: self.interval.map(Percent::share),
        }
    }

    /// Whether repeats beyond the minimum may be added.
    pub fn adaptive(&self) -> bool {
        let r = self.stop_rule();
        r.width.is_some() && r.max > r.min
    }

    /// What separates two stacks in this study's tables.
    pub fn rule(&self) -> Rule {
        Rule {
            noise: self.noise.map_or(groups::DEFAULT_NOISE, Percent::share),
            ..Rule::default()
        }
    }

    /// In words, for the study's first line: `3 repeats`, `3-6 repeats (until ±2%)`.
    pub fn text(&self) -> String {
        let r = self.stop_rule();
        match r.width {
            Some(w) if r.max > r.min => format!(
                "{}-{} repeats (more while a 95% interval is wider than ±{})",
                r.min,
                r.max,
                crate::units::Percent::from_share(w).text()
            ),
            _ => format!("{} repeat{}", r.min, if r.min == 1 { "" } else { "s" }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stop_rule_never_goes_below_the_minimum() {
        let r = Repeats {
            min: 3,
            max: Some(2),
            interval: Some(Percent::parse("2%").unwrap()),
            noise: None,
        };
        assert_eq!(r.stop_rule().max, 3);
        assert!(!r.adaptive());
        assert_eq!(r.text(), "3 repeats");
        let r = Repeats { max: Some(6), ..r };
        assert!(r.adaptive());
        assert_eq!(
            r.text(),
            "3-6 repeats (more while a 95% interval is wider than ±2%)"
        );
        assert_eq!(r.rule().noise, groups::DEFAULT_NOISE);
    }
}
