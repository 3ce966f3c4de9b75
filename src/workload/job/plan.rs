//! The plan of a job trial: each job's `numjobs` clones become streams, one after the other in
//! job order, all run in one phase (after a `ramp` phase when the jobs ramp up). A job iotrial
//! cannot run as asked is refused naming the option and why.

use super::spec::{Amount, BlockSizes, Engine, JobSpec, RwKind};
use super::{PHASE, RAMP_PHASE};
use crate::engine::{
    BackendKind, Op, Pacing, Pattern, Phase, Plan, Step, Stop, StreamIo, StreamPlan,
};
use crate::params::ParamError;

/// Alignment O_DIRECT needs of sizes and offsets.
const DIRECT_ALIGN: u64 = 4096;

fn bytes_of(j: &JobSpec, key: &str, a: Amount) -> Result<u64, ParamError> {
    match a {
        Amount::Bytes(b) => Ok(b),
        _ => Err(ParamError::invalid(
            key,
            format!("job {}: give {key} in bytes (a percentage or zones of the target is not supported)", j.name),
        )),
    }
}

/// The one block size of a job.
fn block_size(j: &JobSpec) -> Result<u64, ParamError> {
    match (&j.bs.read, &j.bs.write) {
        (BlockSizes::Fixed(r), BlockSizes::Fixed(w)) if r == w => Ok(*r),
        _ => Err(ParamError::invalid(
            "bs",
            format!("job {}: one block size for reads and writes", j.name),
        )),
    }
}

/// Checks that one job can run as asked.
pub fn check(j: &JobSpec) -> Result<(), ParamError> {
    let bad = |k: &str, m: String| Err(ParamError::invalid(k, format!("job {}: {m}", j.name)));
    let bs = block_size(j)?;
    if matches!(j.rw.kind, RwKind::Trim | RwKind::TrimWrite) {
        return bad("rw", format!("rw={}: trims are not supported", j.rw.word()));
    }
    if j.rw.modifier != 0 {
        return bad(
            "rw",
            format!("rw={}: an offset modifier is not supported", j.rw.word()),
        );
    }
    let (offset, inc, size) = (
        bytes_of(j, "offset", j.offset)?,
        bytes_of(j, "offset_increment", j.offset_increment)?,
        bytes_of(j, "size", j.size)?,
    );
    if j.direct && bs % DIRECT_ALIGN != 0 {
        return bad(
            "bs",
            format!("{bs} must be a multiple of {DIRECT_ALIGN} with direct=1"),
        );
    }
    if j.direct && (offset | inc) % DIRECT_ALIGN != 0 {
        return bad(
            "offset",
            format!(
                "offset and offset_increment must be multiples of {DIRECT_ALIGN} with direct=1"
            ),
        );
    }
    if size < bs {
        return bad("size", format!("must be at least bs ({bs} bytes)"));
    }
    if !(1..=1024).contains(&j.numjobs) {
        return bad("numjobs", "must be between 1 and 1024".into());
    }
    if !(1..=4096).contains(&j.iodepth) {
        return bad("iodepth", "must be between 1 and 4096".into());
    }
    if j.iodepth > 1 && j.ioengine == Engine::Psync {
        return bad(
            "iodepth",
            format!(
                "{} needs ioengine=io_uring (psync does one I/O at a time)",
                j.iodepth
            ),
        );
    }
    let (r, w) = (&j.rate, &j.rate_iops);
    if r.read != r.write || w.read != w.write {
        return bad("rate", "one rate for reads and writes".into());
    }
    if r.read > 0 && w.read > 0 {
        return bad("rate", "set rate or rate_iops, not both".into());
    }
    if j.time_based && j.runtime <= 0.0 {
        return bad(
            "runtime",
            "time_based needs a runtime greater than 0".into(),
        );
    }
    Ok(())
}

/// The streams of one job: NAME.0, NAME.1, ...
fn streams(j: &JobSpec) -> Vec<StreamPlan> {
    let mix = (j.rw.kind == RwKind::Mixed).then_some(j.rwmixread as u8);
    // A mixed job reads: its file is filled before the run.
    let op = match (mix, j.rw.kind) {
        (Some(0), _) => Op::Write,
        (Some(_), _) => Op::Read,
        (None, RwKind::Read) => Op::Read,
        _ => Op::Write,
    };
    let pattern = if j.rw.random {
        Pattern::Random
    } else {
        Pattern::Sequential
    };
    let bs = j.fixed_bs().expect("checked");
    let pacing = match (j.rate.read, j.rate_iops.read) {
        (0, 0) => Pacing::Max,
        (0, n) => Pacing::Rate(n as f64),
        (b, _) => Pacing::Rate(b as f64 / bs as f64),
    };
    let backend = match j.ioengine {
        Engine::IoUring => BackendKind::IoUring,
        Engine::Psync => BackendKind::Psync,
    };
    let amount = |a: Amount| a.of(0, 0);
    let size = amount(j.size);
    (0..j.numjobs)
        .map(|k| {
            let skip = amount(j.offset) + k * amount(j.offset_increment);
            StreamPlan {
                name: format!("{}.{k}", j.name),
                role: j.name.clone(),
                op,
                region_len: skip + size,
                io_size: bs,
                pattern,
                pacing,
                samples: 0,
                source: None,
                io: StreamIo {
                    depth: j.iodepth as u32,
                    backend: Some(backend),
                    skip,
                    bytes: if j.time_based { 0 } else { size },
                    mix,
                    fsync_every: j.fsync,
                    seal: None,
                },
            }
        })
        .collect()
}

/// The plan of `jobs`.
pub fn plan(jobs: &[JobSpec]) -> Result<Plan, ParamError> {
    let mut streams_all = Vec::new();
    for j in jobs {
        check(j)?;
        streams_all.extend(streams(j));
    }
    if streams_all.len() > 1024 {
        return Err(ParamError::invalid("numjobs", "more than 1024 jobs in all"));
    }
    let first = &jobs[0];
    for j in jobs {
        let differs = [
            ("runtime", j.runtime != first.runtime),
            ("time_based", j.time_based != first.time_based),
            ("ramp_time", j.ramp_time != first.ramp_time),
            ("direct", j.direct != first.direct),
            ("randseed", j.randseed != first.randseed),
        ];
        if let Some((key, _)) = differs.iter().find(|d| d.1) {
            return Err(ParamError::invalid(
                key,
                format!(
                    "job {} has another {key} than job {}; every job runs in one phase, so they must agree",
                    j.name, first.name
                ),
            ));
        }
    }
    let all: Vec<usize> = (0..streams_all.len()).collect();
    let stop = match first.runtime {
        r if r > 0.0 => Stop::Duration(r),
        _ => Stop::OpsEnd,
    };
    let mut phases = Vec::new();
    if first.ramp_time > 0.0 {
        phases.push(Phase {
            name: RAMP_PHASE.into(),
            step: Step::Streams {
                streams: all.clone(),
                stop: Stop::Duration(first.ramp_time),
            },
        });
    }
    phases.push(Phase {
        name: PHASE.into(),
        step: Step::Streams { streams: all, stop },
    });
    Ok(Plan::new(streams_all, phases, first.direct, first.randseed))
}
