//! Errors of the emulated-device server: mounting, serving, unmounting and aborting a FUSE
//! connection.

use crate::cause::{Cause, HasCause};
use std::io;
use std::path::PathBuf;

/// What went wrong while serving a device model.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    #[error("time scale must be a positive finite number, got {0}")]
    BadScale(f64),
    #[error("model capacity is 0 bytes")]
    ZeroCapacity,
    #[error("backing image {path}: {source}")]
    Backing { path: PathBuf, source: io::Error },
    #[error("mountpoint {path}: {source}")]
    Mountpoint { path: PathBuf, source: io::Error },
    #[error("cannot open /dev/fuse (is the fuse module loaded, are we root?): {0}")]
    DevFuse(io::Error),
    #[error("mounting FUSE at {path}: {source}")]
    Mount { path: PathBuf, source: io::Error },
    #[error("FUSE session at {path}: {source}")]
    Session { path: PathBuf, source: io::Error },
    #[error("starting thread {name}: {source}")]
    Thread {
        name: &'static str,
        source: io::Error,
    },
    #[error("unmounting {path}: {source}")]
    Unmount { path: PathBuf, source: io::Error },
    #[error("{path} was busy; its FUSE connection was aborted and it was lazily unmounted")]
    BusyAborted { path: PathBuf },
    #[error("reading {path}: {source}")]
    MountInfo { path: PathBuf, source: io::Error },
    #[error("aborting FUSE connection {minor} of {path}: {source}")]
    Abort {
        path: PathBuf,
        minor: u32,
        source: io::Error,
    },
    #[error("a server thread panicked: {0}")]
    Panicked(&'static str),
    #[error("the device's request log was not started")]
    NoLog,
    #[error("request log {path}: {source}")]
    Log { path: PathBuf, source: io::Error },
    #[error("the device's power is on: there is no cut to take back")]
    Powered,
    #[error("no power cut was planned on the device (its writes were not journaled)")]
    NoCutPlanned,
}

impl HasCause for EmuError {
    fn why(&self) -> Cause {
        match self {
            EmuError::DevFuse(_) => Cause::Host,
            EmuError::BadScale(_) | EmuError::ZeroCapacity => Cause::Input,
            _ => Cause::Run,
        }
    }
}
