//! A hard disk's moving parts and their parameters: the seek curve (sqrt-then-linear over the
//! full stroke, fitted to track-to-track, average and full-stroke seeks), the platter's rotation
//! on the model's timeline, zoned transfer rates, and the parameters every disk model shares
//! ([`PARAMS`], [`HddParams`]). Used by the arrival-order disk of [`super::hdd`], the
//! reordering one of [`super::queued`] and the shingled one of [`super::smr`].

use super::model::ModelError;
use crate::params::{Kind, ParamSpec, Params};
use serde_json::{json, Map, Value as Json};

/// Cylinders across the full stroke: decides when two offsets share a cylinder (no seek).
pub(crate) const CYLINDERS: f64 = 200_000.0;
/// The deepest command queue a drive may have (SATA NCQ: 32; SAS: more).
pub(crate) const MAX_QUEUE: usize = 256;
/// The most read-buffer segments a drive may have.
pub(crate) const MAX_SEGMENTS: u64 = 256;
/// The most commands a write-back buffer may hold.
pub(crate) const MAX_WRITE_SLOTS: u64 = 4096;
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
        "segments",
        Kind::Count,
        "16",
        "segments the read buffer is divided into (each holds buffer / segments)",
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
        "write_slots",
        Kind::Count,
        "64",
        "commands the write-back buffer holds at most, whatever their size",
    ),
    ParamSpec::new(
        "flush",
        Kind::Choice(&["honour", "ignore"]),
        "honour",
        "honour: a cache flush completes once the write-back buffer is on the media; ignore: acknowledged at once while the buffer destages in its own time (a drive that lies about flushes)",
    ),
    ParamSpec::new(
        "queue_depth",
        Kind::Count,
        "32",
        "commands the drive accepts at once (NCQ); 1: each waits for the one before to complete",
    ),
];

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
    /// Segments of the read buffer.
    pub segments: u64,
    pub readahead: u64,
    pub write_back: bool,
    pub write_buffer: u64,
    /// Commands the write-back buffer holds at most.
    pub write_slots: u64,
    /// The drive acknowledges a cache flush at once, whatever its buffer holds.
    pub flush_ignored: bool,
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
            segments: v.u64("segments"),
            readahead: v.u64("readahead"),
            write_back: v.bool("write_back"),
            write_buffer: v.u64("write_buffer"),
            write_slots: v.u64("write_slots"),
            flush_ignored: v.text("flush") == "ignore",
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
        if !(1..=MAX_SEGMENTS).contains(&self.segments) {
            return Err(ModelError::new(
                "segments",
                format!("must be from 1 to {MAX_SEGMENTS}"),
            ));
        }
        if !(1..=MAX_WRITE_SLOTS).contains(&self.write_slots) {
            return Err(ModelError::new(
                "write_slots",
                format!("must be from 1 to {MAX_WRITE_SLOTS}"),
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

/// The commands a disk served, as every disk model counts them (its `stats()`).
#[derive(Debug, Clone, Copy, Default)]
pub struct DiskCounters {
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub discards: u64,
    /// Reads answered from the read buffer.
    pub read_hits: u64,
    /// Writes that waited for room in the write-back buffer.
    pub write_waits: u64,
    /// Buffered writes destaged in the same run as another.
    pub destages_merged: u64,
}

impl DiskCounters {
    /// Adds the counters to a model's statistics under their documented names.
    pub fn insert_into(&self, m: &mut Map<String, Json>) {
        m.insert("reads".into(), json!(self.reads));
        m.insert("writes".into(), json!(self.writes));
        m.insert("flushes".into(), json!(self.flushes));
        m.insert("discards".into(), json!(self.discards));
        m.insert("read_cache_hits".into(), json!(self.read_hits));
        m.insert("write_buffer_waits".into(), json!(self.write_waits));
        m.insert("destages_merged".into(), json!(self.destages_merged));
    }
}
