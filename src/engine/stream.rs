//! The body of one stream thread in one phase: issue I/O in a loop, time it, and record samples
//! until the phase's stop condition. Everything here is the hot path: the I/O buffer and the
//! sample chunks are allocated before the loop, and there are no locks and no logging inside it
//! (a full chunk of samples is handed to the recorder once per [`super::record::CHUNK`]).

use super::backend::Backend;
use super::buffer::AlignedBuf;
use super::protocol::Protocol;
use super::record::StreamSink;
use super::rng::SplitMix64;
use super::sample::Sample;
use super::{Pacing, Pattern, Placement, Stop, StreamPlan};
use std::sync::atomic::Ordering;
use std::sync::Barrier;
use std::time::Duration;

/// Where a stream is in its region: kept from one phase to the next, so a stream that runs in
/// several phases continues its sequence (and its random offsets) where it left it.
#[derive(Debug, Clone)]
pub struct Cursor {
    rng: SplitMix64,
    next: u64,
    /// Seed of the stream: its offsets and its buffer's bytes derive from it.
    seed: u64,
}

impl Cursor {
    /// The stream's seed: its offsets, its buffer's bytes and its source derive from it.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The cursor of stream `index` of a plan seeded with `seed`.
    pub fn new(plan_seed: u64, index: usize) -> Cursor {
        let seed = plan_seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        Cursor {
            rng: SplitMix64::new(seed),
            next: 0,
            seed,
        }
    }

    /// The next slot of `slots`, or `None` when a one-pass pattern has covered its region.
    #[inline]
    fn advance(&mut self, pattern: Pattern, slots: u64, one_pass: bool) -> Option<u64> {
        match pattern {
            Pattern::Random => Some(self.rng.below(slots)),
            Pattern::Sequential | Pattern::Append => {
                if one_pass && self.next >= slots {
                    return None;
                }
                let s = self.next % slots;
                self.next += 1;
                Some(s)
            }
        }
    }
}

/// Everything one thread needs in one phase, moved into it.
pub struct Job {
    pub index: usize,
    pub plan: StreamPlan,
    pub placement: Placement,
    pub backend: Box<dyn Backend>,
    pub cursor: Cursor,
    pub sink: StreamSink,
    pub stop: Stop,
}

/// What a thread hands back after a phase.
pub struct Ended {
    pub cursor: Cursor,
    pub sink: StreamSink,
    /// Samples it took in this phase.
    pub samples: usize,
}

/// How far a stream has gone in a phase with a budget of its own.
struct Budget {
    stop: Stop,
    bytes: u64,
    ops: u64,
}

impl Budget {
    #[inline]
    fn spent(&self) -> bool {
        match self.stop {
            Stop::Bytes(b) => self.bytes >= b,
            Stop::Ops(n) => self.ops >= n,
            _ => false,
        }
    }
}

/// Runs one stream until its phase's stop condition or a stop request.
pub fn run(mut job: Job, protocol: &Protocol, barrier: &Barrier) -> Ended {
    let want = match job.stop {
        Stop::AllHaveN => job.plan.samples,
        _ => usize::MAX,
    };
    let io = job.plan.io_size as usize;
    let mut buf = AlignedBuf::new(io);
    buf.fill_random(job.cursor.seed ^ 0xA5A5);
    let slots = (job.placement.len / job.plan.io_size).max(1);
    let one_pass = job.stop == Stop::OpsEnd;
    let interval_ns = match job.plan.pacing {
        Pacing::Rate(r) if r > 0.0 => Some((1e9 / r) as u64),
        _ => None,
    };
    let mut intended = 0u64;
    let mut active = false;
    let mut taken = 0usize;
    let mut budget = Budget {
        stop: job.stop,
        bytes: 0,
        ops: 0,
    };
    let counter = &protocol.collected[job.index];

    barrier.wait();
    if interval_ns.is_some() {
        intended = protocol.now_ns();
    }
    loop {
        if protocol.stopped() || budget.spent() {
            break;
        }
        if want != usize::MAX && protocol.all_done() {
            break;
        }
        let Some(slot) = job.cursor.advance(job.plan.pattern, slots, one_pass) else {
            break;
        };
        let offset = job.placement.offset + slot * job.plan.io_size;
        let mut lag = 0;
        if interval_ns.is_some() {
            let now = protocol.now_ns();
            if now < intended {
                std::thread::sleep(Duration::from_nanos(intended - now));
            }
            lag = protocol.now_ns().saturating_sub(intended);
        }
        let sampling = protocol.sampling();
        let issue = protocol.now_ns();
        if protocol.past_deadline(issue) {
            break;
        }
        job.backend.submit(0, job.plan.op, offset, &mut buf, io);
        let c = job.backend.wait();
        let done = protocol.now_ns();
        if let Some(iv) = interval_ns {
            intended += iv;
        }
        if !active {
            active = true;
            protocol.mark_active(done);
        }
        let (bytes, errno) = match c.result {
            Ok(n) => (n, if n as usize == io { 0 } else { 5 }),
            Err(e) => (0, e),
        };
        // Attempted bytes, so a failing device cannot keep a byte budget from ending.
        budget.bytes += io as u64;
        budget.ops += 1;
        if sampling && taken < want {
            job.sink.push(Sample {
                op: job.plan.op,
                offset,
                bytes,
                issue_ns: issue,
                latency_ns: done - issue,
                lag_ns: lag,
                errno,
                phase: 0,
            });
            taken += 1;
            counter.store(taken, Ordering::Relaxed);
            if taken == want {
                protocol.mark_done();
            }
        }
    }
    if want == usize::MAX {
        protocol.mark_done();
    }
    Ended {
        cursor: job.cursor,
        sink: job.sink,
        samples: taken,
    }
}
