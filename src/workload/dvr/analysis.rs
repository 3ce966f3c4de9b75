//! dvr's analysis: per-stream figures (latency statistics, moving-window peaks, pre-roll) and
//! the stack's verdict from the samples of a run, and how they read on the terminal. A run in
//! real time has no hammering figures (its streams wait for their application, so their access
//! times guarantee nothing); its verdict is its buffers' ([`crate::workload::realtime`]).

use super::figures::{StreamFigures, Verdict};
use crate::analysis::{fairness, stats, window};
use crate::engine::StreamSamples;
use crate::params::Params;
use crate::present::Rows;
use crate::workload::realtime::{BufferFigures, RealtimeOutcome, RealtimeVerdict, BUFFER_HEADINGS};
use crate::workload::Outcome;
use serde_json::Value as Json;

/// Everything dvr's analysis found.
#[derive(Debug, Clone, PartialEq)]
pub struct DvrOutcome {
    pub window_s: f64,
    pub streams: Vec<StreamFigures>,
    pub verdict: Verdict,
    pub warnings: Vec<String>,
    /// `pacing = realtime`: the streams' buffers.
    pub realtime: Option<RealtimeOutcome>,
}

fn stream_figures(
    p: &Params,
    st: &StreamSamples,
    hammered: bool,
    warnings: &mut Vec<String>,
) -> StreamFigures {
    let ok: Vec<_> = st.ok().copied().collect();
    let errors = st.samples.len() - ok.len();
    if errors > 0 {
        warnings.push(format!(
            "{}: {errors} of {} I/Os failed",
            st.name,
            st.samples.len()
        ));
    }
    let lat_ms: Vec<f64> = ok.iter().map(|s| s.latency_ns as f64 / 1e6).collect();
    let elapsed_s = st.elapsed_s();
    let bytes: u64 = ok.iter().map(|s| s.bytes).sum();
    let io_bytes = ok.iter().map(|s| s.bytes).max().unwrap_or(0);
    let mbit_s = if elapsed_s > 0.0 {
        bytes as f64 * 8.0 / elapsed_s / 1e6
    } else {
        0.0
    };
    let (mut window_peak_ms, mut mbit_guaranteed, mut preroll_s) = (None, None, None);
    if hammered && st.role == "record" && !ok.is_empty() {
        let pts: Vec<(u64, u64)> = ok.iter().map(|s| (s.issue_ns, s.latency_ns)).collect();
        let w = (p.f64("window") * 1e9) as u64;
        let (series, full) = window::moving_average(&pts, w);
        if !full {
            warnings.push(format!(
                "{}: sampled for {:.2} s, less than the {} s window; its guarantee uses one window over the whole run",
                st.name, elapsed_s, p.f64("window")
            ));
        }
        let peak_ns = series.iter().map(|x| x.mean_ns).fold(0.0, f64::max);
        window_peak_ms = Some(peak_ns / 1e6);
        mbit_guaranteed = (peak_ns > 0.0).then(|| window::mbit_per_s(io_bytes, peak_ns / 1e9));
    }
    if hammered && st.role == "playback" {
        let k = p.u64("playback_ios") as usize;
        let lats: Vec<u64> = ok.iter().map(|s| s.latency_ns).collect();
        let worst = window::consecutive_sums(&lats, k).into_iter().max();
        if worst.is_none() {
            warnings.push(format!(
                "{}: fewer than {k} successful reads, no pre-roll",
                st.name
            ));
        }
        preroll_s = worst.map(|ns| ns as f64 / 1e9);
    }
    StreamFigures {
        name: st.name.clone(),
        role: st.role.clone(),
        op: st.op,
        samples: st.samples.len(),
        errors,
        elapsed_s,
        mbit_s,
        lat_ms: stats::summarize(&lat_ms).unwrap_or_default(),
        window_peak_ms,
        mbit_guaranteed,
        preroll_s,
        buffer: None,
    }
}

fn role_fairness(figs: &[StreamFigures], role: &str) -> (Option<f64>, Option<f64>) {
    let r: Vec<&StreamFigures> = figs.iter().filter(|f| f.role == role).collect();
    let thr: Vec<f64> = r.iter().map(|f| f.mbit_s).collect();
    let t: Vec<f64> = r.iter().map(|f| f.elapsed_s).collect();
    (fairness::jain(&thr), fairness::spread(&t))
}

/// dvr's analysis of a run's samples; `live` is the replay of its real-time streams'
/// buffers, when they ran in real time.
pub fn analyze(p: &Params, streams: &[StreamSamples], live: Option<RealtimeOutcome>) -> DvrOutcome {
    let hammered = live.is_none();
    let mut warnings = Vec::new();
    let mut figs: Vec<StreamFigures> = streams
        .iter()
        .map(|s| stream_figures(p, s, hammered, &mut warnings))
        .collect();
    let rec_min = figs
        .iter()
        .filter_map(|f| f.mbit_guaranteed)
        .reduce(f64::min);
    let has_rec = figs.iter().any(|f| f.role == "record");
    let preroll_max = figs.iter().filter_map(|f| f.preroll_s).reduce(f64::max);
    let ((rj, rs), (pj, ps)) = if hammered {
        (
            role_fairness(&figs, "record"),
            role_fairness(&figs, "playback"),
        )
    } else {
        ((None, None), (None, None))
    };
    let target = p.f64("target_mbit");
    let meets = match &live {
        Some(l) => Some(l.summary.passed),
        None if has_rec => Some(rec_min.is_some_and(|m| m >= target)),
        None => None,
    };
    let mut verdict = Verdict {
        record_mbit_guaranteed: rec_min,
        playback_preroll_s: preroll_max,
        record_fairness_jain: rj,
        playback_fairness_jain: pj,
        record_completion_spread: rs,
        playback_completion_spread: ps,
        target_mbit: target,
        meets_target: meets,
        realtime: RealtimeVerdict::default(),
    };
    if let Some(l) = &live {
        verdict.meets_target = Some(l.summary.passed);
        verdict.realtime = RealtimeVerdict::of(l.summary.clone());
        for (f, b) in figs.iter_mut().zip(&l.streams) {
            f.buffer = b.clone();
        }
        warnings.extend(l.warnings.iter().cloned());
    }
    DvrOutcome {
        window_s: p.f64("window"),
        streams: figs,
        verdict,
        warnings,
        realtime: live,
    }
}

fn opt(x: Option<f64>, decimals: usize) -> String {
    x.map(|v| format!("{v:.decimals$}"))
        .unwrap_or_else(|| "-".into())
}

impl Outcome for DvrOutcome {
    fn streams_json(&self) -> Vec<Json> {
        crate::workload::streams_json(&self.streams)
    }

    fn verdict_json(&self) -> Json {
        crate::workload::verdict_json(&self.verdict)
    }

    fn stream_rows(&self) -> Rows {
        let mut headings = vec![
            "stream",
            "samples",
            "errors",
            "time s",
            "Mbit/s",
            "mean ms",
            "p50 ms",
            "p99 ms",
            "max ms",
            "window peak ms",
            "guaranteed Mbit/s",
            "pre-roll s",
        ];
        let live = self.realtime.is_some();
        if live {
            headings.truncate(9);
            headings.extend(BUFFER_HEADINGS);
        }
        let rows = self
            .streams
            .iter()
            .map(|f| {
                let mut cells = vec![
                    f.name.clone(),
                    f.samples.to_string(),
                    f.errors.to_string(),
                    format!("{:.1}", f.elapsed_s),
                    format!("{:.1}", f.mbit_s),
                    format!("{:.1}", f.lat_ms.mean),
                    format!("{:.1}", f.lat_ms.p50),
                    format!("{:.1}", f.lat_ms.p99),
                    format!("{:.1}", f.lat_ms.max),
                    opt(f.window_peak_ms, 1),
                    opt(f.mbit_guaranteed, 1),
                    opt(f.preroll_s, 2),
                ];
                if live {
                    cells.truncate(9);
                    cells.extend(BufferFigures::cells(f.buffer.as_ref()));
                }
                cells
            })
            .collect();
        Rows {
            headings: headings.iter().map(|s| s.to_string()).collect(),
            rows,
        }
    }

    fn verdict_line(&self) -> String {
        if let Some(l) = &self.realtime {
            return l.summary.line();
        }
        let v = &self.verdict;
        let mut parts = Vec::new();
        if let Some(m) = v.record_mbit_guaranteed {
            let met = if v.meets_target == Some(true) {
                "met"
            } else {
                "NOT met"
            };
            parts.push(format!(
                "records guaranteed {m:.1} Mbit/s with a {} s buffer (target {}: {met})",
                crate::units::trim_float(self.window_s),
                crate::units::trim_float(v.target_mbit)
            ));
        }
        if let Some(p) = v.playback_preroll_s {
            parts.push(format!("playback needs {p:.1} s pre-roll"));
        }
        if parts.is_empty() {
            return "no verdict: no successful I/O".into();
        }
        parts.join("; ")
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn live(&self) -> Option<&RealtimeOutcome> {
        self.realtime.as_ref()
    }
}
