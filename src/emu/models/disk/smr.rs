//! `smr`: a drive-managed shingled (SMR) disk. The mechanics, buffer and queue are the `hdd`
//! model's; what differs is the translation layer. Writes that are not sequential are appended
//! as a log to a persistent cache region at the outer edge; bands (tens of MB of shingled
//! tracks) holding cached data are later cleaned by read-modify-write: read the band, read its
//! data from the log, rewrite the band. Cleaning runs in the background after an idle time and in
//! the foreground when the cache is full. Sequential writes from a band boundary go in place.

use super::hdd::{self, Disk, Translation};
use super::mechanics::{HddParams, Mechanics};
use super::model::{Expectations, ModelDescriptor, ModelError, PROBE_RANDOM_IO};
use crate::params::{Kind, ParamSpec, Params};
use serde_json::{json, Map, Value as Json};

/// Parameters `smr` adds to those of `hdd`.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "cache",
        Kind::Size,
        "2GiB",
        "persistent cache region absorbing non-sequential writes",
    ),
    ParamSpec::new(
        "band",
        Kind::Size,
        "32MiB",
        "band rewritten as a whole when cleaned",
    ),
    ParamSpec::new(
        "idle",
        Kind::Duration,
        "0.5s",
        "idle time after which background cleaning starts",
    ),
    ParamSpec::new(
        "in_place_min",
        Kind::Size,
        "256KiB",
        "a write starting at a band boundary goes in place (not to the cache) if at least this long, or the whole band",
    ),
];

/// The `smr` model.
pub static MODEL: ModelDescriptor = ModelDescriptor {
    name: "smr",
    summary: "drive-managed shingled disk: hdd mechanics, persistent cache log, band cleaning when full or idle",
    params: &[hdd::PARAMS, PARAMS],
    build: |v| {
        let (p, s) = (HddParams::from_values(v), SmrParams::from_values(v));
        Ok(Box::new(new(&p, &s)?))
    },
    expect: |v, seq_io| {
        expect(
            &HddParams::from_values(v),
            &SmrParams::from_values(v),
            seq_io,
        )
    },
    presets: super::twins::SHINGLED,
    preset_key: "drive",
};

/// Parameters of the shingled translation layer.
#[derive(Debug, Clone, PartialEq)]
pub struct SmrParams {
    pub cache: u64,
    pub band: u64,
    pub idle: f64,
    /// A write from a band boundary at least this long goes in place.
    pub in_place_min: u64,
}

impl SmrParams {
    /// Reads the parameters of [`PARAMS`] from resolved values.
    pub fn from_values(v: &Params) -> Self {
        SmrParams {
            cache: v.u64("cache"),
            band: v.u64("band"),
            idle: v.f64("idle"),
            in_place_min: v.u64("in_place_min"),
        }
    }
}

impl Default for SmrParams {
    fn default() -> Self {
        SmrParams::from_values(&Params::defaults(PARAMS))
    }
}

/// The shingled translation layer: persistent cache log, bands and cleaning.
#[derive(Debug, Clone)]
pub struct Stl {
    capacity: u64,
    cache: u64,
    band: u64,
    idle_ns: u64,
    in_place_min: u64,
    /// Bytes appended to the log per band since the band was last cleaned.
    logged: Vec<u64>,
    /// Bands with logged data in the order they first got some (ring of band indices).
    queue: Vec<u32>,
    q_head: usize,
    q_len: usize,
    log_head: u64,
    occupancy: u64,
    /// In-place run: where it started and the offset that continues it.
    run_start: u64,
    run_next: u64,
    peak_occupancy: u64,
    bands_cleaned: u64,
    bands_cleaned_fg: u64,
    cleaning_ns: u64,
    cleaning_fg_ns: u64,
    /// Band bytes rewritten by cleaning.
    rewritten_bytes: u64,
    /// When the last background cleaning ended: cleaning goes on from there without a new
    /// idle wait while no request came in between.
    cleaning_until: u64,
    cached_bytes: u64,
    in_place_bytes: u64,
}

/// A drive-managed shingled disk.
pub type Smr = Disk<Stl>;

/// An SMR disk with `hdd` drive parameters and shingling parameters.
pub fn new(p: &HddParams, s: &SmrParams) -> Result<Smr, ModelError> {
    Disk::with_translation(p, Stl::new(p.capacity, s)?)
}

impl Stl {
    pub fn new(capacity: u64, p: &SmrParams) -> Result<Self, ModelError> {
        if p.cache == 0 {
            return Err(ModelError::new("cache", "must be greater than 0"));
        }
        if p.band == 0 || p.band > capacity {
            return Err(ModelError::new(
                "band",
                "must be greater than 0 and at most size",
            ));
        }
        if !(p.idle >= 0.0 && p.idle.is_finite()) {
            return Err(ModelError::new("idle", "must be 0 or more"));
        }
        let bands = capacity.div_ceil(p.band);
        if bands > u32::MAX as u64 || bands > 1 << 26 {
            return Err(ModelError::new(
                "band",
                "too small for this size (at most 2^26 bands)",
            ));
        }
        Ok(Stl {
            capacity,
            cache: p.cache,
            band: p.band,
            idle_ns: (p.idle * 1e9) as u64,
            in_place_min: p.in_place_min,
            logged: vec![0; bands as usize],
            queue: vec![0; bands as usize],
            q_head: 0,
            q_len: 0,
            log_head: 0,
            occupancy: 0,
            run_start: u64::MAX,
            run_next: u64::MAX,
            peak_occupancy: 0,
            bands_cleaned: 0,
            bands_cleaned_fg: 0,
            cleaning_ns: 0,
            cleaning_fg_ns: 0,
            rewritten_bytes: 0,
            cleaning_until: u64::MAX,
            cached_bytes: 0,
            in_place_bytes: 0,
        })
    }

    /// Bytes of the persistent cache in use.
    pub fn occupancy(&self) -> u64 {
        self.occupancy
    }

    /// Bands cleaned so far.
    pub fn bands_cleaned(&self) -> u64 {
        self.bands_cleaned
    }

    /// Total cleaning time so far, ns of model time.
    pub fn cleaning_ns(&self) -> u64 {
        self.cleaning_ns
    }

    fn log_append(&mut self, offset: u64, len: u64) {
        let (mut o, end) = (offset, offset + len);
        while o < end {
            let b = (o / self.band) as usize;
            let next = ((b as u64 + 1) * self.band).min(end);
            if self.logged[b] == 0 {
                let slot = (self.q_head + self.q_len) % self.queue.len();
                self.queue[slot] = b as u32;
                self.q_len += 1;
            }
            self.logged[b] += next - o;
            o = next;
        }
        self.occupancy += len;
        self.peak_occupancy = self.peak_occupancy.max(self.occupancy);
        self.cached_bytes += len;
    }

    /// Cleans the oldest dirty band from `t`; returns when done, or None if nothing is cached.
    fn clean_one(&mut self, mech: &mut Mechanics, t: u64) -> Option<u64> {
        while self.q_len > 0 {
            let b = self.queue[self.q_head] as u64;
            self.q_head = (self.q_head + 1) % self.queue.len();
            self.q_len -= 1;
            let logged = std::mem::take(&mut self.logged[b as usize]);
            if logged == 0 {
                continue; // rewritten in place since it was queued
            }
            let home = self.physical(b * self.band);
            let len = self.band.min(self.capacity - b * self.band);
            let log_at = (self.log_head + self.cache - self.occupancy.min(self.cache)) % self.cache;
            let mut e = mech.access(t, home, len);
            e = mech.access(e, log_at, logged.min(self.cache - log_at));
            e = mech.access(e, home, len);
            self.occupancy -= logged;
            self.bands_cleaned += 1;
            self.cleaning_ns += e - t;
            self.rewritten_bytes += len;
            return Some(e);
        }
        None
    }
}

impl Translation for Stl {
    const NAME: &'static str = "smr";

    fn media_bytes(&self) -> u64 {
        self.capacity + self.cache
    }

    fn physical(&self, offset: u64) -> u64 {
        self.cache + offset
    }

    fn read(&mut self, mech: &mut Mechanics, start: u64, offset: u64, len: u64) -> u64 {
        let b = (offset / self.band) as usize;
        let mut t = start;
        if self.logged.get(b).is_some_and(|&l| l > 0) {
            // Part of the band lives in the log: fetch it from there first.
            let log_at =
                (self.log_head + self.cache - self.occupancy.min(self.cache) / 2) % self.cache;
            t = mech.access(t, log_at, len.min(self.cache - log_at));
        }
        mech.access(t, self.physical(offset), len)
    }

    fn write(&mut self, mech: &mut Mechanics, start: u64, offset: u64, len: u64) -> u64 {
        let end = offset + len;
        let aligned = offset % self.band == 0 && len >= self.in_place_min.min(self.band);
        if aligned || offset == self.run_next {
            if aligned && offset != self.run_next {
                self.run_start = offset;
            }
            self.run_next = end;
            self.in_place_bytes += len;
            // Bands the run has now rewritten whole no longer need their logged data.
            let first = self.run_start.div_ceil(self.band).max(offset / self.band);
            for b in first..end / self.band {
                let logged = std::mem::take(&mut self.logged[b as usize]);
                self.occupancy -= logged;
            }
            return mech.access(start, self.physical(offset), len);
        }
        self.run_next = u64::MAX;
        let mut t = start;
        while self.occupancy + len > self.cache {
            match self.clean_one(mech, t) {
                Some(e) => {
                    self.bands_cleaned_fg += 1;
                    self.cleaning_fg_ns += e - t;
                    t = e;
                }
                None => break,
            }
        }
        if self.log_head + len > self.cache {
            self.log_head = 0;
        }
        let e = mech.append(t, self.log_head, len.min(self.cache));
        self.log_head += len.min(self.cache);
        self.log_append(offset, len);
        e
    }

    fn idle(&mut self, mech: &mut Mechanics, since: u64, now: u64) -> u64 {
        // Cleaning that nothing interrupted goes on without a new idle wait.
        let mut t = match since == self.cleaning_until {
            true => since,
            false => since + self.idle_ns,
        };
        let mut cleaned = false;
        while t < now {
            match self.clean_one(mech, t) {
                Some(e) => {
                    t = e;
                    cleaned = true;
                }
                None => break,
            }
        }
        if cleaned {
            self.cleaning_until = t;
            t
        } else {
            since
        }
    }

    fn pending(&self) -> bool {
        self.occupancy > 0
    }

    fn worked_ns(&self) -> u64 {
        self.cleaning_ns - self.cleaning_fg_ns
    }

    fn stats(&self, out: &mut Map<String, Json>) {
        out.insert("cache_bytes".into(), json!(self.cache));
        out.insert("cache_occupancy_bytes".into(), json!(self.occupancy));
        out.insert(
            "cache_peak_occupancy_bytes".into(),
            json!(self.peak_occupancy),
        );
        out.insert(
            "dirty_bands".into(),
            json!(self.logged.iter().filter(|&&l| l > 0).count()),
        );
        out.insert("bands_cleaned".into(), json!(self.bands_cleaned));
        out.insert(
            "bands_cleaned_foreground".into(),
            json!(self.bands_cleaned_fg),
        );
        out.insert("cleaning_s".into(), json!(self.cleaning_ns as f64 * 1e-9));
        out.insert(
            "cleaning_foreground_s".into(),
            json!(self.cleaning_fg_ns as f64 * 1e-9),
        );
        out.insert(
            "cleaning_rewritten_bytes".into(),
            json!(self.rewritten_bytes),
        );
        out.insert("cached_write_bytes".into(), json!(self.cached_bytes));
        out.insert("in_place_write_bytes".into(), json!(self.in_place_bytes));
    }
}

/// The probe's expectations for an `smr` disk with an empty persistent cache: reads and
/// sequential writes as on the `hdd` mechanics (the logical space sits behind the cache region,
/// so seeks span a fraction of the stroke); random 4 KiB writes land in the cache log, which the
/// drive writes sequentially, so they run at the host rate (or the log's media rate) until the
/// cache fills. A log append starts at whatever sector passes under the head.
pub fn expect(p: &HddParams, s: &SmrParams, seq_io: u64) -> Result<Expectations, ModelError> {
    let stl = Stl::new(p.capacity, s)?;
    let mech = Mechanics::new(p, stl.media_bytes())?;
    let mut e = hdd::expect_on(&mech, p, s.cache, p.capacity, seq_io);
    let io = PROBE_RANDOM_IO as f64;
    let host = p.overhead + io / p.iface_rate;
    let log = io * mech.mean_ns_per_byte(0, s.cache) * 1e-9;
    e.random_write_iops = if p.write_back {
        1.0 / host.max(log)
    } else {
        1.0 / (p.overhead + log)
    };
    Ok(e)
}

#[cfg(test)]
#[path = "smr_tests.rs"]
mod tests;
