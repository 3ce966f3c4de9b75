//! Workloads: one module per kind. A workload owns both halves of its kind: it turns
//! parameters into an engine [`Plan`] and turns the samples of a run into its [`Outcome`]
//! (per-stream figures and the verdict, in the user's terms).

pub mod dvr;
pub mod dvr_report;

use crate::engine::{Plan, StreamSamples};
use crate::params::{ParamError, ParamSpec, Params};
use serde_json::Value as Json;

/// Which way a verdict figure is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

/// One headline figure of a verdict, for tables that compare stacks.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The key in result.json's `verdict`.
    pub key: &'static str,
    /// Column heading.
    pub label: &'static str,
    pub unit: &'static str,
    pub value: Option<f64>,
    pub better: Better,
}

/// A table of strings: headings and rows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rows {
    pub headings: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// What analysis of one trial produced.
pub trait Outcome: Send {
    /// `{"streams": [...], "verdict": {...}}` for result.json.
    fn to_json(&self) -> Json;
    /// One row per stream for the terminal.
    fn stream_rows(&self) -> Rows;
    /// The verdict in one sentence.
    fn verdict_line(&self) -> String;
    /// Headline figures, in the order a comparison table shows them.
    fn figures(&self) -> Vec<Figure>;
    /// Whether the target was met, when the workload has one.
    fn meets_target(&self) -> Option<bool>;
    /// Caveats found while analysing (short run, errors, ...).
    fn warnings(&self) -> Vec<String>;
}

/// Analysis could not be done on the samples given.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error("no samples for stream role '{0}'")]
    MissingRole(String),
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
    /// The streams to run; rejects impossible parameters.
    fn plan(&self, params: &Params) -> Result<Plan, ParamError>;
    /// Per-stream figures and the verdict from the samples of a run.
    fn analyze(
        &self,
        params: &Params,
        streams: &[StreamSamples],
    ) -> Result<Box<dyn Outcome>, AnalysisError>;

    /// The headline figures an [`Outcome`] of this kind gives, without values: what a
    /// comparison table reads back from result.json's `verdict` by [`Figure::key`].
    fn figure_specs(&self) -> Vec<Figure> {
        Vec::new()
    }

    /// What this workload adds to the report (charts and tables); `None`: the verdict table only.
    fn report_sections(&self) -> Option<&'static dyn crate::report::sections::ReportSections> {
        None
    }

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

/// No workload of that name.
#[derive(Debug, thiserror::Error)]
#[error("unknown workload '{name}'; available: {known}")]
pub struct UnknownWorkload {
    pub name: String,
    pub known: String,
}
