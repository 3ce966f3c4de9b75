//! dvr's figures as result.json holds them: one [`StreamFigures`] per stream, the
//! [`Verdict`], and the verdict's columns declared once ([`COLUMNS`]: key, label, unit, which
//! way is better). The analysis writes these types and the report reads them back.

use crate::analysis::stats;
use crate::engine::Op;
use crate::present::{Better, FigureSpec, VerdictFigures};
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
    pub meets_target: Option<bool>,
}

/// dvr's verdict figures, declared once: the key in [`Verdict`], label, unit, direction.
/// The first, the record guarantee, ranks the stacks.
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
];

impl Verdict {
    /// The values of [`COLUMNS`], in order, and whether the target was met.
    pub fn figures(&self) -> VerdictFigures {
        VerdictFigures {
            values: vec![
                self.record_mbit_guaranteed,
                self.playback_preroll_s,
                self.record_fairness_jain,
                self.playback_fairness_jain,
                self.record_completion_spread,
                self.playback_completion_spread,
            ],
            meets_target: self.meets_target,
            impossible: None,
        }
    }
}
