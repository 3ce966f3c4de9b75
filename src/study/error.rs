//! Errors of study files, built-in studies, expansion and the manifest. Every error about a
//! file names the file, the line and column, the key, and what is allowed.

use crate::cause::{Cause, HasCause};
use crate::stack::StackSpecError;
use std::path::PathBuf;

/// A study could not be loaded, expanded or resumed.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Something at a place in a study file is wrong.
    #[error("{file}:{line}:{column}: {}{message}", key_prefix(.key))]
    At {
        file: String,
        line: usize,
        column: usize,
        /// Dotted path of the key, e.g. `stacks[2].mount` or `workloads[0].set.samples`.
        key: Option<String>,
        message: String,
    },
    /// Neither a built-in study nor an existing file.
    #[error("no study '{name}': not a built-in study (built-in: {builtins}) and no such file")]
    NotFound { name: String, builtins: String },
    /// `--only` named a stack the study does not have.
    #[error("no stack '{name}' in study {study}; its stacks: {known}")]
    UnknownStack {
        study: String,
        name: String,
        known: String,
    },
    /// After overrides a stack has no device to run on.
    #[error("stack '{stack}' of study {study} names no devices and the study has no default `device`; set `device = \"image:size=...\"` in the study, `devices = [...]` in the stack, or pass --device")]
    NoDevice { study: String, stack: String },
    /// A workload's parameters are wrong after overrides (e.g. from --quick).
    #[error("study {study}, workload {workload}: {source}")]
    Param {
        study: String,
        workload: String,
        source: crate::params::ParamError,
    },
    /// A stack cannot be built on its devices (known once `--device` is applied).
    #[error("study {study}: {source}")]
    Stack {
        study: String,
        source: StackSpecError,
    },
    /// The study cannot be expanded as written (a sweep makes a name twice).
    #[error("study {study}: {message}")]
    Invalid { study: String, message: String },
    /// manifest.json is unreadable or not a manifest.
    #[error("{path}: not a valid manifest: {message}")]
    Manifest { path: PathBuf, message: String },
    /// `--resume` of a results directory made by a different study or options.
    #[error("{path} holds a different study: {difference}; resume it with the same study and options it was started with")]
    Mismatch { path: PathBuf, difference: String },
    /// `--trial` named no trial of the study.
    #[error("no trial '{id}' in study {study}; `iotrial study {study} --list-trials` lists their ids and digests")]
    NoSuchTrial { study: String, id: String },
    /// The manifest has no trial of that id.
    #[error("no trial '{0}' in the manifest")]
    UnknownTrial(String),
}

fn key_prefix(key: &Option<String>) -> String {
    key.as_ref().map(|k| format!("{k}: ")).unwrap_or_default()
}

impl StudyError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        StudyError::Io {
            path: path.into(),
            source,
        }
    }
}

/// A file that cannot be read or written is the run's failure; everything else is the input's.
impl HasCause for StudyError {
    fn why(&self) -> Cause {
        match self {
            StudyError::Io { .. } => Cause::Run,
            _ => Cause::Input,
        }
    }
}
