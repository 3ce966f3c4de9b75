//! stream's analysis: each stream's bytes per harvest interval of the streaming phase (full
//! intervals from the moment the streams started), the aggregate, when it settled by the
//! steady-state rule ([`crate::analysis::steady`]), and the verdict; and how they read on the
//! terminal.

use super::figures::{ranked, StreamFigures, Verdict, AT_RAW, WITHIN_MODEL};
use super::{PHASE, SYNC_PHASE};
use crate::analysis::{fairness, stats, steady};
use crate::engine::{PhaseRecord, SampleSet};
use crate::params::Params;
use crate::present::{num, Rows};
use crate::workload::realtime::{BufferFigures, RealtimeOutcome, RealtimeVerdict, BUFFER_HEADINGS};
use crate::workload::{AnalysisError, Outcome, Seen};
use serde_json::Value as Json;

/// Everything stream's analysis found.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamOutcome {
    pub interval_s: f64,
    pub streams: Vec<StreamFigures>,
    pub verdict: Verdict,
    pub warnings: Vec<String>,
    /// `pacing = realtime`: the streams' buffers.
    pub realtime: Option<RealtimeOutcome>,
}

/// One stream's part of the streaming phase.
#[derive(Debug, Default)]
struct Harvest {
    /// Bytes completed in each interval since the phase's sampling start.
    per_interval: Vec<u64>,
    ios: u64,
    errors: u64,
    bytes: u64,
    lat_ms: Vec<f64>,
    wrapped: bool,
    last_done_ns: u64,
}

fn harvest(
    set: &SampleSet,
    stream: usize,
    phase: usize,
    zero: u64,
    width: f64,
) -> std::io::Result<Harvest> {
    let mut h = Harvest::default();
    let mut last_offset = None;
    set.each(stream, &mut |s| {
        if s.phase as usize != phase {
            return;
        }
        let k = (s.done_ns().saturating_sub(zero) as f64 / width) as usize;
        if h.per_interval.len() <= k {
            h.per_interval.resize(k + 1, 0);
        }
        h.per_interval[k] += s.bytes;
        h.ios += 1;
        h.bytes += s.bytes;
        if s.errno == 0 {
            h.lat_ms.push(s.latency_ns as f64 / 1e6);
        } else {
            h.errors += 1;
        }
        h.wrapped |= last_offset.is_some_and(|o| s.offset < o);
        last_offset = Some(s.offset);
        h.last_done_ns = h.last_done_ns.max(s.done_ns());
    })?;
    Ok(h)
}

/// Mean MB/s of `bytes` per interval of `interval_s` over `span`.
fn mean_mb_s(bytes: &[u64], span: std::ops::Range<usize>, interval_s: f64) -> f64 {
    let n = span.len().max(1) as f64;
    let total: u64 = span.map(|k| bytes.get(k).copied().unwrap_or(0)).sum();
    total as f64 / 1e6 / interval_s / n
}

/// The streaming phase, and the sync phase after it when there is one.
fn phases(set: &SampleSet) -> Result<(usize, Option<&PhaseRecord>), AnalysisError> {
    let p = set
        .phase_index(PHASE)
        .ok_or_else(|| AnalysisError::MissingPhase(PHASE.into()))?;
    let sync = set.phases[p + 1..].iter().find(|q| q.name == SYNC_PHASE);
    Ok((p, sync))
}

/// The streaming phase harvested: every stream's intervals and the aggregate's full ones.
struct Harvested {
    streams: Vec<Harvest>,
    /// The phase's sampling start, ns since the origin.
    zero: u64,
    /// The last completion of any stream, ns since the origin.
    last_done: u64,
    /// Aggregate MB/s of each full interval.
    aggregate: Vec<f64>,
}

fn harvest_all(set: &SampleSet, phase: usize, interval: f64) -> std::io::Result<Harvested> {
    let zero = set.phases[phase].zero_ns();
    let width = interval * 1e9;
    let streams: Vec<Harvest> = (0..set.streams.len())
        .map(|i| harvest(set, i, phase, zero, width))
        .collect::<Result<_, _>>()?;
    let last_done = streams.iter().map(|h| h.last_done_ns).max().unwrap_or(zero);
    let full = (last_done.saturating_sub(zero) as f64 / width) as usize;
    let aggregate = (0..full)
        .map(|k| {
            let bytes: u64 = streams.iter().filter_map(|h| h.per_interval.get(k)).sum();
            bytes as f64 / 1e6 / interval
        })
        .collect();
    Ok(Harvested {
        streams,
        zero,
        last_done,
        aggregate,
    })
}

/// Each stream's figures; `settled_span` is the aggregate's intervals after it settled.
fn stream_figures(
    set: &SampleSet,
    h: &Harvested,
    settled_span: Option<std::ops::Range<usize>>,
    interval: f64,
) -> Vec<StreamFigures> {
    set.streams
        .iter()
        .zip(&h.streams)
        .map(|(info, s)| {
            let secs = s.last_done_ns.saturating_sub(h.zero) as f64 / 1e9;
            StreamFigures {
                name: info.name.clone(),
                role: info.role.clone(),
                op: info.op,
                ios: s.ios,
                errors: s.errors,
                bytes: s.bytes,
                mb_s: if secs > 0.0 {
                    s.bytes as f64 / 1e6 / secs
                } else {
                    0.0
                },
                settled_mb_s: settled_span
                    .clone()
                    .map(|span| mean_mb_s(&s.per_interval, span, interval)),
                lat_ms: stats::summarize(&s.lat_ms).unwrap_or_default(),
                wrapped: s.wrapped,
                buffer: None,
            }
        })
        .collect()
}

/// stream's analysis of a trial's samples; `live` is the replay of its real-time streams'
/// buffers, when they ran in real time: its verdict is then theirs, and the throughput
/// figures, which the streams' own pace sets rather than the stack, are left out.
pub fn analyze(
    p: &Params,
    set: &SampleSet,
    seen: &Seen,
    live: Option<RealtimeOutcome>,
) -> Result<StreamOutcome, AnalysisError> {
    let (phase, sync) = phases(set)?;
    let interval = p.f64("interval");
    let h = harvest_all(set, phase, interval)?;
    let full = h.aggregate.len();
    let window = ((p.f64("settle_window") / interval).round() as usize).max(2);
    let settled = steady::settle(&h.aggregate, window, p.f64("settle_tolerance") / 100.0);
    let span = settled.map_or(0, |s| s.from)..full;
    let streams = stream_figures(set, &h, settled.map(|_| span.clone()), interval);
    let per_stream: Vec<f64> = (h.streams.iter())
        .map(|s| mean_mb_s(&s.per_interval, span.clone(), interval))
        .collect();
    let shown = &h.aggregate[span.clone()];
    let mean = stats::mean(shown);
    let mut warnings = Vec::new();
    let total_bytes: u64 = h.streams.iter().map(|s| s.bytes).sum();
    let streaming_s = h.last_done.saturating_sub(h.zero) as f64 / 1e9;
    let (total_mb_s, sync_s) = total(p, sync, h.zero, streaming_s, total_bytes, &mut warnings);
    let raw = p.f64("raw_mb_s");
    let mut verdict = Verdict {
        settled_mb_s: settled.map(|s| s.level),
        settled: settled.is_some(),
        settle_s: settled.map(|s| s.from as f64 * interval),
        mean_mb_s: (full > 0).then(|| stats::mean(&h.aggregate)),
        total_mb_s,
        sync_s,
        burstiness: (shown.len() >= 2 && mean > 0.0).then(|| stats::stddev(shown) / mean),
        stream_fairness_jain: fairness::jain(&per_stream),
        raw_mb_s: (raw > 0.0).then_some(raw),
        raw_fraction: None,
        intervals: full,
        kernel_cpu_pct: seen.kernel_cpu_pct_in(PHASE),
        impossible: None,
        meets_target: None,
        realtime: RealtimeVerdict::default(),
    };
    let mut streams = streams;
    if let Some(l) = &live {
        verdict.meets_target = Some(l.summary.passed);
        verdict.realtime = RealtimeVerdict::of(l.summary.clone());
        verdict.settled_mb_s = None;
        verdict.settle_s = None;
        verdict.burstiness = None;
        verdict.stream_fairness_jain = None;
        verdict.total_mb_s = None;
        for (f, b) in streams.iter_mut().zip(&l.streams) {
            f.buffer = b.clone();
        }
        warnings.extend(l.warnings.iter().cloned());
        for s in &streams {
            if s.errors > 0 {
                warnings.push(format!(
                    "{}: {} of {} operations failed",
                    s.name, s.errors, s.ios
                ));
            }
        }
    } else {
        verdict.raw_fraction = verdict.sustained().filter(|_| raw > 0.0).map(|l| l / raw);
        let media = p.f64("media_mb_s");
        verdict.impossible = impossible(&verdict, shown, (media > 0.0).then_some(media));
        if let Some(why) = &verdict.impossible {
            warnings.push(match ranked(why) {
                true => format!("{why}; the stack is ranked, marked \"above raw\""),
                false => format!("{why}; the stack is not ranked"),
            });
        }
        caveats(p, &verdict, &streams, window, &mut warnings);
        warnings.extend(super::busy::devices_idle(seen));
    }
    Ok(StreamOutcome {
        interval_s: interval,
        streams,
        verdict,
        warnings,
        realtime: live,
    })
}

/// All bytes over the streaming and the final sync, and the sync's seconds.
fn total(
    p: &Params,
    sync: Option<&PhaseRecord>,
    zero: u64,
    streaming_s: f64,
    bytes: u64,
    warnings: &mut Vec<String>,
) -> (Option<f64>, Option<f64>) {
    let per_s = |s: f64| (s > 0.0).then(|| bytes as f64 / 1e6 / s);
    if !p.bool("end_sync") {
        return (per_s(streaming_s), None);
    }
    match sync.and_then(|s| s.end_s.map(|e| (s, e))) {
        Some((s, end)) => (per_s(end - zero as f64 / 1e9), s.duration_s()),
        None => {
            warnings.push("the samples say nothing of the final sync (no result.json with the trial's phases beside them), so total_mb_s is not known".into());
            (None, None)
        }
    }
}

/// Why the verdict cannot be ranked as what the drives did: a sustained figure above the raw
/// capability of the stack's share of the drives (raw_fraction above 1). `shown` is the
/// interval series the figure is the mean of: when the excess is within two standard errors
/// of that mean, the figure is the drives' raw rate, not measurably above it, and the cause
/// says so. `media` is what the stack's drives stream at by their models (emulated drives
/// only): a figure within it is above what the raw trial's drives took, not above what the
/// drives can do, and the cause says the raw trial fell short. Those two leave the stack
/// ranked, marked with the cause ([`ranked`]); a figure above both is never ranked.
fn impossible(v: &Verdict, shown: &[f64], media: Option<f64>) -> Option<String> {
    let (f, raw, level) = (v.raw_fraction?, v.raw_mb_s?, v.sustained()?);
    if f <= 1.0 {
        return None;
    }
    let what = if v.settled_mb_s.is_some() {
        "settled"
    } else {
        "sustained"
    };
    let total = v
        .total_mb_s
        .map(|t| format!(" (with the final sync counted: {} MB/s)", num(t)))
        .unwrap_or_default();
    let n = shown.len() as f64;
    let precision = if n >= 2.0 && level > 0.0 {
        2.0 * stats::stddev(shown) / n.sqrt() / level
    } else {
        0.0
    };
    if f - 1.0 <= precision {
        return Some(format!(
            "{AT_RAW}{what} {} MB/s is {} of the {} MB/s its drives can take raw{total}, within the {}% precision of its own mean (two standard errors over {} intervals): not measurably above the drives",
            num(level),
            num(f),
            num(raw),
            num(precision * 100.0),
            n
        ));
    }
    let beyond = v.total_mb_s.map_or(level, |t| t.max(level));
    match media {
        Some(m) if beyond <= m => Some(format!(
            "{WITHIN_MODEL}{what} {} MB/s is {} of the {} MB/s its drives took in the raw trial{total}, but within the {} MB/s their model streams at: the raw trial's drives took less than their model's rate, so the figure is not above what the drives can do",
            num(level),
            num(f),
            num(raw),
            num(m)
        )),
        Some(m) => Some(format!(
            "{what} {} MB/s is {} of the {} MB/s its drives can take raw{total} and above the {} MB/s their model streams at: above what the drives can physically do, so the page cache, not the drives, absorbed the writers",
            num(level),
            num(f),
            num(raw),
            num(m)
        )),
        None => Some(format!(
            "{what} {} MB/s is {} of the {} MB/s its drives can take raw{total}: above what the drives can physically do, so the page cache, not the drives, absorbed the writers",
            num(level),
            num(f),
            num(raw)
        )),
    }
}

/// Warnings about what the verdict rests on.
fn caveats(p: &Params, v: &Verdict, streams: &[StreamFigures], window: usize, w: &mut Vec<String>) {
    let interval = p.f64("interval");
    if !v.settled {
        w.push(if v.intervals < window {
            format!("only {} full intervals of {} s, fewer than the steady-state window of {window}: the aggregate cannot be judged settled; mean_mb_s is the mean of every full interval", v.intervals, num(interval))
        } else {
            format!("the aggregate never settled (no window of {window} intervals changed by at most {}% of its mean): settled_mb_s is null; mean_mb_s is the mean of every full interval", num(p.f64("settle_tolerance")))
        });
    }
    for s in streams {
        if s.errors > 0 {
            w.push(format!(
                "{}: {} of {} operations failed",
                s.name, s.errors, s.ios
            ));
        }
        if s.wrapped {
            w.push(format!("{}: reached the end of its file or region and started over at its start (raise file_size or give the target more room)", s.name));
        }
    }
}

impl Outcome for StreamOutcome {
    fn streams_json(&self) -> Vec<Json> {
        crate::workload::streams_json(&self.streams)
    }

    fn verdict_json(&self) -> Json {
        crate::workload::verdict_json(&self.verdict)
    }

    fn stream_rows(&self) -> Rows {
        let mut headings = super::figures::ROW_HEADINGS.map(String::from).to_vec();
        let mut rows: Vec<Vec<String>> = self.streams.iter().map(StreamFigures::row).collect();
        if self.realtime.is_some() {
            headings.extend(BUFFER_HEADINGS.map(String::from));
            for (r, s) in rows.iter_mut().zip(&self.streams) {
                r.extend(BufferFigures::cells(s.buffer.as_ref()));
            }
        }
        Rows { headings, rows }
    }

    fn verdict_line(&self) -> String {
        if let Some(l) = &self.realtime {
            return l.summary.line();
        }
        let v = &self.verdict;
        let mut parts = vec![match (v.settled_mb_s, v.settle_s) {
            (Some(m), Some(s)) => format!("settled at {} MB/s after {} s", num(m), num(s)),
            _ => match v.mean_mb_s {
                Some(m) => format!("never settled (mean {} MB/s)", num(m)),
                None => "never settled (no full interval)".to_string(),
            },
        }];
        if let Some(t) = v.total_mb_s {
            parts.push(format!("{} MB/s with the final sync", num(t)));
        }
        if let Some(f) = v.raw_fraction {
            parts.push(format!("{} of raw", num(f)));
        }
        match v.impossible.as_deref() {
            Some(w) if w.starts_with(AT_RAW) => {
                parts.push("AT RAW (not measurably above the drives' raw rate; ranked)".into())
            }
            Some(w) if w.starts_with(WITHIN_MODEL) => {
                parts.push("ABOVE THE RAW TRIAL (within the drives' model rate; ranked)".into())
            }
            Some(_) => {
                parts.push("IMPOSSIBLE (above the drives' raw capability; not ranked)".into())
            }
            None => {}
        }
        if let Some(b) = v.burstiness {
            parts.push(format!("burstiness {}", num(b)));
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
