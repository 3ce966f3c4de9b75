//! A probe's own sequence of I/Os, run through the engine: reads, writes and cache flushes at
//! exact offsets, idle gaps between them, at queue depth 1 (each issued once the one before
//! completed) or deeper. `device characterize` and `device validate` time a device with it.
//! Times come back in the device's own time: measured wall time multiplied by the time scale
//! of an emulated device served faster or slower than its model (1 for a real device), and
//! idle gaps asked for in device time last that long divided by the scale.

use crate::emu::model::RequestId;
use crate::emu::{DeviceModel, ReqKind, Request};
use crate::engine::{
    self, BackendKind, EngineOptions, Io, IoGen, Next, Op, Pacing, Pattern, Placement, Plan,
    Source, StreamPlan,
};
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The largest I/O a script issues.
pub const MAX_IO: u64 = 1 << 20;

/// One step of a script.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    /// A read or a write of `len` bytes at `offset`, or a cache flush (`Op::Fsync`, length 0).
    Io { op: Op, offset: u64, len: u64 },
    /// Nothing for this many seconds of device time once every I/O issued has completed.
    Idle(f64),
    /// Nothing new issued for this many seconds of device time, the I/Os in flight left to
    /// complete meanwhile (so that they reach the device before what follows).
    Pause(f64),
}

impl Step {
    pub fn read(offset: u64, len: u64) -> Step {
        Step::Io {
            op: Op::Read,
            offset,
            len,
        }
    }
    pub fn write(offset: u64, len: u64) -> Step {
        Step::Io {
            op: Op::Write,
            offset,
            len,
        }
    }
    pub fn flush() -> Step {
        Step::Io {
            op: Op::Fsync,
            offset: 0,
            len: 0,
        }
    }
}

/// One I/O as timed, in device time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timed {
    pub op: Op,
    pub offset: u64,
    pub len: u64,
    /// Issue time, seconds since the script started.
    pub issue: f64,
    /// Access time, seconds.
    pub latency: f64,
}

impl Timed {
    /// Completion time, seconds since the script started.
    pub fn done(&self) -> f64 {
        self.issue + self.latency
    }
}

/// A script's I/O failed, or the engine could not run it.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("{op} of {len} bytes at offset {offset} of {path} failed: {err}")]
    Io {
        op: &'static str,
        path: PathBuf,
        offset: u64,
        len: u64,
        err: std::io::Error,
    },
    #[error(transparent)]
    Engine(#[from] engine::EngineError),
    #[error("interrupted")]
    Interrupted,
    /// A write was asked of a device opened read-only (a probe's own mistake).
    #[error("a probe asked to write to {0}, opened read-only")]
    WriteWhileReadOnly(PathBuf),
}

/// Runs scripts on one block device (or, in tests, on a device model in this process).
pub struct Runner<'a> {
    pub dev: PathBuf,
    /// A model served in-process instead of the device: its clock, ns.
    model: Option<(Box<dyn DeviceModel>, u64)>,
    /// The device's time scale: its times are wall times multiplied by it.
    pub scale: f64,
    /// Writes allowed (otherwise the device is opened read-only).
    pub writable: bool,
    pub stop: &'a AtomicBool,
    /// I/Os run so far, and device seconds spent.
    pub ios: u64,
    pub seconds: f64,
}

impl<'a> Runner<'a> {
    pub fn new(dev: &Path, scale: f64, writable: bool, stop: &'a AtomicBool) -> Runner<'a> {
        Runner {
            dev: dev.to_path_buf(),
            model: None,
            scale,
            writable,
            stop,
            ios: 0,
            seconds: 0.0,
        }
    }

    /// A runner on `model` itself, in this process, on the model's own timeline: each I/O is
    /// issued [`MODEL_GAP_NS`] after the one before completed (the host's own path).
    pub fn on_model(model: Box<dyn DeviceModel>, stop: &'a AtomicBool) -> Runner<'a> {
        Runner {
            dev: PathBuf::from("(model)"),
            model: Some((model, 0)),
            scale: 1.0,
            writable: true,
            stop,
            ios: 0,
            seconds: 0.0,
        }
    }

    /// The in-process model's own figures ([`DeviceModel::stats`]); `None` on a device.
    #[cfg(test)]
    pub fn model_stats(&self) -> Option<serde_json::Value> {
        self.model.as_ref().map(|(m, _)| m.stats())
    }

    /// Runs `steps` at queue depth 1; one [`Timed`] per I/O step, in order.
    pub fn run(&mut self, steps: &[Step]) -> Result<Vec<Timed>, ScriptError> {
        self.run_at(steps, 1)
    }

    /// Latencies (seconds) of reads of `len` bytes at `offsets`, one at a time.
    pub fn reads(&mut self, offsets: &[u64], len: u64) -> Result<Vec<f64>, ScriptError> {
        let steps: Vec<Step> = offsets.iter().map(|&o| Step::read(o, len)).collect();
        Ok(self.run(&steps)?.iter().map(|t| t.latency).collect())
    }

    /// Runs `steps` with up to `depth` I/Os in flight (an idle gap first waits for all).
    pub fn run_at(&mut self, steps: &[Step], depth: u32) -> Result<Vec<Timed>, ScriptError> {
        if self.stop.load(Ordering::Relaxed) {
            return Err(ScriptError::Interrupted);
        }
        let writes = steps
            .iter()
            .any(|s| matches!(s, Step::Io { op, .. } if *op != Op::Read));
        if writes && !self.writable {
            return Err(ScriptError::WriteWhileReadOnly(self.dev.clone()));
        }
        if let Some((model, clock)) = self.model.as_mut() {
            let timed = on_model(model.as_mut(), clock, steps, depth.max(1) as usize);
            self.ios += timed.len() as u64;
            self.seconds += timed.iter().map(|t| t.done()).fold(0.0, f64::max);
            return Ok(timed);
        }
        let io_size = steps
            .iter()
            .filter_map(|s| match s {
                Step::Io { len, .. } => Some(*len),
                Step::Idle(_) | Step::Pause(_) => None,
            })
            .max()
            .unwrap_or(4096)
            .clamp(4096, MAX_IO);
        let script = Arc::new(steps.to_vec());
        let (dev, writable, scale) = (self.dev.clone(), self.writable, self.scale);
        let make = move |_: &engine::SourceCtx| -> std::io::Result<Box<dyn IoGen>> {
            Ok(Box::new(ScriptGen {
                steps: script.clone(),
                next: 0,
                dev: dev.clone(),
                writable,
                scale,
                idle_until: None,
            }))
        };
        let backend = if depth > 1 {
            BackendKind::IoUring
        } else {
            BackendKind::Psync
        };
        let stream = StreamPlan {
            name: "probe".into(),
            role: "probe".into(),
            op: Op::Read,
            region_len: 0,
            io_size,
            pattern: Pattern::Sequential,
            pacing: Pacing::Max,
            samples: 0,
            source: Some(Source::block("a probe's script", make)),
            io: engine::StreamIo {
                depth: depth.max(1),
                backend: Some(backend),
                ..Default::default()
            },
        };
        let phases = vec![engine::plan::Phase {
            name: "probe".into(),
            step: engine::plan::Step::Streams {
                streams: vec![0],
                stop: engine::Stop::OpsEnd,
            },
        }];
        let plan = Plan::new(vec![stream], phases, true, 1);
        let placement = [Placement {
            path: self.dev.clone(),
            offset: 0,
            len: 0,
        }];
        let opts = EngineOptions {
            direct: true,
            backend,
            time_scale: 1.0,
            cpus: None,
        };
        let stop = self.stop;
        let out = engine::run(&plan, &placement, opts, |p| {
            if stop.load(Ordering::Relaxed) {
                p.request_stop();
            }
        })?;
        if stop.load(Ordering::Relaxed) || out.incomplete {
            return Err(ScriptError::Interrupted);
        }
        let mut samples = out
            .streams
            .into_iter()
            .next()
            .map(|s| s.samples)
            .unwrap_or_default();
        samples.sort_by_key(|s| s.issue_ns);
        if let Some(bad) = samples.iter().find(|s| s.errno != 0) {
            return Err(ScriptError::Io {
                op: bad.op.as_str(),
                path: self.dev.clone(),
                offset: bad.offset,
                len: bad.bytes,
                err: std::io::Error::from_raw_os_error(bad.errno),
            });
        }
        let t0 = samples.first().map(|s| s.issue_ns).unwrap_or(0);
        let timed: Vec<Timed> = samples
            .iter()
            .map(|s| Timed {
                op: s.op,
                offset: s.offset,
                len: s.bytes,
                issue: (s.issue_ns - t0) as f64 * 1e-9 * self.scale,
                latency: s.latency_ns as f64 * 1e-9 * self.scale,
            })
            .collect();
        self.ios += timed.len() as u64;
        self.seconds += timed.iter().map(|t| t.done()).fold(0.0, f64::max);
        Ok(timed)
    }
}

/// The host's own time between a completion and the next issue, for a model run in-process.
pub const MODEL_GAP_NS: u64 = 60_000;

/// Runs `steps` on `model` from `clock` (advanced): up to `depth` in flight.
fn on_model(
    model: &mut dyn DeviceModel,
    clock: &mut u64,
    steps: &[Step],
    depth: usize,
) -> Vec<Timed> {
    let t0 = *clock + MODEL_GAP_NS;
    let mut out: Vec<Timed> = Vec::new();
    // Completions known: (done, index into out).
    let mut known: Vec<(u64, usize)> = Vec::new();
    let mut flying: Vec<(RequestId, usize)> = Vec::new();
    let mut now = *clock;
    let mut i = 0;
    let mut next_id: RequestId = 0;
    loop {
        // Issue what may be issued now.
        while i < steps.len() && known.len() + flying.len() < depth {
            match steps[i] {
                Step::Idle(s) => {
                    if !known.is_empty() || !flying.is_empty() {
                        break;
                    }
                    now += (s * 1e9) as u64;
                    i += 1;
                }
                Step::Pause(s) => {
                    now += (s * 1e9) as u64;
                    i += 1;
                }
                Step::Io { op, offset, len } => {
                    if op == Op::Fsync && (!known.is_empty() || !flying.is_empty()) {
                        break;
                    }
                    let issue = now + MODEL_GAP_NS;
                    let kind = match op {
                        Op::Read => ReqKind::Read,
                        Op::Write => ReqKind::Write,
                        _ => ReqKind::Flush,
                    };
                    let req = Request { kind, offset, len };
                    out.push(Timed {
                        op,
                        offset,
                        len,
                        issue: (issue - t0) as f64 * 1e-9,
                        latency: 0.0,
                    });
                    next_id += 1;
                    match model.submit(issue, next_id, req) {
                        Some(r) => known.push((r.done_ns.max(issue), out.len() - 1)),
                        None => flying.push((next_id, out.len() - 1)),
                    }
                    now = issue;
                    i += 1;
                }
            }
        }
        if known.is_empty() && flying.is_empty() {
            if i >= steps.len() {
                break;
            }
            continue;
        }
        // Learn the completions the model owes.
        while known.is_empty() {
            let t = model.next_event_ns().unwrap_or(now).max(now);
            model.advance(t, &mut |id, r| {
                if let Some(k) = flying.iter().position(|f| f.0 == id) {
                    let (_, idx) = flying.swap_remove(k);
                    known.push((r.done_ns, idx));
                }
            });
            if known.is_empty() && model.next_event_ns().is_none() {
                break;
            }
        }
        let Some(k) = (0..known.len()).min_by_key(|&k| known[k].0) else {
            break;
        };
        let (done, idx) = known.swap_remove(k);
        out[idx].latency = (done - t0) as f64 * 1e-9 - out[idx].issue;
        now = now.max(done);
    }
    *clock = now;
    out
}

/// The engine's generator of a script.
struct ScriptGen {
    steps: Arc<Vec<Step>>,
    next: usize,
    dev: PathBuf,
    writable: bool,
    scale: f64,
    /// The end of the idle gap being waited out, engine ns.
    idle_until: Option<u64>,
}

impl IoGen for ScriptGen {
    fn open(&mut self, direct: bool) -> std::io::Result<Vec<OwnedFd>> {
        let mut o = std::fs::OpenOptions::new();
        o.read(true).write(self.writable);
        if direct {
            o.custom_flags(libc::O_DIRECT);
        }
        Ok(vec![o.open(&self.dev)?.into()])
    }

    /// The probe's thread runs in the real-time FIFO class when permitted (root): its wake-up
    /// after each completion then does not wait behind the host's ordinary threads, whose
    /// delays would otherwise land in the latencies it times.
    fn begin(&mut self, _phase: &str, _now_ns: u64) {
        crate::emu::go_real_time(crate::emu::WORKER_PRIORITY);
    }

    fn next(&mut self, now_ns: u64, in_flight: usize, _buf: &mut [u8]) -> Next {
        let Some(step) = self.steps.get(self.next).copied() else {
            return Next::End;
        };
        match step {
            Step::Idle(s) | Step::Pause(s) => {
                // An idle waits for what is in flight first; a pause does not.
                if matches!(step, Step::Idle(_)) && in_flight > 0 {
                    return Next::Reap(0);
                }
                let until = *self
                    .idle_until
                    .get_or_insert(now_ns + (s / self.scale * 1e9) as u64);
                if now_ns < until {
                    return Next::Wait(until);
                }
                self.idle_until = None;
                self.next += 1;
                self.next(now_ns, in_flight, _buf)
            }
            Step::Io { op, offset, len } => {
                if op == Op::Fsync && in_flight > 0 {
                    return Next::Reap(0);
                }
                self.next += 1;
                Next::Io(Io {
                    file: 0,
                    op,
                    offset,
                    len: len as u32,
                    ..Io::default()
                })
            }
        }
    }
}
