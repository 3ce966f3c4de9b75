//! The generator of one clone of a fio job ([`JobGen`]): what the plan decided about the clone
//! ([`struct@Clone`]), the flows and exits clones share ([`Flow`], [`Exits`]), and the I/O it issues
//! ([`crate::engine::IoGen`]); its parts (sizes, offsets, files, buffers, zones, verify) are
//! its siblings in gen/.

use super::offsets::{FileCursor, Picking};
use super::place::{FilePlan, JobFile};
use super::{buffers, dist, place, sizes, steady, verify, zones};
use crate::engine::rng::SplitMix64;
use crate::engine::{Io, IoGen, Next, Op, PrepareCtx, SourceCtx};
use crate::trace::replay::{Replayer, Step};
use crate::workload::job::spec::{
    ioprio, Engine, ExitWhat, FileService, JobSpec, RwKind, ZoneMode,
};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Everything the plan decided about one clone.
#[derive(Debug, Clone)]
pub struct Clone {
    pub job: Arc<JobSpec>,
    /// Its number among the job's `numjobs`.
    pub clone: u64,
    pub files: FilePlan,
    /// The name of the phase it ramps up in (its samples do not count), if any.
    pub ramp_phase: Option<String>,
    /// The clones still running of the job it waits for (`wait_for`): it starts at 0.
    pub waits_for: Option<Arc<AtomicUsize>>,
    /// Its own job's clones still running (it counts itself out when it ends).
    pub running: Arc<AtomicUsize>,
    /// The zones of the plan's files (zonemode=zbd), shared by the jobs writing them.
    pub zones: Arc<zones::Registry>,
    /// Its token flow (`flow`), shared with the jobs of its `flow_id`.
    pub flow: Option<Arc<Flow>>,
    /// The flags `exitall` raises, and which of them concern this clone.
    pub exits: Arc<Exits>,
    pub group: usize,
    pub segment: usize,
}

/// A token flow of fio's (`flow`, `flow_id`): the I/Os of its jobs so far (plus one, as
/// fio starts it), and the sum of their weights.
///
/// As in fio, every job of the flow weighs in from the start, and a job that ends takes its
/// I/Os and its weight out, so the jobs left run on in proportion among themselves instead
/// of waiting for one that is gone. A flow holds the jobs of one stonewall segment: jobs of
/// a later segment cannot run beside these, so they do not hold them back (in fio they
/// would).
#[derive(Debug)]
pub struct Flow {
    counter: AtomicU64,
    weight: AtomicU64,
}

impl Flow {
    /// A flow of jobs weighing `weight` in all.
    pub fn new(weight: u64) -> Flow {
        Flow {
            counter: AtomicU64::new(1),
            weight: AtomicU64::new(weight),
        }
    }

    /// True when a job of `weight` that has done `ios` of the flow's I/Os is ahead of its
    /// share and must wait; otherwise its next I/O is counted.
    pub fn ahead(&self, ios: u64, weight: u64) -> bool {
        let total = self.counter.load(Ordering::Acquire).max(1);
        let all = self.weight.load(Ordering::Acquire).max(1);
        if ios as f64 / total as f64 > weight as f64 / all as f64 {
            return true;
        }
        self.counter.fetch_add(1, Ordering::AcqRel);
        false
    }

    /// A job of `weight` that did `ios` of the flow's I/Os ends.
    pub fn leave(&self, ios: u64, weight: u64) {
        self.counter.fetch_sub(ios, Ordering::AcqRel);
        self.weight.fetch_sub(weight, Ordering::AcqRel);
    }
}

/// What `exitall` has ended: reporting groups, stonewall segments, or everything.
#[derive(Debug)]
pub struct Exits {
    pub groups: Vec<std::sync::atomic::AtomicBool>,
    pub segments: Vec<std::sync::atomic::AtomicBool>,
    pub all: std::sync::atomic::AtomicBool,
}

impl Exits {
    /// Flags for `groups` reporting groups and `segments` segments, none raised.
    pub fn new(groups: usize, segments: usize) -> Exits {
        Exits {
            groups: (0..groups).map(|_| Default::default()).collect(),
            segments: (0..segments).map(|_| Default::default()).collect(),
            all: Default::default(),
        }
    }

    /// Whether a clone of group `g` in segment `s` must end.
    fn ended(&self, g: usize, s: usize) -> bool {
        self.all.load(Ordering::Relaxed)
            || self.segments[s].load(Ordering::Relaxed)
            || self.groups[g].load(Ordering::Relaxed)
    }
}

/// The direction's index: read 0, write 1, trim 2.
fn op_of(dir: usize) -> Op {
    match dir {
        0 => Op::Read,
        1 => Op::Write,
        _ => Op::Trim,
    }
}

/// What is left to do once the job's I/O is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// Still doing I/O.
    No,
    /// Syncing file k next (after draining what is in flight).
    Sync(usize),
    Done,
}

/// One clone of a job, running.
pub struct JobGen {
    pub(super) c: Arc<Clone>,
    /// The stream's index in the plan and its seed: what its sealed blocks name.
    index: usize,
    stream_seed: u64,
    pub(super) files: Vec<JobFile>,
    cursors: Vec<FileCursor>,
    /// Files done for this pass (every direction it uses).
    done: Vec<bool>,
    picking: Picking,
    rng: SplitMix64,
    mix: SplitMix64,
    sizes: SplitMix64,
    /// Engine ns per second of the job's (model) time: 1e9 / time scale.
    pub(super) ns_per_s: f64,
    start_at: Option<u64>,
    deadline: Option<u64>,
    in_ramp: bool,
    /// Bytes issued in this pass, passes done, I/Os issued in all.
    pass_bytes: u64,
    passes: u64,
    ios: u64,
    writes: u64,
    /// An fsync or fdatasync due before the next I/O.
    sync_due: Option<Op>,
    /// The file the next I/O goes to, and I/Os left on it.
    file: usize,
    file_left: u64,
    /// A direction picked and waiting for its rate.
    picked: Option<usize>,
    /// An I/O that must come next (trimwrite's write after its trim, a zone's reset before a
    /// write), before any other is picked.
    queued: Option<Io>,
    /// When each direction's next I/O is due (rate).
    due: [u64; 3],
    ending: Ending,
    opened: bool,
    /// Its files were opened without O_DIRECT: a new pass drops their cached pages again.
    buffered: bool,
    /// A write found the device full (`fill_device`): the job is over.
    full: bool,
    /// It has told its job it ended.
    counted_out: bool,
    /// The job it waits for has ended (its clock started then).
    waited: bool,
    /// The queue just filled up: drain it to `iodepth_low` before filling it again.
    refill: bool,
    /// I/Os picked in this pass.
    pub(super) pass_ios: u64,
    /// zonemode=strided: the mapping of its transfers onto the files.
    strided: Option<zones::Strided>,
    /// zonemode=zbd: each file's zones.
    zone_cursors: Vec<Option<zones::ZoneCursor>>,
    /// fio's verify: the headers its writes carry and what its reads found.
    verifier: Option<verify::Verifier>,
    /// A read-only job with verify checks every read (another job wrote the blocks).
    checks_reads: bool,
    /// Writes sealed since the last check, and the check under way.
    unchecked: bool,
    check: Check,
    /// Why the job ended before its I/O was done (its first error, ratemin not met).
    pub(super) stop: Option<String>,
    /// thinktime: a pause is due, and when it ends.
    think: bool,
    think_until: Option<u64>,
    /// The job's I/Os in its flow.
    flow_ios: u64,
    /// What its writes carry.
    filler: buffers::Filler,
    /// fio's steady-state detection and latency-target search, when asked.
    steady: Option<steady::SteadyState>,
    latency: Option<steady::LatencySearch>,
    /// I/Os per I/O priority, once any carries one.
    prio_ios: std::collections::BTreeMap<u16, u64>,
    /// The job gives some of its I/Os a priority of their own (`cmdprio_*`).
    per_io_prio: bool,
    /// ratemin: bytes and I/Os per direction since the last check, and when that was.
    rate_bytes: [u64; 3],
    rate_ios: [u64; 3],
    rate_since: [Option<u64>; 3],
    /// The iolog it replays (`read_iolog`), its next request once drawn, and when its pass
    /// began.
    pub(super) replay: Option<Replayer>,
    pub(super) replay_next: Option<Step>,
    pub(super) replay_t0: Option<u64>,
    /// When the next request was due (its lateness is its lag, as a paced job's).
    pub(super) replay_at: Option<u64>,
    /// With `serialize_overlap`, the I/Os in flight (file, offset, length), and one held back
    /// until those it overlaps complete; empty otherwise.
    flying: Vec<(u32, u64, u32)>,
    held: Option<Io>,
    /// When its I/O time since the last pause began (`thinktime_iotime`).
    io_since: Option<u64>,
    /// The CPUs its thread runs on (`cpus_allowed`), once pinned.
    pub(super) cpus: Option<Vec<usize>>,
    /// Its verify state was loaded (or tried).
    state_loaded: bool,
}

/// The tag of a read that checks what the job wrote.
const VERIFY_READ: u8 = 1;

/// A check of what the job wrote, under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Idle,
    /// The last `verify_backlog` writes; `drained` once the writes in flight completed.
    Backlog {
        drained: bool,
    },
    /// Every interval written in the pass, file by file from `pos`.
    Pass {
        drained: bool,
        file: usize,
        pos: u64,
    },
}

impl JobGen {
    /// Clone `c` on the place the stack gave it.
    pub fn new(c: Arc<Clone>, ctx: &SourceCtx) -> std::io::Result<JobGen> {
        let j = &c.job;
        let files = place::files(j, c.clone, &c.files, ctx.placement)?;
        let align =
            |d: &crate::workload::job::spec::BlockSizes, ba: u64| if ba > 0 { ba } else { d.min() };
        let picking = Picking {
            random: j.rw.random,
            modifier: j.rw.modifier,
            sequencer: j.rw_sequencer,
            align: align(&j.bs.read, j.blockalign.read)
                .min(align(&j.bs.write, j.blockalign.write))
                .max(1),
            randommap: j.randommap,
            distribution: j.distribution.clone(),
            pct_random: [j.pct_random.read, j.pct_random.write, j.pct_random.trim],
        };
        let seed = if j.randrepeat {
            j.randseed ^ ctx.seed
        } else {
            ctx.seed
                ^ std::time::UNIX_EPOCH
                    .elapsed()
                    .map_or(0, |d| d.as_nanos() as u64)
        };
        let strided =
            (j.zones.mode == ZoneMode::Strided && j.zones.size > 0).then(|| zones::Strided {
                size: j.zones.size,
                period: j.zones.range.max(j.zones.size) + j.zones.skip,
            });
        let cursors = files
            .iter()
            .enumerate()
            .map(|(k, f)| {
                let len = strided.map_or(f.len, |s| s.logical_len(f.len));
                FileCursor::new(len, &picking, seed ^ k as u64)
            })
            .collect();
        let zone_cursors = files
            .iter()
            .map(|f| {
                (j.zones.mode == ZoneMode::Zbd && j.zones.size > 0).then(|| {
                    let zones = c.zones.of(&f.path, j.zones.size, f.len / j.zones.size);
                    zones::ZoneCursor::new(zones, j.zones.max_open)
                })
            })
            .collect();
        let verifier = j.verify.clone().map(|v| {
            let interval = match v.interval {
                0 => j.bs.write.min(),
                n => n,
            };
            let regions: Vec<(u64, u64)> =
                files.iter().map(|f| (f.base + f.start, f.len)).collect();
            // The header's seed is the stream's, as every workload's blocks carry it: the scan
            // after a power cut knows its writer by it.
            verify::Verifier::new(v, interval, &regions, ctx.index as u16, ctx.seed)
        });
        let checks_reads = j.verify.as_ref().is_some_and(|v| v.check) && !j.rw.writes();
        let file_bytes: u64 = files.iter().map(|f| f.len).sum();
        let filler = buffers::Filler::new(
            j.buffers.clone(),
            file_bytes,
            j.bs.write.max(),
            seed,
            j.randseed,
        );
        let per_io_prio = [
            crate::workload::job::spec::Dir::Read,
            crate::workload::job::spec::Dir::Write,
        ]
        .iter()
        .any(|&d| *j.prio.cmd_pct.get(d) > 0 || !j.prio.cmd_bssplit.get(d).is_empty());
        Ok(JobGen {
            per_io_prio,
            index: ctx.index,
            stream_seed: ctx.seed,
            done: vec![false; files.len()],
            files,
            cursors,
            picking,
            rng: SplitMix64::new(seed),
            mix: SplitMix64::new(seed ^ 0x0B1E_55ED),
            sizes: SplitMix64::new(seed ^ 0x5123),
            ns_per_s: 1e9 / ctx.time_scale.max(1e-9),
            start_at: None,
            deadline: None,
            in_ramp: false,
            pass_bytes: 0,
            passes: 0,
            ios: 0,
            writes: 0,
            sync_due: None,
            file: 0,
            file_left: 0,
            picked: None,
            queued: None,
            due: [0; 3],
            ending: Ending::No,
            opened: false,
            buffered: false,
            full: false,
            counted_out: false,
            waited: false,
            refill: false,
            pass_ios: 0,
            strided,
            zone_cursors,
            verifier,
            checks_reads,
            unchecked: false,
            check: Check::Idle,
            stop: None,
            think: false,
            think_until: None,
            flow_ios: 0,
            prio_ios: std::collections::BTreeMap::new(),
            filler,
            steady: j
                .steady
                .clone()
                .filter(|s| s.dur > 0.0)
                .map(steady::SteadyState::new),
            latency: j.latency.clone().filter(|l| l.target > 0.0).map(|l| {
                steady::LatencySearch::new(l, if j.ioengine.is_async() { j.iodepth } else { 1 })
            }),
            rate_bytes: [0; 3],
            rate_ios: [0; 3],
            rate_since: [None; 3],
            replay: (!j.replay.logs.is_empty()).then(|| {
                let (_, t) = &j.replay.logs[c.clone as usize % j.replay.logs.len()];
                Replayer::new(Arc::clone(t), j.replay.options)
            }),
            replay_next: None,
            replay_t0: None,
            replay_at: None,
            flying: Vec::with_capacity(if j.ioengine.is_async() {
                j.iodepth as usize
            } else {
                1
            }),
            held: None,
            io_since: None,
            cpus: None,
            state_loaded: false,
            c,
        })
    }

    /// The paths of its files.
    fn file_names(&self) -> Vec<String> {
        self.files
            .iter()
            .map(|f| f.path.display().to_string())
            .collect()
    }

    /// Loads its verify state (`verify_state_load`), once, as its first phase begins (an
    /// earlier job of the same trial may write it); a state it cannot read ends the job.
    fn load_state(&mut self) {
        if std::mem::replace(&mut self.state_loaded, true) {
            return;
        }
        let names = self.file_names();
        let path = verify::state_path(&self.c.job.name, self.c.clone);
        if let Some(v) = self.verifier.as_mut().filter(|v| v.spec.state_load) {
            if let Err(e) = v.load_state(&path, &names) {
                self.stop = Some(e);
            }
        }
    }

    fn ns(&self, s: f64) -> u64 {
        (s * self.ns_per_s) as u64
    }

    /// The bytes a pass moves (fio's `io_size`, else `size`).
    fn pass_budget(&self) -> u64 {
        let j = &self.c.job;
        let total: u64 = self.files.iter().map(|f| f.len).sum();
        match j.io_size {
            Some(a) => a.of(total, 0),
            None => total,
        }
    }

    /// fio's `ratemin`/`rate_iops_min`: at a completion, once every `rate_cycle` after the
    /// first 2 s, the rate since the last check must be at least the job's least; else the
    /// job ends with that said.
    fn rate_check(&mut self, io: &Io, result: &Result<u64, i32>, now: u64) {
        let j = &self.c.job;
        let d = match io.op {
            Op::Read => 0,
            Op::Write => 1,
            Op::Trim => 2,
            _ => return,
        };
        let (min_b, min_i) = (
            *j.ratemin.get(spec_dir(d)),
            *j.rate_iops_min.get(spec_dir(d)),
        );
        if min_b == 0 && min_i == 0 {
            return;
        }
        if let Ok(n) = result {
            self.rate_bytes[d] += n;
            self.rate_ios[d] += 1;
        }
        let start = self.start_at.unwrap_or(0);
        let last = self.rate_since[d].get_or_insert(now);
        let spent = now.saturating_sub(*last);
        if now.saturating_sub(start) < self.ns(2.0) || spent < self.ns(j.rate_cycle) {
            return;
        }
        let secs = spent as f64 / self.ns_per_s;
        let (b, i) = (
            self.rate_bytes[d] as f64 / secs,
            self.rate_ios[d] as f64 / secs,
        );
        if self.stop.is_none()
            && ((min_b > 0 && b < min_b as f64) || (min_i > 0 && i < min_i as f64))
        {
            self.stop = Some(if min_b > 0 {
                format!("ratemin={min_b} B/s not met: {b:.0} B/s over the last {secs:.2} s")
            } else {
                format!("rate_iops_min={min_i} not met: {i:.1} IOPS over the last {secs:.2} s")
            });
        }
        self.rate_bytes[d] = 0;
        self.rate_ios[d] = 0;
        self.rate_since[d] = Some(now);
    }

    /// The I/O priority `io` carries (`cmdprio_percentage`, `cmdprio_bssplit`); 0 for the
    /// job's own.
    fn prio_of(&mut self, io: &Io) -> u16 {
        let p = &self.c.job.prio;
        let d = match io.op {
            Op::Read => crate::workload::job::spec::Dir::Read,
            Op::Write => crate::workload::job::spec::Dir::Write,
            _ => return 0,
        };
        let (class, level, hint) = (*p.cmd_class.get(d), *p.cmd_level.get(d), *p.cmd_hint.get(d));
        let split = p.cmd_bssplit.get(d);
        if !split.is_empty() {
            // The entries of this size share the I/Os of it by their percentages.
            let v = self.mix.below(100) as u32;
            let mut acc = 0;
            for e in split.iter().filter(|e| e.bs == u64::from(io.len)) {
                acc += e.pct;
                if v < acc {
                    return ioprio(
                        e.class.unwrap_or(class),
                        e.level.unwrap_or(level),
                        e.hint.unwrap_or(hint),
                    );
                }
            }
            return 0;
        }
        let pct = *p.cmd_pct.get(d);
        if pct > 0 && (self.mix.below(100) as u32) < pct {
            return ioprio(class, level, hint);
        }
        0
    }

    /// The direction of the next I/O.
    fn direction(&mut self) -> usize {
        let j = &self.c.job;
        match j.rw.kind {
            RwKind::Read => 0,
            RwKind::Write => 1,
            RwKind::Trim => 2,
            RwKind::Mixed => {
                if (self.mix.below(100) as u32) < j.rwmixread {
                    0
                } else {
                    1
                }
            }
            RwKind::TrimWrite => 2,
        }
    }

    /// The next file by `file_service_type`, skipping files done for the pass.
    fn next_file(&mut self) -> Option<usize> {
        let n = self.files.len();
        if self.done.iter().all(|&d| d) {
            return None;
        }
        let j = &self.c.job;
        match j.file_service {
            FileService::Random => {
                let mut f = self.rng.below(n as u64) as usize;
                while self.done[f] {
                    f = (f + 1) % n;
                }
                self.file = f;
            }
            FileService::Sequential => {
                while self.done[self.file] {
                    self.file = (self.file + 1) % n;
                }
            }
            FileService::RoundRobin(each) => {
                if self.file_left == 0 || self.done[self.file] {
                    // On to the next file (the first pick stays on file 0).
                    if self.ios > 0 || self.done[self.file] {
                        self.file = (self.file + 1) % n;
                    }
                    while self.done[self.file] {
                        self.file = (self.file + 1) % n;
                    }
                    self.file_left = each;
                }
                self.file_left -= 1;
            }
        }
        Some(self.file)
    }

    /// Starts a new pass over every file.
    fn new_pass(&mut self) {
        self.passes += 1;
        self.pass_bytes = 0;
        self.cursors.iter_mut().for_each(FileCursor::reset);
        self.zone_cursors
            .iter_mut()
            .flatten()
            .for_each(zones::ZoneCursor::reset_pass);
        self.done.iter_mut().for_each(|d| *d = false);
        if let Some(r) = &mut self.replay {
            r.restart();
            self.replay_t0 = None;
        }
        // fio drops a buffered job's cached pages (`invalidate`) each time it starts over, as
        // when it first opened its files: a time-based pass or a loop starts uncached.
        let j = &self.c.job;
        if self.buffered && j.invalidate && j.ioengine != Engine::Null {
            for f in &self.files {
                if let Ok(fd) = place::open(j, f, false) {
                    place::advise(j, f, &fd, true);
                }
            }
        }
    }

    /// Whether another pass follows the one that just ended (not after a pass that did no
    /// I/O: its files have no room).
    fn another_pass(&mut self) -> bool {
        let j = &self.c.job;
        if std::mem::take(&mut self.pass_ios) > 0 && (j.time_based || self.passes + 1 < j.loops) {
            self.new_pass();
            return true;
        }
        false
    }

    /// While a check is under way, its next read (after what is in flight completes, so the
    /// writes it reads back are done); `None` when there is none (or it just ended).
    fn checking(&mut self, in_flight: usize) -> Option<Next> {
        let v = self.verifier.as_mut()?;
        let max = self.c.job.bs.read.max().max(self.c.job.bs.write.max());
        let read = |file: usize, offset: u64, len: u64| {
            Next::Io(Io {
                file: file as u32,
                op: Op::Read,
                offset,
                len: len as u32,
                tag: VERIFY_READ,
                ..Io::default()
            })
        };
        loop {
            match &mut self.check {
                Check::Idle => return None,
                Check::Backlog { drained } | Check::Pass { drained, .. } if !*drained => {
                    if in_flight > 0 {
                        return Some(Next::Reap(0));
                    }
                    *drained = true;
                }
                Check::Backlog { .. } => match v.next_backlog() {
                    Some((f, off, len)) => return Some(read(f, off, u64::from(len))),
                    None => self.check = Check::Idle,
                },
                Check::Pass { file, pos, .. } => {
                    if *file >= self.files.len() {
                        self.check = Check::Idle;
                        continue;
                    }
                    match v.next_written(*file, *pos, max) {
                        Some((off, len)) => {
                            *pos = off + len;
                            return Some(read(*file, off, len));
                        }
                        None => {
                            *file += 1;
                            *pos = 0;
                        }
                    }
                }
            }
        }
    }

    /// Starts reading back what the job wrote (its whole pass, or its backlog), when it
    /// verifies and has written since the last check; false when there is nothing to check.
    fn start_check(&mut self) -> bool {
        let Some(v) = &self.verifier else {
            return false;
        };
        if !v.spec.check || !std::mem::take(&mut self.unchecked) {
            return false;
        }
        self.check = if v.spec.backlog > 0 {
            Check::Backlog { drained: false }
        } else {
            Check::Pass {
                drained: false,
                file: 0,
                pos: 0,
            }
        };
        true
    }

    /// The I/O after the job's I/O is over: a drain, each file's sync, then the end.
    fn finishing(&mut self, in_flight: usize) -> Next {
        let j = &self.c.job;
        loop {
            match self.ending {
                Ending::No => {
                    self.ending = if j.end_fsync || j.fsync_on_close {
                        Ending::Sync(0)
                    } else {
                        Ending::Done
                    };
                }
                Ending::Sync(k) if k < self.files.len() => {
                    if in_flight > 0 {
                        return Next::Reap(0);
                    }
                    self.ending = Ending::Sync(k + 1);
                    return Next::Io(Io {
                        file: k as u32,
                        op: Op::Fsync,
                        ..Io::default()
                    });
                }
                Ending::Sync(_) => self.ending = Ending::Done,
                Ending::Done => {
                    if !std::mem::replace(&mut self.counted_out, true) {
                        self.c.running.fetch_sub(1, Ordering::AcqRel);
                        if let Some(f) = &self.c.flow {
                            f.leave(self.flow_ios, j.flow);
                        }
                        if j.exitall {
                            let e = &self.c.exits;
                            let flag = match j.exit_what {
                                ExitWhat::Group => &e.groups[self.c.group],
                                ExitWhat::Stonewall => &e.segments[self.c.segment],
                                ExitWhat::All => &e.all,
                            };
                            flag.store(true, Ordering::Relaxed);
                        }
                    }
                    if j.unlink && j.filename.is_none() {
                        for f in self.files.iter().filter(|f| !f.raw) {
                            let _ = std::fs::remove_file(&f.path);
                        }
                    }
                    return Next::End;
                }
            }
        }
    }

    /// Picks the next data I/O (direction, file, size, offset), or `None` when this pass is
    /// over (its bytes moved, or every file done).
    fn pick(&mut self, dir: usize) -> Option<Io> {
        if let Some(io) = self.queued.take() {
            return Some(io);
        }
        if self.replay.is_some() {
            return self.replayed();
        }
        let j = self.c.job.clone();
        let budget = if j.time_based {
            u64::MAX
        } else {
            self.pass_budget()
        };
        loop {
            if self.pass_bytes >= budget {
                return None;
            }
            let f = self.next_file()?;
            let bs = j.bs.get(spec_dir(dir));
            let mut len = sizes::draw(bs, j.bs_unaligned, &mut self.sizes);
            let room = self.files[f].len;
            if len > room {
                len = room;
            }
            let off = if let Some(zc) = &mut self.zone_cursors[f] {
                // zonemode=zbd: at write pointers, below them, or a zone's reset.
                let z = zc.zones.size;
                let got = match dir {
                    1 => zc.write(len, j.rw.random, j.time_based, &mut self.rng),
                    2 => {
                        len = z;
                        zc.trim(j.rw.random, &mut self.rng)
                    }
                    _ if j.zones.read_beyond_wp => {
                        match self.cursors[f].next(dir, len, &self.picking, &mut self.rng) {
                            Some(o) => zones::ZoneIo::At(o),
                            None => zones::ZoneIo::None,
                        }
                    }
                    _ => zc.read(len, j.rw.random, &mut self.rng),
                };
                match got {
                    zones::ZoneIo::At(o) => o,
                    zones::ZoneIo::ResetFirst(o) => {
                        zc.zones.reset((o / z) as usize);
                        let file = &self.files[f];
                        self.pass_ios += 1;
                        return Some(Io {
                            file: f as u32,
                            op: Op::Trim,
                            offset: file.base + file.start + o,
                            len: z as u32,
                            ..Io::default()
                        });
                    }
                    zones::ZoneIo::None => {
                        self.done[f] = true;
                        continue;
                    }
                }
            } else {
                let Some(o) = self.cursors[f].next(dir, len, &self.picking, &mut self.rng) else {
                    self.done[f] = true;
                    continue;
                };
                len = self.cursors[f].granted();
                match self.strided {
                    // zonemode=strided: a transfer never crosses into the skipped part.
                    Some(s) => {
                        len = len.min(s.size - o % s.size);
                        s.map(o)
                    }
                    None => o,
                }
            };
            let len = len.min(budget.saturating_sub(self.pass_bytes)).max(1);
            self.pass_bytes += len;
            let file = &self.files[f];
            let offset = file.base + file.start + off;
            if j.rw.kind == RwKind::TrimWrite {
                self.queued = Some(Io {
                    file: f as u32,
                    op: Op::Write,
                    offset,
                    len: len as u32,
                    ..Io::default()
                });
            }
            if dir == 1 && j.zones.reset_threshold > 0.0 {
                if let Some(zc) = &mut self.zone_cursors[f] {
                    let (t, fr) = (j.zones.reset_threshold, j.zones.reset_frequency);
                    if let Some(o) = zc.reclaim(t, fr, &mut self.rng) {
                        self.queued = Some(Io {
                            file: f as u32,
                            op: Op::Trim,
                            offset: file.base + file.start + o,
                            len: zc.zones.size as u32,
                            ..Io::default()
                        });
                    }
                }
            }
            self.pass_ios += 1;
            return Some(Io {
                file: f as u32,
                op: op_of(dir),
                offset,
                len: len as u32,
                ..Io::default()
            });
        }
    }

    /// Whether `io` overlaps an I/O in flight on its file.
    fn overlaps(&self, io: &Io) -> bool {
        let (a, b) = (io.offset, io.offset + u64::from(io.len));
        io.len > 0
            && self
                .flying
                .iter()
                .any(|&(f, o, l)| f == io.file && l > 0 && o < b && a < o + u64::from(l))
    }

    /// When the next I/O of `dir` (of `len` bytes) is due under the job's rate, if paced.
    fn rate_interval(&mut self, dir: usize, len: u64) -> Option<u64> {
        let j = &self.c.job;
        let d = spec_dir(dir);
        let per_s = match (*j.rate_iops.get(d), *j.rate.get(d)) {
            (0, 0) => return None,
            (0, b) => b as f64 / len.max(1) as f64,
            (n, _) => n as f64,
        };
        let mut s = 1.0 / per_s;
        if j.rate_poisson {
            s *= -(1.0 - dist::unit(&mut self.mix)).ln();
        }
        Some(self.ns(s))
    }
}

impl IoGen for JobGen {
    fn prepare(&mut self, ctx: &PrepareCtx) -> std::io::Result<()> {
        let j = self.c.job.clone();
        // create_on_open: the files are made when the run opens them; the null engine's are
        // never made (fio's diskless engine).
        if self.c.files.owner && !j.create_on_open && j.ioengine != Engine::Null {
            let seal = place::fill_seal(&j, self.index, self.stream_seed);
            for f in &self.files {
                place::lay_out(&j, f, self.c.files.fill, seal, ctx)?;
            }
        }
        if j.pre_read {
            for f in &self.files {
                place::pre_read(f, ctx.stop)?;
            }
        }
        Ok(())
    }

    fn open(&mut self, direct: bool) -> std::io::Result<Vec<OwnedFd>> {
        let j = self.c.job.clone();
        let direct = direct && j.direct;
        let first = !std::mem::replace(&mut self.opened, true);
        self.buffered = !direct;
        if j.ioengine == Engine::Null {
            // It moves no data: each of its files stands for /dev/null.
            return self
                .files
                .iter()
                .map(|_| Ok(std::fs::File::open("/dev/null")?.into()))
                .collect();
        }
        self.files
            .iter()
            .map(|f| {
                let fd = place::open(&j, f, direct)?;
                if first {
                    place::advise(&j, f, &fd, j.invalidate && !direct);
                }
                Ok(fd)
            })
            .collect()
    }

    fn batching(&self) -> (usize, usize) {
        let j = &self.c.job;
        (j.batch_submit as usize, j.batch_complete_min as usize)
    }

    fn begin(&mut self, phase: &str, now: u64) {
        let j = self.c.job.clone();
        // The job's own priority (`prioclass`, `prio`, `priohint`), on its thread.
        if j.prio.class.is_some() || j.prio.level.is_some() || j.prio.hint.is_some() {
            let v = ioprio(
                j.prio.class.unwrap_or(2),
                j.prio.level.unwrap_or(4),
                j.prio.hint.unwrap_or(0),
            );
            // SAFETY: ioprio_set of the calling thread (IOPRIO_WHO_PROCESS, 0), no pointers.
            let r = unsafe { libc::syscall(libc::SYS_ioprio_set, 1, 0, libc::c_int::from(v)) };
            if r < 0 && self.stop.is_none() {
                self.stop = Some(format!(
                    "the kernel refused its I/O priority (ioprio_set: {})",
                    std::io::Error::last_os_error()
                ));
            }
        }
        self.place_thread(&j);
        if self.c.ramp_phase.as_deref() != Some(phase) {
            self.load_state();
        }
        let start = *self.start_at.get_or_insert_with(|| {
            let (lo, hi) = j.startdelay;
            let delay = lo + (hi - lo) * dist::unit(&mut self.mix);
            now + (delay * self.ns_per_s) as u64
        });
        self.in_ramp = self.c.ramp_phase.as_deref() == Some(phase);
        if !self.in_ramp && j.runtime > 0.0 {
            self.deadline = Some(now.max(start) + self.ns(j.runtime));
        }
        self.due = [now.max(start); 3];
    }

    fn next(&mut self, now: u64, in_flight: usize, buf: &mut [u8]) -> Next {
        if self.ending != Ending::No {
            return self.finishing(in_flight);
        }
        let start = self.start_at.unwrap_or(0);
        if now < start {
            return Next::Wait(start);
        }
        if let Some(w) = &self.c.waits_for {
            if w.load(Ordering::Acquire) > 0 {
                // The job it waits for is still running: look again in a millisecond.
                return Next::Wait(now + 1_000_000);
            }
            if !self.waited {
                // It starts now: its runtime and rate count from here.
                self.waited = true;
                let j = self.c.job.clone();
                if !self.in_ramp && j.runtime > 0.0 {
                    self.deadline = Some(now + self.ns(j.runtime));
                }
                self.due = [now; 3];
            }
        }
        if self.c.exits.ended(self.c.group, self.c.segment) || self.c.job.create_only {
            // exitall: another job's end ends this one; create_only does no I/O.
            return self.finishing(in_flight);
        }
        if let Some(n) = self.checking(in_flight) {
            return n;
        }
        let j = self.c.job.clone();
        // thinktime: after every `thinktime_blocks` I/Os, the completions, then a pause.
        if self.think {
            if in_flight > 0 {
                return Next::Reap(0);
            }
            self.think = false;
            let until = now + self.ns(j.thinktime);
            self.think_until = Some(until);
            if j.rate_ignore_thinktime {
                // The rate's schedule starts again after the pause instead of catching up.
                self.due = [until; 3];
            }
        }
        if let Some(until) = self.think_until {
            if now < until {
                if self.ns(j.thinktime_spin) > 0
                    && now < until.saturating_sub(self.ns(j.thinktime - j.thinktime_spin))
                {
                    std::hint::spin_loop();
                    return Next::Wait(now);
                }
                return Next::Wait(until);
            }
            self.think_until = None;
            self.io_since = Some(now);
        }
        let steady = self.steady.as_ref().is_some_and(|s| s.attained.is_some());
        let mut searched = false;
        if let Some(l) = &self.latency {
            if l.impossible && self.stop.is_none() {
                self.stop = Some(format!(
                    "no queue depth meets its latency target, not even 1 ({} us at {}%)",
                    (j.latency.as_ref().map_or(0.0, |t| t.target) * 1e6).round(),
                    j.latency.as_ref().map_or(100.0, |t| t.percentile)
                ));
            }
            searched = l.done;
            if !searched && in_flight >= l.qd as usize {
                // The depth being tried: one in flight fewer before the next goes.
                return Next::Reap(l.qd as usize - 1);
            }
        }
        if self.stop.is_some()
            || self.full
            || steady
            || searched
            || self.deadline.is_some_and(|d| now >= d)
            || (j.number_ios > 0 && self.ios >= j.number_ios)
        {
            // What was written since the last check is read back before the job ends.
            if !self.full && self.stop.is_none() && self.start_check() {
                return self.next(now, in_flight, buf);
            }
            return self.finishing(in_flight);
        }
        if let Some(op) = self.sync_due {
            if in_flight > 0 {
                return Next::Reap(0);
            }
            self.sync_due = None;
            return Next::Io(Io {
                file: self.file as u32,
                op,
                ..Io::default()
            });
        }
        if let Some(io) = self.held {
            // serialize_overlap: it waits until nothing in flight overlaps it.
            if self.overlaps(&io) {
                return Next::Reap(in_flight.saturating_sub(1));
            }
        }
        if self.held.is_none() && self.queued.is_none() {
            if let Some(w) = self.replay_wait(now, in_flight) {
                return w;
            }
        }
        // iodepth_low: once the queue is full, let it drain to the low mark first.
        let depth = if j.ioengine.is_async() {
            j.iodepth as usize
        } else {
            1
        };
        if std::mem::take(&mut self.refill) && j.iodepth_low > 0 {
            return Next::Reap(j.iodepth_low as usize);
        }
        let dir = match self.picked {
            Some(d) => d,
            None => {
                let d = if self.queued.is_some_and(|q| q.op == Op::Write) {
                    1
                } else {
                    self.direction()
                };
                self.picked = Some(d);
                d
            }
        };
        let mut lag = 0;
        let rated = self.replay.is_none() && self.held.is_none();
        if let Some(iv) = rated
            .then(|| self.rate_interval(dir, j.bs.get(spec_dir(dir)).max()))
            .flatten()
        {
            let due = self.due[dir];
            if now < due {
                // The rate's interval is drawn again when it wakes; a fixed one is the same.
                return Next::Wait(due);
            }
            lag = now - due;
            self.due[dir] = due + iv;
        }
        // fio's flow: ahead of its share of the flow's I/Os, the job waits.
        if let Some(f) = self.c.flow.as_ref().filter(|_| self.held.is_none()) {
            if f.ahead(self.flow_ios, j.flow) {
                return Next::Wait(now + self.ns(j.flow_sleep).max(50_000));
            }
            self.flow_ios += 1;
        }
        self.picked = None;
        let picked = match self.held.take() {
            Some(io) => Some(io),
            None => self.pick(dir),
        };
        let Some(mut io) = picked else {
            // The pass is over: check it, then the next pass or the end.
            if self.start_check() {
                self.picked = Some(dir);
                return self.next(now, in_flight, buf);
            }
            if self.another_pass() {
                self.picked = Some(dir);
                return self.next(now, in_flight, buf);
            }
            return self.finishing(in_flight);
        };
        if j.serialize_overlap && self.overlaps(&io) {
            self.held = Some(io);
            return Next::Reap(in_flight.saturating_sub(1));
        }
        if let Some(at) = self.replay_at.take() {
            // A replayed request is late by how long after its time it goes.
            lag = now.saturating_sub(at);
        }
        io.lag_ns = lag;
        io.prio = self.prio_of(&io);
        // A job that gives some I/Os a priority counts every I/O by its priority, the
        // I/Os before its first prioritized one too.
        if self.per_io_prio || io.prio != 0 {
            *self.prio_ios.entry(io.prio).or_insert(0) += 1;
        }
        if io.op == Op::Write {
            let data = &mut buf[..io.len as usize];
            if let Some(v) = &mut self.verifier {
                v.seal(io.file as usize, io.offset, data, now);
                self.unchecked = true;
            } else {
                self.filler
                    .fill(data, io.offset, j.buffer_pattern.as_deref());
            }
        }
        self.ios += 1;
        if j.thinktime > 0.0 {
            let since = *self.io_since.get_or_insert(now);
            let by_time = j.thinktime_iotime > 0.0 && now - since >= self.ns(j.thinktime_iotime);
            if self.ios % j.thinktime_blocks == 0 || by_time {
                self.think = true;
            }
        }
        if j.serialize_overlap && self.flying.len() < self.flying.capacity() {
            self.flying.push((io.file, io.offset, io.len));
        }
        self.refill =
            j.iodepth_low > 0 && (j.iodepth_low as usize) < depth && in_flight + 1 >= depth;
        if io.op == Op::Write {
            if self.verifier.as_ref().is_some_and(|v| v.backlog_due()) {
                self.start_check();
            }
            self.writes += 1;
            if j.fsync > 0 && self.writes % j.fsync == 0 {
                self.sync_due = Some(Op::Fsync);
            } else if j.fdatasync > 0 && self.writes % j.fdatasync == 0 {
                self.sync_due = Some(Op::Fdatasync);
            }
        }
        Next::Io(io)
    }

    fn done(
        &mut self,
        io: &Io,
        result: Result<u64, i32>,
        buf: &[u8],
        issue: u64,
        now: u64,
    ) -> Result<u64, i32> {
        if let Some(k) = self
            .flying
            .iter()
            .position(|&(f, o, l)| (f, o, l) == (io.file, io.offset, io.len))
        {
            self.flying.swap_remove(k);
        }
        let j = &self.c.job;
        let limit = match io.op {
            Op::Read => j.max_latency.read,
            Op::Write => j.max_latency.write,
            Op::Trim => j.max_latency.trim,
            _ => 0.0,
        };
        let lat = now.saturating_sub(issue);
        if limit > 0.0 && lat > self.ns(limit) && self.stop.is_none() {
            // fio's max_latency: the job ends with ETIMEDOUT.
            self.stop = Some(format!(
                "max_latency: a {} of {} bytes at offset {} took {} us, more than {} us (ETIMEDOUT)",
                io.op.as_str(),
                io.len,
                io.offset,
                lat as f64 / self.ns_per_s * 1e6,
                limit * 1e6
            ));
            if j.exitall_on_error {
                self.c.exits.all.store(true, Ordering::Relaxed);
            }
            return Err(libc::ETIMEDOUT);
        }
        if let (Some(v), Ok(n), Op::Write) = (&mut self.verifier, result, io.op) {
            v.completed(io.file as usize, io.offset, n);
        }
        if let (Ok(n), false) = (result, self.in_ramp) {
            let lat = now.saturating_sub(issue);
            if let Some(s) = &mut self.steady {
                s.add(now, n, lat, self.start_at.unwrap_or(0), self.ns_per_s);
            }
            if let Some(l) = &mut self.latency {
                l.add(now, lat, self.ns_per_s);
            }
        }
        // A job filling its device ends at the first write that finds it full.
        if self.c.job.fill_device && io.op == Op::Write && result == Err(libc::ENOSPC) {
            self.full = true;
        }
        self.rate_check(io, &result, now);
        if let Err(e) = result {
            let j = &self.c.job;
            let (goes_on, ignored) = match io.op {
                Op::Read => (j.continue_read, &j.ignore_read),
                _ => (j.continue_write, &j.ignore_write),
            };
            let full = j.fill_device && e == libc::ENOSPC;
            if !(goes_on || ignored.contains(&e) || full) && self.stop.is_none() {
                // fio ends a job at its first I/O error unless continue_on_error says not.
                self.stop = Some(format!(
                    "ended at its first I/O error: {} {} at offset {} ({})",
                    io.op.as_str(),
                    io.len,
                    io.offset,
                    crate::engine::samples::sample::errno_name(e)
                ));
                if j.exitall_on_error {
                    self.c.exits.all.store(true, Ordering::Relaxed);
                }
            }
        }
        let own = io.tag == VERIFY_READ;
        if let (Some(v), Ok(n)) = (&mut self.verifier, result) {
            if own || (io.op == Op::Read && self.checks_reads) {
                let n = (n as usize).min(buf.len());
                if let Err(e) = v.check(io.file as usize, io.offset, &buf[..n], own) {
                    if v.spec.fatal {
                        self.full = true;
                    }
                    return Err(e);
                }
            }
        }
        result
    }

    fn report(&mut self) -> Option<serde_json::Value> {
        let mut r = serde_json::Map::new();
        let names = self.file_names();
        let path = verify::state_path(&self.c.job.name, self.c.clone);
        let writes = self.c.job.rw.writes();
        if let Some(v) = self
            .verifier
            .as_mut()
            .filter(|v| v.spec.state_save && writes)
        {
            // What its completed writes covered so far, at the end of each phase it ran in.
            if let Err(e) = v.save_state(&path, &names) {
                let why = format!("verify_state_save: {}: {e}", path.display());
                self.stop.get_or_insert(why);
            }
        }
        if let Some(v) = self.verifier.as_ref().filter(|v| !v.spec.implied) {
            r.insert("verify".into(), v.report(&names));
        }
        if let Some(why) = &self.stop {
            r.insert("stopped".into(), serde_json::json!(why));
        }
        if let Some(cpus) = &self.cpus {
            r.insert("cpus".into(), serde_json::json!(cpus));
        }
        if self.c.job.iolog_out.is_some() {
            r.insert("files".into(), serde_json::json!(names));
        }
        if let Some(s) = &self.steady {
            let start = self.start_at.unwrap_or(0);
            r.insert(
                "steadystate".into(),
                serde_json::json!({
                    "attained": s.attained.is_some(),
                    "at_s": s.attained.map(|(at, _)| at.saturating_sub(start) as f64 / self.ns_per_s),
                    "figure": s.attained.map(|(_, f)| f).or(s.last),
                }),
            );
        }
        if let Some(l) = &self.latency {
            r.insert(
                "latency_target".into(),
                serde_json::json!({"qd": l.qd, "met": !l.impossible}),
            );
        }
        if !self.prio_ios.is_empty() {
            let by: serde_json::Map<String, serde_json::Value> = self
                .prio_ios
                .iter()
                .map(|(p, n)| (p.to_string(), serde_json::json!(n)))
                .collect();
            r.insert("prio_ios".into(), serde_json::Value::Object(by));
        }
        (!r.is_empty()).then_some(serde_json::Value::Object(r))
    }
}

/// The direction of index `d`.
fn spec_dir(d: usize) -> crate::workload::job::spec::Dir {
    match d {
        0 => crate::workload::job::spec::Dir::Read,
        1 => crate::workload::job::spec::Dir::Write,
        _ => crate::workload::job::spec::Dir::Trim,
    }
}
