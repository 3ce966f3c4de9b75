//! Why the analysis of a trial's samples could not be done ([`AnalysisError`]).

/// Analysis could not be done on the samples given.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error("no samples for stream role '{0}'")]
    MissingRole(String),
    #[error("the samples have no phase named {0}")]
    MissingPhase(String),
    #[error("reading the samples: {0}")]
    Samples(#[from] std::io::Error),
    #[error("{0}")]
    Other(String),
}
