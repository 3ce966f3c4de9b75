//! The engine: executes a [`Plan`] (one OS thread per stream) against placed targets, following
//! the sampling protocol, and returns every stream's samples. It knows nothing about workloads.

pub mod backend;
mod backend_kind;
pub mod buffer;
pub mod protocol;
pub mod psync;
pub mod rng;
pub mod sample;
mod stream;

pub use backend_kind::BackendKind;
pub use protocol::Protocol;
pub use sample::{Op, Sample, StreamSamples};

use std::path::PathBuf;
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// Where a stream's offsets fall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// Uniformly random offsets aligned to the I/O size.
    Random,
    /// Consecutive offsets from the start of the region, wrapping at its end.
    Sequential,
}

/// How fast a stream issues I/O.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pacing {
    /// Next I/O as soon as the last one completes.
    Max,
    /// A fixed number of I/Os per second; latency is also measured from the intended time.
    Rate(f64),
}

/// One stream of a plan, before it is placed on a target.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamPlan {
    pub name: String,
    pub role: String,
    pub op: Op,
    /// Bytes of target this stream owns.
    pub region_len: u64,
    pub io_size: u64,
    pub pattern: Pattern,
    pub pacing: Pacing,
    /// Samples to collect (N of the protocol).
    pub samples: usize,
}

/// What a workload asks of the stack and the engine: its streams in layout order (the order
/// their regions are laid out on the device), whether it wants O_DIRECT, and the seed of its
/// random offsets.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub streams: Vec<StreamPlan>,
    /// O_DIRECT wanted (the stack falls back to buffered I/O, with a warning, where the
    /// filesystem refuses it).
    pub direct: bool,
    /// Seed of the offset generators (each stream derives its own): the same seed gives every
    /// stack the same offsets.
    pub seed: u64,
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
    /// Stop the run after this long even if sampling is incomplete.
    pub time_limit: Option<Duration>,
}

/// The engine failed before any I/O was timed.
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
}

/// What a run produced.
#[derive(Debug)]
pub struct RunOutput {
    pub streams: Vec<StreamSamples>,
    /// True when the run ended before every stream had its samples (stop request or time limit).
    pub incomplete: bool,
    /// Whether sampling began at all.
    pub sampling_started: bool,
}

/// Opens a stream's target with O_DIRECT (when asked) for the stream's op.
pub fn open_target(path: &std::path::Path, op: Op, direct: bool) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    match op {
        Op::Read => o.read(true),
        Op::Write => o.write(true),
    };
    if direct {
        o.custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32);
    }
    o.open(path)
}

/// Runs `plan` on `placements` with `protocol`. Blocks until every stream thread has
/// finished, calling `tick` about every 20 ms meanwhile (to draw progress or request a stop).
pub fn run(
    plan: &Plan,
    placements: &[Placement],
    opts: EngineOptions,
    protocol: Arc<Protocol>,
    mut tick: impl FnMut(&Protocol),
) -> Result<RunOutput, EngineError> {
    if plan.streams.len() != placements.len() {
        return Err(EngineError::Mismatch {
            streams: plan.streams.len(),
            placements: placements.len(),
        });
    }
    let mut files = Vec::with_capacity(placements.len());
    for (s, p) in plan.streams.iter().zip(placements) {
        let f = open_target(&p.path, s.op, opts.direct).map_err(|e| EngineError::Open {
            stream: s.name.clone(),
            path: p.path.clone(),
            source: e,
        })?;
        files.push(f);
    }
    let barrier = Arc::new(Barrier::new(plan.streams.len() + 1));
    let mut handles = Vec::with_capacity(files.len());
    for (i, ((s, p), f)) in plan.streams.iter().zip(placements).zip(files).enumerate() {
        let job = stream::Job {
            index: i,
            plan: s.clone(),
            placement: p.clone(),
            backend: opts.backend.open(f.into()),
            seed: plan.seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        };
        let protocol = protocol.clone();
        let barrier = barrier.clone();
        handles.push(
            std::thread::Builder::new()
                .name(s.name.clone())
                .spawn(move || stream::run(job, &protocol, &barrier))
                .expect("spawn stream thread"),
        );
    }
    barrier.wait();
    let watchdog_start = std::time::Instant::now();
    while !handles.iter().all(|h| h.is_finished()) {
        if let Some(limit) = opts.time_limit {
            if watchdog_start.elapsed() > limit {
                protocol.request_stop();
            }
        }
        tick(&protocol);
        std::thread::sleep(Duration::from_millis(20));
    }
    let streams: Vec<StreamSamples> = handles
        .into_iter()
        .map(|h| h.join().expect("stream thread panicked"))
        .collect();
    let incomplete = streams
        .iter()
        .zip(&plan.streams)
        .any(|(got, want)| got.samples.len() < want.samples);
    Ok(RunOutput {
        streams,
        incomplete,
        sampling_started: protocol.sampling(),
    })
}
