//! Outputs of a trial: result.json, samples.csv and timeseries.csv on disk, and the terminal
//! table and verdict line; and the study's report (report.html, report.md) and the comparison
//! of two results directories. The report knows nothing about how samples were taken.

pub mod compare;
pub mod csv;
pub mod html;
pub mod json;
pub mod load;
pub mod markdown;
pub mod model;
pub mod sections;
pub mod terminal;
pub mod verdicts;

/// An output could not be written or read back.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Format { path: String, message: String },
    #[error("report template: {0}")]
    Template(String),
}

impl ReportError {
    pub fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        ReportError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
