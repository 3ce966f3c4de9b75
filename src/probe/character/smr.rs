//! Skylight-style probes of a drive-managed SMR disk, from latency alone:
//! - whether a persistent cache takes scattered writes: each scattered write made durable by a
//!   flush costs a conventional disk a random access, a shingled one a log append;
//! - the cache's size: scattered writes, a flush after every few, until one stalls (the drive
//!   cleans in the foreground once its cache is full);
//! - the band: with the cache full, each stall of a write made durable is one band's
//!   read-modify-write, twice the band over the media rate plus three positionings;
//! - the idle time before background cleaning: after how long an idle gap a read waits for a
//!   band being cleaned.

use super::disk::writes::Left;
use super::disk::Disk;
use super::stats::{median, Draw};
use super::twin::{ms_text, size_text, Twin};
use super::{CharError, Progress};
use crate::engine::Op;
use crate::probe::script::{Runner, Step, Timed};

const K4: u64 = 4096;
const MIB: u64 = 1 << 20;

/// Durable scattered writes timed with the cache full, for the band.
const BAND_WRITES: usize = 1200;

/// The band from the stalls' time past the usual write and the positionings (seconds), and
/// the media rates measured across the device: each stall reads and rewrites one band wherever
/// it lies, so their mean is twice the band times the mean of 1 / rate over the device. Stalls
/// under 0.4 or over 1.8 times the median (a wait cut short, or two bands cleaned) are left
/// out: one band's cleaning spans about 0.7-1.5 times the median between a disk's outer and
/// inner rates. None with fewer than 3 stalls; else the band and the stalls used.
pub(super) fn band_from(excess: &[f64], rates: &[(u64, f64)]) -> Option<(f64, usize)> {
    if excess.len() < 3 || rates.is_empty() {
        return None;
    }
    let m = median(excess);
    let one: Vec<f64> = excess
        .iter()
        .copied()
        .filter(|&x| x > 0.4 * m && x < 1.8 * m)
        .collect();
    if one.len() < 3 {
        return None;
    }
    let per_byte = rates.iter().map(|r| 1.0 / r.1).sum::<f64>() / rates.len() as f64;
    Some((super::stats::mean(&one) / (2.0 * per_byte), one.len()))
}

/// Writes between two flushes while the cache is filled: the cache is found within this many
/// 128 KiB writes (1 MiB).
const FLUSH_EVERY: usize = 8;

/// The latencies seen so far of each kind (writes, flushes), to tell a stall from the usual.
#[derive(Default)]
struct Recent {
    writes: Vec<f64>,
    flushes: Vec<f64>,
}

impl Recent {
    /// Whether `x` stalled: ten times the median of the last 50 writes (or 20 flushes) and
    /// at least 20 ms (a band's cleaning takes hundreds); otherwise it joins them.
    fn stalls(&mut self, x: &Timed) -> bool {
        let seen = match x.op {
            Op::Fsync => &mut self.flushes,
            _ => &mut self.writes,
        };
        let n = seen.len();
        let min = if x.op == Op::Fsync { 20 } else { 50 };
        if n >= min && x.latency > (10.0 * median(&seen[n - min..])).max(0.02) {
            return true;
        }
        seen.push(x.latency);
        false
    }
}

/// Scattered writes cached so far (bytes), counted from the first probe that wrote, while no
/// idle gap let the drive clean.
pub struct Cached(pub u64);

/// Whether scattered 64 KiB writes made durable one by one go at a cache's pace; returns the
/// reason when they do, with the bytes they put in the cache, and, where they do not, what
/// they left in a write buffer.
pub fn decide(
    run: &mut Runner,
    d: &Disk,
    draw: &mut Draw,
) -> Result<(Option<String>, Cached, Left), CharError> {
    let io = 64 << 10;
    let mut steps = Vec::new();
    for _ in 0..50 {
        steps.extend([
            Step::write(draw.aligned(0, d.cap - MIB, K4), io),
            Step::flush(),
        ]);
    }
    let t = run.run(&steps)?;
    let each: Vec<f64> = t.chunks(2).map(|c| c[0].latency + c[1].latency).collect();
    let durable = median(&each);
    let mut cached = 50 * io;
    if durable > 0.5 * d.random_read {
        return Ok((None, Cached(cached), Left::Nothing));
    }
    // Fast even when made durable: a cache, or a drive that ignores flushes. A long burst
    // tells them apart: a write buffer fills, a persistent cache does not.
    let n = 1000;
    let steps: Vec<Step> = (0..n)
        .map(|_| Step::write(draw.aligned(0, d.cap - MIB, K4), io))
        .collect();
    let t = run.run(&steps)?;
    cached += n * io;
    let tail = median(
        &t[t.len() / 2..]
            .iter()
            .map(|t| t.latency)
            .collect::<Vec<_>>(),
    );
    if tail > 0.25 * d.random_read {
        return Ok((
            None,
            Cached(cached),
            Left::Destaging {
                writes: 50 + n as usize,
            },
        ));
    }
    let why = format!(
        "scattered 64 KiB writes made durable one by one take {:.3} ms (a random read {:.3} ms), and a burst of {n} more still {:.3} ms each: a persistent cache takes them (drive-managed SMR)",
        durable * 1e3,
        d.random_read * 1e3,
        tail * 1e3
    );
    Ok((Some(why), Cached(cached), Left::Nothing))
}

/// The cache, the band and the idle time.
pub fn shingles(
    run: &mut Runner,
    d: &Disk,
    draw: &mut Draw,
    cached: Cached,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(), CharError> {
    // The cache: scattered 128 KiB writes until one stalls, a flush after every few so that
    // the drive's write buffer never holds more than those few (a buffer of unknown size
    // would otherwise hide up to its whole size of writes behind the stall). In chunks of
    // 32 MiB, so that the writes issued past the stall, each paying a band's cleaning, are few.
    let io: u64 = 128 << 10;
    let (group, groups) = (FLUSH_EVERY, 32);
    let mut written = cached.0;
    let mut said = written;
    let mut recent = Recent::default();
    let mut stall = None;
    while stall.is_none() && written < 256 << 30 {
        let mut steps = Vec::with_capacity(groups * (group + 1));
        for _ in 0..groups {
            for _ in 0..group {
                steps.push(Step::write(draw.aligned(0, d.cap - MIB, K4), io));
            }
            steps.push(Step::flush());
        }
        let t = run.run(&steps)?;
        let mut at = written;
        for x in &t {
            if x.op != Op::Fsync {
                at += io;
            }
            if recent.stalls(x) {
                stall = Some(at);
                break;
            }
        }
        if stall.is_none() {
            written = at;
            if written - said >= 256 * MIB {
                said = written;
                say(&format!(
                    "persistent cache: {} written, no stall yet",
                    size_text(written as f64)
                ));
            }
        }
    }
    let Some(at) = stall else {
        for p in ["cache", "band", "idle"] {
            twin.unknown(
                p,
                "256 GiB of scattered writes never stalled: needs a longer fill",
            );
        }
        return Ok(());
    };
    // The write that overflowed the cache is one of the last group (the flush before it
    // found the group before in the cache): the middle of that group.
    let cache = at.saturating_sub(group as u64 * io / 2) as f64;
    say(&format!(
        "persistent cache: stalled after {}",
        size_text(at as f64)
    ));
    twin.set(
        "cache",
        size_text(cache),
        format!(
            "scattered 128 KiB writes from an empty cache, a flush after every {group}, until the first stall ({} written): less half a group",
            size_text(at as f64)
        ),
    );
    // The band: durable 64 KiB scattered writes with the cache full; the slow ones clean.
    let (wio, pairs) = (64 << 10, BAND_WRITES);
    let mut steps = Vec::new();
    for _ in 0..pairs {
        steps.extend([
            Step::write(draw.aligned(0, d.cap - MIB, K4), wio),
            Step::flush(),
        ]);
    }
    let t = run.run(&steps)?;
    let each: Vec<f64> = t.chunks(2).map(|c| c[0].latency + c[1].latency).collect();
    let in_flush = t.chunks(2).filter(|c| c[1].latency > 0.02).count();
    let normal = median(&each);
    let stalls: Vec<f64> = each
        .iter()
        .copied()
        .filter(|&x| x > normal + 3.0 * (d.avg_seek + d.rev / 2.0) + 0.005)
        .collect();
    // A stall: the band read and rewritten, positioning three times between the band's home
    // and the cache region at the edge (each a seek from the edge to a random place), a
    // rotational wait each, the band's part of the log read at the edge's rate (what the
    // writes between two stalls refill), and a seek back to the log.
    let logged = (pairs as u64 * wio) as f64 / stalls.len().max(1) as f64;
    let fixed = 4.0 * d.edge_seek + 1.5 * d.rev + logged / d.rate_at(0);
    let excess: Vec<f64> = stalls.iter().map(|s| s - normal - fixed).collect();
    match band_from(&excess, &d.rates) {
        None => twin.unknown(
            "band",
            format!("{} of {pairs} durable writes with the cache full stalled: needs more writes, or a drive that cleans ahead", stalls.len()),
        ),
        Some((band, used)) => {
            say(&format!(
                "band: {} ({} stalls)",
                size_text(band),
                stalls.len()
            ));
            twin.set(
                "band",
                size_text(band),
                format!(
                    "{} stalls of {pairs} durable scattered 64 KiB writes with the cache full (median {:.1} ms against {:.2} ms for the others): a band read and rewritten, less its fixed part ({:.2} ms: four seeks from the edge of {:.2} ms each, three rotational waits, the log read), the mean over the {used} stalls of one band at the media rate averaged over the device",
                    stalls.len(),
                    median(&stalls) * 1e3,
                    normal * 1e3,
                    fixed * 1e3,
                    d.edge_seek * 1e3
                ),
            );
        }
    }
    if in_flush > 0 {
        twin.set(
            "flush",
            "honour",
            "the cleaning a write caused was waited for by the flush after it",
        );
    }
    idle(run, d, draw, twin, say)
}

/// Idle: a durable write, an idle gap, then a read: once the gap passes the drive's idle time
/// it starts cleaning, and the read waits for the band in progress.
fn idle(
    run: &mut Runner,
    d: &Disk,
    draw: &mut Draw,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(), CharError> {
    let waits = |run: &mut Runner, draw: &mut Draw, gap: f64| -> Result<bool, CharError> {
        let steps = [
            Step::write(draw.aligned(0, d.cap - MIB, K4), K4),
            Step::flush(),
            Step::Idle(gap),
            Step::read(draw.aligned(0, d.cap - MIB, K4), K4),
        ];
        let t = run.run(&steps)?;
        Ok(t[2].latency > d.random_read + 3.0 * (d.avg_seek + d.rev / 2.0))
    };
    let mut hi = 0.05;
    while hi <= 16.0 && !waits(run, draw, hi)? {
        hi *= 2.0;
    }
    if hi > 16.0 {
        twin.unknown(
            "idle",
            "no cleaning seen after 16 s idle: needs longer idle gaps",
        );
        return Ok(());
    }
    let mut lo = if hi > 0.05 { hi / 2.0 } else { 0.0 };
    while hi - lo > 0.02 * hi {
        let mid = (lo + hi) / 2.0;
        if waits(run, draw, mid)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    let idle = (lo + hi) / 2.0;
    say(&format!("cleaning after {:.3} s idle", idle));
    twin.set(
        "idle",
        ms_text(idle),
        "the shortest idle gap after which a read waited for a band being cleaned (doubling then bisection to 2%)",
    );
    Ok(())
}
