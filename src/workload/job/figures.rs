//! job's figures as result.json holds them, in fio's headline terms: per stream
//! ([`StreamFigures`]), per job group ([`GroupFigures`]) and in total ([`Verdict`]): IOPS,
//! MB/s (10^6 bytes per second) and completion latency in microseconds (mean, p50, p99,
//! p99.9, max). The verdict's columns are declared once ([`COLUMNS`]).

use crate::engine::Op;
use crate::present::{num, Better, FigureSpec, VerdictFigures};
use serde::{Deserialize, Serialize};

/// Completion latency of a set of I/Os, microseconds; for paced jobs counted from the
/// intended issue time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct LatUs {
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

/// Figures of one stream (one of a group's `numjobs`): an element of result.json's `streams`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamFigures {
    pub name: String,
    /// Its job group.
    pub role: String,
    pub op: Op,
    /// Reads and writes done in the `run` phase, and of those, how many failed.
    pub ios: u64,
    pub errors: u64,
    pub bytes: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub fsyncs: u64,
    /// From the run phase's start to the stream's last completion, s.
    pub runtime_s: f64,
    pub iops: f64,
    pub mb_s: f64,
    pub lat_us: Option<LatUs>,
    /// What its reads back of its writes found (fio's `verify`); absent when it does not
    /// verify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyFigures>,
    /// Why its job ended before its I/O was done (its first I/O error, `ratemin` not met);
    /// absent when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Its I/Os by the I/O priority they carried (ioprio value, 0 for the job's own), when
    /// some carried one (`cmdprio_percentage`, `cmdprio_bssplit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prio_ios: Option<std::collections::BTreeMap<String, u64>>,
    /// fio's steady-state detection (`steadystate`): whether and when it ended the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steadystate: Option<SteadyFigures>,
    /// fio's latency-target search (`latency_target`): the queue depth it settled on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<LatencyTargetFigures>,
}

/// What a stream's steady-state detection found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct SteadyFigures {
    /// Steady state was reached, and the job ended there.
    pub attained: bool,
    /// When, s from the job's start; null when it was not.
    pub at_s: Option<f64>,
    /// The criterion's figure (deviation or slope, in % of the mean when the limit is) when it
    /// was reached, else the last one computed; null before a full window.
    pub figure: Option<f64>,
}

/// What a stream's latency-target search found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct LatencyTargetFigures {
    /// The queue depth it settled on (or was trying when the job ended).
    pub qd: u64,
    /// False when no depth met the target, not even 1 (the job ended there).
    pub met: bool,
}

/// What a stream's verify found, over its run phases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct VerifyFigures {
    /// fio's verify type of its headers.
    pub checksum: String,
    /// Verify intervals read back and checked.
    pub checked: u64,
    /// Of those, how many were not what it wrote.
    pub mismatches: u64,
    /// The first mismatches: where, and what is wrong.
    pub first: Vec<Mismatch>,
}

/// One verify mismatch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mismatch {
    /// The file (or device) it was read from.
    pub file: String,
    /// Byte offset of the damaged verify interval in it.
    pub offset: u64,
    /// What is wrong with it.
    pub what: String,
}

/// Figures of one job group (fio's job section, all its `numjobs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupFigures {
    pub name: String,
    pub rw: String,
    pub ioengine: String,
    pub iodepth: u64,
    pub numjobs: u64,
    pub bs: u64,
    pub ios: u64,
    pub errors: u64,
    pub iops: f64,
    pub mb_s: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub lat_us: Option<LatUs>,
    /// Completion latency at the job's `percentile_list` (fio's 17 by default).
    #[serde(default)]
    pub percentiles: Vec<Percentile>,
}

/// The completion latency at one percentile.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Percentile {
    /// The percentile, %.
    pub p: f64,
    pub us: f64,
}

/// job's verdict: result.json's `verdict`, fio's headline figures over every job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    pub iops: Option<f64>,
    pub mb_s: Option<f64>,
    pub read_iops: Option<f64>,
    pub write_iops: Option<f64>,
    pub lat_mean_us: Option<f64>,
    pub lat_p50_us: Option<f64>,
    pub lat_p99_us: Option<f64>,
    pub lat_p999_us: Option<f64>,
    pub lat_max_us: Option<f64>,
    pub errors: u64,
    /// Verify mismatches of every job that verifies (fio's `verify`); absent when none does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_mismatches: Option<u64>,
    /// From the first issue to the last completion, s.
    pub runtime_s: f64,
    /// Each job (fio's job section, all its `numjobs`).
    pub groups: Vec<GroupFigures>,
    /// fio's reporting groups ("Run status group N"): a new one at each `stonewall` or
    /// `new_group`.
    #[serde(default)]
    pub run_groups: Vec<RunGroup>,
}

/// One of fio's reporting groups: its jobs summed, over the time from its first issue to its
/// last completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunGroup {
    /// fio's group number, from 0.
    pub id: u64,
    /// Its jobs' names.
    pub jobs: Vec<String>,
    pub ios: u64,
    pub errors: u64,
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub mb_s: f64,
    pub read_mb_s: f64,
    pub write_mb_s: f64,
    pub runtime_s: f64,
    pub lat_us: Option<LatUs>,
}

/// job's verdict figures: the key in [`Verdict`], label, unit, direction; IOPS ranks.
pub static COLUMNS: &[FigureSpec] = &[
    FigureSpec {
        key: "iops",
        label: "IOPS",
        unit: "I/O/s",
        better: Better::Higher,
    },
    FigureSpec {
        key: "mb_s",
        label: "bandwidth",
        unit: "MB/s",
        better: Better::Higher,
    },
    FigureSpec {
        key: "lat_mean_us",
        label: "clat mean",
        unit: "us",
        better: Better::Lower,
    },
    FigureSpec {
        key: "lat_p50_us",
        label: "clat p50",
        unit: "us",
        better: Better::Lower,
    },
    FigureSpec {
        key: "lat_p99_us",
        label: "clat p99",
        unit: "us",
        better: Better::Lower,
    },
    FigureSpec {
        key: "lat_p999_us",
        label: "clat p99.9",
        unit: "us",
        better: Better::Lower,
    },
];

impl Verdict {
    /// The values of [`COLUMNS`], in order; job has no target.
    pub fn figures(&self) -> VerdictFigures {
        VerdictFigures {
            values: vec![
                self.iops,
                self.mb_s,
                self.lat_mean_us,
                self.lat_p50_us,
                self.lat_p99_us,
                self.lat_p999_us,
            ],
            meets_target: None,
            impossible: None,
            marked: None,
            caution: None,
        }
    }
}

/// The headings of [`GroupFigures::row`].
pub const GROUP_HEADINGS: [&str; 10] = [
    "job",
    "rw",
    "engine",
    "QD",
    "jobs",
    "IOPS",
    "MB/s",
    "clat mean us",
    "p99 us",
    "p99.9 us",
];

impl GroupFigures {
    /// The group as a row of a table (terminal or report).
    pub fn row(&self) -> Vec<String> {
        let lat = |f: fn(&LatUs) -> f64| self.lat_us.as_ref().map_or("-".into(), |l| num(f(l)));
        vec![
            self.name.clone(),
            self.rw.clone(),
            self.ioengine.clone(),
            self.iodepth.to_string(),
            self.numjobs.to_string(),
            num(self.iops),
            num(self.mb_s),
            lat(|l| l.mean),
            lat(|l| l.p99),
            lat(|l| l.p999),
        ]
    }
}

impl RunGroup {
    /// The group as a row under [`GROUP_HEADINGS`]: `group N` and its jobs' count.
    pub fn row(&self) -> Vec<String> {
        let lat = |f: fn(&LatUs) -> f64| self.lat_us.as_ref().map_or("-".into(), |l| num(f(l)));
        vec![
            format!("group {}", self.id),
            String::new(),
            String::new(),
            String::new(),
            self.jobs.len().to_string(),
            num(self.iops),
            num(self.mb_s),
            lat(|l| l.mean),
            lat(|l| l.p99),
            lat(|l| l.p999),
        ]
    }
}
