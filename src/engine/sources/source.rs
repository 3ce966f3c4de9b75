//! Streams whose operations the workload generates itself: a tree's mkdirs, fs_mark's
//! create / write / fsync / close, rrd updates, a replayed trace. Such a stream has a
//! [`Source`] in its plan; once the stack has placed it, the engine makes its [`OpSource`]
//! and keeps it from one phase to the next, asking it for one operation at a time and timing
//! exactly the call that does it. A source can instead generate block I/O at a queue depth
//! ([`Source::block`], [`super::blockgen`]).

use super::blockgen::IoGen;
use crate::engine::samples::sample::Op;
use crate::engine::Placement;
use std::sync::Arc;

/// A stream's own list of operations.
pub trait OpSource: Send {
    /// Readies the next operation, untimed (build its path, pick a file); `None` when the
    /// stream's own list of operations has ended for this phase (under [`crate::engine::Stop::OpsEnd`]
    /// that ends the stream's part in the phase; in a later phase the same source is asked
    /// again, so a source can go on to its next stage: create, then remove).
    fn prepare(&mut self) -> Option<Op>;
    /// Does the readied operation; the engine times exactly this call: bytes moved, or the
    /// errno it failed with.
    fn perform(&mut self) -> Result<u64, i32>;
    /// The offset recorded with the readied operation (0 where it has none).
    fn offset(&self) -> u64 {
        0
    }
    /// For a source with timing of its own (a replay at its original pace): when to issue the
    /// readied operation, ns after the phase's streams started. `None`: as the stream's
    /// pacing says.
    fn due_ns(&self) -> Option<u64> {
        None
    }
    /// Lays out what its operations need before the plan's first stream phase (the plan's
    /// `prepare` phase): files to stat or remove made.
    fn lay_out(&mut self, _ctx: &crate::engine::PrepareCtx) -> std::io::Result<()> {
        Ok(())
    }
}

/// What a source is made from once the stack has placed its stream.
#[derive(Debug, Clone, Copy)]
pub struct SourceCtx<'a> {
    /// Where the stream lives: its own empty directory on a filesystem (the `files` layout),
    /// or its region of a raw device.
    pub placement: &'a Placement,
    /// Whether the stack allows O_DIRECT on its files.
    pub direct: bool,
    /// The stream's seed (derived from the plan's seed and the stream's index).
    pub seed: u64,
    /// The stream's index in the plan.
    pub index: usize,
    /// Emulated devices run this many times faster than their model (1 for real devices): a
    /// source with timing of its own divides its model-time delays by it.
    pub time_scale: f64,
}

/// What a block generator is made from once the stack has placed its stream.
pub type MakeGen = dyn Fn(&SourceCtx) -> std::io::Result<Box<dyn IoGen>> + Send + Sync + 'static;

/// The function that makes a stream's source.
pub type MakeSource =
    dyn Fn(&SourceCtx) -> std::io::Result<Box<dyn OpSource>> + Send + Sync + 'static;

/// One file (or raw region) a generated stream writes sealed blocks to, as a scan after a
/// power cut reads it back ([`crate::stack::powercut::scan`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenFile {
    pub path: std::path::PathBuf,
    /// Where the stream's I/O starts in `path` (headers carry offsets in `path`).
    pub base: u64,
    /// Bytes of `path` from `base` the stream's I/O reaches.
    pub len: u64,
    /// Bytes judged as one block: the write size when every write has it (a write cut short
    /// is then torn), else `interval`.
    pub block: u64,
    /// Bytes each header covers.
    pub interval: u64,
    /// The stream's samples say which writes reached this file (its only file): each block is
    /// judged against the last write acknowledged there. Otherwise by its header alone.
    pub by_samples: bool,
    /// Other streams write it too (a shared file): any writer's header for the right place is
    /// the file's own data.
    pub shared: bool,
}

/// What a generated stream's writes go to once placed, for the scan after a power cut; an
/// error when its blocks carry no header (nothing can be judged).
pub type WrittenFiles =
    dyn Fn(&Placement) -> Result<Vec<WrittenFile>, String> + Send + Sync + 'static;

/// How to make a stream's source: cloned with the plan, compared by its description.
#[derive(Clone)]
pub struct Source {
    /// What the source does, in a few words (`mkdir 100000 directories, fan-out 4`).
    pub describe: String,
    pub make: Make,
    /// For a block generator whose writes carry headers: the files they go to.
    pub written: Option<Arc<WrittenFiles>>,
}

/// What a source makes: operations one at a time, or block I/O at a queue depth.
#[derive(Clone)]
pub enum Make {
    Ops(Arc<MakeSource>),
    Block(Arc<MakeGen>),
}

impl Source {
    /// A source of operations described by `describe`, made by `make`.
    pub fn new(
        describe: impl Into<String>,
        make: impl Fn(&SourceCtx) -> std::io::Result<Box<dyn OpSource>> + Send + Sync + 'static,
    ) -> Source {
        Source {
            describe: describe.into(),
            make: Make::Ops(Arc::new(make)),
            written: None,
        }
    }

    /// A source of block I/O ([`super::blockgen::IoGen`]) described by `describe`, made by `make`.
    pub fn block(
        describe: impl Into<String>,
        make: impl Fn(&SourceCtx) -> std::io::Result<Box<dyn IoGen>> + Send + Sync + 'static,
    ) -> Source {
        Source {
            describe: describe.into(),
            make: Make::Block(Arc::new(make)),
            written: None,
        }
    }

    /// This source, its writes going to the files `written` names once placed.
    pub fn writing(
        mut self,
        written: impl Fn(&Placement) -> Result<Vec<WrittenFile>, String> + Send + Sync + 'static,
    ) -> Source {
        self.written = Some(Arc::new(written));
        self
    }

    /// Whether it generates block I/O.
    pub fn is_block(&self) -> bool {
        matches!(self.make, Make::Block(_))
    }
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Source({})", self.describe)
    }
}

impl PartialEq for Source {
    fn eq(&self, other: &Source) -> bool {
        self.describe == other.describe
    }
}
