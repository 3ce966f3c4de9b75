//! The start-and-sampling protocol of seed 000, shared by all stream threads through atomics:
//! every stream starts; once each has completed one I/O, sampling begins (time zero); each
//! stream records its next N I/Os; all keep issuing until every stream has N; then all stop.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

/// State shared by the threads of one run.
pub struct Protocol {
    streams: usize,
    active: AtomicUsize,
    done: AtomicUsize,
    sampling: AtomicBool,
    t0_ns: AtomicU64,
    stop: AtomicBool,
    /// Per stream: samples collected so far (read by the progress display).
    pub collected: Vec<AtomicUsize>,
    /// Monotonic base every thread measures from.
    pub base: Instant,
}

impl Protocol {
    pub fn new(streams: usize) -> Self {
        Protocol {
            streams,
            active: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            sampling: AtomicBool::new(false),
            t0_ns: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            collected: (0..streams).map(|_| AtomicUsize::new(0)).collect(),
            base: Instant::now(),
        }
    }

    /// Nanoseconds of the monotonic clock since `base`.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.base.elapsed().as_nanos() as u64
    }

    /// A stream finished its first I/O; the last one to do so starts sampling at `now`.
    pub fn mark_active(&self, now: u64) {
        if self.active.fetch_add(1, Ordering::AcqRel) + 1 == self.streams {
            self.t0_ns.store(now, Ordering::Release);
            self.sampling.store(true, Ordering::Release);
        }
    }

    /// Whether sampling has begun; I/Os issued after this returns true are sampled.
    #[inline]
    pub fn sampling(&self) -> bool {
        self.sampling.load(Ordering::Acquire)
    }

    /// Time zero of sampling (valid once [`Protocol::sampling`] is true).
    #[inline]
    pub fn t0_ns(&self) -> u64 {
        self.t0_ns.load(Ordering::Acquire)
    }

    /// A stream has its N samples.
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
