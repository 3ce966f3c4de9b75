//! Walking a plan's phases on a built stack: stream phases run on the engine, action phases are
//! done by the stack, each marked on the trial's [`Timeline`] as it begins and ends, so samples,
//! time series and monitor rows all carry their phase. Ends with every sample and the phases as
//! they ran (result.json's `phases`). A stream phase followed by a `powercut` phase has the
//! stack's power cut during it ([`Armed`]): it ends when the power goes, and the powercut phase
//! recovers the stack ([`crate::stack::powercut`]).

use super::TrialError;
use crate::engine::cpus::CpuSet;
use crate::engine::realtime::Tally;
use crate::engine::{Action, IdleRecord};
use crate::engine::{
    BackendKind, Engine, EngineOptions, Keep, PhaseRecord, Plan, SampleSet, Step, Stop,
};
use crate::engine::{CutWhen, PowerCut};
use crate::stack::build::provision::Built;
use crate::stack::ledger::Ledger;
use crate::stack::phases::action_phase::ActionCtx;
use crate::stack::powercut::{self, HostSwitch, PowerSwitch, Recovery};
use crate::stack::{phases::action_phase, phases::idle, StackError};
use crate::timeline::{Outside, Span, Timeline};
use indicatif::ProgressBar;
use std::cell::Cell;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What a walk needs besides the plan and the stack.
pub struct Walk<'a> {
    /// The CPUs the stream threads run on (None: every CPU the process may use).
    pub cpus: Option<CpuSet>,
    pub timeline: &'a Timeline,
    /// Where the samples are spilled, and the files action phases keep (the checker's output)
    /// until the trial is written.
    pub spill: PathBuf,
    pub stop: &'a AtomicBool,
    pub progress: &'a ProgressBar,
    /// The run's ledger: the device servers an `idle` phase asks.
    pub ledger: &'a Ledger,
    /// Called at every phase boundary, before the first phase begins and before each phase is
    /// marked ended, with the part of the trial that closes there: the monitors read their
    /// counters.
    pub boundary: &'a dyn Fn(Span),
    /// What cuts the devices' power in a plan with a power cut; `None`: the run's device
    /// servers on this host.
    pub switch: Option<&'a dyn PowerSwitch>,
}

/// A power cut armed for the stream phase that runs: when it is due, and whether it came.
struct Armed<'a> {
    switch: &'a dyn PowerSwitch,
    /// The instant of a cut at a time (real time).
    deadline: Option<Instant>,
    /// A cut after N writes: the device servers say when it came.
    after_writes: bool,
    came: Cell<bool>,
    error: Cell<Option<String>>,
}

impl<'a> Armed<'a> {
    /// Wires the stack's devices for `cut`, due that long after now (time scale `scale`).
    fn new(switch: &'a dyn PowerSwitch, cut: PowerCut, scale: f64) -> Result<Self, StackError> {
        let (in_ns, after) = match cut.when {
            CutWhen::At { ns } => (Some((ns as f64 / scale) as u64), None),
            CutWhen::AfterWrites(n) => (None, Some(n)),
        };
        switch
            .arm(in_ns, after)
            .map_err(|e| StackError::Command(format!("power cut: {e}")))?;
        Ok(Armed {
            switch,
            deadline: in_ns.map(|d| Instant::now() + Duration::from_nanos(d)),
            after_writes: after.is_some(),
            came: Cell::new(false),
            error: Cell::new(None),
        })
    }

    /// Whether the cut came (asking the device servers for a cut after N writes).
    fn came(&self) -> bool {
        if self.came.get() {
            return true;
        }
        let now = match self.deadline {
            Some(d) => Instant::now() >= d,
            None if self.after_writes => match self.switch.went() {
                Ok(w) => w.is_some(),
                Err(e) => {
                    self.error.set(Some(e));
                    true
                }
            },
            None => false,
        };
        self.came.set(now);
        now
    }
}

/// The switch of the stack's emulated devices on this host.
fn host_switch<'a>(built: &Built, ledger: &'a Ledger) -> Result<HostSwitch<'a>, StackError> {
    let mountpoints = built
        .devices
        .devices
        .iter()
        .filter_map(|d| d.emulated.clone())
        .collect();
    HostSwitch::new(ledger, mountpoints).map_err(StackError::Invalid)
}

/// What [`walk`] returns: every sample, what the kernel refused the streams' backends
/// (warnings), and what a power cut's recovery found.
pub type Walked = (SampleSet, Vec<String>, Option<Recovery>);

/// Runs every phase of `plan` on `built` in order.
pub fn walk(plan: &Plan, built: &Built, w: &Walk) -> Result<Walked, TrialError> {
    let scale = built.time_scale;
    let opts = EngineOptions {
        direct: built.direct_ok,
        backend: BackendKind::Psync,
        time_scale: scale,
        cpus: w.cpus,
    };
    let keep = Keep::Spill(w.spill.clone());
    let mut engine = Engine::new(plan, &built.placements, opts, w.timeline.origin(), keep)?;
    let mut records = Vec::with_capacity(plan.phases.len());
    let own_switch = match (plan.cuts_power(), w.switch) {
        (true, None) => Some(host_switch(built, w.ledger)?),
        _ => None,
    };
    let switch: Option<&dyn PowerSwitch> = match &own_switch {
        Some(s) => Some(s),
        None => w.switch,
    };
    let mut recovery = None;
    // A plan that waits for the devices' background work has its action phases say how much
    // the devices had done by their end (tree's cleaning after a phase).
    let waits_for_idle = plan
        .phases
        .iter()
        .any(|p| matches!(p.step, Step::Action(Action::Idle(_))));
    for (i, phase) in plan.phases.iter().enumerate() {
        if w.stop.load(Ordering::Relaxed) {
            return Err(TrialError::Interrupted);
        }
        if i == 0 {
            (w.boundary)(Span::Outside(Outside::Before));
        }
        w.timeline.begin(&phase.name, phase.step.kind());
        let (mut idled, mut background): (Option<IdleRecord>, Option<f64>) = (None, None);
        let (sampling_ns, samples, stop, cpu_s, measured) = match &phase.step {
            Step::Prepare => {
                w.progress
                    .set_message(format!("{}: laying out the streams' files", phase.name));
                engine.prepare(w.stop).map_err(|e| match e {
                    crate::engine::EngineError::Interrupted => TrialError::Interrupted,
                    e => e.into(),
                })?;
                (None, 0, None, None, None)
            }
            Step::Streams { stop, streams } => {
                show(w.progress, &phase.name, plan, streams, *stop, scale);
                let armed = match (plan.power_cut(i + 1), switch) {
                    (Some(c), Some(s)) => Some(Armed::new(s, c, scale)?),
                    _ => None,
                };
                let out = engine.run_phase(i, |p| {
                    if w.stop.load(Ordering::Relaxed) || armed.as_ref().is_some_and(Armed::came) {
                        p.request_stop();
                    }
                    w.progress.set_position(progress_of(*stop, p, w.timeline));
                })?;
                if w.stop.load(Ordering::Relaxed) {
                    return Err(TrialError::Interrupted);
                }
                if let Some(a) = &armed {
                    if let Some(e) = a.error.take() {
                        return Err(StackError::Command(format!("power cut: {e}")).into());
                    }
                    if !a.came() {
                        return Err(cut_never_came(plan, i, w.timeline).into());
                    }
                } else if out.incomplete {
                    return Err(TrialError::Interrupted);
                }
                // What the streams' generators found (verify mismatches), by stream.
                let found = (!out.reports.is_empty()).then(|| {
                    serde_json::json!({
                        "streams": out.reports.into_iter().collect::<serde_json::Map<_, _>>()
                    })
                });
                (
                    out.sampling_start_ns,
                    out.samples,
                    Some(stop.describe()),
                    Some(out.cpu_s),
                    merged(buffers_measured(&out.buffers), found),
                )
            }
            Step::Action(a) => {
                w.progress
                    .set_message(format!("{} ({})", phase.name, a.name()));
                let ctx = ActionCtx {
                    phase: &phase.name,
                    dir: &w.spill,
                    checker_args: &plan.checker_args,
                    stop: w.stop,
                    outstanding_ns: &|| idle::outstanding_ns(built, w.ledger),
                };
                let measured = match a {
                    Action::Idle(limits) => {
                        let began = Instant::now();
                        let mut rec = idle::wait(built, w.ledger, *limits, w.stop)?;
                        if rec.how == "diskstats" && !rec.capped {
                            let disks = super::calm::named_disks(built, w.ledger);
                            if !disks.is_empty() {
                                let waited = began.elapsed();
                                super::calm::settle_disks(
                                    &mut rec, &disks, *limits, waited, w.stop,
                                )?;
                            }
                        }
                        idled = Some(rec);
                        None
                    }
                    Action::PowerCut(_) => {
                        let switch = switch.ok_or_else(|| {
                            StackError::Invalid("a power cut needs the devices' switch".into())
                        })?;
                        let rctx = powercut::RecoverCtx {
                            phase: &phase.name,
                            dir: &w.spill,
                            checker_args: &plan.checker_args,
                            stop: w.stop,
                            origin: w.timeline.origin(),
                        };
                        let (r, measured) = powercut::recover(plan, i, built, switch, &rctx)?;
                        recovery = Some(r);
                        Some(measured)
                    }
                    _ => action_phase::perform(*a, built, &ctx)?,
                };
                if waits_for_idle {
                    background = idle::worked_s(built, w.ledger)?;
                }
                (None, 0, None, None, measured)
            }
        };
        (w.boundary)(Span::Phase(phase.name.clone()));
        w.timeline.end();
        let span = w.timeline.phases().pop().expect("the phase just marked");
        records.push(PhaseRecord {
            name: span.name,
            kind: span.kind,
            start_s: span.start_s * scale,
            end_s: span.end_s.map(|e| e * scale),
            sampling_start_s: sampling_ns.map(|ns| PhaseRecord::sampling_start_of(ns, scale)),
            stop,
            samples,
            cpu_s,
            idle: idled,
            background_s: background,
            measured,
        });
    }
    w.progress.finish_and_clear();
    let warnings = engine.warnings().to_vec();
    Ok((engine.finish(records)?, warnings, recovery))
}

/// The stream phase `i` ended before the power cut planned in it came: the cut is not inside
/// the phase (the user's input).
fn cut_never_came(plan: &Plan, i: usize, t: &Timeline) -> StackError {
    let name = &plan.phases[i].name;
    let lasted = t.phases().last().map_or(0.0, |s| t.now_s() - s.start_s);
    let when = match plan.power_cut(i + 1).map(|c| c.when) {
        Some(CutWhen::At { ns }) => format!("at {} s", crate::units::trim_float(ns as f64 / 1e9)),
        Some(CutWhen::AfterWrites(n)) => format!("after the devices' {n}-th write"),
        None => "planned".into(),
    };
    StackError::Invalid(format!(
        "powercut: phase {name} ended after {lasted:.1} s of real time, before the cut {when} came; set a cut inside the phase"
    ))
}

/// A stream phase's `measured`: each real-time stream's buffer as it counted it live
/// (`{"buffers": [{"stream": "record0", "generated": ..., ...}]}`), which the analysis checks
/// its replay against; `None` without real-time streams.
fn buffers_measured(buffers: &[(String, Tally)]) -> Option<serde_json::Value> {
    if buffers.is_empty() {
        return None;
    }
    let list: Vec<serde_json::Value> = buffers
        .iter()
        .map(|(name, t)| {
            let mut v = serde_json::to_value(t).expect("a tally serializes");
            v["stream"] = serde_json::json!(name);
            v
        })
        .collect();
    Some(serde_json::json!({ "buffers": list }))
}

/// One phase's `measured` from the real-time buffers' and the generators' parts.
fn merged(a: Option<serde_json::Value>, b: Option<serde_json::Value>) -> Option<serde_json::Value> {
    match (a, b) {
        (Some(serde_json::Value::Object(mut x)), Some(serde_json::Value::Object(y))) => {
            x.extend(y);
            Some(serde_json::Value::Object(x))
        }
        (a, b) => a.or(b),
    }
}

/// Sets the progress bar up for a stream phase: samples for all-have-N, tenths of a second for
/// a duration, operations for the other stop conditions.
fn show(pb: &ProgressBar, name: &str, plan: &Plan, streams: &[usize], stop: Stop, scale: f64) {
    let ops = |per: &dyn Fn(usize) -> u64| streams.iter().map(|&i| per(i)).sum::<u64>();
    let (len, unit) = match stop {
        Stop::AllHaveN => (ops(&|i| plan.streams[i].samples as u64), "samples"),
        Stop::Duration(s) => ((s / scale * 10.0).ceil() as u64, "tenths of a second"),
        Stop::Bytes(b) => (ops(&|i| b.div_ceil(plan.streams[i].io_size)), "I/Os"),
        Stop::Ops(n) => (n * streams.len() as u64, "I/Os"),
        Stop::OpsEnd => (0, "I/Os"),
    };
    pb.reset();
    pb.set_length(len);
    pb.set_message(format!("{name}: {unit}"));
}

/// Where the bar stands in a stream phase.
fn progress_of(stop: Stop, p: &crate::engine::Protocol, t: &Timeline) -> u64 {
    match stop {
        Stop::Duration(_) => {
            let started = t.phases().last().map_or(0.0, |s| s.start_s);
            ((t.now_s() - started) * 10.0).max(0.0) as u64
        }
        _ => p.total_collected() as u64,
    }
}
