//! The study runner: expands a study into trials, builds each trial's stack, runs it, and
//! records it in the manifest as it goes, so an interrupted study loses no finished trial and
//! `--resume` continues it. Ends with the comparison table and the report.

use super::manifest::{resume, Manifest, Status};
use super::results::ResultsDir;
use super::table::Comparison;
use super::{expand, Options, Study, StudyError};
use crate::report::html::{write_report, ReportFiles};
use crate::stack::actions::Actions;
use crate::stack::ledger::Ledger;
use crate::stack::provision::{self, BuildOptions};
use crate::stack::{DeviceSpec, StackError};
use crate::trial::{self, Setup, TrialError};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How to run a study.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub expand: Options,
    /// Continue the study in this results directory.
    pub resume: Option<PathBuf>,
    /// Where a new results directory is created (default: the study's `out`, else `results`).
    pub out: Option<PathBuf>,
    /// Print every command and sysfs write instead of doing them.
    pub dry_run: bool,
    /// Block devices the user allows to be wiped.
    pub wipe: Vec<PathBuf>,
    /// Draw progress bars.
    pub progress: bool,
}

/// What a study run left.
#[derive(Debug)]
pub struct StudyRun {
    /// The results directory (None for a dry run).
    pub root: Option<PathBuf>,
    /// The end-of-study table.
    pub table: String,
    pub report: Option<ReportFiles>,
    pub interrupted: bool,
    /// Trials that failed (not skipped).
    pub failed: usize,
}

/// A study could not be run at all.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Study(#[from] StudyError),
    #[error("{0}")]
    Io(String),
}

impl RunError {
    pub fn is_user_error(&self) -> bool {
        matches!(self, RunError::Study(e) if e.is_user_error())
    }
}

fn io(e: impl std::fmt::Display) -> RunError {
    RunError::Io(e.to_string())
}

/// The newest results directory of study `name` under `out`.
pub fn latest_results(out: &Path, name: &str) -> Option<PathBuf> {
    let prefix = format!("{name}-");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(out)
        .ok()?
        .flatten()
        .filter(|e| {
            e.file_name().to_string_lossy().starts_with(&prefix)
                && e.path().join("manifest.json").exists()
        })
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs.pop()
}

/// Parses a stack's device specs.
fn devices_of(specs: &[String]) -> Result<Vec<DeviceSpec>, String> {
    specs.iter().map(|s| DeviceSpec::parse(s)).collect()
}

/// Prints what every stack would do, running nothing.
fn dry_run(study: &Study, opts: &RunOptions, say: &mut dyn Write) -> Result<StudyRun, RunError> {
    let exp = expand(study, &opts.expand)?;
    let mut seen = Vec::new();
    let mut ledger = Ledger::detached();
    let stop = AtomicBool::new(false);
    for t in &exp.trials {
        if seen.contains(&t.stack.name) {
            continue;
        }
        seen.push(t.stack.name.clone());
        writeln!(
            say,
            "# stack {} ({} on {})",
            t.stack.name,
            t.workload,
            t.stack.devices.join(" ")
        )
        .map_err(io)?;
        let plan = t
            .workload_impl()
            .plan(&t.params)
            .map_err(|e| RunError::Io(e.to_string()))?;
        let mut actions = Actions::new(true);
        let build = BuildOptions {
            dry_run: true,
            wipe: opts.wipe.clone(),
        };
        let result = devices_of(&t.stack.devices)
            .map_err(StackError::Spec)
            .and_then(|d| {
                provision::build(
                    &t.stack,
                    &d,
                    &plan,
                    &build,
                    &mut ledger,
                    &mut actions,
                    &stop,
                )
            });
        for line in &actions.log {
            writeln!(say, "{line}").map_err(io)?;
        }
        if let Err(e) = result {
            writeln!(say, "# would stop here: {e}").map_err(io)?;
        }
        writeln!(
            say,
            "# then run {} x {} repeats, and release everything in reverse order\n",
            t.workload, exp.study.repeats
        )
        .map_err(io)?;
    }
    Ok(StudyRun {
        root: None,
        table: String::new(),
        report: None,
        interrupted: false,
        failed: 0,
    })
}

/// Runs `study`. Progress lines go to `say`; `stop` (Ctrl-C, SIGTERM) ends it after releasing
/// the current trial's resources.
pub fn run(
    study: &Study,
    opts: &RunOptions,
    stop: &Arc<AtomicBool>,
    say: &mut dyn Write,
) -> Result<StudyRun, RunError> {
    if opts.dry_run {
        return dry_run(study, opts, say);
    }
    let exp = expand(study, &opts.expand)?;
    let (results, mut manifest, todo) = match &opts.resume {
        Some(root) => {
            let r = resume(root, &exp)?;
            (ResultsDir::open(root), r.manifest, r.todo)
        }
        None => {
            let out = opts.out.clone().unwrap_or_else(|| {
                PathBuf::from(study.out.clone().unwrap_or_else(|| "results".into()))
            });
            let results = ResultsDir::create(&out, &study.name).map_err(|e| {
                RunError::Io(format!(
                    "create results directory in {}: {e}",
                    out.display()
                ))
            })?;
            let m = Manifest::create(&results, &exp)?;
            let todo = exp.trials.clone();
            (results, m, todo)
        }
    };
    let root = results.root.clone();
    writeln!(
        say,
        "study {}: {} trials to run, results in {}",
        study.name,
        todo.len(),
        root.display()
    )
    .map_err(io)?;
    let mut ledger =
        Ledger::new().map_err(|e| RunError::Io(format!("create the resource ledger: {e}")))?;
    let mut interrupted = false;
    let mut failed = 0;
    for t in &todo {
        if stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        manifest.update(&root, &t.id, Status::Running, None)?;
        let devices = match devices_of(&t.stack.devices) {
            Ok(d) => d,
            Err(m) => {
                writeln!(say, "{}: skipped: {m}", t.id).map_err(io)?;
                manifest.update(&root, &t.id, Status::Skipped, Some(m))?;
                continue;
            }
        };
        let setup = Setup {
            stack: &t.stack,
            devices: &devices,
            build: BuildOptions {
                dry_run: false,
                wipe: opts.wipe.clone(),
            },
        };
        let w = t.workload_impl();
        match trial::run(w, &t.params, &setup, &mut ledger, stop, opts.progress) {
            Ok(out) => {
                let tmp = results
                    .begin_trial(&t.stack.name, &t.workload, t.repeat)
                    .map_err(io)?;
                trial::write(&tmp, &out).map_err(io)?;
                results
                    .commit_trial(&tmp, &t.stack.name, &t.workload, t.repeat)
                    .map_err(io)?;
                manifest.update(&root, &t.id, Status::Done, None)?;
                writeln!(say, "{}: {}", t.id, out.outcome.verdict_line()).map_err(io)?;
            }
            Err(TrialError::Interrupted) => {
                manifest.update(&root, &t.id, Status::Pending, None)?;
                interrupted = true;
                break;
            }
            Err(e) => {
                let skip = matches!(&e, TrialError::Stack(StackError::NeedsRoot(_)))
                    || matches!(&e, TrialError::Stack(StackError::Spec(m)) if m.contains("not available"));
                let (status, word) = if skip {
                    (Status::Skipped, "skipped")
                } else {
                    (Status::Failed, "failed")
                };
                if !skip {
                    failed += 1;
                }
                writeln!(say, "{}: {word}: {e}", t.id).map_err(io)?;
                manifest.update(&root, &t.id, status, Some(e.to_string()))?;
            }
        }
    }
    let table = Comparison::from_results(&root, &manifest)
        .map(|c| c.render())
        .unwrap_or_else(|e| format!("(no table: {e})"));
    let any_done = manifest.trials.iter().any(|t| t.status == Status::Done);
    let report = if any_done && !interrupted {
        write_report(&root).ok()
    } else {
        None
    };
    Ok(StudyRun {
        root: Some(root),
        table,
        report,
        interrupted,
        failed,
    })
}
