//! `iotrial capture`: records the block requests issued to one named block device while the
//! user's application runs (a command iotrial starts, or for a duration), from the
//! `block_rq_issue` events of a tracefs instance of its own, and writes them as fio's iolog
//! version 3 (time in µs, op, byte offset, bytes) naming the device, which `replay` and
//! `fio --read_iolog` replay. A partition is traced on its disk and its requests are written
//! relative to the partition's start.

use super::blockreq::{op_of, Event, Op};
use super::ringbuf::{Decoder, Layout};
use super::tracefs::{self, Instance};
use crate::cause::{Cause, HasCause};
use crate::stack::ledger::Ledger;
use crate::trace::{iolog, Trace, TraceKind, TraceOp};
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long to record.
#[derive(Debug, Clone, PartialEq)]
pub enum Until {
    /// This many seconds.
    Duration(f64),
    /// Until this command (program and arguments, run without a shell) exits.
    Command(Vec<String>),
}

/// What a capture recorded.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Captured {
    pub device: PathBuf,
    pub out: PathBuf,
    pub requests: u64,
    pub bytes: u64,
    pub seconds: f64,
    /// Events the ring buffer lost (the log then lacks requests).
    pub lost_events: u64,
    /// The command's exit status, when one ran.
    pub exit_status: Option<i32>,
}

/// A capture failed.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("{0} is not a block device; capture records a block device named with --device")]
    NotABlockDevice(PathBuf),
    #[error("the block trace is not available: {0}")]
    Trace(String),
    #[error("cannot start {program}: {source}")]
    Command {
        program: String,
        source: std::io::Error,
    },
    #[error("write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("interrupted")]
    Interrupted,
}

impl HasCause for CaptureError {
    fn why(&self) -> Cause {
        match self {
            CaptureError::NotABlockDevice(_) | CaptureError::Command { .. } => Cause::Input,
            CaptureError::Trace(_) => Cause::Host,
            CaptureError::Write { .. } => Cause::Run,
            CaptureError::Interrupted => Cause::Interrupted,
        }
    }
}

/// The disk a device's requests are traced on, and the byte range of the device on it.
struct Target {
    disk_dev: u64,
    start: u64,
    len: u64,
}

/// Finds `/sys/dev/block/MAJ:MIN` of `device`, refusing what is not a block device.
fn target_of(device: &Path) -> Result<Target, CaptureError> {
    use std::os::unix::fs::MetadataExt;
    let not = || CaptureError::NotABlockDevice(device.to_path_buf());
    let meta = std::fs::metadata(device).map_err(|_| not())?;
    if !meta.file_type().is_block_device() {
        return Err(not());
    }
    let (ma, mi) = (
        rustix::fs::major(meta.rdev()),
        rustix::fs::minor(meta.rdev()),
    );
    let sys = PathBuf::from(format!("/sys/dev/block/{ma}:{mi}"));
    let read = |p: PathBuf| {
        std::fs::read_to_string(p)
            .ok()
            .map(|t| t.trim().to_string())
    };
    let sectors = |p| read(p).and_then(|t| t.parse::<u64>().ok());
    let len = sectors(sys.join("size")).ok_or_else(not)? * 512;
    if sys.join("partition").exists() {
        let start = sectors(sys.join("start")).ok_or_else(not)? * 512;
        let parent = std::fs::canonicalize(sys.join("..")).map_err(|_| not())?;
        let name = parent
            .file_name()
            .ok_or_else(not)?
            .to_string_lossy()
            .to_string();
        let disk_dev = tracefs::trace_dev(&name).map_err(CaptureError::Trace)?;
        return Ok(Target {
            disk_dev,
            start,
            len,
        });
    }
    Ok(Target {
        disk_dev: u64::from(ma) << 20 | u64::from(mi),
        start: 0,
        len,
    })
}

/// Records `device` until `until`, writing the iolog to `out`.
pub fn capture(
    device: &Path,
    out: &Path,
    until: &Until,
    ledger: &mut Ledger,
    stop: &AtomicBool,
) -> Result<Captured, CaptureError> {
    let target = target_of(device)?;
    let mark = ledger.len();
    let r = record(&target, until, ledger, stop);
    let errors = ledger.release_to(mark);
    let (events, lost, seconds, exit_status) = r?;
    if !errors.is_empty() {
        return Err(CaptureError::Trace(errors.join("; ")));
    }
    let trace = to_trace(&events, &target);
    let (requests, bytes) = trace.data_totals();
    let werr = |source| CaptureError::Write {
        path: out.to_path_buf(),
        source,
    };
    let mut f = std::io::BufWriter::new(std::fs::File::create(out).map_err(werr)?);
    iolog::write_v3(&mut f, &trace, &device.display().to_string()).map_err(werr)?;
    std::io::Write::flush(&mut f).map_err(werr)?;
    Ok(Captured {
        device: device.to_path_buf(),
        out: out.to_path_buf(),
        requests,
        bytes,
        seconds,
        lost_events: lost,
        exit_status,
    })
}

type Recorded = (Vec<Event>, u64, f64, Option<i32>);

fn record(
    target: &Target,
    until: &Until,
    ledger: &mut Ledger,
    stop: &AtomicBool,
) -> Result<Recorded, CaptureError> {
    let inst = Instance::create(ledger, &[target.disk_dev]).map_err(CaptureError::Trace)?;
    let (mut pipes, page_size) = inst.cpu_pipes().map_err(CaptureError::Trace)?;
    let decoder = Decoder {
        issue: Layout::read(&inst.dir, tracefs::EVENTS[0]).map_err(CaptureError::Trace)?,
        complete: Layout::read(&inst.dir, tracefs::EVENTS[1]).map_err(CaptureError::Trace)?,
    };
    let mut page = vec![0u8; page_size];
    let mut events = Vec::new();
    let t0 = Instant::now();
    let mut child = match until {
        Until::Command(argv) => {
            let program = argv.first().cloned().unwrap_or_default();
            let c = std::process::Command::new(&program)
                .args(&argv[1..])
                .spawn()
                .map_err(|source| CaptureError::Command { program, source })?;
            Some(c)
        }
        Until::Duration(_) => None,
    };
    let mut status = None;
    loop {
        drain(&mut pipes, &mut page, &decoder, &mut events);
        if stop.load(Ordering::Relaxed) {
            if let Some(c) = child.as_mut() {
                let _ = c.kill();
                let _ = c.wait();
            }
            return Err(CaptureError::Interrupted);
        }
        let done = match (until, child.as_mut()) {
            (Until::Duration(s), _) => t0.elapsed().as_secs_f64() >= *s,
            (_, Some(c)) => match c.try_wait() {
                Ok(Some(st)) => {
                    status = st.code();
                    true
                }
                Ok(None) => false,
                Err(_) => true,
            },
            _ => true,
        };
        if done {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let seconds = t0.elapsed().as_secs_f64();
    inst.off();
    drain(&mut pipes, &mut page, &decoder, &mut events);
    Ok((events, inst.lost_events(), seconds, status))
}

/// Reads every page the buffers hold now.
fn drain(pipes: &mut [std::fs::File], page: &mut [u8], decoder: &Decoder, out: &mut Vec<Event>) {
    for pipe in pipes.iter_mut() {
        loop {
            match pipe.read(page) {
                Ok(0) => break,
                Ok(n) => {
                    decoder.page(&page[..n], out);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    }
}

/// The issued requests inside the target, in time order, relative to its start.
fn to_trace(events: &[Event], target: &Target) -> Trace {
    let mut issued: Vec<&Event> = events.iter().filter(|e| !e.complete).collect();
    issued.sort_by(|a, b| a.ts.total_cmp(&b.ts));
    let ops = issued
        .into_iter()
        .filter_map(|e| {
            let bytes = e.bytes.unwrap_or(e.sectors * 512);
            let kind = match op_of(&e.rwbs, bytes) {
                Op::Read => TraceKind::Read,
                Op::Write => TraceKind::Write,
                Op::Flush => TraceKind::Sync,
                Op::Discard => TraceKind::Trim,
            };
            let at = e.sector * 512;
            let sized = kind != TraceKind::Sync;
            if sized && (at < target.start || at + bytes > target.start + target.len) {
                return None;
            }
            Some(TraceOp {
                at_ns: Some((e.ts * 1e9) as u64),
                kind,
                offset: if sized { at - target.start } else { 0 },
                len: if sized { e.sectors * 512 } else { 0 },
                file: 0,
                wait_us: 0,
            })
        })
        .collect();
    Trace {
        ops,
        files: Vec::new(),
        format: "iolog3",
        undeclared: None,
    }
}
