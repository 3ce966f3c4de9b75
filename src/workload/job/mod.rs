//! The `job` workload: fio's core vocabulary as iotrial parameters (`rw`, `bs`, `size`,
//! `numjobs`, `iodepth`, `ioengine`, `runtime`, `rate`, ...; [`params`]), each job group a
//! group of streams doing block I/O in a file or raw region of its own, counting every I/O.
//! Verdict: fio's headline figures per job group and in total: IOPS, MB/s and completion
//! latency (mean, p50, p99, p99.9) ([`figures`], [`analysis`], [`report`]).

pub mod analysis;
pub mod figures;
pub mod params;
pub mod report;

pub use analysis::{analyze, JobOutcome};
pub use figures::{GroupFigures, StreamFigures, Verdict, COLUMNS};
pub use params::{groups, Group, PARAMS};

use super::{AnalysisError, Outcome, Seen, Workload};
use crate::engine::{
    BackendKind, Op, Pacing, Pattern, Phase, Plan, SampleSet, Step, Stop, StreamIo, StreamPlan,
};
use crate::params::{ParamError, ParamSpec, Params};
use crate::present::KindReport;

/// The `job` workload.
pub struct Job;

/// The phase whose I/O counts.
pub const PHASE: &str = "run";
/// The phase before it when `ramp_time` is set.
pub const RAMP_PHASE: &str = "ramp";

/// Alignment O_DIRECT needs of sizes and offsets.
const DIRECT_ALIGN: u64 = 4096;

/// Checks one group's parameters.
fn check(g: &Group) -> Result<(), ParamError> {
    let p = &g.params;
    let bs = p.u64("bs");
    let bad = |k: &str, m: String| Err(ParamError::invalid(k, format!("job {}: {m}", g.name)));
    if bs == 0 || (p.bool("direct") && bs % DIRECT_ALIGN != 0) {
        return bad(
            "bs",
            format!(
                "{bs} must be greater than 0, and a multiple of {DIRECT_ALIGN} with direct=true"
            ),
        );
    }
    if p.bool("direct") && (p.u64("offset") | p.u64("offset_increment")) % DIRECT_ALIGN != 0 {
        return bad(
            "offset",
            format!(
                "offset and offset_increment must be multiples of {DIRECT_ALIGN} with direct=true"
            ),
        );
    }
    if p.u64("size") < bs {
        return bad("size", format!("must be at least bs ({bs} bytes)"));
    }
    if !(1..=1024).contains(&p.u64("numjobs")) {
        return bad("numjobs", "must be between 1 and 1024".into());
    }
    let depth = p.u64("iodepth");
    if !(1..=4096).contains(&depth) {
        return bad("iodepth", "must be between 1 and 4096".into());
    }
    if depth > 1 && p.text("ioengine") == "psync" {
        return bad(
            "iodepth",
            format!("{depth} needs ioengine=io_uring (psync does one I/O at a time)"),
        );
    }
    if p.u64("rwmixread") > 100 {
        return bad("rwmixread", "must be a percentage, 0 to 100".into());
    }
    if p.u64("rate") > 0 && p.u64("rate_iops") > 0 {
        return bad("rate", "set rate or rate_iops, not both".into());
    }
    if p.bool("time_based") && p.f64("runtime") <= 0.0 {
        return bad(
            "runtime",
            "time_based needs a runtime greater than 0".into(),
        );
    }
    Ok(())
}

/// The streams of one group: NAME.0, NAME.1, ...
fn group_streams(g: &Group) -> Vec<StreamPlan> {
    let p = &g.params;
    let rw = p.text("rw");
    let mix =
        matches!(rw.as_str(), "rw" | "readwrite" | "randrw").then(|| p.u64("rwmixread") as u8);
    // A mixed job reads: its file is filled before the run.
    let op = match mix {
        Some(0) => Op::Write,
        Some(_) => Op::Read,
        None if rw.ends_with("read") => Op::Read,
        None => Op::Write,
    };
    let pattern = if rw.starts_with("rand") {
        Pattern::Random
    } else {
        Pattern::Sequential
    };
    let bs = p.u64("bs");
    let pacing = match (p.u64("rate"), p.u64("rate_iops")) {
        (0, 0) => Pacing::Max,
        (0, n) => Pacing::Rate(n as f64),
        (b, _) => Pacing::Rate(b as f64 / bs as f64),
    };
    let backend = match p.text("ioengine").as_str() {
        "io_uring" => BackendKind::IoUring,
        _ => BackendKind::Psync,
    };
    let size = p.u64("size");
    (0..p.u64("numjobs"))
        .map(|k| {
            let skip = p.u64("offset") + k * p.u64("offset_increment");
            StreamPlan {
                name: format!("{}.{k}", g.name),
                role: g.name.clone(),
                op,
                region_len: skip + size,
                io_size: bs,
                pattern,
                pacing: pacing.clone(),
                samples: 0,
                source: None,
                io: StreamIo {
                    depth: p.u64("iodepth") as u32,
                    backend: Some(backend),
                    skip,
                    bytes: if p.bool("time_based") { 0 } else { size },
                    mix,
                    fsync_every: p.u64("fsync"),
                    seal: None,
                },
            }
        })
        .collect()
}

impl Workload for Job {
    fn name(&self) -> &'static str {
        "job"
    }

    fn about(&self) -> &'static str {
        "fio's vocabulary: job groups of block I/O (rw, bs, size, numjobs, iodepth, ioengine, runtime, rate, ...), every I/O counted; IOPS, MB/s and clat percentiles per job"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn plan(&self, p: &Params) -> Result<Plan, ParamError> {
        let groups = groups(p)?;
        let mut streams = Vec::new();
        for g in &groups {
            check(g)?;
            streams.extend(group_streams(g));
        }
        if streams.len() > 1024 {
            return Err(ParamError::invalid("numjobs", "more than 1024 jobs in all"));
        }
        let first = &groups[0].params;
        let all: Vec<usize> = (0..streams.len()).collect();
        let stop = match first.f64("runtime") {
            r if r > 0.0 => Stop::Duration(r),
            _ => Stop::OpsEnd,
        };
        let mut phases = Vec::new();
        if first.f64("ramp_time") > 0.0 {
            phases.push(Phase {
                name: RAMP_PHASE.into(),
                step: Step::Streams {
                    streams: all.clone(),
                    stop: Stop::Duration(first.f64("ramp_time")),
                },
            });
        }
        phases.push(Phase {
            name: PHASE.into(),
            step: Step::Streams { streams: all, stop },
        });
        Ok(Plan::new(
            streams,
            phases,
            first.bool("direct"),
            first.u64("randseed"),
        ))
    }

    fn analyze(
        &self,
        p: &Params,
        samples: &SampleSet,
        _: &Seen,
    ) -> Result<Box<dyn Outcome>, AnalysisError> {
        let groups = groups(p).map_err(|e| AnalysisError::Other(e.to_string()))?;
        Ok(Box::new(analyze(&groups, samples)?))
    }

    fn report(&self) -> &'static dyn KindReport {
        &report::JobReport
    }
}

#[cfg(test)]
mod tests;
