//! The plan of a job trial: each job's `numjobs` clones become generated streams
//! ([`super::gen`]), one after the other in job order. The jobs between two `stonewall`s run
//! together in a phase of their own that ends when every clone has ended by itself (after a
//! ramp phase when they ramp up), one such phase after the other; a job with `wait_for` starts
//! once the job it names has ended. fio's reporting groups ([`run_groups`]) start at each
//! `stonewall` and `new_group`. The plan's `prepare` phase lays every file out first. Jobs
//! naming the same `filename` share its place. A job iotrial cannot run as asked is refused
//! naming the option and why.

use super::gen::place::{self, FilePlan};
use super::gen::{self, JobGen};
use super::spec::{Amount, Engine, JobSpec, RwKind, ZoneMode};
use super::{PHASE, RAMP_PHASE};
use crate::engine::{
    BackendKind, Op, Pacing, Pattern, Phase, Plan, Source, Step, Stop, StreamIo, StreamPlan,
};
use crate::params::ParamError;
use std::collections::BTreeMap;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// The smallest block O_DIRECT can move (a 512-byte sector).
const SECTOR: u64 = 512;

/// Checks that one job can run as asked.
pub fn check(j: &JobSpec) -> Result<(), ParamError> {
    let bad = |k: &str, m: String| Err(ParamError::invalid(k, format!("job {}: {m}", j.name)));
    // A trim moves no data through a buffer: only the reads and writes it does are bounded.
    for d in moved(j) {
        if d.max() > (64 << 20) {
            return bad(
                "bs",
                format!("{} bytes per I/O is more than iotrial's 64 MiB", d.max()),
            );
        }
        if j.direct && d.min() % SECTOR != 0 {
            return bad(
                "bs",
                format!(
                    "{} bytes is not a multiple of {SECTOR} bytes, which direct=1 needs",
                    d.min()
                ),
            );
        }
    }
    if let (Amount::Bytes(s), None) = (j.size, j.filesize) {
        let bs = j.bs.read.min().min(j.bs.write.min());
        if s < bs && !j.fill_device && j.replay.logs.is_empty() {
            return bad("size", format!("must be at least bs ({bs} bytes)"));
        }
    }
    if !(1..=1024).contains(&j.numjobs) {
        return bad("numjobs", "must be between 1 and 1024".into());
    }
    if !(1..=4096).contains(&j.iodepth) {
        return bad("iodepth", "must be between 1 and 4096".into());
    }
    if j.hipri && j.ioengine == Engine::IoUring {
        return bad(
            "hipri",
            "io_uring's polled I/O needs a device with poll queues, which the stack's loop and FUSE devices have not; pvsync2 takes hipri".into(),
        );
    }
    if j.zones.mode != ZoneMode::None && j.zones.size == 0 {
        return bad(
            "zonesize",
            "zonemode needs zonesize (iotrial's targets are not zoned devices to read it from)"
                .into(),
        );
    }
    if j.prio.per_io() && !matches!(j.ioengine, Engine::Libaio | Engine::IoUring) {
        return bad(
            "cmdprio_percentage",
            format!(
                "a priority per I/O needs ioengine=libaio or io_uring, which carry one; {} does not",
                j.ioengine.name()
            ),
        );
    }
    if j.verify_only && j.verify.is_none() {
        return bad(
            "verify_only",
            "verify_only checks what an earlier run wrote with verify=; give the job its verify= too".into(),
        );
    }
    if j.verify_only && j.time_based {
        return bad(
            "verify_only",
            "verify_only reads the job's region once; it does not take time_based (fio refuses it too)".into(),
        );
    }
    if j.time_based && j.runtime <= 0.0 {
        return bad(
            "runtime",
            "time_based needs a runtime greater than 0".into(),
        );
    }
    Ok(())
}

/// The slot buffers' size: the largest read or write the job issues.
fn largest(j: &JobSpec) -> u64 {
    moved(j).map(|d| d.max()).max().unwrap_or(4096)
}

/// The block sizes of the directions a job moves data in (its trims move none, but a
/// trimwrite job writes each block it trimmed, as long as the trim).
fn moved(j: &JobSpec) -> impl Iterator<Item = &super::spec::BlockSizes> {
    [
        (j.rw.reads(), &j.bs.read),
        (j.rw.writes(), &j.bs.write),
        (j.rw.kind == RwKind::TrimWrite, &j.bs.trim),
    ]
    .into_iter()
    .filter(|(does, _)| *does)
    .map(|(_, d)| d)
}

/// What a job's streams do, for the stack and the report.
fn op_of(j: &JobSpec) -> Op {
    match j.rw.kind {
        RwKind::Read => Op::Read,
        RwKind::Mixed if j.rwmixread > 0 => Op::Read,
        RwKind::Trim => Op::Trim,
        _ => Op::Write,
    }
}

/// Files shared by name: the stream that lays them out, their size, whether any job reads them.
#[derive(Default)]
struct Shared {
    owner: usize,
    size: u64,
    fill: bool,
    /// Clones naming them.
    users: usize,
    /// The first clone that writes them: the one whose scan reads them after a power cut.
    scanner: Option<usize>,
}

/// The jobs of each stonewall segment, in order: a `stonewall` job (but the first) starts one.
pub fn segments(jobs: &[JobSpec]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        if out.is_empty() || j.stonewall {
            out.push(Vec::new());
        }
        out.last_mut().expect("a segment").push(i);
    }
    out
}

/// fio's reporting group of each job: a new one at each `stonewall` or `new_group` that has
/// jobs before it in the group.
pub fn run_groups(jobs: &[JobSpec]) -> Vec<usize> {
    let (mut id, mut members) = (0, 0);
    jobs.iter()
        .map(|j| {
            if (j.stonewall || j.new_group) && members > 0 {
                id += 1;
                members = 0;
            }
            members += 1;
            id
        })
        .collect()
}

/// The names of segment `k`'s phases (of `n`): its ramp phase and its run phase.
pub fn phase_names(k: usize, n: usize) -> (String, String) {
    if n == 1 {
        (RAMP_PHASE.into(), PHASE.into())
    } else {
        (
            format!("{RAMP_PHASE}{}", k + 1),
            format!("{PHASE}{}", k + 1),
        )
    }
}

/// The job each job waits for (`wait_for`), by index; an error when it names no job before it.
fn waits(jobs: &[JobSpec]) -> Result<Vec<Option<usize>>, ParamError> {
    jobs.iter()
        .enumerate()
        .map(|(i, j)| match &j.wait_for {
            None => Ok(None),
            Some(name) => jobs[..i]
                .iter()
                .position(|o| &o.name == name)
                .map(Some)
                .ok_or_else(|| {
                    ParamError::invalid(
                        "wait_for",
                        format!("job {}: wait_for={name} names no job before it", j.name),
                    )
                }),
        })
        .collect()
}

/// The plan of `jobs`.
pub fn plan(jobs: &[JobSpec]) -> Result<Plan, ParamError> {
    for j in jobs {
        check(j)?;
    }
    let clones: u64 = jobs.iter().map(|j| j.numjobs).sum();
    if clones > 1024 {
        return Err(ParamError::invalid("numjobs", "more than 1024 jobs in all"));
    }
    let first = &jobs[0];
    let segs = segments(jobs);
    for seg in &segs {
        let lead = &jobs[seg[0]];
        if let Some(&i) = seg.iter().find(|&&i| jobs[i].ramp_time != lead.ramp_time) {
            return Err(ParamError::invalid(
                "ramp_time",
                format!(
                    "job {} ramps up for another time than job {}; jobs between two stonewalls run together, so they must agree",
                    jobs[i].name, lead.name
                ),
            ));
        }
    }
    let waits = waits(jobs)?;
    let running: Vec<Arc<AtomicUsize>> = jobs
        .iter()
        .map(|j| Arc::new(AtomicUsize::new(j.numjobs as usize)))
        .collect();
    let seg_of: Vec<usize> = (0..jobs.len())
        .map(|i| {
            segs.iter()
                .position(|s| s.contains(&i))
                .expect("in a segment")
        })
        .collect();
    let group_of = run_groups(jobs);
    let zones = Arc::new(gen::zones::Registry::default());
    let exits = Arc::new(gen::Exits::new(
        group_of.last().map_or(1, |g| g + 1),
        segs.len(),
    ));
    // fio's token flows, by segment and flow_id: the sum of their jobs' weights.
    let mut weights: BTreeMap<(usize, u64), u64> = BTreeMap::new();
    for (i, j) in jobs.iter().enumerate().filter(|(_, j)| j.flow > 0) {
        *weights.entry((seg_of[i], j.flow_id)).or_default() += j.flow * j.numjobs;
    }
    let flows: BTreeMap<(usize, u64), Arc<gen::Flow>> = weights
        .into_iter()
        .map(|(key, w)| (key, Arc::new(gen::Flow::new(w))))
        .collect();
    // Files named by `filename` are shared: the first clone naming them lays them out, as
    // big as the furthest any clone reaches.
    let mut shared: BTreeMap<Vec<String>, Shared> = BTreeMap::new();
    let mut index = 0;
    for j in jobs {
        for k in 0..j.numjobs {
            if j.filename.is_some() || !j.replay.logs.is_empty() {
                let e = shared.entry(place::names(j, k)).or_insert(Shared {
                    owner: index,
                    ..Shared::default()
                });
                e.size = e.size.max(place::extent(j, k, 0, j.zones.size));
                e.fill |= j.rw.reads() || j.overwrite;
                e.users += 1;
                if j.rw.writes() && e.scanner.is_none() {
                    e.scanner = Some(index);
                }
            }
            index += 1;
        }
    }
    let mut streams = Vec::new();
    let mut first_stream = Vec::with_capacity(jobs.len());
    for (ji, j) in jobs.iter().enumerate() {
        let spec = Arc::new(j.clone());
        let role = role_of(jobs, ji);
        first_stream.push(streams.len());
        let (ramp_name, _) = phase_names(seg_of[ji], segs.len());
        let ramp = (j.ramp_time > 0.0).then_some(ramp_name);
        // A job waiting for one in an earlier segment starts with its own segment anyway.
        let waits_for = waits[ji]
            .filter(|&w| seg_of[w] == seg_of[ji])
            .map(|w| running[w].clone());
        for k in 0..j.numjobs {
            let i = streams.len();
            let names = place::names(j, k);
            let (users, scans) = shared
                .get(&names)
                .map_or((1, true), |s| (s.users, s.scanner == Some(i)));
            let (owner, files) = match shared.get(&names) {
                Some(s) => (
                    (s.owner != i).then_some(s.owner),
                    FilePlan {
                        owner: s.owner == i,
                        sizes: vec![s.size; names.len()],
                        names,
                        fill: s.fill,
                    },
                ),
                None => (
                    None,
                    FilePlan {
                        owner: true,
                        sizes: Vec::new(),
                        names,
                        fill: j.rw.reads() || j.overwrite,
                    },
                ),
            };
            let region = match owner {
                // The null engine moves no data and needs no room.
                _ if j.ioengine == Engine::Null => 0,
                Some(_) => 0,
                // A file engine's files: `filesize` bytes each, if any.
                None if j.ioengine.on_files() => j.nrfiles * j.filesize.map_or(0, |f| f.1),
                None => {
                    files
                        .sizes
                        .first()
                        .copied()
                        .unwrap_or(place::extent(j, k, 0, j.zones.size))
                }
            };
            let clone = Arc::new(gen::Clone {
                job: spec.clone(),
                clone: k,
                files,
                ramp_phase: ramp.clone(),
                waits_for: waits_for.clone(),
                running: running[ji].clone(),
                flow: (j.flow > 0).then(|| flows[&(seg_of[ji], j.flow_id)].clone()),
                zones: zones.clone(),
                exits: exits.clone(),
                group: group_of[ji],
                segment: seg_of[ji],
            });
            let describe = format!(
                "fio job {} #{k}: rw={}, {}",
                j.name,
                j.rw.word(),
                j.ioengine.name()
            );
            let source = if j.ioengine.on_files() {
                let (job, plan) = (spec.clone(), clone.files.clone());
                Source::new(describe, move |ctx| {
                    Ok(Box::new(gen::fileops::FileOps::new(
                        job.clone(),
                        k,
                        &plan,
                        ctx,
                    )?))
                })
            } else {
                let (job, files) = (spec.clone(), clone.files.clone());
                let source = Source::block(describe, move |ctx| {
                    Ok(Box::new(JobGen::new(clone.clone(), ctx)?))
                });
                match j.cut {
                    true => source.writing(move |placement| {
                        super::cut::written(&job, k, &files, (scans, users > 1), placement)
                    }),
                    false => source,
                }
            };
            streams.push(StreamPlan {
                name: format!("{role}.{k}"),
                role: role.clone(),
                op: op_of(j),
                region_len: region,
                io_size: largest(j),
                pattern: if j.rw.random {
                    Pattern::Random
                } else {
                    Pattern::Sequential
                },
                pacing: Pacing::Max,
                samples: 0,
                source: Some(source),
                io: StreamIo {
                    depth: if j.ioengine.is_async() {
                        j.iodepth as u32
                    } else {
                        1
                    },
                    backend: Some(backend(j)),
                    share: owner,
                    ..StreamIo::default()
                },
            });
        }
    }
    first_stream.push(streams.len());
    let mut phases = Vec::new();
    for (k, seg) in segs.iter().enumerate() {
        let members: Vec<usize> = seg
            .iter()
            .flat_map(|&ji| first_stream[ji]..first_stream[ji + 1])
            .collect();
        let (ramp, run) = phase_names(k, segs.len());
        let ramp_time = jobs[seg[0]].ramp_time;
        if ramp_time > 0.0 {
            phases.push(Phase {
                name: ramp,
                step: Step::Streams {
                    streams: members.clone(),
                    stop: Stop::Duration(ramp_time),
                },
            });
        }
        phases.push(Phase {
            name: run,
            step: Step::Streams {
                streams: members,
                stop: Stop::OpsEnd,
            },
        });
    }
    let direct = jobs.iter().any(|j| j.direct);
    Ok(Plan::new(streams, phases, direct, first.randseed))
}

/// Job `i`'s name in the trial: its fio name, or `NAME#N` for the Nth job of a name an earlier
/// job has (fio lets jobs share a name; streams need their own).
pub fn role_of(jobs: &[JobSpec], i: usize) -> String {
    let name = &jobs[i].name;
    let n = jobs[..i].iter().filter(|j| &j.name == name).count();
    if n == 0 {
        name.clone()
    } else {
        format!("{name}#{}", n + 1)
    }
}

/// What iotrial says of a job beyond its options (after all of them are read).
pub fn notes(j: &JobSpec) -> Vec<String> {
    let mut out = Vec::new();
    if j.iodepth > 1 && !j.ioengine.is_async() {
        out.push(format!(
            "iodepth={}: {} does one I/O at a time, so the job has one in flight (as fio's synchronous engines)",
            j.iodepth,
            j.ioengine.name()
        ));
    }
    out
}

/// The engine's backend for a job's `ioengine`.
fn backend(j: &JobSpec) -> BackendKind {
    match j.ioengine {
        Engine::IoUring => BackendKind::IoUring,
        Engine::Libaio => BackendKind::Libaio,
        Engine::Sync => BackendKind::Sync,
        Engine::Vsync => BackendKind::Vsync,
        Engine::Pvsync => BackendKind::Pvsync,
        Engine::Pvsync2 => BackendKind::Pvsync2(j.hipri),
        Engine::Posixaio => BackendKind::Posixaio,
        Engine::Mmap => BackendKind::Mmap,
        Engine::Null => BackendKind::Null,
        Engine::Falloc => BackendKind::Falloc,
        Engine::Ftruncate => BackendKind::Ftruncate,
        _ => BackendKind::Psync,
    }
}
