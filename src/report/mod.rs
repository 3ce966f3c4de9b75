//! The renderer: terminal tables and the progress bar, the study's report (report.html,
//! report.md) and the comparison of two results directories. It reads trials through
//! [`crate::result`] and shows what [`crate::present`] holds; a workload kind's columns and
//! sections come from the [`crate::present::KindLookup`] its caller hands it, so the report
//! knows no workload and nothing about how samples were taken.

pub mod compare;
pub mod hosts;
pub mod html;
pub mod load;
pub mod markdown;
pub mod model;
pub mod monitor;
pub mod terminal;

use crate::result::ResultError;
use std::path::Path;

/// An output could not be written or read back.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file of the results directory, or one the report writes.
    #[error(transparent)]
    File(#[from] ResultError),
    #[error("report template: {0}")]
    Template(String),
}

impl ReportError {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        ResultError::io(path, source).into()
    }

    pub fn format(path: &Path, message: impl Into<String>) -> Self {
        ResultError::format(path, message).into()
    }
}
