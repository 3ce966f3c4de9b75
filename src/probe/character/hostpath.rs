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
//! - a disk's buffer hits, each the re-read of what a read just fetched, on a disk whose
//!   overhead and interface rate are set: what a disk's overhead and interface rate are net
//!   of. The reads it re-reads are at random places over the whole reference, as the drive's
//!   are, so each hit follows as long a wait on the media: the path of a request is 20-30 µs
//!   longer after a 9-13 ms wait than after a 1.5 ms one (measured with fio on two served
//!   disks, bench/README.md), and references read 3 MiB apart made drawn disks' overheads
//!   that much too long.
//!
//! Served by the emulator, the twin then answers as the device did on this host.

use super::stats::{median, Draw};
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
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HostPaths {
    /// A card's reads back to back.
    pub flash: HostPath,
    /// A disk's buffer hits, each after a read from the media.
    pub disk: HostPath,
}

impl HostPaths {
    /// None: for a model characterized on its own timeline.
    pub const NONE: HostPaths = HostPaths {
        flash: HostPath::NONE,
        disk: HostPath::NONE,
    };

    /// The same path for both.
    pub fn both(path: HostPath) -> HostPaths {
        HostPaths {
            flash: path,
            disk: path,
        }
    }
}

const K4: u64 = 4096;
const BIG: u64 = 256 << 10;

/// The reference card, and its modeled read time (access; the transfer counts for less than a
/// nanosecond per KiB).
const FLASH_REFERENCE: &str = "emu:flash,size=1GiB,access=0.5ms,read_rate=100000";
const FLASH_ACCESS: f64 = 0.5e-3;

/// The reference disk, and the modeled time of a buffer hit of `len` bytes: its overhead and
/// the transfer at its interface rate.
pub const DISK_REFERENCE: &str = "emu:hdd,size=4GiB,overhead=0.1ms,iface_rate=550";
const DISK_OVERHEAD: f64 = 0.1e-3;
const DISK_IFACE: f64 = 550e6;
fn disk_hit(len: u64) -> f64 {
    DISK_OVERHEAD + len as f64 / DISK_IFACE
}

/// The reference disk's size (its spec's), for its places.
const DISK_SIZE: u64 = 4 << 30;

/// The reference disk's script: `n` (at most 256) times a 4 KiB read and its re-read, then a
/// 256 KiB read and its re-read, each group at a random place over the whole disk, as the
/// drive's own hits are taken, so each re-read follows a seek and a rotation as the drive's
/// do. The places are distinct 16 MiB slots, so no first read is a hit on an earlier group's
/// read-ahead (2 MiB).
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

/// The paths of the 4 KiB and 256 KiB re-reads of [`disk_script`]'s timings, seconds: each
/// re-read's time less its modeled buffer hit, medians.
pub fn disk_paths(t: &[Timed]) -> (f64, f64) {
    let small: Vec<f64> = t.iter().skip(1).step_by(4).map(|t| t.latency).collect();
    let large: Vec<f64> = t.iter().skip(3).step_by(4).map(|t| t.latency).collect();
    (
        median(&small) - disk_hit(K4),
        median(&large) - disk_hit(BIG),
    )
}

/// Times the reference devices served by the emulator, less their modeled time, in the time
/// of a device served at `scale`: the card's 4 KiB and 256 KiB reads (200 each, medians), the
/// disk's 4 KiB and 256 KiB buffer hits after a read (100 each).
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
    let (d_small, d_large) = on_reference(ledger, stop, DISK_REFERENCE, |run| {
        Ok(disk_paths(&run.run(&disk_script(100))?))
    })?;
    let paths = HostPaths {
        flash: HostPath::from_two(f_small, f_large, BIG, scale),
        disk: HostPath::from_two(d_small, d_large, BIG, scale),
    };
    let per_mib = |p: &HostPath| p.per_byte / scale * (1 << 20) as f64 * 1e6;
    say(&format!(
        "the emulator's own path on this host: {:.1} µs per request and {:.0} µs per MiB for a card's reads back to back, {:.1} µs and {:.0} µs per MiB for a disk's buffer hits after a read (devices whose modeled times are known)",
        f_small * 1e6,
        per_mib(&paths.flash),
        d_small * 1e6,
        per_mib(&paths.disk)
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

    /// On the reference disk's own timeline, where nothing lies between the reads, every
    /// re-read is the buffer hit the module takes it for: no path at all.
    #[test]
    fn the_reference_disks_re_reads_are_its_modeled_buffer_hits() {
        static NEVER: AtomicBool = AtomicBool::new(false);
        let model = crate::emu::ModelSpec::parse(DISK_REFERENCE.trim_start_matches("emu:"))
            .and_then(|s| s.build())
            .unwrap();
        let mut run = Runner::on_model(model, &NEVER);
        let t = run.run(&disk_script(100)).unwrap();
        assert!(DISK_REFERENCE.contains(&format!("overhead={}ms", DISK_OVERHEAD * 1e3)));
        assert!(DISK_REFERENCE.contains(&format!("iface_rate={}", DISK_IFACE / 1e6)));
        assert!(DISK_REFERENCE.contains(&format!("size={}GiB", DISK_SIZE >> 30)));
        let (small, large) = disk_paths(&t);
        assert!(small.abs() < 1e-7 && large.abs() < 1e-7, "{small} {large}");
        // And the first read of each group is not a hit: it waits for a seek and a rotation,
        // as a drive's first reads at random places do (median well over a short seek's).
        assert!(t.iter().step_by(4).all(|t| t.latency > 1e-3));
        let first: Vec<f64> = t.iter().step_by(4).map(|t| t.latency).collect();
        assert!(median(&first) > 8e-3, "{}", median(&first));
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
