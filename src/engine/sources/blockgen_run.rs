//! The body of one stream thread whose block I/O comes from its own [`IoGen`]: keep up to
//! the backend's queue depth of the generator's I/Os in flight, time each from its issue to its
//! completion, sample every one, hand each completion back to the generator, until the
//! generator ends, the phase's deadline passes or a stop is requested; then wait for what is
//! still in flight. The hot path allocates nothing: slot buffers, flights and the sample sink
//! are ready before the barrier.

use super::blockgen::{Io, IoGen, Next};
use crate::engine::backends::backend::Backend;
use crate::engine::buffer::AlignedBuf;
use crate::engine::protocol::Protocol;
use crate::engine::samples::record::StreamSink;
use crate::engine::samples::sample::Sample;
use crate::engine::Stop;
use std::sync::atomic::Ordering;
use std::sync::Barrier;
use std::time::Duration;

/// Everything a generated stream's thread needs in one phase, moved into it.
pub struct GenJob {
    /// Its index among the phase's streams.
    pub index: usize,
    /// Its index in the plan.
    pub stream: usize,
    pub phase: String,
    pub gen: Box<dyn IoGen>,
    pub backend: Box<dyn Backend>,
    /// One buffer per slot of the backend's queue, registered with it.
    pub bufs: Vec<AlignedBuf>,
    pub sink: StreamSink,
    pub stop: Stop,
}

/// What the thread hands back.
pub struct GenEnded {
    pub gen: Box<dyn IoGen>,
    pub sink: StreamSink,
    pub samples: usize,
}

/// An I/O in flight on a slot.
#[derive(Clone, Copy, Default)]
struct Flight {
    io: Io,
    issue: u64,
}

/// What a generated stream's thread keeps while it runs: its slots and its samples.
struct Slots {
    index: usize,
    flights: Vec<Flight>,
    free: Vec<usize>,
    sink: StreamSink,
    taken: usize,
    active: bool,
    /// The I/O priority each slot's backend carries.
    prio: Vec<u16>,
}

impl Slots {
    /// Records one completion: hands it to the generator, samples it, frees its slot.
    #[inline]
    fn complete(
        &mut self,
        c: crate::engine::backends::backend::Completion,
        gen: &mut dyn IoGen,
        bufs: &[AlignedBuf],
        protocol: &Protocol,
    ) {
        let done = protocol.now_ns();
        let f = self.flights[c.slot];
        self.free.push(c.slot);
        if !self.active {
            self.active = true;
            protocol.mark_active(done);
        }
        let result = gen.done(&f.io, c.result, bufs[c.slot].as_slice(), f.issue, done);
        let (bytes, errno) = match result {
            Ok(n) => (n, if n == u64::from(f.io.len) { 0 } else { 5 }),
            Err(e) => (0, e),
        };
        self.sink.push(Sample {
            op: f.io.op,
            offset: f.io.offset,
            bytes,
            issue_ns: f.issue,
            latency_ns: done - f.issue,
            lag_ns: f.io.lag_ns,
            errno,
            phase: 0,
            file: f.io.file,
            asked: f.io.len,
        });
        self.taken += 1;
        protocol.collected[self.index].store(self.taken, Ordering::Relaxed);
    }
}

/// Runs one generated stream through its phase.
pub fn run(job: GenJob, protocol: &Protocol, barrier: &Barrier) -> GenEnded {
    let GenJob {
        index,
        stream: _,
        phase,
        mut gen,
        mut backend,
        mut bufs,
        sink,
        stop,
    } = job;
    let depth = backend.queue_depth().min(bufs.len()).max(1);
    let mut s = Slots {
        index,
        flights: vec![Flight::default(); depth],
        free: (0..depth).rev().collect(),
        sink,
        taken: 0,
        active: false,
        prio: vec![0; depth],
    };
    let (mut ops, mut bytes) = (0u64, 0u64);
    backend.start();
    barrier.wait();
    gen.begin(&phase, protocol.now_ns());
    let mut ending = false;
    // Completions to take before asking the generator again.
    let mut reap_to: Option<usize> = None;
    loop {
        while !ending && reap_to.is_none() {
            let Some(&slot) = s.free.last() else { break };
            let now = protocol.now_ns();
            let spent = match stop {
                Stop::Ops(n) => ops >= n,
                Stop::Bytes(b) => bytes >= b,
                _ => false,
            };
            if protocol.stopped() || spent || protocol.past_deadline(now) {
                ending = true;
                break;
            }
            let in_flight = depth - s.free.len();
            match gen.next(now, in_flight, bufs[slot].as_mut_slice()) {
                Next::Io(io) => {
                    s.free.pop();
                    if io.prio != s.prio[slot] {
                        backend.set_prio(slot, io.prio);
                        s.prio[slot] = io.prio;
                    }
                    let issue = protocol.now_ns();
                    s.flights[slot] = Flight { io, issue };
                    backend.submit_to(
                        io.file as usize,
                        slot,
                        io.op,
                        io.offset,
                        &mut bufs[slot],
                        io.len as usize,
                    );
                    ops += 1;
                    bytes += u64::from(io.len);
                }
                Next::Wait(until) if until <= now => {}
                Next::Wait(until) if in_flight > 0 => {
                    backend.flush();
                    if let Some(c) = backend.wait_for(until - now) {
                        s.complete(c, &mut *gen, &bufs, protocol);
                    }
                }
                Next::Wait(until) => {
                    let left = protocol.left_ns(now);
                    std::thread::sleep(Duration::from_nanos(
                        (until - now).min(left).min(50_000_000),
                    ));
                }
                Next::Reap(n) => {
                    if in_flight > n {
                        reap_to = Some(n);
                    }
                }
                Next::End => ending = true,
            }
        }
        let in_flight = depth - s.free.len();
        if in_flight == 0 || reap_to.is_some_and(|n| in_flight <= n) {
            reap_to = None;
            if in_flight == 0 && ending {
                break;
            }
            continue;
        }
        backend.flush();
        let c = backend.wait();
        s.complete(c, &mut *gen, &bufs, protocol);
    }
    protocol.mark_done();
    drop(backend);
    drop(bufs);
    GenEnded {
        gen,
        sink: s.sink,
        samples: s.taken,
    }
}
