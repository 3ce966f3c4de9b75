//! The block trace's reader thread: reads every CPU's ring buffer of the trace instance as
//! binary pages, puts the events of each round in time order, pairs each completion with its
//! issue (a completion read before its issue, from another CPU's buffer, waits for it), and
//! tallies each request by phase, class and operation, writing one row per request to
//! blocktrace.csv. Phases are looked up in a copy of the timeline's, refreshed each round, so
//! no event takes the timeline's lock.

use super::blockreq::{self, Class, Event, Op, Tally};
use super::fsmap::FsMap;
use super::ringbuf::Decoder;
use crate::monitor::series::{field, CsvFile};
use crate::timeline::{Outside, Span};
use crate::timeline::{PhaseSpan, Timeline};
use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::io::Read;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Header of blocktrace.csv.
pub const HEADER: &str = "t_s,phase,device,sector,bytes,rwbs,class,latency_ms";

/// Completions kept waiting for their issue, at most.
const ORPHANS_MAX: usize = 4096;

type Key = ((u32, u32), u64, Op);

/// A request issued and not completed yet.
struct Pending {
    ts: f64,
    /// Index into the phases, if it was issued in one.
    phase: Option<usize>,
    class: Class,
    op: Op,
    bytes: u64,
    rwbs: String,
}

/// What the reader thread keeps.
pub struct Reader {
    pub names: HashMap<(u32, u32), String>,
    pub timeline: Arc<Timeline>,
    /// CLOCK_MONOTONIC seconds of the timeline's origin.
    pub origin_s: f64,
    pub map: FsMap,
    pub decoder: Decoder,
    pub csv: Option<CsvFile>,
    /// Emulated devices' requests: (t_s, op, offset, bytes), by device name.
    pub emulated: HashMap<String, Vec<(f64, Op, u64, u64)>>,
    pub tally: Tally,
    pub error: Option<String>,
    /// The kernel marked events as lost in a page.
    pub missed: bool,
    phases: Vec<PhaseSpan>,
    pending: HashMap<Key, VecDeque<Pending>>,
    orphans: HashMap<Key, VecDeque<f64>>,
}

impl Reader {
    /// A reader of the devices `names` (by major, minor), its rows to `csv`.
    pub fn new(
        names: HashMap<(u32, u32), String>,
        timeline: Arc<Timeline>,
        origin_s: f64,
        map: FsMap,
        decoder: Decoder,
        csv: Option<CsvFile>,
        emulated: HashMap<String, Vec<(f64, Op, u64, u64)>>,
    ) -> Reader {
        Reader {
            names,
            timeline,
            origin_s,
            map,
            decoder,
            csv,
            emulated,
            tally: Tally::default(),
            error: None,
            missed: false,
            phases: Vec::new(),
            pending: HashMap::new(),
            orphans: HashMap::new(),
        }
    }

    /// The phase running at `t_s`, as an index into `phases` (the later one at a boundary).
    fn phase_at(&self, t_s: f64) -> Option<usize> {
        self.phases
            .iter()
            .rposition(|s| s.start_s <= t_s && s.end_s.is_none_or(|e| t_s <= e))
    }

    /// The part of the trial of a request issued at `t_s` in phase `phase`.
    fn span_of(&self, phase: Option<usize>, t_s: f64) -> Span {
        match phase {
            Some(i) => Span::Phase(self.phases[i].name.clone()),
            None if self.phases.first().is_some_and(|f| f.start_s <= t_s) => {
                Span::Outside(Outside::After)
            }
            None => Span::Outside(Outside::Before),
        }
    }

    fn event(&mut self, e: Event) {
        let Some(name) = self.names.get(&e.dev) else {
            return;
        };
        let name = name.clone();
        // A flush has no sector (its completion says u64::MAX).
        let key = |op| (e.dev, if op == Op::Flush { 0 } else { e.sector }, op);
        if e.complete {
            let op = blockreq::op_of(&e.rwbs, e.sectors * 512);
            match self.pending.get_mut(&key(op)).and_then(VecDeque::pop_front) {
                Some(p) => self.completed(&name, e.sector, p, e.ts),
                None if self.orphans.len() < ORPHANS_MAX => {
                    self.orphans.entry(key(op)).or_default().push_back(e.ts)
                }
                None => {}
            }
            return;
        }
        let bytes = e.bytes.unwrap_or(e.sectors * 512);
        let op = blockreq::op_of(&e.rwbs, bytes);
        let class = blockreq::classify(&self.map, &name, op, &e.rwbs, e.sector);
        let t_s = e.ts - self.origin_s;
        let phase = self.phase_at(t_s);
        self.tally
            .issued(&self.span_of(phase, t_s), class, op, bytes);
        if let Some(list) = self.emulated.get_mut(&name) {
            list.push((t_s, op, e.sector * 512, bytes));
        }
        let p = Pending {
            ts: e.ts,
            phase,
            class,
            op,
            bytes,
            rwbs: e.rwbs,
        };
        let k = key(op);
        let done = self.orphans.get_mut(&k).and_then(|q| {
            let i = q.iter().position(|&t| t >= p.ts)?;
            q.remove(i)
        });
        match done {
            Some(t) => self.completed(&name, e.sector, p, t),
            None => self.pending.entry(k).or_default().push_back(p),
        }
    }

    fn completed(&mut self, device: &str, sector: u64, p: Pending, ts: f64) {
        let latency_ns = ((ts - p.ts).max(0.0) * 1e9) as u64;
        let span = self.span_of(p.phase, p.ts - self.origin_s);
        self.tally.completed(&span, p.class, p.op, latency_ns);
        self.row(device, sector, &p, Some(latency_ns));
    }

    fn row(&mut self, device: &str, sector: u64, p: &Pending, latency_ns: Option<u64>) {
        let span = self.span_of(p.phase, p.ts - self.origin_s);
        let Some(csv) = &mut self.csv else { return };
        let line = csv.start(p.ts - self.origin_s, &span);
        let _ = write!(
            line,
            ",{},{sector},{},{},{},",
            field(device),
            p.bytes,
            field(&p.rwbs),
            p.class.name()
        );
        if let Some(n) = latency_ns {
            let _ = write!(line, "{:.3}", n as f64 / 1e6);
        }
        if let Err(e) = csv.end() {
            self.error = Some(format!("blocktrace.csv: {e}"));
            self.csv = None;
        }
    }

    /// Writes the requests that never completed while traced.
    pub fn flush_pending(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for ((dev, sector, _), list) in pending {
            let name = self.names.get(&dev).cloned().unwrap_or_default();
            for p in list {
                self.row(&name, sector, &p, None);
            }
        }
        if let Some(csv) = &mut self.csv {
            let _ = csv.flush();
        }
    }

    /// Reads every page the buffers of `pipes` hold now; returns whether all were empty.
    fn round(
        &mut self,
        pipes: &mut [std::fs::File],
        page: &mut [u8],
        events: &mut Vec<Event>,
    ) -> bool {
        let mut empty = true;
        for pipe in pipes.iter_mut() {
            loop {
                match pipe.read(page) {
                    Ok(0) => break,
                    Ok(n) => {
                        empty = false;
                        self.missed |= self.decoder.page(&page[..n], events);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        self.error = Some(format!("trace_pipe_raw: {e}"));
                        break;
                    }
                }
            }
        }
        self.phases = self.timeline.phases();
        events.sort_by(|a, b| a.ts.total_cmp(&b.ts));
        for e in events.drain(..) {
            self.event(e);
        }
        empty
    }

    /// Reads the per-CPU buffers `pipes` (pages of `page_size`) until `stop` is set and
    /// they are empty.
    pub fn run(
        mut self,
        mut pipes: Vec<std::fs::File>,
        page_size: usize,
        stop: &AtomicBool,
    ) -> Reader {
        let mut page = vec![0u8; page_size];
        let mut events = Vec::new();
        loop {
            let stopping = stop.load(Ordering::Acquire);
            let empty = self.round(&mut pipes, &mut page, &mut events);
            if stopping && empty {
                return self;
            }
            if empty {
                wait_readable(&pipes);
            }
        }
    }
}

/// Waits up to 100 ms for any of `pipes` to have data.
fn wait_readable(pipes: &[std::fs::File]) {
    let fds: Vec<_> = pipes.iter().map(|p| p.as_fd()).collect();
    let mut polls: Vec<_> = fds
        .iter()
        .map(|fd| rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN))
        .collect();
    let timeout = rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: 100_000_000,
    };
    let _ = rustix::event::poll(&mut polls, Some(&timeout));
}
