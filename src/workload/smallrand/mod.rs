//! The `smallrand` workload of seed 003: iozone's throughput test `iozone -T -t 4 -s 1m -r 4k
//! -I -i0 -i1 -i2`. Each thread works on its own file through six phases, as iozone's tests:
//! `write` (initial), `rewrite`, `read`, `reread`, `random_read`, `random_write`. Verdict: KB/s
//! per phase summed over the threads, as iozone's throughput mode reports ("Children see
//! throughput"), with iozone's names in the report.

pub mod analysis;
pub mod params;
pub mod phases;
pub mod report;
mod source;

use super::{AnalysisError, Outcome, Seen, Workload};
use crate::engine::{Op, Pacing, Pattern, Plan, SampleSet, Source, Stop, StreamPlan};
use crate::params::{ParamError, ParamSpec, Params};
use crate::present::KindReport;
use params::PARAMS;

pub use phases::{IOZONE_NAMES, STAGES};

/// The `smallrand` workload.
pub struct SmallRandWorkload;

fn check(p: &Params) -> Result<(), ParamError> {
    let (t, fs, r) = (p.u64("threads"), p.u64("file_size"), p.u64("record"));
    if !(1..=256).contains(&t) {
        return Err(ParamError::invalid("threads", "must be between 1 and 256"));
    }
    if r == 0 || (p.bool("direct") && r % 512 != 0) {
        return Err(ParamError::invalid(
            "record",
            "must be greater than 0, and a multiple of 512 with direct=true",
        ));
    }
    if fs < r || fs % r != 0 {
        return Err(ParamError::invalid(
            "file_size",
            format!("must be a whole number of records ({r} bytes), at least one"),
        ));
    }
    Ok(())
}

impl Workload for SmallRandWorkload {
    fn name(&self) -> &'static str {
        "smallrand"
    }

    fn about(&self) -> &'static str {
        "iozone's 4-thread 4 KiB O_DIRECT test: write, rewrite, read, reread, random read, random write per thread file; KB/s per phase (seed 003)"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn plan(&self, p: &Params) -> Result<Plan, ParamError> {
        check(p)?;
        let (fs, r) = (p.u64("file_size"), p.u64("record"));
        let streams = (0..p.u64("threads"))
            .map(|i| StreamPlan {
                name: format!("thread{i}"),
                role: "thread".into(),
                op: Op::Write,
                region_len: fs,
                io_size: r,
                pattern: Pattern::Sequential,
                pacing: Pacing::Max,
                samples: 0,
                io: Default::default(),
                source: Some(Source::new(
                    format!("iozone -i0 -i1 -i2 on a {fs}-byte file, {r}-byte records"),
                    move |ctx| source::SmallRand::make(ctx, fs, r),
                )),
            })
            .collect::<Vec<_>>();
        let all: Vec<usize> = (0..streams.len()).collect();
        let phases = STAGES
            .iter()
            .map(|(name, _, _)| super::stream_phase(name, all.clone(), Stop::OpsEnd))
            .collect();
        Ok(Plan::new(streams, phases, p.bool("direct"), p.u64("seed")))
    }

    fn analyze(
        &self,
        p: &Params,
        samples: &SampleSet,
        _seen: &Seen,
    ) -> Result<Box<dyn Outcome>, AnalysisError> {
        Ok(Box::new(analysis::analyze(p, samples)?))
    }

    fn report(&self) -> &'static dyn KindReport {
        &report::SmallRandReport
    }
}
