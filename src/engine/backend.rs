//! The I/O backend trait: how a stream turns "op at offset" into a system call. Backends keep
//! their own in-flight bookkeeping so that a queue-depth > 1 backend (io_uring) fits the same
//! shape as the synchronous `psync` one. Which backend a run uses is [`super::BackendKind`].

use super::buffer::AlignedBuf;
use super::sample::Op;

/// A finished I/O: the slot it was submitted on, and bytes done or the errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub slot: usize,
    pub result: Result<u64, i32>,
}

/// One way of issuing I/O for one stream. Implementations must not allocate, lock or log in
/// `submit` / `wait`: they run in the engine's hot path.
pub trait Backend: Send {
    /// How many I/Os may be in flight at once.
    fn queue_depth(&self) -> usize;
    /// Starts `op` of `buf.len()` bytes at `offset` on slot `slot` (< queue_depth).
    fn submit(&mut self, slot: usize, op: Op, offset: u64, buf: &mut AlignedBuf, len: usize);
    /// Waits for one submitted I/O to finish.
    fn wait(&mut self) -> Completion;
}
