//! The study file format (docs/study-format.md): a TOML file naming workloads, stacks, repeats,
//! the default device and what `--quick` changes. Parsing checks everything that can be checked
//! without touching a device — keys, types, names, workload kinds, parameters and their values,
//! device specs and `emu:` model parameters, filesystem and scheduler names, mount option
//! syntax — and every error names the file, line, column and key.

use super::assign::Assignments;
use super::locate::{key_at, line_col};
use super::repeats::{Percent, Repeats, DEFAULT_REPEATS};
use crate::capacity::CapacitySpec;
use crate::cause::{Cause, HasCause};
use crate::monitor::{self, SettingsError};
use crate::params::ParamError;
use crate::stack::{DeviceSpec, StackSpec, StackSpecError};
use crate::study::error::StudyError;
use crate::study::pause::Pause;
use crate::trial::cpus::Policy;
use crate::workload::{self, Workload};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Most repeats a study may ask for.
pub const MAX_REPEATS: u32 = 1000;

/// A study: workloads x stacks x repeats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Study {
    /// Names the results directory (`<out>/<name>-<timestamp>`).
    pub name: String,
    pub description: String,
    /// Repeats of every stack, run round-robin (repeat 1 of every stack before repeat 2 of
    /// any).
    pub repeats: u32,
    /// Repeats a stack may get beyond `repeats` while its interval is wider than `interval`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_repeats: Option<u32>,
    /// The relative half-width of the 95% interval of a stack's ranked figure that is narrow
    /// enough to stop repeating it (`interval = "2%"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Percent>,
    /// The relative difference below which two stacks tie (`noise = "2%"`, the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<Percent>,
    /// What the study's answer rests on or cannot say, printed with its table and in its
    /// report (`note`; `[quick] note` replaces it under `--quick`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Parent of the results directory; `None`: the caller's default (`results`).
    pub out: Option<String>,
    /// Device spec for stacks that name none.
    pub device: Option<String>,
    /// Named device specs (`[devices]`): a stack's `devices` and `logdev` may give a name
    /// instead of a spec.
    #[serde(default)]
    pub devices: BTreeMap<String, String>,
    /// What `--quick` changes.
    pub quick: Quick,
    pub workloads: Vec<WorkloadEntry>,
    pub stacks: Vec<StackSpec>,
    /// The monitors of every trial (`monitor` and `monitor_interval`).
    #[serde(default)]
    pub monitor: monitor::Settings,
    /// Where every trial's stream threads run (`workload_cpus`).
    #[serde(default, skip_serializing_if = "Policy::is_all")]
    pub workload_cpus: Policy,
    /// How long the host is left idle after a trial that ran before the next one (`pause`).
    #[serde(default, skip_serializing_if = "Pause::is_none")]
    pub pause: Pause,
}

/// The `[quick]` table: applied by `--quick`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Quick {
    /// Replaces the study's default `device`.
    pub device: Option<String>,
    /// Replaces the specs of named devices.
    #[serde(default)]
    pub devices: BTreeMap<String, String>,
    /// Replaces `repeats`.
    pub repeats: Option<u32>,
    /// Replaces `max_repeats`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_repeats: Option<u32>,
    /// Replaces `interval`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Percent>,
    /// Replaces `note`: what the quick study cannot answer that the full one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Parameter overrides applied to every workload after its own `set`.
    pub set: Assignments,
    /// The stacks `--quick` runs (all when empty); `--only` still picks among all of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stacks: Vec<String>,
    /// Replaces `pause`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pause: Option<Pause>,
}

impl Quick {
    pub fn is_empty(&self) -> bool {
        self.device.is_none()
            && self.devices.is_empty()
            && self.repeats.is_none()
            && self.max_repeats.is_none()
            && self.interval.is_none()
            && self.note.is_none()
            && self.set.is_empty()
            && self.stacks.is_empty()
            && self.pause.is_none()
    }
}

/// One `[[workloads]]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkloadEntry {
    /// Unique within the study; names result paths. Defaults to `kind`.
    pub name: String,
    /// The workload kind (`dvr`).
    pub kind: String,
    /// Parameter overrides.
    pub set: Assignments,
    /// Overrides applied by `--quick`, after the study's `[quick] set`.
    pub quick: Assignments,
    /// A capacity search instead of one run: each trial of this workload searches the largest
    /// value of `capacity.vary` the stack holds in real time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacitySpec>,
}

impl Study {
    /// The study's repeats and ranking rule.
    pub fn repeat_rule(&self) -> Repeats {
        Repeats {
            min: self.repeats,
            max: self.max_repeats,
            interval: self.interval,
            noise: self.noise,
        }
    }
}

impl WorkloadEntry {
    /// The workload kind's implementation (checked when the study was parsed).
    pub fn workload(&self) -> Result<&'static dyn Workload, workload::UnknownWorkload> {
        workload::find(&self.kind)
    }
}

/// Where a study's text came from, for error messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A built-in study (its file under `studies/`).
    Builtin {
        name: String,
        path: String,
    },
    File(PathBuf),
}

impl Origin {
    /// How errors name the file.
    pub fn label(&self) -> String {
        match self {
            Origin::Builtin { path, .. } => format!("{path} (built-in)"),
            Origin::File(p) => p.display().to_string(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStudy {
    name: Spanned<String>,
    #[serde(default)]
    description: String,
    repeats: Option<Spanned<i64>>,
    max_repeats: Option<Spanned<i64>>,
    interval: Option<Spanned<String>>,
    noise: Option<Spanned<String>>,
    note: Option<String>,
    out: Option<String>,
    device: Option<Spanned<String>>,
    monitor: Option<Spanned<String>>,
    monitor_interval: Option<Spanned<String>>,
    workload_cpus: Option<Spanned<String>>,
    pause: Option<Spanned<String>>,
    #[serde(default)]
    devices: RawDevices,
    quick: Option<RawQuick>,
    #[serde(default)]
    workloads: Vec<RawWorkload>,
    #[serde(default)]
    stacks: Vec<StackSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQuick {
    device: Option<Spanned<String>>,
    #[serde(default)]
    devices: RawDevices,
    repeats: Option<Spanned<i64>>,
    max_repeats: Option<Spanned<i64>>,
    interval: Option<Spanned<String>>,
    note: Option<String>,
    #[serde(default)]
    set: RawSet,
    #[serde(default)]
    stacks: Vec<Spanned<String>>,
    pause: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    kind: Spanned<String>,
    name: Option<Spanned<String>>,
    #[serde(default)]
    set: RawSet,
    #[serde(default)]
    quick: RawSet,
    capacity: Option<Spanned<toml::Value>>,
}

type RawSet = BTreeMap<Spanned<String>, Spanned<toml::Value>>;
type RawDevices = BTreeMap<Spanned<String>, Spanned<String>>;

/// Second, lenient pass: only where each stack's keys are.
#[derive(Deserialize)]
struct StackSpans {
    #[serde(default)]
    stacks: Vec<StackSpan>,
}

#[derive(Deserialize)]
struct StackSpan {
    name: Spanned<String>,
    #[serde(default)]
    devices: Vec<Spanned<String>>,
    logdev: Option<Spanned<String>>,
    layout: Option<Spanned<toml::Value>>,
    fs: Option<Spanned<toml::Value>>,
    mkfs: Option<Spanned<toml::Value>>,
    mount: Option<Spanned<toml::Value>>,
    scheduler: Option<Spanned<toml::Value>>,
    tunables: Option<Spanned<toml::Value>>,
    md: Option<Spanned<toml::Value>>,
    vm: Option<Spanned<toml::Value>>,
    zpool: Option<Spanned<toml::Value>>,
}

impl StackSpan {
    /// Where the value of `key` is; the stack's name when the key is not written.
    fn span_of(&self, key: &str) -> Range<usize> {
        let value = match key {
            "layout" => &self.layout,
            "fs" => &self.fs,
            "mkfs" => &self.mkfs,
            "mount" => &self.mount,
            "scheduler" => &self.scheduler,
            "tunables" => &self.tunables,
            "md" => &self.md,
            "vm" => &self.vm,
            "zpool" => &self.zpool,
            _ => &None,
        };
        value.as_ref().map_or(self.name.span(), |v| v.span())
    }
}

/// Reads errors back to a place in one text.
struct Src<'a> {
    text: &'a str,
    file: String,
    /// The study file's directory, which `fio:PATH` kinds are relative to (`None`: the
    /// current directory).
    dir: Option<PathBuf>,
}

impl Src<'_> {
    fn at(
        &self,
        span: Range<usize>,
        key: Option<String>,
        message: impl Into<String>,
    ) -> StudyError {
        let (line, column) = line_col(self.text, span.start);
        StudyError::At {
            file: self.file.clone(),
            line,
            column,
            key,
            message: message.into(),
        }
    }

    fn toml(&self, e: toml::de::Error) -> StudyError {
        let span = e.span().unwrap_or(0..0);
        let key = key_at(self.text, span.start);
        self.at(span, key, e.message().trim().replace('\n', "; "))
    }
}

/// Reads and parses the study file at `path`.
pub fn read(path: &Path) -> Result<Study, StudyError> {
    let text = std::fs::read_to_string(path).map_err(|e| StudyError::io(path, e))?;
    parse(&text, &Origin::File(path.to_path_buf()))
}

/// Parses and checks a study's text.
pub fn parse(text: &str, origin: &Origin) -> Result<Study, StudyError> {
    let src = Src {
        text,
        file: origin.label(),
        dir: match origin {
            Origin::File(p) => p.parent().map(Path::to_path_buf),
            Origin::Builtin { .. } => None,
        },
    };
    let raw: RawStudy = toml::from_str(text).map_err(|e| src.toml(e))?;
    let spans: StackSpans = toml::from_str(text).map_err(|e| src.toml(e))?;
    check_name(&src, &raw.name, "name")?;
    let repeats = match &raw.repeats {
        Some(r) => check_repeats(&src, r, "repeats")?,
        None => DEFAULT_REPEATS,
    };
    let max_repeats = read_max_repeats(&src, raw.max_repeats.as_ref(), repeats, "max_repeats")?;
    let interval = read_percent(&src, raw.interval.as_ref(), "interval")?;
    let noise = read_percent(&src, raw.noise.as_ref(), "noise")?;
    if let Some(d) = &raw.device {
        check_device(&src, d, "device")?;
    }
    let monitor = read_monitor(&src, &raw)?;
    let workload_cpus = read_workload_cpus(&src, &raw)?;
    let pause = read_pause(&src, raw.pause.as_ref(), "pause")?.unwrap_or_default();
    let devices = read_devices(&src, &raw.devices, None)?;
    let quick = read_quick(&src, raw.quick.as_ref(), &devices, repeats)?;
    let quick_set = raw.quick.as_ref().map(|q| &q.set);
    let workloads = read_workloads(&src, &raw.workloads, &quick, quick_set)?;
    check_stacks(&src, &raw.stacks, &spans.stacks, &devices)?;
    if let Some(q) = &raw.quick {
        for (j, n) in q.stacks.iter().enumerate() {
            if !raw.stacks.iter().any(|s| &s.name == n.get_ref()) {
                let names: Vec<&str> = raw.stacks.iter().map(|s| s.name.as_str()).collect();
                return Err(src.at(
                    n.span(),
                    Some(format!("quick.stacks[{j}]")),
                    format!(
                        "'{}' is not a stack of the study; its stacks: {}",
                        n.get_ref(),
                        names.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(Study {
        name: raw.name.into_inner(),
        description: raw.description,
        repeats,
        max_repeats,
        interval,
        noise,
        note: raw.note,
        out: raw.out,
        device: raw.device.map(Spanned::into_inner),
        devices,
        quick,
        workloads,
        stacks: raw.stacks,
        monitor,
        workload_cpus,
        pause,
    })
}

/// `max_repeats` (`quick.max_repeats`): a number of repeats, at least `repeats`; an error
/// points at the key.
fn read_max_repeats(
    src: &Src,
    v: Option<&Spanned<i64>>,
    repeats: u32,
    key: &str,
) -> Result<Option<u32>, StudyError> {
    let Some(v) = v else { return Ok(None) };
    let n = check_repeats(src, v, key)?;
    if n < repeats {
        return Err(src.at(
            v.span(),
            Some(key.into()),
            format!("{n} is below repeats ({repeats}); max_repeats is the most a stack may get, at least repeats"),
        ));
    }
    Ok(Some(n))
}

/// A percentage (`interval`, `noise`, `quick.interval`); an error points at the key.
fn read_percent(
    src: &Src,
    v: Option<&Spanned<String>>,
    key: &str,
) -> Result<Option<Percent>, StudyError> {
    v.map(|v| Percent::parse(v.get_ref()).map_err(|e| src.at(v.span(), Some(key.into()), e)))
        .transpose()
}

/// A pause between trials (`pause`, `quick.pause`); an error points at the key.
fn read_pause(
    src: &Src,
    v: Option<&Spanned<String>>,
    key: &str,
) -> Result<Option<Pause>, StudyError> {
    v.map(|v| Pause::parse(v.get_ref()).map_err(|e| src.at(v.span(), Some(key.into()), e)))
        .transpose()
}

/// `workload_cpus`: `all` (the default) or `apart`; an error points at the key.
fn read_workload_cpus(src: &Src, raw: &RawStudy) -> Result<Policy, StudyError> {
    match &raw.workload_cpus {
        None => Ok(Policy::default()),
        Some(v) => Policy::parse(v.get_ref())
            .map_err(|e| src.at(v.span(), Some("workload_cpus".into()), e)),
    }
}

/// `monitor` and `monitor_interval`, read by the parser `iotrial run --monitor` uses; an
/// error points at the key it is about.
fn read_monitor(src: &Src, raw: &RawStudy) -> Result<monitor::Settings, StudyError> {
    let list = raw.monitor.as_ref();
    let interval = raw.monitor_interval.as_ref();
    let text = |v: Option<&Spanned<String>>, default: &'static str| {
        v.map_or(default.to_string(), |v| v.get_ref().clone())
    };
    monitor::Settings::parse(
        &text(list, monitor::settings::DEFAULT),
        &text(interval, monitor::settings::DEFAULT_INTERVAL),
    )
    .map_err(|e| {
        let at = match e {
            SettingsError::Interval(_) => interval,
            _ => list,
        };
        let span = at.map_or(raw.name.span(), |v| v.span());
        src.at(span, Some(e.key().into()), e.to_string())
    })
}

/// A `[devices]` table (`[quick.devices]` when `declared` holds the names it may replace):
/// valid names, each with a device spec.
fn read_devices(
    src: &Src,
    raw: &RawDevices,
    declared: Option<&BTreeMap<String, String>>,
) -> Result<BTreeMap<String, String>, StudyError> {
    let table = if declared.is_some() {
        "quick.devices"
    } else {
        "devices"
    };
    let mut out = BTreeMap::new();
    for (name, spec) in raw {
        let key = format!("{table}.{}", name.get_ref());
        check_name(src, name, &key)?;
        if declared.is_some_and(|d| !d.contains_key(name.get_ref())) {
            return Err(src.at(
                name.span(),
                Some(key),
                "[quick.devices] replaces devices named in [devices]; this name is not one of them",
            ));
        }
        check_device(src, spec, &key)?;
        out.insert(name.get_ref().clone(), spec.get_ref().clone());
    }
    Ok(out)
}

/// The `[quick]` table, checked.
fn read_quick(
    src: &Src,
    raw: Option<&RawQuick>,
    devices: &BTreeMap<String, String>,
    study_repeats: u32,
) -> Result<Quick, StudyError> {
    let Some(q) = raw else {
        return Ok(Quick::default());
    };
    if let Some(d) = &q.device {
        check_device(src, d, "quick.device")?;
    }
    let repeats = match &q.repeats {
        Some(r) => Some(check_repeats(src, r, "quick.repeats")?),
        None => None,
    };
    let min = repeats.unwrap_or(study_repeats);
    Ok(Quick {
        device: q.device.as_ref().map(|d| d.get_ref().clone()),
        devices: read_devices(src, &q.devices, Some(devices))?,
        repeats,
        max_repeats: read_max_repeats(src, q.max_repeats.as_ref(), min, "quick.max_repeats")?,
        interval: read_percent(src, q.interval.as_ref(), "quick.interval")?,
        note: q.note.clone(),
        set: assignments(src, &q.set, "quick.set")?,
        stacks: q.stacks.iter().map(|s| s.get_ref().clone()).collect(),
        pause: read_pause(src, q.pause.as_ref(), "quick.pause")?,
    })
}

/// The `[[workloads]]` entries, each checked as run and as run with `--quick`.
fn read_workloads(
    src: &Src,
    raw: &[RawWorkload],
    quick: &Quick,
    quick_set: Option<&RawSet>,
) -> Result<Vec<WorkloadEntry>, StudyError> {
    if raw.is_empty() {
        let end = src.text.len()..src.text.len();
        return Err(src.at(
            end,
            Some("workloads".into()),
            format!(
                "the study has no workloads; add a [[workloads]] table with kind = one of: {}",
                known_kinds()
            ),
        ));
    }
    let mut workloads: Vec<WorkloadEntry> = Vec::new();
    for (i, w) in raw.iter().enumerate() {
        let entry = read_workload(src, i, w, &workloads)?;
        check_workload_params(src, i, w, &entry, quick, quick_set)?;
        workloads.push(entry);
    }
    Ok(workloads)
}

/// Workload `i`: its kind, and a name no earlier workload has.
fn read_workload(
    src: &Src,
    i: usize,
    w: &RawWorkload,
    earlier: &[WorkloadEntry],
) -> Result<WorkloadEntry, StudyError> {
    let at = |k: &str| format!("workloads[{i}].{k}");
    let refused = |e: String| src.at(w.kind.span(), Some(at("kind")), e);
    // `fio:PATH`: a fio job file, run as the job workload with the file's parameters first.
    let (kind, fio_set, default_name) = match w.kind.get_ref().strip_prefix(crate::fio::PREFIX) {
        Some(p) => {
            let path = src
                .dir
                .as_ref()
                .map_or_else(|| PathBuf::from(p), |d| d.join(p));
            let f = crate::fio::parse_file(&path).map_err(|e| refused(e.to_string()))?;
            let stem = path.file_stem().map(|s| s.to_string_lossy().to_string());
            (
                "job".to_string(),
                f.overrides,
                stem.unwrap_or_else(|| "job".into()),
            )
        }
        None => {
            workload::find(w.kind.get_ref()).map_err(|e| refused(e.to_string()))?;
            (
                w.kind.get_ref().clone(),
                Vec::new(),
                w.kind.get_ref().clone(),
            )
        }
    };
    let name = match &w.name {
        Some(n) => {
            check_name(src, n, &at("name"))?;
            n.get_ref().clone()
        }
        None => default_name,
    };
    if earlier.iter().any(|o| o.name == name) {
        let span = w.name.as_ref().map_or(w.kind.span(), |n| n.span());
        return Err(src.at(
            span,
            Some(at("name")),
            format!("a workload named '{name}' is already in the study; give each [[workloads]] entry a distinct `name`"),
        ));
    }
    let capacity = match &w.capacity {
        None => None,
        Some(c) => Some(
            c.get_ref()
                .clone()
                .try_into::<CapacitySpec>()
                .map_err(|e| {
                    let m = e.message().trim().replace('\n', "; ");
                    src.at(c.span(), Some(at("capacity")), m)
                })?,
        ),
    };
    Ok(WorkloadEntry {
        name,
        kind,
        set: Assignments(fio_set).then(&assignments(src, &w.set, &at("set"))?),
        quick: assignments(src, &w.quick, &at("quick"))?,
        capacity,
    })
}

/// Checks workload `i`'s capacity search against its parameters as resolved by `set` (each
/// value of a sweep): the parameter it varies and a range that can hold.
fn check_capacity(
    src: &Src,
    i: usize,
    w: &RawWorkload,
    wl: &dyn Workload,
    entry: &WorkloadEntry,
    set: &Assignments,
    note: &str,
) -> Result<(), StudyError> {
    let (Some(spec), Some(raw)) = (&entry.capacity, &w.capacity) else {
        return Ok(());
    };
    let at = |m: String| {
        src.at(
            raw.span(),
            Some(format!("workloads[{i}].capacity")),
            format!("{note}{m}"),
        )
    };
    for (_, s) in super::sweep::workloads("", set).map_err(|e| at(e.to_string()))? {
        let p = wl.resolve(s.pairs()).map_err(|e| at(e.to_string()))?;
        spec.domain(wl, &p).map_err(|e| at(e.to_string()))?;
    }
    Ok(())
}

/// Resolves and plans workload `i`'s parameters as run and as run with `--quick`: later tables
/// win, so an error is reported at the latest table that assigns the parameter.
fn check_workload_params(
    src: &Src,
    i: usize,
    w: &RawWorkload,
    entry: &WorkloadEntry,
    quick: &Quick,
    quick_set: Option<&RawSet>,
) -> Result<(), StudyError> {
    let at = |k: &str| format!("workloads[{i}].{k}");
    let wl = entry.workload().map_err(|e| {
        let key = Some(at("kind"));
        src.at(w.kind.span(), key, e.to_string())
    })?;
    let kind = (w.kind.span(), at("kind"));
    check_params(src, wl, &entry.set, &[(&w.set, at("set"))], &kind, "")?;
    check_capacity(src, i, w, wl, entry, &entry.set, "")?;
    let empty = RawSet::new();
    let quick_tables = [
        (&w.set, at("set")),
        (quick_set.unwrap_or(&empty), "quick.set".to_string()),
        (&w.quick, at("quick")),
    ];
    let q = entry.set.then(&quick.set).then(&entry.quick);
    check_params(src, wl, &q, &quick_tables, &kind, "with --quick: ")?;
    check_capacity(src, i, w, wl, entry, &q, "with --quick: ")
}

/// The `[[stacks]]` entries: names unique and valid, devices (specs, or names of `[devices]`),
/// and what the stack layer checks without a device.
fn check_stacks(
    src: &Src,
    stacks: &[StackSpec],
    spans: &[StackSpan],
    named: &BTreeMap<String, String>,
) -> Result<(), StudyError> {
    if stacks.is_empty() {
        let end = src.text.len()..src.text.len();
        return Err(src.at(
            end,
            Some("stacks".into()),
            "the study has no stacks; add a [[stacks]] table with at least a `name`",
        ));
    }
    for (i, (s, sp)) in stacks.iter().zip(spans).enumerate() {
        let at = |k: &str| format!("stacks[{i}].{k}");
        check_name(src, &sp.name, &at("name"))?;
        for (j, d) in sp.devices.iter().enumerate() {
            check_device_or_name(src, d, &at(&format!("devices[{j}]")), named)?;
        }
        if let Some(d) = &sp.logdev {
            check_device_or_name(src, d, &at("logdev"), named)?;
        }
        if let Some(prev) = stacks[..i].iter().position(|o| o.name == s.name) {
            return Err(src.at(
                sp.name.span(),
                Some(at("name")),
                format!(
                    "stack name '{}' is already used by stacks[{prev}]; stack names must be unique",
                    s.name
                ),
            ));
        }
        s.check()
            .map_err(|e: StackSpecError| src.at(sp.span_of(e.key), Some(at(e.key)), e.message))?;
    }
    check_expanded_names(src, stacks, spans)
}

/// The stacks a `vm` list makes are named `NAME-vm`: no other stack may have their names.
fn check_expanded_names(
    src: &Src,
    stacks: &[StackSpec],
    spans: &[StackSpan],
) -> Result<(), StudyError> {
    let mut seen: Vec<String> = Vec::new();
    for (i, (s, sp)) in stacks.iter().zip(spans).enumerate() {
        for e in s.expand_vm() {
            if seen.contains(&e.name) {
                return Err(src.at(
                    sp.name.span(),
                    Some(format!("stacks[{i}].name")),
                    format!("stack name '{}' is used twice once `vm` lists are expanded (a list makes NAME and NAME-vm); rename one", e.name),
                ));
            }
            if !valid_name(&e.name) {
                return Err(src.at(
                    sp.name.span(),
                    Some(format!("stacks[{i}].name")),
                    format!(
                        "'{}' (made by the vm list) is not a valid name; shorten the stack's name",
                        e.name
                    ),
                ));
            }
            seen.push(e.name);
        }
    }
    Ok(())
}

fn known_kinds() -> String {
    workload::all()
        .iter()
        .map(|w| w.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `name` can be a path component of the results directory.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn check_name(src: &Src, n: &Spanned<String>, key: &str) -> Result<(), StudyError> {
    if valid_name(n.get_ref()) {
        return Ok(());
    }
    Err(src.at(
        n.span(),
        Some(key.into()),
        format!(
            "'{}' is not a valid name; allowed: 1 to 64 of the characters A-Z a-z 0-9 - _ . (not starting with '.')",
            n.get_ref()
        ),
    ))
}

fn check_repeats(src: &Src, r: &Spanned<i64>, key: &str) -> Result<u32, StudyError> {
    match u32::try_from(*r.get_ref()) {
        Ok(n) if (1..=MAX_REPEATS).contains(&n) => Ok(n),
        _ => Err(src.at(
            r.span(),
            Some(key.into()),
            format!(
                "{} is not allowed; repeats must be a whole number from 1 to {MAX_REPEATS}",
                r.get_ref()
            ),
        )),
    }
}

/// Checks a device spec (and an `emu:` model's parameters). Whether this host can build it
/// (root, kernel support for `md:` or `zfs:`) is decided when the stack is built, so such a
/// stack is skipped then, with the reason, and the rest of the study still runs.
fn check_device(src: &Src, d: &Spanned<String>, key: &str) -> Result<(), StudyError> {
    let at = |message: String| src.at(d.span(), Some(key.into()), message);
    for c in super::sweep::together(&[d.get_ref()]).map_err(at)? {
        match DeviceSpec::parse(&c[0].text) {
            Err(e) if e.why() == Cause::Input => return Err(at(e.to_string())),
            _ => {}
        }
    }
    Ok(())
}

/// A stack's device: a spec ([`check_device`]), or the name of one in `[devices]`.
fn check_device_or_name(
    src: &Src,
    d: &Spanned<String>,
    key: &str,
    named: &BTreeMap<String, String>,
) -> Result<(), StudyError> {
    if d.get_ref().contains(':') {
        return check_device(src, d, key);
    }
    if named.contains_key(d.get_ref()) {
        return Ok(());
    }
    let known: Vec<&str> = named.keys().map(String::as_str).collect();
    Err(src.at(
        d.span(),
        Some(key.into()),
        format!(
            "'{}' is neither a device spec (dir:, image:, block:, emu:) nor a device named in [devices]{}",
            d.get_ref(),
            if known.is_empty() { String::new() } else { format!(" ({})", known.join(", ")) }
        ),
    ))
}

/// A `set` table as assignments in the file's order; values may be strings, numbers or
/// booleans.
fn assignments(src: &Src, set: &RawSet, key: &str) -> Result<Assignments, StudyError> {
    let mut entries: Vec<_> = set.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    let mut out = Vec::new();
    for (k, v) in entries {
        let text = match v.get_ref() {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(n) => n.to_string(),
            toml::Value::Float(x) => x.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            toml::Value::Array(list) if list.iter().all(scalar) && !list.is_empty() => {
                let values: Vec<String> = list.iter().map(|x| scalar_text(x).unwrap()).collect();
                format!("{{{}}}", values.join(","))
            }
            other => {
                return Err(src.at(
                    v.span(),
                    Some(format!("{key}.{}", k.get_ref())),
                    format!(
                        "a parameter value must be a string, number or true/false, or a non-empty list of them (a sweep), not a {}",
                        other.type_str()
                    ),
                ))
            }
        };
        out.push((k.get_ref().clone(), text));
    }
    Ok(Assignments(out))
}

/// A TOML scalar as a parameter's text.
fn scalar_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(n) => Some(n.to_string()),
        toml::Value::Float(x) => Some(x.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

fn scalar(v: &toml::Value) -> bool {
    scalar_text(v).is_some()
}

/// Resolves and plans `set` (each of its sweep's values) with workload `wl`; a failure is reported at the latest of
/// `tables` that assigns the parameter at fault, else at the workload's `kind`.
fn check_params(
    src: &Src,
    wl: &dyn Workload,
    set: &Assignments,
    tables: &[(&RawSet, String)],
    (kind_span, kind_key): &(Range<usize>, String),
    note: &str,
) -> Result<(), StudyError> {
    let each = |set: &Assignments| {
        wl.resolve(set.pairs())
            .and_then(|p| wl.plan(&p).map(|_| ()))
    };
    let err = match super::sweep::workloads("", set)
        .and_then(|sets| sets.iter().try_for_each(|(_, s)| each(s)))
    {
        Ok(()) => return Ok(()),
        Err(e) => e,
    };
    let (param, on_key) = match &err {
        ParamError::Unknown { name, .. } => (Some(name.as_str()), true),
        ParamError::Invalid { name, .. } => (Some(name.as_str()), false),
        ParamError::Malformed(_) => (None, false),
    };
    let found = param.and_then(|p| {
        tables.iter().rev().find_map(|(t, key)| {
            t.iter().find(|(k, _)| k.get_ref() == p).map(|(k, v)| {
                (
                    if on_key { k.span() } else { v.span() },
                    format!("{key}.{p}"),
                )
            })
        })
    });
    let (span, key) = found.unwrap_or((kind_span.clone(), kind_key.clone()));
    Err(src.at(span, Some(key), format!("{note}{err}")))
}
