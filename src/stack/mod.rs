//! Stacks: where a trial's I/O lands. A target spec names a device (`dir:PATH` for now) and
//! the layout puts each stream's region on it (one file per stream in a directory).

pub mod actions;
pub mod device;
pub mod files;
pub mod fs;
pub mod guard;
pub mod ledger;
pub mod provision;
pub mod scheduler;
pub mod spec;
pub mod sys;

pub use device::DeviceSpec;
pub use spec::{LayoutKind, StackSpec};

/// A stack could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum StackError {
    #[error("target {spec}: {message}")]
    Target { spec: String, message: String },
    #[error("parameter region_size: {needed} bytes of regions do not fit in the {free} bytes free on {path}")]
    NoSpace {
        path: String,
        needed: u64,
        free: u64,
    },
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    #[error("interrupted")]
    Interrupted,
    #[error("{0}")]
    Command(String),
    #[error("stack: {0}")]
    Spec(String),
    #[error("{0}")]
    Refused(String),
    #[error("stack needs root: {0}")]
    NeedsRoot(String),
}

impl StackError {
    /// An I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        StackError::Io {
            context: context.into(),
            source,
        }
    }

    /// Whether the cause is the user's input (exit status 2) rather than the system.
    pub fn is_user_error(&self) -> bool {
        matches!(
            self,
            StackError::Target { .. }
                | StackError::NoSpace { .. }
                | StackError::Spec(_)
                | StackError::Refused(_)
        )
    }
}
