//! burst's part of the report: the drain time first (the seed's "time for Cacti to finish
//! writing all the updates", which ranked its stacks), then what the victim suffered.

use super::analysis::Verdict;
use crate::present::chart::Section;
use crate::present::{Better, FigureSpec, KindReport, VerdictFigures};
use crate::result::{ResultError, StackTrials, Trial};

/// The verdict columns; the first ranks the stacks.
pub static COLUMNS: &[FigureSpec] = &[
    FigureSpec {
        key: "drain_s",
        label: "drain",
        unit: "s",
        better: Better::Lower,
    },
    FigureSpec {
        key: "victim_burst_p99_ms",
        label: "victim p99 in bursts",
        unit: "ms",
        better: Better::Lower,
    },
    FigureSpec {
        key: "victim_burst_max_ms",
        label: "victim max in bursts",
        unit: "ms",
        better: Better::Lower,
    },
    FigureSpec {
        key: "victim_idle_p99_ms",
        label: "victim p99 between",
        unit: "ms",
        better: Better::Lower,
    },
    FigureSpec {
        key: "peak_await_ms",
        label: "peak await (highest interval)",
        unit: "ms",
        better: Better::Lower,
    },
];

/// The report part of `burst`.
pub struct BurstReport;

impl KindReport for BurstReport {
    fn columns(&self) -> &'static [FigureSpec] {
        COLUMNS
    }

    fn figures(&self, trial: &Trial) -> Result<VerdictFigures, ResultError> {
        crate::workload::figures_of(trial, |v: &Verdict| VerdictFigures {
            values: vec![
                v.drain_s,
                v.victim_burst_p99_ms,
                v.victim_burst_max_ms,
                v.victim_idle_p99_ms,
                v.peak_await_ms,
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
