//! Monitors: what watches a trial from outside its workload. They start before the first phase and
//! stop after the last, sampling in their own thread (never in the I/O path) once per interval:
//! per-device iostat -x figures ([`counters::diskstats`]), the CPU of every thread on the host ([`counters::threads`])
//! and of the host as a whole, steal included ([`counters::hostcpu`]), dirty and writeback memory
//! ([`counters::memory`]); and, with root, block requests traced through tracefs and classified as journal,
//! metadata or data ([`trace`]); without the trace, an emulated device's own request log classified
//! the same way (`devlog`). With either, an emulated device's replies' lateness second by second
//! is set beside the host's steal and memory stall ([`stalls`]). Every row carries its time from
//! the trial's [`Timeline`] origin and the phase it fell in. Besides the interval clock, the counters are read at every phase boundary
//! ([`Running::boundary`]), so no interval straddles two phases and each phase's totals are exact;
//! a row at a boundary carries the phase it closes. They know the stack's devices and the timeline,
//! never the workload. A monitor that fails is a warning, never a failed trial.
//!
//! The monitors that read the kernel's counters live in [`counters`], the block trace with
//! what it reads and classifies in [`trace`].

pub mod counters;
mod series;
pub mod settings;
pub mod stalls;
pub mod trace;

pub use settings::{Monitor, Settings, SettingsError};

use crate::result::monitor::MonitorSummary;
use crate::stack::blockdevs::StackDevices;
use crate::stack::ledger::Ledger;
use crate::stack::release::resource::Resource;
use crate::timeline::{Span, Timeline};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The directory a trial's monitors write into while it runs, recorded in the ledger (so a
/// killed run leaves nothing behind) until the trial takes its files.
pub struct Dir {
    path: PathBuf,
}

static SEQ: AtomicUsize = AtomicUsize::new(0);

impl Dir {
    /// A fresh directory in the temporary directory, in `ledger` before it exists.
    pub fn create(ledger: &mut Ledger) -> std::io::Result<Dir> {
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("iotrial-monitor-{}-{n}", std::process::id()));
        ledger.record(Resource::TempDir { path: path.clone() })?;
        std::fs::create_dir_all(&path)?;
        Ok(Dir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Takes the directory out of `ledger` (it must be the newest resource left): the
    /// returned [`Files`] own it from now on. `None` if it was not the newest.
    pub fn keep(self, ledger: &mut Ledger) -> Option<Files> {
        ledger
            .forget(&Resource::TempDir {
                path: self.path.clone(),
            })
            .then_some(Files { path: self.path })
    }
}

/// A finished trial's monitor files, removed when dropped unless moved first.
#[derive(Debug)]
pub struct Files {
    path: PathBuf,
}

impl Files {
    /// Moves every file into `dest` (created), e.g. a trial's `monitor/` directory.
    pub fn move_into(&self, dest: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dest)?;
        for e in std::fs::read_dir(&self.path)? {
            let from = e?.path();
            let to = dest.join(from.file_name().unwrap_or_default());
            if std::fs::rename(&from, &to).is_err() {
                std::fs::copy(&from, &to)?;
                std::fs::remove_file(&from)?;
            }
        }
        Ok(())
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// What the monitors need to know of the trial.
pub struct Watch<'a> {
    pub settings: &'a Settings,
    pub devices: &'a StackDevices,
    pub timeline: &'a Arc<Timeline>,
    pub dir: &'a Path,
}

/// The periodic monitors, owned by their thread while they run.
#[derive(Default)]
struct Periodic {
    disk: Option<counters::diskstats::Diskstats>,
    threads: Option<counters::threads::Threads>,
    memory: Option<counters::memory::Memory>,
    warnings: Vec<String>,
}

impl Periodic {
    /// Starts the periodic monitors `settings` asks for, each failure a warning.
    fn start(w: &Watch, own: counters::threads::Own, t_s: f64) -> Periodic {
        let mut p = Periodic::default();
        let span = w.timeline.span_at(t_s);
        let s = w.settings;
        if s.has(Monitor::Diskstats) {
            p.disk = p.started(
                "diskstats",
                counters::diskstats::Diskstats::start(w.dir, &w.devices.devices, t_s),
            );
        }
        if s.has(Monitor::Threads) {
            p.threads = p.started(
                "threads",
                counters::threads::Threads::start(w.dir, own, t_s),
            );
        }
        if s.has(Monitor::Memory) {
            p.memory = p.started("memory", counters::memory::Memory::start(w.dir, t_s, &span));
        }
        p
    }

    /// The monitors that started.
    fn running(&self) -> Vec<Monitor> {
        let on = [
            (Monitor::Diskstats, self.disk.is_some()),
            (Monitor::Threads, self.threads.is_some()),
            (Monitor::Memory, self.memory.is_some()),
        ];
        on.into_iter()
            .filter(|(_, on)| *on)
            .map(|(m, _)| m)
            .collect()
    }

    fn started<T>(&mut self, name: &str, r: std::io::Result<T>) -> Option<T> {
        r.map_err(|e| {
            self.warnings
                .push(format!("monitor {name} did not start: {e}"))
        })
        .ok()
    }

    /// One sample of every monitor at `t_s`, for an interval that belongs to `span`; a monitor
    /// that fails stops, with a warning.
    fn sample(&mut self, t_s: f64, span: &Span, also: &[String]) {
        let mut failed = Vec::new();
        if let Some(Err(e)) = self.disk.as_mut().map(|m| m.sample(t_s, span, also)) {
            failed.push(format!("monitor diskstats stopped at {t_s:.1} s: {e}"));
            self.disk = None;
        }
        if let Some(Err(e)) = self.threads.as_mut().map(|m| m.sample(t_s, span)) {
            failed.push(format!("monitor threads stopped at {t_s:.1} s: {e}"));
            self.threads = None;
        }
        if let Some(Err(e)) = self.memory.as_mut().map(|m| m.sample(t_s, span)) {
            failed.push(format!("monitor memory stopped at {t_s:.1} s: {e}"));
            self.memory = None;
        }
        self.warnings.extend(failed);
    }

    /// Samples every `interval`, and at every boundary it is told of, until told to stop
    /// (the sender dropped), then once more.
    fn run(mut self, timeline: &Timeline, interval: Duration, msgs: mpsc::Receiver<Msg>) -> Self {
        let mut next = Instant::now() + interval;
        let mut last_t = timeline.now_s();
        loop {
            let wait = next.saturating_duration_since(Instant::now());
            let (boundary, last) = match msgs.recv_timeout(wait) {
                Ok(Msg::Boundary(span, ack)) => (Some((span, ack)), false),
                Err(mpsc::RecvTimeoutError::Timeout) => (None, false),
                Err(mpsc::RecvTimeoutError::Disconnected) => (None, true),
            };
            let t_s = timeline.now_s();
            let (span, ack) = match boundary {
                Some((span, ack)) => (span, Some(ack)),
                None => (timeline.span_at(t_s), None),
            };
            let also = timeline.phases_between(last_t, t_s, span.phase());
            self.sample(t_s, &span, &also);
            last_t = t_s;
            if last {
                return self;
            }
            match ack {
                // The interval clock goes on as it was: a boundary adds a reading.
                Some(ack) => {
                    let _ = ack.send(());
                }
                None => {
                    next += interval;
                    let now = Instant::now();
                    if next < now {
                        next = now + interval;
                    }
                }
            }
        }
    }

    fn finish(self, summary: &mut MonitorSummary) -> Vec<String> {
        let mut warnings = self.warnings;
        if let Some(d) = self.disk {
            let (devices, w) = d.finish();
            summary.devices = devices;
            warnings.extend(w);
        }
        summary.threads = self.threads.map(counters::threads::Threads::finish);
        let host = summary.threads.as_ref().and_then(|t| t.host.as_ref());
        warnings.extend(host.and_then(counters::hostcpu::steal_warning));
        summary.memory = self.memory.map(counters::memory::Memory::finish);
        warnings
    }
}

/// What the trial tells the monitors' thread.
enum Msg {
    /// A phase boundary: read every counter now, the interval since the last reading belonging
    /// to the span given (the phase that just ended, or the time before the first phase), then
    /// answer on the channel.
    Boundary(Span, mpsc::SyncSender<()>),
}

/// The longest a trial waits for the monitors to read their counters at a boundary.
const BOUNDARY_PATIENCE: Duration = Duration::from_secs(10);

/// Running monitors.
pub struct Running {
    settings: Settings,
    /// The monitors that started, in [`settings::ALL`]'s order.
    started: Vec<Monitor>,
    timeline: Arc<Timeline>,
    dir: PathBuf,
    start_s: f64,
    /// Boundaries go to the monitors' thread here; dropped to stop it.
    stop: Option<mpsc::Sender<Msg>>,
    thread: Option<JoinHandle<Periodic>>,
    trace: Option<trace::Tracing>,
    device_logs: Option<trace::devlog::DeviceLogs>,
    warnings: Vec<String>,
}

/// What the monitors of a trial recorded: the summary for result.json and the warnings.
pub struct Recorded {
    pub summary: MonitorSummary,
    pub warnings: Vec<String>,
}

/// Starts the monitors `w.settings` asks for, before the first phase: each takes its first
/// reading before this returns. Resources (a tracefs mount and instance, device servers'
/// request logs) go into `ledger`.
pub fn start(w: &Watch, ledger: &mut Ledger) -> Running {
    let own = counters::threads::Own {
        pid: std::process::id(),
        monitor_tids: Default::default(),
        server_pid: ledger.server_pid(),
    };
    let mut warnings = Vec::new();
    let trace = if w.settings.has(Monitor::Trace) {
        match trace::Tracing::start(w, ledger, &own) {
            Ok(t) => Some(t),
            Err(e) => {
                warnings.push(format!("monitor trace did not start: {e}"));
                None
            }
        }
    } else {
        None
    };
    let device_logs = match trace {
        None => trace::devlog::DeviceLogs::start(w, ledger),
        Some(_) => None,
    };
    let start_s = w.timeline.now_s();
    let periodic = Periodic::start(w, own.clone(), start_s);
    let mut started = periodic.running();
    started.extend(trace.as_ref().map(|_| Monitor::Trace));
    let (tx, rx) = mpsc::channel();
    let timeline = Arc::clone(w.timeline);
    let interval = Duration::from_secs_f64(w.settings.interval_s);
    let tids = Arc::clone(&own.monitor_tids);
    let thread = std::thread::Builder::new()
        .name("iotrial-monitor".into())
        .spawn(move || {
            register_tid(&tids);
            periodic.run(&timeline, interval, rx)
        });
    let thread = thread
        .map_err(|e| warnings.push(format!("monitors did not start: {e}")))
        .ok();
    Running {
        settings: w.settings.clone(),
        started,
        timeline: Arc::clone(w.timeline),
        dir: w.dir.to_path_buf(),
        start_s,
        stop: Some(tx),
        thread,
        trace,
        device_logs,
        warnings,
    }
}

/// Adds the calling thread to the monitor threads.
fn register_tid(tids: &std::sync::Mutex<Vec<u32>>) {
    let tid = rustix::thread::gettid().as_raw_nonzero().get() as u32;
    tids.lock().unwrap_or_else(|e| e.into_inner()).push(tid);
}

impl Running {
    /// A phase boundary: every periodic monitor reads its counters now, the interval since its
    /// last reading belonging to `closes` (the phase that just ended, or the time before the
    /// first phase). Returns once they have (or after `BOUNDARY_PATIENCE` if their thread
    /// is stuck), so the next phase's I/O never counts in the reading.
    pub fn boundary(&self, closes: Span) {
        let Some(tx) = &self.stop else { return };
        let (ack, done) = mpsc::sync_channel(1);
        if tx.send(Msg::Boundary(closes, ack)).is_ok() {
            let _ = done.recv_timeout(BOUNDARY_PATIENCE);
        }
    }

    /// Stops every monitor after the last phase (each takes a last reading), writes the phase
    /// boundaries (`phases.csv`) and returns what they recorded.
    pub fn stop(mut self, ledger: &mut Ledger) -> Recorded {
        drop(self.stop.take());
        let periodic = self.thread.take().map(|t| t.join());
        let end_s = self.timeline.now_s();
        let mut summary = MonitorSummary {
            enabled: self.started.iter().map(|m| m.name().to_string()).collect(),
            interval_s: self.settings.interval_s,
            start_s: self.start_s,
            end_s,
            ..Default::default()
        };
        let mut warnings = std::mem::take(&mut self.warnings);
        match periodic {
            Some(Ok(p)) => warnings.extend(p.finish(&mut summary)),
            Some(Err(_)) => warnings.push("monitors: their thread panicked".into()),
            None => {}
        }
        if let Some(t) = self.trace.take() {
            warnings.extend(t.stop(&self.timeline, &self.dir, ledger, &mut summary));
        }
        if let Some(d) = self.device_logs.take() {
            warnings.extend(d.stop(&self.timeline, &self.dir, ledger, &mut summary));
        }
        summary.late_seconds = late_seconds(&self.dir, self.start_s);
        if let Err(e) = write_phases(&self.dir.join("phases.csv"), &self.timeline) {
            warnings.push(format!("monitors: phases.csv: {e}"));
        }
        Recorded { summary, warnings }
    }
}

/// Every emulated device's late seconds (`lateness-<device>.csv` in `dir`) beside the host's
/// series, in the devices' name order; those before `start_s` (the monitors' start) apart.
fn late_seconds(dir: &Path, start_s: f64) -> Vec<crate::result::monitor::LateSeconds> {
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let path = e.ok()?.path();
            let name = path.file_name()?.to_str()?;
            let device = name.strip_prefix("lateness-")?.strip_suffix(".csv")?;
            Some((device.to_string(), path))
        })
        .collect();
    found.sort();
    found
        .iter()
        .map(|(device, path)| stalls::summarize(device, path, dir, start_s))
        .collect()
}

/// Writes the timeline's phases: `phase,kind,start_s,end_s`.
fn write_phases(path: &Path, timeline: &Timeline) -> std::io::Result<()> {
    let mut text = String::from("phase,kind,start_s,end_s\n");
    for p in timeline.phases() {
        let end = p.end_s.map(|e| format!("{e:.6}")).unwrap_or_default();
        text.push_str(&format!(
            "{},{},{:.6},{end}\n",
            series::field(&p.name),
            series::field(&p.kind),
            p.start_s
        ));
    }
    std::fs::write(path, text)
}
