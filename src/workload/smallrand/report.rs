//! smallrand's part of the report: its six verdict columns under iozone's names (random write
//! first: the figure seed 003 ranked its stacks by).

use super::analysis::Verdict;
use crate::present::chart::Section;
use crate::present::{Better, FigureSpec, KindReport, VerdictFigures};
use crate::result::{ResultError, StackTrials, Trial};

/// The verdict columns; the first ranks the stacks.
pub static COLUMNS: &[FigureSpec] = &[
    FigureSpec {
        key: "random_write_kB_s",
        label: "random writers",
        unit: "kB/s",
        better: Better::Higher,
    },
    FigureSpec {
        key: "write_kB_s",
        label: "initial writers",
        unit: "kB/s",
        better: Better::Higher,
    },
    FigureSpec {
        key: "rewrite_kB_s",
        label: "rewriters",
        unit: "kB/s",
        better: Better::Higher,
    },
    FigureSpec {
        key: "read_kB_s",
        label: "readers",
        unit: "kB/s",
        better: Better::Higher,
    },
    FigureSpec {
        key: "reread_kB_s",
        label: "re-readers",
        unit: "kB/s",
        better: Better::Higher,
    },
    FigureSpec {
        key: "random_read_kB_s",
        label: "random readers",
        unit: "kB/s",
        better: Better::Higher,
    },
];

/// The report part of `smallrand`.
pub struct SmallRandReport;

impl KindReport for SmallRandReport {
    fn columns(&self) -> &'static [FigureSpec] {
        COLUMNS
    }

    fn figures(&self, trial: &Trial) -> Result<VerdictFigures, ResultError> {
        crate::workload::figures_of(trial, |v: &Verdict| VerdictFigures {
            values: vec![
                v.random_write_kB_s,
                v.write_kB_s,
                v.rewrite_kB_s,
                v.read_kB_s,
                v.reread_kB_s,
                v.random_read_kB_s,
            ],
            meets_target: None,
            impossible: None,
            marked: None,
            caution: None,
        })
    }

    fn sections(&self, _stacks: &[StackTrials<'_>]) -> Result<Vec<Section>, ResultError> {
        Ok(Vec::new())
    }
}
