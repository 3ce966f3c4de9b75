//! Which backend a run uses: the backends by name, and opening one over a stream's target. It
//! knows every backend module; the backends know only the trait in `backend`.

use super::backend::Backend;
use super::psync::Psync;
use std::os::fd::OwnedFd;

/// Which backend a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// pread/pwrite, queue depth 1.
    Psync,
}

impl BackendKind {
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Psync => "psync",
        }
    }

    /// Parses a backend name; the error lists what exists.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "psync" => Ok(BackendKind::Psync),
            _ => Err(format!("unknown backend '{s}'; available: psync")),
        }
    }

    /// A backend of this kind over `fd`.
    pub fn open(self, fd: OwnedFd) -> Box<dyn Backend> {
        match self {
            BackendKind::Psync => Box::new(Psync::new(fd)),
        }
    }
}
