//! A finished trial as found in a results directory (its directory and its result.json), and
//! one stack's finished trials of one workload: what the report and a workload's report
//! sections read.

use super::{ResultError, TrialResult};
use std::path::PathBuf;

/// One finished trial as found on disk.
#[derive(Debug, Clone)]
pub struct Trial {
    pub stack: String,
    /// The workload's name in the study.
    pub workload: String,
    pub repeat: u32,
    /// The trial's directory (holds result.json, samples.csv, ...).
    pub dir: PathBuf,
    /// Its result.json.
    pub result: TrialResult,
}

impl Trial {
    /// Path of a file in the trial's directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// An error about this trial's result.json.
    pub fn error(&self, message: impl Into<String>) -> ResultError {
        ResultError::format(&self.file("result.json"), message)
    }
}

/// One stack's trials of one workload.
#[derive(Debug, Clone)]
pub struct StackTrials<'a> {
    pub stack: &'a str,
    /// A baseline: shown beside the others, never ranked.
    pub baseline: bool,
    /// Repeats in order; never empty.
    pub trials: Vec<&'a Trial>,
}
