//! The emulator's own cost per request on this host: a twin runs on the emulator, which adds
//! its own path (the loop device, FUSE, the server) to every request on top of the modeled
//! time. What characterize measures already holds the path to the device it times, so the
//! twin's fixed costs (a disk's command overhead, a card's access time) and its transfer
//! rates over the interface are taken net of the emulator's path, measured here on reference
//! devices whose modeled times are known exactly, served beside it, each timed the way
//! characterize times what it is net of:
//!
//! - a card's reads back to back, on a flash card with a 0.5 ms access and a transfer too
//!   fast to count: what a card's access and read rate are net of;
//! - a disk's buffer hits, each the re-read of what a read just fetched, on disks whose
//!   overhead and interface rate are set: what a disk's overhead and interface rate are net
//!   of. A hit's path is longer the longer the host waited for the read before it (20-30 µs
//!   more after 9-13 ms than after 1.5 ms, measured with fio on two served disks,
//!   bench/README.md), so the reads are at random places as the drive's are, on three
//!   reference disks whose reads take from 6 to 21 ms, and a drive's hits are taken net of
//!   the path at the drive's own wait.
//!
//! Served by the emulator, the twin then answers as the device did on this host. This is the
//! first estimate: [`super::matched`] then times a disk twin's buffer hits and the device's in
//! turn and moves the twin's overhead and interface rate by what is left, and
//! [`super::matched_card`] a card twin's reads and the card's, its access and read rate.

use super::stats::{linear_at, median, Draw};
use super::{CharError, Progress};
use crate::probe::script::{Runner, Step, Timed};
use crate::probe::{probe_built, released_after};
use crate::stack::ledger::Ledger;
use crate::stack::provision::BuildOptions;
use crate::stack::DeviceSpec;
use std::sync::atomic::AtomicBool;

/// A request's cost on the emulator's own path, in the device's time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HostPath {
    /// Seconds per request.
    pub fixed: f64,
    /// Seconds per byte transferred.
    pub per_byte: f64,
}

impl HostPath {
    /// None: for a model characterized on its own timeline.
    pub const NONE: HostPath = HostPath {
        fixed: 0.0,
        per_byte: 0.0,
    };

    /// The path of a request of `len` bytes, seconds.
    pub fn at(&self, len: u64) -> f64 {
        self.fixed + self.per_byte * len as f64
    }

    /// From the paths of 4 KiB and `big`-byte requests (seconds of wall time), in the time of
    /// a device served at `scale`.
    fn from_two(small: f64, large: f64, big: u64, scale: f64) -> HostPath {
        let per_byte = ((large - small) / (big - K4) as f64).max(0.0);
        HostPath {
            fixed: (small - per_byte * K4 as f64).max(0.0) * scale,
            per_byte: per_byte * scale,
        }
    }
}

/// The emulator's path for each kind of twin.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostPaths {
    /// A card's reads back to back.
    pub flash: HostPath,
    /// A disk's buffer hits, each after a read from the media, by how long the host waited.
    pub disk: DiskPath,
}

impl HostPaths {
    /// None: for a model characterized on its own timeline.
    pub const NONE: HostPaths = HostPaths {
        flash: HostPath::NONE,
        disk: DiskPath::NONE,
    };

    /// The same path for both, whatever the wait.
    pub fn both(path: HostPath) -> HostPaths {
        HostPaths {
            flash: path,
            disk: DiskPath {
                points: vec![WaitPath {
                    small_wait: 0.0,
                    small: path.at(K4),
                    large_wait: 0.0,
                    large: path.at(BIG),
                }],
                scale: 1.0,
            },
        }
    }
}

/// A disk's buffer hit's path as a function of how long the host waited before it: a hit
/// after a long read from the media takes longer through the kernel and the emulator than
/// one after a short read (20-30 µs more after 9-13 ms than after 1.5 ms, bench/README.md),
/// so a drive's hits are taken net of the path at the drive's own wait.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiskPath {
    /// The points measured (none: no path at all).
    pub points: Vec<WaitPath>,
    /// The scale of the device the path is given for.
    scale: f64,
}

/// One point of a [`DiskPath`], seconds of wall time: the path of a 4 KiB hit and of a
/// 256 KiB hit, each with its wait (from the issue of the read before the hit to the hit's
/// own issue).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WaitPath {
    pub small_wait: f64,
    pub small: f64,
    pub large_wait: f64,
    pub large: f64,
}

impl DiskPath {
    /// None: for a model characterized on its own timeline.
    pub const NONE: DiskPath = DiskPath {
        points: Vec::new(),
        scale: 1.0,
    };

    /// The path of the device's hits whose 4 KiB ones followed a wait of `small_wait` and
    /// 256 KiB ones `large_wait` (seconds of the device's time), in the device's time:
    /// interpolated between the points, and held at the nearest beyond them.
    pub fn at(&self, small_wait: f64, large_wait: f64) -> HostPath {
        if self.points.is_empty() {
            return HostPath::NONE;
        }
        let small = interpolate(&self.points, small_wait / self.scale, |p| {
            (p.small_wait, p.small)
        });
        let large = interpolate(&self.points, large_wait / self.scale, |p| {
            (p.large_wait, p.large)
        });
        HostPath::from_two(small, large, BIG, self.scale)
    }
}

/// The path at `wait`, from each point's (wait, path) as `xy` gives it: linear between the
/// two points either side, the nearest point's beyond them.
fn interpolate(points: &[WaitPath], wait: f64, xy: impl Fn(&WaitPath) -> (f64, f64)) -> f64 {
    let mut pts: Vec<(f64, f64)> = points.iter().map(xy).collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    linear_at(&pts, wait)
}

const K4: u64 = 4096;
const BIG: u64 = 256 << 10;

/// The reference card, and its modeled read time (access; the transfer counts for less than a
/// nanosecond per KiB).
const FLASH_REFERENCE: &str = "emu:flash,size=1GiB,access=0.5ms,read_rate=100000";
const FLASH_ACCESS: f64 = 0.5e-3;

/// The reference disks, fast, common and slow: their reads at random places take about 6, 13
/// and 21 ms, the waits before the hits of drives from 15,000 rpm to slow 4,200 rpm ones. All
/// model a buffer hit of `len` bytes alike: the overhead and the transfer at the interface
/// rate.
pub const DISK_REFERENCES: [&str; 3] = [
    "emu:hdd,size=4GiB,overhead=0.1ms,iface_rate=550,rpm=15000,track_to_track=0.2ms,avg_seek=3.5ms,full_stroke=7ms",
    "emu:hdd,size=4GiB,overhead=0.1ms,iface_rate=550",
    "emu:hdd,size=4GiB,overhead=0.1ms,iface_rate=550,rpm=4200,track_to_track=1.5ms,avg_seek=14ms,full_stroke=28ms",
];
const DISK_OVERHEAD: f64 = 0.1e-3;
const DISK_IFACE: f64 = 550e6;
fn disk_hit(len: u64) -> f64 {
    DISK_OVERHEAD + len as f64 / DISK_IFACE
}

/// The reference disk's size (its spec's), for its places.
const DISK_SIZE: u64 = 4 << 30;

/// A reference disk's script: `n` (at most 256) times a 4 KiB read and its re-read, then a
/// 256 KiB read and its re-read, each group at a random place over the whole disk, as the
/// drive's own hits are taken, so each re-read follows a seek and a rotation as the drive's
/// do. The places are distinct 16 MiB slots, so no first read is a hit on an earlier group's
/// read-ahead (2 MiB). The wait before a hit must be a read the host waits for: an idle time
/// in the script instead made the hit's path 50-60 µs longer than after a read about as long
/// (bench/README.md).
pub fn disk_script(n: u64) -> Vec<Step> {
    let slot = 16 << 20;
    let mut draw = Draw::new(0x4855_5453);
    let mut used = std::collections::BTreeSet::new();
    (0..n.min(DISK_SIZE / slot))
        .flat_map(|_| {
            let mut x = draw.aligned(0, DISK_SIZE, slot);
            while !used.insert(x) {
                x = draw.aligned(0, DISK_SIZE, slot);
            }
            [
                Step::read(x, K4),
                Step::read(x, K4),
                Step::read(x + BIG, BIG),
                Step::read(x + BIG, BIG),
            ]
        })
        .collect()
}

/// The point of [`disk_script`]'s timings: the median wait before each kind of re-read and the
/// median of its time less its modeled buffer hit, seconds.
pub fn disk_paths(t: &[Timed]) -> WaitPath {
    let groups: Vec<&[Timed]> = t.chunks(4).collect();
    let of = |f: &dyn Fn(&[Timed]) -> f64| median(&groups.iter().map(|x| f(x)).collect::<Vec<_>>());
    WaitPath {
        small_wait: of(&|x| x[1].issue - x[0].issue),
        small: of(&|x| x[1].latency) - disk_hit(K4),
        large_wait: of(&|x| x[3].issue - x[2].issue),
        large: of(&|x| x[3].latency) - disk_hit(BIG),
    }
}

/// Groups of each reference disk's script.
const GROUPS: u64 = 60;

/// Times the reference devices served by the emulator, less their modeled time, in the time
/// of a device served at `scale`: the card's 4 KiB and 256 KiB reads (200 each, medians), the
/// disks' 4 KiB and 256 KiB buffer hits after a read, on each of the three (60 each).
pub fn measure(
    ledger: &mut Ledger,
    stop: &AtomicBool,
    scale: f64,
    say: &mut Progress,
) -> Result<HostPaths, CharError> {
    let (f_small, f_large) = on_reference(ledger, stop, FLASH_REFERENCE, |run| {
        let mut steps = Vec::new();
        for i in 0..200u64 {
            steps.push(Step::read(i * (1 << 20), K4));
            steps.push(Step::read(i * (1 << 20) + BIG, BIG));
        }
        let t = run.run(&steps)?;
        let small: Vec<f64> = t.iter().step_by(2).map(|t| t.latency).collect();
        let large: Vec<f64> = t.iter().skip(1).step_by(2).map(|t| t.latency).collect();
        let model = |len: u64| FLASH_ACCESS + len as f64 / 100e9;
        Ok((median(&small) - model(K4), median(&large) - model(BIG)))
    })?;
    let mut points = Vec::new();
    for spec in DISK_REFERENCES {
        points.push(on_reference(ledger, stop, spec, |run| {
            Ok(disk_paths(&run.run(&disk_script(GROUPS))?))
        })?);
    }
    let paths = HostPaths {
        flash: HostPath::from_two(f_small, f_large, BIG, scale),
        disk: DiskPath { points, scale },
    };
    let per_mib = |p: &HostPath| p.per_byte / scale * (1 << 20) as f64 * 1e6;
    let by_wait = paths
        .disk
        .points
        .iter()
        .map(|p| format!("{:.1} µs after {:.1} ms", p.small * 1e6, p.small_wait * 1e3))
        .collect::<Vec<_>>()
        .join(", ");
    say(&format!(
        "the emulator's own path on this host: {:.1} µs per request and {:.0} µs per MiB for a card's reads back to back; for a disk's 4 KiB buffer hits after a read, by the wait before them, {by_wait} (devices whose modeled times are known)",
        f_small * 1e6,
        per_mib(&paths.flash),
    ));
    Ok(paths)
}

/// Runs `f` on the reference device `spec`, built for it and released after.
fn on_reference<T>(
    ledger: &mut Ledger,
    stop: &AtomicBool,
    spec: &str,
    f: impl FnOnce(&mut Runner) -> Result<T, crate::probe::script::ScriptError>,
) -> Result<T, CharError> {
    let reference = DeviceSpec::parse(spec).map_err(crate::stack::StackError::from)?;
    let (t, _) = released_after(ledger, |l| {
        probe_built(&reference, &BuildOptions::default(), l, stop, |dev, _| {
            let mut run = Runner::new(dev, 1.0, false, stop);
            Ok(f(&mut run)?)
        })
    })?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On the reference disks' own timelines, where nothing lies between the reads, every
    /// re-read is the buffer hit the module takes it for: no path at any wait. Their waits
    /// span a fast drive's to a slow one's.
    #[test]
    fn the_reference_disks_re_reads_are_their_modeled_buffer_hits() {
        static NEVER: AtomicBool = AtomicBool::new(false);
        let mut waits = Vec::new();
        for spec in DISK_REFERENCES {
            let model = crate::emu::ModelSpec::parse(spec.trim_start_matches("emu:"))
                .and_then(|s| s.build())
                .unwrap();
            let mut run = Runner::on_model(model, &NEVER);
            let t = run.run(&disk_script(GROUPS)).unwrap();
            assert!(spec.contains(&format!("overhead={}ms", DISK_OVERHEAD * 1e3)));
            assert!(spec.contains(&format!("iface_rate={}", DISK_IFACE / 1e6)));
            assert!(spec.contains(&format!("size={}GiB", DISK_SIZE >> 30)));
            let p = disk_paths(&t);
            assert!(
                p.small.abs() < 1e-7 && p.large.abs() < 1e-7,
                "{spec}: {p:?}"
            );
            // The first read of each group is not a hit: it waits for a seek and a rotation.
            assert!(t.iter().step_by(4).all(|t| t.latency > 1e-3), "{spec}");
            waits.push(p.small_wait);
        }
        assert!(waits[0] < 8e-3 && waits[2] > 18e-3, "{waits:?}");
        assert!(waits.windows(2).all(|w| w[1] > w[0] + 3e-3), "{waits:?}");
    }

    /// The path at a wait: between two points, on the line between them; beyond them, the
    /// nearest; and in the device's time.
    #[test]
    fn a_hits_path_follows_the_wait_before_it() {
        let point = |w: f64, small: f64, large: f64| WaitPath {
            small_wait: w,
            small,
            large_wait: w + 1e-3,
            large,
        };
        let path = DiskPath {
            points: vec![point(10e-3, 80e-6, 180e-6), point(30e-3, 100e-6, 200e-6)],
            scale: 2.0,
        };
        let bytes = (BIG - K4) as f64;
        // Waits of 20 and 21 ms of wall time, given in the device's time (scale 2).
        let mid = path.at(40e-3, 42e-3);
        assert!(
            (mid.per_byte - 2.0 * 100e-6 / bytes).abs() < 1e-15,
            "{mid:?}"
        );
        assert!((mid.at(K4) - 2.0 * 90e-6).abs() < 1e-12, "{mid:?}");
        let short = path.at(0.0, 0.0);
        assert!((short.at(K4) - 2.0 * 80e-6).abs() < 1e-12, "{short:?}");
        let long = path.at(1.0, 1.0);
        assert!((long.at(K4) - 2.0 * 100e-6).abs() < 1e-12, "{long:?}");
        // Without points, the one path given whatever the wait.
        let flat = HostPaths::both(HostPath {
            fixed: 5e-6,
            per_byte: 0.0,
        });
        assert_eq!(flat.disk.at(1e-3, 1.0).fixed, 5e-6);
    }

    #[test]
    fn two_sizes_give_a_fixed_cost_and_one_per_byte() {
        let p = HostPath::from_two(70e-6, 70e-6 + 252.0 * 1024.0 * 1e-10, BIG, 2.0);
        assert!((p.per_byte - 2e-10).abs() < 1e-15, "{p:?}");
        assert!(
            (p.fixed - 2.0 * (70e-6 - 4096.0 * 1e-10)).abs() < 1e-12,
            "{p:?}"
        );
        assert_eq!(HostPath::from_two(70e-6, 60e-6, BIG, 1.0).per_byte, 0.0);
    }
}
