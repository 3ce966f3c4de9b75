//! The study runner: expands a study into trials, builds each trial's stack, runs it, and
//! records it in the manifest as it goes, so an interrupted study loses no finished trial and
//! `--resume` continues it. Ends with the comparison table and the report.

use super::pause::{self, Pause};
use super::results::manifest::{resume, Manifest, Status};
use super::results::reference;
use super::results::table::StudyTable;
use super::results::ResultsDir;
use super::{expand, Expansion, Options, Study, StudyError, Trial};
use crate::capacity::{self, CapacityError, CapacitySpec};
use crate::cause::{Cause, HasCause};
use crate::monitor;
use crate::report::html::{write_report, ReportFiles};
use crate::result::ResultError;
use crate::stack::actions::Actions;
use crate::stack::build::provision::{self, BuildOptions};
use crate::stack::ledger::{ledger_dir, Ledger};
use crate::stack::release::cleanup;
use crate::stack::release::resource::Released;
use crate::stack::{DeviceSpec, DeviceSpecError, StackError};
use crate::trial::{self, Setup, TrialError, TrialOutput};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

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
    /// The results directory, the ledger or the progress output failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    /// A trial's files could not be written.
    #[error(transparent)]
    Result(#[from] ResultError),
    /// `--resume` while a run of the results directory is still going (input).
    #[error("--resume: {0}")]
    StillRunning(#[from] cleanup::StillRunning),
    /// The study's monitors cannot run here (input: `trace` without root).
    #[error("monitor: {0}")]
    Monitor(#[from] monitor::SettingsError),
    /// What dead earlier runs left could not all be released.
    #[error("an earlier run of {root} left resources that could not be released: {errors}")]
    Leftovers { root: PathBuf, errors: String },
}

impl HasCause for RunError {
    fn why(&self) -> Cause {
        match self {
            RunError::Study(e) => e.why(),
            RunError::Io { .. } | RunError::Result(_) | RunError::Leftovers { .. } => Cause::Run,
            RunError::StillRunning(_) | RunError::Monitor(_) => Cause::Input,
        }
    }
}

/// An I/O error while doing `context`.
fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> RunError {
    let context = context.into();
    move |source| RunError::Io { context, source }
}

/// Writing a progress line failed.
fn said(e: std::io::Error) -> RunError {
    io("write progress")(e)
}

/// The newest results directory of study `name` under `out` that holds the same part of it
/// as `opts` select (the whole study, a shard, the `--trial`s): the last by its name's UTC
/// timestamp.
pub fn latest_results(out: &Path, name: &str, opts: &Options) -> Option<PathBuf> {
    let prefix = format!("{name}-");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(out)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .filter(|e| {
            Manifest::load(&e.path())
                .is_ok_and(|m| m.study == name && m.options.part() == opts.part())
        })
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs.pop()
}

/// The suffix of the results directory of a run of part of a study (`shard2of3`,
/// `trial-<digest>`), or None for the whole study.
fn part_suffix(exp: &Expansion) -> Option<String> {
    let o = &exp.options;
    if let Some(s) = o.shard {
        return Some(format!("shard{}of{}", s.index, s.count));
    }
    match exp.trials.as_slice() {
        _ if o.trials.is_empty() => None,
        [one] => Some(format!("trial-{}", one.digest)),
        more => Some(format!("trials-{}", more.len())),
    }
}

/// Parses a stack's device specs.
fn devices_of(specs: &[String]) -> Result<Vec<DeviceSpec>, DeviceSpecError> {
    specs.iter().map(|s| DeviceSpec::parse(s)).collect()
}

/// Prints what every stack would do, running nothing.
fn dry_run(study: &Study, opts: &RunOptions, say: &mut dyn Write) -> Result<StudyRun, RunError> {
    let exp = expand(study, &opts.expand)?;
    if !exp.study.pause.is_none() {
        let p = exp.study.pause.text();
        writeln!(
            say,
            "# the study pauses {p} after every trial that runs, before the next (pause = \"{p}\")"
        )
        .map_err(said)?;
    }
    let mut seen = Vec::new();
    for t in &exp.trials {
        if seen.contains(&t.stack.name) {
            continue;
        }
        seen.push(t.stack.name.clone());
        dry_run_stack(t, &exp.study, opts, say)?;
    }
    Ok(StudyRun {
        root: None,
        table: String::new(),
        report: None,
        interrupted: false,
        failed: 0,
    })
}

/// Prints the commands that would build `t`'s stack.
fn dry_run_stack(
    t: &Trial,
    study: &Study,
    opts: &RunOptions,
    say: &mut dyn Write,
) -> Result<(), RunError> {
    let on = t.stack.devices.join(" ");
    writeln!(say, "# stack {} ({} on {on})", t.stack.name, t.workload).map_err(said)?;
    if let Some(vm) = t.stack.vm.guest() {
        writeln!(say, "# in a guest ({vm}): the host attaches the devices and passes them to QEMU as virtio disks; the guest then does what follows on them").map_err(said)?;
    }
    let plan = t
        .workload_impl()
        .plan(&t.params)
        .map_err(|source| StudyError::Param {
            study: study.name.clone(),
            workload: t.workload.clone(),
            source,
        })?;
    let mut actions = Actions::new(true);
    let build = BuildOptions {
        dry_run: true,
        wipe: opts.wipe.clone(),
        for_guest: t.stack.vm.guest().is_some(),
        ..Default::default()
    };
    let mut ledger = Ledger::detached();
    let stop = AtomicBool::new(false);
    let result = devices_of(&t.stack.devices)
        .map_err(StackError::from)
        .and_then(|d| {
            let a = &mut actions;
            provision::build(&t.stack, &d, &plan, &build, &mut ledger, a, &stop)
        });
    for line in &actions.log {
        writeln!(say, "{line}").map_err(said)?;
    }
    if let Err(e) = result {
        writeln!(say, "# would stop here: {e}").map_err(said)?;
    }
    let what = match &t.capacity {
        Some(c) => format!(
            "a capacity search of {} over {} (a hammering run, then one run per value tried, each on a stack built again like this)",
            t.workload, c.vary
        ),
        None => t.workload.clone(),
    };
    writeln!(
        say,
        "# then run {what} ({} of every stack, round-robin), and release everything in reverse order\n",
        study.repeat_rule().text()
    )
    .map_err(said)
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
    exp.study.monitor.check_host()?;
    let (results, manifest, todo) = open_results(study, &exp, opts)?;
    let part = exp
        .options
        .part()
        .map(|p| format!(" ({p} of {})", exp.study.name))
        .unwrap_or_default();
    writeln!(
        say,
        "study {}{part}: {} trials to run ({} of every stack, round-robin), results in {}",
        study.name,
        todo.len(),
        exp.study.repeat_rule().text(),
        results.root.display()
    )
    .map_err(said)?;
    if let Some(n) = &exp.study.note {
        writeln!(say, "note: {n}").map_err(said)?;
    }
    if opts.resume.is_some() {
        release_leftovers(&results.root, say)?;
    }
    let mut ledger = Ledger::new().map_err(io("create the resource ledger"))?;
    ledger
        .set_results(&results.root)
        .map_err(io("write the resource ledger"))?;
    let mut runner = Runner {
        monitor: exp.study.monitor.clone(),
        cpus: exp.study.workload_cpus,
        pause: exp.study.pause,
        last_ran: None,
        results,
        manifest,
        ledger,
        opts,
        stop,
        say,
    };
    let (mut interrupted, mut failed) = runner.all(&todo)?;
    if !interrupted && exp.study.repeat_rule().adaptive() {
        if exp.options.selects() {
            writeln!(
                runner.say,
                "{}: a part of a study runs its {} repeats only; the repeats the study adds while an interval is too wide need all of a stack's trials in one place",
                exp.study.name, exp.study.repeats
            )
            .map_err(said)?;
        } else {
            let (i, f) = runner.more(&exp)?;
            interrupted = i;
            failed += f;
        }
    }
    Ok(finish(
        &runner.results.root,
        &runner.manifest,
        interrupted,
        failed,
    ))
}

/// Releases what dead earlier runs of the results directory `root` left behind (loop devices,
/// mounts, stream files in `dir:` targets), waiting for their device servers to finish first.
fn release_leftovers(root: &Path, say: &mut dyn Write) -> Result<(), RunError> {
    let rep = cleanup::for_results(&ledger_dir(), root)?;
    let done = rep
        .released
        .iter()
        .filter(|r| matches!(r, Released::Done(_)));
    for r in done {
        writeln!(say, "released what an earlier run left: {r}").map_err(said)?;
    }
    if !rep.errors.is_empty() {
        return Err(RunError::Leftovers {
            root: root.to_path_buf(),
            errors: rep.errors.join("; "),
        });
    }
    Ok(())
}

/// The results directory (new, or the one resumed), its manifest, and the trials to run.
fn open_results(
    study: &Study,
    exp: &Expansion,
    opts: &RunOptions,
) -> Result<(ResultsDir, Manifest, Vec<Trial>), RunError> {
    if let Some(root) = &opts.resume {
        let r = resume(root, exp)?;
        return Ok((ResultsDir::open(root), r.manifest, r.todo));
    }
    let out = opts
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(study.out.clone().unwrap_or_else(|| "results".into())));
    let part = part_suffix(exp);
    let results = ResultsDir::create_part(&out, &study.name, part.as_deref())
        .map_err(io(format!("create results directory in {}", out.display())))?;
    let m = Manifest::create(&results, exp)?;
    Ok((results, m, exp.trials.clone()))
}

/// The table and report at the end of a study.
fn finish(root: &Path, manifest: &Manifest, interrupted: bool, failed: usize) -> StudyRun {
    let table = StudyTable::from_results(root, manifest)
        .map(|c| c.render())
        .unwrap_or_else(|e| format!("(no table: {e})"));
    let any_done = manifest.trials.iter().any(|t| t.status == Status::Done);
    let report = if any_done && !interrupted {
        write_report(root, capacity::report_of).ok()
    } else {
        None
    };
    StudyRun {
        root: Some(root.to_path_buf()),
        table,
        report,
        interrupted,
        failed,
    }
}

/// What trial `t` runs on: its stack built on `devices` (wiping only `wipe`), watched by
/// `monitor`.
fn setup_of<'s>(
    t: &'s Trial,
    devices: &'s [DeviceSpec],
    monitor: &'s monitor::Settings,
    cpus: crate::trial::cpus::Policy,
    wipe: &[PathBuf],
) -> Setup<'s> {
    Setup {
        workload: &t.workload,
        stack: &t.stack,
        devices,
        build: BuildOptions {
            dry_run: false,
            wipe: wipe.to_vec(),
            ..Default::default()
        },
        monitor,
        repeat: t.repeat,
        switch: None,
        cpus,
    }
}

/// How one trial ended.
enum TrialEnd {
    Done,
    /// The host cannot run it.
    Skipped,
    Failed,
    Interrupted,
}

/// What runs a study's trials one by one, recording each in the manifest.
struct Runner<'a> {
    /// The monitors of every trial.
    monitor: monitor::Settings,
    /// Where every trial's stream threads run.
    cpus: crate::trial::cpus::Policy,
    /// The study's pause after a trial that ran.
    pause: Pause,
    /// When the last trial that ran (done or failed) ended.
    last_ran: Option<Instant>,
    results: ResultsDir,
    manifest: Manifest,
    ledger: Ledger,
    opts: &'a RunOptions,
    stop: &'a Arc<AtomicBool>,
    say: &'a mut dyn Write,
}

impl Runner<'_> {
    /// Runs `todo` in order until done or stopped, pausing after every trial that ran as the
    /// study asks; (interrupted, trials failed).
    fn all(&mut self, todo: &[Trial]) -> Result<(bool, usize), RunError> {
        let mut failed = 0;
        for t in todo {
            if self.stop.load(Ordering::Relaxed) || !self.settle(t)? {
                return Ok((true, failed));
            }
            let end = self.trial(t)?;
            if matches!(end, TrialEnd::Done | TrialEnd::Failed) {
                self.last_ran = Some(Instant::now());
            }
            match end {
                TrialEnd::Interrupted => return Ok((true, failed)),
                TrialEnd::Failed => failed += 1,
                TrialEnd::Done | TrialEnd::Skipped => {}
            }
        }
        Ok((false, failed))
    }

    /// The repeats the study adds after its own ([`super::plan::adaptive`]): round by round, one
    /// more repeat of every ranked stack whose interval is still too wide, until none is or
    /// the maximum is reached; (interrupted, trials failed). A round a resumed run finds
    /// recorded is continued: its trials done count, the others run again.
    fn more(&mut self, exp: &Expansion) -> Result<(bool, usize), RunError> {
        let rule = exp.study.repeat_rule().stop_rule();
        let mut failed = 0;
        for round in rule.min + 1..=rule.max {
            let root = self.results.root.clone();
            let standings = match super::plan::adaptive::standings(&exp.study, &root) {
                Ok(s) => s,
                Err(e) => {
                    writeln!(
                        self.say,
                        "no more repeats: the results cannot be read ({e})"
                    )
                    .map_err(said)?;
                    return Ok((false, failed));
                }
            };
            let mut todo = Vec::new();
            for st in &standings {
                let line = super::plan::adaptive::describe(st, rule.width);
                writeln!(self.say, "{line}").map_err(said)?;
                if !st.decision.more() {
                    continue;
                }
                let placed = self.manifest.trials.len();
                let Some(t) = super::plan::expand::extra_trial(
                    &exp.study,
                    &st.stack,
                    &st.workload,
                    round,
                    placed,
                )?
                else {
                    continue;
                };
                if self.manifest.complete(&root, &t.id) {
                    continue;
                }
                self.manifest.add(&t);
                todo.push(t);
            }
            if todo.is_empty() {
                break;
            }
            self.manifest.save(&root)?;
            writeln!(
                self.say,
                "round {round}: {} more trial{}",
                todo.len(),
                if todo.len() == 1 { "" } else { "s" }
            )
            .map_err(said)?;
            let (interrupted, f) = self.all(&todo)?;
            failed += f;
            if interrupted {
                return Ok((true, failed));
            }
        }
        Ok((false, failed))
    }

    /// Waits out what is left of the study's pause since the last trial that ran, before
    /// `next`; false when the study was stopped during it. A trial skipped at once (the host
    /// cannot build its stack) does not start a pause of its own.
    fn settle(&mut self, next: &Trial) -> Result<bool, RunError> {
        let Some(ended) = self.last_ran else {
            return Ok(true);
        };
        let left = pause::left(self.pause, ended, Instant::now());
        if left.is_zero() {
            return Ok(true);
        }
        writeln!(
            self.say,
            "pausing {:.1} s before {} (the study's pause = \"{}\" after a trial: the host settles)",
            left.as_secs_f64(),
            next.id,
            self.pause.text()
        )
        .map_err(said)?;
        self.say.flush().map_err(said)?;
        Ok(pause::wait(Instant::now() + left, self.stop))
    }

    /// Seconds since the last trial that ran ended, in a study that pauses between trials.
    fn idle(&self) -> Option<f64> {
        let ended = self.last_ran.filter(|_| !self.pause.is_none())?;
        Some((ended.elapsed().as_secs_f64() * 1e3).round() / 1e3)
    }

    /// Trial `t`'s identity in the study, with the host's idle time before it.
    fn identity(&self, t: &Trial, idle: Option<f64>) -> crate::result::TrialIdentity {
        crate::result::TrialIdentity {
            id: t.id.clone(),
            digest: t.digest.clone(),
            study_hash: self.manifest.hash(),
            idle_before_s: idle,
        }
    }

    /// Runs `t` and records how it ended: done, skipped when the host cannot run it, failed
    /// otherwise, or back to pending when interrupted.
    fn trial(&mut self, t: &Trial) -> Result<TrialEnd, RunError> {
        let root = self.results.root.clone();
        let idle = self.idle();
        self.manifest.update(&root, &t.id, Status::Running, None)?;
        if let Some(spec) = &t.capacity {
            return self.capacity(t, spec, idle);
        }
        let mut out = match self.run(t) {
            Ok(out) => out,
            Err(TrialError::Interrupted) => {
                self.manifest.update(&root, &t.id, Status::Pending, None)?;
                return Ok(TrialEnd::Interrupted);
            }
            Err(e) => return self.not_run(t, &e),
        };
        out.doc.trial = Some(self.identity(t, idle));
        let tmp = self
            .results
            .begin_trial(&t.stack.name, &t.workload, t.repeat)
            .map_err(io(format!("create the directory of trial {}", t.id)))?;
        trial::write(&tmp, &out)?;
        self.results
            .commit_trial(&tmp, &t.stack.name, &t.workload, t.repeat)
            .map_err(io(format!("rename the directory of trial {}", t.id)))?;
        self.manifest.update(&root, &t.id, Status::Done, None)?;
        writeln!(self.say, "{}: {}", t.id, out.outcome.verdict_line()).map_err(said)?;
        if let Some(s) = out
            .doc
            .durability
            .as_ref()
            .and_then(|d| d["summary"].as_str())
        {
            writeln!(self.say, "{}: power cut: {s}", t.id).map_err(said)?;
        }
        Ok(TrialEnd::Done)
    }

    fn run(&mut self, t: &Trial) -> Result<TrialOutput, TrialError> {
        let devices = devices_of(&t.stack.devices).map_err(StackError::from)?;
        let setup = setup_of(t, &devices, &self.monitor, self.cpus, &self.opts.wipe);
        let (w, progress) = (t.workload_impl(), self.opts.progress);
        let root = &self.results.root;
        let reference = reference::for_trial(&self.manifest.resolved, &self.manifest, root, t);
        let related = reference.as_ref().and_then(|r| w.refer(&t.params, r));
        let params = related.as_ref().unwrap_or(&t.params);
        let mut out = trial::run(w, params, &setup, &mut self.ledger, self.stop, progress)?;
        if let (Some(r), Some(_)) = (&reference, &related) {
            let note = reference::note(r, t.stack.data_devices());
            out.doc.warnings.push(note);
        }
        Ok(out)
    }

    /// Runs `t` as a capacity search: its probes go into the trial's temporary directory as
    /// they run, and the directory takes its final name with the search's result.json.
    fn capacity(
        &mut self,
        t: &Trial,
        spec: &CapacitySpec,
        idle: Option<f64>,
    ) -> Result<TrialEnd, RunError> {
        let root = self.results.root.clone();
        let tmp = self
            .results
            .begin_trial(&t.stack.name, &t.workload, t.repeat)
            .map_err(io(format!("create the directory of trial {}", t.id)))?;
        let found = match self.search(t, spec, &tmp) {
            Ok(f) => f,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&tmp);
                if e.why() == Cause::Interrupted {
                    self.manifest.update(&root, &t.id, Status::Pending, None)?;
                    return Ok(TrialEnd::Interrupted);
                }
                return self.not_run(t, &e);
            }
        };
        let mut found = found;
        found.doc.trial = Some(self.identity(t, idle));
        crate::result::write(&tmp.join("result.json"), &found.doc)?;
        self.results
            .commit_trial(&tmp, &t.stack.name, &t.workload, t.repeat)
            .map_err(io(format!("rename the directory of trial {}", t.id)))?;
        self.manifest.update(&root, &t.id, Status::Done, None)?;
        writeln!(self.say, "{}: {}", t.id, found.verdict.line()).map_err(said)?;
        Ok(TrialEnd::Done)
    }

    fn search(
        &mut self,
        t: &Trial,
        spec: &CapacitySpec,
        dir: &Path,
    ) -> Result<capacity::run::Found, CapacityError> {
        let devices = devices_of(&t.stack.devices)
            .map_err(StackError::from)
            .map_err(TrialError::from)?;
        let setup = setup_of(t, &devices, &self.monitor, self.cpus, &self.opts.wipe);
        let search = capacity::run::Search {
            workload: t.workload_impl(),
            params: &t.params,
            spec,
            setup: &setup,
            dir,
            progress: self.opts.progress,
        };
        let (id, say) = (&t.id, &mut self.say);
        capacity::run::run(&search, &mut self.ledger, self.stop, &mut |line| {
            let _ = writeln!(say, "{id}: {line}");
        })
    }

    /// Records a trial that did not run: skipped when the host cannot run it, else failed.
    fn not_run<E: HasCause + std::fmt::Display>(
        &mut self,
        t: &Trial,
        e: &E,
    ) -> Result<TrialEnd, RunError> {
        let (status, word, end) = match e.why() {
            Cause::Host => (Status::Skipped, "skipped", TrialEnd::Skipped),
            _ => (Status::Failed, "failed", TrialEnd::Failed),
        };
        writeln!(self.say, "{}: {word}: {e}", t.id).map_err(said)?;
        let root = self.results.root.clone();
        self.manifest
            .update(&root, &t.id, status, Some(e.to_string()))?;
        Ok(end)
    }
}
