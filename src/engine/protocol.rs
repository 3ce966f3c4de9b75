//! The state the threads of one stream phase share through atomics: when sampling begins and
//! when the phase ends. Under seed 000's protocol ([`super::Stop::AllHaveN`]) every stream
//! starts; once each has completed one I/O, sampling begins (time zero); each stream records
//! its next N I/Os; all keep issuing until every stream has N; then all stop. Under the other
//! stop conditions every I/O is sampled from the start, and the phase ends at its deadline or
//! when every stream has ended by itself.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

/// State shared by the threads of one phase.
pub struct Protocol {
    streams: usize,
    active: AtomicUsize,
    done: AtomicUsize,
    sampling: AtomicBool,
    t0_ns: AtomicU64,
    stop: AtomicBool,
    /// Whether every I/O is sampled from the start (all stop conditions but all-have-N).
    everything: bool,
    /// When the phase ends (ns since `base`), `u64::MAX` for none.
    deadline_ns: AtomicU64,
    /// Per stream: samples collected so far in this phase (read by the progress display).
    pub collected: Vec<AtomicUsize>,
    /// Monotonic base every thread measures from: the trial's time origin.
    pub base: Instant,
}

impl Protocol {
    /// Seed 000's protocol for `streams` streams, measuring from now.
    pub fn new(streams: usize) -> Self {
        Protocol::starting(streams, Instant::now(), false)
    }

    /// A phase of `streams` streams measuring from `base`; `everything` samples every I/O
    /// from the start instead of following seed 000's protocol.
    pub fn starting(streams: usize, base: Instant, everything: bool) -> Self {
        Protocol {
            streams,
            active: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            sampling: AtomicBool::new(false),
            t0_ns: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            everything,
            deadline_ns: AtomicU64::new(u64::MAX),
            collected: (0..streams).map(|_| AtomicUsize::new(0)).collect(),
            base,
        }
    }

    /// Nanoseconds of the monotonic clock since `base`.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.base.elapsed().as_nanos() as u64
    }

    /// The streams are about to be let go: a phase that samples everything starts sampling
    /// now, and one with a duration of `wall_s` seconds ends that long from now.
    pub fn release(&self, wall_s: Option<f64>) {
        let now = self.now_ns();
        if let Some(s) = wall_s {
            self.deadline_ns
                .store(now.saturating_add((s * 1e9) as u64), Ordering::Release);
        }
        if self.everything {
            self.t0_ns.store(now, Ordering::Release);
            self.sampling.store(true, Ordering::Release);
        }
    }

    /// Whether every I/O is sampled.
    #[inline]
    pub fn samples_everything(&self) -> bool {
        self.everything
    }

    /// When the phase ends, ns since `base` (`u64::MAX` for a phase without a duration).
    #[inline]
    pub fn deadline_ns(&self) -> u64 {
        self.deadline_ns.load(Ordering::Relaxed)
    }

    /// Whether the phase's deadline has passed at `now`.
    #[inline]
    pub fn past_deadline(&self, now: u64) -> bool {
        now >= self.deadline_ns.load(Ordering::Relaxed)
    }

    /// Nanoseconds left until the phase's deadline at `now` (`u64::MAX` without one).
    #[inline]
    pub fn left_ns(&self, now: u64) -> u64 {
        self.deadline_ns.load(Ordering::Relaxed).saturating_sub(now)
    }

    /// A stream finished its first I/O; under seed 000's protocol the last one to do so
    /// starts sampling at `now`.
    pub fn mark_active(&self, now: u64) {
        if self.active.fetch_add(1, Ordering::AcqRel) + 1 == self.streams && !self.everything {
            self.t0_ns.store(now, Ordering::Release);
            self.sampling.store(true, Ordering::Release);
        }
    }

    /// Whether sampling has begun; I/Os issued after this returns true are sampled.
    #[inline]
    pub fn sampling(&self) -> bool {
        self.sampling.load(Ordering::Acquire)
    }

    /// Time zero of sampling, ns since `base` (valid once [`Protocol::sampling`] is true).
    #[inline]
    pub fn t0_ns(&self) -> u64 {
        self.t0_ns.load(Ordering::Acquire)
    }

    /// A stream has its N samples (or has ended by itself).
    pub fn mark_done(&self) {
        self.done.fetch_add(1, Ordering::AcqRel);
    }

    /// Whether every stream has its N samples.
    #[inline]
    pub fn all_done(&self) -> bool {
        self.done.load(Ordering::Acquire) >= self.streams
    }

    /// Asks every stream to stop after its current I/O.
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    #[inline]
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// Samples collected so far over all streams.
    pub fn total_collected(&self) -> usize {
        self.collected
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_begins_when_every_stream_is_active_or_at_release() {
        let p = Protocol::new(2);
        p.release(None);
        p.mark_active(5);
        assert!(!p.sampling());
        p.mark_active(9);
        assert!(p.sampling() && p.t0_ns() == 9);
        assert!(!p.past_deadline(u64::MAX - 1));

        let q = Protocol::starting(2, Instant::now(), true);
        assert!(!q.sampling());
        q.release(Some(0.0));
        assert!(q.sampling());
        q.mark_active(u64::MAX);
        assert!(q.t0_ns() < u64::MAX, "activity does not move time zero");
        assert!(q.past_deadline(q.now_ns()));
    }
}
