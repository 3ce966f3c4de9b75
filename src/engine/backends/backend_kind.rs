//! Which backend a run uses: the backends by name, and opening one over a stream's target. It
//! knows every backend module; the backends know only the trait in `backend`.

use super::aio::Aio;
use super::backend::Backend;
use super::memio::{MmapIo, NullIo};
use super::posixaio::PosixAio;
use super::psync::Psync;
use super::syncvar::{SyncVar, Variant, RWF_HIPRI};
use super::uring::Uring;
use std::os::fd::OwnedFd;

/// Which backend a stream uses (fio's `ioengine`s that do block I/O).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// pread/pwrite, queue depth 1.
    Psync,
    /// io_uring, up to the stream's queue depth in flight.
    IoUring,
    /// The kernel's native AIO (io_setup/io_submit/io_getevents), up to the queue depth.
    Libaio,
    /// lseek, then read/write.
    Sync,
    /// lseek, then readv/writev.
    Vsync,
    /// preadv/pwritev.
    Pvsync,
    /// preadv2/pwritev2; `true`: with RWF_HIPRI (fio's `hipri`).
    Pvsync2(bool),
    /// POSIX AIO of the C library, up to the queue depth.
    Posixaio,
    /// Through shared mappings of the files.
    Mmap,
    /// Nothing: every I/O completes at once.
    Null,
    /// fallocate: writes allocate, trims punch holes.
    Falloc,
    /// ftruncate to each write's offset.
    Ftruncate,
}

/// A backend opened over a target, and what the kernel refused on the way.
pub struct Opened {
    pub backend: Box<dyn Backend>,
    pub warnings: Vec<String>,
}

impl BackendKind {
    /// Every backend, in the order `parse`'s error lists them.
    pub const ALL: [BackendKind; 12] = [
        BackendKind::Psync,
        BackendKind::IoUring,
        BackendKind::Libaio,
        BackendKind::Sync,
        BackendKind::Vsync,
        BackendKind::Pvsync,
        BackendKind::Pvsync2(false),
        BackendKind::Posixaio,
        BackendKind::Mmap,
        BackendKind::Null,
        BackendKind::Falloc,
        BackendKind::Ftruncate,
    ];

    /// fio's name of the engine.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Psync => "psync",
            BackendKind::IoUring => "io_uring",
            BackendKind::Libaio => "libaio",
            BackendKind::Sync => "sync",
            BackendKind::Vsync => "vsync",
            BackendKind::Pvsync => "pvsync",
            BackendKind::Pvsync2(_) => "pvsync2",
            BackendKind::Posixaio => "posixaio",
            BackendKind::Mmap => "mmap",
            BackendKind::Null => "null",
            BackendKind::Falloc => "falloc",
            BackendKind::Ftruncate => "ftruncate",
        }
    }

    /// Whether it keeps several I/Os in flight (the others do one at a time).
    pub fn is_async(self) -> bool {
        matches!(
            self,
            BackendKind::IoUring | BackendKind::Libaio | BackendKind::Posixaio
        )
    }

    /// Parses a backend name; the error lists what exists.
    pub fn parse(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|b| b.name()).collect();
                format!("unknown backend '{s}'; available: {}", names.join(", "))
            })
    }

    /// A backend of this kind over `fd` with up to `depth` I/Os in flight. An io_uring the
    /// kernel refuses (too old, or disabled by kernel.io_uring_disabled) falls back to psync
    /// at queue depth 1, with a warning.
    pub fn open(self, fd: OwnedFd, depth: usize) -> Opened {
        self.open_all(vec![fd], depth)
    }

    /// A backend of this kind over `fds` (file k of [`super::backend::Backend::submit_to`] is
    /// `fds[k]`), as [`BackendKind::open`]; a libaio context the kernel refuses
    /// (fs.aio-max-nr reached) falls back to psync the same way.
    pub fn open_all(self, fds: Vec<OwnedFd>, depth: usize) -> Opened {
        let fallback = |fds: Vec<OwnedFd>, why: String| Opened {
            backend: Box::new(Psync::over(fds)),
            warnings: vec![why],
        };
        match self {
            BackendKind::Psync => Opened {
                backend: Box::new(Psync::over(fds)),
                warnings: Vec::new(),
            },
            BackendKind::IoUring => {
                let copy = fds_copy(&fds);
                match Uring::open_all(fds, depth) {
                    Ok((u, warnings)) => Opened {
                        backend: Box::new(u),
                        warnings,
                    },
                    Err(e) => fallback(
                        copy,
                        format!("io_uring: the kernel refused a ring ({e}); psync at queue depth 1 instead"),
                    ),
                }
            }
            BackendKind::Libaio => {
                let copy = fds_copy(&fds);
                match Aio::open_all(fds, depth) {
                    Ok(a) => Opened {
                        backend: Box::new(a),
                        warnings: Vec::new(),
                    },
                    Err(e) => fallback(
                        copy,
                        format!("libaio: the kernel refused an AIO context ({e}; fs.aio-max-nr?); psync at queue depth 1 instead"),
                    ),
                }
            }
            BackendKind::Sync
            | BackendKind::Vsync
            | BackendKind::Pvsync
            | BackendKind::Pvsync2(_)
            | BackendKind::Falloc
            | BackendKind::Ftruncate => {
                let v = match self {
                    BackendKind::Sync => Variant::Sync,
                    BackendKind::Vsync => Variant::Vsync,
                    BackendKind::Pvsync => Variant::Pvsync,
                    BackendKind::Pvsync2(hipri) => {
                        Variant::Pvsync2(if hipri { RWF_HIPRI } else { 0 })
                    }
                    BackendKind::Falloc => Variant::Falloc,
                    _ => Variant::Ftruncate,
                };
                Opened {
                    backend: Box::new(SyncVar::over(v, fds)),
                    warnings: Vec::new(),
                }
            }
            BackendKind::Posixaio => Opened {
                backend: Box::new(PosixAio::over(fds, depth)),
                warnings: Vec::new(),
            },
            BackendKind::Mmap => Opened {
                backend: Box::new(MmapIo::over(fds)),
                warnings: Vec::new(),
            },
            BackendKind::Null => Opened {
                backend: Box::new(NullIo::backend()),
                warnings: Vec::new(),
            },
        }
    }
}

/// Duplicates of `fds` (for a fallback, or a backend built from a closure).
fn fds_copy(fds: &[OwnedFd]) -> Vec<OwnedFd> {
    fds.iter()
        .map(|f| f.try_clone().expect("duplicate the target's descriptors"))
        .collect()
}
