//! DIXtrac-style probes of a disk, each a script of reads (and, when writes are allowed,
//! writes and flushes) timed through the engine:
//! - the buffer ([`buffer`]): its hit time, the interface rate and the command overhead from
//!   re-reads; read-ahead from strided re-reads after idle; the segments from scattered reads
//!   re-read in turn; a segment's size from sequential runs re-read from their start;
//! - the media ([`media`]): zone rates from sequential reads at about 100 offsets; the
//!   rotation from the latency sawtooth of reads at growing distances past a just-read sector;
//!   the seek curve from distance against time, less the rotation and the overhead;
//! - the write-back buffer ([`writes`]): commands, then bytes ([`write_buffer`]: 1 MiB, then
//!   finer), from bursts until writes wait; whether flushes are honoured from a flush's time
//!   with data buffered;
//! - the queue ([`queue`]): its order from QD1 against deeper random reads, the aging limit
//!   from the worst wait, its depth from the commands it takes while a read is outstanding.
//!
//! Every yes-or-no question (is this read answered from the buffer?) is asked of several
//! places and decided by their majority, and every rate and time is a median or a robust
//! slope, so a host that delays a few I/Os does not change an answer.

pub mod buffer;
pub mod media;
pub mod queue;
pub mod write_buffer;
pub mod writes;

use super::hostpath::DiskPath;
use super::stats::mean;
use super::twin::Twin;
use super::{CharError, Progress};
use crate::probe::script::Runner;

pub(crate) const K4: u64 = 4096;
pub(crate) const MIB: u64 = 1 << 20;

/// What the disk probes found, in base units (bytes, seconds, bytes per second).
#[derive(Debug, Clone, Default)]
pub struct Disk {
    pub cap: u64,
    /// A 4 KiB read from the buffer.
    pub hit4: f64,
    pub iface: f64,
    pub overhead: f64,
    pub readahead: u64,
    /// Read-buffer segments (0: not identified).
    pub segments: u64,
    /// Media rate at offsets across the device.
    pub rates: Vec<(u64, f64)>,
    pub rev: f64,
    /// Mean QD1 random 4 KiB read.
    pub random_read: f64,
    pub avg_seek: f64,
    pub full_stroke: f64,
    /// Mean seek from one end of the stroke to a uniformly random place (an SMR disk's
    /// cleaning goes between its cache at the edge and a band anywhere).
    pub edge_seek: f64,
    /// Mean access time of a scattered write's destage (seek, rotation, overhead).
    pub access: f64,
    /// The emulator's own path, which the twin's overhead and interface rate are net of.
    pub host: DiskPath,
}

impl Disk {
    /// Media rate at `offset` (the nearest measured).
    pub fn rate_at(&self, offset: u64) -> f64 {
        self.rates
            .iter()
            .min_by_key(|(o, _)| o.abs_diff(offset))
            .map(|r| r.1)
            .unwrap_or(100e6)
    }

    pub(crate) fn mean_rate(&self) -> f64 {
        mean(&self.rates.iter().map(|r| r.1).collect::<Vec<_>>())
    }

    /// Whether a 4 KiB read of latency `l` was answered from the buffer: within twice a
    /// buffer hit and 0.3 ms (a read from the platter waits for a seek or for its sector).
    pub fn is_hit(&self, l: f64) -> bool {
        l < 2.0 * self.hit4 + 0.3e-3
    }
}

/// Decides a yes-or-no question from tries at different places, robust to a host that delays
/// some of them: `tries(run, n)` runs `n` tries and gives each one's answer; five first, four
/// more when they split 3 to 2; the majority of all decides.
pub fn majority(
    run: &mut Runner,
    mut tries: impl FnMut(&mut Runner, usize) -> Result<Vec<bool>, CharError>,
) -> Result<bool, CharError> {
    let mut v = tries(run, 5)?;
    let yes = v.iter().filter(|&&b| b).count();
    if yes == 2 || yes == 3 {
        v.extend(tries(run, 4)?);
    }
    Ok(v.iter().filter(|&&b| b).count() * 2 > v.len())
}

/// The read probes: every parameter of the mechanics and the read buffer.
pub fn reads(
    run: &mut Runner,
    cap: u64,
    host: DiskPath,
    draw: &mut super::stats::Draw,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<Disk, CharError> {
    let mut d = Disk {
        cap,
        host,
        ..Disk::default()
    };
    buffer::hits(run, &mut d, draw, twin, say)?;
    buffer::readahead(run, &mut d, draw, twin, say)?;
    buffer::segments(run, &mut d, draw, twin, say)?;
    media::zones(run, &mut d, twin, say)?;
    media::rotation(run, &mut d, draw, twin, say)?;
    media::seeks(run, &mut d, draw, twin, say)?;
    Ok(d)
}
