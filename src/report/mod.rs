//! Outputs of a trial: result.json, samples.csv and timeseries.csv on disk, and the terminal
//! table and verdict line. The report knows nothing about how samples were taken.

pub mod csv;
pub mod json;
pub mod terminal;

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
}

impl ReportError {
    pub fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        ReportError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
