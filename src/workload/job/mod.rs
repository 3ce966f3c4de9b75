//! The `job` workload: fio's core vocabulary as iotrial parameters (`rw`, `bs`, `size`,
//! `numjobs`, `iodepth`, `ioengine`, `runtime`, `rate`, ...; [`params`]), each job group a
//! group of streams doing block I/O in a file or raw region of its own, counting every I/O.
//! Verdict: fio's headline figures per job group and in total: IOPS, MB/s and completion
//! latency (mean, p50, p99, p99.9) ([`figures`], [`analysis`], [`report`]). A fio job file's
//! text is read by [`jobfile`], its options by [`options`] into a [`JobSpec`] per job.

pub mod analysis;
pub mod cut;
pub mod figures;
pub mod gen;
pub mod jobfile;
pub mod options;
pub mod output;
pub mod params;
pub mod phases;
mod plan;
pub mod report;
pub mod resolve;
pub mod spec;

pub use analysis::{analyze, JobOutcome};
pub use figures::{GroupFigures, StreamFigures, Verdict, COLUMNS};
pub use params::{jobs, PARAMS};
pub use plan::{check as check_job, notes as job_notes};
pub use spec::JobSpec;

use super::{AnalysisError, Outcome, Seen, Workload};
use crate::engine::{Plan, SampleSet};
use crate::params::{ParamError, ParamSpec, Params};
use crate::present::KindReport;

/// The `job` workload.
pub struct Job;

pub use phases::{PHASE, RAMP_PHASE};

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
        let mut jobs = jobs(p)?;
        if crate::workload::powercut::asked(p) {
            jobs.iter_mut().for_each(cut::ready);
        }
        plan::plan(&jobs)
    }

    fn resolve(&self, overrides: &[(String, String)]) -> Result<Params, ParamError> {
        Params::resolve(self.name(), PARAMS, &params::route(overrides))
    }

    fn analyze(
        &self,
        p: &Params,
        samples: &SampleSet,
        _: &Seen,
    ) -> Result<Box<dyn Outcome>, AnalysisError> {
        let jobs = jobs(p).map_err(|e| AnalysisError::Other(e.to_string()))?;
        let mut out = analyze(&jobs, samples)?;
        out.fio_json = p.bool(params::FIO_JSON);
        Ok(Box::new(out))
    }

    fn report(&self) -> &'static dyn KindReport {
        &report::JobReport
    }
}

#[cfg(test)]
mod tests;
