//! The figures real-time streams add, as result.json holds them: each stream's buffer
//! ([`BufferFigures`], its `streams[].buffer`), and the stack's part of the verdict
//! ([`Summary`], whose figures a kind copies into its own verdict under the keys of
//! [`REALTIME_COLUMNS`]): how full the record buffers got, what overflowed and when, how
//! playback fared, and the first failure.

use crate::analysis::stats::LatencySummary;
use crate::present::{Better, FigureSpec};
use serde::{Deserialize, Serialize};

/// A run of frames that lost bytes, as result.json lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OverflowAt {
    /// When its first frame lost bytes, s since the stream started.
    pub start_s: f64,
    /// When a frame next fit whole (or its last losing frame, at the end), s.
    pub end_s: f64,
    pub bytes: u64,
    pub frames: u64,
}

/// A stall of a playback, s since the stream started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StallAt {
    pub start_s: f64,
    pub end_s: f64,
}

/// One real-time stream's buffer: result.json's `streams[].buffer`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferFigures {
    /// `record` or `playback`.
    pub role: String,
    /// The application's mean bitrate, Mbit/s.
    pub bitrate_mbit: f64,
    /// Frame sizes (`constant`, `lognormal,cv=0.3`, `trace (900 frames)`).
    pub frames: String,
    /// The buffer's size, bytes.
    pub buffer_bytes: u64,
    /// Playback: bytes buffered before it starts (and after a stall).
    pub preroll_bytes: Option<u64>,
    /// Record: bytes the application made (the chunk fraction it started with included);
    /// playback: bytes it played.
    pub app_bytes: u64,
    /// Bytes written (record) or read (playback).
    pub io_bytes: u64,
    /// Bytes of I/Os that failed or came up short.
    pub failed_bytes: u64,
    /// Record: bytes dropped because the buffer was full: `app_bytes - io_bytes -
    /// failed_bytes - end_bytes`, to the byte.
    pub overflow_bytes: u64,
    /// Bytes in the buffer when the schedule ended.
    pub end_bytes: u64,
    pub peak_bytes: u64,
    /// `peak_bytes` over `buffer_bytes`, %.
    pub peak_pct: f64,
    /// Record: runs of frames that lost bytes.
    pub overflow_events: u64,
    /// The first 100 of them.
    pub overflows: Vec<OverflowAt>,
    /// Playback: frames due with too little buffered.
    pub underruns: u64,
    /// Playback: time stood still, s (a stall still going at the end counts to the end).
    pub stall_s: f64,
    /// The first 100 stalls.
    pub stalls: Vec<StallAt>,
    /// Playback: when it started (its pre-roll came in), s; `null` if it never did.
    pub startup_s: Option<f64>,
    /// Playback: the least it held once playing, % of its buffer.
    pub low_pct: Option<f64>,
    /// Each I/O's completion counted from when it was wanted (its chunk ready, or room for
    /// it), ms: the latency without coordinated omission.
    pub lat_from_wanted_ms: LatencySummary,
}

/// Headings of a real-time stream's columns in a kind's terminal table of streams.
pub const BUFFER_HEADINGS: [&str; 5] = [
    "buffer peak %",
    "overflow MB",
    "underruns",
    "stalled s",
    "from wanted p99 ms",
];

impl BufferFigures {
    /// The cells under [`BUFFER_HEADINGS`] (`-` where they do not apply); all `-` for a
    /// stream not in real time.
    pub fn cells(b: Option<&BufferFigures>) -> Vec<String> {
        let Some(b) = b else {
            return vec!["-".into(); BUFFER_HEADINGS.len()];
        };
        let record = b.role == "record";
        let pick = |yes: bool, v: String| if yes { v } else { "-".into() };
        vec![
            format!("{:.1}", b.peak_pct),
            pick(record, format!("{:.2}", b.overflow_bytes as f64 / 1e6)),
            pick(!record, b.underruns.to_string()),
            pick(!record, format!("{:.2}", b.stall_s)),
            format!("{:.1}", b.lat_from_wanted_ms.p99),
        ]
    }
}

/// What failed first in a real-time run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    pub stream: String,
    /// When, s since the streams started.
    pub at_s: f64,
    /// In words: `overflow: 1.2 MB dropped over 3 events`.
    pub what: String,
}

/// The stack's real-time verdict: the figures a kind adds to its own verdict.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Summary {
    /// The fullest any record buffer got, % of its size (100: it overflowed).
    pub record_buffer_peak_pct: Option<f64>,
    /// Bytes all record streams dropped, MB.
    pub overflow_mb: Option<f64>,
    pub overflow_events: Option<u64>,
    pub underruns: Option<u64>,
    /// Time all playbacks stood still, s.
    pub stall_s: Option<f64>,
    /// The slowest playback start, s.
    pub playback_startup_s: Option<f64>,
    /// The least any playback held once playing, % of its buffer.
    pub playback_buffer_low_pct: Option<f64>,
    /// No overflow, no underrun, every playback started.
    pub passed: bool,
    pub first_failure: Option<Failure>,
}

/// The real-time columns of a kind's verdict, in the order a kind lists them after its own.
/// The first, how full the record buffers got, ranks stacks that all kept up.
pub const REALTIME_COLUMNS: [FigureSpec; 7] = [
    FigureSpec {
        key: "record_buffer_peak_pct",
        label: "record buffer peak",
        unit: "%",
        better: Better::Lower,
    },
    FigureSpec {
        key: "overflow_mb",
        label: "overflow",
        unit: "MB",
        better: Better::Lower,
    },
    FigureSpec {
        key: "overflow_events",
        label: "overflows",
        unit: "",
        better: Better::Lower,
    },
    FigureSpec {
        key: "underruns",
        label: "underruns",
        unit: "",
        better: Better::Lower,
    },
    FigureSpec {
        key: "stall_s",
        label: "stalled",
        unit: "s",
        better: Better::Lower,
    },
    FigureSpec {
        key: "playback_startup_s",
        label: "playback start",
        unit: "s",
        better: Better::Lower,
    },
    FigureSpec {
        key: "playback_buffer_low_pct",
        label: "playback buffer low",
        unit: "%",
        better: Better::Higher,
    },
];

/// The keys of [`REALTIME_COLUMNS`]: one column group of a kind's report.
pub const REALTIME_KEYS: [&str; 7] = [
    REALTIME_COLUMNS[0].key,
    REALTIME_COLUMNS[1].key,
    REALTIME_COLUMNS[2].key,
    REALTIME_COLUMNS[3].key,
    REALTIME_COLUMNS[4].key,
    REALTIME_COLUMNS[5].key,
    REALTIME_COLUMNS[6].key,
];

impl Summary {
    /// The values of [`REALTIME_COLUMNS`], in order.
    pub fn values(&self) -> [Option<f64>; 7] {
        [
            self.record_buffer_peak_pct,
            self.overflow_mb,
            self.overflow_events.map(|n| n as f64),
            self.underruns.map(|n| n as f64),
            self.stall_s,
            self.playback_startup_s,
            self.playback_buffer_low_pct,
        ]
    }

    /// The verdict in a sentence: `kept up: record buffers at most 23% full; playback started
    /// in 0.4 s, never stalled` or what failed first.
    pub fn line(&self) -> String {
        let mut parts = Vec::new();
        if let Some(p) = self.record_buffer_peak_pct {
            parts.push(format!("record buffers at most {p:.0}% full"));
        }
        if let Some(mb) = self.overflow_mb.filter(|&m| m > 0.0) {
            parts.push(format!(
                "{mb:.1} MB dropped in {} overflows",
                self.overflow_events.unwrap_or(0)
            ));
        }
        if let Some(s) = self.playback_startup_s {
            parts.push(format!("playback started in {s:.2} s"));
        }
        match (self.underruns, self.stall_s) {
            (Some(0), _) => parts.push("never stalled".into()),
            (Some(n), Some(s)) => parts.push(format!("{n} underruns, stalled {s:.1} s")),
            _ => {}
        }
        let head = match &self.first_failure {
            None => "kept up".to_string(),
            Some(f) => format!("FAILED: {} at {:.1} s: {}", f.stream, f.at_s, f.what),
        };
        format!("{head}; {}", parts.join(", "))
    }
}

/// The real-time part of a kind's verdict as result.json holds it: flattened into the kind's
/// `verdict` after its own figures and its `meets_target`, the fields of [`REALTIME_COLUMNS`]
/// under their own keys and the first failure, each absent unless the streams ran in real
/// time. It is [`Summary`] without `passed`, which the kind's `meets_target` holds.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RealtimeVerdict {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_buffer_peak_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow_mb: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overflow_events: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub underruns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playback_startup_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playback_buffer_low_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_failure: Option<Failure>,
}

impl RealtimeVerdict {
    /// The verdict's part of `s`; whether the run kept up (`s.passed`) is the kind's
    /// `meets_target`.
    pub fn of(s: Summary) -> RealtimeVerdict {
        RealtimeVerdict {
            record_buffer_peak_pct: s.record_buffer_peak_pct,
            overflow_mb: s.overflow_mb,
            overflow_events: s.overflow_events,
            underruns: s.underruns,
            stall_s: s.stall_s,
            playback_startup_s: s.playback_startup_s,
            playback_buffer_low_pct: s.playback_buffer_low_pct,
            first_failure: s.first_failure,
        }
    }

    /// The real-time part, as [`Summary`] holds it.
    pub fn summary(&self) -> Summary {
        Summary {
            record_buffer_peak_pct: self.record_buffer_peak_pct,
            overflow_mb: self.overflow_mb,
            overflow_events: self.overflow_events,
            underruns: self.underruns,
            stall_s: self.stall_s,
            playback_startup_s: self.playback_startup_s,
            playback_buffer_low_pct: self.playback_buffer_low_pct,
            passed: self.first_failure.is_none(),
            first_failure: self.first_failure.clone(),
        }
    }
}
