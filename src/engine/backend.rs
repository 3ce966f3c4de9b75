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

    /// Called once by the stream's own thread before its first I/O (an io_uring ring is
    /// enabled there, its one issuer).
    fn start(&mut self) {}

    /// Registers the stream's slot buffers (one per slot, in slot order) once, before the
    /// first I/O, for a backend that can skip mapping them per I/O; a warning when the
    /// kernel refused (the backend then works without).
    fn register(&mut self, _bufs: &[AlignedBuf]) -> Option<String> {
        None
    }

    /// Waits at most `ns` nanoseconds for one submitted I/O; `None` when none finished in
    /// time (a paced stream waits for its next issue time this way).
    fn wait_for(&mut self, _ns: u64) -> Option<Completion> {
        Some(self.wait())
    }
}
