//! Streams whose block I/O the workload generates itself, one I/O at a time, at the stream's
//! queue depth: which file, which op, where, how long, and what a write carries; what a read
//! brings back is handed to it (a verify read checks its header). Such a stream has a
//! [`crate::engine::Source`] made with [`crate::engine::Source::block`]; once the stack has placed it, the
//! engine makes its [`IoGen`], lets it lay out its files in the plan's `prepare` phase, and runs
//! it in the stream phases after, keeping it from one phase to the next. The engine times and
//! samples every I/O it issues; everything a generator does in `next` and `done` is in the
//! engine's hot path and must not allocate, lock or log.

use crate::engine::samples::sample::Op;
use std::os::fd::OwnedFd;
use std::sync::atomic::AtomicBool;

/// One I/O a generator asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Io {
    /// Index into the files its `open` returned.
    pub file: u32,
    pub op: Op,
    pub offset: u64,
    /// Bytes (at most the stream's `io_size`, the slot buffers' length; 0 for a sync).
    pub len: u32,
    /// How late it is against the time it was meant to go (a paced stream), ns.
    pub lag_ns: u64,
    /// The generator's own mark, handed back with the I/O to `done` (a read that checks what
    /// it brings back).
    pub tag: u8,
    /// Its I/O priority (ioprio_set's value), for a backend that carries one per I/O (libaio,
    /// io_uring); 0: the stream's own.
    pub prio: u16,
}

/// What a generator wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Issue this I/O (a write's data is already in the slot buffer handed to `next`).
    Io(Io),
    /// Nothing before this time (ns of the engine's clock): its completions are taken
    /// meanwhile.
    Wait(u64),
    /// Take completions until at most this many I/Os are in flight, then ask again (0: drain).
    Reap(usize),
    /// The stream's part in this phase is over: what is in flight completes, then it ends.
    End,
}

/// What a generator is told when it lays out its files.
pub struct PrepareCtx<'a> {
    /// Whether the stack allows O_DIRECT on its files.
    pub direct: bool,
    /// Ctrl-C: a long layout ends within a second.
    pub stop: &'a AtomicBool,
}

/// A stream's own block I/O.
pub trait IoGen: Send {
    /// Lays out what the stream needs before its first stream phase (the plan's `prepare`
    /// phase): files created, allocated and filled as the workload wants them.
    fn prepare(&mut self, _ctx: &PrepareCtx) -> std::io::Result<()> {
        Ok(())
    }

    /// Opens the files its I/O goes to, in the order [`Io::file`] indexes them (called at
    /// the start of each stream phase it runs in; the engine closes them at its end).
    fn open(&mut self, direct: bool) -> std::io::Result<Vec<OwnedFd>>;

    /// A stream phase begins: `now_ns` is the engine's clock as its streams are let go.
    fn begin(&mut self, _phase: &str, _now_ns: u64) {}

    /// How many submissions go to the kernel together and how many completions a wait asks
    /// for at least (fio's `iodepth_batch_submit`, `iodepth_batch_complete_min`); 0: the
    /// backend's own way.
    fn batching(&self) -> (usize, usize) {
        (0, 0)
    }

    /// The next thing to do, `in_flight` I/Os being in flight; a write's data goes into `buf`
    /// (the free slot's buffer, `io_size` bytes).
    fn next(&mut self, now_ns: u64, in_flight: usize, buf: &mut [u8]) -> Next;

    /// `io`, issued at `issue_ns`, completed with `result` (bytes, or the errno) at `now_ns`;
    /// `buf` holds what a read brought back. Returns the result to record: a verify read that finds its block damaged
    /// turns a success into an error (fio's EILSEQ).
    fn done(
        &mut self,
        _io: &Io,
        result: Result<u64, i32>,
        _buf: &[u8],
        _issue_ns: u64,
        _now_ns: u64,
    ) -> Result<u64, i32> {
        result
    }

    /// What the stream found in the phase that just ended, for the phase's record (verify
    /// mismatches with their offsets); `None`: nothing to say.
    fn report(&mut self) -> Option<serde_json::Value> {
        None
    }
}
