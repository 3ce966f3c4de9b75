//! The `tree` workload of seed 002: T threads create D directories in a tree of depth L (each
//! thread its share, as a tree of its own, once the device has finished what mkfs left it
//! doing), the tree is synced, the caches dropped and the
//! device left to finish its background work (SMR cleaning, timed); then the tree is removed
//! as `rm -rf` does (list each directory, remove what it holds, then the directory), synced,
//! and the device's cleaning timed again; optionally a file-server mix runs for a time, with
//! its own cleaning. Every mkdir, rmdir, readdir, create, write, read, stat and unlink is a
//! timed sample. Verdict: create and remove times and rates, cleaning times, the file
//! server's ops/s, bytes by class (metadata, journal, data) per phase, and on an emulated SMR
//! disk the model's own figures. Its parameters ([`params`]), tree shape ([`shape`]),
//! operation sources ([`sources`]), figures ([`figures`]), analysis ([`analysis`]) and part of
//! the report ([`report`]) are submodules.

pub mod analysis;
pub mod figures;
pub mod params;
pub mod phases;
pub mod preflight;
pub mod report;
pub mod shape;
pub mod sources;

pub use analysis::{analyze, TreeOutcome};
pub use figures::{Verdict, COLUMNS};

use super::{AnalysisError, Outcome, Seen, Workload};
use crate::engine::{
    Action, IdleLimits, Op, Pacing, Pattern, Phase, Plan, SampleSet, Step, Stop, StreamPlan,
};
use crate::params::{ParamError, ParamSpec, Params};
use crate::present::KindReport;
use params::PARAMS;
pub use shape::share;
use shape::Shape;

/// The `tree` workload.
pub struct Tree;

pub use phases::{
    CREATE, DROP_CACHES, FILESERVER, IDLE_CREATE, IDLE_FILESERVER, IDLE_MKFS, IDLE_REMOVE, REMOVE,
    SYNC_CREATE, SYNC_FILESERVER, SYNC_REMOVE,
};

/// Checks parameters that no plan can run with.
fn check(p: &Params) -> Result<(), ParamError> {
    let (threads, depth) = (p.u64("threads"), p.u64("depth"));
    if threads == 0 || threads > 1024 || p.u64("remove_threads") == 0 {
        return Err(ParamError::invalid(
            "threads",
            "threads must be between 1 and 1024, and remove_threads at least 1",
        ));
    }
    if p.u64("remove_threads") > threads {
        return Err(ParamError::invalid(
            "remove_threads",
            format!(
                "at most threads ({threads}): each removes the trees of whole creating threads"
            ),
        ));
    }
    if depth == 0 || depth > 64 || p.u64("dirs") < depth * threads {
        return Err(ParamError::invalid(
            "dirs",
            format!("depth must be between 1 and 64, and dirs at least depth x threads ({depth} x {threads}), so each thread's tree reaches its depth"),
        ));
    }
    let fs = p.f64("fileserver_duration");
    if fs < 0.0 || (fs > 0.0 && p.u64("fileserver_files") < threads) {
        return Err(ParamError::invalid(
            "fileserver_files",
            format!("with a file-server phase, at least one file per thread ({threads})"),
        ));
    }
    if p.f64("idle_max") <= 0.0 || p.f64("idle_quiet") <= 0.0 {
        return Err(ParamError::invalid(
            "idle_max",
            "idle_max and idle_quiet must be greater than 0",
        ));
    }
    Ok(())
}

/// A stream whose operations its source generates.
fn stream(
    name: String,
    role: &str,
    op: Op,
    io_size: u64,
    source: crate::engine::Source,
) -> StreamPlan {
    StreamPlan {
        name,
        role: role.to_string(),
        op,
        region_len: 0,
        io_size,
        pattern: Pattern::Sequential,
        pacing: Pacing::Max,
        samples: 0,
        io: Default::default(),
        source: Some(source),
    }
}

/// The creating streams, the removing streams, then the file server's.
fn streams(p: &Params) -> Vec<StreamPlan> {
    let threads = p.u64("threads");
    let creators: Vec<String> = (0..threads).map(|t| format!("create{t}")).collect();
    let mut out: Vec<StreamPlan> = creators
        .iter()
        .enumerate()
        .map(|(t, name)| {
            let shape = Shape::new(share(p, t as u64), p.u64("depth")).expect("checked");
            let files = (p.u64("files_per_dir"), p.u64("file_size"));
            stream(
                name.clone(),
                "create",
                Op::Mkdir,
                0,
                sources::create(shape, files),
            )
        })
        .collect();
    let removers = p.u64("remove_threads");
    out.extend((0..removers).map(|k| {
        let mine: Vec<String> = creators
            .iter()
            .enumerate()
            .filter(|(t, _)| *t as u64 % removers == k)
            .map(|(_, n)| n.clone())
            .collect();
        stream(
            format!("remove{k}"),
            "remove",
            Op::Rmdir,
            0,
            sources::remove(mine),
        )
    }));
    if p.f64("fileserver_duration") > 0.0 {
        let files = p.u64("fileserver_files");
        out.extend((0..threads).map(|t| {
            let mine = files / threads + u64::from(t < files % threads);
            let fs = sources::fileserver(mine, p.u64("seed") ^ t);
            stream(
                format!("fileserver{t}"),
                "fileserver",
                Op::Create,
                sources::MEAN_FILE,
                fs,
            )
        }));
    }
    out
}

fn action(name: &str, a: Action) -> Phase {
    Phase {
        name: name.into(),
        step: Step::Action(a),
    }
}

fn run(name: &str, streams: std::ops::Range<usize>, stop: Stop) -> Phase {
    Phase {
        name: name.into(),
        step: Step::Streams {
            streams: streams.collect(),
            stop,
        },
    }
}

/// The phases: idle (unless `settle` is false), create, sync, drop caches (with root), idle;
/// remove, sync, idle; optionally the file server, sync, idle.
fn phases(p: &Params) -> Vec<Phase> {
    let (t, r) = (p.u64("threads") as usize, p.u64("remove_threads") as usize);
    let idle = Action::Idle(IdleLimits {
        max_ms: (p.f64("idle_max") * 1000.0).round() as u64,
        quiet_ms: (p.f64("idle_quiet") * 1000.0).round().max(1.0) as u64,
    });
    let mut out = Vec::new();
    // A drive-managed SMR disk is still cleaning what mkfs wrote when the filesystem is
    // mounted; a creation started then has its reads wait behind that cleaning.
    if p.bool("settle") {
        out.push(action(IDLE_MKFS, idle));
    }
    out.extend([
        run(CREATE, 0..t, Stop::OpsEnd),
        action(SYNC_CREATE, Action::Sync),
    ]);
    // Dropping the caches needs root; without it the run still measures (and says so).
    if rustix::process::geteuid().is_root() {
        out.push(action(DROP_CACHES, Action::DropCaches));
    }
    out.extend([
        action(IDLE_CREATE, idle),
        run(REMOVE, t..t + r, Stop::OpsEnd),
        action(SYNC_REMOVE, Action::Sync),
        action(IDLE_REMOVE, idle),
    ]);
    let fs = p.f64("fileserver_duration");
    if fs > 0.0 {
        out.extend([
            run(FILESERVER, t + r..t + r + t, Stop::Duration(fs)),
            action(SYNC_FILESERVER, Action::Sync),
            action(IDLE_FILESERVER, idle),
        ]);
    }
    out
}

impl Workload for Tree {
    fn name(&self) -> &'static str {
        "tree"
    }

    fn about(&self) -> &'static str {
        "metadata: threads create a directory tree, rm -rf it, optional file-server mix; times, SMR cleaning, I/O by class (seed 002)"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn plan(&self, p: &Params) -> Result<Plan, ParamError> {
        check(p)?;
        Ok(Plan::new(streams(p), phases(p), false, p.u64("seed")))
    }

    fn analyze(
        &self,
        p: &Params,
        samples: &SampleSet,
        seen: &Seen,
    ) -> Result<Box<dyn Outcome>, AnalysisError> {
        Ok(Box::new(analyze(p, samples, seen)?))
    }

    fn preflight(&self, p: &Params, dir: &std::path::Path) -> Result<(), ParamError> {
        preflight::check(p, dir)
    }

    fn report(&self) -> &'static dyn KindReport {
        &report::TreeReport
    }
}

#[cfg(test)]
mod tests;
