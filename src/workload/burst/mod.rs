//! The `burst` workload of seed 003: Cacti's poll, which updates about a thousand .rrd files at
//! once every five minutes, and a database on the same disk that suffers meanwhile. Phases:
//! `create` (the files, and each victim's own file), then per burst `drop_caches<b>` (when
//! `cold`), `burst<b>` (every file updated: rrdtool's read-modify-write of one row per
//! archive), `sync<b>` (the updates reach the device) and `gap<b>` (idle but for the victims).
//! Verdict: the drain time of each burst (until every update is on disk), the victims' read
//! latency during the bursts and between them, and the device's await and queue size.

pub mod analysis;
pub mod params;
pub mod phases;
pub mod report;
mod source;

use super::{AnalysisError, Outcome, Seen, Workload};
use crate::engine::{
    Action, Op, Pacing, Pattern, Phase, Plan, SampleSet, Source, Step, Stop, StreamPlan,
};
use crate::params::{ParamError, ParamSpec, Params};
use crate::present::KindReport;
use params::PARAMS;
use source::{Shape, Shared, Updater, Victim, ROW};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The `burst` workload.
pub struct Burst;

pub use phases::{BURST, GAP, SYNC};

fn check(p: &Params) -> Result<(), ParamError> {
    let shape = shape(p);
    if !(1..=10_000_000).contains(&shape.files) {
        return Err(ParamError::invalid(
            "files",
            "must be between 1 and 10000000",
        ));
    }
    if shape.archives == 0 || shape.file_size < ROW * (1 + shape.archives) {
        return Err(ParamError::invalid(
            "file_size",
            format!("must hold a 4 KiB header and one 4 KiB row per archive (archives >= 1): at least {} bytes", ROW * (1 + shape.archives.max(1))),
        ));
    }
    if shape.updates == 0 || p.u64("bursts") == 0 {
        return Err(ParamError::invalid(
            "updates",
            "updates and bursts must be at least 1",
        ));
    }
    if p.u64("victims") > 64
        || p.f64("victim_rate").partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
    {
        return Err(ParamError::invalid(
            "victims",
            "at most 64 victims, with a victim_rate above 0",
        ));
    }
    if p.u64("victim_file") < 1 << 20 {
        return Err(ParamError::invalid("victim_file", "must be at least 1MiB"));
    }
    if p.u64("victims") > 0 && p.f64("period") < 0.1 {
        return Err(ParamError::invalid("period", "must be at least 100ms"));
    }
    Ok(())
}

fn shape(p: &Params) -> Shape {
    Shape {
        files: p.u64("files"),
        file_size: p.u64("file_size"),
        archives: p.u64("archives"),
        updates: p.u64("updates"),
    }
}

impl Workload for Burst {
    fn name(&self) -> &'static str {
        "burst"
    }

    fn about(&self) -> &'static str {
        "Cacti's poll: bursts of rrd updates (read-modify-write of a row per archive in ~1000 files), a paced victim reader beside them; drain time and the victim's latency (seed 003)"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn plan(&self, p: &Params) -> Result<Plan, ParamError> {
        check(p)?;
        let shape = shape(p);
        let bursts = p.u64("bursts");
        let shared = Arc::new(Shared {
            burst_over: (0..bursts).map(|_| AtomicBool::new(false)).collect(),
        });
        let s = Arc::clone(&shared);
        let mut streams = vec![StreamPlan {
            name: "updater".into(),
            role: "updater".into(),
            op: Op::Write,
            region_len: shape.files * shape.file_size,
            io_size: ROW,
            pattern: Pattern::Random,
            pacing: Pacing::Max,
            samples: 0,
            io: Default::default(),
            source: Some(Source::new(
                format!(
                    "rrd updates of {} files of {} bytes, {} archives",
                    shape.files, shape.file_size, shape.archives
                ),
                move |ctx| Updater::make(ctx, shape, Arc::clone(&s)),
            )),
        }];
        let vlen = p.u64("victim_file");
        for i in 0..p.u64("victims") {
            let s = Arc::clone(&shared);
            streams.push(StreamPlan {
                name: format!("victim{i}"),
                role: "victim".into(),
                op: Op::Read,
                region_len: vlen,
                io_size: ROW,
                pattern: Pattern::Random,
                pacing: Pacing::Rate(p.f64("victim_rate")),
                samples: 0,
                io: Default::default(),
                source: Some(Source::new(
                    format!("random 4 KiB reads of a {vlen}-byte file"),
                    move |ctx| Victim::make(ctx, vlen, Arc::clone(&s)),
                )),
            });
        }
        let all: Vec<usize> = (0..streams.len()).collect();
        let victims: Vec<usize> = (1..streams.len()).collect();
        let run =
            |name: String, streams: Vec<usize>, stop| super::stream_phase(&name, streams, stop);
        let act = |name: String, a| Phase {
            name,
            step: Step::Action(a),
        };
        let mut phases = vec![run("create".into(), all.clone(), Stop::OpsEnd)];
        for b in 0..bursts {
            if p.bool("cold") {
                phases.push(act(format!("drop_caches{b}"), Action::DropCaches));
            }
            phases.push(run(format!("{BURST}{b}"), all.clone(), Stop::OpsEnd));
            phases.push(act(format!("{SYNC}{b}"), Action::Sync));
            if !victims.is_empty() {
                phases.push(run(
                    format!("{GAP}{b}"),
                    victims.clone(),
                    Stop::Duration(p.f64("period")),
                ));
            }
        }
        Ok(Plan::new(streams, phases, true, p.u64("seed")))
    }

    fn analyze(
        &self,
        p: &Params,
        samples: &SampleSet,
        seen: &Seen,
    ) -> Result<Box<dyn Outcome>, AnalysisError> {
        Ok(Box::new(analysis::analyze(p, samples, seen)?))
    }

    fn report(&self) -> &'static dyn KindReport {
        &report::BurstReport
    }
}
