//! `hdd`: a conventional hard disk. Mechanics (a sqrt-then-linear seek curve over the full
//! stroke, the platter's rotational phase on the model's timeline, zoned transfer rates) plus
//! the drive's buffer (read segments with read-ahead and look-behind: what passed under the head
//! while it waited for a sector; optional write-back with flush) and a
//! command queue (NCQ): the drive accepts up to `queue_depth` commands at once, so a read
//! waiting for the media does not hold back the writes behind it, which go to the write-back
//! buffer, and the media serves reads and the buffer's destages in the order they came: a read
//! waits behind the writes buffered before it ([`Disk::admit`]). The disk is generic over a [`Translation`] from logical to physical
//! placement, so the `smr` model reuses all of it with its own translation layer.

use super::model::PROBE_RANDOM_IO;
use super::model::{
    Background, DeviceModel, Expectations, ModelDescriptor, ModelError, ReqKind, Request, Response,
};
use crate::params::{Kind, ParamSpec, Params};
use serde_json::{json, Map, Value as Json};

/// Cylinders across the full stroke: decides when two offsets share a cylinder (no seek).
const CYLINDERS: f64 = 200_000.0;
/// Read segments in the drive's buffer.
const SEGMENTS: usize = 16;
/// Commands the write-back buffer holds at most.
const WB_SLOTS: usize = 64;
/// The deepest command queue a drive may have (SATA NCQ: 32; SAS: more).
const MAX_QUEUE: usize = 256;
/// A rotational wait this close to a whole revolution counts as none (rounding of the timeline
/// to whole nanoseconds must not cost a sequential transfer a revolution).
const ROT_SLACK_NS: f64 = 1_000.0;

/// Parameters of `hdd` (also the mechanics and buffer of `smr`).
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "size",
        Kind::Size,
        "64GiB",
        "logical capacity; mapped onto the full stroke",
    ),
    ParamSpec::new("rpm", Kind::Float, "7200", "spindle speed").in_unit("rev/min"),
    ParamSpec::new(
        "track_to_track",
        Kind::Duration,
        "0.8ms",
        "seek to the next cylinder",
    ),
    ParamSpec::new(
        "avg_seek",
        Kind::Duration,
        "8.5ms",
        "mean seek between uniformly random positions",
    ),
    ParamSpec::new(
        "full_stroke",
        Kind::Duration,
        "17ms",
        "seek across the whole stroke",
    ),
    ParamSpec::new(
        "outer_rate",
        Kind::Float,
        "250",
        "media rate of the outermost zone",
    )
    .in_unit("MB/s"),
    ParamSpec::new(
        "inner_rate",
        Kind::Float,
        "120",
        "media rate of the innermost zone",
    )
    .in_unit("MB/s"),
    ParamSpec::new(
        "zones",
        Kind::Count,
        "16",
        "recording zones; rates fall linearly from outer to inner",
    ),
    ParamSpec::new(
        "overhead",
        Kind::Duration,
        "0.1ms",
        "command processing time per request",
    ),
    ParamSpec::new(
        "iface_rate",
        Kind::Float,
        "550",
        "interface rate of transfers to and from the buffer",
    )
    .in_unit("MB/s"),
    ParamSpec::new(
        "buffer",
        Kind::Size,
        "64MiB",
        "read buffer: segments holding read data and read-ahead",
    ),
    ParamSpec::new(
        "readahead",
        Kind::Size,
        "2MiB",
        "data read ahead after a read, while the drive is idle",
    ),
    ParamSpec::new(
        "write_back",
        Kind::Bool,
        "true",
        "acknowledge writes from the buffer, destage later",
    ),
    ParamSpec::new(
        "write_buffer",
        Kind::Size,
        "16MiB",
        "dirty data the write-back buffer holds",
    ),
    ParamSpec::new(
        "queue_depth",
        Kind::Count,
        "32",
        "commands the drive accepts at once (NCQ); 1: each waits for the one before to complete",
    ),
];

/// The `hdd` model.
pub static MODEL: ModelDescriptor = ModelDescriptor {
    name: "hdd",
    summary: "7200 rpm 3.5-inch hard disk: seek curve, rotation, zones, buffer with read-ahead and write-back",
    params: &[PARAMS],
    build: |v| Ok(Box::new(Hdd::new(&HddParams::from_values(v))?)),
    expect: |v, seq_io| expect(&HddParams::from_values(v), seq_io),
    presets: super::twins::DRIVES,
    preset_key: "drive",
};

/// Parameters of a hard disk, in base units (bytes, seconds, bytes per second).
#[derive(Debug, Clone, PartialEq)]
pub struct HddParams {
    pub capacity: u64,
    pub rpm: f64,
    pub track_to_track: f64,
    pub avg_seek: f64,
    pub full_stroke: f64,
    pub outer_rate: f64,
    pub inner_rate: f64,
    pub zones: u64,
    pub overhead: f64,
    pub iface_rate: f64,
    pub buffer: u64,
    pub readahead: u64,
    pub write_back: bool,
    pub write_buffer: u64,
    pub queue_depth: u64,
}

impl HddParams {
    /// Reads the parameters of [`PARAMS`] from resolved values.
    pub fn from_values(v: &Params) -> Self {
        HddParams {
            capacity: v.u64("size"),
            rpm: v.f64("rpm"),
            track_to_track: v.f64("track_to_track"),
            avg_seek: v.f64("avg_seek"),
            full_stroke: v.f64("full_stroke"),
            outer_rate: v.f64("outer_rate") * 1e6,
            inner_rate: v.f64("inner_rate") * 1e6,
            zones: v.u64("zones"),
            overhead: v.f64("overhead"),
            iface_rate: v.f64("iface_rate") * 1e6,
            buffer: v.u64("buffer"),
            readahead: v.u64("readahead"),
            write_back: v.bool("write_back"),
            write_buffer: v.u64("write_buffer"),
            queue_depth: v.u64("queue_depth"),
        }
    }

    fn check(&self) -> Result<(), ModelError> {
        let positive = |name, x: f64| {
            if x > 0.0 && x.is_finite() {
                Ok(())
            } else {
                Err(ModelError::new(name, "must be greater than 0"))
            }
        };
        positive("size", self.capacity as f64)?;
        positive("rpm", self.rpm)?;
        positive("outer_rate", self.outer_rate)?;
        positive("inner_rate", self.inner_rate)?;
        positive("iface_rate", self.iface_rate)?;
        positive("zones", self.zones as f64)?;
        if self.zones > 4096 {
            return Err(ModelError::new("zones", "must be at most 4096"));
        }
        if self.overhead.is_nan() || self.overhead < 0.0 {
            return Err(ModelError::new("overhead", "must be 0 or more"));
        }
        if self.queue_depth == 0 || self.queue_depth > MAX_QUEUE as u64 {
            return Err(ModelError::new(
                "queue_depth",
                format!("must be from 1 to {MAX_QUEUE}"),
            ));
        }
        if self.write_back && self.write_buffer == 0 {
            return Err(ModelError::new(
                "write_buffer",
                "must be greater than 0 with write_back",
            ));
        }
        Ok(())
    }
}

impl Default for HddParams {
    fn default() -> Self {
        HddParams::from_values(&Params::defaults(PARAMS))
    }
}

/// Seek time as a function of the distance `u` (a fraction of the full stroke): `t1 + b(sqrt(u) -
/// sqrt(u1))` up to a knee `uc`, then linear with the same slope at the knee, reaching the full
/// stroke time at `u = 1`. The knee is fitted so that the mean over uniformly random pairs of
/// positions is the average seek time. All times in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeekCurve {
    t1: f64,
    b: f64,
    r1: f64,
    uc: f64,
    tc: f64,
    e: f64,
}

impl SeekCurve {
    /// Fits the curve to track-to-track, average and full-stroke seek times.
    pub fn fit(t1: f64, avg: f64, full: f64) -> Result<Self, ModelError> {
        if !(t1 > 0.0 && t1 < avg) {
            return Err(ModelError::new(
                "track_to_track",
                "must be greater than 0 and less than avg_seek",
            ));
        }
        if !(avg < full && full.is_finite()) {
            return Err(ModelError::new(
                "full_stroke",
                "must be greater than avg_seek",
            ));
        }
        let u1 = 1.0 / CYLINDERS;
        let (lo_mean, hi_mean) = (
            Self::with_knee(t1, full, u1).mean(),
            Self::with_knee(t1, full, 1.0).mean(),
        );
        if !(avg >= lo_mean && avg <= hi_mean) {
            return Err(ModelError::new(
                "avg_seek",
                format!(
                    "with track_to_track {:.3}ms and full_stroke {:.3}ms it must lie between {:.3}ms and {:.3}ms",
                    t1 * 1e3,
                    full * 1e3,
                    lo_mean * 1e3,
                    hi_mean * 1e3
                ),
            ));
        }
        // The mean grows as the knee moves out (the curve becomes more concave): bisect.
        let (mut lo, mut hi) = (u1, 1.0);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if Self::with_knee(t1, full, mid).mean() < avg {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(Self::with_knee(t1, full, 0.5 * (lo + hi)))
    }

    fn with_knee(t1: f64, full: f64, uc: f64) -> Self {
        let r1 = (1.0 / CYLINDERS).sqrt();
        let sc = uc.sqrt();
        let b = (full - t1) / ((sc - r1) + (1.0 - uc) / (2.0 * sc));
        SeekCurve {
            t1,
            b,
            r1,
            uc,
            tc: t1 + b * (sc - r1),
            e: b / (2.0 * sc),
        }
    }

    /// Seek time in seconds over a distance `u` in (0, 1] of the full stroke (0 for `u <= 0`).
    #[inline]
    pub fn time(&self, u: f64) -> f64 {
        if u <= 0.0 {
            0.0
        } else if u <= self.uc {
            self.t1 + self.b * (u.sqrt() - self.r1).max(0.0)
        } else {
            self.tc + self.e * (u - self.uc)
        }
    }

    /// Distance fraction of the knee between the sqrt and the linear part.
    pub fn knee(&self) -> f64 {
        self.uc
    }

    /// Exact mean seek time over uniformly random pairs of positions on the whole stroke (the
    /// distance then has density 2(1-u)); seeks shorter than one cylinder count as track-to-track
    /// less a negligible term of order 1/cylinders.
    pub fn mean(&self) -> f64 {
        let (uc, r) = (self.uc, 1.0 - self.uc);
        let w0 = 2.0 * uc - uc * uc;
        let s = 2.0 * (2.0 / 3.0 * uc.powf(1.5) - 2.0 / 5.0 * uc.powf(2.5));
        (self.t1 - self.b * self.r1) * w0 + self.b * s + self.tc * r * r + self.e * r * r * r / 3.0
    }

    /// Mean seek time between uniformly random positions of a span covering `frac` of the
    /// stroke (numerical; equals [`SeekCurve::mean`] for `frac = 1`).
    pub fn mean_over(&self, frac: f64) -> f64 {
        // Substituting u = w^2 removes the square root's singularity; Simpson's rule then
        // converges quickly (the knee adds an O(h^2) term far below the probe's precision).
        let n = 20_000;
        let h = 1.0 / n as f64;
        let g = |w: f64| {
            let u = w * w;
            self.time(frac * u) * 2.0 * (1.0 - u) * 2.0 * w
        };
        let mut sum = g(0.0) + g(1.0);
        for i in 1..n {
            sum += g(i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 };
        }
        sum * h / 3.0
    }
}

/// The moving parts: head position, rotation and zones over `bytes` of physical space.
#[derive(Debug, Clone)]
pub struct Mechanics {
    bytes: u64,
    rev_ns: f64,
    seek: SeekCurve,
    zone_bytes: u64,
    /// Media rate of each zone, bytes per ns.
    rate: Vec<f64>,
    /// Bytes per track of each zone.
    track: Vec<f64>,
    cyl_per_byte: f64,
    head: u64,
    /// Bytes of the last access's track that passed under the head while it waited for the
    /// first sector, just before it (what a drive reading as it waits holds: look-behind).
    passed: u64,
}

impl Mechanics {
    /// Mechanics spanning `bytes` of physical space with the given drive parameters.
    pub fn new(p: &HddParams, bytes: u64) -> Result<Self, ModelError> {
        p.check()?;
        let seek = SeekCurve::fit(p.track_to_track, p.avg_seek, p.full_stroke)?;
        let rev_ns = 60e9 / p.rpm;
        let zones = p.zones.min(bytes.max(1));
        let rate: Vec<f64> = (0..zones)
            .map(|i| {
                let f = if zones > 1 {
                    i as f64 / (zones - 1) as f64
                } else {
                    0.0
                };
                (p.outer_rate - (p.outer_rate - p.inner_rate) * f) * 1e-9
            })
            .collect();
        let track = rate.iter().map(|r| r * rev_ns).collect();
        Ok(Mechanics {
            bytes,
            rev_ns,
            seek,
            zone_bytes: bytes.div_ceil(zones).max(1),
            rate,
            track,
            cyl_per_byte: CYLINDERS / bytes as f64,
            head: 0,
            passed: 0,
        })
    }

    #[inline]
    fn zone(&self, offset: u64) -> usize {
        ((offset / self.zone_bytes) as usize).min(self.rate.len() - 1)
    }

    /// Media rate at a physical offset, bytes per ns.
    #[inline]
    pub fn rate_at(&self, offset: u64) -> f64 {
        self.rate[self.zone(offset)]
    }

    /// One revolution, ns.
    pub fn rev_ns(&self) -> f64 {
        self.rev_ns
    }

    /// The seek curve.
    pub fn seek_curve(&self) -> &SeekCurve {
        &self.seek
    }

    /// Physical bytes spanned by the full stroke.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Physical offset the head is at.
    pub(crate) fn head(&self) -> u64 {
        self.head
    }

    /// Puts the head back where it was before a planned access that is being replanned.
    pub(crate) fn set_head(&mut self, head: u64) {
        self.head = head;
    }

    /// Seek time in ns from physical offset `from` to `to`.
    #[inline]
    pub fn seek_ns(&self, from: u64, to: u64) -> f64 {
        let (a, b) = (
            from as f64 * self.cyl_per_byte,
            to as f64 * self.cyl_per_byte,
        );
        if a as u64 == b as u64 {
            return 0.0;
        }
        self.seek.time((a - b).abs() / CYLINDERS) * 1e9
    }

    /// Rotational wait in ns for the sector at `offset` when the head arrives at time `t`.
    #[inline]
    pub fn rotation_ns(&self, t: f64, offset: u64) -> f64 {
        let z = self.zone(offset);
        let angle = ((offset - z as u64 * self.zone_bytes) as f64 / self.track[z]).fract();
        let phase = (t / self.rev_ns).fract();
        let wait = (angle - phase).rem_euclid(1.0) * self.rev_ns;
        if wait > self.rev_ns - ROT_SLACK_NS {
            0.0
        } else {
            wait
        }
    }

    /// Seeks to physical `offset` from `start` (ns), waits for the sector, transfers `len`
    /// bytes; returns the time the transfer ends. The head is left at `offset + len`.
    #[inline]
    pub fn access(&mut self, start: u64, offset: u64, len: u64) -> u64 {
        let arrive = start as f64 + self.seek_ns(self.head, offset);
        let wait = self.rotation_ns(arrive, offset);
        let rate = self.rate_at(offset);
        let end = arrive + wait + len as f64 / rate;
        self.head = offset + len;
        // What passed under the head is the track's data just before `offset`, back to the
        // track's start at most (the part wrapping round from its end is not kept).
        let z = self.zone(offset);
        let on_track = ((offset - z as u64 * self.zone_bytes) as f64) % self.track[z];
        self.passed = (wait * rate).min(on_track) as u64;
        end.round() as u64
    }

    /// Bytes just before the last access's first sector that passed under the head while it
    /// waited for it ([`Mechanics::access`]).
    pub fn passed(&self) -> u64 {
        self.passed
    }

    /// Seeks to physical `offset` and transfers `len` bytes starting wherever the platter is
    /// (a log append that may begin at any sector of its track); returns when it ends.
    #[inline]
    pub fn append(&mut self, start: u64, offset: u64, len: u64) -> u64 {
        let arrive = start as f64 + self.seek_ns(self.head, offset);
        let end = arrive + len as f64 / self.rate_at(offset);
        self.head = offset + len;
        end.round() as u64
    }

    /// Mean of 1/rate (ns per byte) over the physical range `[a, b)`, weighting zones by bytes.
    pub fn mean_ns_per_byte(&self, a: u64, b: u64) -> f64 {
        let mut sum = 0.0;
        let mut x = a;
        while x < b {
            let z = self.zone(x);
            let zend = if z + 1 == self.rate.len() {
                b
            } else {
                ((z as u64 + 1) * self.zone_bytes).min(b)
            };
            sum += (zend - x) as f64 / self.rate[z];
            x = zend;
        }
        sum / (b - a).max(1) as f64
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

/// A read segment of the buffer: logical `[start, end)`; data up to `o_end` was read by `t_end`,
/// later data arrives at `rate` (read-ahead) unless the segment was cut short.
#[derive(Debug, Clone, Copy, Default)]
struct Segment {
    start: u64,
    end: u64,
    o_end: u64,
    t_end: u64,
    rate: f64,
    used: u64,
}

impl Segment {
    #[inline]
    fn ready(&self, x: u64) -> u64 {
        if x <= self.o_end {
            self.t_end
        } else {
            self.t_end + ((x - self.o_end) as f64 / self.rate) as u64
        }
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

#[derive(Debug, Clone, Copy, Default)]
struct DiskStats {
    reads: u64,
    writes: u64,
    flushes: u64,
    discards: u64,
    read_hits: u64,
    write_waits: u64,
    destages_merged: u64,
}

/// A hard disk: mechanics, buffer and command queue over a [`Translation`].
pub struct Disk<T: Translation> {
    mech: Mechanics,
    stl: T,
    capacity: u64,
    write_back: bool,
    write_buffer: u64,
    readahead: u64,
    seg_max: u64,
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
    segs: [Segment; SEGMENTS],
    /// Index of the segment still reading ahead, or SEGMENTS for none.
    active: usize,
    clock: u64,
    /// Write-back ring: (time destaged, bytes) per buffered command.
    wb: [(u64, u64); WB_SLOTS],
    wb_head: usize,
    wb_len: usize,
    wb_dirty: u64,
    /// The last destage, while it may still be replanned (see [`Disk::merge_destage`]).
    last_destage: Option<Destage>,
    st: DiskStats,
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
            readahead: p.readahead,
            seg_max: (p.buffer / SEGMENTS as u64).max(1),
            overhead_ns: p.overhead * 1e9,
            iface: p.iface_rate * 1e-9,
            iface_free: 0,
            replied: 0,
            queue: [0; MAX_QUEUE],
            queue_len: 0,
            queue_depth: p.queue_depth.clamp(1, MAX_QUEUE as u64) as usize,
            mech_free: 0,
            segs: [Segment::default(); SEGMENTS],
            active: SEGMENTS,
            clock: 0,
            wb: [(0, 0); WB_SLOTS],
            wb_head: 0,
            wb_len: 0,
            wb_dirty: 0,
            last_destage: None,
            st: DiskStats::default(),
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

    /// The mechanism starts other work at `t`: the active read-ahead stops there.
    #[inline]
    fn stop_readahead(&mut self, t: u64) {
        if self.active < SEGMENTS {
            let s = &mut self.segs[self.active];
            let read = (t.saturating_sub(s.t_end) as f64 * s.rate) as u64;
            s.end = s.end.min(s.o_end + read).max(s.o_end);
            self.active = SEGMENTS;
        }
    }

    fn read(&mut self, s: u64, o: u64, len: u64) -> u64 {
        self.st.reads += 1;
        self.clock += 1;
        let end = o + len;
        if let Some(i) = self
            .segs
            .iter()
            .position(|g| g.start <= o && end <= g.end && g.end > g.start)
        {
            self.st.read_hits += 1;
            let g = &mut self.segs[i];
            let sent = s + self.overhead_ns as u64 + (len as f64 / self.iface) as u64;
            let done = sent.max(g.ready(end));
            g.used = self.clock;
            if i == self.active {
                g.end = g.end.max(end + self.readahead);
                g.start = g.start.max(g.end.saturating_sub(self.seg_max));
            }
            // Data still to come from the media does not hold the interface: the drive
            // takes other commands meanwhile (a queued command disconnects).
            self.iface_free = sent;
            return done;
        }
        self.iface_free = s + self.overhead_ns as u64;
        let ms = (s + self.overhead_ns as u64).max(self.mech_free);
        self.stop_readahead(ms);
        self.last_destage = None;
        let done = self.stl.read(&mut self.mech, ms, o, len);
        self.mech_free = done;
        let v = (0..SEGMENTS)
            .min_by_key(|&i| self.segs[i].used)
            .unwrap_or(0);
        let seg_end = end + self.readahead;
        // The drive keeps what it read while waiting for the sector (look-behind), so a read
        // just below this one (a walk in descending order) finds its data in the buffer.
        let behind = o.saturating_sub(self.mech.passed());
        self.segs[v] = Segment {
            start: behind.max(seg_end.saturating_sub(self.seg_max)),
            end: seg_end,
            o_end: end,
            t_end: done,
            rate: self.mech.rate_at(self.stl.physical(o)),
            used: self.clock,
        };
        self.active = v;
        done
    }

    fn write(&mut self, s: u64, o: u64, len: u64) -> u64 {
        self.st.writes += 1;
        let end = o + len;
        for (i, g) in self.segs.iter_mut().enumerate() {
            if g.start < end && o < g.end {
                *g = Segment::default();
                if i == self.active {
                    self.active = SEGMENTS;
                }
            }
        }
        self.iface_free = s + self.host_ns(len) as u64;
        if !self.write_back || len > self.write_buffer {
            let ms = (s + self.overhead_ns as u64).max(self.mech_free);
            self.stop_readahead(ms);
            self.last_destage = None;
            self.mech_free = self.stl.write(&mut self.mech, ms, o, len);
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
            self.stop_readahead(ds);
            let head_before = self.mech.head();
            self.mech_free = self.stl.write(&mut self.mech, ds, o, len);
            self.last_destage = Some(Destage {
                start: ds,
                end: self.mech_free,
                offset: o,
                len,
                head_before,
            });
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
        true
    }

    fn flush(&mut self, s: u64) -> u64 {
        self.st.flushes += 1;
        self.last_destage = None;
        self.wb_len = 0;
        self.wb_dirty = 0;
        let done = s + self.overhead_ns as u64;
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
                self.stop_readahead(idle_since);
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

    fn service(&mut self, now_ns: u64, req: Request) -> Response {
        self.catch_up(now_ns);
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
        let st = &self.st;
        let mut m = Map::new();
        m.insert("reads".into(), json!(st.reads));
        m.insert("writes".into(), json!(st.writes));
        m.insert("flushes".into(), json!(st.flushes));
        m.insert("discards".into(), json!(st.discards));
        m.insert("read_cache_hits".into(), json!(st.read_hits));
        m.insert("write_buffer_waits".into(), json!(st.write_waits));
        m.insert("destages_merged".into(), json!(st.destages_merged));
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
