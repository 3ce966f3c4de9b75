//! How many bytes a disk's write-back buffer holds: bursts of scattered writes after idle
//! until one waits, counting what the drive had destaged by then. A burst of 1 MiB writes
//! finds the buffer to within half a MiB; bursts of smaller writes, sized so that the buffer
//! still runs out of bytes before it runs out of commands, then place its edge to within half
//! of their size.

use super::{Disk, K4, MIB};
use crate::probe::character::stats::{median, Draw};
use crate::probe::character::twin::size_text;
use crate::probe::character::{CharError, Progress};
use crate::probe::script::{Runner, Step, Timed};

/// Where a burst's writes began to wait.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fill {
    /// The first write that waited (from 0).
    pub waited: usize,
    /// The destages complete when it arrived.
    pub destaged: usize,
    /// The writes the buffer held then: its bytes are at least that many writes and short
    /// of one more.
    pub held: usize,
}

impl Fill {
    /// The buffer's bytes, for writes of `size`: the middle of what the fill allows.
    pub fn bytes(&self, size: u64) -> f64 {
        (self.held as f64 + 0.5) * size as f64
    }
}

/// A burst of writes after idle: the writes, and the flush that closed it.
#[derive(Debug, Clone)]
pub struct Burst {
    pub writes: Vec<Timed>,
    /// The closing flush's time, seconds: on a drive that waits for its buffer, the
    /// destage of every write the full buffer held.
    pub flush: f64,
    /// For each burst run again before this one, its first writes' median.
    pub again: Vec<f64>,
}

/// The burst's fill, its writes of `size`: the first that waited ([`waited`], against
/// `answer`, what the buffer takes to answer one), and the destages complete before it. A
/// write that found the buffer full is acknowledged when a destage completes, and each one
/// after it when the next does: so the time from the first write's acknowledgement (when the
/// first destage begins) to the waiting write's is a whole number of destages. Their length is
/// the closing flush's time over the writes the buffer held, where `flush_waits` (the flush
/// drains the buffer from full to empty, as the burst filled it from empty to full: a drive
/// that destages the nearest write first destages faster the more it holds, so the gaps
/// between the acknowledgements after the wait, with the buffer full, would count too many),
/// else the mean of those gaps (or `fallback` where fewer than 8 follow the wait).
pub fn fill(b: &Burst, answer: f64, fallback: f64, flush_waits: bool) -> Option<Fill> {
    let w = &b.writes;
    let i = waited(w, answer)?;
    let acks: Vec<f64> = w[i..].iter().map(|t| t.done()).collect();
    let gaps: Vec<f64> = acks.windows(2).map(|p| p[1] - p[0]).collect();
    let full = if gaps.len() >= 8 {
        // The mean of the gaps a host's delay did not lengthen past three times their median.
        let m = median(&gaps);
        let kept: Vec<f64> = gaps.iter().copied().filter(|g| *g <= 3.0 * m).collect();
        kept.iter().sum::<f64>() / kept.len() as f64
    } else {
        fallback
    };
    let span = w[i].done() - w[0].done();
    let at = |destage: f64| {
        let through = (span / destage).round().max(1.0) as usize;
        (through - 1).min(i)
    };
    let mut destaged = at(full);
    if flush_waits && b.flush > (i - destaged) as f64 * full {
        for _ in 0..4 {
            destaged = at(b.flush / (i - destaged).max(1) as f64);
        }
    }
    Some(Fill {
        waited: i,
        destaged,
        held: i - destaged,
    })
}

/// The first write of a burst that waited: its latency, and the next two's, more than three
/// times the median of the first four (the buffer's own answer time, or `base` if that is
/// more) and a millisecond more. Once the buffer is full every write waits, so one write the
/// host delayed is not taken for it.
pub fn waited(w: &[Timed], base: f64) -> Option<usize> {
    let b = median(
        &w[..4.min(w.len())]
            .iter()
            .map(|t| t.latency)
            .collect::<Vec<_>>(),
    )
    .max(base);
    let slow = |t: &Timed| t.latency > 3.0 * b + 1e-3;
    (0..w.len().saturating_sub(2)).find(|&i| w[i..i + 3].iter().all(slow))
}

/// One burst: a flush, `idle` seconds, `count` scattered writes of `size`, a flush. A burst
/// whose first writes already take three times what the buffer answers in and a millisecond
/// found the buffer not empty after the flush and the idle (in two runs of five on a served
/// drive, the first four as slow as a destage): it is run again after an idle four times as
/// long, up to twice.
pub fn burst(
    run: &mut Runner,
    d: &Disk,
    draw: &mut Draw,
    (size, count): (u64, usize),
    mut idle: f64,
    say: &mut Progress,
) -> Result<Burst, CharError> {
    let answer = answer(d, size);
    let mut again = Vec::new();
    loop {
        let mut steps = vec![Step::flush(), Step::Idle(idle)];
        steps.extend((0..count).map(|_| Step::write(draw.aligned(0, d.cap - 2 * MIB, K4), size)));
        steps.push(Step::flush());
        let mut t = run.run(&steps)?;
        let flush = t.pop().map_or(0.0, |f| f.latency);
        t.remove(0);
        let first = median(
            &t[..4.min(t.len())]
                .iter()
                .map(|t| t.latency)
                .collect::<Vec<_>>(),
        );
        if first <= 3.0 * answer + 1e-3 || again.len() == 2 {
            return Ok(Burst {
                writes: t,
                flush,
                again,
            });
        }
        again.push(first);
        say(&format!(
            "write-back: the first {} writes after {idle} s idle took {:.3} ms at the median, where the buffer answers in {:.3} ms: again after {} s",
            size_text(size as f64),
            first * 1e3,
            answer * 1e3,
            idle * 4.0
        ));
        idle *= 4.0;
    }
}

/// What the buffer takes to answer a write of `size`: a buffer hit and the rest at the
/// interface rate.
pub fn answer(d: &Disk, size: u64) -> f64 {
    d.hit4 + (size - K4) as f64 / d.iface
}

/// A destage of a scattered write of `size`, as the reads found it: an access and the
/// transfer at the mean media rate.
pub fn destage(d: &Disk, size: u64) -> f64 {
    d.access + size as f64 / d.mean_rate()
}

/// The write size that places the edge of a buffer of about `bytes` most finely while the
/// buffer still runs out of bytes first: the smallest power of two from 64 KiB up whose
/// burst (the buffer's bytes and two fifths more) needs no more than three quarters of
/// `slots` commands ([`SLOTS_BURST`] where the command count was not found). None where that
/// is 1 MiB or more: the 1 MiB burst was as fine.
pub fn finer(bytes: f64, slots: Option<usize>) -> Option<u64> {
    let slots = slots.unwrap_or(SLOTS_BURST) as f64;
    (16..20)
        .map(|b| 1u64 << b)
        .find(|s| bytes * 1.4 / *s as f64 <= 0.75 * slots)
}

/// The scattered 4 KiB writes of the burst that counts the buffer's commands: a drive that
/// took them all without a wait holds at least as many.
pub const SLOTS_BURST: usize = 600;

/// Bursts a finer burst repeats; the buffer's bytes are their median.
pub const FINER: usize = 3;
