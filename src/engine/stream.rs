//! The body of one stream thread in one phase: keep up to the backend's queue depth of I/Os in
//! flight, time each from its issue to its completion, and record samples until the phase's
//! stop condition; then wait for what is still in flight. Everything here is the hot path: the
//! slot buffers and the sample chunks are allocated before the loop, and there are no locks and
//! no logging inside it (a full chunk of samples is handed to the recorder once per
//! [`super::samples::record::CHUNK`]).

use super::backends::backend::{Backend, Completion};
use super::buffer::AlignedBuf;
use super::protocol::Protocol;
use super::rng::SplitMix64;
use super::samples::record::StreamSink;
use super::samples::sample::{Op, Sample};
use super::{Pacing, Pattern, Placement, Seal, Stop, StreamPlan};
use crate::verify::{seal_block, BlockHeader};
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
    /// Writes sealed with a verify header so far (the next one's `numberio`).
    sealed: u64,
}

impl Cursor {
    /// The stream's seed: its offsets, its buffer's bytes and its source derive from it.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The cursor of stream `index` of a plan seeded with `seed`. The stream's seed is a hash
    /// of both: SplitMix64 steps its state by the same constant the index is multiplied by,
    /// so unhashed seeds `plan ^ index * C` that equal `plan + index * C` (plan seed 0; a
    /// job's `randseed` xored back in) gave every stream the first one's offsets, one draw on.
    pub fn new(plan_seed: u64, index: usize) -> Cursor {
        let seed = SplitMix64::new(plan_seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .next_u64();
        Cursor {
            rng: SplitMix64::new(seed),
            next: 0,
            seed,
            sealed: 0,
        }
    }

    /// Seals the write about to go to `offset` (fio's header every interval, stamped now).
    #[inline]
    pub(super) fn seal(
        &mut self,
        seal: Seal,
        index: usize,
        offset: u64,
        buf: &mut [u8],
        protocol: &Protocol,
    ) {
        let now = protocol.now_ns();
        let base = BlockHeader {
            len: 0,
            rand_seed: self.seed,
            offset,
            time_sec: (now / 1_000_000_000) as u32,
            time_nsec: (now % 1_000_000_000) as u32,
            thread: index as u16,
            numberio: self.sealed as u16,
        };
        seal_block(buf, seal.interval as usize, &base, seal.checksum);
        self.sealed += 1;
    }

    /// The next slot of `slots`, or `None` when a one-pass pattern has covered its region.
    #[inline]
    pub(super) fn advance(&mut self, pattern: Pattern, slots: u64, one_pass: bool) -> Option<u64> {
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
    /// One I/O buffer per slot of the backend's queue, registered with it.
    pub bufs: Vec<AlignedBuf>,
    pub cursor: Cursor,
    pub sink: StreamSink,
    pub stop: Stop,
    /// The engine's time scale: a real-time stream's schedule runs in the device model's time.
    pub time_scale: f64,
}

/// What a thread hands back after a phase.
pub struct Ended {
    pub cursor: Cursor,
    pub sink: StreamSink,
    /// Samples it took in this phase.
    pub samples: usize,
}

/// The slot buffers of a stream doing `io`-byte I/Os at queue depth `depth`, filled with the
/// stream's pseudo-random bytes, or left zero (`zeros`).
pub fn slot_buffers(cursor: &Cursor, io: usize, depth: usize, zeros: bool) -> Vec<AlignedBuf> {
    (0..depth.max(1))
        .map(|k| {
            let mut b = AlignedBuf::new(io);
            if !zeros {
                b.fill_random(cursor.seed ^ 0xA5A5 ^ ((k as u64) << 32));
            }
            b
        })
        .collect()
}

/// How far a stream has gone in a phase with a budget of its own.
struct Budget {
    stop: Stop,
    /// The stream's own byte budget, 0 for none.
    own: u64,
    bytes: u64,
    ops: u64,
}

impl Budget {
    #[inline]
    fn spent(&self) -> bool {
        if self.own > 0 && self.bytes >= self.own {
            return true;
        }
        match self.stop {
            Stop::Bytes(b) => self.bytes >= b,
            Stop::Ops(n) => self.ops >= n,
            _ => false,
        }
    }
}

/// An I/O in flight on a slot.
#[derive(Clone, Copy, Default)]
struct Flight {
    op: Op,
    /// Bytes asked for (0 for an fsync).
    len: u64,
    offset: u64,
    issue: u64,
    lag: u64,
    sampled: bool,
}

/// The state of one stream's run through a phase.
struct Run<'a> {
    protocol: &'a Protocol,
    want: usize,
    taken: usize,
    active: bool,
    flights: Vec<Flight>,
    free: Vec<usize>,
}

impl Run<'_> {
    /// Records a completion: frees its slot and samples it when it was issued while sampling.
    #[inline]
    fn complete(&mut self, c: Completion, sink: &mut StreamSink, index: usize) {
        let done = self.protocol.now_ns();
        let f = self.flights[c.slot];
        self.free.push(c.slot);
        if !self.active {
            self.active = true;
            self.protocol.mark_active(done);
        }
        if !(f.sampled && self.taken < self.want) {
            return;
        }
        let times = (f.issue, done, f.lag);
        sink.push(Sample::completed(f.op, f.offset, f.len, times, c.result));
        self.taken += 1;
        self.protocol.collected[index].store(self.taken, Ordering::Relaxed);
        if self.taken == self.want {
            self.protocol.mark_done();
        }
    }
}

/// Runs one stream until its phase's stop condition or a stop request, then waits for the
/// I/Os still in flight.
pub fn run(job: Job, protocol: &Protocol, barrier: &Barrier) -> Ended {
    let Job {
        index,
        plan,
        placement,
        mut backend,
        mut bufs,
        mut cursor,
        mut sink,
        stop,
        time_scale: _,
    } = job;
    let want = match stop {
        Stop::AllHaveN => plan.samples,
        _ => usize::MAX,
    };
    let io = plan.io_size as usize;
    let depth = backend.queue_depth().min(bufs.len()).max(1);
    let start = placement.offset + plan.io.skip.min(placement.len);
    let slots = (placement.len.saturating_sub(plan.io.skip) / plan.io_size).max(1);
    let one_pass = stop == Stop::OpsEnd;
    let interval_ns = match plan.pacing {
        Pacing::Rate(r) if r > 0.0 => Some((1e9 / r) as u64),
        _ => None,
    };
    let mut intended = 0u64;
    let mut budget = Budget {
        stop,
        own: plan.io.bytes,
        bytes: 0,
        ops: 0,
    };
    let mut run = Run {
        protocol,
        want,
        taken: 0,
        active: false,
        flights: vec![Flight::default(); depth],
        free: (0..depth).rev().collect(),
    };

    backend.start();
    barrier.wait();
    if interval_ns.is_some() {
        intended = protocol.now_ns();
    }
    let mut mixer = SplitMix64::new(cursor.seed ^ 0x0B1E_55ED_F00D);
    let (mut writes, mut fsync_due) = (0u64, false);
    let mut ending = false;
    loop {
        while !ending {
            let Some(&slot) = run.free.last() else { break };
            if protocol.stopped() || budget.spent() || (want != usize::MAX && protocol.all_done()) {
                ending = true;
                break;
            }
            if fsync_due {
                // Unpaced, between the writes it follows and those after it.
                fsync_due = false;
                run.free.pop();
                run.flights[slot] = Flight {
                    op: Op::Fsync,
                    len: 0,
                    offset: 0,
                    issue: protocol.now_ns(),
                    lag: 0,
                    sampled: protocol.sampling(),
                };
                backend.submit(slot, Op::Fsync, 0, &mut bufs[slot], 0);
                continue;
            }
            let mut lag = 0;
            if let Some(iv) = interval_ns {
                let now = protocol.now_ns();
                if now < intended {
                    if run.free.len() < depth {
                        // I/Os in flight: take their completions while waiting.
                        if let Some(c) = backend.wait_for(intended - now) {
                            run.complete(c, &mut sink, index);
                        }
                        continue;
                    }
                    std::thread::sleep(Duration::from_nanos(intended - now));
                }
                lag = protocol.now_ns().saturating_sub(intended);
                intended += iv;
            }
            let Some(s) = cursor.advance(plan.pattern, slots, one_pass) else {
                ending = true;
                break;
            };
            let offset = start + s * plan.io_size;
            let op = match plan.io.mix {
                Some(reads) if mixer.below(100) < u64::from(reads) => Op::Read,
                Some(_) => Op::Write,
                None => plan.op,
            };
            if op == Op::Write {
                if let Some(seal) = plan.io.seal {
                    cursor.seal(
                        seal,
                        index,
                        offset,
                        &mut bufs[slot].as_mut_slice()[..io],
                        protocol,
                    );
                }
            }
            let sampled = protocol.sampling();
            let issue = protocol.now_ns();
            if protocol.past_deadline(issue) {
                ending = true;
                break;
            }
            run.free.pop();
            run.flights[slot] = Flight {
                op,
                len: io as u64,
                offset,
                issue,
                lag,
                sampled,
            };
            backend.submit(slot, op, offset, &mut bufs[slot], io);
            // Attempted bytes, so a failing device cannot keep a byte budget from ending.
            budget.bytes += io as u64;
            budget.ops += 1;
            if op == Op::Write && plan.io.fsync_every > 0 {
                writes += 1;
                fsync_due = writes % plan.io.fsync_every == 0;
            }
        }
        if run.free.len() == depth {
            break;
        }
        let c = backend.wait();
        run.complete(c, &mut sink, index);
    }
    if want == usize::MAX {
        protocol.mark_done();
    }
    // The ring goes before the buffers it may have registered.
    drop(backend);
    drop(bufs);
    Ended {
        cursor,
        sink,
        samples: run.taken,
    }
}

#[cfg(test)]
mod seed_tests {
    use super::*;

    /// Regression: fio-rand-RW.fio's four clones drew the same offsets, one I/O apart, and
    /// waited on each other's page reads (0.67x fio's IOPS).
    #[test]
    fn no_two_streams_draw_one_sequence_shifted() {
        for plan in [0u64, 1, 137, u64::MAX] {
            let draws = |i: usize, xor: u64| {
                let mut r = SplitMix64::new(Cursor::new(plan, i).seed() ^ xor);
                (0..64).map(|_| r.below(1 << 20)).collect::<Vec<u64>>()
            };
            // A job xors its randseed (the plan's seed) into the stream's seed.
            for xor in [0, plan] {
                let first = draws(0, xor);
                for i in 1..8 {
                    let other = draws(i, xor);
                    let shared = other.iter().filter(|o| first.contains(o)).count();
                    assert!(shared < 4, "plan {plan}, stream {i}: {shared} of 64 shared");
                }
            }
        }
    }
}
