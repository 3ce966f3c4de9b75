//! `hdd` with `queue_order=rpo`: a hard disk that serves its command queue as a drive's firmware
//! does, not in arrival order. Whenever the head is free the drive picks, among the reads it
//! holds and the writes in its write-back buffer, the one it can reach soonest (seek plus
//! rotational wait: rotational position ordering), unless a host command has waited longer
//! than `age_limit`, which then goes first (command aging, so no read starves for ever; a write
//! waiting for room in the buffer makes the drive destage once it has waited that long).
//! Contiguous buffered writes are destaged as one run. A later arrival can thus be served
//! before an earlier one, so a request's completion is known only when the head starts it:
//! this model reports completions through [`DeviceModel::advance`] (see
//! [`super::model`]), and the server asks it again when its current media operation ends.
//!
//! The rest is [`super::hdd`]'s drive: its mechanics (seek curve, rotation, zones), its read
//! buffer (`ReadCache`: segments, read-ahead, look-behind), a write-back buffer of
//! `write_buffer` bytes that acknowledges a write at once while it has room, and a queue of
//! `queue_depth` commands (beyond it the host waits). A cache flush is not a queued command:
//! it waits for the queue to drain, then for every buffered write, and nothing else enters the
//! drive meanwhile.

use std::collections::VecDeque;

use serde_json::{json, Map, Value as Json};

use super::mechanics::{DiskCounters, HddParams, Mechanics};
use super::model::{
    service_alone, Background, DeviceModel, ModelError, ReqKind, Request, RequestId, Response,
    Unsettled,
};
use super::readcache::ReadCache;
use crate::params::{Kind, ParamSpec, Params};

/// Parameters of how `hdd` orders its queue (not `smr`'s: its translation layer appends in
/// arrival order).
pub const QUEUE_PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "queue_order",
        Kind::Choice(&["fifo", "rpo"]),
        "fifo",
        "fifo: the media serves reads and destages in arrival order; rpo: the nearest first (rotational position ordering), with command aging",
    ),
    ParamSpec::new(
        "age_limit",
        Kind::Duration,
        "500ms",
        "with rpo: a host command waiting this long goes before any nearer one",
    ),
];

/// The queue settings of [`QUEUE_PARAMS`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueParams {
    /// Reorder the queue (rpo) rather than serve it in arrival order.
    pub rpo: bool,
    /// Seconds a host command may wait before it goes first.
    pub age_limit: f64,
}

impl QueueParams {
    /// Reads [`QUEUE_PARAMS`] from resolved values.
    pub fn from_values(v: &Params) -> Self {
        QueueParams {
            rpo: v.text("queue_order") == "rpo",
            age_limit: v.f64("age_limit"),
        }
    }
}

/// A host command in the drive (or waiting to enter it).
#[derive(Debug, Clone, Copy)]
struct Cmd {
    id: RequestId,
    kind: ReqKind,
    offset: u64,
    len: u64,
    /// When it entered the drive's queue, model ns.
    admitted: u64,
}

/// A write in the write-back buffer, not yet on the media.
#[derive(Debug, Clone, Copy)]
struct Dirty {
    /// The write's request.
    id: RequestId,
    offset: u64,
    len: u64,
    /// When the buffer took it, model ns (arrival order for `fifo`).
    since: u64,
}

/// What the head is doing.
#[derive(Debug, Clone, Copy)]
enum Work {
    /// A host command served from the media (a read, or a write that bypasses the buffer).
    Host,
    /// Buffered writes destaged as one run: bytes and slots freed when it ends.
    Destage(Run),
    /// Reading ahead for a read already answered from the buffer.
    ReadAhead,
}

/// A destage in progress: logical `[start, end)`, begun at `began` with the head at
/// `head_before`; its transfer begins at `xfer` (after the seek and rotational wait).
#[derive(Debug, Clone, Copy)]
struct Run {
    began: u64,
    head_before: u64,
    start: u64,
    end: u64,
    xfer: u64,
    bytes: u64,
    slots: usize,
}

#[derive(Debug, Clone, Copy, Default)]
struct Stats {
    disk: DiskCounters,
    destages: u64,
    aged: u64,
    host_waits: u64,
    longest_wait_ns: u64,
}

/// A hard disk that reorders its command queue (see the module's doc).
pub struct QueuedDisk {
    mech: Mechanics,
    capacity: u64,
    write_back: bool,
    write_buffer: u64,
    /// Commands the write-back buffer holds at most.
    write_slots: usize,
    overhead_ns: u64,
    /// Interface rate, bytes per ns.
    iface: f64,
    queue_depth: usize,
    rpo: bool,
    age_ns: u64,
    cache: ReadCache,
    /// The latest time events have been processed to.
    clock: u64,
    /// When the head finishes its current work (or went idle).
    mech_free: u64,
    work: Option<Work>,
    iface_free: u64,
    /// Host commands waiting for room in the drive's queue, in arrival order (a flush waits
    /// here until the queue is empty; nothing passes it).
    host: VecDeque<Cmd>,
    /// Host commands waiting for the head.
    media: Vec<Cmd>,
    /// Writes in the queue waiting for room in the write-back buffer, in arrival order.
    waiting: VecDeque<Cmd>,
    dirty: Vec<Dirty>,
    /// Bytes and commands the write-back buffer holds, destages in progress included.
    dirty_bytes: u64,
    dirty_slots: usize,
    flush: Option<Cmd>,
    /// The drive acknowledges a cache flush at once (it lies about flushes).
    flush_ignored: bool,
    /// The writes the destage in progress carries to the media.
    destaging: Vec<RequestId>,
    /// The write the head is executing for the host (one that bypasses the buffer).
    executing: Option<RequestId>,
    /// Host commands in the drive and not complete.
    queued: usize,
    /// Completions known and not yet reported.
    done: Vec<(RequestId, Response)>,
    /// The latest completion reported to the host.
    replied: u64,
    st: Stats,
}

impl QueuedDisk {
    /// A disk with the drive parameters `p` and the queue settings `q`.
    pub fn new(p: &HddParams, q: &QueueParams) -> Result<QueuedDisk, ModelError> {
        let mech = Mechanics::new(p, p.capacity)?;
        if !(q.age_limit > 0.0 && q.age_limit.is_finite()) {
            return Err(ModelError::new("age_limit", "must be greater than 0"));
        }
        Ok(QueuedDisk {
            mech,
            capacity: p.capacity,
            write_back: p.write_back,
            write_buffer: p.write_buffer,
            write_slots: p.write_slots.max(1) as usize,
            overhead_ns: (p.overhead * 1e9) as u64,
            iface: p.iface_rate * 1e-9,
            queue_depth: p.queue_depth.max(1) as usize,
            rpo: q.rpo,
            age_ns: (q.age_limit * 1e9) as u64,
            cache: ReadCache::new(p.buffer, p.segments, p.readahead),
            clock: 0,
            mech_free: 0,
            work: None,
            iface_free: 0,
            host: VecDeque::new(),
            media: Vec::with_capacity(64),
            waiting: VecDeque::new(),
            dirty: Vec::with_capacity(p.write_slots as usize),
            dirty_bytes: 0,
            dirty_slots: 0,
            flush: None,
            flush_ignored: p.flush_ignored,
            destaging: Vec::new(),
            executing: None,
            queued: 0,
            done: Vec::with_capacity(64),
            replied: 0,
            st: Stats::default(),
        })
    }

    /// Time to move `len` bytes over the host interface, with the command's overhead.
    fn host_ns(&self, len: u64) -> u64 {
        self.overhead_ns + (len as f64 / self.iface) as u64
    }

    fn report(&mut self, id: RequestId, done_ns: u64) {
        self.replied = self.replied.max(done_ns);
        self.done.push((id, Response { done_ns, errno: 0 }));
    }

    /// Whether a host command still waits for the drive.
    fn owes(&self) -> bool {
        !self.host.is_empty()
            || !self.media.is_empty()
            || !self.waiting.is_empty()
            || self.flush.is_some()
            || matches!(self.work, Some(Work::Host))
    }

    /// Lets the host's waiting commands into the queue at `t`, in order, while there is room
    /// (a flush only into an empty queue, and nothing behind a flush).
    fn admit_waiting(&mut self, t: u64) {
        while let Some(c) = self.host.front().copied() {
            let fits = if c.kind == ReqKind::Flush {
                self.queued == 0
            } else {
                self.flush.is_none() && self.queued < self.queue_depth
            };
            if !fits {
                break;
            }
            self.host.pop_front();
            self.admit(Cmd { admitted: t, ..c }, t);
        }
    }

    /// `c` enters the drive at `t`: served from the buffers at once, or queued for the head.
    fn admit(&mut self, c: Cmd, t: u64) {
        if c.len == 0 && matches!(c.kind, ReqKind::Read | ReqKind::Write) {
            // Nothing to transfer (past the end): the command's overhead only.
            self.report(c.id, t + self.overhead_ns);
            return;
        }
        match c.kind {
            ReqKind::Read => {
                self.st.disk.reads += 1;
                if let Some(hit) = self.cache.lookup(c.offset, c.len) {
                    self.st.disk.read_hits += 1;
                    let sent = t.max(self.iface_free) + self.host_ns(c.len);
                    self.iface_free = sent;
                    if hit.ahead && hit.ready > self.mech_free.max(t) {
                        // The head reads on for it: busy until its data is in.
                        self.mech.set_head(c.offset + c.len);
                        self.mech_free = hit.ready;
                        if self.work.is_none() {
                            self.work = Some(Work::ReadAhead);
                        }
                    }
                    self.report(c.id, sent.max(hit.ready));
                } else {
                    self.queued += 1;
                    self.media.push(c);
                }
            }
            ReqKind::Write => {
                self.st.disk.writes += 1;
                self.cache.invalidate(c.offset, c.len);
                self.queued += 1;
                if !self.write_back || c.len > self.write_buffer {
                    self.media.push(c);
                } else {
                    self.waiting.push_back(c);
                    if self.waiting.len() > 1 || !self.room(c.len) {
                        self.st.disk.write_waits += 1;
                    }
                    self.accept_writes(t);
                }
            }
            ReqKind::Flush if self.flush_ignored => {
                // The buffer destages in its own time; the flush is acknowledged at once.
                self.st.disk.flushes += 1;
                self.report(c.id, t + self.overhead_ns);
            }
            ReqKind::Flush => {
                self.st.disk.flushes += 1;
                self.queued += 1;
                self.flush = Some(c);
                self.end_flush(t);
            }
            ReqKind::Discard => {
                self.st.disk.discards += 1;
                self.report(c.id, t + self.overhead_ns);
            }
        }
    }

    fn room(&self, len: u64) -> bool {
        self.dirty_slots < self.write_slots && self.dirty_bytes + len <= self.write_buffer
    }

    /// Buffers the waiting writes that now fit, in order; each is acknowledged once its data
    /// has crossed the interface.
    fn accept_writes(&mut self, t: u64) {
        while let Some(c) = self.waiting.front().copied() {
            if !self.room(c.len) {
                break;
            }
            self.waiting.pop_front();
            if self.extend_run(t, c.offset, c.len) {
                self.destaging.push(c.id);
            } else {
                self.dirty.push(Dirty {
                    id: c.id,
                    offset: c.offset,
                    len: c.len,
                    since: t,
                });
            }
            self.dirty_bytes += c.len;
            self.dirty_slots += 1;
            let ack = t.max(self.iface_free) + self.host_ns(c.len);
            self.iface_free = ack;
            self.queued -= 1;
            self.report(c.id, ack);
        }
    }

    /// A pending flush completes at `t` once every write it covers is on the media.
    fn end_flush(&mut self, t: u64) {
        if let Some(f) = self.flush {
            if self.dirty_bytes == 0 && self.waiting.is_empty() {
                self.flush = None;
                self.queued -= 1;
                self.report(f.id, t + self.overhead_ns);
            }
        }
    }

    /// The head finished its work at `e`.
    fn complete(&mut self, e: u64) {
        self.clock = self.clock.max(e);
        match self.work.take() {
            Some(Work::Host) => {
                self.queued -= 1;
                self.executing = None;
            }
            Some(Work::ReadAhead) => {}
            Some(Work::Destage(r)) => {
                self.destaging.clear();
                self.dirty_bytes -= r.bytes;
                self.dirty_slots -= r.slots;
                self.accept_writes(e);
                self.end_flush(e);
            }
            None => {}
        }
        self.admit_waiting(e);
    }

    /// Positioning time from where the head is at `t` to logical `offset`, ns.
    fn reach_ns(&self, t: u64, offset: u64) -> u64 {
        let seek = self.mech.seek_ns(self.mech.head(), offset);
        (seek + self.mech.rotation_ns(t as f64 + seek, offset)) as u64
    }

    /// Starts the head's next work at `t`, if there is any.
    fn start_next(&mut self, t: u64) -> bool {
        let (media, dirty) = (self.media.len(), self.dirty.len());
        if media == 0 && dirty == 0 {
            return false;
        }
        // Which: an aged host command first (the oldest); else the nearest of all (rpo); else
        // the oldest host command, then the buffer in arrival order (fifo).
        let aged = (0..media)
            .filter(|&i| t.saturating_sub(self.media[i].admitted) >= self.age_ns)
            .min_by_key(|&i| self.media[i].admitted);
        // A write waiting for room in the buffer ages too: once it has waited the limit, the
        // drive destages (the nearest buffered write) to let it in, unless an aged read came
        // first. Without it two readers near each other could keep the head from the buffer.
        let aged_write = self
            .waiting
            .front()
            .filter(|c| dirty > 0 && t.saturating_sub(c.admitted) >= self.age_ns)
            .map(|c| c.admitted);
        let write_first = match (aged, aged_write) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(i), Some(w)) => w < self.media[i].admitted,
        };
        let pick = if self.rpo && write_first {
            self.st.aged += 1;
            let d = (0..dirty)
                .min_by_key(|&i| self.reach_ns(t, self.dirty[i].offset))
                .expect("a buffered write");
            return self.destage(t, d);
        } else if let Some(i) = aged.filter(|_| self.rpo) {
            self.st.aged += 1;
            Some(i)
        } else if self.rpo {
            let host_at = t + self.overhead_ns;
            let near_host =
                (0..media).min_by_key(|&i| self.reach_ns(host_at, self.media[i].offset));
            let near_dirty = (0..dirty).min_by_key(|&i| self.reach_ns(t, self.dirty[i].offset));
            match (near_host, near_dirty) {
                (Some(h), Some(d)) => {
                    let (rh, rd) = (
                        self.overhead_ns + self.reach_ns(host_at, self.media[h].offset),
                        self.reach_ns(t, self.dirty[d].offset),
                    );
                    if rh <= rd {
                        Some(h)
                    } else {
                        return self.destage(t, d);
                    }
                }
                (Some(h), None) => Some(h),
                (None, Some(d)) => return self.destage(t, d),
                (None, None) => None,
            }
        } else {
            // Arrival order: the oldest of the host commands and the buffered writes.
            let host = (0..media).min_by_key(|&i| (self.media[i].admitted, self.media[i].id));
            let buffered = (0..dirty).min_by_key(|&i| self.dirty[i].since);
            match (host, buffered) {
                (Some(h), Some(d)) if self.dirty[d].since <= self.media[h].admitted => {
                    return self.destage(t, d)
                }
                (None, Some(d)) => return self.destage(t, d),
                (h, _) => h,
            }
        };
        let Some(i) = pick else { return false };
        let c = self.media.swap_remove(i);
        let wait = t.saturating_sub(c.admitted);
        self.st.host_waits += wait;
        self.st.longest_wait_ns = self.st.longest_wait_ns.max(wait);
        self.cache.stop_readahead(t);
        let start = t + self.overhead_ns;
        let end = self.mech.access(start, c.offset, c.len);
        if c.kind == ReqKind::Read {
            let rate = self.mech.rate_at(c.offset);
            self.cache
                .fill(c.offset, c.len, end, self.mech.passed(), rate);
        }
        // Its completion is known now: no later arrival can delay work already begun.
        self.report(c.id, end);
        self.work = Some(Work::Host);
        self.executing = (c.kind == ReqKind::Write).then_some(c.id);
        self.mech_free = end;
        true
    }

    /// Destages buffered write `i` with every buffered write contiguous with it, as one run.
    fn destage(&mut self, t: u64, i: usize) -> bool {
        let first = self.dirty.swap_remove(i);
        self.destaging.clear();
        self.destaging.push(first.id);
        let (mut start, mut end) = (first.offset, first.offset + first.len);
        let (mut bytes, mut slots) = (first.len, 1);
        while let Some(j) = self
            .dirty
            .iter()
            .position(|d| d.offset == end || d.offset + d.len == start)
        {
            let d = self.dirty.swap_remove(j);
            self.destaging.push(d.id);
            start = start.min(d.offset);
            end = end.max(d.offset + d.len);
            bytes += d.len;
            slots += 1;
            self.st.disk.destages_merged += 1;
        }
        self.st.destages += 1;
        self.cache.stop_readahead(t);
        let head_before = self.mech.head();
        let mut run = Run {
            began: t,
            head_before,
            start,
            end,
            xfer: 0,
            bytes,
            slots,
        };
        self.plan(&mut run);
        self.work = Some(Work::Destage(run));
        true
    }

    /// Plans run `r` on the media from when it began: sets when its transfer begins and when
    /// the head is free.
    fn plan(&mut self, r: &mut Run) {
        self.mech.set_head(r.head_before);
        self.mech_free = self.mech.access(r.began, r.start, r.end - r.start);
        let xfer = ((r.end - r.start) as f64 / self.mech.rate_at(r.start)) as u64;
        r.xfer = self.mech_free.saturating_sub(xfer);
    }

    /// A write the buffer takes at `t` that continues the destage in progress: the head
    /// writes it in the same run when its data is in the buffer before the head gets there
    /// (before the run's transfer begins, or, for a piece after the run's end, before the
    /// transfer ends), as a drive extends a queued write with the one contiguous to it.
    fn extend_run(&mut self, t: u64, offset: u64, len: u64) -> bool {
        let Some(Work::Destage(mut r)) = self.work else {
            return false;
        };
        let after = offset == r.end && t <= self.mech_free;
        let before = offset + len == r.start && t <= r.xfer;
        if !(after || before) {
            return false;
        }
        if after && t > r.xfer {
            // The transfer is under way: it goes on over the new piece.
            self.mech_free += (len as f64 / self.mech.rate_at(offset)) as u64;
            self.mech.set_head(offset + len);
            r.end += len;
        } else {
            r.start = r.start.min(offset);
            r.end = r.end.max(offset + len);
            self.plan(&mut r);
        }
        r.bytes += len;
        r.slots += 1;
        self.st.disk.destages_merged += 1;
        self.work = Some(Work::Destage(r));
        true
    }

    /// Processes everything the drive does up to `t`.
    fn run_to(&mut self, t: u64) {
        loop {
            if self.work.is_some() {
                if self.mech_free > t {
                    return;
                }
                let e = self.mech_free;
                self.complete(e);
                continue;
            }
            let at = self.clock.max(self.mech_free);
            if at > t || !self.start_next(at) {
                return;
            }
        }
    }
}

impl DeviceModel for QueuedDisk {
    fn name(&self) -> &'static str {
        "hdd"
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn service(&mut self, now_ns: u64, req: Request) -> Response {
        service_alone(self, now_ns, req)
    }

    fn submit(&mut self, now_ns: u64, id: RequestId, req: Request) -> Option<Response> {
        self.run_to(now_ns);
        self.clock = self.clock.max(now_ns);
        // Requests past the end transfer nothing (the server rejects them; never seek past it).
        let offset = req.offset.min(self.capacity);
        let c = Cmd {
            id,
            kind: req.kind,
            offset,
            len: req.len.min(self.capacity - offset),
            admitted: now_ns,
        };
        self.host.push_back(c);
        self.admit_waiting(now_ns);
        self.run_to(now_ns);
        // Answered at once (a buffer hit, a write the buffer took, a discard): say so now.
        let i = self.done.iter().position(|&(d, _)| d == id)?;
        Some(self.done.swap_remove(i).1)
    }

    fn advance(&mut self, now_ns: u64, done: &mut dyn FnMut(RequestId, Response)) {
        self.run_to(now_ns);
        for (id, r) in self.done.drain(..) {
            done(id, r);
        }
    }

    fn next_event_ns(&self) -> Option<u64> {
        if !self.done.is_empty() {
            return Some(self.clock);
        }
        (self.owes() && self.work.is_some()).then_some(self.mech_free)
    }

    fn unsettled(&mut self, now_ns: u64) -> Vec<Unsettled> {
        self.run_to(now_ns);
        let at = Unsettled::whole;
        let mut u: Vec<Unsettled> = Vec::new();
        u.extend(self.destaging.iter().map(|&id| at(id, true)));
        u.extend(self.executing.map(|id| at(id, true)));
        u.extend(self.dirty.iter().map(|d| at(d.id, false)));
        let queued_writes = self
            .waiting
            .iter()
            .chain(&self.host)
            .chain(&self.media)
            .filter(|c| c.kind == ReqKind::Write && Some(c.id) != self.executing);
        u.extend(queued_writes.map(|c| at(c.id, false)));
        u
    }

    fn background(&mut self, now_ns: u64) -> Background {
        self.run_to(now_ns);
        let busy = self.work.is_some() || !self.dirty.is_empty();
        Background {
            pending: busy,
            idle_at_ns: if busy {
                self.mech_free
            } else {
                self.mech_free.min(now_ns)
            },
            host_done_ns: if self.owes() { u64::MAX } else { self.replied },
            worked_ns: 0,
        }
    }

    fn stats(&self) -> Json {
        let st = &self.st;
        let mut m = Map::new();
        st.disk.insert_into(&mut m);
        m.insert("destages".into(), json!(st.destages));
        m.insert(
            "queue_order".into(),
            json!(if self.rpo { "rpo" } else { "fifo" }),
        );
        m.insert("aged_first".into(), json!(st.aged));
        m.insert(
            "longest_queue_wait_ms".into(),
            json!(st.longest_wait_ns as f64 * 1e-6),
        );
        Json::Object(m)
    }
}

#[cfg(test)]
#[path = "queued_tests.rs"]
mod tests;
