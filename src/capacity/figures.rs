//! A capacity search's result as result.json holds it (kind `capacity`): the verdict names the
//! capacity, the first failing value and what failed there, the hammering run's guarantee and
//! the estimate it gave, and every probe; [`COLUMNS`] are what the study table shows of it.

use crate::present::{Better, FigureSpec, VerdictFigures};
use crate::workload::realtime::{Failure, Summary};
use serde::{Deserialize, Serialize};

/// One run of one value: an element of `verdict.probes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbeFigures {
    /// The varied parameter's value.
    pub value: f64,
    /// 1 for the value's first run.
    pub run: u32,
    pub passed: bool,
    /// Its trial's directory, relative to the search's (`probes/recorders-20-r1`).
    pub dir: String,
    /// How full the record buffers got, % (100: one overflowed).
    pub record_buffer_peak_pct: Option<f64>,
    pub overflow_mb: Option<f64>,
    pub underruns: Option<u64>,
    pub stall_s: Option<f64>,
    /// What failed first in it.
    pub first_failure: Option<Failure>,
    /// Wall time of the run, its stack's building included, s.
    pub wall_s: f64,
}

impl ProbeFigures {
    /// The probe of `value` (its `run`th) from its verdict's real-time part.
    pub fn of(value: f64, run: u32, dir: String, s: &Summary, wall_s: f64) -> ProbeFigures {
        ProbeFigures {
            value,
            run,
            passed: s.passed,
            dir,
            record_buffer_peak_pct: s.record_buffer_peak_pct,
            overflow_mb: s.overflow_mb,
            underruns: s.underruns,
            stall_s: s.stall_s,
            first_failure: s.first_failure.clone(),
            wall_s,
        }
    }
}

/// A capacity search's verdict: result.json's `verdict` for kind `capacity`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    /// The workload kind searched (`dvr`).
    pub workload_kind: String,
    /// The parameter varied.
    pub vary: String,
    /// Its unit: `streams` or `Mbit/s`.
    pub unit: String,
    pub min: f64,
    pub max: f64,
    pub resolution: f64,
    /// Runs asked at each side of the edge.
    pub confirm: u32,
    /// Each stream's bitrate in the probes (when the bitrate is not what varies), Mbit/s.
    pub bitrate_mbit: Option<f64>,
    /// How long each probe's streams ran, s.
    pub duration_s: f64,
    /// The highest value every run of which passed; `null` when even `min` failed.
    pub capacity: Option<f64>,
    /// Its runs.
    pub capacity_runs: u32,
    /// The lowest value a run of which failed; `null` when `max` passed.
    pub first_failing: Option<f64>,
    /// Its runs, and how many of them failed.
    pub first_failing_runs: u32,
    pub first_failing_failed: u32,
    /// What failed first in the first failing run of `first_failing`.
    pub failure: Option<Failure>,
    /// Both values at the edge have `confirm` runs, the passing one passed them all and the
    /// failing one failed them all.
    pub confirmed: bool,
    /// What each stream of the hammering run was guaranteed, Mbit/s (dvr: the record
    /// guarantee; stream: the aggregate over the streams).
    pub hammer_guarantee_mbit: Option<f64>,
    /// Where the hammering run's guarantee put the capacity, and how.
    pub hammer_estimate: Option<f64>,
    pub hammer_basis: Option<String>,
    /// `capacity` over `hammer_estimate`.
    pub capacity_over_estimate: Option<f64>,
    /// Every run, in order.
    pub probes: Vec<ProbeFigures>,
}

/// The study table's columns of a capacity search; the capacity ranks the stacks.
pub static COLUMNS: &[FigureSpec] = &[
    FigureSpec {
        key: "capacity",
        label: "capacity",
        unit: "",
        better: Better::Higher,
    },
    FigureSpec {
        key: "first_failing",
        label: "first failing",
        unit: "",
        better: Better::Higher,
    },
    FigureSpec {
        key: "hammer_guarantee_mbit",
        label: "hammer guarantee",
        unit: "Mbit/s",
        better: Better::Higher,
    },
    FigureSpec {
        key: "hammer_estimate",
        label: "hammer estimate",
        unit: "",
        better: Better::Higher,
    },
];

impl Verdict {
    /// The values of [`COLUMNS`]; the target is met when the edge was found and confirmed.
    pub fn figures(&self) -> VerdictFigures {
        VerdictFigures {
            values: vec![
                self.capacity,
                self.first_failing,
                self.hammer_guarantee_mbit,
                self.hammer_estimate,
            ],
            meets_target: None,
            impossible: None,
            marked: None,
        }
    }

    /// The verdict in a sentence.
    pub fn line(&self) -> String {
        let v = |x: f64| crate::units::trim_float((x * 1000.0).round() / 1000.0);
        let what = if self.unit == "streams" {
            self.vary.clone()
        } else {
            format!("Mbit/s of {}", self.vary)
        };
        let mut s = match (self.capacity, self.first_failing) {
            (Some(c), Some(f)) => format!(
                "capacity {} {what} (passed {} of {} runs); {} failed {} of {} runs",
                v(c),
                self.capacity_runs,
                self.capacity_runs,
                v(f),
                self.first_failing_failed,
                self.first_failing_runs
            ),
            (Some(c), None) => format!(
                "capacity at least {} {what}: every value up to max passed",
                v(c)
            ),
            (None, Some(f)) => format!("capacity below {} {what}: even min failed", v(f)),
            (None, None) => "no run".to_string(),
        };
        if let Some(f) = &self.failure {
            s.push_str(&format!(
                "; at {}: {} at {:.1} s: {}",
                v(self.first_failing.unwrap_or(0.0)),
                f.stream,
                f.at_s,
                f.what
            ));
        }
        if let (Some(e), Some(r)) = (self.hammer_estimate, self.capacity_over_estimate) {
            s.push_str(&format!(
                "; the hammering guarantee estimated {:.1} (capacity / estimate {:.2})",
                e, r
            ));
        }
        if !self.confirmed {
            s.push_str("; NOT confirmed");
        }
        s
    }
}
