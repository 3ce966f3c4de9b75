//! The command queue: its order (QD1 against deeper random reads), its aging limit (how long a
//! read waits that the drive always has a nearer one to serve instead of) and its depth (how
//! many commands it takes while reads are outstanding).

use super::{majority, Disk, K4};
use crate::probe::character::stats::{median, Draw};
use crate::probe::character::twin::{ms_text, Twin};
use crate::probe::character::{CharError, Progress};
use crate::probe::script::{Runner, Step};

/// Queue order and aging: random reads at QD1, QD8 and QD32 (or the drive's own queue depth,
/// when known and shorter); a drive that reorders its queue does many more deeper, and the
/// reads that aged show the aging limit.
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
    // Deeper than the drive's own queue (when [`depth`] found it), reads wait in the host's
    // queue too, in arrival order, and that wait would land in the aging limit.
    let most = twin
        .get("queue_depth")
        .and_then(|q| q.parse::<u32>().ok())
        .map_or(32, |q| q.clamp(9, 32));
    let mut deep = Vec::new();
    for depth in [8u32, most] {
        let steps: Vec<Step> = (0..1000 * depth as usize / 8)
            .map(|_| Step::read(draw.aligned(0, d.cap - K4, K4), K4))
            .collect();
        let t = run.run_at(&steps, depth)?;
        let span = t.iter().map(|t| t.done()).fold(0.0, f64::max);
        let iops = t.len() as f64 / span;
        let latencies: Vec<f64> = t.iter().map(|t| t.latency).collect();
        let worst = latencies.iter().copied().fold(0.0, f64::max);
        deep.push((depth, iops, worst, latencies));
    }
    let (q8, q32) = (&deep[0], &deep[1]);
    let rpo = q8.1 / iops1 > 1.25 || q32.1 / iops1 > 1.25;
    say(&format!(
        "queue: {iops1:.0} IOPS at QD1, {:.0} at QD8, {:.0} at QD{most}: {}",
        q8.1,
        q32.1,
        if rpo { "reordered" } else { "arrival order" }
    ));
    twin.set(
        "queue_order",
        if rpo { "rpo" } else { "fifo" },
        format!(
            "random 4 KiB reads: {iops1:.1} IOPS at QD1, {:.1} at QD8, {:.1} at QD{most} (above 1.25 times QD1's, the drive reorders)",
            q8.1, q32.1
        ),
    );
    if rpo {
        // Where reads age in numbers they pile up from the limit on (a cliff in the
        // latencies). Where few do, a read the drive always has a nearer one to serve instead
        // waits the limit every time: the starved reads. Only where those never aged either,
        // the worst read: it waited the limit, then the service in progress and its own (or
        // less, if it never aged).
        let (depth, iops, worst, latencies) = if q32.1 / iops1 > 1.25 { q32 } else { q8 };
        let by_worst = worst - 1.5 / iops;
        let (age, how) = match age_from_cliff(latencies, 1.0 / iops) {
            Some(c) if c >= 0.5 * by_worst => (
                c,
                format!(
                    "the cliff in the latencies of {} random reads at QD{depth} where the reads that aged pile up, less one service ({:.1} ms)",
                    latencies.len(),
                    1e3 / iops
                ),
            ),
            _ => match starved(run, d, draw, say)? {
                Some(s) => s,
                None => (
                    by_worst,
                    format!(
                        "the worst of {} random reads at QD{depth} ({:.1} ms) less one and a half services: no cliff where aged reads pile up, and reads at the far end starved behind near ones never aged",
                        latencies.len(),
                        worst * 1e3
                    ),
                ),
            },
        };
        twin.set("age_limit", ms_text(age), how);
    } else {
        twin.unknown(
            "age_limit",
            "the drive serves its queue in arrival order: does not apply",
        );
    }
    Ok(())
}

/// Reads at the far end of the stroke, each queued with three random reads in the first few
/// percent of it (four in flight: two near ones still queued whenever the head is free, and
/// none waiting long enough to age itself): a drive that serves the nearest command first
/// leaves the far read until it has aged, then serves it next. Its latency is the aging
/// limit, the rest of the service in progress (half a near read's on average), the seek
/// across and half a revolution. Eight far reads, `per` near reads after each (doubled until
/// the far reads age while near ones are still coming, up to 3,200): the aging limit and how
/// it was found, or None where they never aged.
fn starved(
    run: &mut Runner,
    d: &Disk,
    draw: &mut Draw,
    say: &mut Progress,
) -> Result<Option<(f64, String)>, CharError> {
    let depth = 4;
    let band = (d.cap * 3 / 100).max(64 * K4) / K4 * K4;
    let far = (d.cap / 100).max(K4) / K4 * K4;
    let lead = 2 * depth as usize;
    let tries = 8;
    let mut per = 400usize;
    loop {
        let near = |draw: &mut Draw| Step::read(draw.aligned(0, band, K4), K4);
        let mut steps: Vec<Step> = (0..lead).map(|_| near(draw)).collect();
        let mut at = Vec::new();
        for _ in 0..tries {
            at.push(steps.len());
            steps.push(Step::read(draw.aligned(d.cap - far, d.cap - K4, K4), K4));
            steps.extend((0..per).map(|_| near(draw)));
        }
        let t = run.run_at(&steps, depth)?;
        // A far read counts where near reads were still being issued after it completed (the
        // queue held `depth` near ones all the while) and it waited longer than any near read
        // (it was passed over, not served in its turn, as a drive sweeping its queue would).
        let near_reads: Vec<_> = t
            .iter()
            .enumerate()
            .filter(|(i, _)| !at.contains(i))
            .map(|(_, x)| x)
            .collect();
        let slowest = near_reads.iter().map(|x| x.latency).fold(0.0, f64::max);
        let aged: Vec<f64> = at
            .iter()
            .zip(at.iter().skip(1).chain(std::iter::once(&steps.len())))
            .filter(|&(&i, &next)| t[i + 1..next].iter().any(|n| n.issue > t[i].done()))
            .map(|(&i, _)| t[i].latency)
            .filter(|&l| l > slowest)
            .collect();
        if aged.len() >= tries / 2 {
            // The near reads' service: the median gap between their completions.
            let mut done: Vec<f64> = near_reads.iter().map(|x| x.done()).collect();
            done.sort_by(f64::total_cmp);
            let gaps: Vec<f64> = done.windows(2).map(|w| w[1] - w[0]).collect();
            let service = median(&gaps);
            let waited = median(&aged);
            let age = waited - d.full_stroke - d.rev / 2.0 - service / 2.0 - d.hit4;
            say(&format!(
                "aging: {} of {tries} far reads starved until aged, {:.1} ms at the median",
                aged.len(),
                waited * 1e3
            ));
            return Ok(Some((
                age,
                format!(
                    "{} reads at the far end of the stroke, each queued with three random reads in its first 3% (QD{depth}, a nearer read always there): served once aged, {:.1} ms at the median, less the seek across ({:.3} ms), half a revolution, half a near read's service ({:.3} ms) and a buffer hit's time",
                    aged.len(),
                    waited * 1e3,
                    d.full_stroke * 1e3,
                    service * 1e3
                ),
            )));
        }
        if per >= 3200 {
            say(&format!(
                "aging: the far reads did not age behind {per} near reads each"
            ));
            return Ok(None);
        }
        per *= 2;
    }
}

/// The most commands a probe puts in flight: the host's own queue for a block device holds
/// 128 (blk-mq's default), so a drive taking more is not told from one taking 127.
const DEPTH_MAX: u64 = 127;

/// Queue depth: with the head parked at one end, `k` reads near the other end, then (a
/// moment later, so that they are in the drive first) a 4 KiB write, all in flight at once.
/// The drive takes the write into its write-back buffer at once while it holds fewer than its
/// depth of commands; holding its depth, it takes it only once the first read completes,
/// a seek across the device later. Doubling then bisection. Needs write-back.
pub fn depth(
    run: &mut Runner,
    d: &Disk,
    draw: &mut Draw,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(), CharError> {
    if twin.get("write_back") != Some("true") {
        twin.unknown(
            "queue_depth",
            "needs a drive that acknowledges writes from its buffer (a write held back by a full queue is told from one taken at once); needs reads instead",
        );
        return Ok(());
    }
    // Far ends of the device, each 1 GiB (or a 20th of it) wide.
    let edge = (d.cap / 20).min(1 << 30) / K4 * K4;
    let bound = (d.full_stroke / 2.0).max(2.0 * d.hit4 + 1e-3);
    let mut end = 0usize;
    let waits = |run: &mut Runner, draw: &mut Draw, k: u64, end: &mut usize| {
        majority(run, |run, n| {
            let mut steps = Vec::new();
            for _ in 0..n {
                *end ^= 1;
                let (park, far) = match *end {
                    0 => (0, d.cap - edge),
                    _ => (d.cap - edge, 0),
                };
                steps.push(Step::read(draw.aligned(park, park + edge - K4, K4), K4));
                steps.push(Step::Idle(0.0));
                steps
                    .extend((0..k).map(|_| Step::read(draw.aligned(far, far + edge - K4, K4), K4)));
                // Time for the host to hand the reads to the drive.
                steps.push(Step::Pause((0.3e-3 + k as f64 * 10e-6) * run.scale));
                steps.push(Step::write(draw.aligned(0, d.cap - K4, K4), K4));
                steps.push(Step::Idle(0.0));
            }
            let t = run.run_at(&steps, k as u32 + 1)?;
            let per = k as usize + 2;
            Ok(t.chunks(per).map(|c| c[per - 1].latency > bound).collect())
        })
    };
    let (mut lo, mut hi) = (0u64, 1u64);
    while !waits(run, draw, hi, &mut end)? {
        lo = hi;
        if hi == DEPTH_MAX {
            twin.unknown(
                "queue_depth",
                format!("more than {DEPTH_MAX}: the host's own queue holds no more (a write behind {DEPTH_MAX} reads was taken at once)"),
            );
            return Ok(());
        }
        hi = (hi * 2).min(DEPTH_MAX);
    }
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if waits(run, draw, mid, &mut end)? {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    // `lo` reads and the write fit; `hi` reads fill the queue.
    let depth = hi;
    say(&format!("queue depth: {depth}"));
    twin.set(
        "queue_depth",
        depth.to_string(),
        format!(
            "a 4 KiB write behind {lo} outstanding reads is acknowledged at once, behind {hi} it waits for the first of them (majority of 5 to 9 tries each)"
        ),
    );
    Ok(())
}

/// The aging limit from the latencies of random reads at one queue depth, `service` apart on
/// average: a drive that reorders lets a read wait until it has aged, then serves it next, so
/// the latencies pile up from the limit on (the read in progress, then its own service): the
/// lowest latency `c` where the density over the next service is highest against the two
/// services before it, less one service. None when no such cliff stands out (at least 1% of
/// the reads, and three times the density before it).
pub fn age_from_cliff(latencies: &[f64], service: f64) -> Option<f64> {
    let mut l = latencies.to_vec();
    l.sort_by(f64::total_cmp);
    let n = l.len();
    let count = |a: f64, b: f64| l.partition_point(|&x| x < b) - l.partition_point(|&x| x < a);
    let least = (n / 100).max(8);
    let mut best: Option<(f64, f64)> = None;
    // A cliff has reads before it: not the first two services of latencies.
    let from = l.first()? + 2.0 * service;
    for &c in l.iter().filter(|&&c| c >= from) {
        let above = count(c, c + service);
        if above < least {
            continue;
        }
        let below = count(c - 2.0 * service, c) as f64 / 2.0;
        let ratio = above as f64 / below.max(0.5);
        if ratio >= 3.0 && best.is_none_or(|(r, _)| ratio > r) {
            best = Some((ratio, c));
        }
    }
    best.map(|(_, c)| c - service)
}

#[cfg(test)]
mod tests {
    use super::age_from_cliff;

    #[test]
    fn the_aging_limit_is_where_the_aged_reads_pile_up() {
        // Reads 10 ms apart: a thinning body up to 400 ms, then the aged ones from 410 ms
        // (the limit, 400 ms, then one service) to 470 ms, ten times as dense.
        let mut l: Vec<f64> = (0..400).map(|i| i as f64 * 1e-3).collect();
        l.extend((0..600).map(|i| 0.410 + i as f64 * 0.1e-3));
        let age = age_from_cliff(&l, 10e-3).unwrap();
        assert!((age - 0.400).abs() < 1e-3, "{age}");
        // No cliff: an even spread.
        let even: Vec<f64> = (0..1000).map(|i| i as f64 * 1e-3).collect();
        assert_eq!(age_from_cliff(&even, 10e-3), None);
    }
}
