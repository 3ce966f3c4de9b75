//! The media: zone rates from sequential reads across the device, the rotation from the
//! sawtooth of reads past a just-read sector, and the seek curve from distance against time.

use super::{Disk, K4, MIB};
use crate::emu::hdd::SeekCurve;
use crate::probe::character::stats::{
    kth, linear_at, mean, median, robust_slope, sawtooth_period, Draw,
};
use crate::probe::character::twin::{mbs_text, ms_text, size_text, Twin};
use crate::probe::character::{CharError, Progress};
use crate::probe::script::{Runner, Step, Timed};

/// The fastest spindle a probe looks for (15,000 rpm) and the slowest (3,600 rpm).
const REV_MIN: f64 = 60.0 / 15_000.0;
const REV_MAX: f64 = 60.0 / 3_600.0;

/// Zone rates: 16 sequential 1 MiB reads at each of 100 offsets across the device, two in
/// flight so that the drive always holds the next one (it streams at the media rate whatever
/// its read-ahead; more in flight could reach the drive out of order); the rate is the
/// robust slope of their completions. The outer and inner
/// rates, and the zones as the steps between neighbouring offsets.
pub fn zones(
    run: &mut Runner,
    d: &mut Disk,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(), CharError> {
    let n_io = 16u64;
    let run_len = n_io * MIB;
    let points = 100u64;
    let span = d.cap - run_len - MIB;
    let offsets: Vec<u64> = (0..points)
        .map(|i| span * i / (points - 1) / MIB * MIB)
        .collect();
    let mut steps = Vec::new();
    for &o in &offsets {
        steps.extend((0..n_io).map(|k| Step::read(o + k * MIB, MIB)));
        // The next offset's reads start once this run is done: each run alone on the media.
        steps.push(Step::Idle(0.0));
    }
    let t = run.run_at(&steps, 2)?;
    d.rates = offsets
        .iter()
        .enumerate()
        .map(|(i, &o)| {
            let r = &t[i * n_io as usize..(i + 1) * n_io as usize];
            // The first read positions the head; the others stream.
            let pts: Vec<(f64, f64)> = r[1..]
                .iter()
                .enumerate()
                .map(|(k, t)| (k as f64, t.done()))
                .collect();
            (o, MIB as f64 / robust_slope(&pts).max(1e-9))
        })
        .collect();
    // A run the host held up (one rate far below both neighbours) is set to their median: a
    // median of three leaves the steps of a monotone sweep as they are.
    let raw: Vec<f64> = d.rates.iter().map(|r| r.1).collect();
    for i in 1..raw.len() - 1 {
        d.rates[i].1 = median(&raw[i - 1..=i + 1]);
    }
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
            "sequential reads of {} (1 MiB each, 2 in flight) at the {edge} offsets of 100 across the device: the robust slope of their completions (median of 3)",
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
pub fn rotation(
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
    // Each second read's latency, plus the host's own gap between the first read's end and
    // its issue (the platter turned on meanwhile), against its distance in media time. A pair
    // whose second read was in the buffer (an earlier pair's read-ahead) tells nothing.
    let pts: Vec<(f64, f64)> = t
        .chunks_exact(2)
        .enumerate()
        .filter(|(_, p)| !d.is_hit(p[1].latency))
        .map(|(j, p)| {
            let gap = (p[1].issue - p[0].done()).max(0.0);
            (tau0 + j as f64 * step, p[1].latency + gap)
        })
        .collect();
    if pts.len() < n / 2 {
        twin.unknown(
            "rpm",
            format!(
                "{} of {n} pairs' second reads were in the buffer: needs pairs further apart",
                n - pts.len()
            ),
        );
        d.rev = 60.0 / 7200.0;
        return Ok(());
    }
    // The revolution is the period of that sawtooth.
    d.rev = sawtooth_period(&pts, REV_MIN, REV_MAX);
    let rpm = 60.0 / d.rev;
    say(&format!("rotation: {rpm:.1} rpm"));
    twin.set(
        "rpm",
        crate::units::trim_float((rpm * 10.0).round() / 10.0),
        format!(
            "{n} pairs of 4 KiB reads in the widest zone, the second 0.1 ms of media further each time: their latency, with the host's gap before each, is a sawtooth of period {:.4} ms (where the residues bunch most)",
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

/// Seeks: the mean of 2000 random reads less half a revolution and the overhead (average
/// seek); pairs at fixed distances (the curve), from which the full stroke and the
/// track-to-track time of the model's curve are fitted.
pub fn seeks(
    run: &mut Runner,
    d: &mut Disk,
    draw: &mut Draw,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(), CharError> {
    let xfer = K4 as f64 / d.mean_rate();
    // Every random read is followed by its re-read from the buffer: what the host and the
    // command cost at the same moment, subtracted from the reads (a loaded host slows both).
    let n = 2000;
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
    // The curve: seek at distance u from the j-th smallest and j-th largest of k pairs (j a
    // 32nd of k; their mean rotational waits add up to one revolution: E[L(j)] + E[L(k+1-j)] =
    // 2 seek + one revolution).
    // Each pair's second read lands a random part of a track further, so that the platter's
    // angle between them is uniform.
    let track = |o: u64| (d.rate_at(o) * d.rev) as u64;
    let track_max = track(0).max(track(d.cap - MIB));
    // As many pairs per distance as a quarter of the device holds slots for, up to 128 (each
    // pair's rotational wait is uniform over a revolution: the more, the closer the order
    // statistics below come to the seek), and at least 8.
    let k = ((d.cap / 4) / (d.readahead + 2 * track_max + 2 * MIB)).clamp(8, 128) as usize;
    let shortest = (4 * track_max) as f64 / d.cap as f64;
    let dist: Vec<f64> = [3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 0.6, 0.999]
        .into_iter()
        .map(|u: f64| u.max(shortest))
        .collect();
    // The first reads of a group lie in slots, each wider than what the buffer holds after
    // a read, so no read of a group is in the buffer from another.
    let spacing = d.readahead + 2 * track_max + 2 * MIB;
    let room = d.cap - k as u64 * spacing - track_max - 2 * MIB;
    // The short distances, where the curve is steepest and the track-to-track time is read
    // from, take four times the pairs where the device has the slots: their seeks are a
    // millisecond or two, so each order statistic's spread (a revolution over the pairs) is
    // most of what they are.
    let mut pairs = Vec::new();
    let mut ks = Vec::new();
    for (i, &u) in dist.iter().enumerate() {
        let gap = (room as f64 * u) as u64 / K4 * K4;
        let span = d.cap - gap - track_max - MIB;
        let ki = if u <= 0.01 {
            (4 * k).min((span / spacing) as usize).max(k)
        } else {
            k
        };
        ks.push(ki);
        let slot = span / ki as u64;
        for j in 0..ki as u64 {
            let a = draw.aligned(j * slot, (j + 1) * slot - spacing / 2, K4);
            let jitter = draw.aligned(0, track(a).max(K4 + 1), K4);
            pairs.push((i, a, a + gap + jitter));
        }
    }
    // The pairs of every distance in one random order: whatever slows a stretch of the run
    // (the host, the first reads after another probe) falls on every distance alike, not on
    // one group's order statistics.
    draw.shuffle(&mut pairs);
    let steps: Vec<Step> = pairs
        .iter()
        .flat_map(|&(_, a, b)| [Step::read(a, K4), Step::read(b, K4)])
        .collect();
    let t = run.run(&steps)?;
    let curve: Vec<(f64, f64)> = (0..dist.len())
        .map(|i| {
            let group: Vec<&[Timed]> = t
                .chunks_exact(2)
                .zip(&pairs)
                .filter(|(_, p)| p.0 == i)
                .map(|(g, _)| g)
                .collect();
            let l: Vec<f64> = group.iter().map(|p| p[1].latency).collect();
            // The distance the head travelled: from the end of the first read to the second,
            // as a share of the stroke (the pairs' own, jitter included).
            let u = mean(
                &group
                    .iter()
                    .map(|p| p[1].offset.abs_diff(p[0].offset + p[0].len) as f64 / d.cap as f64)
                    .collect::<Vec<_>>(),
            );
            let k = l.len();
            let j = k / 32;
            (u, (kth(&l, j) + kth(&l, k - 1 - j) - d.rev) / 2.0 - fixed)
        })
        .collect();
    // The last pairs span most of the stroke, not all of it: the full stroke is their seek
    // carried on to the whole stroke along the curve's last (linear) stretch.
    let ((u0, s0), (u1, s1)) = (curve[curve.len() - 2], curve[curve.len() - 1]);
    let full = s1 + (s1 - s0) / (u1 - u0).max(1e-9) * (1.0 - u1);
    d.full_stroke = full;
    say(&format!(
        "seek curve: {}",
        curve
            .iter()
            .map(|(u, s)| format!("{u:.4}: {:.2} ms", s * 1e3))
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
    d.edge_seek = edge_seek(
        &curve,
        best.and_then(|t1| SeekCurve::fit(t1, d.avg_seek, full).ok()),
        full,
    );
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
                "fits the model's seek curve to {} distances: {}",
                dist.len(),
                curve
                    .iter()
                    .zip(&ks)
                    .map(|((u, s), n)| format!("{u:.4}: {:.2} ms ({n} pairs)", s * 1e3))
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

/// The mean seek from one end of the stroke to a uniformly random place: the mean over the
/// distance of the fitted `curve` when there is one, otherwise of the measured `points`
/// joined by straight lines (flat below the first, on to `full` at the whole stroke).
pub(crate) fn edge_seek(points: &[(f64, f64)], curve: Option<SeekCurve>, full: f64) -> f64 {
    let n = 10_000;
    let mut pts = points.to_vec();
    pts.push((1.0, full));
    let at = |u: f64| curve.map_or_else(|| linear_at(&pts, u), |c| c.time(u));
    (0..n).map(|i| at((i as f64 + 0.5) / n as f64)).sum::<f64>() / n as f64
}
