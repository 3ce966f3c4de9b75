//! One trial: one workload on one target, once. Prepares the layout, runs the engine with a
//! progress display, analyses the samples and writes the trial's files atomically.

use crate::analysis::timeseries;
use crate::engine::{self, BackendKind, EngineError, EngineOptions, Protocol, StreamSamples};
use crate::params::{ParamError, Params};
use crate::report::{self, json::TrialDoc, ReportError};
use crate::stack::{files, DeviceSpec, StackError};
use crate::study::results::utc_iso;
use crate::workload::{AnalysisError, Outcome, Workload};
use serde_json::{json, Value as Json};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

/// A trial could not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum TrialError {
    #[error(transparent)]
    Param(#[from] ParamError),
    #[error(transparent)]
    Stack(#[from] StackError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
    #[error(transparent)]
    Report(#[from] ReportError),
    #[error("interrupted; no result written")]
    Interrupted,
}

impl TrialError {
    /// Whether the user's input is at fault (exit status 2).
    pub fn is_user_error(&self) -> bool {
        match self {
            TrialError::Param(_) => true,
            TrialError::Stack(s) => s.is_user_error(),
            _ => false,
        }
    }
}

/// What a finished trial produced.
pub struct TrialOutput {
    pub doc: Json,
    pub outcome: Box<dyn Outcome>,
    pub streams: Vec<StreamSamples>,
}

/// Runs `workload` with `params` on `device`. `stop` (set by Ctrl-C / SIGTERM) ends the run
/// within a second; then every file made is removed and `Interrupted` returned.
pub fn run(
    workload: &dyn Workload,
    params: &Params,
    device: &DeviceSpec,
    stop: &Arc<AtomicBool>,
    show_progress: bool,
) -> Result<TrialOutput, TrialError> {
    let plan = workload.plan(params)?;
    let started = SystemTime::now();
    let t = Instant::now();
    let temp;
    let parent: &Path = match device {
        DeviceSpec::Dir(p) => p,
        DeviceSpec::TempDir => {
            temp = tempfile::Builder::new()
                .prefix("iotrial-target-")
                .tempdir()
                .map_err(|e| StackError::io("create a temporary directory", e))?;
            temp.path()
        }
    };
    let want_direct = params.bool("direct");
    let layout = match files::create(parent, &plan, want_direct, stop) {
        Err(StackError::Interrupted) => return Err(TrialError::Interrupted),
        other => other?,
    };
    let total: u64 = plan.streams.iter().map(|s| s.samples as u64).sum();
    let pb = if show_progress {
        report::terminal::progress(total, workload.name())
    } else {
        indicatif::ProgressBar::hidden()
    };
    let protocol = Arc::new(Protocol::new(plan.streams.len()));
    let opts = EngineOptions {
        direct: layout.direct_ok,
        backend: BackendKind::Psync,
        seed: params.u64("seed"),
        time_limit: None,
    };
    let out = engine::run(&plan, &layout.placements, opts, protocol, |p| {
        if stop.load(Ordering::Relaxed) {
            p.request_stop();
        }
        pb.set_position(p.total_collected() as u64);
    })?;
    pb.finish_and_clear();
    if stop.load(Ordering::Relaxed) || out.incomplete {
        return Err(TrialError::Interrupted);
    }
    let outcome = workload.analyze(params, &out.streams)?;
    let target = json!({
        "spec": device.to_string(),
        "kind": device.kind(),
        "layout": "files",
        "filesystem": layout.fs_type,
        "direct_io": layout.direct_ok,
        "backend": opts.backend.name(),
        "files": layout.placements.iter().map(|p| p.path.file_name().map(|n| n.to_string_lossy().into_owned())).collect::<Vec<_>>(),
    });
    let doc = TrialDoc {
        workload: workload.name(),
        params: params.to_json(),
        target,
        warnings: layout.warnings.clone(),
        outcome: outcome.as_ref(),
        started_utc: utc_iso(started),
        duration_s: t.elapsed().as_secs_f64(),
    }
    .to_json();
    drop(layout);
    Ok(TrialOutput {
        doc,
        outcome,
        streams: out.streams,
    })
}

/// Writes result.json, samples.csv and timeseries.csv into `dir`.
pub fn write(dir: &Path, out: &TrialOutput) -> Result<(), ReportError> {
    report::csv::write_samples(&dir.join("samples.csv"), &out.streams)?;
    report::csv::write_timeseries(
        &dir.join("timeseries.csv"),
        &timeseries::per_second(&out.streams),
    )?;
    report::json::write(&dir.join("result.json"), &out.doc)
}
