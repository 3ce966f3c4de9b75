//! The engine: runs the stream phases of a [`Plan`] (one OS thread per stream) against placed
//! targets, each phase until its stop condition, and records every stream's samples in
//! bounded memory ([`samples::record`]). It knows nothing about workloads, and nothing about the action
//! phases between stream phases, which the stack does.

pub mod backends;
pub mod buffer;
pub mod cpus;
pub mod plan;
pub mod prepare;
pub mod protocol;
pub mod realtime;
pub mod rng;
mod run;
pub mod samples;
pub mod sources;
mod stream;

pub use backends::backend_kind::{BackendKind, Opened};
pub use plan::{
    Action, CutWhen, IdleLimits, InFlight, Phase, Plan, PlanError, PowerCut, Step, Stop,
};
pub use prepare::FillSeal;
pub use protocol::Protocol;
pub use run::{run, Engine, PhaseOutcome, RunOutput};
pub use samples::record::{Keep, Recorder};
pub use samples::sample::{Op, Sample, StreamSamples};
pub use samples::set::{IdleRecord, PhaseRecord, SampleSet, StreamInfo};
pub use sources::blockgen::{Io, IoGen, Next, PrepareCtx};
pub use sources::source::{Make, OpSource, Source, SourceCtx, WrittenFile};

use std::path::PathBuf;

/// The seed of stream `index` of a plan seeded `plan_seed`: its offsets, its buffer's bytes,
/// a real-time stream's frame sizes and the `rand_seed` of its verify headers derive from it.
pub fn stream_seed(plan_seed: u64, index: usize) -> u64 {
    stream::Cursor::new(plan_seed, index).seed()
}

/// Where a stream's offsets fall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Uniformly random offsets aligned to the I/O size.
    Random,
    /// Consecutive offsets from the start of the region, wrapping at its end.
    Sequential,
    /// Consecutive offsets from the start of the region, wrapping at its end, into a file the
    /// `files` layout creates empty: each write appends (as `dd` does), so the filesystem
    /// allocates as it goes.
    Append,
}

/// How fast a stream issues I/O.
#[derive(Debug, Clone, PartialEq)]
pub enum Pacing {
    /// Next I/O as soon as the last one completes.
    Max,
    /// A fixed number of I/Os per second; latency is also measured from the intended time.
    Rate(f64),
    /// In real time through a modeled application buffer ([`realtime`]): each I/O as soon as
    /// the application's schedule makes a chunk ready (or room for one), latency also measured
    /// from then. Only in phases that run for a duration.
    Realtime(realtime::Realtime),
}

/// One stream of a plan, before it is placed on a target.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamPlan {
    pub name: String,
    pub role: String,
    pub op: Op,
    /// Bytes of target this stream owns; 0: an equal share of what the target holds (the
    /// stack divides its free space among such streams).
    pub region_len: u64,
    pub io_size: u64,
    pub pattern: Pattern,
    pub pacing: Pacing,
    /// Samples to collect under [`Stop::AllHaveN`] (N of seed 000's protocol); other stop
    /// conditions sample every I/O.
    pub samples: usize,
    /// Operations the workload generates itself (file-system operations, a trace); `None`:
    /// block I/O of `op`, `io_size` and `pattern`, which otherwise only describe the stream.
    pub source: Option<Source>,
    /// Queue depth, backend and where in its region the stream starts.
    pub io: StreamIo,
}

/// How a stream issues its I/O beyond its op, size and pattern (fio's `iodepth`, `ioengine`,
/// `offset`); the default is one psync I/O at a time over the whole region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamIo {
    /// I/Os in flight at once (0 or 1: one at a time).
    pub depth: u32,
    /// The stream's backend; `None`: the engine's ([`EngineOptions::backend`]).
    pub backend: Option<BackendKind>,
    /// Bytes at the start of the stream's region it leaves alone: its I/O starts this far in
    /// (fio's `offset`).
    pub skip: u64,
    /// A byte budget of its own: the stream stops once it has moved this many bytes, whatever
    /// the phase's stop condition (fio's `size`); 0: none.
    pub bytes: u64,
    /// Reads and writes mixed at random, this percentage of them reads (fio's `rw=randrw`
    /// with `rwmixread`); `None`: every I/O is the stream's op.
    pub mix: Option<u8>,
    /// An fsync of the target after every this many writes (fio's `fsync`); 0: never.
    pub fsync_every: u64,
    /// Every write carries fio's verify header at the start of each interval; `None`: writes
    /// carry the stream's pseudo-random bytes only.
    pub seal: Option<Seal>,
    /// Writes carry zeros, as `dd` from /dev/zero writes them (seed 001), not pseudo-random
    /// bytes; with no seal, nothing else.
    pub zeros: bool,
    /// This stream does its I/O in the place of an earlier stream of the plan (its index): the
    /// same file or directory, or the same raw region (fio's jobs sharing a `filename`);
    /// `None`: a place of its own.
    pub share: Option<usize>,
}

/// How a stream's writes verify themselves: fio's header ([`crate::verify`]) every `interval`
/// bytes, with the stream's index as `thread`, its count of sealed writes as `numberio`, the
/// write's offset in the target, its issue time (the trial's clock) and the stream's seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seal {
    pub checksum: crate::verify::Checksum,
    /// Bytes each header covers (fio's `verify_interval`; at most the I/O size).
    pub interval: u32,
}

impl Seal {
    /// Bytes each header of the workloads' own seal covers: a filesystem block.
    pub const INTERVAL: u32 = 4096;

    /// The seal every block a workload writes carries: fio's `verify=crc32c` header every
    /// 4 KiB (one per I/O when an I/O is shorter, or leaves a last piece too short for a
    /// header); `None` when an I/O cannot hold one.
    pub fn for_io(io_size: u64) -> Option<Seal> {
        let checksum = crate::verify::Checksum::Crc32c;
        let min = checksum.min_interval() as u64;
        let whole = u64::from(Seal::INTERVAL);
        let interval = if io_size >= whole && (io_size % whole == 0 || io_size % whole >= min) {
            whole
        } else if io_size >= min && io_size <= u64::from(u32::MAX) {
            io_size
        } else {
            return None;
        };
        Some(Seal {
            checksum,
            interval: interval as u32,
        })
    }
}

/// Where one stream's region lives: a file or device path and the byte range within it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub path: PathBuf,
    pub offset: u64,
    pub len: u64,
}

/// How the engine opens and drives targets.
#[derive(Debug, Clone, Copy)]
pub struct EngineOptions {
    /// Open targets with O_DIRECT: the plan's wish where the stack allows it.
    pub direct: bool,
    pub backend: BackendKind,
    /// Emulated devices run this many times faster than their model: a phase's duration (the
    /// model's time) lasts duration / time_scale of real time. 1 for real devices.
    pub time_scale: f64,
    /// The CPUs the stream threads run on; None: every CPU the process may use.
    pub cpus: Option<cpus::CpuSet>,
}

impl EngineOptions {
    /// Buffered psync I/O at the device's own speed, on every CPU: what unit tests run.
    #[cfg(test)]
    pub(crate) fn buffered() -> Self {
        EngineOptions {
            direct: false,
            backend: BackendKind::Psync,
            time_scale: 1.0,
            cpus: None,
        }
    }
}

/// The engine could not run a phase, or could not keep its samples.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("cannot open {path} for stream {stream}: {source}")]
    Open {
        stream: String,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("plan has {streams} streams but {placements} placements")]
    Mismatch { streams: usize, placements: usize },
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("phase {0} is an action phase, which the stack does, not the engine")]
    NotStreams(String),
    #[error("stream {stream}: cannot start its operations in {path}: {source}")]
    Source {
        stream: String,
        path: PathBuf,
        source: std::io::Error,
    },
    /// The samples could not be written to or read from their spill files.
    #[error("samples: {0}")]
    Record(#[from] std::io::Error),
    /// A stop was requested while the streams' files were being laid out.
    #[error("interrupted while laying out the streams' files")]
    Interrupted,
}

/// Opens a block stream's target for what it does: read and write when it mixes them.
pub fn open_stream(
    s: &StreamPlan,
    path: &std::path::Path,
    direct: bool,
) -> std::io::Result<std::fs::File> {
    if s.io.mix.is_none() {
        return open_target(path, s.op, direct);
    }
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    o.read(true).write(true);
    if direct {
        o.custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32);
    }
    o.open(path)
}

impl crate::cause::HasCause for EngineError {
    /// A plan that cannot run, or a stream whose operations refuse the place the stack gave it
    /// (a tree on a raw layout: `InvalidInput`), is the user's input; the rest is the run's.
    fn why(&self) -> crate::cause::Cause {
        use crate::cause::Cause;
        match self {
            EngineError::Plan(_) => Cause::Input,
            EngineError::Source { source, .. }
                if source.kind() == std::io::ErrorKind::InvalidInput =>
            {
                Cause::Input
            }
            EngineError::Interrupted => Cause::Interrupted,
            _ => Cause::Run,
        }
    }
}

/// Opens a stream's target with O_DIRECT (when asked) for the stream's op.
pub fn open_target(path: &std::path::Path, op: Op, direct: bool) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    match op {
        Op::Write => o.write(true),
        _ => o.read(true),
    };
    if direct {
        o.custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32);
    }
    o.open(path)
}

#[cfg(test)]
#[path = "seal_tests.rs"]
mod seal_tests;
