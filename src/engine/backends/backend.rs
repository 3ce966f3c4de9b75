//! The I/O backend trait: how a stream turns "op at offset" into a system call. Backends keep
//! their own in-flight bookkeeping so that a queue-depth > 1 backend (io_uring) fits the same
//! shape as the synchronous `psync` one. Which backend a run uses is [`crate::engine::BackendKind`].

use crate::engine::buffer::AlignedBuf;
use crate::engine::samples::sample::Op;

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
    /// Starts `op` of `len` bytes at `offset` of file `file` (of those the backend was opened
    /// over) on slot `slot` (< queue_depth).
    fn submit_to(
        &mut self,
        file: usize,
        slot: usize,
        op: Op,
        offset: u64,
        buf: &mut AlignedBuf,
        len: usize,
    );
    /// Waits for one submitted I/O to finish.
    fn wait(&mut self) -> Completion;

    /// Starts `op` on the first file.
    fn submit(&mut self, slot: usize, op: Op, offset: u64, buf: &mut AlignedBuf, len: usize) {
        self.submit_to(0, slot, op, offset, buf, len)
    }

    /// Hands queued submissions to the kernel now, for a backend that queues them until it
    /// waits (a generator asking for a batch to go at once).
    fn flush(&mut self) {}

    /// How many submissions go to the kernel together and how many completions a wait asks
    /// for at least (fio's `iodepth_batch_submit`, `iodepth_batch_complete_min`), for a
    /// backend that batches (libaio); others keep their own way.
    fn batching(&mut self, _submit: usize, _complete_min: usize) {}

    /// Gives the next I/O on `slot` the I/O priority `prio` (ioprio_set's value: class << 13 |
    /// level, a hint in bits 3..13); false when the backend cannot carry one per I/O.
    fn set_prio(&mut self, _slot: usize, _prio: u16) -> bool {
        false
    }

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

/// A backend doing one I/O at a time, synchronously in `submit`: what it does per I/O.
pub trait SyncIo: Send {
    /// Does `op` of `len` bytes at `offset` of file `file`: bytes, or the errno.
    fn io(
        &mut self,
        file: usize,
        op: Op,
        offset: u64,
        buf: &mut AlignedBuf,
        len: usize,
    ) -> Result<u64, i32>;
}

/// A [`SyncIo`] as a backend of queue depth 1: the I/O done in `submit`, its completion
/// handed out by the next wait.
pub struct Synchronous<T> {
    pub io: T,
    done: Option<Completion>,
}

impl<T: SyncIo> Synchronous<T> {
    pub fn new(io: T) -> Synchronous<T> {
        Synchronous { io, done: None }
    }
}

impl<T: SyncIo> Backend for Synchronous<T> {
    fn queue_depth(&self) -> usize {
        1
    }

    fn submit_to(
        &mut self,
        file: usize,
        slot: usize,
        op: Op,
        offset: u64,
        buf: &mut AlignedBuf,
        len: usize,
    ) {
        let result = self.io.io(file, op, offset, buf, len);
        self.done = Some(Completion { slot, result });
    }

    fn wait(&mut self) -> Completion {
        self.done.take().expect("wait without submit")
    }

    fn wait_for(&mut self, _ns: u64) -> Option<Completion> {
        self.done.take()
    }
}

/// Test helpers shared by the backends' tests.
#[cfg(test)]
pub mod testing {
    use super::*;

    /// A temporary file of `blocks` 4 KiB blocks of `byte`, opened for reading and writing.
    pub fn file_of(
        byte: u8,
        blocks: usize,
    ) -> (tempfile::TempDir, std::path::PathBuf, std::fs::File) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, vec![byte; blocks * 4096]).unwrap();
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&p)
            .unwrap();
        (d, p, f)
    }

    /// Reads block k into slot k for every slot at once; each completes once, whole, on its
    /// slot, and every buffer holds `byte`. The slots' buffers.
    pub fn reads_complete_on_their_slots(b: &mut dyn Backend, byte: u8) -> Vec<AlignedBuf> {
        let n = b.queue_depth();
        let mut bufs: Vec<AlignedBuf> = (0..n).map(|_| AlignedBuf::new(4096)).collect();
        for (slot, buf) in bufs.iter_mut().enumerate() {
            b.submit(slot, Op::Read, slot as u64 * 4096, buf, 4096);
        }
        let mut seen = vec![false; n];
        for _ in 0..n {
            let c = b.wait();
            assert_eq!(c.result, Ok(4096));
            assert!(
                !std::mem::replace(&mut seen[c.slot], true),
                "slot {} twice",
                c.slot
            );
        }
        assert!(bufs.iter().all(|x| x.as_slice().iter().all(|&v| v == byte)));
        bufs
    }
}
