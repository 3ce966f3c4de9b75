//! Workloads: one module per kind. A workload owns both halves of its kind: it turns
//! parameters into an engine [`Plan`] (its streams and its phases) and turns the samples of a
//! run into its [`Outcome`]
//! (per-stream figures and the verdict, in the user's terms, which become result.json's
//! `streams` and `verdict`). Its part of the report (verdict columns declared once, figures
//! read back from result.json, charts) is a [`KindReport`] built from [`crate::present`]'s
//! types; the report reaches it through [`report_of`], handed in by the caller.

pub mod dvr;

use crate::engine::{Plan, SampleSet};
use crate::params::{ParamError, ParamSpec, Params};
use crate::present::{KindReport, Rows};
use serde_json::Value as Json;

/// What analysis of one trial produced.
pub trait Outcome: Send {
    /// result.json's `streams`: one object per stream, in layout order.
    fn streams_json(&self) -> Vec<Json>;
    /// result.json's `verdict`.
    fn verdict_json(&self) -> Json;
    /// One row per stream for the terminal.
    fn stream_rows(&self) -> Rows;
    /// The verdict in one sentence.
    fn verdict_line(&self) -> String;
    /// Caveats found while analysing (short run, errors, ...).
    fn warnings(&self) -> Vec<String>;
}

/// Analysis could not be done on the samples given.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error("no samples for stream role '{0}'")]
    MissingRole(String),
    #[error("the samples have no phase named {0}")]
    MissingPhase(String),
    #[error("reading the samples: {0}")]
    Samples(#[from] std::io::Error),
    #[error("{0}")]
    Other(String),
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
    /// Per-stream figures and the verdict from the samples of a run.
    fn analyze(
        &self,
        params: &Params,
        samples: &SampleSet,
    ) -> Result<Box<dyn Outcome>, AnalysisError>;

    /// Width of timeseries.csv's intervals, seconds: 1 unless the workload harvests at
    /// another interval.
    fn interval(&self, _params: &Params) -> f64 {
        1.0
    }

    /// This kind's part of comparisons and of the report: its verdict columns, its figures
    /// read back from result.json, its charts and tables.
    fn report(&self) -> &'static dyn KindReport;

    /// Resolves `overrides` against this workload's parameters.
    fn resolve(&self, overrides: &[(String, String)]) -> Result<Params, ParamError> {
        Params::resolve(self.name(), self.params(), overrides)
    }
}

/// Every workload kind iotrial has.
pub fn all() -> Vec<&'static dyn Workload> {
    vec![&dvr::Dvr]
}

/// The workload named `name`, or an error listing the known ones.
pub fn find(name: &str) -> Result<&'static dyn Workload, UnknownWorkload> {
    all()
        .into_iter()
        .find(|w| w.name() == name)
        .ok_or_else(|| UnknownWorkload {
            name: name.to_string(),
            known: all()
                .iter()
                .map(|w| w.name())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The report part of workload kind `kind` (a [`crate::present::KindLookup`]): what callers
/// hand the report, which knows no workload.
pub fn report_of(kind: &str) -> Option<&'static dyn KindReport> {
    find(kind).ok().map(|w| w.report())
}

/// No workload of that name.
#[derive(Debug, thiserror::Error)]
#[error("unknown workload '{name}'; available: {known}")]
pub struct UnknownWorkload {
    pub name: String,
    pub known: String,
}
