//! One trial: one workload on one target, once. Builds the stack, starts the monitors, walks the
//! workload's phases on it (`phases`) with a progress display and one [`Timeline`] for
//! everything it records, analyses the samples and writes the trial's files. A trial whose
//! stack runs in a guest ([`crate::vm`]) is handed to the guest whole.

mod calm;
pub mod cpus;
pub mod fingerprint;
mod phases;

use crate::analysis::timeseries;
use crate::cause::{Cause, HasCause};
use crate::engine::cpus::CpuSet;
use crate::engine::{BackendKind, EngineError, PlanError, SampleSet};
use crate::monitor;
use crate::params::{ParamError, Params};
use crate::report;
use crate::result::{self, ResultError, TrialResult, TrialTarget};
use crate::stack::actions::Actions;
use crate::stack::build::provision::{self, BuildOptions};
use crate::stack::ledger::Ledger;
use crate::stack::release::resource::Resource;
use crate::stack::{DeviceSpec, StackError, StackSpec};
use crate::timeline::Timeline;
use crate::utc::utc_iso;
use crate::workload::{AnalysisError, Outcome, Seen, Workload};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

/// A trial could not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum TrialError {
    #[error(transparent)]
    Param(#[from] ParamError),
    #[error("the workload's plan: {0}")]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Stack(#[from] StackError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
    #[error(transparent)]
    Result(#[from] ResultError),
    /// The directory the samples are spilled to could not be made or recorded.
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    /// A trial in a guest (VM layer) could not run.
    #[error(transparent)]
    Guest(#[from] crate::vm::VmError),
    #[error("interrupted; no result written")]
    Interrupted,
}

impl HasCause for TrialError {
    fn why(&self) -> Cause {
        match self {
            TrialError::Param(_) | TrialError::Plan(_) => Cause::Input,
            TrialError::Stack(s) => s.why(),
            TrialError::Engine(e) => e.why(),
            TrialError::Analysis(_) | TrialError::Result(_) | TrialError::Io { .. } => Cause::Run,
            TrialError::Guest(g) => g.why(),
            TrialError::Interrupted => Cause::Interrupted,
        }
    }
}

/// What a finished trial produced.
pub struct TrialOutput {
    /// Its result.json.
    pub doc: TrialResult,
    pub outcome: Box<dyn Outcome>,
    /// Every sample, by stream and phase.
    pub samples: SampleSet,
    /// Width of timeseries.csv's intervals, seconds (the workload's).
    pub interval_s: f64,
    /// Files the trial brought back besides its samples (a guest's monitor series), by their
    /// path in the trial's directory.
    pub files: Vec<(PathBuf, Vec<u8>)>,
    /// The monitors' series (`monitor/*.csv`), until `write` moves them.
    pub monitor_files: Option<monitor::Files>,
}

/// What a trial runs: the workload's name, the stack and how to build it.
pub struct Setup<'a> {
    /// The workload's name in the study (its kind unless the study names it).
    pub workload: &'a str,
    pub stack: &'a StackSpec,
    pub devices: &'a [DeviceSpec],
    pub build: BuildOptions,
    /// The monitors that watch the trial.
    pub monitor: &'a monitor::Settings,
    /// Which repeat of the workload this is (1 for the first): a power cut at a random point
    /// draws its point from it.
    pub repeat: usize,
    /// What cuts the power of the stack's devices when the trial cuts it: `None` on the host
    /// (the run's device servers), the host behind the disks in a guest.
    pub switch: Option<&'a dyn crate::stack::powercut::PowerSwitch>,
    /// Where the stream threads run.
    pub cpus: cpus::Policy,
}

/// Runs `workload` with `params` on the stack of `setup`, building it first and releasing
/// everything it made afterwards (also on error). `stop` (set by Ctrl-C / SIGTERM) ends the run
/// within a second; then `Interrupted` is returned and nothing is written.
pub fn run(
    workload: &dyn Workload,
    params: &Params,
    setup: &Setup,
    ledger: &mut Ledger,
    stop: &Arc<AtomicBool>,
    show_progress: bool,
) -> Result<TrialOutput, TrialError> {
    if let Some(vm) = setup.stack.vm.guest() {
        return run_in_guest(workload, params, setup, vm, ledger, stop);
    }
    // Recorded before the trial's own resources: the samples outlive them (until written).
    let spill = spill_dir(ledger)?;
    let mark = ledger.len();
    let mut warnings = Vec::new();
    let dir = match setup.monitor.monitors.is_empty() {
        true => None,
        false => monitor::Dir::create(ledger)
            .map_err(|e| warnings.push(format!("monitors did not start: {e}")))
            .ok(),
    };
    let result = run_built(
        workload,
        params,
        setup,
        ledger,
        stop,
        (show_progress, spill),
        dir.as_ref(),
    );
    // Everything but the monitors' files, then those unless the trial is kept.
    let mut errors = ledger.release_to(mark + usize::from(dir.is_some()));
    let files = dir.filter(|_| result.is_ok()).and_then(|d| d.keep(ledger));
    errors.extend(ledger.release_to(mark));
    let mut out = result?;
    out.monitor_files = files;
    out.doc.warnings.extend(warnings);
    out.doc
        .warnings
        .extend(errors.into_iter().map(|e| format!("cleanup: {e}")));
    Ok(out)
}

/// A fresh directory for a trial's spilled samples, in the ledger before it exists.
fn spill_dir(ledger: &mut Ledger) -> Result<PathBuf, TrialError> {
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("iotrial-samples-{}-{n}", std::process::id()));
    ledger
        .record(Resource::TempDir { path: dir.clone() })
        .map_err(|source| TrialError::Io {
            context: "write the ledger".into(),
            source,
        })?;
    Ok(dir)
}

fn run_built(
    workload: &dyn Workload,
    params: &Params,
    setup: &Setup,
    ledger: &mut Ledger,
    stop: &Arc<AtomicBool>,
    (show_progress, spill): (bool, PathBuf),
    monitor_dir: Option<&monitor::Dir>,
) -> Result<TrialOutput, TrialError> {
    let plan = crate::workload::powercut::plan_of(workload, params, setup.repeat)?.prepared();
    plan.check()?;
    let mut build = setup.build.clone();
    if plan.cuts_power() {
        if setup.switch.is_none() {
            if let Some(why) = crate::stack::powercut::refusal(setup.stack, setup.devices) {
                return Err(StackError::Invalid(why).into());
            }
        }
        build.plan_cut = true;
    }
    let started = SystemTime::now();
    let t = Instant::now();
    let mut actions = Actions::new(false).stopped_by(stop);
    let built = match provision::build(
        setup.stack,
        setup.devices,
        &plan,
        &build,
        ledger,
        &mut actions,
        stop,
    ) {
        Err(StackError::Interrupted) => return Err(TrialError::Interrupted),
        other => other?,
    };
    if let Some(f) = &built.files {
        workload.preflight(params, f.dir())?;
    }
    let pb = if show_progress {
        report::terminal::progress(0, &format!("{} on {}", workload.name(), setup.stack.name))
    } else {
        indicatif::ProgressBar::hidden()
    };
    let timeline = Arc::new(Timeline::start());
    // The monitors start before the first phase and stop after the last.
    let monitors = monitor_dir.map(|d| {
        let watch = monitor::Watch {
            settings: setup.monitor,
            devices: &built.devices,
            timeline: &timeline,
            dir: d.path(),
        };
        monitor::start(&watch, ledger)
    });
    let boundary = |closes| {
        if let Some(m) = &monitors {
            m.boundary(closes);
        }
    };
    let workload_cpus = cpus::for_stack(setup.cpus, || {
        ledger.server_stats_of(&built.devices.devices)
    });
    let walk = phases::Walk {
        cpus: workload_cpus.as_deref().and_then(CpuSet::of),
        timeline: &timeline,
        spill: spill.clone(),
        stop,
        progress: &pb,
        ledger,
        boundary: &boundary,
        switch: setup.switch,
    };
    let walked = phases::walk(&plan, &built, &walk);
    let recorded = monitors.map(|m| m.stop(ledger));
    let (samples, engine_warnings, recovery) = match walked {
        Err(TrialError::Stack(StackError::Interrupted)) => return Err(TrialError::Interrupted),
        other => other?,
    };
    if stop.load(Ordering::Relaxed) {
        return Err(TrialError::Interrupted);
    }
    let mut warnings = built.warnings.clone();
    warnings.extend(engine_warnings);
    let none_ran = || result::monitor::MonitorSummary {
        interval_s: setup.monitor.interval_s,
        ..Default::default()
    };
    let monitor = recorded.map_or_else(none_ran, |r| {
        warnings.extend(r.warnings);
        r.summary
    });
    if built.time_scale != 1.0 {
        warnings.push(format!(
            "times are the device model's: measured times multiplied by the time scale {s}, so the host's own CPU time is multiplied by {s} too, and the kernel's timers, which run in host time (a filesystem's commit interval, the page cache's 30 s writeback expiry), last {s} times as long against the device's time; compare stacks at scale 1 where either matters",
            s = crate::units::trim_float(built.time_scale)
        ));
    }
    let emulated = ledger.server_stats_of(&built.devices.devices);
    let seen = Seen {
        monitor: Some(&monitor),
        emulated: &emulated,
        time_scale: built.time_scale,
    };
    let outcome = workload.analyze(params, &samples, &seen)?;
    let durability = match &recovery {
        Some(r) => Some(
            crate::durability::judge(&plan, &samples, r, built.time_scale).map_err(|source| {
                TrialError::Io {
                    context: "read the samples to judge the power cut".into(),
                    source,
                }
            })?,
        ),
        None => None,
    };
    if let Some(d) = &durability {
        warnings.extend(d.scan_errors.iter().map(|e| format!("power-cut scan: {e}")));
    }
    let facts = RunFacts {
        started,
        elapsed_s: t.elapsed().as_secs_f64(),
        warnings,
        emulated,
        backend: BackendKind::Psync,
        monitor,
        workload_cpus,
    };
    let mut doc = document(
        workload,
        params,
        setup,
        &built,
        &samples,
        outcome.as_ref(),
        facts,
    );
    doc.durability = durability.map(|d| serde_json::to_value(d).expect("durability serializes"));
    drop(built);
    let files = kept_files(&samples, &spill)?;
    Ok(TrialOutput {
        doc,
        outcome,
        samples,
        interval_s: workload.interval(params),
        files,
        monitor_files: None,
    })
}

/// The files action phases kept beside the samples (an fsck phase's checker output, named by
/// its phase's `measured.output`), to be written into the trial's directory.
fn kept_files(samples: &SampleSet, spill: &Path) -> Result<Vec<(PathBuf, Vec<u8>)>, TrialError> {
    let names = samples
        .phases
        .iter()
        .filter_map(|p| p.measured.as_ref()?["output"].as_str());
    names
        .map(|n| {
            let data = std::fs::read(spill.join(n)).map_err(|source| TrialError::Io {
                context: format!("read the kept file {n}"),
                source,
            })?;
            Ok((PathBuf::from(n), data))
        })
        .collect()
}

/// A trial in a KVM guest: the guest builds the stack and runs the workload, this process
/// attaches the devices, re-derives the verdict from the guest's samples, and adds the
/// virtual machine (`stack.vm`), the host's emulated devices and `verdict.host_cpu_pct`.
fn run_in_guest(
    workload: &dyn Workload,
    params: &Params,
    setup: &Setup,
    vm: &crate::stack::spec::vm_key::VmSettings,
    ledger: &mut Ledger,
    stop: &Arc<AtomicBool>,
) -> Result<TrialOutput, TrialError> {
    let plan = crate::workload::powercut::plan_of(workload, params, setup.repeat)?;
    plan.check()?;
    let mut build = setup.build.clone();
    if plan.cuts_power() {
        if let Some(why) = crate::stack::powercut::refusal(setup.stack, setup.devices) {
            return Err(StackError::Invalid(why).into());
        }
        if vm.cache != crate::stack::spec::vm_key::Cache::None {
            return Err(StackError::Invalid(format!(
                "powercut: stack {} runs in a guest with cache={}: the host's page cache would hold the guest's writes where a cut of its drives cannot reach them; use cache=none",
                setup.stack.name,
                vm.cache.name()
            ))
            .into());
        }
        build.plan_cut = true;
    }
    let mark = ledger.len();
    let mut warnings = Vec::new();
    let dir = match setup.monitor.monitors.is_empty() {
        true => None,
        false => monitor::Dir::create(ledger)
            .map_err(|e| warnings.push(format!("the host's monitors did not start: {e}")))
            .ok(),
    };
    let t = crate::vm::GuestTrial {
        workload: setup.workload,
        kind: workload.name(),
        params: params.assignments(),
        stack: setup.stack,
        devices: setup.devices,
        build: &build,
        settings: vm,
        monitor: setup.monitor,
        host_monitor_dir: dir.as_ref().map(|d| d.path()),
        repeat: setup.repeat,
        cuts_power: plan.cuts_power(),
        host_cpus: &|servers| cpus::for_stack(setup.cpus, || servers),
    };
    let got = crate::vm::run(&t, ledger, stop).and_then(|g| {
        let files = guest_files(&g)?;
        let doc = result::read(&g.dir.join("result.json"));
        let samples = doc
            .as_ref()
            .ok()
            .map(|d| result::read_samples(&g.dir.join("samples.csv"), Some(d)));
        Ok((doc, samples, files, g))
    });
    let emulated = ledger.server_stats();
    let mut errors = ledger.release_to(mark + usize::from(dir.is_some()));
    let monitor_files = dir.filter(|_| got.is_ok()).and_then(|d| d.keep(ledger));
    errors.extend(ledger.release_to(mark));
    let (doc, samples, files, g) = match got {
        Err(crate::vm::VmError::Interrupted) => return Err(TrialError::Interrupted),
        other => other?,
    };
    let mut doc = doc?;
    let samples = samples.expect("read with the document")?;
    let seen = Seen {
        monitor: Some(&doc.monitor),
        emulated: &emulated,
        time_scale: doc.time_scale,
    };
    let outcome = workload.analyze(params, &samples, &seen)?;
    doc.stack["vm"] = g.vm;
    doc.stack["host_devices"] = json!(g.host_devices);
    if !emulated.is_empty() {
        doc.stack["emulated"] = json!(emulated);
    }
    doc.verdict[result::HOST_CPU_PCT] = json!(g.host_cpu_pct);
    doc.target.workload_cpus = g.host_cpus.clone();
    // Where the trial ran is this host; the guest's own view (its kernel, its virtual disks)
    // is kept beside the virtual machine.
    let host = crate::result::fingerprint::Fingerprint {
        host: fingerprint::host(),
        sysctl: fingerprint::sysctls(),
        ..doc.fingerprint.clone().unwrap_or_default()
    };
    if let Some(guest) = doc.fingerprint.replace(host) {
        doc.stack["vm"]["guest_fingerprint"] = json!(guest);
    }
    // result.json's `monitor` is the host's (QEMU's threads among the host's); the guest's own
    // is kept beside the virtual machine.
    if let Some(host) = g.host_monitor {
        let guest = std::mem::replace(&mut doc.monitor, host.summary);
        doc.stack["vm"]["guest_monitor"] = json!(guest);
        warnings.extend(host.warnings);
    }
    doc.target.spec = setup
        .devices
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(" ");
    doc.warnings.extend(g.warnings);
    doc.warnings.extend(warnings);
    doc.warnings
        .extend(errors.into_iter().map(|e| format!("cleanup: {e}")));
    Ok(TrialOutput {
        doc,
        outcome,
        samples,
        interval_s: workload.interval(params),
        files,
        monitor_files,
    })
}

/// The files a guest's trial brought back besides result.json and its samples.
fn guest_files(g: &crate::vm::GuestRun) -> Result<Vec<(PathBuf, Vec<u8>)>, crate::vm::VmError> {
    let own = ["result.json", "samples.csv", "timeseries.csv"];
    g.files
        .iter()
        .filter(|f| !own.contains(&f.to_string_lossy().as_ref()))
        .map(|f| {
            let data = std::fs::read(g.dir.join(f))
                .map_err(|e| crate::vm::VmError::io("read the guest's files", e))?;
            Ok((f.clone(), data))
        })
        .collect()
}

/// What result.json records of a run besides the stack and the analysis.
struct RunFacts {
    started: SystemTime,
    elapsed_s: f64,
    /// Caveats so far (the analysis adds its own).
    warnings: Vec<String>,
    /// Statistics of the emulated devices' servers.
    emulated: Vec<serde_json::Value>,
    backend: BackendKind,
    /// What the monitors saw.
    monitor: result::monitor::MonitorSummary,
    /// The CPUs the stream threads ran on (None: every CPU the process may use).
    workload_cpus: Option<Vec<usize>>,
}

/// The trial's result.json: the one place it is made.
fn document(
    workload: &dyn Workload,
    params: &Params,
    setup: &Setup,
    built: &provision::Built,
    samples: &SampleSet,
    outcome: &dyn Outcome,
    mut facts: RunFacts,
) -> TrialResult {
    facts.warnings.extend(outcome.warnings());
    let mut stack = built.as_built.clone();
    if !facts.emulated.is_empty() {
        stack["emulated"] = json!(facts.emulated);
    }
    // Figures taken while an emulated device's replies were late are flagged with the trial.
    let late = result::emulated::EmulatedDevice::all_in(&stack);
    facts.warnings.extend(
        late.iter()
            .filter_map(|d| d.warning_in(&facts.monitor.late_seconds)),
    );
    let spec: Vec<String> = setup.devices.iter().map(|d| d.to_string()).collect();
    let mkfs = stack["mkfs"]["version"].as_str();
    let fingerprint = fingerprint::take(&built.devices, mkfs);
    TrialResult {
        format_version: result::FORMAT_VERSION,
        iotrial_version: env!("CARGO_PKG_VERSION").to_string(),
        workload: setup.workload.to_string(),
        kind: workload.name().to_string(),
        params: result::params_object(params),
        target: TrialTarget {
            spec: spec.join(" "),
            layout: setup.stack.layout.name().to_string(),
            direct_io: built.direct_ok,
            backend: facts.backend.name().to_string(),
            workload_cpus: facts.workload_cpus,
        },
        stack,
        time_scale: built.time_scale,
        started_utc: utc_iso(facts.started),
        duration_s: facts.elapsed_s,
        warnings: facts.warnings,
        phases: samples.phases.clone(),
        streams: outcome.streams_json(),
        verdict: outcome.verdict_json(),
        monitor: facts.monitor,
        fingerprint: Some(fingerprint),
        trial: None,
        durability: None,
    }
}

/// Writes result.json, samples.csv, timeseries.csv, the monitors' `monitor/*.csv` and the
/// files a guest brought back into `dir`.
pub fn write(dir: &Path, out: &TrialOutput) -> Result<(), ResultError> {
    if let Some(f) = &out.monitor_files {
        let m = dir.join("monitor");
        f.move_into(&m).map_err(|e| ResultError::io(&m, e))?;
    }
    for (name, data) in &out.files {
        let path = dir.join(name);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(|e| ResultError::io(p, e))?;
        }
        std::fs::write(&path, data).map_err(|e| ResultError::io(&path, e))?;
    }
    let samples = dir.join("samples.csv");
    result::csv::write_samples(&samples, &out.samples)?;
    out.outcome
        .write_files(&out.samples, dir)
        .map_err(|e| ResultError::io(dir, e))?;
    let series = timeseries::per_interval(&out.samples, out.interval_s, &out.outcome.buffers())
        .map_err(|e| ResultError::io(&samples, e))?;
    result::csv::write_timeseries(&dir.join("timeseries.csv"), &series)?;
    result::write(&dir.join("result.json"), &out.doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Op, Pacing, Pattern, Plan, StreamPlan};
    use crate::params::{Kind, ParamError, ParamSpec};
    use crate::present::Rows;
    use crate::workload::AnalysisError;
    use serde_json::Value as Json;

    /// A workload with neither a `direct` nor a `seed` parameter: one buffered write stream.
    struct Tiny;

    static TINY_PARAMS: &[ParamSpec] = &[ParamSpec::new("ios", Kind::Count, "4", "I/Os")];

    struct TinyOutcome(usize);

    impl Outcome for TinyOutcome {
        fn streams_json(&self) -> Vec<Json> {
            Vec::new()
        }
        fn verdict_json(&self) -> Json {
            json!({"ios": self.0})
        }
        fn stream_rows(&self) -> Rows {
            Rows::default()
        }
        fn verdict_line(&self) -> String {
            format!("{} I/Os", self.0)
        }
        fn warnings(&self) -> Vec<String> {
            Vec::new()
        }
    }

    impl Workload for Tiny {
        fn name(&self) -> &'static str {
            "tiny"
        }
        fn about(&self) -> &'static str {
            "test workload"
        }
        fn params(&self) -> &'static [ParamSpec] {
            TINY_PARAMS
        }
        fn plan(&self, p: &Params) -> Result<Plan, ParamError> {
            let stream = StreamPlan {
                name: "w0".into(),
                role: "w".into(),
                op: Op::Write,
                region_len: 64 << 10,
                io_size: 4096,
                pattern: Pattern::Random,
                pacing: Pacing::Max,
                samples: p.u64("ios") as usize,
                io: Default::default(),
                source: None,
            };
            Ok(Plan::sampled("run", vec![stream], false, 3))
        }
        fn analyze(
            &self,
            _: &Params,
            samples: &SampleSet,
            _: &Seen,
        ) -> Result<Box<dyn Outcome>, AnalysisError> {
            Ok(Box::new(TinyOutcome(samples.load()?[0].samples.len())))
        }
        fn report(&self) -> &'static dyn crate::present::KindReport {
            &crate::present::kind::example::TestKind
        }
    }

    #[test]
    fn a_workload_without_direct_or_seed_parameters_runs() {
        let params = Tiny.resolve(&[("ios".into(), "5".into())]).unwrap();
        let stack = StackSpec {
            name: "tmp".into(),
            ..Default::default()
        };
        let setup = Setup {
            workload: "tiny",
            stack: &stack,
            devices: &[DeviceSpec::TempDir],
            build: BuildOptions::default(),
            monitor: &monitor::Settings::parse("none", "1s").unwrap(),
            repeat: 1,
            switch: None,
            cpus: cpus::Policy::All,
        };
        let mut ledger = Ledger::detached();
        let stop = Arc::new(AtomicBool::new(false));
        let out = run(&Tiny, &params, &setup, &mut ledger, &stop, false).unwrap();
        assert_eq!(out.samples.load().unwrap()[0].samples.len(), 5);
        assert_eq!(json!(out.doc.params), json!({"ios": 5}));
        assert!(!out.doc.target.direct_io);
        assert_eq!(out.doc.phases.len(), 2);
        assert_eq!(out.doc.phases[0].kind, "prepare");
        assert_eq!(out.doc.phases[1].samples, 5);
        assert_eq!(
            ledger.len(),
            1,
            "all but the samples' spill directory was released"
        );
        drop(out);
        let released = ledger.release_all();
        assert!(released.is_empty(), "{released:?}");
    }
}
