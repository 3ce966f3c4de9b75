//! How a workload kind contributes to the report: its verdict columns, the figures of a
//! finished trial read back from result.json, and its own sections (charts and tables). Each
//! workload kind implements [`KindReport`] in its own module; the report is handed a
//! [`KindLookup`] by its caller and finds the kind from each trial's result.json, never from a
//! directory name.

use super::chart::Section;
use super::{FigureSpec, MonitorColumn, VerdictFigures};
use crate::result::{ResultError, StackTrials, Trial};

/// A workload kind's part of the report.
pub trait KindReport: Sync {
    /// The verdict figures in display order; the first is the headline that ranks stacks.
    fn columns(&self) -> &'static [FigureSpec];

    /// The verdict figures of one finished trial, in [`KindReport::columns`] order, read
    /// from its result.json through the kind's own types.
    fn figures(&self, trial: &Trial) -> Result<VerdictFigures, ResultError>;

    /// Sections for this kind's stacks (each with its repeats, in study order).
    fn sections(&self, stacks: &[StackTrials<'_>]) -> Result<Vec<Section>, ResultError>;

    /// Sections across every workload of this kind in the study (a sweep of a parameter
    /// makes one workload per value): `stacks` holds each stack with all its trials of the
    /// kind. Placed with the kind's first workload; none by default.
    fn sweep_sections(&self, _stacks: &[StackTrials<'_>]) -> Result<Vec<Section>, ResultError> {
        Ok(Vec::new())
    }

    /// The monitors' figures this kind adds to the comparison, after its verdict's.
    fn monitor_columns(&self) -> &'static [MonitorColumn] {
        &[]
    }

    /// Groups of verdict columns (by key) that only trials of one mode have (a hammering
    /// run's figures, a real-time run's): a group no trial of the comparison has any value of
    /// is left out of it. Columns in no group always show (`-` where no trial has a value).
    fn column_groups(&self) -> &'static [&'static [&'static str]] {
        &[]
    }
}

/// The report part of the workload kind named by a result.json's `kind`; `None` for a kind
/// this iotrial does not know.
pub type KindLookup = fn(&str) -> Option<&'static dyn KindReport>;

#[cfg(test)]
pub(crate) mod example {
    //! A workload kind for tests of the renderer: kind `test`, verdict `{"mbit", "preroll",
    //! "meets_target"}`, no sections.

    use super::*;
    use crate::present::Better;
    use serde::Deserialize;
    use serde_json::{json, Value as Json};

    pub struct TestKind;

    /// `mbit` (higher is better) and `preroll` (lower is better).
    pub static COLUMNS: &[FigureSpec] = &[
        FigureSpec {
            key: "mbit",
            label: "guaranteed",
            unit: "Mbit/s",
            better: Better::Higher,
        },
        FigureSpec {
            key: "preroll",
            label: "pre-roll",
            unit: "s",
            better: Better::Lower,
        },
    ];

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Verdict {
        mbit: Option<f64>,
        preroll: Option<f64>,
        meets_target: Option<bool>,
    }

    impl KindReport for TestKind {
        fn columns(&self) -> &'static [FigureSpec] {
            COLUMNS
        }

        fn figures(&self, trial: &Trial) -> Result<VerdictFigures, ResultError> {
            let v: Verdict = trial.result.verdict_as().map_err(|e| trial.error(e))?;
            Ok(VerdictFigures {
                values: vec![v.mbit, v.preroll],
                meets_target: v.meets_target,
                impossible: None,
                marked: None,
                caution: None,
            })
        }

        fn sections(&self, _: &[StackTrials<'_>]) -> Result<Vec<Section>, ResultError> {
            Ok(Vec::new())
        }
    }

    /// Finds [`TestKind`] by its name, `test`.
    pub fn lookup(kind: &str) -> Option<&'static dyn KindReport> {
        (kind == "test").then_some(&TestKind as &'static dyn KindReport)
    }

    /// A verdict of kind `test`.
    pub fn verdict(mbit: f64, preroll: f64, met: bool) -> Json {
        json!({"mbit": mbit, "preroll": preroll, "meets_target": met})
    }
}
