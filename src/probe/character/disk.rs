//! DIXtrac-style probes of a disk, each a script of reads (and, when writes are allowed,
//! writes and flushes) timed through the engine:
//! - the buffer's hit time, the interface rate and the command overhead, from re-reads;
//! - read-ahead from strided re-reads after idle, the segments from scattered reads re-read in
//!   turn, a segment's size from sequential runs re-read from their start;
//! - zone rates from sequential reads at about 100 offsets;
//! - the rotation from the latency sawtooth of reads at growing distances past a just-read
//!   sector (a drop of one revolution where the sector stops coming round in time);
//! - the seek curve from distance against time, less the rotation and the overhead;
//! - the write-back buffer (commands, then bytes) from bursts after idle until a write waits;
//! - whether flushes are honoured from a flush's time with data buffered;
//! - queue order from QD1 against QD32 random reads, the aging limit from QD32's worst.

use super::stats::{kth, mean, median, Draw};
use super::twin::{mbs_text, ms_text, size_text, Twin};
use super::{CharError, Progress};
use crate::emu::hdd::SeekCurve;
use crate::probe::script::{Runner, Step, Timed};

const K4: u64 = 4096;
const MIB: u64 = 1 << 20;
/// The fastest spindle a probe looks for (15,000 rpm) and the slowest (3,600 rpm).
const REV_MIN: f64 = 60.0 / 15_000.0;
const REV_MAX: f64 = 60.0 / 3_600.0;

/// What the disk probes found, in base units (bytes, seconds, bytes per second).
#[derive(Debug, Clone, Default)]
pub struct Disk {
    pub cap: u64,
    /// A 4 KiB read from the buffer.
    pub hit4: f64,
    pub iface: f64,
    pub overhead: f64,
    pub readahead: u64,
    /// Media rate at offsets across the device.
    pub rates: Vec<(u64, f64)>,
    pub rev: f64,
    /// Mean QD1 random 4 KiB read.
    pub random_read: f64,
    pub avg_seek: f64,
    /// Mean access time of a scattered write's destage (seek, rotation, overhead).
    pub access: f64,
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

    fn mean_rate(&self) -> f64 {
        mean(&self.rates.iter().map(|r| r.1).collect::<Vec<_>>())
    }
}

/// The read probes: every parameter of the mechanics and the read buffer.
pub fn reads(
    run: &mut Runner,
    cap: u64,
    draw: &mut Draw,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<Disk, CharError> {
    let mut d = Disk {
        cap,
        ..Disk::default()
    };
    hits(run, &mut d, draw, twin, say)?;
    readahead(run, &mut d, draw, twin, say)?;
    segments(run, &d, draw, twin, say)?;
    zones(run, &mut d, twin, say)?;
    rotation(run, &mut d, draw, twin, say)?;
    seeks(run, &mut d, draw, twin, say)?;
    Ok(d)
}

/// Re-reads of what was just read: the buffer's answer time for 4 KiB and 256 KiB, hence the
/// interface rate and the command overhead (which includes the host's own path).
fn hits(
    run: &mut Runner,
    d: &mut Disk,
    draw: &mut Draw,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(), CharError> {
    let big = 256 << 10;
    let mut steps = Vec::new();
    for _ in 0..16 {
        let x = draw.aligned(0, d.cap - MIB, MIB);
        steps.extend([
            Step::read(x, K4),
            Step::read(x, K4),
            Step::read(x + big, big),
            Step::read(x + big, big),
        ]);
    }
    let t = run.run(&steps)?;
    let h4: Vec<f64> = t.iter().skip(1).step_by(4).map(|t| t.latency).collect();
    let hb: Vec<f64> = t.iter().skip(3).step_by(4).map(|t| t.latency).collect();
    d.hit4 = median(&h4);
    let hbig = median(&hb);
    d.iface = (big - K4) as f64 / (hbig - d.hit4).max(1e-6);
    d.overhead = (d.hit4 - K4 as f64 / d.iface).max(0.0);
    say(&format!(
        "buffer hits: 4 KiB in {:.3} ms, 256 KiB in {:.3} ms",
        d.hit4 * 1e3,
        hbig * 1e3
    ));
    twin.set(
        "iface_rate",
        mbs_text(d.iface),
        format!(
            "re-reads of 256 KiB ({:.3} ms) against 4 KiB ({:.3} ms) answered from the buffer, 16 each (medians)",
            hbig * 1e3,
            d.hit4 * 1e3
        ),
    );
    twin.set(
        "overhead",
        ms_text(d.overhead),
        "a 4 KiB buffer hit less its transfer at the interface rate (includes the host's own path)",
    );
    Ok(())
}

/// Whether the read at `x + gap` hits the buffer after `x` was read and the drive left idle
/// long enough to read ahead: 3 tries at different places; a miss waits for the platter.
fn hit_after(
    run: &mut Runner,
    d: &Disk,
    draw: &mut Draw,
    gap: u64,
    idle: f64,
) -> Result<bool, CharError> {
    let mut steps = Vec::new();
    for _ in 0..3 {
        let x = draw.aligned(0, d.cap - gap - 2 * MIB, MIB);
        steps.extend([Step::read(x, K4), Step::Idle(idle), Step::read(x + gap, K4)]);
    }
    let t = run.run(&steps)?;
    let worst = t
        .iter()
        .skip(1)
        .step_by(2)
        .map(|t| t.latency)
        .fold(0.0, f64::max);
    Ok(worst < 2.0 * d.hit4 + 1e-3)
}

/// Read-ahead: after a read and an idle time, is a read `gap` further on in the buffer?
/// Doubling, then bisection to 4 KiB.
fn readahead(
    run: &mut Runner,
    d: &mut Disk,
    draw: &mut Draw,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(), CharError> {
    // Idle long enough to read the gap ahead at 25 MB/s.
    let idle = |gap: u64| 0.02 + gap as f64 / 25e6;
    let mut lo = 0; // largest gap known to hit
    let mut hi = K4;
    while hi <= 64 * MIB && hit_after(run, d, draw, hi, idle(hi))? {
        lo = hi;
        hi *= 2;
    }
    if hi > 64 * MIB {
        twin.unknown(
            "readahead",
            "more than 64 MiB: needs strided re-reads further apart",
        );
        d.readahead = 64 * MIB;
        return Ok(());
    }
    while hi - lo > K4 {
        let mid = (lo + hi) / 2 / K4 * K4;
        if hit_after(run, d, draw, mid, idle(mid))? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    d.readahead = lo;
    say(&format!("read-ahead: {}", size_text(lo as f64)));
    twin.set(
        "readahead",
        size_text(lo as f64),
        "the furthest 4 KiB read answered from the buffer after a read and an idle time to read that far ahead (3 places each, doubling then bisection)",
    );
    Ok(())
}

/// Segments: `k` scattered reads, then the first again: a hit while k <= segments. Then a
/// segment's size: a sequential run of `len` then its start again: a hit while len plus the
/// read-ahead fits a segment.
fn segments(
    run: &mut Runner,
    d: &Disk,
    draw: &mut Draw,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(), CharError> {
    // Each test three times; the majority decides (a hit slowed by a busy host).
    let held = |run: &mut Runner, draw: &mut Draw, k: u64| -> Result<bool, CharError> {
        let span = d.cap / (k + 1);
        let mut votes = 0;
        for _ in 0..3 {
            let mut steps: Vec<Step> = (0..k)
                .map(|i| Step::read(draw.aligned(i * span, (i + 1) * span - MIB, K4), K4))
                .collect();
            let first = steps[0];
            steps.push(first);
            let t = run.run(&steps)?;
            votes +=
                usize::from(t.last().map(|t| t.latency).unwrap_or(1.0) < 2.0 * d.hit4 + 0.5e-3);
        }
        Ok(votes >= 2)
    };
    let (mut lo, mut hi) = (1u64, 2u64);
    while hi <= 256 && held(run, draw, hi)? {
        lo = hi;
        hi *= 2;
    }
    if hi > 256 {
        twin.unknown("segments", "more than 256: needs more scattered reads");
        return Ok(());
    }
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if held(run, draw, mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let segs = lo;
    twin.set(
        "segments",
        segs.to_string(),
        format!(
            "{segs} scattered reads are all held (the first re-read from the buffer), {} are not",
            segs + 1
        ),
    );
    // A segment's size.
    let io = 128 << 10;
    let fits = |run: &mut Runner, draw: &mut Draw, len: u64| -> Result<bool, CharError> {
        let mut votes = 0;
        for _ in 0..3 {
            let x = draw.aligned(0, d.cap - len - 2 * MIB, MIB);
            let mut steps: Vec<Step> = (0..len / io).map(|i| Step::read(x + i * io, io)).collect();
            steps.push(Step::read(x, K4));
            let t = run.run(&steps)?;
            votes +=
                usize::from(t.last().map(|t| t.latency).unwrap_or(1.0) < 2.0 * d.hit4 + 0.5e-3);
        }
        Ok(votes >= 2)
    };
    let (mut lo, mut hi) = (0u64, io);
    while hi <= 512 * MIB && fits(run, draw, hi)? {
        lo = hi;
        hi *= 2;
    }
    if lo == 0 || hi > 512 * MIB {
        twin.unknown(
            "buffer",
            "a segment holds less than 128 KiB beyond the read-ahead, or more than 512 MiB: needs sequential runs of other lengths",
        );
        return Ok(());
    }
    while hi - lo > io {
        let mid = (lo + hi) / 2 / io * io;
        if fits(run, draw, mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let seg = (lo + io / 2 + d.readahead) as f64;
    say(&format!(
        "read buffer: {segs} segments of {}",
        size_text(seg)
    ));
    twin.set(
        "buffer",
        size_text(seg * segs as f64),
        format!(
            "segments x a segment's size: the longest sequential run whose start is still held ({}, 128 KiB steps) plus the read-ahead",
            size_text(lo as f64)
        ),
    );
    Ok(())
}

/// Zone rates: sequential reads at 100 offsets; the outer and inner rates, and the zones as
/// the steps between them.
fn zones(
    run: &mut Runner,
    d: &mut Disk,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(), CharError> {
    // Reads no longer than half the read-ahead, so each is in the buffer before it is asked.
    let io = (d.readahead / 2 / K4 * K4).clamp(K4, 128 << 10);
    let n_io = (16 * MIB / io).max(8);
    let run_len = n_io * io;
    let points = 100u64;
    let span = d.cap - run_len - MIB;
    let mut steps = Vec::new();
    let offsets: Vec<u64> = (0..points)
        .map(|i| span * i / (points - 1) / MIB * MIB)
        .collect();
    for &o in &offsets {
        steps.extend((0..n_io).map(|k| Step::read(o + k * io, io)));
    }
    let t = run.run(&steps)?;
    d.rates = offsets
        .iter()
        .enumerate()
        .map(|(i, &o)| {
            let r = &t[i * n_io as usize..(i + 1) * n_io as usize];
            // From the first read's completion to the last's: the media streaming.
            let secs = r[r.len() - 1].done() - r[0].done();
            (o, ((n_io - 1) * io) as f64 / secs.max(1e-9))
        })
        .collect();
    let outer = median(&d.rates[..3].iter().map(|r| r.1).collect::<Vec<_>>());
    let inner = median(
        &d.rates[d.rates.len() - 3..]
            .iter()
            .map(|r| r.1)
            .collect::<Vec<_>>(),
    );
    // Zones: the steps between neighbouring offsets larger than half the step that many
    // zones would make, counted until the count agrees with itself.
    let diffs: Vec<f64> = d
        .rates
        .windows(2)
        .map(|w| (w[0].1 - w[1].1).abs())
        .collect();
    let mut zones = points as usize;
    for _ in 0..20 {
        let step = (outer - inner).abs() / (zones.max(2) - 1) as f64;
        let n = diffs.iter().filter(|&&x| x > step / 2.0).count() + 1;
        if n == zones {
            break;
        }
        zones = n;
    }
    let steps_seen = zones - 1;
    say(&format!(
        "zones: {:.1} MB/s outer, {:.1} MB/s inner, {} steps over {points} offsets",
        outer / 1e6,
        inner / 1e6,
        steps_seen
    ));
    let how = |edge| {
        format!(
            "sequential reads of {} at the {edge} offsets of 100 across the device (median of 3)",
            size_text(run_len as f64)
        )
    };
    twin.set("outer_rate", mbs_text(outer), how("first three"));
    twin.set("inner_rate", mbs_text(inner), how("last three"));
    if steps_seen < points as usize / 3 {
        twin.set(
            "zones",
            (steps_seen + 1).to_string(),
            "steps of the rate between neighbouring offsets of the 100",
        );
    } else {
        twin.unknown(
            "zones",
            format!("the rate steps between most of the 100 offsets ({steps_seen}): needs a denser sweep"),
        );
    }
    Ok(())
}

/// Rotation: pairs of reads, the second `tau` of media time past the first (its own place
/// each, so nothing is in the buffer); its latency rises with `tau` and drops by one
/// revolution where its sector stops coming round before the head gets there.
fn rotation(
    run: &mut Runner,
    d: &mut Disk,
    draw: &mut Draw,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(), CharError> {
    let step = 0.1e-3;
    // All pairs in the widest zone the sweep saw (one rate, one track length), so that the
    // second read's angle past the first is its distance over the zone's rate.
    let (from, to, rate) = widest_zone(d);
    let tau0 = (d.readahead + 256 * 1024) as f64 / rate;
    let n = (5.0 * REV_MAX / step) as usize;
    let reach = ((tau0 + n as f64 * step) * rate) as u64 + MIB;
    if to < from + reach + 64 * MIB {
        twin.unknown(
            "rpm",
            "no zone is wide enough for the sawtooth of reads past a just-read sector: needs it across zones",
        );
        d.rev = 60.0 / 7200.0;
        return Ok(());
    }
    let mut steps = Vec::with_capacity(2 * n);
    for j in 0..n {
        let x = draw.aligned(from, to - reach, K4);
        let tau = tau0 + j as f64 * step;
        let gap = (tau * rate / K4 as f64).round() as u64 * K4 + K4;
        steps.extend([Step::read(x, K4), Step::read(x + gap, K4)]);
    }
    let t = run.run(&steps)?;
    // A pair whose second read was in the buffer (an earlier pair's read-ahead) tells
    // nothing: it takes the latency of its neighbour.
    let mut l: Vec<f64> = t.iter().skip(1).step_by(2).map(|t| t.latency).collect();
    for i in 0..l.len() {
        if l[i] < 2.0 * d.hit4 + 0.3e-3 {
            l[i] = if i > 0 {
                l[i - 1]
            } else {
                l[(i + 1).min(l.len() - 1)]
            };
        }
    }
    // The revolution is the period of the sawtooth: folded at the right period, the
    // latencies form one tooth (phase dispersion minimization: the smallest total variation
    // of the latencies in the order of their phase), searched in 1 µs steps.
    let taus: Vec<f64> = (0..l.len()).map(|j| tau0 + j as f64 * step).collect();
    let spread = |r: f64| -> f64 {
        let mut v: Vec<(f64, f64)> = taus
            .iter()
            .zip(&l)
            .map(|(t, y)| (t.rem_euclid(r), *y))
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v.windows(2)
            .map(|w| (w[1].1 - w[0].1).abs().min(r / 2.0))
            .sum::<f64>()
    };
    let coarse = (0..=((REV_MAX - REV_MIN) / 20e-6) as usize)
        .map(|i| REV_MIN + i as f64 * 20e-6)
        .min_by(|a, b| spread(*a).total_cmp(&spread(*b)))
        .unwrap_or(REV_MIN);
    d.rev = (0..=80)
        .map(|i| coarse - 40e-6 + i as f64 * 1e-6)
        .min_by(|a, b| spread(*a).total_cmp(&spread(*b)))
        .unwrap_or(coarse);
    // A half or a third of the period folds into two or three teeth: prefer a multiple
    // whose folding is as clean.
    for m in [3.0, 2.0] {
        let r = d.rev * m;
        if r <= REV_MAX && spread(r) <= spread(d.rev) * 1.05 {
            d.rev = r;
            break;
        }
    }
    let rpm = 60.0 / d.rev;
    say(&format!("rotation: {rpm:.1} rpm"));
    twin.set(
        "rpm",
        crate::units::trim_float((rpm * 10.0).round() / 10.0),
        format!(
            "{n} pairs of 4 KiB reads in the widest zone, the second 0.1 ms of media further each time: their latency is a sawtooth of period {:.4} ms (the period folding it into one tooth)",
            d.rev * 1e3
        ),
    );
    Ok(())
}

/// The widest run of neighbouring offsets of the zone sweep at one rate: (from, to, rate).
fn widest_zone(d: &Disk) -> (u64, u64, f64) {
    let r = &d.rates;
    let (outer, inner) = (r[0].1, r[r.len() - 1].1);
    let tol = ((outer - inner).abs() / 200.0).max(outer * 0.002);
    let mut best = (0usize, 0usize);
    let mut start = 0;
    for i in 1..=r.len() {
        if i == r.len() || (r[i].1 - r[i - 1].1).abs() > tol {
            if i - start > best.1 - best.0 {
                best = (start, i);
            }
            start = i;
        }
    }
    let (a, b) = best;
    let to = if b < r.len() { r[b].0 } else { d.cap };
    let rate = median(&r[a..b].iter().map(|x| x.1).collect::<Vec<_>>());
    (r[a].0, to.min(d.cap - MIB), rate)
}

/// Seeks: the mean of 1000 random reads less half a revolution and the overhead (average
/// seek); pairs at fixed distances (the curve), from which the full stroke and the
/// track-to-track time of the model's curve are fitted.
fn seeks(
    run: &mut Runner,
    d: &mut Disk,
    draw: &mut Draw,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(), CharError> {
    let xfer = K4 as f64 / d.mean_rate();
    // Every random read is followed by its re-read from the buffer: what the host and the
    // command cost at the same moment, subtracted from the reads (a loaded host slows both).
    let n = 1000;
    let mut steps = Vec::with_capacity(2 * n);
    for _ in 0..n {
        let o = draw.aligned(0, d.cap - K4, K4);
        steps.extend([Step::read(o, K4), Step::read(o, K4)]);
    }
    let t = run.run(&steps)?;
    let l: Vec<f64> = t.iter().step_by(2).map(|t| t.latency).collect();
    let hits: Vec<f64> = t.iter().skip(1).step_by(2).map(|t| t.latency).collect();
    let fixed = median(&hits) - K4 as f64 / d.iface + xfer;
    d.random_read = mean(&l);
    d.avg_seek = d.random_read - d.rev / 2.0 - fixed;
    // The curve: seek at distance u from the 2nd and 2nd-last of k pairs (their mean
    // rotational wait cancels: E[L(2)] + E[L(k-1)] = 2 seek + one revolution).
    // Each pair's second read lands a random part of a track further, so that the platter's
    // angle between them is uniform.
    let k = 32;
    let track = |o: u64| (d.rate_at(o) * d.rev) as u64;
    let track_max = track(0).max(track(d.cap - MIB));
    let shortest = (4 * track_max) as f64 / d.cap as f64;
    let dist: Vec<f64> = [3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 0.6, 0.999]
        .into_iter()
        .map(|u: f64| u.max(shortest))
        .collect();
    // The first reads of a group lie in k slots, each wider than what the buffer holds after
    // a read, so no read of a group is in the buffer from another.
    let spacing = d.readahead + 2 * track_max + 2 * MIB;
    let room = d.cap - k as u64 * spacing - track_max - 2 * MIB;
    let mut steps = Vec::new();
    for &u in &dist {
        let gap = (room as f64 * u) as u64 / K4 * K4;
        let slot = (d.cap - gap - track_max - MIB) / k as u64;
        for j in 0..k as u64 {
            let a = draw.aligned(j * slot, (j + 1) * slot - spacing / 2, K4);
            let jitter = draw.aligned(0, track(a).max(K4 + 1), K4);
            steps.extend([Step::read(a, K4), Step::read(a + gap + jitter, K4)]);
        }
    }
    let t = run.run(&steps)?;
    let curve: Vec<(f64, f64)> = dist
        .iter()
        .enumerate()
        .map(|(i, &u)| {
            let l: Vec<f64> = t[2 * k * i..2 * k * (i + 1)]
                .iter()
                .skip(1)
                .step_by(2)
                .map(|t| t.latency)
                .collect();
            (u, (kth(&l, 1) + kth(&l, k - 2) - d.rev) / 2.0 - fixed)
        })
        .collect();
    let full = curve[curve.len() - 1].1;
    say(&format!(
        "seek curve: {}",
        curve
            .iter()
            .map(|(u, s)| format!("{u}: {:.2} ms", s * 1e3))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    // The track-to-track time that makes the model's curve (fitted to it, the average and
    // the full stroke) closest to the measured points.
    let err = |t1: f64| -> f64 {
        match SeekCurve::fit(t1, d.avg_seek, full) {
            Ok(c) => curve
                .iter()
                .map(|&(u, s)| (c.time(u) - s).powi(2))
                .sum::<f64>(),
            Err(_) => f64::INFINITY,
        }
    };
    let best = (1..400)
        .map(|i| d.avg_seek * i as f64 / 400.0)
        .min_by(|a, b| err(*a).total_cmp(&err(*b)))
        .filter(|t1| err(*t1).is_finite());
    say(&format!(
        "seeks: {:.3} ms average, {:.3} ms full stroke",
        d.avg_seek * 1e3,
        full * 1e3
    ));
    twin.set(
        "avg_seek",
        ms_text(d.avg_seek),
        format!(
            "mean of {n} random 4 KiB reads ({:.3} ms) less half a revolution and the overhead",
            d.random_read * 1e3
        ),
    );
    if full > d.avg_seek {
        twin.set(
            "full_stroke",
            ms_text(full),
            format!("{k} reads across the whole device, each after one at the other end"),
        );
    } else {
        twin.unknown(
            "full_stroke",
            format!(
                "measured {:.3} ms, not above the average seek: needs more full-stroke pairs",
                full * 1e3
            ),
        );
    }
    match best {
        Some(t1) => twin.set(
            "track_to_track",
            ms_text(t1),
            format!(
                "fits the model's seek curve to {} distances ({k} pairs each): {}",
                dist.len(),
                curve
                    .iter()
                    .map(|(u, s)| format!("{u}: {:.2} ms", s * 1e3))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        None => twin.unknown(
            "track_to_track",
            "no curve of the model fits the measured distances: needs more pairs per distance",
        ),
    }
    Ok(())
}

/// The write probes of a conventional disk: the write-back buffer's commands and bytes, and
/// flushes.
pub fn writes(
    run: &mut Runner,
    d: &mut Disk,
    draw: &mut Draw,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(), CharError> {
    d.access = d.random_read - K4 as f64 / d.mean_rate();
    // Commands: scattered 4 KiB writes after idle until one waits.
    let n = 600;
    let mut steps = vec![Step::flush(), Step::Idle(0.5)];
    steps.extend((0..n).map(|_| Step::write(draw.aligned(0, d.cap - MIB, K4), K4)));
    let t = run.run(&steps)?;
    let w = &t[1..];
    let first = w[0].latency;
    if first > d.hit4 + 2e-3 {
        twin.set(
            "write_back",
            "false",
            format!(
                "the first write after idle took {:.3} ms, as long as a read from the platter",
                first * 1e3
            ),
        );
        for p in ["write_buffer", "write_slots", "flush"] {
            twin.unknown(p, "no write-back: does not apply");
        }
    } else {
        twin.set(
            "write_back",
            "true",
            format!(
                "writes after idle are acknowledged in {:.3} ms, before the platter could hold them",
                first * 1e3
            ),
        );
        match waited(w, d.hit4) {
            Some(i) => {
                let destaged = ((w[i].issue - w[0].issue) / d.access).floor() as usize;
                let slots = i.saturating_sub(destaged).max(1);
                twin.set(
                    "write_slots",
                    slots.to_string(),
                    format!("the {}th scattered 4 KiB write after idle waited; {destaged} were on the platter by then", i + 1),
                );
            }
            None => twin.unknown(
                "write_slots",
                format!("{n} scattered 4 KiB writes never waited: more commands, or a drive that destages as fast as they come (needs a longer burst)"),
            ),
        }
        // Bytes: scattered 1 MiB writes after idle until one waits.
        let m = 96;
        let mut steps = vec![Step::flush(), Step::Idle(0.5)];
        steps.extend((0..m).map(|_| Step::write(draw.aligned(0, d.cap - 2 * MIB, K4), MIB)));
        steps.push(Step::flush());
        let t = run.run(&steps)?;
        let w = &t[1..t.len() - 1];
        match waited(w, w[0].latency) {
            Some(i) => {
                // Once full, the buffer takes a write per destage: the destage time is the
                // interval between the acknowledgements after the wait.
                let acks: Vec<f64> = w[i..].iter().map(|t| t.done()).collect();
                let gaps: Vec<f64> = acks.windows(2).map(|p| p[1] - p[0]).collect();
                let destage = if gaps.len() >= 8 {
                    median(&gaps)
                } else {
                    d.access + MIB as f64 / d.mean_rate()
                };
                let destaged = ((w[i].issue - w[0].issue) / destage).floor() as usize;
                let held = i.saturating_sub(destaged) as f64 + 0.5;
                let slots = twin.get("write_slots").and_then(|s| s.parse::<f64>().ok());
                if slots.is_some_and(|s| held >= s - 1.0) {
                    twin.unknown(
                        "write_buffer",
                        format!("at least {}: the buffer ran out of commands first (needs writes larger than 1 MiB, which the kernel splits)", size_text(held * MIB as f64)),
                    );
                } else {
                    twin.set(
                        "write_buffer",
                        size_text(held * MIB as f64),
                        format!("the {}th scattered 1 MiB write after idle waited; {destaged} were on the platter by then", i + 1),
                    );
                }
            }
            None => twin.unknown(
                "write_buffer",
                format!("{m} scattered 1 MiB writes never waited (more than {m} MiB, or destaged as fast as they come): needs a longer burst"),
            ),
        }
        let destage = d.access + MIB as f64 / d.mean_rate();
        // Flush: 4 scattered 1 MiB writes buffered, then a flush.
        let mut steps = vec![Step::flush(), Step::Idle(0.5)];
        steps.extend((0..4).map(|_| Step::write(draw.aligned(0, d.cap - 2 * MIB, K4), MIB)));
        steps.push(Step::flush());
        let t = run.run(&steps)?;
        let f = t[t.len() - 1].latency;
        let honoured = f > d.hit4 + 2.0 * d.access;
        twin.set(
            "flush",
            if honoured { "honour" } else { "ignore" },
            format!(
                "a flush after 4 scattered 1 MiB writes took {:.3} ms ({} their destage of about {:.1} ms)",
                f * 1e3,
                if honoured { "waiting for" } else { "not waiting for" },
                4.0 * destage * 1e3
            ),
        );
    }
    say(&format!(
        "write-back: {}; flush {}",
        twin.get("write_buffer").unwrap_or("?"),
        twin.get("flush").unwrap_or("-")
    ));
    Ok(())
}

/// The first write of a burst that waited: its latency more than three times the first few
/// (the buffer's own answer time) and a millisecond more.
fn waited(w: &[Timed], base: f64) -> Option<usize> {
    let b = median(
        &w[..4.min(w.len())]
            .iter()
            .map(|t| t.latency)
            .collect::<Vec<_>>(),
    )
    .max(base);
    w.iter().position(|t| t.latency > 3.0 * b + 1e-3)
}

/// Queue order and aging: random reads at QD1, QD8 and QD32; a drive that reorders its queue
/// does many more deeper, and its worst read waited about the aging limit.
pub fn queue(
    run: &mut Runner,
    d: &Disk,
    draw: &mut Draw,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(), CharError> {
    let one: Vec<Step> = (0..200)
        .map(|_| Step::read(draw.aligned(0, d.cap - K4, K4), K4))
        .collect();
    let t1 = run.run(&one)?;
    let iops1 = t1.len() as f64 / t1.last().map(|t| t.done()).unwrap_or(1.0);
    // At QD8 and QD32: a reordering drive does more than at QD1, unless its aging limit is
    // shorter than the queue's wait (then it serves in arrival order, aged).
    let mut deep = Vec::new();
    for depth in [8u32, 32] {
        let steps: Vec<Step> = (0..1000 * depth as usize / 8)
            .map(|_| Step::read(draw.aligned(0, d.cap - K4, K4), K4))
            .collect();
        let t = run.run_at(&steps, depth)?;
        let span = t.iter().map(|t| t.done()).fold(0.0, f64::max);
        let iops = t.len() as f64 / span;
        let worst = t.iter().map(|t| t.latency).fold(0.0, f64::max);
        deep.push((depth, iops, worst));
    }
    let (q8, q32) = (deep[0], deep[1]);
    let rpo = q8.1 / iops1 > 1.25 || q32.1 / iops1 > 1.25;
    say(&format!(
        "queue: {iops1:.0} IOPS at QD1, {:.0} at QD8, {:.0} at QD32: {}",
        q8.1,
        q32.1,
        if rpo { "reordered" } else { "arrival order" }
    ));
    twin.set(
        "queue_order",
        if rpo { "rpo" } else { "fifo" },
        format!(
            "random 4 KiB reads: {iops1:.1} IOPS at QD1, {:.1} at QD8, {:.1} at QD32 (above 1.25 times QD1's, the drive reorders)",
            q8.1, q32.1
        ),
    );
    if rpo {
        // The depth where reordering still pays: its worst read waited the aging limit, then
        // the service in progress and its own.
        let (depth, iops, worst) = if q32.1 / iops1 > 1.25 { q32 } else { q8 };
        let age = worst - 1.5 / iops;
        twin.set(
            "age_limit",
            ms_text(age),
            format!(
                "the worst read at QD{depth} ({:.1} ms) less one and a half services",
                worst * 1e3
            ),
        );
    } else {
        twin.unknown(
            "age_limit",
            "the drive serves its queue in arrival order: does not apply",
        );
    }
    twin.unknown(
        "queue_depth",
        "needs a sweep of queue depths to where a reordering drive's throughput stops growing",
    );
    Ok(())
}
