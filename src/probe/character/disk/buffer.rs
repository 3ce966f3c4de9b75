//! The read buffer: its answer time (and from it the interface rate and the command
//! overhead), the read-ahead, the segments and a segment's size. Each question "is this read
//! answered from the buffer?" is asked at several places at once and decided by their
//! majority ([`super::majority`]).

use super::{majority, Disk, K4, MIB};
use crate::probe::character::stats::{median, Draw};
use crate::probe::character::twin::{mbs_text, ms_text, size_text, Twin};
use crate::probe::character::{CharError, Progress};
use crate::probe::script::{Runner, Step};

/// Re-reads of what was just read: the buffer's answer time for 4 KiB and 256 KiB, hence the
/// interface rate and the command overhead (which includes the host's own path).
pub fn hits(
    run: &mut Runner,
    d: &mut Disk,
    draw: &mut Draw,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(), CharError> {
    let big = 256 << 10;
    let mut steps = Vec::new();
    for _ in 0..32 {
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
    // The twin's, net of the emulator's own path, which it adds when it serves the twin: the
    // path after as long a wait as these hits had (the read before each, from its issue).
    let waited = |k: usize| {
        median(
            &t.chunks(4)
                .map(|g| g[k].issue - g[k - 1].issue)
                .collect::<Vec<_>>(),
        )
    };
    let h = d.host.at(waited(1), waited(3));
    let iface = (big - K4) as f64 / (hbig - d.hit4 - h.per_byte * (big - K4) as f64).max(1e-6);
    let overhead = (d.hit4 - h.at(K4) - K4 as f64 / iface).max(0.0);
    twin.set(
        "iface_rate",
        mbs_text(iface),
        format!(
            "re-reads of 256 KiB ({:.3} ms) against 4 KiB ({:.3} ms) answered from the buffer, 32 each (medians), less the emulator's own path per byte ({:.0} µs per MiB)",
            hbig * 1e3,
            d.hit4 * 1e3,
            h.per_byte * MIB as f64 * 1e6
        ),
    );
    twin.set(
        "overhead",
        ms_text(overhead),
        format!(
            "a 4 KiB buffer hit less its transfer at the interface rate and the emulator's own path ({:.1} µs after a wait of {:.1} ms, as these hits waited), which serves the twin",
            h.at(K4) * 1e6,
            waited(1) * 1e3
        ),
    );
    Ok(())
}

/// Whether a read `gap` past a just-read sector is in the buffer after the drive was left
/// idle long enough to read that far ahead (at 25 MB/s, slower than any disk's media).
fn hit_after(run: &mut Runner, d: &Disk, draw: &mut Draw, gap: u64) -> Result<bool, CharError> {
    let idle = 0.02 + gap as f64 / 25e6;
    majority(run, |run, n| {
        let mut steps = Vec::new();
        for _ in 0..n {
            let x = draw.aligned(0, d.cap - gap - 2 * MIB, MIB);
            steps.extend([Step::read(x, K4), Step::Idle(idle), Step::read(x + gap, K4)]);
        }
        let t = run.run(&steps)?;
        Ok(t.iter()
            .skip(1)
            .step_by(2)
            .map(|t| d.is_hit(t.latency))
            .collect())
    })
}

/// Read-ahead: after a read and an idle time, is a read `gap` further on in the buffer?
/// Doubling, then bisection to 4 KiB.
pub fn readahead(
    run: &mut Runner,
    d: &mut Disk,
    draw: &mut Draw,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(), CharError> {
    let mut lo = 0; // largest gap known to hit
    let mut hi = K4;
    while hi <= 64 * MIB && hit_after(run, d, draw, hi)? {
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
        if hit_after(run, d, draw, mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    d.readahead = lo;
    say(&format!("read-ahead: {}", size_text(lo as f64)));
    if lo == 0 {
        twin.set(
            "readahead",
            "0",
            "a 4 KiB read just past a just-read sector was not answered from the buffer after idle (majority of 5 to 9 places)",
        );
    } else {
        twin.set(
            "readahead",
            size_text(lo as f64),
            "the furthest 4 KiB read answered from the buffer after a read and an idle time to read that far ahead (majority of 5 to 9 places each, doubling then bisection)",
        );
    }
    Ok(())
}

/// Segments: `k` scattered reads, then the first again: a hit while k <= segments. Then a
/// segment's size: a sequential run of `len` then its start again: a hit while len plus the
/// read-ahead fits a segment.
pub fn segments(
    run: &mut Runner,
    d: &mut Disk,
    draw: &mut Draw,
    twin: &mut Twin,
    say: &mut Progress,
) -> Result<(), CharError> {
    let held = |run: &mut Runner, draw: &mut Draw, k: u64| -> Result<bool, CharError> {
        let span = d.cap / (k + 1);
        majority(run, |run, n| {
            let mut steps = Vec::new();
            for _ in 0..n {
                let first = Step::read(draw.aligned(0, span - MIB, K4), K4);
                steps.push(first);
                steps.extend(
                    (1..k)
                        .map(|i| Step::read(draw.aligned(i * span, (i + 1) * span - MIB, K4), K4)),
                );
                steps.push(first);
            }
            let t = run.run(&steps)?;
            let per = k as usize + 1;
            Ok(t.chunks(per)
                .map(|c| d.is_hit(c[per - 1].latency))
                .collect())
        })
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
    d.segments = segs;
    twin.set(
        "segments",
        segs.to_string(),
        format!(
            "{segs} scattered reads are all held (the first re-read from the buffer), {} are not (majority of 5 to 9 tries each)",
            segs + 1
        ),
    );
    // A segment's size.
    let io = 128 << 10;
    let fits = |run: &mut Runner, draw: &mut Draw, len: u64| -> Result<bool, CharError> {
        majority(run, |run, n| {
            let mut steps = Vec::new();
            for _ in 0..n {
                let x = draw.aligned(0, d.cap - len - 2 * MIB, MIB);
                steps.extend((0..len / io).map(|i| Step::read(x + i * io, io)));
                steps.push(Step::read(x, K4));
            }
            let t = run.run(&steps)?;
            let per = (len / io) as usize + 1;
            Ok(t.chunks(per)
                .map(|c| d.is_hit(c[per - 1].latency))
                .collect())
        })
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
            "segments x a segment's size: the longest sequential run whose start is still held ({}, 128 KiB steps, majority of 5 to 9 tries) plus the read-ahead",
            size_text(lo as f64)
        ),
    );
    Ok(())
}
