//! The VM layer: a trial run inside a KVM guest. The host attaches the stack's devices (loop,
//! emulated or guarded real disks) and passes them to a QEMU guest as virtio-blk disks; the
//! guest boots a Debian kernel with an initramfs iotrial builds itself ([`image`]), and
//! iotrial's guest agent (`iotrial guest`, the guest's first process) builds the rest of the
//! stack (partitions, MD, mkfs, mount, scheduler) and runs the trial, then sends its files
//! back over a virtio serial port ([`channel`]). The host measures what the guest costs its
//! CPU ([`cpu`]) and releases the guest and the devices through the ledger.

pub mod channel;
pub mod cpio;
pub mod cpu;
pub mod host;
pub mod image;
pub mod modules;
pub mod power;
pub mod qemu;
pub mod session;

pub use session::{run, GuestRun, GuestTrial};

use crate::cause::{Cause, HasCause};
use crate::stack::StackError;

/// A trial in a guest could not run.
#[derive(Debug, thiserror::Error)]
pub enum VmError {
    /// The host lacks QEMU, a guest kernel, busybox or KVM (host): the message names the
    /// package.
    #[error("{0}")]
    Missing(String),
    /// The stack's devices could not be attached on the host.
    #[error(transparent)]
    Stack(#[from] StackError),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    /// The guest did not boot, died or panicked (run): the last lines of its console.
    #[error("{message}; the guest's last console lines:\n{console}")]
    Guest { message: String, console: String },
    /// The trial failed inside the guest, for the reason and cause the guest gave.
    #[error("in the guest: {message}")]
    InGuest { cause: Cause, message: String },
    #[error("interrupted")]
    Interrupted,
}

impl VmError {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> VmError {
        VmError::Io {
            context: context.into(),
            source,
        }
    }
}

impl HasCause for VmError {
    fn why(&self) -> Cause {
        match self {
            VmError::Missing(_) => Cause::Host,
            VmError::Stack(e) => e.why(),
            VmError::Io { .. } | VmError::Guest { .. } => Cause::Run,
            VmError::InGuest { cause, .. } => *cause,
            VmError::Interrupted => Cause::Interrupted,
        }
    }
}
