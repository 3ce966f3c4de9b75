//! The real-time part of an analysis: every real-time stream of a phase has its buffer
//! replayed over its samples ([`crate::analysis::buffer`]), which gives its figures, its
//! occupancy per interval (timeseries.csv) and the stack's [`Summary`]; the replay is checked
//! against the tally each stream kept live (result.json's `phases[].measured.buffers`).

use super::figures::{BufferFigures, Failure, OverflowAt, StallAt, Summary};
use crate::analysis::buffer::{self, Replay};
use crate::analysis::stats;
use crate::analysis::timeseries::BufferSeries;
use crate::engine::realtime::{Realtime, Role, Tally};
use crate::engine::{Pacing, Plan, SampleSet, Step, Stop};
use crate::workload::AnalysisError;

/// What the real-time streams of a phase came to.
#[derive(Debug, Clone, PartialEq)]
pub struct RealtimeOutcome {
    /// One per stream of the plan: the buffer of a real-time stream, `None` for the others.
    pub streams: Vec<Option<BufferFigures>>,
    pub summary: Summary,
    /// Each real-time stream's occupancy per interval, for timeseries.csv.
    pub series: Vec<BufferSeries>,
    pub warnings: Vec<String>,
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

fn pct(part: u64, of: u64) -> f64 {
    if of == 0 {
        0.0
    } else {
        part as f64 * 100.0 / of as f64
    }
}

/// Each stream's tally as it counted it live, by name.
fn live_tallies(set: &SampleSet, phase: usize) -> Vec<(String, Tally)> {
    let Some(list) = set.phases[phase]
        .measured
        .as_ref()
        .and_then(|m| m["buffers"].as_array())
    else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|b| {
            let mut b = b.as_object()?.clone();
            let name = b.remove("stream")?.as_str()?.to_string();
            let t: Tally = serde_json::from_value(serde_json::Value::Object(b)).ok()?;
            Some((name, t))
        })
        .collect()
}

fn figures(rt: &Realtime, r: &Replay) -> BufferFigures {
    let t = &r.tally;
    let lat: Vec<f64> = r.from_wanted_ns.iter().map(|&n| n as f64 / 1e6).collect();
    let playback = rt.role == Role::Playback;
    BufferFigures {
        role: rt.role.name().to_string(),
        bitrate_mbit: rt.schedule.bytes_per_s * 8.0 / 1e6,
        frames: rt.schedule.sizes.describe(),
        buffer_bytes: rt.buffer,
        preroll_bytes: playback.then_some(rt.preroll),
        app_bytes: t.generated,
        io_bytes: t.moved,
        failed_bytes: t.failed,
        overflow_bytes: t.dropped,
        end_bytes: t.buffered,
        peak_bytes: t.peak,
        peak_pct: pct(t.peak, rt.buffer),
        overflow_events: t.overflow_events,
        overflows: r
            .overflows
            .iter()
            .map(|o| OverflowAt {
                start_s: secs(o.start_ns),
                end_s: secs(o.end_ns),
                bytes: o.bytes,
                frames: o.frames,
            })
            .collect(),
        underruns: t.underruns,
        stall_s: secs(t.stall_ns),
        stalls: r
            .stalls
            .iter()
            .map(|&(a, b)| StallAt {
                start_s: secs(a),
                end_s: secs(b),
            })
            .collect(),
        startup_s: t.started_ns.map(secs),
        low_pct: r.low_while_playing.map(|l| pct(l, rt.buffer)),
        lat_from_wanted_ms: stats::summarize(&lat).unwrap_or_default(),
    }
}

/// The first failure of stream `name`: its first overflow, its first underrun, or, for a
/// playback that never started, the end of the run.
fn failure_of(name: &str, f: &BufferFigures, end_s: f64) -> Option<Failure> {
    if f.overflow_bytes > 0 {
        return Some(Failure {
            stream: name.to_string(),
            at_s: f.overflows.first().map_or(end_s, |o| o.start_s),
            what: format!(
                "overflow: {:.2} MB dropped in {} events",
                f.overflow_bytes as f64 / 1e6,
                f.overflow_events
            ),
        });
    }
    if f.role == Role::Playback.name() && f.startup_s.is_none() {
        return Some(Failure {
            stream: name.to_string(),
            at_s: end_s,
            what: format!(
                "never started: its {:.2} MB pre-roll never came in",
                f.preroll_bytes.unwrap_or(0) as f64 / 1e6
            ),
        });
    }
    (f.underruns > 0).then(|| Failure {
        stream: name.to_string(),
        at_s: f.stalls.first().map_or(end_s, |s| s.start_s),
        what: format!(
            "underrun: playback stalled {:.2} s in {} stalls",
            f.stall_s, f.underruns
        ),
    })
}

/// The stack's summary over every real-time stream.
fn summarize(names: &[String], figs: &[Option<BufferFigures>], end_s: f64) -> Summary {
    let of = |role: Role| {
        figs.iter()
            .zip(names)
            .filter_map(move |(f, n)| f.as_ref().filter(|f| f.role == role.name()).map(|f| (n, f)))
    };
    let any = |role| of(role).next().is_some();
    let (records, playbacks) = (any(Role::Record), any(Role::Playback));
    let fold = |xs: Vec<f64>, max: bool| {
        xs.into_iter()
            .reduce(|a, b| if max { a.max(b) } else { a.min(b) })
    };
    let failures = figs
        .iter()
        .zip(names)
        .filter_map(|(f, n)| failure_of(n, f.as_ref()?, end_s));
    let first_failure = failures.min_by(|a, b| a.at_s.total_cmp(&b.at_s));
    let starts: Vec<Option<f64>> = of(Role::Playback).map(|(_, f)| f.startup_s).collect();
    Summary {
        record_buffer_peak_pct: fold(of(Role::Record).map(|(_, f)| f.peak_pct).collect(), true),
        overflow_mb: records
            .then(|| of(Role::Record).map(|(_, f)| f.overflow_bytes).sum::<u64>() as f64 / 1e6),
        overflow_events: records.then(|| of(Role::Record).map(|(_, f)| f.overflow_events).sum()),
        underruns: playbacks.then(|| of(Role::Playback).map(|(_, f)| f.underruns).sum()),
        stall_s: playbacks.then(|| of(Role::Playback).map(|(_, f)| f.stall_s).sum()),
        playback_startup_s: if starts.iter().all(Option::is_some) {
            fold(starts.into_iter().flatten().collect(), true)
        } else {
            None
        },
        playback_buffer_low_pct: fold(
            of(Role::Playback).filter_map(|(_, f)| f.low_pct).collect(),
            false,
        ),
        passed: first_failure.is_none(),
        first_failure,
    }
}

/// Replays every real-time stream of phase `phase` of `set` (run from `plan`), keeping
/// intervals of `width_s`; `None` when the phase has none.
pub fn analyze(
    plan: &Plan,
    set: &SampleSet,
    phase: usize,
    width_s: f64,
) -> Result<Option<RealtimeOutcome>, AnalysisError> {
    if !plan
        .streams
        .iter()
        .any(|s| matches!(s.pacing, Pacing::Realtime(_)))
    {
        return Ok(None);
    }
    let name = &set.phases[phase].name;
    let end_ns = plan
        .phases
        .iter()
        .find(|p| &p.name == name)
        .and_then(|p| match p.step {
            Step::Streams {
                stop: Stop::Duration(s),
                ..
            } => Some((s * 1e9) as u64),
            _ => None,
        })
        .ok_or_else(|| {
            AnalysisError::Other(format!(
                "phase {name} of the plan does not run for a duration"
            ))
        })?;
    let streams = set.load_phase(phase)?;
    let live = live_tallies(set, phase);
    let width_ns = (width_s * 1e9).max(1.0) as u64;
    let mut warnings = Vec::new();
    let mut figs = Vec::with_capacity(plan.streams.len());
    let mut series = Vec::new();
    for (i, (s, st)) in plan.streams.iter().zip(&streams).enumerate() {
        let Pacing::Realtime(rt) = &s.pacing else {
            figs.push(None);
            continue;
        };
        let seed = crate::engine::stream_seed(plan.seed, i);
        let r = buffer::replay(rt, seed, s.io_size, end_ns, &st.samples, width_ns);
        if r.early > 0 {
            warnings.push(format!(
                "{}: {} I/Os were issued before the application allowed them (the run does not follow its buffer model)",
                s.name, r.early
            ));
        }
        if let Some((_, t)) = live.iter().find(|(n, _)| n == &s.name) {
            if *t != r.tally {
                warnings.push(format!(
                    "{}: the stream's live count of its buffer ({t:?}) differs from its replay over the samples ({:?}); the figures are the replay's",
                    s.name, r.tally
                ));
            }
        }
        series.push(BufferSeries {
            stream: i,
            phase: phase as u16,
            intervals: r.intervals.clone(),
        });
        figs.push(Some(figures(rt, &r)));
    }
    let names: Vec<String> = plan.streams.iter().map(|s| s.name.clone()).collect();
    let summary = summarize(&names, &figs, secs(end_ns));
    Ok(Some(RealtimeOutcome {
        streams: figs,
        summary,
        series,
        warnings,
    }))
}
