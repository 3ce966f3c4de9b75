//! fsck's figures as result.json holds them: one [`FillFigures`] per fill thread, the
//! [`Verdict`], and the verdict's columns declared once ([`COLUMNS`]). Times are the device
//! model's seconds; per-op times are microseconds, as fs_mark prints them.

use crate::present::{num, num_opt, Better, FigureSpec, VerdictFigures};
use crate::result::{ResultError, Trial};
use serde::{Deserialize, Serialize};

/// One fill thread: an element of result.json's `streams`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FillFigures {
    pub name: String,
    /// Files created (create succeeded).
    pub files: u64,
    /// Operations that failed (any step).
    pub errors: u64,
    /// From its first operation's issue to its last one's completion, s.
    pub fill_s: f64,
    pub files_per_s: Option<f64>,
}

/// The headings of [`FillFigures::row`].
pub const ROW_HEADINGS: [&str; 5] = ["thread", "files", "errors", "fill s", "files/s"];

impl FillFigures {
    pub fn row(&self) -> Vec<String> {
        vec![
            self.name.clone(),
            self.files.to_string(),
            self.errors.to_string(),
            num(self.fill_s),
            num_opt(self.files_per_s),
        ]
    }
}

/// The stack's verdict for fsck: result.json's `verdict`. Each figure of [`COLUMNS`] is the
/// field named by its key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    /// Files the fill created (the files the checker had to check).
    pub files: u64,
    /// How long the fill took, s: its first operation to its last, plus the final sync with
    /// the `end` policy.
    pub fill_s: f64,
    /// fs_mark's figure: files over the fill's time.
    pub fill_files_per_s: Option<f64>,
    /// Mean time of each step of the fill, µs (fs_mark's creat, write, fsync and close
    /// columns); null for a step the fill did not take.
    pub create_us: Option<f64>,
    pub write_us: Option<f64>,
    pub fsync_us: Option<f64>,
    pub close_us: Option<f64>,
    /// Failed fill operations.
    pub fill_errors: u64,
    /// The checker's command line.
    pub fsck_command: Option<String>,
    /// The checker's wall time, s (model time).
    pub fsck_s: Option<f64>,
    /// Files over the check's time: the seed's red figure.
    pub fsck_files_per_s: Option<f64>,
    /// The checker's peak resident memory, MiB, and per file checked, bytes.
    pub fsck_peak_rss_mib: Option<f64>,
    pub fsck_rss_bytes_per_file: Option<f64>,
    /// The checker's user plus system CPU, s (model time, as every time).
    pub fsck_cpu_s: Option<f64>,
    /// CPU time over wall time.
    pub fsck_cpu_share: Option<f64>,
    /// `cpu` when the checker spent at least half its time on the CPU, else `io`.
    pub fsck_bound: Option<String>,
    /// What the checker read from the stack's device (diskstats during the fsck phase).
    pub fsck_read_bytes: Option<u64>,
    pub fsck_read_requests: Option<u64>,
    /// Mean read request, KiB: large reads (readahead, xfs_repair's prefetch) against many
    /// small ones.
    pub fsck_read_request_kib: Option<f64>,
    /// The checker's exit status (0: clean); null when a signal ended it.
    pub fsck_exit: Option<i32>,
}

/// CPU share at or above which a check counts as CPU-bound.
pub const CPU_BOUND_SHARE: f64 = 0.5;

/// fsck's verdict figures: the check's files/s ranks the stacks.
pub static COLUMNS: &[FigureSpec] = &[
    FigureSpec {
        key: "fsck_files_per_s",
        label: "check",
        unit: "files/s",
        better: Better::Higher,
    },
    FigureSpec {
        key: "fsck_s",
        label: "check time",
        unit: "s",
        better: Better::Lower,
    },
    FigureSpec {
        key: "fsck_peak_rss_mib",
        label: "checker peak RSS",
        unit: "MiB",
        better: Better::Lower,
    },
    FigureSpec {
        key: "fsck_cpu_s",
        label: "checker CPU",
        unit: "s",
        better: Better::Lower,
    },
    FigureSpec {
        key: "fsck_read_request_kib",
        label: "mean read",
        unit: "KiB",
        better: Better::Higher,
    },
    FigureSpec {
        key: "fill_files_per_s",
        label: "fill",
        unit: "files/s",
        better: Better::Higher,
    },
];

impl Verdict {
    /// The values of [`COLUMNS`], in order; fsck has no target.
    pub fn figures(&self) -> VerdictFigures {
        VerdictFigures {
            values: vec![
                self.fsck_files_per_s,
                self.fsck_s,
                self.fsck_peak_rss_mib,
                self.fsck_cpu_s,
                self.fsck_read_request_kib,
                self.fill_files_per_s,
            ],
            meets_target: None,
            impossible: None,
            marked: None,
            caution: None,
        }
    }
}

/// A trial's verdict through fsck's type.
pub fn verdict_of(t: &Trial) -> Result<Verdict, ResultError> {
    t.result.verdict_as().map_err(|e| t.error(e))
}

/// `x` in a few characters: `10M`, `1G`, `20k`.
pub fn count(x: f64) -> String {
    let (d, s) = match x {
        x if x >= 1e9 => (1e9, "G"),
        x if x >= 1e6 => (1e6, "M"),
        x if x >= 1e3 => (1e3, "k"),
        _ => (1.0, ""),
    };
    format!("{}{s}", num(x / d))
}
