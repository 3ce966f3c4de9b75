//! What a workload kind is ([`Workload`]): its name and parameters, the plan it makes of them,
//! the analysis of its samples, its part of the report and, for a kind whose streams run in real
//! time, of a capacity search; and what watched a trial, for the analysis ([`Seen`]).

use super::error::AnalysisError;
use super::outcome::Outcome;
use super::realtime::capacity::CapacityKind;
use super::reference::Reference;
use crate::engine::{Plan, SampleSet};
use crate::params::{ParamError, ParamSpec, Params};
use crate::present::KindReport;
use serde_json::Value as Json;

/// What watched a run from outside its workload, for the verdicts that report it (the CPU the
/// kernel's threads spent while a stream phase ran).
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    /// The monitors' summary; `None` when they did not run (or when `iotrial analyze` has no
    /// result.json beside the samples).
    pub monitor: Option<&'a crate::result::monitor::MonitorSummary>,
    /// What the stack's emulated devices' servers reported at the end (result.json's
    /// `stack.emulated`: the model's own figures, reply lateness); empty on other devices.
    pub emulated: &'a [Json],
    /// The trial's time scale (result.json's `time_scale`): the samples' times are the
    /// measured ones multiplied by it, the monitors' are the host's. 1 on real devices.
    pub time_scale: f64,
}

impl Default for Seen<'_> {
    fn default() -> Self {
        Seen {
            monitor: None,
            emulated: &[],
            time_scale: 1.0,
        }
    }
}

impl Seen<'_> {
    /// Mean CPU of the kernel's threads during phase `phase`, % of one core, when the threads
    /// monitor watched it.
    pub fn kernel_cpu_pct_in(&self, phase: &str) -> Option<f64> {
        self.monitor?.threads.as_ref()?.kernel_cpu_pct_in(phase)
    }
}

/// A kind of workload.
pub trait Workload: Sync {
    /// The kind's name (`dvr`).
    fn name(&self) -> &'static str;
    /// One line saying what it models.
    fn about(&self) -> &'static str;
    /// Every parameter with its default.
    fn params(&self) -> &'static [ParamSpec];
    /// The streams and phases to run; rejects impossible parameters.
    fn plan(&self, params: &Params) -> Result<Plan, ParamError>;
    /// Per-stream figures and the verdict from the samples of a run, and from what watched it
    /// (`seen`: the monitors' summary, when they ran).
    fn analyze(
        &self,
        params: &Params,
        samples: &SampleSet,
        seen: &Seen,
    ) -> Result<Box<dyn Outcome>, AnalysisError>;

    /// Width of timeseries.csv's intervals, seconds: 1 unless the workload harvests at
    /// another interval.
    fn interval(&self, _params: &Params) -> f64 {
        1.0
    }

    /// Checks the directory the stack made for the workload (`files` layout) before the first
    /// phase: a workload that will make more than the filesystem can hold (inodes for a tree
    /// of directories) fails at once, naming what would fix it, rather than an hour in.
    fn preflight(&self, _params: &Params, _dir: &std::path::Path) -> Result<(), ParamError> {
        Ok(())
    }

    /// The parameters of a trial whose figures are relative to `reference`, when this kind has
    /// any (stream's `raw_mb_s`); `None` leaves the trial as it is.
    fn refer(&self, _params: &Params, _reference: &Reference) -> Option<Params> {
        None
    }

    /// This kind's part of comparisons and of the report: its verdict columns, its figures
    /// read back from result.json, its charts and tables.
    fn report(&self) -> &'static dyn KindReport;

    /// What a capacity search needs of this kind, when its streams can run in real time.
    fn capacity(&self) -> Option<&'static dyn CapacityKind> {
        None
    }

    /// Resolves `overrides` against this workload's parameters.
    fn resolve(&self, overrides: &[(String, String)]) -> Result<Params, ParamError> {
        Params::resolve(self.name(), self.params(), overrides)
    }
}

/// A stream phase named `name` running `streams` until `stop`.
pub fn stream_phase(
    name: &str,
    streams: Vec<usize>,
    stop: crate::engine::Stop,
) -> crate::engine::Phase {
    crate::engine::Phase {
        name: name.to_string(),
        step: crate::engine::Step::Streams { streams, stop },
    }
}
