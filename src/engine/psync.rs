//! The `psync` backend: one pread/pwrite at a time, the I/O done synchronously in `submit`.

use super::backend::{Backend, Completion};
use super::buffer::AlignedBuf;
use super::sample::Op;
use std::os::fd::OwnedFd;

/// Synchronous positional I/O at queue depth 1.
pub struct Psync {
    fd: OwnedFd,
    done: Option<Completion>,
}

impl Psync {
    pub fn new(fd: OwnedFd) -> Self {
        Psync { fd, done: None }
    }
}

impl Backend for Psync {
    fn queue_depth(&self) -> usize {
        1
    }

    fn submit(&mut self, slot: usize, op: Op, offset: u64, buf: &mut AlignedBuf, len: usize) {
        let r = match op {
            Op::Read => rustix::io::pread(&self.fd, &mut buf.as_mut_slice()[..len], offset),
            Op::Write => rustix::io::pwrite(&self.fd, &buf.as_slice()[..len], offset),
            Op::Fsync => rustix::fs::fsync(&self.fd).map(|_| 0),
            // Other file-system ops come from a stream's own source, never through a backend.
            _ => Err(rustix::io::Errno::INVAL),
        };
        self.done = Some(Completion {
            slot,
            result: r.map(|n| n as u64).map_err(|e| e.raw_os_error()),
        });
    }

    fn wait(&mut self) -> Completion {
        self.done.take().expect("wait without submit")
    }

    fn wait_for(&mut self, _ns: u64) -> Option<Completion> {
        self.done.take()
    }
}
