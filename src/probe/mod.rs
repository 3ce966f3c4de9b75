//! `iotrial device probe`: a seeker-style characterization of one device — QD1 random 4 KiB
//! read access time, sequential read MB/s at the outer and inner 1%, random 4 KiB write IOPS,
//! sequential write MB/s — each printed beside the device model's analytic expectation when
//! the device is emulated. Every phase is a one-stream run of the engine on the raw device.
//! A model whose random reads are too quick for the emulator's own cost per request to vanish
//! in them has them measured on a second, slower-scaled device (`fine`).

pub mod character;
mod fine;
pub mod idle;
pub mod script;
pub mod validate;

pub use fine::{HOST_PATH_SHARE, HOST_PATH_US};

use crate::cause::{Cause, HasCause};
use crate::emu::{Expectations, SpecError};
use crate::engine::{
    self, BackendKind, EngineOptions, Op, Pacing, Pattern, Placement, Plan, StreamPlan,
};
use crate::stack::actions::Actions;
use crate::stack::ledger::Ledger;
use crate::stack::provision::{self, BuildOptions};
use crate::stack::{DeviceSpec, LayoutKind, StackError, StackSpec};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Random I/O size of the probe.
pub const RANDOM_IO: u64 = 4096;
/// Sequential I/O size of the probe.
pub const SEQ_IO: u64 = 1 << 20;

/// How much to measure.
#[derive(Debug, Clone, Copy)]
pub struct ProbeOptions {
    /// Random I/Os per random phase.
    pub random_ios: usize,
    /// Bytes per sequential phase (capped at 1% of the device).
    pub seq_bytes: u64,
    pub seed: u64,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            random_ios: 1000,
            seq_bytes: 256 << 20,
            seed: 1,
        }
    }
}

/// One figure, measured and (for a model) expected.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeFigure {
    pub name: &'static str,
    pub unit: &'static str,
    pub measured: f64,
    pub expected: Option<f64>,
    /// measured / expected - 1, in percent.
    pub diff_pct: Option<f64>,
    /// Wall-clock time per request, µs: when it is near the host's own cost per request (FUSE,
    /// loop, engine), the figure measures the host more than the device model.
    pub wall_us_per_io: f64,
    /// True when `wall_us_per_io` is under [`HOST_BOUND_US`] or the wall-clock rate is over
    /// [`HOST_BOUND_MBS`]: the figure may be the host's; lower the time scale to measure it.
    pub host_bound: bool,
    /// The time scale the figure was measured at (the device's, or a slower one for random
    /// reads the emulator's own cost would otherwise distort).
    pub time_scale: f64,
}

/// Below this wall-clock time per request, host overhead (tens of µs, multiplied by the time
/// scale) is a large share of what a probe phase measures.
pub const HOST_BOUND_US: f64 = 200.0;
/// Above these wall-clock rates (reads, writes), copying data through FUSE and the loop device
/// may limit a probe phase more than the device model does (the emulator moved 1.4–3.4 GB/s
/// of reads and 0.8–1.8 GB/s of writes on this project's 2-core reference machine).
pub const HOST_BOUND_MBS: (f64, f64) = (1500.0, 800.0);

/// What a probe found.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeResult {
    pub device: String,
    pub capacity_bytes: u64,
    pub time_scale: f64,
    pub figures: Vec<ProbeFigure>,
    pub stack: serde_json::Value,
}

/// A probe failed.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error(transparent)]
    Stack(#[from] StackError),
    #[error(transparent)]
    Engine(#[from] engine::EngineError),
    /// The device is not a block device (input).
    #[error("a probe needs a block device: image:, block: or emu:")]
    NotABlockDevice,
    /// The model's expectations cannot be derived from its parameters (input).
    #[error(transparent)]
    Model(#[from] SpecError),
    /// An I/O of a phase failed (run).
    #[error("{op} {path} failed at offset {offset}: errno {errno}")]
    IoFailed {
        op: &'static str,
        path: PathBuf,
        offset: u64,
        errno: i32,
    },
    /// Flushing the device's cache failed (run).
    #[error("flush {path}: {source}")]
    Flush {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The device's size could not be read back (run).
    #[error("the size of {0} is unknown")]
    UnknownSize(PathBuf),
    /// Releasing what the probe made failed (run).
    #[error("cleanup: {0}")]
    Cleanup(String),
    /// A probe's script failed on a device it built (run).
    #[error(transparent)]
    Script(script::ScriptError),
    #[error("interrupted")]
    Interrupted,
}

impl From<script::ScriptError> for ProbeError {
    fn from(e: script::ScriptError) -> Self {
        match e {
            script::ScriptError::Interrupted => ProbeError::Interrupted,
            e => ProbeError::Script(e),
        }
    }
}

impl HasCause for ProbeError {
    fn why(&self) -> Cause {
        match self {
            ProbeError::Stack(e) => e.why(),
            ProbeError::NotABlockDevice | ProbeError::Model(_) => Cause::Input,
            ProbeError::Engine(_)
            | ProbeError::IoFailed { .. }
            | ProbeError::Flush { .. }
            | ProbeError::UnknownSize(_)
            | ProbeError::Cleanup(_)
            | ProbeError::Script(_) => Cause::Run,
            ProbeError::Interrupted => Cause::Interrupted,
        }
    }
}

/// One measurement: `n` I/Os of `io` bytes over `len` bytes from `offset`. A write phase
/// ends with a cache flush of the device, counted in its time: a write-back cache would
/// otherwise absorb the first writes of a phase at host speed and hold the last ones when it
/// ends, so the figure would depend on the phase's length and the next phase would pay for
/// this one's destaging. With the flush it is the sustained rate (as the model's expectation).
struct Phase {
    op: Op,
    pattern: Pattern,
    io: u64,
    offset: u64,
    len: u64,
    n: usize,
}

/// Runs a phase; returns (mean access time s, elapsed s).
fn phase(dev: &Path, ph: Phase, seed: u64, stop: &AtomicBool) -> Result<(f64, f64), ProbeError> {
    let Phase {
        op,
        pattern,
        io,
        offset,
        len,
        n,
    } = ph;
    let stream = StreamPlan {
        name: "probe".into(),
        role: "probe".into(),
        op,
        region_len: len,
        io_size: io,
        pattern,
        pacing: Pacing::Max,
        samples: n,
        io: Default::default(),
        source: None,
    };
    let plan = Plan::sampled("probe", vec![stream], true, seed);
    let placement = [Placement {
        path: dev.to_path_buf(),
        offset,
        len,
    }];
    // Times stay measured ones: the probe scales its figures itself.
    let opts = EngineOptions {
        direct: true,
        backend: BackendKind::Psync,
        time_scale: 1.0,
        cpus: None,
    };
    let out = engine::run(&plan, &placement, opts, |p| {
        if stop.load(Ordering::Relaxed) {
            p.request_stop();
        }
    })?;
    // The engine's teardown between the last completion and the flush (tens of µs) is not
    // counted; the device keeps destaging meanwhile, so the flush is that much shorter.
    let flush_s = match op {
        Op::Write => flush(dev)?,
        _ => 0.0,
    };
    if stop.load(Ordering::Relaxed) || out.incomplete {
        return Err(ProbeError::Interrupted);
    }
    let s = &out.streams[0];
    if let Some(bad) = s.samples.iter().find(|x| x.errno != 0) {
        return Err(ProbeError::IoFailed {
            op: op.as_str(),
            path: dev.to_path_buf(),
            offset: bad.offset,
            errno: bad.errno,
        });
    }
    let mean_lat =
        s.samples.iter().map(|x| x.latency_ns as f64).sum::<f64>() / s.samples.len() as f64;
    Ok((mean_lat / 1e9, s.elapsed_s() + flush_s))
}

/// Flushes the device's write cache (fsync on the block device reaches the device as a cache
/// flush); returns the seconds it took.
fn flush(dev: &Path) -> Result<f64, ProbeError> {
    let t = Instant::now();
    let err = |source| ProbeError::Flush {
        path: dev.to_path_buf(),
        source,
    };
    let f = std::fs::File::open(dev).map_err(err)?;
    f.sync_all().map_err(err)?;
    Ok(t.elapsed().as_secs_f64())
}

fn figure(
    name: &'static str,
    unit: &'static str,
    measured: f64,
    expected: Option<f64>,
    wall_s_per_io: f64,
    op: Op,
    io_bytes: u64,
) -> ProbeFigure {
    let wall_mbs = io_bytes as f64 / wall_s_per_io / 1e6;
    let max_mbs = match op {
        Op::Write => HOST_BOUND_MBS.1,
        _ => HOST_BOUND_MBS.0,
    };
    let diff_pct = expected
        .filter(|e| e.is_finite() && *e > 0.0)
        .map(|e| (measured / e - 1.0) * 100.0);
    ProbeFigure {
        name,
        unit,
        measured,
        expected: expected.filter(|e| e.is_finite()),
        diff_pct,
        wall_us_per_io: wall_s_per_io * 1e6,
        host_bound: wall_s_per_io * 1e6 < HOST_BOUND_US || wall_mbs > max_mbs,
        time_scale: 1.0,
    }
}

/// Probes `device`. Random writes and sequential writes destroy data: real disks pass the guard.
pub fn probe(
    device: &DeviceSpec,
    opts: &ProbeOptions,
    build: &BuildOptions,
    ledger: &mut Ledger,
    stop: &AtomicBool,
) -> Result<ProbeResult, ProbeError> {
    let (expect, scale) = model_of(device)?;
    let (measured, stack) = released_after(ledger, |l| {
        probe_built(device, build, l, stop, |dev, cap| {
            measure(dev, cap, opts, stop)
        })
    })?;
    let mut figures = measured.figures(expect.as_ref(), scale);
    for f in &mut figures {
        f.time_scale = scale;
    }
    if let Some(slower) = fine::slower_device(device, expect.as_ref())? {
        let random = |dev: &Path, cap| fine::random_read(dev, cap, opts, stop);
        let (rr, _) = released_after(ledger, |l| {
            probe_built(&slower.device, build, l, stop, random)
        })?;
        let e = expect.as_ref().map(|e| e.random_read_ms);
        figures[0] = fine::figure_at(rr, e, slower.scale);
    }
    Ok(ProbeResult {
        device: device.to_string(),
        capacity_bytes: measured.capacity,
        time_scale: scale,
        figures,
        stack,
    })
}

/// Runs `f` and releases what it put in the ledger, whatever its outcome.
pub fn released_after<T>(
    ledger: &mut Ledger,
    f: impl FnOnce(&mut Ledger) -> Result<T, ProbeError>,
) -> Result<T, ProbeError> {
    let mark = ledger.len();
    let result = f(ledger);
    let errors = ledger.release_to(mark);
    let r = result?;
    if !errors.is_empty() {
        return Err(ProbeError::Cleanup(errors.join("; ")));
    }
    Ok(r)
}

/// What the model of an emulated device expects, and its time scale; none and 1 for others.
fn model_of(device: &DeviceSpec) -> Result<(Option<Expectations>, f64), ProbeError> {
    match device {
        DeviceSpec::Emu { model, .. } => {
            Ok((Some(model.expectations(SEQ_IO)?), model.settings.scale))
        }
        DeviceSpec::Dir(_) | DeviceSpec::TempDir => Err(ProbeError::NotABlockDevice),
        _ => Ok((None, 1.0)),
    }
}

/// Builds `device` raw and measures it with `measure` (given the block device and its size);
/// returns the measurements and the stack as built.
pub fn probe_built<T>(
    device: &DeviceSpec,
    build: &BuildOptions,
    ledger: &mut Ledger,
    stop: &AtomicBool,
    measure: impl FnOnce(&Path, u64) -> Result<T, ProbeError>,
) -> Result<(T, serde_json::Value), ProbeError> {
    let raw = built_raw(device, build, ledger, stop)?;
    let measured = measure(&raw.path, raw.capacity)?;
    let mut stack_json = raw.as_built;
    let emulated = ledger.server_stats();
    if !emulated.is_empty() {
        stack_json["emulated"] = serde_json::json!(emulated);
    }
    Ok((measured, stack_json))
}

/// A device built raw: its block device, its size and the stack as built. What made it is in
/// the ledger, released with it.
pub struct BuiltRaw {
    pub path: PathBuf,
    pub capacity: u64,
    pub as_built: serde_json::Value,
}

/// Builds `device` raw, leaving what it takes in `ledger` (several may be held at once: a
/// device and its twin, timed in turn).
pub fn built_raw(
    device: &DeviceSpec,
    build: &BuildOptions,
    ledger: &mut Ledger,
    stop: &AtomicBool,
) -> Result<BuiltRaw, ProbeError> {
    let stack = StackSpec {
        name: "probe".into(),
        devices: vec![device.to_string()],
        layout: LayoutKind::Regions,
        ..Default::default()
    };
    let stream = StreamPlan {
        name: "probe".into(),
        role: "probe".into(),
        op: Op::Write,
        region_len: RANDOM_IO,
        io_size: RANDOM_IO,
        pattern: Pattern::Random,
        pacing: Pacing::Max,
        samples: 1,
        io: Default::default(),
        source: None,
    };
    let tiny = Plan::sampled("probe", vec![stream], true, 1);
    let mut actions = Actions::new(false);
    let devices = std::slice::from_ref(device);
    let built = provision::build(&stack, devices, &tiny, build, ledger, &mut actions, stop)?;
    let path = built.placements[0].path.clone();
    let capacity = built.as_built["devices"][0]["size_bytes"]
        .as_u64()
        .ok_or_else(|| ProbeError::UnknownSize(path.clone()))?;
    Ok(BuiltRaw {
        path,
        capacity,
        as_built: built.as_built,
    })
}

/// What the five phases of a probe took.
struct Measured {
    /// Capacity probed (whole sequential I/Os).
    capacity: u64,
    seq_len: u64,
    seq_n: usize,
    random_n: usize,
    /// Mean random read access time, s.
    random_read: f64,
    /// Elapsed seconds of: sequential read outer, inner; random write; sequential write.
    seq_read_outer: f64,
    seq_read_inner: f64,
    random_write: f64,
    seq_write: f64,
}

/// Runs the probe's phases on the block device `dev` of `cap` bytes.
fn measure(
    dev: &Path,
    cap: u64,
    opts: &ProbeOptions,
    stop: &AtomicBool,
) -> Result<Measured, ProbeError> {
    let cap = cap - cap % SEQ_IO;
    let one_pct = (cap / 100 / SEQ_IO).max(1) * SEQ_IO;
    let seq_len = one_pct.min(opts.seq_bytes.max(SEQ_IO) / SEQ_IO * SEQ_IO);
    let seq_n = (seq_len / SEQ_IO) as usize;
    let n = opts.random_ios;
    let random = |op| Phase {
        op,
        pattern: Pattern::Random,
        io: RANDOM_IO,
        offset: 0,
        len: cap,
        n,
    };
    let seq = |op, offset| Phase {
        op,
        pattern: Pattern::Sequential,
        io: SEQ_IO,
        offset,
        len: seq_len,
        n: seq_n,
    };
    let seed = opts.seed;
    Ok(Measured {
        capacity: cap,
        seq_len,
        seq_n,
        random_n: n,
        random_read: phase(dev, random(Op::Read), seed, stop)?.0,
        seq_read_outer: phase(dev, seq(Op::Read, 0), seed, stop)?.1,
        seq_read_inner: phase(dev, seq(Op::Read, cap - seq_len), seed, stop)?.1,
        random_write: phase(dev, random(Op::Write), seed + 1, stop)?.1,
        seq_write: phase(dev, seq(Op::Write, 0), seed, stop)?.1,
    })
}

impl Measured {
    /// The figures in the model's time (measured times multiplied by `scale`), beside what
    /// the model expects.
    fn figures(&self, expect: Option<&Expectations>, s: f64) -> Vec<ProbeFigure> {
        let mbs = |t: f64| self.seq_len as f64 / (t * s) / 1e6;
        let per_seq = |t: f64| t / self.seq_n as f64;
        let e = |f: fn(&Expectations) -> f64| expect.map(f);
        let n = self.random_n as f64;
        vec![
            figure(
                "random 4KiB read access time",
                "ms",
                self.random_read * s * 1e3,
                e(|e| e.random_read_ms),
                self.random_read,
                Op::Read,
                RANDOM_IO,
            ),
            figure(
                "sequential read, outer 1%",
                "MB/s",
                mbs(self.seq_read_outer),
                e(|e| e.seq_read_outer_mbs),
                per_seq(self.seq_read_outer),
                Op::Read,
                SEQ_IO,
            ),
            figure(
                "sequential read, inner 1%",
                "MB/s",
                mbs(self.seq_read_inner),
                e(|e| e.seq_read_inner_mbs),
                per_seq(self.seq_read_inner),
                Op::Read,
                SEQ_IO,
            ),
            figure(
                "random 4KiB write",
                "IOPS",
                n / (self.random_write * s),
                e(|e| e.random_write_iops),
                self.random_write / n,
                Op::Write,
                RANDOM_IO,
            ),
            figure(
                "sequential write, outer 1%",
                "MB/s",
                mbs(self.seq_write),
                e(|e| e.seq_write_mbs),
                per_seq(self.seq_write),
                Op::Write,
                SEQ_IO,
            ),
        ]
    }
}
