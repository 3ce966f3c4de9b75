//! fio's zone modes on a job's files. `zonemode=strided`: `zonesize` bytes are done in each
//! zone of `zonerange` bytes, then `zoneskip` bytes are skipped (a logical offset over the zones'
//! transfers mapped onto the file). `zonemode=zbd` on a file or device that is not a zoned
//! block device, as fio emulates zones there: zones of `zonesize` start empty, each with a write
//! pointer; a write goes at its zone's write pointer (sequential jobs fill zone after zone,
//! random ones a random zone among at most `max_open_zones` open ones), a read goes below the
//! pointer (`read_beyond_wp=0`), a trim resets the zone; when no zone has room a full one is
//! reset (a trim of it), and `zone_reset_threshold` with `zone_reset_frequency` resets full
//! zones once that share of the zones' capacity is written. Jobs writing one file share its
//! zones' pointers.

use crate::engine::rng::SplitMix64;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The strided mapping: logical offset to file offset.
#[derive(Debug, Clone, Copy)]
pub struct Strided {
    pub size: u64,
    pub period: u64,
}

impl Strided {
    /// The logical length of a region of `len` bytes: `size` bytes of each whole or partial
    /// zone.
    pub fn logical_len(&self, len: u64) -> u64 {
        let zones = len / self.period;
        let tail = (len % self.period).min(self.size);
        zones * self.size + tail
    }

    /// Where logical offset `x` lies in the file (relative to the region).
    pub fn map(&self, x: u64) -> u64 {
        (x / self.size) * self.period + x % self.size
    }
}

/// The zones of one file: their size and write pointers (bytes written in each).
#[derive(Debug)]
pub struct Zones {
    pub size: u64,
    pub wp: Vec<AtomicU64>,
    pub resets: AtomicU64,
}

impl Zones {
    fn new(size: u64, count: u64) -> Zones {
        Zones {
            size,
            wp: (0..count).map(|_| AtomicU64::new(0)).collect(),
            resets: AtomicU64::new(0),
        }
    }

    /// Claims `len` bytes at zone `z`'s write pointer: their offset in the region, or `None`
    /// when the zone has no room for them.
    pub fn claim(&self, z: usize, len: u64) -> Option<u64> {
        let wp = &self.wp[z];
        let mut cur = wp.load(Ordering::Relaxed);
        loop {
            if cur + len > self.size {
                return None;
            }
            match wp.compare_exchange_weak(cur, cur + len, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => return Some(z as u64 * self.size + cur),
                Err(now) => cur = now,
            }
        }
    }

    /// Resets zone `z` (its write pointer back to its start).
    pub fn reset(&self, z: usize) {
        self.wp[z].store(0, Ordering::Release);
        self.resets.fetch_add(1, Ordering::Relaxed);
    }

    pub fn written(&self, z: usize) -> u64 {
        self.wp[z].load(Ordering::Acquire)
    }

    pub fn is_full(&self, z: usize) -> bool {
        self.written(z) >= self.size
    }

    /// Bytes written in every zone over their capacity.
    pub fn fill_ratio(&self) -> f64 {
        let w: u64 = (0..self.wp.len()).map(|z| self.written(z)).sum();
        w as f64 / (self.size * self.wp.len() as u64).max(1) as f64
    }
}

/// The zones of every file of a plan, made once per file and shared by the jobs using it.
#[derive(Debug, Default)]
pub struct Registry(Mutex<Vec<(PathBuf, Arc<Zones>)>>);

impl Registry {
    /// The zones of `path` (`count` of `size` bytes), made the first time they are asked for.
    pub fn of(&self, path: &std::path::Path, size: u64, count: u64) -> Arc<Zones> {
        let mut v = self.0.lock().expect("zone registry");
        if let Some((_, z)) = v.iter().find(|(p, _)| p == path) {
            return z.clone();
        }
        let z = Arc::new(Zones::new(size, count));
        v.push((path.to_path_buf(), z.clone()));
        z
    }
}

/// One clone's way through a file's zones.
#[derive(Debug, Clone)]
pub struct ZoneCursor {
    pub zones: Arc<Zones>,
    /// The zone a sequential job writes or reads, and where its read stands in it.
    current: usize,
    read_pos: u64,
    /// The zones it keeps open (random writes), at most `max_open` (0: no limit).
    open: Vec<usize>,
    max_open: usize,
}

/// What a zoned I/O turned out to need.
pub enum ZoneIo {
    /// The I/O at this offset (in the region).
    At(u64),
    /// First a reset (a trim) of the zone at this offset, then ask again.
    ResetFirst(u64),
    /// No zone has room or data for it in this pass.
    None,
}

impl ZoneCursor {
    pub fn new(zones: Arc<Zones>, max_open: u64) -> ZoneCursor {
        ZoneCursor {
            zones,
            current: 0,
            read_pos: 0,
            open: Vec::new(),
            max_open: max_open as usize,
        }
    }

    pub fn reset_pass(&mut self) {
        self.current = 0;
        self.read_pos = 0;
        self.open.clear();
    }

    /// A write of `len` bytes; `again` makes room by resetting a full zone when none has any
    /// (time-based jobs, or zones being reclaimed).
    pub fn write(&mut self, len: u64, random: bool, again: bool, r: &mut SplitMix64) -> ZoneIo {
        let n = self.zones.wp.len();
        if n == 0 || len > self.zones.size {
            return ZoneIo::None;
        }
        if !random {
            while self.current < n {
                if let Some(off) = self.zones.claim(self.current, len) {
                    return ZoneIo::At(off);
                }
                self.current += 1;
            }
            if again {
                self.current = 0;
                return ZoneIo::ResetFirst(0);
            }
            return ZoneIo::None;
        }
        for _ in 0..4 * n {
            let z = if self.max_open > 0 && self.open.len() >= self.max_open {
                self.open[r.below(self.open.len() as u64) as usize]
            } else {
                r.below(n as u64) as usize
            };
            if let Some(off) = self.zones.claim(z, len) {
                if !self.open.contains(&z) {
                    self.open.push(z);
                }
                return ZoneIo::At(off);
            }
            self.open.retain(|&o| o != z);
        }
        if again {
            let z = r.below(n as u64) as usize;
            self.open.retain(|&o| o != z);
            return ZoneIo::ResetFirst(z as u64 * self.zones.size);
        }
        ZoneIo::None
    }

    /// A read of `len` bytes below a write pointer (`read_beyond_wp=0`).
    pub fn read(&mut self, len: u64, random: bool, r: &mut SplitMix64) -> ZoneIo {
        let n = self.zones.wp.len();
        if random {
            for _ in 0..4 * n.max(1) {
                let z = r.below(n.max(1) as u64) as usize;
                let w = self.zones.written(z);
                if w >= len {
                    let blocks = w / len;
                    return ZoneIo::At(z as u64 * self.zones.size + r.below(blocks) * len);
                }
            }
            return ZoneIo::None;
        }
        while self.current < n {
            if self.read_pos + len <= self.zones.written(self.current) {
                let off = self.current as u64 * self.zones.size + self.read_pos;
                self.read_pos += len;
                return ZoneIo::At(off);
            }
            self.current += 1;
            self.read_pos = 0;
        }
        ZoneIo::None
    }

    /// A zone to reset (a trim): the next full one, or a random zone.
    pub fn trim(&mut self, random: bool, r: &mut SplitMix64) -> ZoneIo {
        let n = self.zones.wp.len();
        if n == 0 {
            return ZoneIo::None;
        }
        let z = if random {
            r.below(n as u64) as usize
        } else {
            let z = self.current % n;
            self.current += 1;
            z
        };
        self.zones.reset(z);
        ZoneIo::At(z as u64 * self.zones.size)
    }

    /// With `threshold` and `frequency` (fio's `zone_reset_*`): a full zone to reset now, if
    /// the zones are that full and the draw says so.
    pub fn reclaim(&mut self, threshold: f64, frequency: f64, r: &mut SplitMix64) -> Option<u64> {
        if threshold <= 0.0 || self.zones.fill_ratio() < threshold {
            return None;
        }
        if (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64 >= frequency {
            return None;
        }
        let n = self.zones.wp.len();
        let start = r.below(n as u64) as usize;
        let z = (0..n)
            .map(|k| (start + k) % n)
            .find(|&z| self.zones.is_full(z))?;
        self.zones.reset(z);
        self.open.retain(|&o| o != z);
        Some(z as u64 * self.zones.size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_zones_skip_between_transfers() {
        let s = Strided {
            size: 256,
            period: 256 + 2048,
        };
        assert_eq!(s.map(0), 0);
        assert_eq!(s.map(255), 255);
        assert_eq!(s.map(256), 2304);
        assert_eq!(s.logical_len(2 * 2304 + 100), 512 + 100);
    }

    #[test]
    fn writes_go_at_write_pointers_and_reads_below_them() {
        let reg = Registry::default();
        let z = reg.of(std::path::Path::new("/f"), 64 << 10, 4);
        let mut c = ZoneCursor::new(z.clone(), 2);
        let mut r = SplitMix64::new(1);
        let mut offs = Vec::new();
        for _ in 0..16 {
            match c.write(4096, false, false, &mut r) {
                ZoneIo::At(o) => offs.push(o),
                _ => panic!("room left"),
            }
        }
        assert_eq!(
            offs,
            (0..16).map(|k| k * 4096).collect::<Vec<_>>(),
            "zone 0 filled in order"
        );
        assert!(z.is_full(0));
        // Random writes keep at most two zones open.
        let mut zones = std::collections::BTreeSet::new();
        for _ in 0..8 {
            if let ZoneIo::At(o) = c.write(4096, true, false, &mut r) {
                zones.insert(o / (64 << 10));
            }
        }
        assert!(zones.len() <= 2 && !zones.contains(&0), "{zones:?}");
        // A read never goes past what is written.
        let mut rc = ZoneCursor::new(reg.of(std::path::Path::new("/f"), 64 << 10, 4), 0);
        let mut n = 0;
        while let ZoneIo::At(o) = rc.read(4096, false, &mut r) {
            let zone = (o / (64 << 10)) as usize;
            assert!(o % (64 << 10) + 4096 <= z.written(zone));
            n += 1;
        }
        assert_eq!(n, 16 + 8);
        // When every zone is full, a time-based job resets one first.
        let mut w = ZoneCursor::new(z.clone(), 0);
        while let ZoneIo::At(_) = w.write(4096, false, false, &mut r) {}
        assert!(matches!(
            w.write(4096, false, true, &mut r),
            ZoneIo::ResetFirst(0)
        ));
    }
}
