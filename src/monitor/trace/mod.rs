//! The block trace (root): every request issued to and completed by the stack's disks, read
//! from the trial's own tracefs instance by a thread of its own, classified as journal,
//! metadata or data (flush and discard apart) with the filesystem's journal and metadata
//! located by its own tools before the first phase. Totals per phase, class and direction go
//! to result.json; one row per request to `monitor/blocktrace.csv`. On an emulated device
//! the device server logs every request it receives meanwhile, and the log is checked
//! against the trace request for request.

pub(super) mod blockreq;
pub mod capture;
pub(super) mod devlog;
pub(super) mod fsmap;
pub(super) mod reader;
pub(super) mod ringbuf;
pub(super) mod tracefs;

use self::blockreq::Op;
use self::fsmap::FsMap;
use self::reader::{Reader, HEADER};
use self::ringbuf::{Decoder, Layout};
use self::tracefs::Instance;
use super::counters::threads::Own;
use super::series::CsvFile;
use super::Watch;
use crate::result::monitor::{EmulatedCheck, Extent, MonitorSummary, TraceSummary};
use crate::stack::blockdevs::{DeviceRole, StackDevice};
use crate::stack::ledger::Ledger;
use crate::timeline::Timeline;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// A running block trace.
pub struct Tracing {
    instance: Instance,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Reader>>,
    traced: Vec<StackDevice>,
    map: FsMap,
    /// Emulated devices whose servers log, with the time their logs started.
    logging: Vec<(StackDevice, f64)>,
    warnings: Vec<String>,
}

/// The disks the trace records: the devices the stack is built on and its log device
/// (partitions are traced on their disk; backing disks are the host's).
fn traced(w: &Watch) -> Vec<StackDevice> {
    let roles = [DeviceRole::Data, DeviceRole::Log];
    w.devices
        .devices
        .iter()
        .filter(|d| roles.contains(&d.role))
        .cloned()
        .collect()
}

/// Disk names by (major, minor).
type Names = HashMap<(u32, u32), String>;

/// The trace filter's `dev` value of each traced disk, and the disks' names.
fn trace_devs(traced: &[StackDevice]) -> Result<(Vec<u64>, Names), String> {
    let mut names = HashMap::new();
    let mut devs = Vec::new();
    for d in traced {
        let v = tracefs::trace_dev(&d.name)?;
        names.insert(((v >> 20) as u32, (v & 0xfffff) as u32), d.name.clone());
        devs.push(v);
    }
    Ok((devs, names))
}

/// The journal and metadata of the stack's filesystem, if it has one; a failure is a
/// warning and an empty map.
pub(super) fn map_fs(w: &Watch, warnings: &mut Vec<String>) -> FsMap {
    let (Some(fs), Some(data)) = (&w.devices.fs, w.devices.first(DeviceRole::Data)) else {
        return FsMap::default();
    };
    let log = w.devices.first(DeviceRole::Log).map(|d| d.name.as_str());
    let path = data.path.display().to_string();
    fsmap::read(fs, &path, &data.name, log).unwrap_or_else(|e| {
        warnings.push(format!(
            "monitor trace: the {fs} journal and metadata areas are unknown ({e}); journal requests count as data, metadata only by REQ_META"
        ));
        FsMap::default()
    })
}

impl Tracing {
    /// Locates the filesystem's journal and metadata, creates the tracefs instance and starts
    /// reading it, then starts the emulated devices' request logs.
    pub fn start(w: &Watch, ledger: &mut Ledger, own: &Own) -> Result<Tracing, String> {
        let traced = traced(w);
        if traced.is_empty() {
            return Err("the stack has no block device to trace".into());
        }
        let mut warnings = Vec::new();
        let map = map_fs(w, &mut warnings);
        let (devs, names) = trace_devs(&traced)?;
        let instance = Instance::create(ledger, &devs)?;
        let (pipes, page_size) = instance.cpu_pipes()?;
        let decoder = Decoder {
            issue: Layout::read(&instance.dir, tracefs::EVENTS[0])?,
            complete: Layout::read(&instance.dir, tracefs::EVENTS[1])?,
        };
        let csv = CsvFile::create(&w.dir.join("blocktrace.csv"), HEADER)
            .map_err(|e| warnings.push(format!("monitor trace: blocktrace.csv: {e}")))
            .ok();
        let since_origin = w.timeline.now_s();
        let origin_s = crate::emu::mono_now_ns() as f64 / 1e9 - since_origin;
        let emulated = traced
            .iter()
            .filter(|d| d.emulated.is_some())
            .map(|d| (d.name.clone(), Vec::new()))
            .collect();
        let timeline = Arc::clone(w.timeline);
        let reader = Reader::new(
            names,
            timeline,
            origin_s,
            map.clone(),
            decoder,
            csv,
            emulated,
        );
        let stop = Arc::new(AtomicBool::new(false));
        let (flag, tids) = (Arc::clone(&stop), Arc::clone(&own.monitor_tids));
        let thread = std::thread::Builder::new()
            .name("iotrial-trace".into())
            .spawn(move || {
                super::register_tid(&tids);
                reader.run(pipes, page_size, &flag)
            })
            .map_err(|e| format!("start the trace reader: {e}"))?;
        let origin_ns = (origin_s * 1e9) as u64;
        let logging = start_logs(&traced, w.timeline, origin_ns, ledger, &mut warnings);
        Ok(Tracing {
            instance,
            stop,
            thread: Some(thread),
            traced,
            map,
            logging,
            warnings,
        })
    }

    /// Stops the emulated devices' logs, then the trace; adds the trace's part to `summary`
    /// and returns the warnings.
    pub fn stop(
        mut self,
        timeline: &Timeline,
        dir: &Path,
        ledger: &mut Ledger,
        summary: &mut MonitorSummary,
    ) -> Vec<String> {
        let logs = stop_logs(&self.logging, timeline, dir, ledger, &mut self.warnings);
        self.instance.off();
        self.stop.store(true, Ordering::Release);
        let reader = self.thread.take().map(JoinHandle::join);
        let mut warnings = std::mem::take(&mut self.warnings);
        let Some(Ok(mut reader)) = reader else {
            warnings.push("monitor trace: its reader thread panicked".into());
            return warnings;
        };
        reader.flush_pending();
        warnings.extend(reader.error.take());
        let lost_events = self.instance.lost_events();
        if lost_events > 0 || reader.missed {
            let n = if lost_events > 0 {
                format!("{lost_events} events")
            } else {
                "events".into()
            };
            warnings.push(format!(
                "monitor trace: the kernel's trace buffer dropped {n}; the classes undercount"
            ));
        }
        let emulated = logs
            .into_iter()
            .map(|(dev, window, log)| check_log(&dev, window, &log, &reader))
            .collect();
        summary.io_classes = reader.tally.rows();
        summary.trace = Some(TraceSummary {
            devices: self.traced.iter().map(|d| d.name.clone()).collect(),
            requests: reader.tally.requests(),
            lost_events,
            journal: extents(&self.map.journal),
            journal_source: self.map.journal_source.clone(),
            metadata_areas: self.map.metadata.len() as u64,
            metadata_sectors: self.map.metadata.iter().map(|a| a.end - a.start).sum(),
            emulated,
        });
        warnings
    }
}

/// The journal areas as result.json's extents (a whole log device as its size).
fn extents(areas: &[fsmap::Area]) -> Vec<Extent> {
    areas
        .iter()
        .map(|a| {
            let end = if a.end == u64::MAX {
                crate::stack::build::raw::device_size(Path::new("/dev").join(&a.device).as_path())
                    .map_or(0, |b| b / 512)
            } else {
                a.end
            };
            Extent {
                device: a.device.clone(),
                start_sector: a.start,
                sectors: end.saturating_sub(a.start),
            }
        })
        .collect()
}

/// Starts the request log of every traced emulated device; (device, log start time).
pub(super) fn start_logs(
    traced: &[StackDevice],
    timeline: &Timeline,
    origin_ns: u64,
    ledger: &Ledger,
    warnings: &mut Vec<String>,
) -> Vec<(StackDevice, f64)> {
    let mut out = Vec::new();
    for d in traced {
        let Some(mp) = &d.emulated else { continue };
        let started = match ledger.device_server(mp) {
            Some(s) => s.start_log(origin_ns),
            None => Err("no device server holds it".into()),
        };
        match started {
            Ok(()) => out.push((d.clone(), timeline.now_s())),
            Err(e) => warnings.push(format!("monitor trace: {}: no request log: {e}", d.name)),
        }
    }
    out
}

/// Stops the request logs, writing each to `requests-<device>.csv`; (device, the log's time
/// window, the log's file).
pub(super) fn stop_logs(
    logging: &[(StackDevice, f64)],
    timeline: &Timeline,
    dir: &Path,
    ledger: &Ledger,
    warnings: &mut Vec<String>,
) -> Vec<(String, (f64, f64), PathBuf)> {
    let mut out = Vec::new();
    for (d, start) in logging {
        let Some(server) = d
            .emulated
            .as_deref()
            .and_then(|mp| ledger.device_server(mp))
        else {
            continue;
        };
        let end = timeline.now_s();
        let path = dir.join(format!("requests-{}.csv", d.name));
        let lateness = dir.join(format!("lateness-{}.csv", d.name));
        match server.stop_log(&path, &lateness) {
            Ok((_, 0)) => out.push((d.name.clone(), (*start, end), path)),
            Ok((n, dropped)) => warnings.push(format!(
                "monitor trace: {}: the device server's request log kept {n} requests and dropped {dropped}; not checked against the trace",
                d.name
            )),
            Err(e) => warnings.push(format!("monitor trace: {}: request log: {e}", d.name)),
        }
    }
    out
}

/// The device server's log of `device` against the requests traced on it within `window`.
fn check_log(device: &str, window: (f64, f64), log: &Path, reader: &Reader) -> EmulatedCheck {
    let mut logged: HashMap<(Op, u64, u64), u64> = HashMap::new();
    let mut server_requests = 0;
    let text = std::fs::read_to_string(log).unwrap_or_default();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let op = match f.get(1) {
            Some(&"read") => Op::Read,
            Some(&"write") => Op::Write,
            Some(&"flush") => Op::Flush,
            Some(&"discard") => Op::Discard,
            _ => continue,
        };
        let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        *logged.entry((op, num(2), num(3))).or_default() += 1;
        server_requests += 1;
    }
    let traced: Vec<&(f64, Op, u64, u64)> = reader
        .emulated
        .get(device)
        .into_iter()
        .flatten()
        .filter(|r| (window.0..=window.1).contains(&r.0))
        .collect();
    let mut matched = 0;
    for &&(_, op, offset, bytes) in &traced {
        // The device sees a flush as such, at no offset.
        let key = match op {
            Op::Flush => (op, 0, 0),
            _ => (op, offset, bytes),
        };
        if let Some(n) = logged.get_mut(&key).filter(|n| **n > 0) {
            *n -= 1;
            matched += 1;
        }
    }
    EmulatedCheck {
        device: device.to_string(),
        server_requests,
        traced_requests: traced.len() as u64,
        matched,
    }
}
