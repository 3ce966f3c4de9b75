//! Launchers: a study handed to the batch system a lab already runs, one trial per task, the
//! trials' results directories merged by a job of the same system. iotrial schedules nothing
//! itself: [`slurm`] writes an sbatch job array and a dependent merge job, [`k8s`] an Indexed
//! Job and a merge Job. Each launch has its own directory, `<out>/<study>-<stamp>-<engine>/`:
//! the resolved study (study.toml), launch.json (what was launched), the job files, `shards/`
//! (each task's results directory), `logs/` and `merged/` (the merged results directory with
//! report.html). Task i runs shard i+1 of n, which is the trial at position i of the study's
//! run order (`iotrial study --list-trials`).

pub mod k8s;
pub mod slurm;
mod yaml;

use crate::cause::{Cause, HasCause};
use crate::study::results::manifest::Manifest;
use crate::study::results::ResultsDir;
use crate::study::{plan::identity, Expansion, StudyError};
use crate::utc::utc_iso;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Version of launch.json's layout.
pub const FORMAT: u32 = 1;

/// A launch could not be written, submitted or resumed.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error(transparent)]
    Study(#[from] StudyError),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    /// launch.json is unreadable, or of another study or engine (input).
    #[error("{}: {message}", path.display())]
    Record { path: PathBuf, message: String },
    /// The batch system refused or failed (sbatch, squeue, kubectl).
    #[error("{command}: {message}")]
    Engine { command: String, message: String },
    /// An earlier submission still has tasks in the queue (input: wait or cancel it).
    #[error("{0}")]
    StillQueued(String),
    /// Bad launcher options (input).
    #[error("{0}")]
    Invalid(String),
}

impl HasCause for LaunchError {
    fn why(&self) -> Cause {
        match self {
            LaunchError::Study(e) => e.why(),
            LaunchError::Record { .. } | LaunchError::StillQueued(_) | LaunchError::Invalid(_) => {
                Cause::Input
            }
            LaunchError::Io { .. } => Cause::Run,
            LaunchError::Engine { .. } => Cause::Host,
        }
    }
}

pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> LaunchError {
    let context = context.into();
    move |source| LaunchError::Io { context, source }
}

/// Runs the batch system's `program args...` (an argument vector, no shell); its standard
/// output, or an error with the command and what it said.
pub(crate) fn engine(program: &str, args: &[String]) -> Result<String, LaunchError> {
    let command = format!("{program} {}", args.join(" "));
    let out = std::process::Command::new(program)
        .args(args)
        .output()
        .map_err(|e| LaunchError::Engine {
            command: command.clone(),
            message: format!("{e} (is {program} installed?)"),
        })?;
    if !out.status.success() {
        return Err(LaunchError::Engine {
            command,
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// One submission of a launch's jobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Submission {
    /// The array (Slurm) or Job (Kubernetes) running the trials.
    pub trials_job: String,
    /// The job that merges them.
    pub merge_job: Option<String>,
    /// The task indexes submitted (`0-5%2`, `3`).
    pub tasks: String,
    pub submitted_utc: String,
}

/// launch.json: what a launch directory holds and what was submitted from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchRecord {
    pub format: u32,
    /// `slurm` or `k8s`.
    pub engine: String,
    pub study: String,
    /// The resolved study's hash (as every results directory's manifest records it).
    pub study_hash: String,
    /// The trials' ids, in run order: task i runs `trials[i]`.
    pub trials: Vec<String>,
    pub created_utc: String,
    #[serde(default)]
    pub submissions: Vec<Submission>,
}

/// A launch directory.
#[derive(Debug, Clone)]
pub struct LaunchDir {
    pub root: PathBuf,
    pub record: LaunchRecord,
}

impl LaunchDir {
    /// Creates `<out>/<study>-<stamp>-<engine>/` with study.toml, launch.json, `shards/` and
    /// `logs/` for the whole study of `exp`.
    pub fn create(out: &Path, exp: &Expansion, engine: &str) -> Result<LaunchDir, LaunchError> {
        if exp.options.selects() {
            return Err(LaunchError::Invalid(
                "a launch runs the whole study, one trial per task: no --shard or --trial".into(),
            ));
        }
        let results = ResultsDir::create_part(out, &exp.study.name, Some(engine)).map_err(io(
            format!("create a launch directory in {}", out.display()),
        ))?;
        let root = std::path::absolute(&results.root).unwrap_or(results.root);
        for d in ["shards", "logs"] {
            std::fs::create_dir_all(root.join(d)).map_err(io(format!("create {d}/")))?;
        }
        let text = format!(
            "# The study as launched: every default written out.\n{}",
            exp.study.to_toml()
        );
        std::fs::write(root.join("study.toml"), text).map_err(io("write study.toml"))?;
        let record = LaunchRecord {
            format: FORMAT,
            engine: engine.to_string(),
            study: exp.study.name.clone(),
            study_hash: identity::study_hash(&exp.study),
            trials: exp.trials.iter().map(|t| t.id.clone()).collect(),
            created_utc: utc_iso(SystemTime::now()),
            submissions: Vec::new(),
        };
        let dir = LaunchDir { root, record };
        dir.save()?;
        Ok(dir)
    }

    /// Opens the launch directory `root`, checking it launched the study of `exp` on `engine`.
    pub fn open(root: &Path, exp: &Expansion, engine: &str) -> Result<LaunchDir, LaunchError> {
        let path = root.join("launch.json");
        let bad = |message: String| LaunchError::Record {
            path: path.clone(),
            message,
        };
        let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
        let record: LaunchRecord = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        if record.engine != engine {
            return Err(bad(format!("a launch on {}, not {engine}", record.engine)));
        }
        let hash = identity::study_hash(&exp.study);
        if record.study_hash != hash {
            return Err(bad(format!(
                "launched another study (study {} with hash {}, not {} with {}); give the same study and options",
                record.study,
                &record.study_hash[..12],
                exp.study.name,
                &hash[..12]
            )));
        }
        let root = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
        Ok(LaunchDir { root, record })
    }

    /// The newest launch directory of study `name` on `engine` under `out`.
    pub fn latest(out: &Path, name: &str, engine: &str) -> Option<PathBuf> {
        let suffix = format!("-{engine}");
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(out)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                let n = p.file_name().unwrap_or_default().to_string_lossy();
                n.starts_with(&format!("{name}-"))
                    && n.ends_with(&suffix)
                    && p.join("launch.json").is_file()
            })
            .collect();
        dirs.sort();
        dirs.pop()
    }

    /// Writes launch.json.
    pub fn save(&self) -> Result<(), LaunchError> {
        let mut text = serde_json::to_string_pretty(&self.record).expect("serializes");
        text.push('\n');
        let path = self.root.join("launch.json");
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, text).map_err(io("write launch.json"))?;
        std::fs::rename(&tmp, &path).map_err(io("write launch.json"))
    }

    pub fn shards(&self) -> PathBuf {
        self.root.join("shards")
    }

    pub fn merged(&self) -> PathBuf {
        self.root.join("merged")
    }

    /// The positions of the trials no results directory under `shards/` has finished, in
    /// run order.
    pub fn unfinished(&self) -> Vec<usize> {
        let mut done = vec![false; self.record.trials.len()];
        for e in std::fs::read_dir(self.shards())
            .into_iter()
            .flatten()
            .flatten()
        {
            let Ok(m) = Manifest::load(&e.path()) else {
                continue;
            };
            for rec in &m.trials {
                let finished = e.path().join(&rec.path).join("result.json").is_file();
                if let Some(i) = self.record.trials.iter().position(|t| *t == rec.id) {
                    done[i] |= finished;
                }
            }
        }
        (0..done.len()).filter(|&i| !done[i]).collect()
    }
}

/// What a launcher printed or submitted.
#[derive(Debug, Clone)]
pub struct Launched {
    pub dir: PathBuf,
    /// The job files written.
    pub files: Vec<PathBuf>,
    /// The commands that submit them (run already with `--submit`).
    pub commands: Vec<String>,
    /// What was submitted, with `--submit`.
    pub submitted: Option<Submission>,
    /// Where the merged report will be.
    pub report: PathBuf,
    /// Trials left to run (all of them for a new launch).
    pub trials: usize,
}

/// `0-5`, `1,3,7-9`: task indexes as Slurm's `--array` takes them.
pub fn ranges(indexes: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < indexes.len() {
        let start = indexes[i];
        let mut end = start;
        while i + 1 < indexes.len() && indexes[i + 1] == end + 1 {
            i += 1;
            end += 1;
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ranges() {
        assert_eq!(ranges(&[0, 1, 2, 3, 4, 5]), "0-5");
        assert_eq!(ranges(&[3]), "3");
        assert_eq!(ranges(&[1, 3, 7, 8, 9]), "1,3,7-9");
        assert_eq!(ranges(&[]), "");
    }
}
