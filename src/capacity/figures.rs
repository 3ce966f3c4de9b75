//! A capacity search's result as result.json holds it (kind `capacity`): the verdict names the
//! capacity, the first failing value and what failed there, the hammering run's guarantee,
//! the estimate it gave and what it sustained, and every probe; [`COLUMNS`] are what the study
//! table shows of it. The capacity it answers with never asks more than the hammering run
//! sustained: a higher value that passed its runs is shown as an upper bound, capped, with the
//! reason; and an edge whose next value passed some of its runs is shown as the range between
//! them with the pass counts.

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
    /// What the hammering run moved through the stack, every stream together, MB/s.
    #[serde(default)]
    pub sustained_mb_s: Option<f64>,
    /// What the streams at `capacity` ask of the stack together, MB/s.
    #[serde(default)]
    pub capacity_demand_mb_s: Option<f64>,
    /// The answer: `capacity`, or the highest value whose streams ask no more than
    /// `sustained_mb_s` when `capacity` asks more (then `upper_bound` says why).
    #[serde(default)]
    pub answer: Option<f64>,
    /// Why `capacity` is only an upper bound, when it is.
    #[serde(default)]
    pub upper_bound: Option<String>,
    /// Every run, in order.
    pub probes: Vec<ProbeFigures>,
}

/// The study table's columns of a capacity search; the capacity (the answer) ranks the stacks.
pub static COLUMNS: &[FigureSpec] = &[
    FigureSpec {
        key: "answer",
        label: "capacity",
        unit: "",
        better: Better::Higher,
    },
    FigureSpec {
        key: "capacity",
        label: "every run passed",
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
        key: "first_failing_passed",
        label: "first failing: runs passed",
        unit: "",
        better: Better::Lower,
    },
    FigureSpec {
        key: "sustained_mb_s",
        label: "hammer sustained",
        unit: "MB/s",
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
    /// The capacity this search answers: `answer`, or `capacity` in results written before
    /// there was one.
    pub fn answered(&self) -> Option<f64> {
        if self.answer.is_some() || self.upper_bound.is_some() {
            self.answer
        } else {
            self.capacity
        }
    }

    /// Runs of the first failing value that passed (0 for a hard edge).
    pub fn first_failing_passed(&self) -> Option<u32> {
        self.first_failing
            .map(|_| self.first_failing_runs - self.first_failing_failed)
    }

    /// The edge as a range with its pass counts when the first failing value passed some of
    /// its runs (`12-13: 13 passed 1 of 2 runs`), None for a hard edge.
    pub fn soft_edge(&self) -> Option<String> {
        let (c, f) = (self.capacity?, self.first_failing?);
        let passed = self.first_failing_passed().filter(|&p| p > 0)?;
        let v = |x: f64| crate::units::trim_float((x * 1000.0).round() / 1000.0);
        Some(format!(
            "{}-{}: {} passed {} of {} runs (a soft edge)",
            v(c),
            v(f),
            v(f),
            passed,
            self.first_failing_runs
        ))
    }

    /// The values of [`COLUMNS`]; the target is met when the edge was found and confirmed.
    pub fn figures(&self) -> VerdictFigures {
        let caution = match (&self.upper_bound, self.soft_edge()) {
            (Some(b), _) => Some(("capped", b.clone())),
            (None, Some(s)) => Some(("soft edge", format!("the edge is {s}"))),
            (None, None) => None,
        };
        VerdictFigures {
            values: vec![
                self.answered(),
                self.capacity,
                self.first_failing,
                self.first_failing_passed().map(f64::from),
                self.sustained_mb_s,
                self.hammer_guarantee_mbit,
                self.hammer_estimate,
            ],
            meets_target: None,
            impossible: None,
            marked: None,
            caution,
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
            (Some(c), Some(f)) if self.soft_edge().is_some() => format!(
                "capacity {}-{} {what}, a soft edge: {} passed {} of {} runs, {} passed {} of {}",
                v(c),
                v(f),
                v(c),
                self.capacity_runs,
                self.capacity_runs,
                v(f),
                self.first_failing_runs - self.first_failing_failed,
                self.first_failing_runs
            ),
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
        if let Some(b) = &self.upper_bound {
            s.push_str(&format!("; UPPER BOUND: {b}"));
        }
        if !self.confirmed {
            s.push_str("; NOT confirmed");
        }
        s
    }
}
