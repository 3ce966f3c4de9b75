//! `hdd`: a conventional hard disk. Its mechanics ([`super::mechanics`]: seek curve, rotation,
//! zones) plus the drive's buffer (read segments with read-ahead and look-behind; optional
//! write-back with flush) and a command queue (NCQ): the drive accepts up to `queue_depth`
//! commands at once, so a read waiting for the media does not hold back the writes behind it,
//! which go to the write-back buffer. This disk's media serves reads and the buffer's destages
//! in the order they came (`queue_order=fifo`): a read waits behind the writes buffered before
//! it (`Disk::admit`); with `queue_order=rpo` the `hdd` model is [`super::queued`]'s disk,
//! which reorders its queue. The disk is generic over a [`Translation`] from logical to
//! physical placement, so the `smr` model reuses all of it with its own translation layer.

use super::mechanics::{DiskCounters, Mechanics, MAX_QUEUE};
pub use super::mechanics::{HddParams, SeekCurve, PARAMS};
use super::model::PROBE_RANDOM_IO;
use super::model::{
    Background, DeviceModel, Expectations, ModelDescriptor, ModelError, ReqKind, Request,
    RequestId, Response, Unsettled,
};
use super::queued::{QueueParams, QueuedDisk, QUEUE_PARAMS};
use super::readcache::ReadCache;
use crate::params::Params;
use serde_json::{Map, Value as Json};
/// Commands the write-back buffer holds at most.
const WB_SLOTS: usize = 64;

/// The `hdd` model.
pub static MODEL: ModelDescriptor = ModelDescriptor {
    name: "hdd",
    summary:
        "3.5-inch hard disk: seek curve, rotation, zones, buffer with read-ahead and write-back",
    params: &[PARAMS, QUEUE_PARAMS],
    build,
    expect: |v, seq_io| expect(&HddParams::from_values(v), seq_io),
    presets: super::twins::DRIVES,
    preset_key: "drive",
};

/// An `hdd` of resolved values: the arrival-order disk, or with `queue_order=rpo` the one that
/// reorders its queue ([`QueuedDisk`]).
fn build(v: &Params) -> Result<Box<dyn DeviceModel>, ModelError> {
    let p = HddParams::from_values(v);
    let q = QueueParams::from_values(v);
    if q.rpo {
        Ok(Box::new(QueuedDisk::new(&p, &q)?))
    } else {
        Ok(Box::new(Hdd::new(&p)?))
    }
}

/// Where a disk puts logical data on its platters: the place that differs between a
/// conventional disk ([`Direct`]) and a drive-managed shingled one (`smr`).
pub trait Translation: Send {
    /// Model name.
    const NAME: &'static str;
    /// Physical bytes the stroke spans (the logical capacity plus any reserved region).
    fn media_bytes(&self) -> u64;
    /// Physical offset of a logical offset's home location.
    fn physical(&self, offset: u64) -> u64;
    /// Reads logical `[offset, offset+len)` starting at `start`; returns when it ends.
    fn read(&mut self, mech: &mut Mechanics, start: u64, offset: u64, len: u64) -> u64;
    /// Writes logical `[offset, offset+len)` onto the media starting at `start`; returns when it ends.
    fn write(&mut self, mech: &mut Mechanics, start: u64, offset: u64, len: u64) -> u64;
    /// Whether the last write may be replanned as one write of a range that starts earlier
    /// (its only effect was on the mechanics, so [`Translation::write`] of the larger range
    /// replaces it). Lets the write-back buffer destage pieces that arrived out of order in
    /// LBA order.
    const REPLANS_WRITES: bool = false;
    /// The mechanism has been idle since `since` and a request arrives at `now`: background
    /// work done in between; returns when the mechanism is free (`since` if nothing was done).
    fn idle(&mut self, _mech: &mut Mechanics, since: u64, _now: u64) -> u64 {
        since
    }
    /// Background work is still queued (an SMR disk's cache holds data not yet cleaned).
    fn pending(&self) -> bool {
        false
    }
    /// Model time spent on background work so far (not counting work a request waited for).
    fn worked_ns(&self) -> u64 {
        0
    }
    /// State that explains results, added to the disk's stats.
    fn stats(&self, _out: &mut Map<String, Json>) {}
}

/// A conventional disk: logical offset = physical offset.
#[derive(Debug, Clone)]
pub struct Direct {
    capacity: u64,
}

impl Translation for Direct {
    const NAME: &'static str = "hdd";
    const REPLANS_WRITES: bool = true;
    fn media_bytes(&self) -> u64 {
        self.capacity
    }
    fn physical(&self, offset: u64) -> u64 {
        offset
    }
    fn read(&mut self, mech: &mut Mechanics, start: u64, offset: u64, len: u64) -> u64 {
        mech.access(start, offset, len)
    }
    fn write(&mut self, mech: &mut Mechanics, start: u64, offset: u64, len: u64) -> u64 {
        mech.access(start, offset, len)
    }
}

/// The destage planned last: logical `[offset, offset + len)` from `start` to `end`, with the
/// head at `head_before` when it was planned.
#[derive(Debug, Clone, Copy)]
struct Destage {
    start: u64,
    end: u64,
    offset: u64,
    len: u64,
    head_before: u64,
}

/// One write on its way to the media: its request, when the drive started on it (the
/// command, or its destage) and when the media holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct MediaWrite {
    id: RequestId,
    start: u64,
    end: u64,
}

/// A hard disk: mechanics, buffer and command queue over a [`Translation`].
pub struct Disk<T: Translation> {
    mech: Mechanics,
    stl: T,
    capacity: u64,
    write_back: bool,
    write_buffer: u64,
    overhead_ns: f64,
    iface: f64,
    /// When the host interface is free for the next command's transfer.
    iface_free: u64,
    /// The latest completion of any command so far.
    replied: u64,
    /// Completion times of the commands in the drive's queue (the first `queue_len`).
    queue: [u64; MAX_QUEUE],
    queue_len: usize,
    queue_depth: usize,
    mech_free: u64,
    cache: ReadCache,
    /// Write-back ring: (time destaged, bytes) per buffered command.
    wb: [(u64, u64); WB_SLOTS],
    wb_head: usize,
    wb_len: usize,
    wb_dirty: u64,
    /// The last destage, while it may still be replanned (see [`Disk::merge_destage`]).
    last_destage: Option<Destage>,
    flush_ignored: bool,
    /// The request being serviced.
    current: RequestId,
    /// Writes not yet on the media when the last request arrived, in the order their media
    /// writes were planned (their ends never decrease: the mechanism does one at a time).
    media: std::collections::VecDeque<MediaWrite>,
    st: DiskCounters,
}

/// A conventional hard disk.
pub type Hdd = Disk<Direct>;

impl Hdd {
    /// A hard disk with the given parameters.
    pub fn new(p: &HddParams) -> Result<Self, ModelError> {
        Disk::with_translation(
            p,
            Direct {
                capacity: p.capacity,
            },
        )
    }
}

impl<T: Translation> Disk<T> {
    /// A disk with the given drive parameters placing data through `stl`.
    pub fn with_translation(p: &HddParams, stl: T) -> Result<Self, ModelError> {
        let mech = Mechanics::new(p, stl.media_bytes())?;
        Ok(Disk {
            mech,
            stl,
            capacity: p.capacity,
            write_back: p.write_back,
            write_buffer: p.write_buffer,
            overhead_ns: p.overhead * 1e9,
            iface: p.iface_rate * 1e-9,
            iface_free: 0,
            replied: 0,
            queue: [0; MAX_QUEUE],
            queue_len: 0,
            queue_depth: p.queue_depth.clamp(1, MAX_QUEUE as u64) as usize,
            mech_free: 0,
            cache: ReadCache::new(p.buffer, p.readahead),
            wb: [(0, 0); WB_SLOTS],
            wb_head: 0,
            wb_len: 0,
            wb_dirty: 0,
            last_destage: None,
            flush_ignored: p.flush_ignored,
            current: 0,
            media: std::collections::VecDeque::new(),
            st: DiskCounters::default(),
        })
    }

    /// The translation layer.
    pub fn translation(&self) -> &T {
        &self.stl
    }

    /// The mechanics.
    pub fn mechanics(&self) -> &Mechanics {
        &self.mech
    }

    #[inline]
    fn host_ns(&self, len: u64) -> f64 {
        self.overhead_ns + len as f64 / self.iface
    }

    fn read(&mut self, s: u64, o: u64, len: u64) -> u64 {
        self.st.reads += 1;
        if let Some(hit) = self.cache.lookup(o, len) {
            self.st.read_hits += 1;
            let sent = s + self.overhead_ns as u64 + (len as f64 / self.iface) as u64;
            // Data still to come from the media does not hold the interface: the drive
            // takes other commands meanwhile (a queued command disconnects). It holds the
            // head, which reads on until the data is in.
            self.iface_free = sent;
            if hit.ahead && hit.ready > self.mech_free {
                self.mech_free = hit.ready;
                self.mech.set_head(o + len);
            }
            return sent.max(hit.ready);
        }
        self.iface_free = s + self.overhead_ns as u64;
        let ms = (s + self.overhead_ns as u64).max(self.mech_free);
        self.cache.stop_readahead(ms);
        self.last_destage = None;
        let done = self.stl.read(&mut self.mech, ms, o, len);
        self.mech_free = done;
        // The drive keeps what it read while waiting for the sector (look-behind), so a read
        // just below this one (a walk in descending order) finds its data in the buffer.
        let rate = self.mech.rate_at(self.stl.physical(o));
        self.cache.fill(o, len, done, self.mech.passed(), rate);
        done
    }

    fn write(&mut self, s: u64, o: u64, len: u64) -> u64 {
        self.st.writes += 1;
        self.cache.invalidate(o, len);
        self.iface_free = s + self.host_ns(len) as u64;
        if !self.write_back || len > self.write_buffer {
            let ms = (s + self.overhead_ns as u64).max(self.mech_free);
            self.cache.stop_readahead(ms);
            self.last_destage = None;
            self.mech_free = self.stl.write(&mut self.mech, ms, o, len);
            self.on_media(s, self.mech_free);
            return self.mech_free;
        }
        let mut t = s + self.host_ns(len) as u64;
        let mut waited = false;
        while self.wb_len > 0 {
            let (done, bytes) = self.wb[self.wb_head];
            let full = self.wb_len == WB_SLOTS || self.wb_dirty + len > self.write_buffer;
            if done > t && !full {
                break;
            }
            waited |= done > t;
            t = t.max(done);
            self.wb_head = (self.wb_head + 1) % WB_SLOTS;
            self.wb_len -= 1;
            self.wb_dirty -= bytes;
        }
        if waited {
            self.st.write_waits += 1;
        }
        if !self.merge_destage(t, o, len) {
            let ds = t.max(self.mech_free);
            self.cache.stop_readahead(ds);
            let head_before = self.mech.head();
            self.mech_free = self.stl.write(&mut self.mech, ds, o, len);
            self.last_destage = Some(Destage {
                start: ds,
                end: self.mech_free,
                offset: o,
                len,
                head_before,
            });
            self.on_media(ds, self.mech_free);
        }
        self.wb[(self.wb_head + self.wb_len) % WB_SLOTS] = (self.mech_free, len);
        self.wb_len += 1;
        self.wb_dirty += len;
        t
    }

    /// A write of `[o, o + len)`, in the buffer at `t`, that ends where the last planned
    /// destage begins, when that destage has not started by `t`: the buffer holds both, so
    /// the drive writes them as one run in LBA order (as it would two queued commands whose
    /// halves arrived swapped) instead of seeking back and waiting a revolution. Replans that
    /// destage to cover both; returns false when it cannot.
    fn merge_destage(&mut self, t: u64, o: u64, len: u64) -> bool {
        let Some(d) = self.last_destage else {
            return false;
        };
        if !T::REPLANS_WRITES
            || self.wb_len == 0
            || d.end != self.mech_free
            || d.start < t
            || o + len != d.offset
        {
            return false;
        }
        self.mech.set_head(d.head_before);
        let end = self.stl.write(&mut self.mech, d.start, o, len + d.len);
        // The replanned destage's own slot now completes with the run.
        let last = (self.wb_head + self.wb_len - 1) % WB_SLOTS;
        self.wb[last].0 = end;
        self.mech_free = end;
        self.last_destage = Some(Destage {
            start: d.start,
            end,
            offset: o,
            len: len + d.len,
            head_before: d.head_before,
        });
        self.st.destages_merged += 1;
        // The replanned destage carries both writes to the media.
        if let Some(m) = self.media.back_mut() {
            m.end = end;
        }
        self.on_media(d.start, end);
        true
    }

    /// The write being serviced is on the media from `start` (its command or destage begins)
    /// to `end`.
    fn on_media(&mut self, start: u64, end: u64) {
        let id = self.current;
        self.media.push_back(MediaWrite { id, start, end });
    }

    fn flush(&mut self, s: u64) -> u64 {
        self.st.flushes += 1;
        let done = s + self.overhead_ns as u64;
        if self.flush_ignored {
            // The buffer destages in its own time; the flush is acknowledged at once.
            self.iface_free = done;
            return done;
        }
        self.last_destage = None;
        self.wb_len = 0;
        self.wb_dirty = 0;
        let done = if self.write_back {
            done.max(self.mech_free)
        } else {
            done
        };
        // Not a queued command: nothing else starts before it completes.
        self.iface_free = done;
        done
    }

    /// When a command arriving at `now` enters the drive: at once while its queue has room,
    /// else when the earliest queued command completes; and not before the interface is free.
    /// With `queue_depth` 1 each command waits for the one before it to complete.
    fn admit(&mut self, now: u64) -> u64 {
        let mut s = now;
        loop {
            let q = &mut self.queue[..self.queue_len];
            let mut i = 0;
            let mut len = q.len();
            while i < len {
                if q[i] <= s {
                    len -= 1;
                    q.swap(i, len);
                } else {
                    i += 1;
                }
            }
            self.queue_len = len;
            if len < self.queue_depth {
                break;
            }
            s = q[..len].iter().copied().min().unwrap_or(s);
        }
        s.max(self.iface_free)
    }

    /// `done` joins the queue's completion times.
    fn enqueue(&mut self, done: u64) {
        if self.queue_len < MAX_QUEUE {
            self.queue[self.queue_len] = done;
            self.queue_len += 1;
        }
        self.replied = self.replied.max(done);
    }
}

impl<T: Translation> Disk<T> {
    /// Does the translation layer's background work due between the end of the last request
    /// and `now_ns`.
    fn catch_up(&mut self, now_ns: u64) {
        let idle_since = self.replied.max(self.mech_free);
        if now_ns > idle_since {
            let free = self.stl.idle(&mut self.mech, idle_since, now_ns);
            if free > idle_since {
                self.last_destage = None;
                self.cache.stop_readahead(idle_since);
                self.mech_free = free;
            }
        }
    }
}

impl<T: Translation> DeviceModel for Disk<T> {
    fn background(&mut self, now_ns: u64) -> Background {
        self.catch_up(now_ns);
        // Destages of the write-back buffer and cleaning in progress end at `mech_free`.
        let until = self.replied.max(self.mech_free);
        Background {
            pending: until > now_ns || self.stl.pending(),
            idle_at_ns: until,
            host_done_ns: self.replied,
            worked_ns: self.stl.worked_ns(),
        }
    }

    fn name(&self) -> &'static str {
        T::NAME
    }

    fn capacity(&self) -> u64 {
        self.capacity
    }

    fn submit(&mut self, now_ns: u64, id: RequestId, req: Request) -> Option<Response> {
        self.current = id;
        Some(self.service(now_ns, req))
    }

    fn unsettled(&mut self, now_ns: u64) -> Vec<Unsettled> {
        self.media
            .iter()
            .filter(|m| m.end > now_ns)
            .map(|m| Unsettled::whole(m.id, m.start <= now_ns))
            .collect()
    }

    fn service(&mut self, now_ns: u64, req: Request) -> Response {
        self.catch_up(now_ns);
        while self.media.front().is_some_and(|m| m.end <= now_ns) {
            self.media.pop_front();
        }
        let mut s = self.admit(now_ns);
        if req.kind == ReqKind::Flush {
            // A flush waits for every queued command.
            s = s.max(self.replied);
        }
        // Requests past the end transfer nothing (the server rejects them; never index past it).
        let mut req = req;
        req.offset = req.offset.min(self.capacity);
        req.len = req.len.min(self.capacity - req.offset);
        let done = match req.kind {
            ReqKind::Read if req.len > 0 => self.read(s, req.offset, req.len),
            ReqKind::Write if req.len > 0 => self.write(s, req.offset, req.len),
            ReqKind::Flush => self.flush(s),
            ReqKind::Discard => {
                self.st.discards += 1;
                self.iface_free = s + self.overhead_ns as u64;
                self.iface_free
            }
            ReqKind::Read | ReqKind::Write => {
                self.iface_free = s + self.overhead_ns as u64;
                self.iface_free
            }
        };
        self.enqueue(done);
        Response {
            done_ns: done,
            errno: 0,
        }
    }

    fn stats(&self) -> Json {
        let mut m = Map::new();
        self.st.insert_into(&mut m);
        self.stl.stats(&mut m);
        Json::Object(m)
    }
}

/// QD1 throughput in MB/s of back-to-back transfers of `io` bytes that each take
/// `max(media time, host time)` (streaming from read-ahead or into the write-back buffer).
fn streaming_mbs(io: u64, media_ns_per_byte: f64, host_ns: f64) -> f64 {
    let t = (io as f64 * media_ns_per_byte).max(host_ns);
    io as f64 / t * 1e3
}

/// The probe's expectations for an `hdd` (see [`Expectations`]): a random read costs the
/// command overhead, the mean seek, half a revolution and the transfer; sequential reads stream
/// from read-ahead and sequential writes through the write-back buffer at the media rate (or the
/// host rate if slower); random writes in steady state run at the destage rate (seek, half a
/// revolution, transfer). Without write-back, a QD1 sequential write loses one revolution.
pub fn expect(p: &HddParams, seq_io: u64) -> Result<Expectations, ModelError> {
    let mech = Mechanics::new(p, p.capacity)?;
    Ok(expect_on(&mech, p, 0, p.capacity, seq_io))
}

/// Expectations for a disk whose logical space sits at physical `[base, base + capacity)` of
/// `mech`. Random writes are taken in place (a conventional disk).
pub(crate) fn expect_on(
    mech: &Mechanics,
    p: &HddParams,
    base: u64,
    cap: u64,
    seq_io: u64,
) -> Expectations {
    let frac = cap as f64 / mech.bytes() as f64;
    let seek_ns = if frac >= 1.0 {
        mech.seek_curve().mean()
    } else {
        mech.seek_curve().mean_over(frac)
    } * 1e9;
    let rand_xfer = PROBE_RANDOM_IO as f64 * mech.mean_ns_per_byte(base, base + cap);
    let mech_rand = seek_ns + mech.rev_ns() / 2.0 + rand_xfer;
    let overhead = p.overhead * 1e9;
    let host = |io: u64| overhead + io as f64 / (p.iface_rate * 1e-9);
    let one_pct = (cap / 100).max(seq_io);
    let outer = mech.mean_ns_per_byte(base, base + one_pct);
    let inner = mech.mean_ns_per_byte(base + cap - one_pct, base + cap);
    let (random_write_iops, seq_write_mbs) = if p.write_back {
        (
            1e9 / mech_rand.max(host(PROBE_RANDOM_IO)),
            streaming_mbs(seq_io, outer, host(seq_io)),
        )
    } else {
        let t = mech.rev_ns() + seq_io as f64 * outer;
        (1e9 / (overhead + mech_rand), seq_io as f64 / t * 1e3)
    };
    Expectations {
        random_read_ms: (overhead + mech_rand) * 1e-6,
        seq_read_outer_mbs: streaming_mbs(seq_io, outer, host(seq_io)),
        seq_read_inner_mbs: streaming_mbs(seq_io, inner, host(seq_io)),
        random_write_iops,
        seq_write_mbs,
    }
}

#[cfg(test)]
#[path = "hdd_tests.rs"]
mod tests;
