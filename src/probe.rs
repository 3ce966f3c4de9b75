//! `iotrial device probe`: a seeker-style characterization of one device — QD1 random 4 KiB
//! read access time, sequential read MB/s at the outer and inner 1%, random 4 KiB write IOPS,
//! sequential write MB/s — each printed beside the device model's analytic expectation when
//! the device is emulated. Every phase is a one-stream run of the engine on the raw device.

use crate::emu::{Expectations, ModelSpec};
use crate::engine::{
    self, BackendKind, EngineOptions, Op, Pacing, Pattern, Placement, Plan, Protocol, StreamPlan,
};
use crate::stack::actions::Actions;
use crate::stack::ledger::Ledger;
use crate::stack::provision::{self, BuildOptions};
use crate::stack::{DeviceSpec, LayoutKind, StackError, StackSpec};
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
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
    #[error("interrupted")]
    Interrupted,
    #[error("{0}")]
    Other(String),
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
    let plan = Plan {
        streams: vec![StreamPlan {
            name: "probe".into(),
            role: "probe".into(),
            op,
            region_len: len,
            io_size: io,
            pattern,
            pacing: Pacing::Max,
            samples: n,
        }],
        direct: true,
        seed,
    };
    let placement = [Placement {
        path: dev.to_path_buf(),
        offset,
        len,
    }];
    let opts = EngineOptions {
        direct: true,
        backend: BackendKind::Psync,
        time_limit: None,
    };
    let out = engine::run(&plan, &placement, opts, Arc::new(Protocol::new(1)), |p| {
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
        return Err(ProbeError::Other(format!(
            "{} {} failed at offset {}: errno {}",
            op.as_str(),
            dev.display(),
            bad.offset,
            bad.errno
        )));
    }
    let mean_lat =
        s.samples.iter().map(|x| x.latency_ns as f64).sum::<f64>() / s.samples.len() as f64;
    Ok((mean_lat / 1e9, s.elapsed_s() + flush_s))
}

/// Flushes the device's write cache (fsync on the block device reaches the device as a cache
/// flush); returns the seconds it took.
fn flush(dev: &Path) -> Result<f64, ProbeError> {
    let t = Instant::now();
    let f = std::fs::File::open(dev)
        .map_err(|e| ProbeError::Other(format!("open {}: {e}", dev.display())))?;
    f.sync_all()
        .map_err(|e| ProbeError::Other(format!("flush {}: {e}", dev.display())))?;
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
        Op::Read => HOST_BOUND_MBS.0,
        Op::Write => HOST_BOUND_MBS.1,
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
    let (expect, scale): (Option<Expectations>, f64) = match device {
        DeviceSpec::Emu(m) => {
            let spec =
                ModelSpec::parse(m).map_err(|e| ProbeError::Other(format!("emu:{m}: {e}")))?;
            (
                Some(
                    spec.expectations(SEQ_IO)
                        .map_err(|e| ProbeError::Other(e.to_string()))?,
                ),
                spec.settings.scale,
            )
        }
        DeviceSpec::Dir(_) | DeviceSpec::TempDir => {
            return Err(ProbeError::Other(
                "a probe needs a block device: image:, block: or emu:".into(),
            ))
        }
        _ => (None, 1.0),
    };
    let stack = StackSpec {
        name: "probe".into(),
        devices: vec![device.to_string()],
        layout: LayoutKind::Regions,
        ..Default::default()
    };
    let tiny = Plan {
        streams: vec![StreamPlan {
            name: "probe".into(),
            role: "probe".into(),
            op: Op::Write,
            region_len: RANDOM_IO,
            io_size: RANDOM_IO,
            pattern: Pattern::Random,
            pacing: Pacing::Max,
            samples: 1,
        }],
        direct: true,
        seed: opts.seed,
    };
    let mark = ledger.len();
    let result: Result<ProbeResult, ProbeError> = (|| {
        let mut actions = Actions::new(false);
        let built = provision::build(
            &stack,
            std::slice::from_ref(device),
            &tiny,
            build,
            ledger,
            &mut actions,
            stop,
        )?;
        let dev = built.placements[0].path.clone();
        let cap = built.as_built["devices"][0]["size_bytes"]
            .as_u64()
            .ok_or_else(|| ProbeError::Other("device size unknown".into()))?;
        let cap = cap - cap % SEQ_IO;
        let one_pct = (cap / 100 / SEQ_IO).max(1) * SEQ_IO;
        let seq_len = one_pct.min(opts.seq_bytes.max(SEQ_IO) / SEQ_IO * SEQ_IO);
        let seq_n = (seq_len / SEQ_IO) as usize;
        let n = opts.random_ios;
        let s = scale;
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
        let (rr, _) = phase(&dev, random(Op::Read), opts.seed, stop)?;
        let (_, t_out) = phase(&dev, seq(Op::Read, 0), opts.seed, stop)?;
        let (_, t_in) = phase(&dev, seq(Op::Read, cap - seq_len), opts.seed, stop)?;
        let (_, t_rw) = phase(&dev, random(Op::Write), opts.seed + 1, stop)?;
        let (_, t_sw) = phase(&dev, seq(Op::Write, 0), opts.seed, stop)?;
        let mbs = |t: f64| seq_len as f64 / (t * s) / 1e6;
        let e = expect.as_ref();
        let figures = vec![
            figure(
                "random 4KiB read access time",
                "ms",
                rr * s * 1e3,
                e.map(|e| e.random_read_ms),
                rr,
                Op::Read,
                RANDOM_IO,
            ),
            figure(
                "sequential read, outer 1%",
                "MB/s",
                mbs(t_out),
                e.map(|e| e.seq_read_outer_mbs),
                t_out / seq_n as f64,
                Op::Read,
                SEQ_IO,
            ),
            figure(
                "sequential read, inner 1%",
                "MB/s",
                mbs(t_in),
                e.map(|e| e.seq_read_inner_mbs),
                t_in / seq_n as f64,
                Op::Read,
                SEQ_IO,
            ),
            figure(
                "random 4KiB write",
                "IOPS",
                n as f64 / (t_rw * s),
                e.map(|e| e.random_write_iops),
                t_rw / n as f64,
                Op::Write,
                RANDOM_IO,
            ),
            figure(
                "sequential write, outer 1%",
                "MB/s",
                mbs(t_sw),
                e.map(|e| e.seq_write_mbs),
                t_sw / seq_n as f64,
                Op::Write,
                SEQ_IO,
            ),
        ];
        let mut stack_json = built.as_built.clone();
        let emulated = ledger.server_stats();
        if !emulated.is_empty() {
            stack_json["emulated"] = serde_json::json!(emulated);
        }
        drop(built);
        Ok(ProbeResult {
            device: device.to_string(),
            capacity_bytes: cap,
            time_scale: s,
            figures,
            stack: stack_json,
        })
    })();
    let errors = ledger.release_to(mark);
    let r = result?;
    if !errors.is_empty() {
        return Err(ProbeError::Other(format!("cleanup: {}", errors.join("; "))));
    }
    Ok(r)
}
