//! Which backend a run uses: the backends by name, and opening one over a stream's target. It
//! knows every backend module; the backends know only the trait in `backend`.

use super::backend::Backend;
use super::psync::Psync;
use super::uring::Uring;
use std::os::fd::OwnedFd;

/// Which backend a stream uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// pread/pwrite, queue depth 1.
    Psync,
    /// io_uring, up to the stream's queue depth in flight.
    IoUring,
}

/// A backend opened over a target, and what the kernel refused on the way.
pub struct Opened {
    pub backend: Box<dyn Backend>,
    pub warnings: Vec<String>,
}

impl BackendKind {
    /// Every backend, in the order `parse`'s error lists them.
    pub const ALL: [BackendKind; 2] = [BackendKind::Psync, BackendKind::IoUring];

    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Psync => "psync",
            BackendKind::IoUring => "io_uring",
        }
    }

    /// Parses a backend name; the error lists what exists.
    pub fn parse(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| format!("unknown backend '{s}'; available: psync, io_uring"))
    }

    /// A backend of this kind over `fd` with up to `depth` I/Os in flight. An io_uring the
    /// kernel refuses (too old, or disabled by kernel.io_uring_disabled) falls back to psync
    /// at queue depth 1, with a warning.
    pub fn open(self, fd: OwnedFd, depth: usize) -> Opened {
        self.open_all(vec![fd], depth)
    }

    /// A backend of this kind over `fds` (file k of [`super::backend::Backend::submit_to`] is
    /// `fds[k]`), as [`BackendKind::open`].
    pub fn open_all(self, fds: Vec<OwnedFd>, depth: usize) -> Opened {
        match self {
            BackendKind::Psync => Opened {
                backend: Box::new(Psync::over(fds)),
                warnings: Vec::new(),
            },
            BackendKind::IoUring => {
                let copy: std::io::Result<Vec<OwnedFd>> =
                    fds.iter().map(|f| f.try_clone()).collect();
                match Uring::open_all(fds, depth) {
                    Ok((u, warnings)) => Opened {
                        backend: Box::new(u),
                        warnings,
                    },
                    Err(e) => Opened {
                        backend: Box::new(Psync::over(copy.expect("duplicate the target's descriptors"))),
                        warnings: vec![format!(
                            "io_uring: the kernel refused a ring ({e}); psync at queue depth 1 instead"
                        )],
                    },
                }
            }
        }
    }
}
