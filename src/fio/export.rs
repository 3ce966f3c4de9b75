//! Writing the fio job that does what a finished trial did: the trial's workload planned again
//! from result.json's parameters, each stream a fio job section with its op, size, pattern,
//! queue depth, engine, pacing and region (on a raw layout at the offset the stack gave it, on
//! the `files` layout a file of its own), and the run's length (the phase's duration for
//! seed 000's sampling protocol, which fio has not). The target is `${IOTRIAL_TARGET}`, so the
//! same file runs on any device: the user points it at the stack's device.

use crate::cause::{Cause, HasCause};
use crate::engine::{Op, Pacing, Pattern, Plan, Step, Stop, StreamPlan};
use crate::params::Params;
use crate::result::{self, TrialResult};
use crate::stack::build::raw::round_mib;
use crate::workload;
use serde_json::Value as Json;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Where raw regions start on a device (the `regions` layout's first MiB is left alone).
const FIRST_REGION: u64 = 1 << 20;

/// A trial that cannot be written as a fio job.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{0}")]
    Result(#[from] result::ResultError),
    #[error("{path}: {message}")]
    Trial { path: PathBuf, message: String },
    #[error("{0}: no result.json in it or in its trials/<stack>/<workload>/r<N>/")]
    NoTrials(PathBuf),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl HasCause for ExportError {
    fn why(&self) -> Cause {
        match self {
            ExportError::Write { .. } => Cause::Run,
            _ => Cause::Input,
        }
    }
}

/// The result.json files under `dir`: its own, or its trials'.
fn trials_in(dir: &Path) -> Vec<PathBuf> {
    let own = dir.join("result.json");
    if own.exists() {
        return vec![own];
    }
    let mut out = Vec::new();
    let level = |p: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(p)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        v.sort();
        v
    };
    for stack in level(&dir.join("trials")) {
        for w in level(&stack) {
            for r in level(&w) {
                let f = r.join("result.json");
                if f.exists() {
                    out.push(f);
                }
            }
        }
    }
    out
}

/// Writes `trial.fio` beside each result.json under `dir` (a trial's directory or a results
/// directory); returns the files written.
pub fn export_trial(dir: &Path) -> Result<Vec<PathBuf>, ExportError> {
    let found = trials_in(dir);
    if found.is_empty() {
        return Err(ExportError::NoTrials(dir.to_path_buf()));
    }
    let mut written = Vec::new();
    for path in found {
        let doc = result::read(&path)?;
        let text = fio_text(&doc, &path).map_err(|message| ExportError::Trial {
            path: path.clone(),
            message,
        })?;
        let out = path.with_file_name("trial.fio");
        std::fs::write(&out, text).map_err(|source| ExportError::Write {
            path: out.clone(),
            source,
        })?;
        written.push(out);
    }
    Ok(written)
}

/// The trial's plan, from its kind and parameters.
fn plan_of(doc: &TrialResult) -> Result<Plan, String> {
    let w = workload::find(&doc.kind).map_err(|e| e.to_string())?;
    let over = Params::overrides_from_json(w.params(), &Json::Object(doc.params.clone()));
    let p = w.resolve(&over).map_err(|e| e.to_string())?;
    w.plan(&p).map_err(|e| e.to_string())
}

/// The fio job file of a `job` trial: its jobs as it ran them (a job file's sections, or the
/// parameters as one job, the `options` set over them at the end of each job), under a
/// `[global]` pointing fio at the stack: `directory=${IOTRIAL_DIR}` on a filesystem (file
/// names as iotrial made them, directories flattened), `filename=${IOTRIAL_TARGET}` on a raw
/// layout.
fn job_text(doc: &TrialResult, path: &Path) -> Result<String, String> {
    use crate::workload::job::gen::place::flat_name;
    use crate::workload::job::jobfile::{self, Assign, Section};
    let w = workload::find("job").map_err(|e| e.to_string())?;
    let over = Params::overrides_from_json(w.params(), &Json::Object(doc.params.clone()));
    let p = w.resolve(&over).map_err(|e| e.to_string())?;
    let raw = doc.target.layout != "files";
    let groups = p.text(crate::workload::job::params::GROUPS);
    let mut sections = if groups.trim().is_empty() {
        let options = p
            .assignments()
            .into_iter()
            .filter(|(k, _)| !matches!(k.as_str(), "name" | "groups" | "options"))
            .map(|(k, v)| Assign::set(&k, &v))
            .collect();
        vec![Section {
            name: p.text("name"),
            global: false,
            line: 0,
            options,
        }]
    } else {
        jobfile::sections(&groups).map_err(|e| format!("line {}: {}", e.line, e.message))?
    };
    let extra = crate::workload::job::params::extra_options(&p);
    for s in &mut sections {
        s.options.retain(|o| !(raw && o.key == "filename"));
        for o in &mut s.options {
            if o.key == "filename" {
                let names: Vec<String> = o
                    .value
                    .as_deref()
                    .unwrap_or("")
                    .split(':')
                    .map(flat_name)
                    .collect();
                o.value = Some(names.join(":"));
            }
        }
        if !s.global {
            s.options.extend(extra.iter().cloned());
        }
    }
    let target = if raw {
        "filename=${IOTRIAL_TARGET}"
    } else {
        "directory=${IOTRIAL_DIR}"
    };
    Ok(format!(
        "; fio job written by `iotrial export-fio` from {}\n; workload {} on `{}` (layout {}): the jobs as they ran.\n; Run it on the same stack: {}\n[global]\nthread\n{target}\n{}",
        path.display(),
        doc.workload,
        doc.target.spec,
        doc.target.layout,
        if raw {
            "IOTRIAL_TARGET=/dev/the-stack-device fio trial.fio"
        } else {
            "IOTRIAL_DIR=/path/to/a/directory/on/the/stack fio trial.fio"
        },
        jobfile::text_of(&sections)
    ))
}

/// The fio job file of the trial in `doc` (read from `path`).
pub fn fio_text(doc: &TrialResult, path: &Path) -> Result<String, String> {
    if doc.kind == "job" {
        return job_text(doc, path);
    }
    let plan = plan_of(doc)?;
    let layout = doc.target.layout.as_str();
    // A filesystem is one directory however many devices it spans; raw regions over several
    // devices (space-separated specs) are not one fio target.
    if layout == "partitions" || (layout != "files" && doc.target.spec.contains(' ')) {
        return Err(format!(
            "a trial on the {layout} layout over `{}` cannot be written as one fio target; export trials of the regions or files layout on one device",
            doc.target.spec
        ));
    }
    // The last stream phase is the one the verdict reads.
    let (idx, (names, stop)) = plan
        .phases
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, p)| match &p.step {
            Step::Streams { streams, stop } => Some((i, (streams.clone(), *stop))),
            Step::Action(_) | Step::Prepare => None,
        })
        .ok_or("the plan has no stream phase")?;
    let ran = doc
        .phases
        .iter()
        .find(|p| p.name == plan.phases[idx].name)
        .and_then(|p| p.duration_s());
    let mut t = String::new();
    let _ = writeln!(
        t,
        "; fio job written by `iotrial export-fio` from {}",
        path.display()
    );
    let _ = writeln!(
        t,
        "; workload {} (kind {}) on `{}` (layout {}); phase `{}`.",
        doc.workload, doc.kind, doc.target.spec, layout, plan.phases[idx].name
    );
    let target = if layout == "files" {
        "IOTRIAL_DIR"
    } else {
        "IOTRIAL_TARGET"
    };
    let _ = writeln!(
        t,
        "; Run it on the same stack: {target}={} fio trial.fio",
        if layout == "files" {
            "/path/to/a/directory/on/the/stack"
        } else {
            "/dev/the-stack-device"
        }
    );
    t.push_str("\n[global]\nthread\n");
    let _ = writeln!(t, "direct={}", u8::from(doc.target.direct_io));
    match stop {
        Stop::Duration(s) => {
            let _ = writeln!(
                t,
                "runtime={}ms\ntime_based",
                (s / doc.time_scale * 1e3).round()
            );
        }
        Stop::AllHaveN => {
            let s = ran.ok_or("the trial's phase did not end, so its length is unknown")?;
            let _ = writeln!(
                t,
                "; every stream ran until all had their samples: fio's jobs run as long\nruntime={}ms\ntime_based",
                (s / doc.time_scale * 1e3).round()
            );
        }
        _ => {}
    }
    let mut offset = FIRST_REGION;
    for (i, s) in plan.streams.iter().enumerate() {
        let len = s.region_len;
        if len == 0 {
            return Err(format!(
                "stream {} has no region size of its own (a share of the target)",
                s.name
            ));
        }
        if names.contains(&i) {
            section(&mut t, s, layout, offset);
        }
        offset += round_mib(len);
    }
    Ok(t)
}

/// One stream as a job section.
fn section(t: &mut String, s: &StreamPlan, layout: &str, region_at: u64) {
    let random = s.pattern == Pattern::Random;
    let rw = match (s.io.mix, s.op, random) {
        (Some(_), _, true) => "randrw",
        (Some(_), _, false) => "rw",
        (None, Op::Read, true) => "randread",
        (None, Op::Read, false) => "read",
        (None, _, true) => "randwrite",
        (None, _, false) => "write",
    };
    let _ = writeln!(t, "\n[{}]\nrw={rw}\nbs={}", s.name, s.io_size);
    if let Some(m) = s.io.mix {
        let _ = writeln!(t, "rwmixread={m}");
    }
    let engine = s.io.backend.map_or("psync", |b| b.name());
    let _ = writeln!(t, "ioengine={engine}\niodepth={}", s.io.depth.max(1));
    let size = s.region_len - s.io.skip;
    if layout == "files" {
        let _ = writeln!(
            t,
            "directory=${{IOTRIAL_DIR}}\nfilename={}\noffset={}\nsize={size}",
            s.name, s.io.skip
        );
    } else {
        let _ = writeln!(
            t,
            "filename=${{IOTRIAL_TARGET}}\noffset={}\nsize={size}",
            region_at + s.io.skip
        );
    }
    if let Pacing::Rate(r) = s.pacing {
        let _ = writeln!(t, "rate_iops={}", r.round() as u64);
    }
    if s.io.fsync_every > 0 {
        let _ = writeln!(t, "fsync={}", s.io.fsync_every);
    }
}
