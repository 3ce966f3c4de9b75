//! Reading a fio job file into the `job` workload's parameters. Each job section becomes one
//! job group holding every option in effect for it (the `[global]` options above it, then its
//! own), in fio's names and units; the groups go in the `groups` parameter. Options that only
//! change fio's own reporting or name the target are accepted and listed as notes (iotrial
//! runs on its stack's target); anything else iotrial does not model is an error naming the
//! option, the file and the line, and the options it supports.

use crate::cause::{Cause, HasCause};
use crate::units;
use std::path::{Path, PathBuf};

/// fio options iotrial runs, and the `job` parameter each sets (the same name but for
/// aliases).
const OPTIONS: &[(&str, &str)] = &[
    ("rw", "rw"),
    ("readwrite", "rw"),
    ("rwmixread", "rwmixread"),
    ("rwmixwrite", "rwmixread"),
    ("bs", "bs"),
    ("blocksize", "bs"),
    ("size", "size"),
    ("offset", "offset"),
    ("offset_increment", "offset_increment"),
    ("numjobs", "numjobs"),
    ("iodepth", "iodepth"),
    ("ioengine", "ioengine"),
    ("direct", "direct"),
    ("buffered", "direct"),
    ("runtime", "runtime"),
    ("timeout", "runtime"),
    ("time_based", "time_based"),
    ("ramp_time", "ramp_time"),
    ("rate", "rate"),
    ("rate_iops", "rate_iops"),
    ("fsync", "fsync"),
    ("randseed", "randseed"),
];

/// fio options accepted with a note: they name the target (iotrial runs on its stack's) or
/// only change how fio reports or runs its threads, not the I/O.
const NOTED: &[(&str, &str)] = &[
    (
        "filename",
        "iotrial does its I/O on the stack's target, not on this file",
    ),
    (
        "directory",
        "iotrial does its I/O on the stack's target, not in this directory",
    ),
    (
        "group_reporting",
        "iotrial reports every job group and the total",
    ),
    ("thread", "iotrial runs every job as a thread"),
    ("description", "a description only"),
    (
        "fixedbufs",
        "iotrial's io_uring registers its buffers whenever the kernel allows",
    ),
    (
        "registerfiles",
        "iotrial's io_uring registers its file whenever the kernel allows",
    ),
];

/// A fio job file that iotrial cannot run.
#[derive(Debug, thiserror::Error)]
pub enum FioError {
    #[error("cannot read fio job file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{file}:{line}: {message}")]
    At {
        file: String,
        line: usize,
        message: String,
    },
    #[error("{file}: no job section; add one such as [job1] after [global]")]
    NoJobs { file: String },
}

impl HasCause for FioError {
    fn why(&self) -> Cause {
        Cause::Input
    }
}

/// A fio job file as the `job` workload's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFile {
    /// `key=value` overrides of the `job` workload (its `groups`).
    pub overrides: Vec<(String, String)>,
    /// Options accepted without effect, with why (`file:line: filename: ...`).
    pub notes: Vec<String>,
    /// The job sections' names, in order.
    pub jobs: Vec<String>,
}

/// Reads and converts the fio job file at `path`.
pub fn parse_file(path: &Path) -> Result<JobFile, FioError> {
    let text = std::fs::read_to_string(path).map_err(|source| FioError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_text(&path.display().to_string(), &text, &|v| {
        std::env::var(v).ok()
    })
}

/// Replaces every `${VAR}` of `value` from `env`.
fn expand(value: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let Some(end) = rest[at..].find('}') else {
            return Err(format!("'{value}' has '${{' without a closing '}}'"));
        };
        let var = &rest[at + 2..at + end];
        let v = env(var).ok_or_else(|| format!("environment variable {var} is not set"))?;
        out.push_str(&v);
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The `job` parameter and value for fio option `key` = `value`; `Ok(None)` for a noted option
/// (with its note), `Err` for one iotrial does not run.
fn convert(key: &str, value: Option<&str>) -> Result<Result<(String, String), String>, String> {
    if let Some((_, why)) = NOTED.iter().find(|(k, _)| *k == key) {
        return Ok(Err(format!("{key}: {why}")));
    }
    let Some(&(_, param)) = OPTIONS.iter().find(|(k, _)| *k == key) else {
        let supported: Vec<&str> = OPTIONS.iter().map(|(k, _)| *k).collect();
        return Err(format!(
            "fio option '{key}' is not supported by iotrial; supported: {} (and, without effect on the I/O: {})",
            supported.join(", "),
            NOTED.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
        ));
    };
    let flag = |v: Option<&str>| -> Result<bool, String> {
        match v.unwrap_or("1").trim() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" => Ok(false),
            o => Err(format!("{key}={o}: expected 0 or 1")),
        }
    };
    let need = || value.ok_or_else(|| format!("{key} needs a value ({key}=...)"));
    let v = match key {
        "time_based" => flag(value)?.to_string(),
        "direct" => flag(value)?.to_string(),
        "buffered" => (!flag(value)?).to_string(),
        "rwmixwrite" => {
            let w: u64 = need()?
                .trim()
                .parse()
                .map_err(|_| format!("{key}: not a percentage"))?;
            100u64.saturating_sub(w).to_string()
        }
        "bs" | "blocksize" | "size" | "offset" | "offset_increment" | "rate" => {
            let v = need()?;
            if v.contains(',') || v.contains('-') || v.contains(':') {
                return Err(format!(
                    "{key}={v}: separate read/write values and ranges are not supported; give one size"
                ));
            }
            units::parse_fio_size(v)
                .map_err(|e| format!("{key}: {}", e.0))?
                .to_string()
        }
        "runtime" | "timeout" | "ramp_time" => {
            let v = need()?;
            let s = units::parse_duration(v).map_err(|e| format!("{key}: {}", e.0))?;
            format!("{}s", units::trim_float(s))
        }
        _ => need()?.trim().to_string(),
    };
    Ok(Ok((param.to_string(), v)))
}

/// Converts fio job-file text; `file` names it in errors, `env` resolves `${VAR}`.
pub fn parse_text(
    file: &str,
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<JobFile, FioError> {
    let at = |line: usize, message: String| FioError::At {
        file: file.to_string(),
        line,
        message,
    };
    let mut global: Vec<(String, String)> = Vec::new();
    let mut jobs: Vec<(String, Vec<(String, String)>)> = Vec::new();
    let mut in_global = false;
    let mut notes = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with(';') || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[') {
            let name = name
                .strip_suffix(']')
                .ok_or_else(|| {
                    at(
                        n,
                        format!("'{line}' is not a section header such as [job1]"),
                    )
                })?
                .trim();
            if name == "global" {
                in_global = true;
                continue;
            }
            let ok = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
            if !ok || jobs.iter().any(|(j, _)| j == name) {
                return Err(at(n, format!(
                    "job section [{name}]: iotrial needs distinct names of letters, digits, '-', '_' and '.'"
                )));
            }
            in_global = false;
            jobs.push((name.to_string(), global.clone()));
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (line, None),
        };
        let value = value
            .map(|v| expand(v, env))
            .transpose()
            .map_err(|m| at(n, m))?;
        if !in_global && jobs.is_empty() {
            return Err(at(n, format!("option '{key}' comes before any section; put it under [global] or a job section")));
        }
        match convert(key, value.as_deref()).map_err(|m| at(n, m))? {
            Err(note) => notes.push(format!("{file}:{n}: {note}")),
            Ok(kv) => {
                let target = if in_global {
                    &mut global
                } else {
                    &mut jobs.last_mut().expect("a job section").1
                };
                target.retain(|(k, _)| *k != kv.0);
                target.push(kv);
            }
        }
    }
    if jobs.is_empty() {
        return Err(FioError::NoJobs {
            file: file.to_string(),
        });
    }
    let groups: Vec<String> = jobs
        .iter()
        .map(|(name, opts)| {
            let kv: Vec<String> = opts.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{name}:{}", kv.join(","))
        })
        .collect();
    Ok(JobFile {
        overrides: vec![("groups".into(), groups.join(";"))],
        notes,
        jobs: jobs.into_iter().map(|(n, _)| n).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(v: &str) -> Option<String> {
        (v == "SIZE").then(|| "64m".to_string())
    }

    #[test]
    fn sections_become_groups_over_the_globals_above_them() {
        let text = "; comment\n[global]\nioengine=psync\ndirect=1\nbs=4k\nsize=${SIZE}\nruntime=10\ntime_based\nfilename=/dev/sdb\n\n[readers]\nrw=randread\nnumjobs=2\n\n[writer]\nrw=write\nbs=1m\nrwmixwrite=30\n";
        let f = parse_text("a.fio", text, &env).unwrap();
        assert_eq!(f.jobs, ["readers", "writer"]);
        let g = &f.overrides[0].1;
        assert_eq!(
            g,
            "readers:ioengine=psync,direct=true,bs=4096,size=67108864,runtime=10s,time_based=true,rw=randread,numjobs=2;writer:ioengine=psync,direct=true,size=67108864,runtime=10s,time_based=true,rw=write,bs=1048576,rwmixread=70"
        );
        assert_eq!(f.notes.len(), 1);
        assert!(f.notes[0].starts_with("a.fio:9: filename"), "{:?}", f.notes);
    }

    #[test]
    fn unknown_options_name_the_option_and_the_line() {
        let e = parse_text("b.fio", "[j]\nrw=read\nverify=crc32c\n", &env).unwrap_err();
        let m = e.to_string();
        assert!(
            m.starts_with("b.fio:3: fio option 'verify' is not supported"),
            "{m}"
        );
        assert!(m.contains("rwmixread"), "lists what is supported: {m}");
        assert_eq!(e.why(), Cause::Input);
        let e = parse_text("c.fio", "[j]\nsize=${NOPE}\n", &env).unwrap_err();
        assert!(
            e.to_string().contains("c.fio:2: environment variable NOPE"),
            "{e}"
        );
        let e = parse_text("d.fio", "[j]\nbs=4k,8k\n", &env).unwrap_err();
        assert!(e.to_string().contains("d.fio:2: bs=4k,8k"), "{e}");
        assert!(matches!(
            parse_text("e.fio", "[global]\nbs=4k\n", &env),
            Err(FioError::NoJobs { .. })
        ));
    }
}
