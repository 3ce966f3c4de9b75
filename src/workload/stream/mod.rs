//! The `stream` workload of seed 001: W writers (and R readers) streaming large sequential I/Os
//! in parallel, each to its own file (appending, as `dd` does) or raw region, through the page
//! cache by default, for a duration or a byte count; then a sync phase. Throughput is harvested
//! per interval (seed 001: "at intervals I would killall -USR1 dd"). Verdict: the aggregate's
//! settled throughput by a steady-state rule, when it settled, the total including the final
//! sync, how bursty it was, how fair to the streams, and the fraction of the raw drives'
//! capability. Its parameters ([`params`]), figures ([`figures`]), analysis ([`analysis`]), the
//! check that the devices set the rate ([`busy`]) and part of the report ([`report`]) are
//! submodules.

pub mod analysis;
pub mod busy;
pub mod capacity;
pub mod figures;
pub mod params;
pub mod phases;
pub mod report;

pub use analysis::{analyze, StreamOutcome};
pub use figures::{StreamFigures, Verdict, COLUMNS};

use super::{realtime, AnalysisError, CapacityKind, Outcome, Reference, Seen, Workload};
use crate::engine::realtime::Role;
use crate::engine::{Action, Op, Pattern, Phase, Plan, SampleSet, Step, Stop, StreamPlan};
use crate::params::{ParamError, ParamSpec, Params, Value};
use crate::present::KindReport;
use params::PARAMS;

/// The `stream` workload.
pub struct Stream;

pub use phases::{PHASE, SYNC_PHASE};

/// Alignment O_DIRECT needs of sizes.
const DIRECT_ALIGN: u64 = 4096;

/// Checks parameters that no plan can run with.
fn check(p: &Params) -> Result<(), ParamError> {
    let (w, r, io) = (p.u64("writers"), p.u64("readers"), p.u64("io_size"));
    if w + r == 0 || w + r > 1024 {
        return Err(ParamError::invalid(
            "writers",
            "writers + readers must be between 1 and 1024",
        ));
    }
    if io == 0 || (p.bool("direct") && io % DIRECT_ALIGN != 0) {
        return Err(ParamError::invalid(
            "io_size",
            format!("must be greater than 0, and a multiple of {DIRECT_ALIGN} with direct=true"),
        ));
    }
    let fs = p.u64("file_size");
    if fs != 0 && fs < io {
        return Err(ParamError::invalid(
            "file_size",
            format!("must be 0 (a share of the target) or at least io_size ({io} bytes)"),
        ));
    }
    if p.f64("interval") < 0.01 {
        return Err(ParamError::invalid("interval", "must be at least 10ms"));
    }
    if p.u64("bytes") == 0 && p.f64("duration") < p.f64("interval") {
        return Err(ParamError::invalid(
            "duration",
            "must be at least one interval (or set bytes)",
        ));
    }
    if p.f64("settle_window") < 2.0 * p.f64("interval") {
        return Err(ParamError::invalid(
            "settle_window",
            "must span at least two intervals",
        ));
    }
    if !(0.0..=100.0).contains(&p.f64("settle_tolerance")) || p.f64("raw_mb_s") < 0.0 {
        return Err(ParamError::invalid(
            "settle_tolerance",
            "must be a percentage between 0 and 100 (and raw_mb_s 0 or more)",
        ));
    }
    if p.f64("media_mb_s") < 0.0 {
        return Err(ParamError::invalid("media_mb_s", "must be 0 or more"));
    }
    if realtime::is_realtime(p) && p.u64("bytes") != 0 {
        return Err(ParamError::invalid(
            "bytes",
            "streams in real time run for a duration: set bytes=0",
        ));
    }
    realtime::check(p, io)
}

/// Streams in layout order: writers (record streams in real time), then readers (playback).
fn streams(p: &Params) -> Result<Vec<StreamPlan>, ParamError> {
    let io = p.u64("io_size");
    let zeros = p.text("data") == "zero";
    let each = |i: usize, name: String, role: &str, op: Op, pattern, rt| {
        Ok(StreamPlan {
            name,
            role: role.to_string(),
            op,
            region_len: p.u64("file_size"),
            io_size: io,
            pattern,
            pacing: realtime::pacing_of(p, rt, io, i)?,
            samples: 0,
            io: crate::engine::StreamIo {
                seal: crate::engine::Seal::for_io(io).filter(|_| !zeros || op == Op::Read),
                zeros: zeros && op == Op::Write,
                ..Default::default()
            },
            source: None,
        })
    };
    let w = p.u64("writers") as usize;
    let writers = (0..w).map(|i| {
        let name = format!("writer{i}");
        each(i, name, "writer", Op::Write, Pattern::Append, Role::Record)
    });
    let readers = (0..p.u64("readers") as usize).map(|i| {
        let name = format!("reader{i}");
        each(
            w + i,
            name,
            "reader",
            Op::Read,
            Pattern::Sequential,
            Role::Playback,
        )
    });
    writers.chain(readers).collect()
}

/// The most bytes the writers write, when they stop at a byte count and nothing is read (a
/// reader's file is filled first, its size the stack's to choose): each writer's bytes and
/// one I/O more (a stream stops after whole I/Os). `None` for a duration.
fn stores_at_most(p: &Params) -> Option<u64> {
    let bytes = p.u64("bytes");
    (bytes > 0 && p.u64("readers") == 0).then(|| {
        p.u64("writers")
            .saturating_mul(bytes.saturating_add(p.u64("io_size")))
    })
}

impl Workload for Stream {
    fn name(&self) -> &'static str {
        "stream"
    }

    fn about(&self) -> &'static str {
        "streaming: writers (and readers) move large sequential I/Os in parallel for a time, harvested per interval; settled MB/s (seed 001)"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn plan(&self, p: &Params) -> Result<Plan, ParamError> {
        check(p)?;
        let streams = streams(p)?;
        let stop = match p.u64("bytes") {
            0 => Stop::Duration(p.f64("duration")),
            b => Stop::Bytes(b),
        };
        let mut phases = vec![Phase {
            name: PHASE.into(),
            step: Step::Streams {
                streams: (0..streams.len()).collect(),
                stop,
            },
        }];
        if p.bool("end_sync") {
            phases.push(Phase {
                name: SYNC_PHASE.into(),
                step: Step::Action(Action::Sync),
            });
        }
        let dirty = p.u64("dirty_limit");
        Ok(Plan {
            streams,
            phases,
            direct: p.bool("direct"),
            seed: p.u64("seed"),
            dirty_limit: (dirty > 0).then_some(dirty),
            checker_args: Vec::new(),
            stores_at_most: stores_at_most(p),
        })
    }

    fn analyze(
        &self,
        p: &Params,
        samples: &SampleSet,
        seen: &Seen,
    ) -> Result<Box<dyn Outcome>, AnalysisError> {
        let plan = self
            .plan(p)
            .map_err(|e| AnalysisError::Other(format!("params: {e}")))?;
        let live = match samples.phase_index(PHASE) {
            Some(i) => realtime::analysis::analyze(&plan, samples, i, p.f64("interval"))?,
            None => None,
        };
        Ok(Box::new(analyze(p, samples, seen, live)?))
    }

    fn interval(&self, p: &Params) -> f64 {
        p.f64("interval")
    }

    fn refer(&self, p: &Params, reference: &Reference) -> Option<Params> {
        if p.f64("raw_mb_s") > 0.0 || reference.kind != self.name() {
            return None;
        }
        let v = serde_json::from_value::<Verdict>(reference.verdict.clone()).ok()?;
        let level = v.sustained()?;
        // The raw stack's total over its share, or its best drive times this stack's data
        // drives: eight writers on six drives leave two drives shared by two writers, which
        // seek between them, so a drive with one writer streams more than a sixth of the total.
        let drive = reference
            .best_device_mb_s(PHASE, v.settle_s.unwrap_or(0.0))
            .unwrap_or(0.0);
        let raw = (level * reference.share).max(drive * reference.data_devices);
        let mut p = p.clone();
        p.set("raw_mb_s", Value::Float(raw));
        if let (Some(m), true) = (reference.media_mb_s, p.f64("media_mb_s") == 0.0) {
            p.set("media_mb_s", Value::Float(m));
        }
        Some(p)
    }

    fn report(&self) -> &'static dyn KindReport {
        &report::StreamReport
    }

    fn capacity(&self) -> Option<&'static dyn CapacityKind> {
        Some(&capacity::CAPACITY)
    }
}

#[cfg(test)]
mod tests;
