//! The body of one stream thread: issue I/O in a loop, time it, and record samples under the
//! protocol. Everything here is the hot path: the sample buffer is preallocated, there are no
//! locks, no allocation and no logging inside the loop.

use super::backend::Backend;
use super::buffer::AlignedBuf;
use super::protocol::Protocol;
use super::rng::SplitMix64;
use super::sample::{Sample, StreamSamples};
use super::{Pacing, Pattern, Placement, StreamPlan};
use std::sync::atomic::Ordering;
use std::sync::Barrier;
use std::time::Duration;

/// Everything one thread needs, moved into it.
pub struct Job {
    pub index: usize,
    pub plan: StreamPlan,
    pub placement: Placement,
    pub backend: Box<dyn Backend>,
    pub seed: u64,
}

/// Runs one stream until the protocol says all streams are done or a stop is requested.
pub fn run(mut job: Job, protocol: &Protocol, barrier: &Barrier) -> StreamSamples {
    let want = job.plan.samples;
    let io = job.plan.io_size as usize;
    let mut buf = AlignedBuf::new(io);
    buf.fill_random(job.seed ^ 0xA5A5);
    let mut samples: Vec<Sample> = Vec::with_capacity(want);
    let mut rng = SplitMix64::new(job.seed);
    let slots = (job.placement.len / job.plan.io_size).max(1);
    let mut next_seq = 0u64;
    let interval_ns = match job.plan.pacing {
        Pacing::Rate(r) if r > 0.0 => Some((1e9 / r) as u64),
        _ => None,
    };
    let mut intended = 0u64;
    let mut active = false;
    let counter = &protocol.collected[job.index];

    barrier.wait();
    if interval_ns.is_some() {
        intended = protocol.now_ns();
    }
    while !protocol.stopped() && !protocol.all_done() {
        let slot = match job.plan.pattern {
            Pattern::Random => rng.below(slots),
            Pattern::Sequential => {
                let s = next_seq % slots;
                next_seq += 1;
                s
            }
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
        if sampling && samples.len() < want {
            let (bytes, errno) = match c.result {
                Ok(n) => (n, if n as usize == io { 0 } else { 5 }),
                Err(e) => (0, e),
            };
            samples.push(Sample {
                offset,
                bytes,
                issue_ns: issue.saturating_sub(protocol.t0_ns()),
                latency_ns: done - issue,
                lag_ns: lag,
                errno,
            });
            counter.store(samples.len(), Ordering::Relaxed);
            if samples.len() == want {
                protocol.mark_done();
            }
        }
    }
    StreamSamples {
        name: job.plan.name,
        role: job.plan.role,
        op: job.plan.op,
        samples,
    }
}
