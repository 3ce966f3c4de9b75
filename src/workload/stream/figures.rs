//! stream's figures as result.json holds them: one [`StreamFigures`] per stream, the
//! [`Verdict`], and the verdict's columns declared once ([`COLUMNS`]). Throughputs are MB/s
//! (10^6 bytes per second). The analysis writes these types and the report reads them back.

use crate::analysis::stats;
use crate::engine::Op;
use crate::present::{num, num_opt, Better, FigureSpec, VerdictFigures};
use crate::workload::realtime::{BufferFigures, RealtimeVerdict, REALTIME_COLUMNS};
use serde::{Deserialize, Serialize};

/// Figures of one stream: an element of result.json's `streams`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamFigures {
    pub name: String,
    pub role: String,
    pub op: Op,
    /// Operations done in the streaming phase, and of those, how many failed.
    pub ios: u64,
    pub errors: u64,
    /// Bytes moved in the streaming phase.
    pub bytes: u64,
    /// Bytes over the streaming phase's time (from its start to its last completion), MB/s.
    pub mb_s: f64,
    /// Mean over the intervals after the aggregate settled, MB/s; null when it never did.
    pub settled_mb_s: Option<f64>,
    /// Access time of the successful operations.
    pub lat_ms: stats::LatencySummary,
    /// The stream reached the end of its file or region and started over at its start.
    pub wrapped: bool,
    /// `pacing = realtime`: the stream's buffer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<BufferFigures>,
}

/// The headings of [`StreamFigures::row`].
pub const ROW_HEADINGS: [&str; 10] = [
    "stream",
    "ios",
    "errors",
    "MB",
    "MB/s",
    "settled MB/s",
    "p50 ms",
    "p99 ms",
    "max ms",
    "wrapped",
];

impl StreamFigures {
    /// The stream as a row of a table (terminal or report).
    pub fn row(&self) -> Vec<String> {
        vec![
            self.name.clone(),
            self.ios.to_string(),
            self.errors.to_string(),
            num(self.bytes as f64 / 1e6),
            num(self.mb_s),
            num_opt(self.settled_mb_s),
            num(self.lat_ms.p50),
            num(self.lat_ms.p99),
            num(self.lat_ms.max),
            if self.wrapped { "yes" } else { "no" }.into(),
        ]
    }
}

/// The stack's verdict for stream: result.json's `verdict`. Each figure of [`COLUMNS`] is the
/// field named by its key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    /// The aggregate's mean from the moment it settled to the end of the run, MB/s; null when
    /// it never settled.
    pub settled_mb_s: Option<f64>,
    /// Whether the aggregate settled (the steady-state rule found a steady window).
    pub settled: bool,
    /// When it settled, seconds since the streams started.
    pub settle_s: Option<f64>,
    /// The aggregate's mean over every full interval, MB/s (what is left when it never settled).
    pub mean_mb_s: Option<f64>,
    /// All bytes over the streaming plus the final sync, MB/s.
    pub total_mb_s: Option<f64>,
    /// Seconds the final sync took (model time).
    pub sync_s: Option<f64>,
    /// Coefficient of variation (sample standard deviation / mean) of the aggregate per
    /// interval, over the settled intervals (all full intervals when it never settled).
    pub burstiness: Option<f64>,
    /// Jain's index of the streams' throughputs over the same intervals.
    pub stream_fairness_jain: Option<f64>,
    /// The raw sequential capability the stack is compared with, MB/s.
    pub raw_mb_s: Option<f64>,
    /// What the stack sustained ([`Verdict::sustained`]) over raw_mb_s.
    pub raw_fraction: Option<f64>,
    /// Full intervals harvested.
    pub intervals: usize,
    /// Mean CPU of the kernel's threads while the streams ran, % of one core (the filesystem,
    /// RAID, flusher and loop threads' cost: seed 001's `md10_raid10` at 66%); null when the
    /// threads monitor did not run.
    #[serde(default)]
    pub kernel_cpu_pct: Option<f64>,
    /// Why the sustained figure cannot be what the stack's drives took (raw_fraction above 1:
    /// the page cache absorbed the writers); the stack is then marked and never ranked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impossible: Option<String>,
    /// `pacing = realtime`: nothing overflowed, no reader stalled, every reader started;
    /// absent otherwise (stream has no other target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meets_target: Option<bool>,
    /// `pacing = realtime`: the fields of [`REALTIME_COLUMNS`] and the first failure.
    #[serde(flatten)]
    pub realtime: RealtimeVerdict,
}

/// stream's verdict figures, declared once: the key in [`Verdict`], label, unit, direction.
/// The first, the settled throughput, ranks the stacks.
pub static COLUMNS: &[FigureSpec] = &[
    FigureSpec {
        key: "settled_mb_s",
        label: "settled",
        unit: "MB/s",
        better: Better::Higher,
    },
    FigureSpec {
        key: "raw_fraction",
        label: "of raw",
        unit: "fraction",
        better: Better::Higher,
    },
    FigureSpec {
        key: "total_mb_s",
        label: "total with sync",
        unit: "MB/s",
        better: Better::Higher,
    },
    FigureSpec {
        key: "settle_s",
        label: "settled after",
        unit: "s",
        better: Better::Lower,
    },
    FigureSpec {
        key: "burstiness",
        label: "burstiness",
        unit: "CV",
        better: Better::Lower,
    },
    FigureSpec {
        key: "stream_fairness_jain",
        label: "fairness",
        unit: "Jain",
        better: Better::Higher,
    },
    REALTIME_COLUMNS[0],
    REALTIME_COLUMNS[1],
    REALTIME_COLUMNS[2],
    REALTIME_COLUMNS[3],
    REALTIME_COLUMNS[4],
    REALTIME_COLUMNS[5],
    REALTIME_COLUMNS[6],
    FigureSpec {
        key: "kernel_cpu_pct",
        label: "kernel CPU",
        unit: "% of a core",
        better: Better::Lower,
    },
];

impl Verdict {
    /// What the stack sustained: the settled level; when it never settled, the total with the
    /// final sync (which the page cache cannot flatter), else the mean of the intervals.
    pub fn sustained(&self) -> Option<f64> {
        self.settled_mb_s.or(self.total_mb_s).or(self.mean_mb_s)
    }

    /// The values of [`COLUMNS`], in order; only a run in real time has a target.
    pub fn figures(&self) -> VerdictFigures {
        let mut values = vec![
            self.settled_mb_s,
            self.raw_fraction,
            self.total_mb_s,
            self.settle_s,
            self.burstiness,
            self.stream_fairness_jain,
        ];
        values.extend(self.realtime.summary().values());
        values.push(self.kernel_cpu_pct);
        VerdictFigures {
            values,
            meets_target: self.meets_target,
            impossible: self.impossible.clone().filter(|w| !ranked(w)),
            marked: self
                .impossible
                .as_deref()
                .filter(|w| ranked(w))
                .map(|w| cause(w).to_string()),
            caution: None,
        }
    }
}

/// How a cause of `impossible` begins when the figure is above the raw rate by less than
/// its own precision.
pub const AT_RAW: &str = "at the drives' raw rate: ";

/// Whether a cause of `impossible` leaves the stack ranked (marked): a figure at the drives'
/// raw rate or within what their models stream at is one the drives can do.
pub fn ranked(why: &str) -> bool {
    why.starts_with(AT_RAW) || why.starts_with(WITHIN_MODEL)
}

/// What results written by earlier versions put after a ranked cause's figures: what the
/// ranking made of it then. The ranking decides that now ([`ranked`]), so a report of those
/// results shows the cause without it, and never "ranked" beside "not ranked".
const CONSEQUENCES: &[&str] = &[
    ", and not ranked above stacks measured below them",
    ", yet it is not ranked against stacks judged by that trial",
    ", so it is ranked, and marked",
    ": it is ranked, and marked",
];

/// The cause `why`, without a consequence an earlier version wrote into it.
fn cause(why: &str) -> &str {
    CONSEQUENCES
        .iter()
        .find_map(|c| why.strip_suffix(c))
        .unwrap_or(why)
}

/// How a cause of `impossible` begins when the figure is above what the raw trial's drives
/// took but within what the drives' models stream at: the raw trial fell short of the drives.
pub const WITHIN_MODEL: &str = "above the raw trial, within the drives' model: ";
