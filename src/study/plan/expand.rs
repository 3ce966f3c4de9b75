//! Expansion of a study into its trials: `--quick`, `--only` and `--device` are applied, sweeps
//! are expanded into one workload or stack per value ([`sweep`]), every workload parameter is
//! resolved, and the trials come out in run order: round-robin, repeat 1 of every stack before
//! repeat 2 of any (so a drift of the host over the study spreads over every stack instead of
//! reading as a difference between them), within a repeat the stacks in study order and each
//! stack's workloads in study order. Every trial builds its stack afresh.

use super::file::{Quick, Study, WorkloadEntry};
use super::shard::Shard;
use crate::capacity::CapacitySpec;
use crate::params::Params;
use crate::stack::{DeviceSpec, StackSpec};
use crate::study::error::StudyError;
use crate::study::{plan::identity, plan::sweep, Assignments};
use crate::workload::{self, Workload};
use serde::{Deserialize, Serialize};

/// How the user asked the study to run.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Options {
    /// `--quick`: apply the study's `[quick]` tables.
    pub quick: bool,
    /// `--only STACK[,STACK]`: run only these stacks (each entry may hold a comma list).
    pub only: Vec<String>,
    /// `--device SPEC`: replaces every stack's devices (kept as text; parsed by the stack layer).
    pub device: Option<String>,
    /// `--shard K/N`: only the trials of this shard ([`Shard::holds`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// `--trial ID`: only these trials (ids or digests).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trials: Vec<String>,
    /// `--repeats N`: replaces the study's `repeats` (and `[quick] repeats`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<u32>,
    /// `--max-repeats N`: replaces the study's `max_repeats`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_repeats: Option<u32>,
    /// `--interval P%`: replaces the study's `interval`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<super::repeats::Percent>,
}

impl Options {
    /// Whether these options take only part of the study's trials.
    pub fn selects(&self) -> bool {
        self.shard.is_some() || !self.trials.is_empty()
    }

    /// The part of the study they take, in words (`shard 2/3`, `trial ext4/dvr/r1`), or None
    /// for the whole study.
    pub fn part(&self) -> Option<String> {
        if let Some(s) = self.shard {
            return Some(format!("shard {s}"));
        }
        (!self.trials.is_empty()).then(|| format!("trial {}", self.trials.join(", ")))
    }
}

/// One workload on one stack, once.
#[derive(Debug, Clone, PartialEq)]
pub struct Trial {
    /// `<stack>/<workload>/r<repeat>`.
    pub id: String,
    pub stack: StackSpec,
    /// The workload entry's name (its kind unless the study names it).
    pub workload: String,
    /// The workload kind (`dvr`).
    pub kind: String,
    pub params: Params,
    /// 1-based.
    pub repeat: usize,
    /// Its place in the whole study's run order, from 0 (what `--shard` partitions).
    pub position: usize,
    /// [`identity::trial_digest`]: the same for the same trial on every machine.
    pub digest: String,
    /// A capacity search instead of one run.
    pub capacity: Option<CapacitySpec>,
}

impl Trial {
    /// The id of a trial.
    pub fn make_id(stack: &str, workload: &str, repeat: usize) -> String {
        format!("{stack}/{workload}/r{repeat}")
    }

    /// Whether `name` names this trial: its id or its digest.
    pub fn is(&self, name: &str) -> bool {
        self.id == name || self.digest == name
    }

    /// The workload kind's implementation.
    pub fn workload_impl(&self) -> &'static dyn Workload {
        workload::find(&self.kind).expect("workload kinds are checked when a study is parsed")
    }
}

/// A study as it will run, and its trials.
#[derive(Debug, Clone, PartialEq)]
pub struct Expansion {
    /// The resolved study: overrides applied, `[quick]` folded in, every parameter and every
    /// stack's devices written out. What study.toml and the manifest record.
    pub study: Study,
    pub options: Options,
    pub trials: Vec<Trial>,
}

/// The stack names `--only` asks for, checked against the study.
fn only_names(study: &Study, only: &[String]) -> Result<Vec<String>, StudyError> {
    let mut names = Vec::new();
    let expanded: Vec<StackSpec> = study.stacks.iter().flat_map(StackSpec::expand_vm).collect();
    for n in only.iter().flat_map(|s| s.split(',')).map(str::trim) {
        if n.is_empty() {
            continue;
        }
        // A swept stack's names are its name, `-`, and a value of its sweep.
        let known = |s: &StackSpec| s.name == n || n.starts_with(&format!("{}-", s.name));
        if !study.stacks.iter().chain(&expanded).any(known) {
            return Err(StudyError::UnknownStack {
                study: study.name.clone(),
                name: n.to_string(),
                known: study
                    .stacks
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        names.push(n.to_string());
    }
    Ok(names)
}

/// The study with `opts` applied and everything written out (see [`Expansion::study`]).
pub fn resolve(study: &Study, opts: &Options) -> Result<Study, StudyError> {
    resolve_with_params(study, opts).map(|(s, _)| s)
}

/// [`resolve`], with each workload's resolved parameters.
fn resolve_with_params(study: &Study, opts: &Options) -> Result<(Study, Vec<Params>), StudyError> {
    let quick = if opts.quick {
        study.quick.clone()
    } else {
        Quick::default()
    };
    // --quick runs the stacks its table names, unless --only picks others.
    let only = if opts.only.is_empty() {
        quick.stacks.clone()
    } else {
        opts.only.clone()
    };
    let only = only_names(study, &only)?;
    let device = opts
        .device
        .clone()
        .or(quick.device.clone())
        .or(study.device.clone());
    let mut named = study.devices.clone();
    named.extend(quick.devices.clone());
    let mut workloads = Vec::new();
    let mut resolved_params = Vec::new();
    for w in &study.workloads {
        let set = if opts.quick {
            w.set.then(&quick.set).then(&w.quick)
        } else {
            w.set.clone()
        };
        let wl = w.workload().map_err(|e| StudyError::Param {
            study: study.name.clone(),
            workload: w.name.clone(),
            source: crate::params::ParamError::invalid("kind", e.to_string()),
        })?;
        let param_error = |source| StudyError::Param {
            study: study.name.clone(),
            workload: w.name.clone(),
            source,
        };
        for (name, set) in sweep::workloads(&w.name, &set).map_err(param_error)? {
            let params = wl
                .resolve(set.pairs())
                .and_then(|p| wl.plan(&p).map(|_| p))
                .map_err(param_error)?;
            if workloads.iter().any(|o: &WorkloadEntry| o.name == name) {
                return Err(param_error(crate::params::ParamError::invalid(
                    "name",
                    format!("the sweep makes a workload named {name}, which the study already has; rename one"),
                )));
            }
            workloads.push(WorkloadEntry {
                name,
                kind: w.kind.clone(),
                set: Assignments(params.assignments()),
                quick: Assignments::default(),
                capacity: w.capacity.clone(),
            });
            resolved_params.push(params);
        }
    }
    let mut stacks = Vec::new();
    // A `vm` list stands for one stack per entry; --only takes its name or theirs.
    let listed = study
        .stacks
        .iter()
        .flat_map(|s| s.expand_vm().into_iter().map(move |e| (s.name.clone(), e)));
    for (base, s) in listed {
        let mut s = s.clone();
        name_devices(&mut s, &named);
        // A stack that names a directory is a host-filesystem baseline: --device leaves it be.
        let on_dir = !s.devices.is_empty()
            && s.devices
                .iter()
                .all(|d| DeviceSpec::parse(d).is_ok_and(|d| !d.needs_root()));
        if let (Some(d), false) = (&opts.device, on_dir) {
            s.devices = vec![d.clone()];
        } else if s.devices.is_empty() {
            match &device {
                Some(d) => s.devices = vec![d.clone()],
                None => {
                    return Err(StudyError::NoDevice {
                        study: study.name.clone(),
                        stack: s.name.clone(),
                    })
                }
            }
        }
        for s in swept_stacks(study, &s)? {
            if !only.is_empty() && !only.contains(&s.name) && !only.contains(&base) {
                continue;
            }
            if stacks.iter().any(|o: &StackSpec| o.name == s.name) {
                return Err(StudyError::Invalid {
                    study: study.name.clone(),
                    message: format!("the device sweep makes a stack named {}, which the study already has; rename one", s.name),
                });
            }
            check_on_devices(study, &s)?;
            stacks.push(s);
        }
    }
    let resolved = Study {
        name: study.name.clone(),
        description: study.description.clone(),
        repeats: opts.repeats.or(quick.repeats).unwrap_or(study.repeats),
        max_repeats: opts.max_repeats.or(quick.max_repeats).or(study.max_repeats),
        interval: opts.interval.or(quick.interval).or(study.interval),
        noise: study.noise,
        note: quick.note.clone().or(study.note.clone()),
        out: study.out.clone(),
        device,
        // Every name is replaced by its spec in the stacks.
        devices: Default::default(),
        quick: Quick::default(),
        workloads,
        stacks,
        monitor: study.monitor.clone(),
        workload_cpus: study.workload_cpus,
        pause: quick.pause.unwrap_or(study.pause),
    };
    Ok((resolved, resolved_params))
}

/// The study `iotrial run` makes of one workload kind with `params` on one stack, once: what
/// its results directory's study.toml and manifest record.
pub fn single_run(
    kind: &str,
    params: &Params,
    stack: StackSpec,
    on: &Single,
) -> Result<Expansion, StudyError> {
    single(kind, params, stack, on, None)
}

/// What a one-trial study runs under besides its workload and stack: its monitors, and where
/// its stream threads run.
#[derive(Debug, Clone, Copy)]
pub struct Single<'a> {
    pub monitor: &'a crate::monitor::Settings,
    pub cpus: crate::trial::cpus::Policy,
}

/// The study `iotrial capacity` makes: [`single_run`] with a capacity search.
pub fn single_capacity(
    kind: &str,
    params: &Params,
    stack: StackSpec,
    on: &Single,
    capacity: CapacitySpec,
) -> Result<Expansion, StudyError> {
    single(kind, params, stack, on, Some(capacity))
}

fn single(
    kind: &str,
    params: &Params,
    stack: StackSpec,
    on: &Single,
    capacity: Option<CapacitySpec>,
) -> Result<Expansion, StudyError> {
    let verb = if capacity.is_some() {
        "capacity"
    } else {
        "run"
    };
    let study = Study {
        name: kind.to_string(),
        description: format!("iotrial {verb} {kind} on {}", stack.devices.join(" ")),
        repeats: 1,
        max_repeats: None,
        interval: None,
        noise: None,
        note: None,
        out: None,
        device: None,
        devices: Default::default(),
        quick: Quick::default(),
        workloads: vec![crate::study::WorkloadEntry {
            name: kind.to_string(),
            kind: kind.to_string(),
            set: Assignments(params.assignments()),
            quick: Assignments::default(),
            capacity,
        }],
        stacks: vec![stack],
        monitor: on.monitor.clone(),
        workload_cpus: on.cpus,
        pause: Default::default(),
    };
    expand(&study, &Options::default())
}

/// The stacks a stack's device sweep makes (`emu:hdd,size={38GiB,72GiB}`): one per value,
/// named `<stack>-<value>`; the stack itself when its devices sweep nothing.
fn swept_stacks(study: &Study, s: &StackSpec) -> Result<Vec<StackSpec>, StudyError> {
    let choices =
        sweep::devices(&s.devices, s.logdev.as_deref()).map_err(|message| StudyError::Invalid {
            study: study.name.clone(),
            message: format!("stack {}: {message}", s.name),
        })?;
    Ok(choices
        .into_iter()
        .map(|(suffix, devices, logdev)| StackSpec {
            name: format!("{}{suffix}", s.name),
            devices,
            logdev,
            ..s.clone()
        })
        .collect())
}

/// Replaces the names of `named` devices in a stack's devices and log device by their specs.
fn name_devices(s: &mut StackSpec, named: &std::collections::BTreeMap<String, String>) {
    let spec = |d: &String| named.get(d).cloned().unwrap_or_else(|| d.clone());
    s.devices = s.devices.iter().map(spec).collect();
    s.logdev = s.logdev.as_ref().map(spec);
}

/// Checks what a stack takes of its devices, now they are known. A device this host cannot
/// build is left to its trials, which are skipped with the reason.
fn check_on_devices(study: &Study, s: &StackSpec) -> Result<(), StudyError> {
    let devices: Result<Vec<DeviceSpec>, _> =
        s.devices.iter().map(|d| DeviceSpec::parse(d)).collect();
    let logdev = s.logdev.as_deref().map(DeviceSpec::parse).transpose();
    let (Ok(devices), Ok(logdev)) = (devices, logdev) else {
        return Ok(());
    };
    s.check_devices(&devices, logdev.as_ref())
        .map_err(|source| StudyError::Stack {
            study: study.name.clone(),
            source,
        })
}

/// The trials of `study` run with `opts`, in run order: every trial, or those `--shard` or
/// `--trial` select.
pub fn expand(study: &Study, opts: &Options) -> Result<Expansion, StudyError> {
    let (resolved, params_of) = resolve_with_params(study, opts)?;
    let mut trials = Vec::new();
    for r in 1..=resolved.repeats as usize {
        for s in &resolved.stacks {
            for (w, params) in resolved.workloads.iter().zip(&params_of) {
                trials.push(make_trial(s, w, params, r, trials.len()));
            }
        }
    }
    let trials = select(&resolved, trials, opts)?;
    Ok(Expansion {
        study: resolved,
        options: opts.clone(),
        trials,
    })
}

/// Repeat `r` of workload `w` (with its resolved `params`) on stack `s`, at `position` in the
/// run order.
fn make_trial(
    s: &StackSpec,
    w: &WorkloadEntry,
    params: &Params,
    r: usize,
    position: usize,
) -> Trial {
    Trial {
        id: Trial::make_id(&s.name, &w.name, r),
        stack: s.clone(),
        workload: w.name.clone(),
        kind: w.kind.clone(),
        params: params.clone(),
        repeat: r,
        position,
        digest: identity::trial_digest(&w.name, &w.kind, params, s, r),
        capacity: w.capacity.clone(),
    }
}

/// Repeat `repeat` of workload `workload` on stack `stack` of the resolved study `study`,
/// beyond its `repeats` (a repeat the study adds while an interval is too wide), placed after
/// the `placed` trials already in the run order; None when the study has no such stack or
/// workload.
pub fn extra_trial(
    study: &Study,
    stack: &str,
    workload: &str,
    repeat: usize,
    placed: usize,
) -> Result<Option<Trial>, StudyError> {
    let (Some(s), Some((i, w))) = (
        study.stacks.iter().find(|s| s.name == stack),
        study
            .workloads
            .iter()
            .enumerate()
            .find(|(_, w)| w.name == workload),
    ) else {
        return Ok(None);
    };
    let (_, params) = resolve_with_params(study, &Options::default())?;
    Ok(Some(make_trial(s, w, &params[i], repeat, placed)))
}

/// The trials `opts` selects of `all` (the whole study's, in run order).
fn select(study: &Study, all: Vec<Trial>, opts: &Options) -> Result<Vec<Trial>, StudyError> {
    if let Some(s) = opts.shard {
        return Ok(all.into_iter().filter(|t| s.holds(t.position)).collect());
    }
    if opts.trials.is_empty() {
        return Ok(all);
    }
    for want in &opts.trials {
        if !all.iter().any(|t| t.is(want)) {
            return Err(StudyError::NoSuchTrial {
                study: study.name.clone(),
                id: want.clone(),
            });
        }
    }
    Ok(all
        .into_iter()
        .filter(|t| opts.trials.iter().any(|w| t.is(w)))
        .collect())
}
