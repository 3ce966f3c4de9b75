//! The `fsck` workload of seed 004: fill the filesystem as fs_mark does (N files of size S in D
//! directories one level deep, per thread), sync, unmount, drop caches, run the filesystem's
//! own checker read-only (timed, with its CPU and peak RSS), mount again. Verdict: the fill's
//! files/s and per-op times as fs_mark reports them, the check's time, files/s, memory, CPU
//! share and I/O. Its parameters ([`params`]), fill ([`fill`]), figures ([`figures`]),
//! analysis ([`analysis`]) and part of the report ([`report`], with the fit across a sweep)
//! are submodules.

pub mod analysis;
pub mod figures;
pub mod fill;
pub mod params;
pub mod phases;
pub mod report;
pub mod scaling;

pub use analysis::{analyze, FsckOutcome};
pub use figures::{Verdict, COLUMNS};

use super::{AnalysisError, Outcome, Seen, Workload};
use crate::engine::sources::source::{OpSource, Source};
use crate::engine::{Action, Op, Pacing, Pattern, Phase, Plan, SampleSet, Step, Stop, StreamPlan};
use crate::params::{ParamError, ParamSpec, Params};
use crate::present::KindReport;
pub use fill::sync_policy;
use fill::{Fill, FillSpec, SyncPolicy};
use params::PARAMS;

/// The `fsck` workload.
pub struct Fsck;

pub use phases::{CHECK, DROP_CACHES, FILL, MOUNT, SYNC, UNMOUNT};

/// Most fill threads.
const MAX_THREADS: u64 = 1024;

/// Checks parameters no plan can run with.
fn check(p: &Params) -> Result<SyncPolicy, ParamError> {
    let (files, threads) = (p.u64("files"), p.u64("threads"));
    if files == 0 {
        return Err(ParamError::invalid("files", "must be at least 1"));
    }
    if threads == 0 || threads > MAX_THREADS || threads > files {
        return Err(ParamError::invalid(
            "threads",
            format!("must be between 1 and {MAX_THREADS}, and at most files ({files})"),
        ));
    }
    if p.u64("dirs") == 0 {
        return Err(ParamError::invalid(
            "dirs",
            "must be at least 1 (the files go into directories one level deep)",
        ));
    }
    if p.u64("file_size") > 1 << 30 {
        return Err(ParamError::invalid("file_size", "must be at most 1GiB"));
    }
    sync_policy(p)
}

/// The fill threads' specs: files divided among them, the first ones taking the remainder.
fn fill_specs(p: &Params, sync: SyncPolicy) -> Vec<FillSpec> {
    let (files, threads, dirs) = (p.u64("files"), p.u64("threads"), p.u64("dirs"));
    (0..threads)
        .map(|i| FillSpec {
            files: files / threads + u64::from(i < files % threads),
            total_files: files,
            total_dirs: dirs * threads,
            dirs,
            file_size: p.u64("file_size"),
            sync,
        })
        .collect()
}

/// One fill stream per thread, each with its fs_mark-style source.
fn streams(p: &Params, sync: SyncPolicy) -> Vec<StreamPlan> {
    fill_specs(p, sync)
        .into_iter()
        .enumerate()
        .map(|(i, spec)| {
            let describe = format!(
                "fill: {} files of {} bytes in {} directories, sync {}",
                spec.files,
                spec.file_size,
                spec.dirs,
                p.text("sync")
            );
            let make_spec = spec.clone();
            StreamPlan {
                name: format!("fill{i}"),
                role: "fill".into(),
                op: Op::Create,
                region_len: 0,
                io_size: spec.file_size,
                pattern: Pattern::Sequential,
                pacing: Pacing::Max,
                samples: 0,
                source: Some(Source::new(describe, move |ctx| {
                    Ok(Box::new(Fill::make(ctx, &make_spec)?) as Box<dyn OpSource>)
                })),
                io: Default::default(),
            }
        })
        .collect()
}

/// Allowance per file and per directory for what the filesystem writes about it (an inode,
/// a directory entry, a directory block): a 4 KiB block, more than ext4's 256-byte and xfs's
/// 512-byte inodes with their entries take.
const META_PER_NODE: u64 = 4096;

/// The most bytes the fill writes: every file's data in whole 4 KiB blocks, and a block of
/// metadata per file and per directory.
pub fn stores_at_most(p: &Params) -> u64 {
    let data = p.u64("file_size").div_ceil(4096) * 4096;
    let dirs = p.u64("threads").saturating_mul(p.u64("dirs"));
    p.u64("files")
        .saturating_mul(data + META_PER_NODE)
        .saturating_add(dirs.saturating_mul(META_PER_NODE))
}

/// The checker's extra arguments: `checker_args` split on spaces.
pub fn checker_args(p: &Params) -> Vec<String> {
    p.text("checker_args")
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

impl Workload for Fsck {
    fn name(&self) -> &'static str {
        "fsck"
    }

    fn about(&self) -> &'static str {
        "fill with files as fs_mark does, unmount, run the filesystem's checker read-only: fill files/s, check time, files/s and peak memory (seed 004)"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn plan(&self, p: &Params) -> Result<Plan, ParamError> {
        let sync = check(p)?;
        let streams = streams(p, sync);
        let action = |name: &str, a| Phase {
            name: name.into(),
            step: Step::Action(a),
        };
        let phases = vec![
            Phase {
                name: FILL.into(),
                step: Step::Streams {
                    streams: (0..streams.len()).collect(),
                    stop: Stop::OpsEnd,
                },
            },
            action(SYNC, Action::Sync),
            action(UNMOUNT, Action::Unmount),
            action(DROP_CACHES, Action::DropCaches),
            action(CHECK, Action::Fsck),
            action(MOUNT, Action::Mount),
        ];
        Ok(Plan {
            checker_args: checker_args(p),
            stores_at_most: Some(stores_at_most(p)),
            ..Plan::new(streams, phases, false, p.u64("seed"))
        })
    }

    fn analyze(
        &self,
        p: &Params,
        samples: &SampleSet,
        seen: &Seen,
    ) -> Result<Box<dyn Outcome>, AnalysisError> {
        Ok(Box::new(analyze(p, samples, seen)?))
    }

    fn report(&self) -> &'static dyn KindReport {
        &report::FsckReport
    }
}

#[cfg(test)]
mod tests;
