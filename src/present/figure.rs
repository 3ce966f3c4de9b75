//! Verdict figures: each workload kind declares its headline figures once, as
//! [`FigureSpec`]s (key in result.json's `verdict`, label, unit, which way is better), and an
//! analysis gives their values in the same order ([`VerdictFigures`]).

/// Which way a verdict figure is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

impl Better {
    /// `highest` / `lowest`, for sentences about the best stack.
    pub fn superlative(self) -> &'static str {
        match self {
            Better::Higher => "highest",
            Better::Lower => "lowest",
        }
    }
}

/// One headline figure of a verdict, declared once per workload kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FigureSpec {
    /// The key in result.json's `verdict` (a monitor's figure: its path under `monitor`).
    pub key: &'static str,
    /// Column heading.
    pub label: &'static str,
    pub unit: &'static str,
    pub better: Better,
}

impl FigureSpec {
    /// `label (unit)`, or the label alone when there is no unit.
    pub fn heading(&self) -> String {
        if self.unit.is_empty() {
            self.label.to_string()
        } else {
            format!("{} ({})", self.label, self.unit)
        }
    }
}

/// The values of one trial's verdict figures, in the order of its kind's [`FigureSpec`]s,
/// and whether it met the workload's target (`None`: no target, or nothing to judge).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VerdictFigures {
    pub values: Vec<Option<f64>>,
    pub meets_target: Option<bool>,
    /// Why the figures cannot be what the stack does (above what its drives can physically
    /// take, say): such a trial is marked and never ranked.
    pub impossible: Option<String>,
    /// Why the figures stand above the study's reference though the stack can do them (at its
    /// drives' raw rate within the figure's own precision, or within what their models
    /// stream at): such a trial is marked with the cause and ranked.
    pub marked: Option<String>,
    /// What to read the headline figure with: a short label (`capped`: a capacity held below
    /// what its runs showed, because its streams ask more than the stack sustained when
    /// hammered; `soft edge`: the next value passed some of its runs) and the cause. Such a
    /// trial is marked with both and ranked on its figure.
    pub caution: Option<(&'static str, String)>,
}

/// A number with 3 significant digits or so, no exponent: the precision every comparison
/// table uses.
pub fn num(x: f64) -> String {
    let a = x.abs();
    let d = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    format!("{x:.d$}")
}

/// [`num`] of a figure that may be missing: `-` when it is.
pub fn num_opt(x: Option<f64>) -> String {
    x.map(num).unwrap_or_else(|| "-".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_about_three_digits() {
        assert_eq!(num(2997.8), "2998");
        assert_eq!(num(12.34), "12.3");
        assert_eq!(num(1.5), "1.50");
        assert_eq!(num(0.0004), "0.000");
    }
}
