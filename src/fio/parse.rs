//! Reading a fio job file into the `job` workload's parameters: `${VAR}` replaced from the
//! environment (outside comments), then the file read as fio reads it (the job workload's
//! [`jobfile`]) and every job's options checked ([`options`]); the sections go, as job-file
//! text, into the `groups` parameter. Options that only change fio's own reporting or name the
//! target are accepted and listed as notes (iotrial runs on its stack's target); anything iotrial
//! does not model is an error naming the option, the file, the line and why.

use crate::cause::{Cause, HasCause};
use crate::workload::job::jobfile::{self, Assign};
use crate::workload::job::{options, params, JobSpec};
use std::path::{Path, PathBuf};

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
    /// The jobs' names, in order.
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

/// A relative path a job file names (an iolog, a pattern file), made absolute as fio finds it
/// (from the working directory), or beside the job file `file` when it is only there, so the
/// job reads the same file wherever it is planned later. Left as it is when neither has it.
fn anchored(path: &str, file: &str) -> String {
    let p = Path::new(path);
    if p.is_absolute() || path == "-" {
        return path.to_string();
    }
    if let Ok(cwd) = std::env::current_dir() {
        if cwd.join(p).exists() {
            return cwd.join(p).display().to_string();
        }
    }
    let beside = Path::new(file).parent().map(|d| d.join(p));
    match beside {
        Some(b) if b.exists() => std::fs::canonicalize(&b).unwrap_or(b).display().to_string(),
        _ => path.to_string(),
    }
}

/// The value of option `key` with the files it names anchored ([`anchored`]): `read_iolog`'s
/// (':'-separated) and the `'file'` pieces of a pattern.
fn anchor_value(key: &str, value: &str, file: &str) -> String {
    match key {
        "read_iolog" => value
            .split(':')
            .map(|p| anchored(p, file))
            .collect::<Vec<_>>()
            .join(":"),
        "buffer_pattern" | "verify_pattern" => {
            let mut out = String::new();
            let mut rest = value;
            while let Some(at) = rest.find(['\'', '"']) {
                out.push_str(&rest[..at]);
                let quote = rest.as_bytes()[at] as char;
                let Some(end) = rest[at + 1..].find(quote) else {
                    break;
                };
                let inner = &rest[at + 1..at + 1 + end];
                let inner = match quote {
                    '\'' => anchored(inner, file),
                    _ => inner.to_string(),
                };
                out.push(quote);
                out.push_str(&inner);
                out.push(quote);
                rest = &rest[at + end + 2..];
            }
            out.push_str(rest);
            out
        }
        _ => value.to_string(),
    }
}

/// Applies `opts` to `job`, keeping notes (`file:line: note`); the first option iotrial
/// cannot honour fails with its line.
fn apply(
    job: &mut JobSpec,
    opts: &[Assign],
    file: &str,
    notes: &mut Vec<String>,
) -> Result<(), FioError> {
    for o in opts {
        match options::apply(job, &o.key, o.value.as_deref()) {
            Ok(Some(note)) => {
                let n = format!("{file}:{}: {note}", o.line);
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
            Ok(None) => {}
            Err(message) => {
                return Err(FioError::At {
                    file: file.to_string(),
                    line: o.line,
                    message,
                })
            }
        }
    }
    Ok(())
}

/// Converts fio job-file text; `file` names it in errors, `env` resolves `${VAR}`. Every job
/// is read with its options here, so the first option or engine iotrial cannot honour fails
/// with its file and line.
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
    // `${VAR}` outside comments; a line that cannot be expanded fails when its option is
    // read, so the first option iotrial cannot honour is the one reported.
    let mut expanded = String::with_capacity(text.len());
    let mut unset: Vec<(usize, String)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = jobfile::strip_comment(line);
        match expand(code, env) {
            Ok(e) => expanded.push_str(&e),
            Err(m) => {
                unset.push((i + 1, m));
                expanded.push_str(code);
            }
        }
        expanded.push('\n');
    }
    let mut sections = jobfile::sections(&expanded).map_err(|e| at(e.line, e.message))?;
    for o in sections.iter_mut().flat_map(|s| s.options.iter_mut()) {
        if let Some(v) = &o.value {
            o.value = Some(anchor_value(&o.key, v, file));
        }
    }
    let expanded_at = |opts: &[Assign]| -> Result<(), FioError> {
        match opts
            .iter()
            .find_map(|o| unset.iter().find(|(l, _)| *l == o.line))
        {
            Some((l, m)) => Err(at(*l, m.clone())),
            None => Ok(()),
        }
    };
    let mut notes = Vec::new();
    let mut global: Vec<Assign> = Vec::new();
    let mut jobs = Vec::new();
    for s in &sections {
        if s.global {
            global.extend(s.options.iter().cloned());
            continue;
        }
        // fio loads a job's engine before its other options (an engine's own options mean
        // nothing without it): an engine iotrial cannot honour is the reason, wherever it is set.
        let engine = global
            .iter()
            .chain(&s.options)
            .rfind(|o| options::same_option(&o.key, "ioengine"));
        if let Some(o) = engine {
            expanded_at(std::slice::from_ref(o))?;
            let mut scratch = JobSpec::new(&s.name);
            apply(&mut scratch, std::slice::from_ref(o), file, &mut Vec::new())?;
        }
        let mut j = JobSpec::new(&s.name);
        for opts in [&global, &s.options] {
            for o in opts.iter() {
                expanded_at(std::slice::from_ref(o))?;
                apply(&mut j, std::slice::from_ref(o), file, &mut notes)?;
            }
        }
        crate::workload::job::resolve::resolve(&mut j);
        for note in crate::workload::job::job_notes(&j) {
            notes.push(format!("{file}:{}: {note}", s.line));
        }
        if let Err(e) = crate::workload::job::check_job(&j) {
            // The line that set the option, else the job's section.
            let key = e.name().unwrap_or_default();
            let line = global
                .iter()
                .chain(&s.options)
                .filter(|o| options::same_option(&o.key, &key))
                .map(|o| o.line)
                .next_back()
                .unwrap_or(s.line);
            return Err(at(line, e.message()));
        }
        jobs.push(j.name);
    }
    if jobs.is_empty() {
        return Err(FioError::NoJobs {
            file: file.to_string(),
        });
    }
    Ok(JobFile {
        overrides: vec![(params::GROUPS.into(), jobfile::text_of(&sections))],
        notes,
        jobs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(v: &str) -> Option<String> {
        (v == "SIZE").then(|| "64m".to_string())
    }

    #[test]
    fn sections_keep_their_options_and_globals() {
        let text = "; comment ${NOT_EXPANDED}\n[global]\nname=fio-rand-read\nioengine=psync\ndirect=1\nbs=4k\nsize=${SIZE}\nruntime=10   # seconds\ntime_based\nfilename=/dev/sdb\n\n[readers]\nrw=randread\nnumjobs=2 ; two\n\n[writer]\nname=w\nrw=write\nbs=1m\nrwmixwrite=30\n";
        let f = parse_text("a.fio", text, &env).unwrap();
        assert_eq!(f.jobs, ["fio-rand-read", "w"]);
        let g = &f.overrides[0].1;
        assert!(
            g.starts_with("[global]\nname=fio-rand-read\nioengine=psync\n"),
            "{g}"
        );
        assert!(g.contains("size=64m\nruntime=10\ntime_based\n"), "{g}");
        assert!(g.contains("[readers]\nrw=randread\nnumjobs=2\n"), "{g}");
        assert_eq!(f.notes.len(), 1);
        assert!(
            f.notes[0].starts_with("a.fio:10: filename"),
            "{:?}",
            f.notes
        );
    }

    #[test]
    fn what_cannot_run_names_the_option_and_the_line() {
        let e = parse_text("b.fio", "[j]\nrw=read\nbogus=crc32c\n", &env).unwrap_err();
        let m = e.to_string();
        assert!(
            m.starts_with("b.fio:3: fio option 'bogus' is not supported"),
            "{m}"
        );
        assert!(
            m.contains("iotrial list fio-options"),
            "says where the list is: {m}"
        );
        assert_eq!(e.why(), Cause::Input);
        let e = parse_text("c.fio", "[j]\nsize=${NOPE}\n", &env).unwrap_err();
        assert!(
            e.to_string().contains("c.fio:2: environment variable NOPE"),
            "{e}"
        );
        let e = parse_text("d.fio", "[j]\nioengine=rbd\n", &env).unwrap_err();
        assert!(
            e.to_string()
                .contains("d.fio:2: ioengine=rbd cannot be honoured: it is a network engine"),
            "{e}"
        );
        // An engine's own options before it: the engine is what cannot be honoured.
        let e = parse_text(
            "n.fio",
            "[global]\nnfs_url=nfs://h/e\nioengine=nfs\n[j]\n",
            &env,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("n.fio:3: ioengine=nfs cannot be honoured: it is a network engine"),
            "{e}"
        );
        let e = parse_text("f.fio", "[global]\nioengine=io_uring\n[j]\nhipri\n", &env).unwrap_err();
        assert!(e.to_string().starts_with("f.fio:4: hipri: "), "{e}");
        assert!(matches!(
            parse_text("e.fio", "[global]\nbs=4k\n", &env),
            Err(FioError::NoJobs { .. })
        ));
    }
}
