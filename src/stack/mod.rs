//! Stacks: where a trial's I/O lands. Device specs name the devices (a directory, an image on
//! a loop device, a real disk, an emulated device); provisioning attaches them, makes the
//! filesystem, sets the scheduler and lays each stream's region out (a file, a partition, a
//! raw region); the ledger releases all of it. Errors say whether the input, the host or the
//! build is at fault.
//!
//! Its rooms: what a stack is ([`spec`], with the [`device`] specs), building one step by step
//! ([`build`]: devices attached, volume, filesystem, layout), the action phases between stream
//! phases ([`phases`], and [`powercut`]), what a run holds and gives back ([`ledger`], with the
//! resources and their release in [`release`], and the device servers that outlive a killed
//! run, [`server`]). The layers a stack may have, each with what it accepts and the commands
//! that make it, sit at the top because the spec checks them and the build and the ledger use
//! them: filesystems ([`fs`], [`hash_seed`]), the I/O [`scheduler`], MD arrays ([`md`]) and ZFS
//! pools ([`zfs`]).

pub mod actions;
pub mod blockdevs;
pub mod build;
pub mod child;
pub mod device;
pub mod fs;
pub mod hash_seed;
pub mod ledger;
pub mod md;
pub mod phases;
pub mod powercut;
pub mod release;
pub mod scheduler;
pub mod serve;
pub mod server;
pub mod spec;
pub mod sys;
pub mod zfs;

/// Building a stack is [`build`]'s; its entry keeps its path as `stack::provision`.
pub use build::provision;
pub use device::{DeviceSpec, DeviceSpecError};
pub use spec::{LayoutKind, StackSpec, StackSpecError};

use crate::cause::{Cause, HasCause};
use crate::emu::EmuError;

/// A stack could not be prepared. The variant says why: the input is wrong, the host cannot
/// build it, or building it failed.
#[derive(Debug, thiserror::Error)]
pub enum StackError {
    /// The stack as described cannot be built (input).
    #[error(transparent)]
    Spec(#[from] StackSpecError),
    /// A device spec names nothing to build (input), or nothing this host can (host).
    #[error(transparent)]
    Device(#[from] DeviceSpecError),
    /// Something the user named is wrong (input): a filesystem, a tunable.
    #[error("{0}")]
    Invalid(String),
    /// The target the user named cannot be used (input).
    #[error("target {spec}: {message}")]
    Target { spec: String, message: String },
    /// The streams' regions do not fit (input).
    #[error("parameter region_size: {needed} bytes of regions do not fit in the {free} bytes free on {path}")]
    NoSpace {
        path: String,
        needed: u64,
        free: u64,
    },
    /// The guard refuses the device the user named (input).
    #[error("{0}")]
    Refused(String),
    /// The kernel refused the mount options (input).
    #[error("mount options '{options}' for {fs}: {message}")]
    MountRejected {
        fs: String,
        options: String,
        message: String,
    },
    /// The host lacks a kernel feature or a tool (host).
    #[error("{0}")]
    Unavailable(String),
    /// Building the stack needs root (host).
    #[error("stack needs root: {0}")]
    NeedsRoot(String),
    /// An emulated device could not be served (host or run, as the emulator says).
    #[error("{spec}: {source}")]
    Emu { spec: String, source: EmuError },
    /// The device server process could not serve an emulated device (host, input or run, as
    /// the server says).
    #[error("{spec}: {source}")]
    DeviceServer {
        spec: String,
        source: server::client::ServerError,
    },
    /// A plan asks for an action phase that a later iotrial brings (input).
    #[error("the {action} phase is not available in this iotrial yet: it comes with {with}")]
    ActionNotYet {
        action: &'static str,
        with: &'static str,
    },
    /// An I/O error while building (run).
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    /// A command failed (run).
    #[error("{0}")]
    Command(String),
    #[error("interrupted")]
    Interrupted,
}

impl StackError {
    /// An I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        StackError::Io {
            context: context.into(),
            source,
        }
    }
}

impl HasCause for StackError {
    fn why(&self) -> Cause {
        match self {
            StackError::Spec(_)
            | StackError::Invalid(_)
            | StackError::Target { .. }
            | StackError::NoSpace { .. }
            | StackError::Refused(_)
            | StackError::MountRejected { .. }
            | StackError::ActionNotYet { .. } => Cause::Input,
            StackError::Device(e) => e.why(),
            StackError::Unavailable(_) | StackError::NeedsRoot(_) => Cause::Host,
            StackError::Emu { source, .. } => source.why(),
            StackError::DeviceServer { source, .. } => source.why(),
            StackError::Io { .. } | StackError::Command(_) => Cause::Run,
            StackError::Interrupted => Cause::Interrupted,
        }
    }
}
