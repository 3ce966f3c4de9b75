//! A real-time stream's buffer, replayed from its samples: the same model the stream's thread
//! ran live ([`crate::engine::realtime`]) driven by the samples' issue and completion times,
//! so everything said about a buffer (occupancy over time, overflows and when, underruns and
//! stalls, each I/O's latency from the time it was wanted) follows from samples.csv. The
//! replay also checks the run: no I/O may have been issued before its chunk was ready (or
//! before there was room for it).

use crate::engine::realtime::{Model, Observer, Realtime, Tally};
use crate::engine::Sample;

/// Overflow events and stalls kept with their times; the rest are counted only.
pub const MAX_EVENTS: usize = 100;

/// A run of frames that lost bytes because the buffer was full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow {
    /// The first losing frame, ns since the stream's start.
    pub start_ns: u64,
    /// The first frame after it that fit whole (or the last losing one, at the end).
    pub end_ns: u64,
    pub bytes: u64,
    pub frames: u64,
}

/// One interval of a buffer's occupancy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BufferInterval {
    /// The most it held during the interval, bytes.
    pub peak: u64,
    /// What it held at the interval's end, bytes.
    pub end: u64,
    /// Bytes dropped (record).
    pub dropped: u64,
    /// ns of the interval playback stood still.
    pub stall_ns: u64,
}

/// What a replay found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Replay {
    pub tally: Tally,
    /// The first [`MAX_EVENTS`] overflows.
    pub overflows: Vec<Overflow>,
    /// The first [`MAX_EVENTS`] stalls: (start, end) ns.
    pub stalls: Vec<(u64, u64)>,
    /// Underruns, ns.
    pub underrun_times: Vec<u64>,
    /// From the stream's start to the end of its schedule, intervals of the width asked.
    pub intervals: Vec<BufferInterval>,
    /// Per sampled I/O, in issue order: completion minus the time it was wanted, ns.
    pub from_wanted_ns: Vec<u64>,
    /// I/Os issued before the model allowed them (a fault of the run: should be 0).
    pub early: usize,
    /// Playback: the least it held once playing, bytes.
    pub low_while_playing: Option<u64>,
}

/// Keeps what the report needs while the model replays.
struct Keep {
    width: u64,
    level: u64,
    intervals: Vec<BufferInterval>,
    overflows: Vec<Overflow>,
    open: Option<Overflow>,
    overflow_count: usize,
    stalls: Vec<(u64, u64)>,
    underruns: Vec<u64>,
    playing: bool,
    low: Option<u64>,
}

impl Keep {
    fn at(&mut self, t: u64) -> &mut BufferInterval {
        let k = (t / self.width) as usize;
        while self.intervals.len() <= k {
            let l = self.level;
            self.intervals.push(BufferInterval {
                peak: l,
                end: l,
                ..Default::default()
            });
        }
        &mut self.intervals[k]
    }

    fn close_overflow(&mut self, end: u64) {
        if let Some(mut o) = self.open.take() {
            o.end_ns = end;
            if self.overflows.len() < MAX_EVENTS {
                self.overflows.push(o);
            }
        }
    }
}

impl Observer for Keep {
    fn level(&mut self, t: u64, bytes: u64) {
        let i = self.at(t);
        i.peak = i.peak.max(bytes);
        i.end = bytes;
        self.level = bytes;
        if self.playing {
            self.low = Some(self.low.map_or(bytes, |l| l.min(bytes)));
        }
    }

    fn frame(&mut self, t: u64, _size: u64, lost: u64) {
        if lost == 0 {
            self.close_overflow(t);
            return;
        }
        self.at(t).dropped += lost;
        match &mut self.open {
            Some(o) => {
                o.bytes += lost;
                o.frames += 1;
                o.end_ns = t;
            }
            None => {
                self.overflow_count += 1;
                self.open = Some(Overflow {
                    start_ns: t,
                    end_ns: t,
                    bytes: lost,
                    frames: 1,
                });
            }
        }
    }

    fn started(&mut self, _t: u64) {
        self.playing = true;
        self.low = Some(self.level);
    }

    fn underrun(&mut self, t: u64) {
        self.underruns.push(t);
    }

    fn stall(&mut self, from: u64, to: u64) {
        if self.stalls.len() < MAX_EVENTS {
            self.stalls.push((from, to));
        }
        let mut t = from;
        while t < to {
            let next = ((t / self.width) + 1) * self.width;
            let upto = next.min(to);
            self.at(t).stall_ns += upto - t;
            t = upto;
        }
    }
}

/// Replays the buffer of stream `rt` (seeded `seed`, `io`-byte I/Os, its schedule ending at
/// `end_ns`) over `samples` (times since the stream's start, as [`crate::engine::SampleSet::load_phase`]
/// gives them), keeping intervals of `width_ns`.
pub fn replay(
    rt: &Realtime,
    seed: u64,
    io: u64,
    end_ns: u64,
    samples: &[Sample],
    width_ns: u64,
) -> Replay {
    let mut keep = Keep {
        width: width_ns.max(1),
        level: 0,
        intervals: Vec::new(),
        overflows: Vec::new(),
        open: None,
        overflow_count: 0,
        stalls: Vec::new(),
        underruns: Vec::new(),
        playing: false,
        low: None,
    };
    let mut model = Model::of(rt, seed, io, end_ns);
    keep.at(0);
    keep.level(0, model.buffered());
    // Every issue and completion in time order; at one instant a completion comes first, as
    // the stream's thread takes a completion before it issues again.
    let mut events: Vec<(u64, u8, usize)> = Vec::with_capacity(samples.len() * 2);
    for (i, s) in samples.iter().enumerate() {
        events.push((s.issue_ns, 1, i));
        events.push((s.done_ns(), 0, i));
    }
    events.sort_unstable();
    let mut wanted = vec![0u64; samples.len()];
    let mut early = 0;
    for (t, kind, i) in events {
        let s = &samples[i];
        if kind == 1 {
            model.advance(t, &mut keep);
            wanted[i] = model.wanted().unwrap_or_else(|| {
                early += 1;
                t
            });
            model.take();
        } else {
            model.complete(t, io, s.bytes, &mut keep);
        }
    }
    let tally = model.finish(&mut keep);
    keep.close_overflow(end_ns.min(keep.open.map_or(0, |o| o.end_ns)));
    if end_ns != u64::MAX && end_ns > 0 {
        keep.at(end_ns - 1);
    }
    let from_wanted_ns = samples
        .iter()
        .zip(&wanted)
        .map(|(s, &w)| s.done_ns().saturating_sub(w))
        .collect();
    Replay {
        tally,
        overflows: keep.overflows,
        stalls: keep.stalls,
        underrun_times: keep.underruns,
        intervals: keep.intervals,
        from_wanted_ns,
        early,
        low_while_playing: keep.low,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::realtime::{FrameSizes, Role, Schedule};
    use crate::engine::Op;

    const MS: u64 = 1_000_000;

    fn rt(role: Role, buffer: u64, preroll: u64) -> Realtime {
        Realtime {
            role,
            // 100,000-byte frames every 100 ms.
            schedule: Schedule::new(8e6, 10.0, FrameSizes::Constant),
            buffer,
            preroll,
            prefill: 0.0,
        }
    }

    fn io(op: Op, issue_ms: u64, lat_ms: u64, bytes: u64) -> Sample {
        Sample {
            op,
            bytes,
            issue_ns: issue_ms * MS,
            latency_ns: lat_ms * MS,
            ..Default::default()
        }
    }

    #[test]
    fn a_record_stream_replayed_gives_its_occupancy_and_its_overflows() {
        // 250,000-byte chunks into 300,000 bytes: the first chunk is ready at 200 ms; its
        // write takes 350 ms, so the frames at 300, 400 and 500 ms are lost.
        let r = rt(Role::Record, 300_000, 0);
        let samples = [
            io(Op::Write, 200, 350, 250_000),
            io(Op::Write, 700, 10, 250_000),
        ];
        let got = replay(&r, 1, 250_000, 1_000 * MS, &samples, 500 * MS);
        assert_eq!(got.early, 0);
        assert_eq!(
            got.overflows,
            [Overflow {
                start_ns: 300 * MS,
                end_ns: 600 * MS,
                bytes: 300_000,
                frames: 3
            }]
        );
        // Written 500,000; made 1,000,000; dropped 300,000; so 200,000 still in.
        assert_eq!(got.tally.generated, 1_000_000);
        assert_eq!(got.tally.moved, 500_000);
        assert_eq!(got.tally.buffered, 200_000);
        assert_eq!(
            got.tally.generated,
            got.tally.moved + got.tally.dropped + got.tally.buffered
        );
        assert_eq!(got.from_wanted_ns, [350 * MS, 10 * MS]);
        assert_eq!(got.intervals.len(), 2);
        assert_eq!(got.intervals[0].peak, 300_000);
        assert_eq!(got.intervals[0].dropped, 200_000);
        assert_eq!(got.intervals[1].dropped, 100_000, "the frame at 500 ms");
        // Full at 500 ms; 50,000 at 550 ms; frames at 600 (150,000), 700 (250,000: chunk
        // ready, and written by 710 ms: 0), 800, 900 ms: 200,000 at the end.
        assert_eq!(got.intervals[1].end, 200_000);
        assert_eq!(got.intervals[1].peak, 300_000);
    }

    #[test]
    fn a_write_before_its_chunk_was_ready_is_caught() {
        let r = rt(Role::Record, 1_000_000, 0);
        let samples = [io(Op::Write, 50, 10, 250_000)];
        let got = replay(&r, 1, 250_000, 1_000 * MS, &samples, 1_000 * MS);
        assert_eq!(got.early, 1);
    }

    #[test]
    fn a_playback_replayed_gives_its_underruns_and_stalls() {
        let p = rt(Role::Playback, 500_000, 250_000);
        // Two reads at once (room for both at 0): the first back at 40 ms starts playback;
        // the second never helps in time.
        let samples = [io(Op::Read, 0, 40, 250_000), io(Op::Read, 40, 500, 250_000)];
        let got = replay(&p, 1, 250_000, 1_000 * MS, &samples, 1_000 * MS);
        assert_eq!(got.early, 0);
        assert_eq!(got.tally.started_ns, Some(40 * MS));
        // Back at 540 ms with 300,000 >= the pre-roll: frames at 540, 640 and 740 ms take
        // it all, and the one at 840 ms stalls to the end.
        assert_eq!(got.underrun_times, [240 * MS, 840 * MS]);
        assert_eq!(got.stalls, [(240 * MS, 540 * MS), (840 * MS, 1_000 * MS)]);
        assert_eq!(got.tally.stall_ns, 460 * MS);
        assert_eq!(got.intervals[0].stall_ns, 460 * MS);
        assert_eq!(got.low_while_playing, Some(0));
        assert_eq!(got.from_wanted_ns, [40 * MS, 540 * MS]);
    }
}
