//! Workloads: one module per kind. A workload owns both halves of its kind: it turns
//! parameters into an engine [`Plan`] (its streams and its phases) and turns the samples of a
//! run into its [`Outcome`]
//! (per-stream figures and the verdict, in the user's terms, which become result.json's
//! `streams` and `verdict`). Its part of the report (verdict columns declared once, figures
//! read back from result.json, charts) is a [`KindReport`] built from [`crate::present`]'s
//! types; the report reaches it through [`report_of`], handed in by the caller.

pub mod burst;
pub mod dvr;
pub mod fsck;
pub mod job;
pub mod place;
pub mod powercut;
pub mod realtime;
pub mod replay;
pub mod smallrand;
pub mod stream;
pub mod tree;

use crate::engine::{Plan, SampleSet};
use crate::params::{ParamError, ParamSpec, Params};
use crate::present::{KindReport, Rows, VerdictFigures};
use crate::result::{ResultError, Trial};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value as Json;
use std::collections::BTreeMap;

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

    /// Real-time streams: the stack's real-time verdict (what a capacity search judges a run
    /// by); `None` when the streams did not run in real time.
    fn realtime(&self) -> Option<realtime::Summary> {
        None
    }

    /// Real-time streams: each one's buffer per interval, for timeseries.csv.
    fn buffers(&self) -> Vec<crate::analysis::timeseries::BufferSeries> {
        Vec::new()
    }

    /// Writes the kind's own files into the trial's directory `dir` (fio's logs and json+ for
    /// a job trial), from `samples`; the files written.
    fn write_files(
        &self,
        _samples: &SampleSet,
        _dir: &std::path::Path,
    ) -> std::io::Result<Vec<std::path::PathBuf>> {
        Ok(Vec::new())
    }
}

/// Another trial of the same study a trial's figures can be relative to: the same workload on
/// the study's raw baseline stack (the drives written straight, without a filesystem).
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// The reference stack's name.
    pub stack: String,
    /// The workload kind of the reference trial.
    pub kind: String,
    /// Its verdict, as in its result.json.
    pub verdict: Json,
    /// The share of the reference stack's sequential bandwidth this trial's stack can use
    /// (a RAID10 over the same drives writes everything twice: one half).
    pub share: f64,
    /// What each of the reference trial's data devices wrote, interval by interval (its
    /// diskstats monitor): what one drive did raw, which an uneven raw load (eight writers on
    /// six drives) hides in the stack's total. Empty without the monitor.
    pub device_writes: BTreeMap<String, Vec<WriteInterval>>,
    /// When each phase of the reference trial began sampling (else began), seconds from its
    /// origin.
    pub phase_starts: BTreeMap<String, f64>,
    /// How many devices' worth of write bandwidth this trial's stack's data can use.
    pub data_devices: f64,
    /// What this trial's stack's data devices stream at by their models, MB/s: the slowest
    /// one's sequential write rate at its outer edge times [`Reference::data_devices`]; None
    /// unless every device is emulated.
    pub media_mb_s: Option<f64>,
}

/// One interval of a device's diskstats series.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteInterval {
    /// The phase the interval ended in.
    pub phase: Option<String>,
    /// When it ended, seconds from the trial's origin, and how long it was.
    pub end_s: f64,
    pub seconds: f64,
    /// Bytes written in it, 10^6.
    pub mb: f64,
}

/// Intervals shorter than this in all say too little of a device's rate to bound a stack by.
const MIN_RATE_S: f64 = 1.0;

impl Reference {
    /// The highest write rate (MB/s) one data device of the reference trial kept over the
    /// intervals of `phase` that began at least `after_s` seconds after the phase's start.
    pub fn best_device_mb_s(&self, phase: &str, after_s: f64) -> Option<f64> {
        let from = self.phase_starts.get(phase)? + after_s;
        let rate = |rows: &Vec<WriteInterval>| {
            let inside = rows.iter().filter(|r| {
                r.phase.as_deref() == Some(phase) && r.end_s - r.seconds >= from - 1e-3
            });
            let (mb, s) = inside.fold((0.0, 0.0), |(mb, s), r| (mb + r.mb, s + r.seconds));
            (s >= MIN_RATE_S).then(|| mb / s)
        };
        self.device_writes
            .values()
            .filter_map(rate)
            .reduce(f64::max)
    }
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

/// What a capacity search (`iotrial capacity`) needs of a kind whose streams can run in real
/// time: what it may vary, the hammering run that estimates where to start, and the estimate.
pub trait CapacityKind: Sync {
    /// The parameters a search may vary: stream counts (whole numbers) and `bitrate`.
    fn varies(&self) -> &'static [&'static str];

    /// The parameters of the hammering run whose verdict estimates the capacity of a search
    /// over `p`: `p` with `pacing = max`.
    fn hammer(&self, p: &Params) -> Params {
        let mut h = p.clone();
        h.set("pacing", crate::params::Value::Text(realtime::MAX.into()));
        h
    }

    /// Where a search of `vary` over `p` starts, from the hammering run's `verdict` (run with
    /// the parameters `hammered`); `None` when the verdict has no figure to go by.
    fn estimate(
        &self,
        p: &Params,
        hammered: &Params,
        vary: &str,
        verdict: &Json,
    ) -> Option<Estimate>;

    /// What every stream of a run with parameters `p` asks of the stack together, MB/s (10^6
    /// bytes a second): the streams times their bitrate.
    fn demand_mb_s(&self, p: &Params) -> Option<f64>;

    /// What the hammering run moved through the stack, every stream together, MB/s, from
    /// its result.json's `verdict` and `streams`.
    fn sustained_mb_s(&self, verdict: &Json, streams: &[Json]) -> Option<f64>;
}

/// A capacity the hammering run suggests, and what it rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// The value of the varied parameter.
    pub value: f64,
    /// The bitrate each stream of the hammering run was guaranteed (or sustained), Mbit/s.
    pub guarantee_mbit: f64,
    /// How the estimate was made, in words.
    pub basis: String,
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

/// result.json's `streams` from a kind's per-stream figures.
pub fn streams_json<T: Serialize>(streams: &[T]) -> Vec<Json> {
    streams
        .iter()
        .map(|f| serde_json::to_value(f).expect("stream figures serialize"))
        .collect()
}

/// result.json's `verdict` from a kind's verdict.
pub fn verdict_json<T: Serialize>(verdict: &T) -> Json {
    serde_json::to_value(verdict).expect("a verdict serializes")
}

/// A finished trial's verdict figures, read through its kind's verdict type `V`.
pub fn figures_of<V: DeserializeOwned>(
    trial: &Trial,
    figures: impl Fn(&V) -> VerdictFigures,
) -> Result<VerdictFigures, ResultError> {
    let v: V = trial.result.verdict_as().map_err(|e| trial.error(e))?;
    Ok(figures(&v))
}

/// Checks a kind's declarations against one of its outcomes: every column is the verdict field
/// of its key (absent or `null` where this outcome has no value: a real-time figure of a
/// hammering run),
/// and the verdict and the streams read back into the kind's types `V` and `S` as they were.
#[cfg(test)]
pub(crate) fn assert_figures_round_trip<V, S>(
    columns: &[crate::present::FigureSpec],
    figures: &VerdictFigures,
    outcome: &dyn Outcome,
    verdict: &V,
    streams: &[S],
) where
    V: DeserializeOwned + PartialEq + std::fmt::Debug,
    S: DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let json = outcome.verdict_json();
    assert_eq!(figures.values.len(), columns.len());
    for (c, v) in columns.iter().zip(&figures.values) {
        assert!(
            v.is_none() || json.get(c.key).is_some(),
            "verdict.{} is written",
            c.key
        );
        assert_eq!(json[c.key].as_f64(), *v, "verdict.{}", c.key);
    }
    assert_eq!(json["meets_target"].as_bool(), figures.meets_target);
    assert_eq!(&serde_json::from_value::<V>(json).unwrap(), verdict);
    let back: Vec<S> = outcome
        .streams_json()
        .into_iter()
        .map(|s| serde_json::from_value(s).unwrap())
        .collect();
    assert_eq!(back, streams);
}

/// Every workload kind iotrial has.
pub fn all() -> Vec<&'static dyn Workload> {
    vec![
        &dvr::Dvr,
        &stream::Stream,
        &tree::Tree,
        &fsck::Fsck,
        &smallrand::SmallRandWorkload,
        &burst::Burst,
        &replay::Replay,
        &job::Job,
    ]
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
