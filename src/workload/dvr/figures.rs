//! dvr's figures as result.json holds them: one [`StreamFigures`] per stream, the
//! [`Verdict`], and the verdict's columns declared once ([`COLUMNS`]: key, label, unit, which
//! way is better). The analysis writes these types and the report reads them back.

use crate::analysis::stats;
use crate::engine::Op;
use crate::present::{Better, FigureSpec, VerdictFigures};
use crate::workload::realtime::{BufferFigures, RealtimeVerdict, REALTIME_COLUMNS};
use serde::{Deserialize, Serialize};

/// Figures of one stream: an element of result.json's `streams`. Figures of the other role
/// are `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamFigures {
    pub name: String,
    pub role: String,
    pub op: Op,
    pub samples: usize,
    pub errors: usize,
    pub elapsed_s: f64,
    pub mbit_s: f64,
    pub lat_ms: stats::LatencySummary,
    /// Record streams: the peak of the moving-window average, ms.
    #[serde(default)]
    pub window_peak_ms: Option<f64>,
    /// Record streams: bitrate sustainable with the buffer, Mbit/s.
    #[serde(default)]
    pub mbit_guaranteed: Option<f64>,
    /// Playback streams: worst sum of `playback_ios` consecutive reads, s.
    #[serde(default)]
    pub preroll_s: Option<f64>,
    /// `pacing = realtime`: the stream's buffer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<BufferFigures>,
}

/// The stack's verdict for dvr: result.json's `verdict`. Each figure of [`COLUMNS`] is the
/// field named by its key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    pub record_mbit_guaranteed: Option<f64>,
    pub playback_preroll_s: Option<f64>,
    pub record_fairness_jain: Option<f64>,
    pub playback_fairness_jain: Option<f64>,
    pub record_completion_spread: Option<f64>,
    pub playback_completion_spread: Option<f64>,
    pub target_mbit: f64,
    /// `max` pacing: the record guarantee meets `target_mbit`; `realtime`: nothing
    /// overflowed, no playback stalled, every playback started.
    pub meets_target: Option<bool>,
    /// `pacing = realtime`: the fields of [`REALTIME_COLUMNS`] and the first failure.
    #[serde(flatten)]
    pub realtime: RealtimeVerdict,
}

/// dvr's verdict figures, declared once: the key in [`Verdict`], label, unit, direction.
/// The first, the record guarantee, ranks the stacks; in real time (where the others have no
/// value) the first real-time figure does.
pub static COLUMNS: &[FigureSpec] = &[
    FigureSpec {
        key: "record_mbit_guaranteed",
        label: "record guaranteed",
        unit: "Mbit/s",
        better: Better::Higher,
    },
    FigureSpec {
        key: "playback_preroll_s",
        label: "playback pre-roll",
        unit: "s",
        better: Better::Lower,
    },
    FigureSpec {
        key: "record_fairness_jain",
        label: "record fairness",
        unit: "Jain",
        better: Better::Higher,
    },
    FigureSpec {
        key: "playback_fairness_jain",
        label: "playback fairness",
        unit: "Jain",
        better: Better::Higher,
    },
    FigureSpec {
        key: "record_completion_spread",
        label: "record spread",
        unit: "max/min",
        better: Better::Lower,
    },
    FigureSpec {
        key: "playback_completion_spread",
        label: "playback spread",
        unit: "max/min",
        better: Better::Lower,
    },
    REALTIME_COLUMNS[0],
    REALTIME_COLUMNS[1],
    REALTIME_COLUMNS[2],
    REALTIME_COLUMNS[3],
    REALTIME_COLUMNS[4],
    REALTIME_COLUMNS[5],
    REALTIME_COLUMNS[6],
];

impl Verdict {
    /// The values of [`COLUMNS`], in order, and whether the target was met.
    pub fn figures(&self) -> VerdictFigures {
        let mut values = vec![
            self.record_mbit_guaranteed,
            self.playback_preroll_s,
            self.record_fairness_jain,
            self.playback_fairness_jain,
            self.record_completion_spread,
            self.playback_completion_spread,
        ];
        values.extend(self.realtime.summary().values());
        VerdictFigures {
            values,
            meets_target: self.meets_target,
            impossible: None,
            marked: None,
            caution: None,
        }
    }
}
