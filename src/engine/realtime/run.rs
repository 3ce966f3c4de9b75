//! The body of a real-time stream's thread: its buffer model runs live on the stream's clock
//! (the device model's time since the phase's release), and the thread issues a write as soon
//! as a chunk is ready (a read as soon as there is room for one), each sample carrying how late
//! it was issued against the time the chunk became ready (`lag_ns`). Between I/Os the thread
//! sleeps, or waits for a completion, until the model says the next chunk is due. The hot path
//! allocates nothing: the model's ring and the slot table are made before the loop.

use super::model::{Model, Tally};
use super::{Realtime, Role};
use crate::engine::backends::backend::Completion;
use crate::engine::protocol::Protocol;
use crate::engine::samples::record::StreamSink;
use crate::engine::samples::sample::{Op, Sample};
use crate::engine::stream::{Ended, Job};
use crate::engine::Stop;
use std::sync::atomic::Ordering;
use std::sync::Barrier;
use std::time::Duration;

/// The longest a thread sleeps at once, so a stop request is seen within it (wall ns).
const MAX_SLEEP_NS: u64 = 100_000_000;

/// The stream's clock: wall ns since the trial's origin to the device model's ns since the
/// phase's release, the same arithmetic the samples' times go through (scaled issue plus
/// scaled latency, less the phase's zero as result.json records it), so the analysis replays
/// the model on exactly the times the thread saw.
#[derive(Clone, Copy)]
struct Clock {
    scale: f64,
    zero_model: u64,
}

impl Clock {
    fn new(scale: f64, zero_wall: u64) -> Clock {
        Clock {
            scale,
            zero_model: crate::engine::samples::set::zero_model_ns(zero_wall, scale),
        }
    }

    #[inline]
    fn scaled(&self, wall: u64) -> u64 {
        if self.scale == 1.0 {
            wall
        } else {
            (wall as f64 * self.scale) as u64
        }
    }

    /// Model time of the wall instant `wall`.
    #[inline]
    fn model(&self, wall: u64) -> u64 {
        self.scaled(wall).saturating_sub(self.zero_model)
    }

    /// Model time of the completion of an I/O issued at `issue` and done at `done` (wall).
    #[inline]
    fn done(&self, issue: u64, done: u64) -> u64 {
        (self.scaled(issue) + self.scaled(done - issue)).saturating_sub(self.zero_model)
    }

    /// The first wall instant at or after model time `m`.
    #[inline]
    fn wall(&self, m: u64) -> u64 {
        let m = m + self.zero_model;
        if self.scale == 1.0 {
            m
        } else {
            (m as f64 / self.scale).ceil() as u64 + 1
        }
    }
}

/// An I/O in flight on a slot.
#[derive(Clone, Copy, Default)]
struct Flight {
    offset: u64,
    issue: u64,
    lag: u64,
}

/// The I/Os of one stream in flight and what it has taken.
struct Live {
    flights: Vec<Flight>,
    free: Vec<usize>,
    taken: usize,
    active: bool,
    op: Op,
    io: u64,
    index: usize,
}

impl Live {
    /// Records a completion: frees its slot, samples it, and gives the model its bytes.
    #[inline]
    fn complete(
        &mut self,
        c: Completion,
        protocol: &Protocol,
        clock: &Clock,
        model: &mut Model,
        sink: &mut StreamSink,
    ) {
        let done = protocol.now_ns();
        let f = self.flights[c.slot];
        self.free.push(c.slot);
        if !self.active {
            self.active = true;
            protocol.mark_active(done);
        }
        let times = (f.issue, done, f.lag);
        let s = Sample::completed(self.op, f.offset, self.io, times, c.result);
        sink.push(s);
        self.taken += 1;
        protocol.collected[self.index].store(self.taken, Ordering::Relaxed);
        model.complete(clock.done(f.issue, done), self.io, s.bytes, &mut ());
    }
}

/// Runs one real-time stream until its phase's deadline or a stop request, then waits for
/// the I/Os in flight; its buffer's tally goes back with the cursor and the samples.
pub(in crate::engine) fn run(
    job: Job,
    rt: &Realtime,
    protocol: &Protocol,
    barrier: &Barrier,
) -> (Ended, Tally) {
    let Job {
        index,
        plan,
        placement,
        mut backend,
        mut bufs,
        mut cursor,
        mut sink,
        stop,
        time_scale,
    } = job;
    let io = plan.io_size;
    let op = match rt.role {
        Role::Record => Op::Write,
        Role::Playback => Op::Read,
    };
    let depth = backend.queue_depth().min(bufs.len()).max(1);
    let start = placement.offset + plan.io.skip.min(placement.len);
    let slots = (placement.len.saturating_sub(plan.io.skip) / io).max(1);
    let end_ns = match stop {
        Stop::Duration(s) => (s * 1e9) as u64,
        _ => u64::MAX,
    };
    let mut model = Model::of(rt, cursor.seed(), io, end_ns);
    let mut live = Live {
        flights: vec![Flight::default(); depth],
        free: (0..depth).rev().collect(),
        taken: 0,
        active: false,
        op,
        io,
        index,
    };
    let mut ending = false;

    backend.start();
    barrier.wait();
    let clock = Clock::new(time_scale, protocol.t0_ns());
    let deadline = protocol.deadline_ns();
    loop {
        while !ending {
            let Some(&slot) = live.free.last() else { break };
            let now = protocol.now_ns();
            if protocol.stopped() || protocol.past_deadline(now) {
                ending = true;
                break;
            }
            model.advance(clock.model(now), &mut ());
            if let Some(wanted) = model.wanted() {
                let Some(s) = cursor.advance(plan.pattern, slots, false) else {
                    ending = true;
                    break;
                };
                model.take();
                let offset = start + s * io;
                if let (Op::Write, Some(seal)) = (op, plan.io.seal) {
                    let buf = &mut bufs[slot].as_mut_slice()[..io as usize];
                    cursor.seal(seal, index, offset, buf, protocol);
                }
                let issue = protocol.now_ns();
                live.free.pop();
                live.flights[slot] = Flight {
                    offset,
                    issue,
                    lag: issue.saturating_sub(clock.wall(wanted)),
                };
                backend.submit(slot, op, offset, &mut bufs[slot], io as usize);
                continue;
            }
            // Nothing to issue yet: until the model's next chance, the deadline, or a
            // completion, whichever comes first.
            let until = model
                .next_chance()
                .map_or(deadline, |m| clock.wall(m).min(deadline))
                .min(now + MAX_SLEEP_NS);
            let wait = until.saturating_sub(now).max(1);
            if live.free.len() < depth {
                if let Some(c) = backend.wait_for(wait) {
                    live.complete(c, protocol, &clock, &mut model, &mut sink);
                }
                continue;
            }
            std::thread::sleep(Duration::from_nanos(wait));
        }
        if live.free.len() == depth {
            break;
        }
        let c = backend.wait();
        live.complete(c, protocol, &clock, &mut model, &mut sink);
    }
    protocol.mark_done();
    let tally = model.finish(&mut ());
    drop(backend);
    drop(bufs);
    let ended = Ended {
        cursor,
        sink,
        samples: live.taken,
    };
    (ended, tally)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::buffer;
    use crate::engine::realtime::{FrameSizes, Schedule};
    use crate::engine::{self, EngineOptions, Pacing, Pattern, Placement, Plan};
    use crate::engine::{StreamIo, StreamPlan};

    fn stream(name: &str, rt: Realtime, op: Op) -> StreamPlan {
        StreamPlan {
            name: name.into(),
            role: rt.role.name().into(),
            op,
            region_len: 1 << 20,
            io_size: 64 << 10,
            pattern: Pattern::Random,
            pacing: Pacing::Realtime(rt),
            samples: 0,
            source: None,
            io: StreamIo::default(),
        }
    }

    #[test]
    fn live_buffers_agree_with_their_replay_to_the_byte() {
        // 8 Mbit/s of 10,000-byte frames at 100 fps into 64 KiB chunks, for 0.6 s, on a
        // file in the page cache: every chunk written long before the next is ready.
        let sched = Schedule::new(8e6, 100.0, FrameSizes::Lognormal { cv: 0.5 });
        let rec = Realtime {
            role: Role::Record,
            schedule: sched.clone(),
            buffer: 256 << 10,
            preroll: 0,
            prefill: 0.5,
        };
        let play = Realtime {
            role: Role::Playback,
            preroll: 64 << 10,
            ..rec.clone()
        };
        let streams = vec![
            stream("record0", rec.clone(), Op::Write),
            stream("playback0", play.clone(), Op::Read),
        ];
        let mut plan = Plan::sampled("run", streams, false, 5);
        let run = plan.phases.iter().position(|p| p.name == "run").unwrap();
        plan.phases[run].step = engine::Step::Streams {
            streams: vec![0, 1],
            stop: Stop::Duration(0.6),
        };
        let dir = tempfile::tempdir().unwrap();
        let placements: Vec<Placement> = ["r", "p"]
            .iter()
            .map(|n| {
                let path = dir.path().join(n);
                std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
                Placement {
                    path,
                    offset: 0,
                    len: 1 << 20,
                }
            })
            .collect();
        let opts = EngineOptions::buffered();
        let out = engine::run(&plan, &placements, opts, |_| {}).unwrap();
        let end = 600_000_000;
        for (i, rt) in [rec, play].iter().enumerate() {
            let seed = engine::stream_seed(5, i);
            let got = buffer::replay(rt, seed, 64 << 10, end, &out.streams[i].samples, end);
            assert_eq!(got.early, 0, "{}", rt.role.name());
            assert_eq!(out.buffers[i].0, out.streams[i].name);
            assert_eq!(got.tally, out.buffers[i].1, "{}", rt.role.name());
        }
        let rec = out.buffers[0].1;
        // 0.6 s of 8 Mbit/s is about 600,000 bytes, plus a fraction of a chunk to start with,
        // however the host kept time.
        assert!((500_000..700_000).contains(&rec.generated), "{rec:?}");
        assert_eq!(rec.generated, rec.moved + rec.dropped + rec.buffered);
        let written: u64 = out.streams[0].samples.iter().map(|s| s.bytes).sum();
        assert_eq!(rec.moved, written);
    }

    #[test]
    fn a_record_stream_seals_its_writes_like_any_writer() {
        let rec = Realtime {
            role: Role::Record,
            schedule: Schedule::new(8e6, 100.0, FrameSizes::Constant),
            buffer: 256 << 10,
            preroll: 0,
            prefill: 0.9,
        };
        let mut s = stream("record0", rec, Op::Write);
        s.pattern = Pattern::Sequential;
        s.io.seal = Some(crate::engine::Seal {
            checksum: crate::verify::Checksum::Crc32c,
            interval: 4096,
        });
        let mut plan = Plan::sampled("run", vec![s], false, 5);
        let run = plan.phases.iter().position(|p| p.name == "run").unwrap();
        plan.phases[run].step = engine::Step::Streams {
            streams: vec![0],
            stop: Stop::Duration(0.3),
        };
        plan.check().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r");
        std::fs::write(&path, vec![0u8; 1 << 20]).unwrap();
        let placements = [Placement {
            path: path.clone(),
            offset: 0,
            len: 1 << 20,
        }];
        let opts = EngineOptions::buffered();
        let out = engine::run(&plan, &placements, opts, |_| {}).unwrap();
        let data = std::fs::read(&path).unwrap();
        let writes = &out.streams[0].samples;
        assert!(writes.len() >= 3, "{}", writes.len());
        for (n, w) in writes.iter().enumerate() {
            let at = w.offset as usize;
            let h = crate::verify::inspect(&data[at..at + 4096], None)
                .unwrap()
                .header;
            assert_eq!(
                (h.offset, h.thread, u64::from(h.numberio)),
                (w.offset, 0, n as u64)
            );
        }
    }
}
