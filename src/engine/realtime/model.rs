//! The buffer models, as pure state machines over time in ns since the stream's start (the
//! device model's time): [`Record`] (frames in, chunks written out, overflow) and [`Playback`]
//! (chunks read in, frames consumed, pre-roll, underruns and stalls). A stream's thread drives
//! one live to decide when to issue; the analysis drives the same one over the samples'
//! completion times, with an [`Observer`] that keeps what it reports. Neither allocates after
//! it is made.

use super::schedule::Schedule;
use super::{Realtime, Role};
use serde::{Deserialize, Serialize};

/// Told about every change of a buffer, in time order. Every method does nothing by default:
/// the live stream observes nothing.
pub trait Observer {
    /// The buffer holds `bytes` from `t` on.
    fn level(&mut self, _t: u64, _bytes: u64) {}
    /// A record frame of `size` bytes was made at `t`; `lost` of them did not fit.
    fn frame(&mut self, _t: u64, _size: u64, _lost: u64) {}
    /// Playback began at `t`.
    fn started(&mut self, _t: u64) {}
    /// A frame was due at `t` with too little buffered.
    fn underrun(&mut self, _t: u64) {}
    /// Playback stood still from `from` to `to`.
    fn stall(&mut self, _from: u64, _to: u64) {}
}

impl Observer for () {}

/// The times a monotone byte counter crossed each multiple of a chunk, kept in a ring until
/// taken: when each chunk became ready to write (or each read became allowed).
#[derive(Debug, Clone)]
pub struct Crossings {
    ring: Vec<u64>,
    head: usize,
    len: usize,
    /// Multiples crossed so far.
    crossed: u64,
    /// Crossings taken so far.
    taken: u64,
    /// The last crossing's time, for a ring that overflowed (it never should).
    last: u64,
}

impl Crossings {
    /// A ring of `len` entries (at least 1).
    pub fn new(len: usize) -> Crossings {
        Crossings {
            ring: vec![0; len.max(1)],
            head: 0,
            len: 0,
            crossed: 0,
            taken: 0,
            last: 0,
        }
    }

    /// The counter is `counter` at `t`: each multiple of `chunk` it passed is stamped `t`.
    #[inline]
    fn reach(&mut self, counter: u64, chunk: u64, t: u64) {
        let n = counter / chunk;
        while self.crossed < n {
            self.crossed += 1;
            self.last = t;
            if self.len < self.ring.len() {
                let i = (self.head + self.len) % self.ring.len();
                self.ring[i] = t;
                self.len += 1;
            }
        }
    }

    /// When the oldest untaken crossing happened.
    #[inline]
    pub fn front(&self) -> Option<u64> {
        if self.taken >= self.crossed {
            return None;
        }
        Some(if self.len > 0 {
            self.ring[self.head]
        } else {
            self.last
        })
    }

    /// Takes the oldest crossing (or one not yet made: an I/O issued early, in a replay).
    #[inline]
    fn take(&mut self) {
        self.taken += 1;
        if self.len > 0 {
            self.head = (self.head + 1) % self.ring.len();
            self.len -= 1;
        }
    }
}

/// A stream's buffer at the end of a run, as the live stream counted it: result.json's
/// `phases[].measured.buffers[]`, which the analysis checks its own count against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tally {
    /// Record: bytes the application made (the prefill included); playback: bytes it consumed.
    pub generated: u64,
    /// Record: bytes written; playback: bytes read.
    pub moved: u64,
    /// Bytes of I/Os that failed or came up short.
    pub failed: u64,
    /// Record: bytes dropped because the buffer was full.
    pub dropped: u64,
    /// Bytes still in the buffer at the end.
    pub buffered: u64,
    pub peak: u64,
    /// Record: runs of frames that lost bytes.
    pub overflow_events: u64,
    pub underruns: u64,
    /// Playback: ns it stood still (up to the end of the schedule).
    pub stall_ns: u64,
    /// Playback: when it started, ns; `None` if it never did.
    pub started_ns: Option<u64>,
}

/// A record stream's buffer: frames come in on the schedule, full chunks go out as writes.
#[derive(Debug, Clone)]
pub struct Record<'a> {
    sched: &'a Schedule,
    seed: u64,
    io: u64,
    capacity: u64,
    end_ns: u64,
    /// The next frame to come.
    next: u64,
    pub generated: u64,
    pub accepted: u64,
    pub dropped: u64,
    pub written: u64,
    pub failed: u64,
    ready: Crossings,
    in_overflow: bool,
    pub overflow_events: u64,
    pub peak: u64,
}

impl<'a> Record<'a> {
    /// A buffer of `capacity` bytes drained in `io`-byte writes, holding `prefill` bytes at 0;
    /// frames of `sched` (seeded `seed`) come until `end_ns`; `ring` entries of readiness.
    pub fn new(
        sched: &'a Schedule,
        seed: u64,
        io: u64,
        capacity: u64,
        prefill: u64,
        end_ns: u64,
        ring: usize,
    ) -> Record<'a> {
        let mut r = Record {
            sched,
            seed,
            io: io.max(1),
            capacity,
            end_ns,
            next: 0,
            generated: prefill,
            accepted: prefill,
            dropped: 0,
            written: 0,
            failed: 0,
            ready: Crossings::new(ring),
            in_overflow: false,
            overflow_events: 0,
            peak: prefill,
        };
        r.ready.reach(prefill, r.io, 0);
        r
    }

    /// Bytes in the buffer: made and kept, not yet written (a chunk being written included).
    /// Never below 0, even replaying a run that wrote ahead of its application (which the
    /// replay reports).
    #[inline]
    pub fn buffered(&self) -> u64 {
        self.accepted.saturating_sub(self.written + self.failed)
    }

    fn frame(&mut self, o: &mut impl Observer) {
        let t = self.sched.time_ns(self.next);
        let size = self.sched.size(self.seed, self.next);
        self.next += 1;
        let fit = size.min(self.capacity.saturating_sub(self.buffered()));
        self.generated += size;
        self.accepted += fit;
        let lost = size - fit;
        self.dropped += lost;
        if lost > 0 && !self.in_overflow {
            self.overflow_events += 1;
        }
        self.in_overflow = lost > 0;
        self.ready.reach(self.accepted, self.io, t);
        self.peak = self.peak.max(self.buffered());
        o.frame(t, size, lost);
        o.level(t, self.buffered());
    }

    /// Takes in every frame due at or before `now` (and before the end).
    #[inline]
    pub fn advance(&mut self, now: u64, o: &mut impl Observer) {
        loop {
            let t = self.sched.time_ns(self.next);
            if t > now || t >= self.end_ns {
                return;
            }
            self.frame(o);
        }
    }

    /// When the oldest chunk ready and not yet written became ready.
    #[inline]
    pub fn wanted(&self) -> Option<u64> {
        self.ready.front()
    }

    /// A write of the oldest ready chunk is issued.
    #[inline]
    pub fn take(&mut self) {
        self.ready.take();
    }

    /// When the next chunk will be ready if no write completes before: the time of the frame
    /// that fills it; `None` when the buffer fills first or the schedule ends.
    pub fn next_chance(&self) -> Option<u64> {
        let target = (self.ready.crossed + 1) * self.io;
        let (mut accepted, mut buffered) = (self.accepted, self.buffered());
        let mut k = self.next;
        loop {
            let t = self.sched.time_ns(k);
            if t >= self.end_ns || buffered >= self.capacity {
                return None;
            }
            let fit = self.sched.size(self.seed, k).min(self.capacity - buffered);
            accepted += fit;
            buffered += fit;
            if accepted >= target {
                return Some(t);
            }
            k += 1;
        }
    }

    /// A write of `asked` bytes completed at `now`, `got` of them written.
    pub fn complete(&mut self, now: u64, asked: u64, got: u64, o: &mut impl Observer) {
        self.advance(now, o);
        let got = got.min(asked);
        self.written += got;
        self.failed += asked - got;
        o.level(now, self.buffered());
    }

    /// Takes in the frames left before the end.
    pub fn finish(&mut self, o: &mut impl Observer) {
        self.advance(u64::MAX, o);
    }

    pub fn tally(&self) -> Tally {
        Tally {
            generated: self.generated,
            moved: self.written,
            failed: self.failed,
            dropped: self.dropped,
            buffered: self.buffered(),
            peak: self.peak,
            overflow_events: self.overflow_events,
            ..Default::default()
        }
    }
}

/// Where a playback stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Filling its pre-roll, not yet playing.
    Preroll,
    Playing,
    /// A frame was due at `.0` with too little buffered.
    Stalled(u64),
}

/// A playback stream's buffer: chunks read in, frames consumed on the schedule once it holds
/// the pre-roll.
#[derive(Debug, Clone)]
pub struct Playback<'a> {
    sched: &'a Schedule,
    seed: u64,
    io: u64,
    capacity: u64,
    preroll: u64,
    end_ns: u64,
    pub received: u64,
    pub consumed: u64,
    pub failed: u64,
    /// When each read became allowed: the buffer had room for it (`consumed + failed +
    /// capacity` crossed a multiple of the I/O size).
    room: Crossings,
    state: State,
    next: u64,
    /// When frame 0 is due, shifted by every stall.
    base: u64,
    pub started: Option<u64>,
    pub underruns: u64,
    pub stall_ns: u64,
    pub peak: u64,
}

impl<'a> Playback<'a> {
    /// A buffer of `capacity` bytes filled by `io`-byte reads; playback starts once `preroll`
    /// bytes are in and consumes frames of `sched` (seeded `seed`) until `end_ns`.
    pub fn new(
        sched: &'a Schedule,
        seed: u64,
        io: u64,
        capacity: u64,
        preroll: u64,
        end_ns: u64,
        ring: usize,
    ) -> Playback<'a> {
        let mut p = Playback {
            sched,
            seed,
            io: io.max(1),
            capacity,
            preroll,
            end_ns,
            received: 0,
            consumed: 0,
            failed: 0,
            room: Crossings::new(ring),
            state: State::Preroll,
            next: 0,
            base: 0,
            started: None,
            underruns: 0,
            stall_ns: 0,
            peak: 0,
        };
        p.room.reach(capacity, p.io, 0);
        p
    }

    #[inline]
    pub fn buffered(&self) -> u64 {
        self.received.saturating_sub(self.consumed)
    }

    /// Bytes that must be buffered before playback (re)starts with the next frame.
    fn needed(&self) -> u64 {
        self.preroll.max(self.sched.size(self.seed, self.next))
    }

    /// Consumes every frame due at or before `now` (and before the end), or stalls.
    #[inline]
    pub fn advance(&mut self, now: u64, o: &mut impl Observer) {
        while self.state == State::Playing {
            let due = self.base + self.sched.time_ns(self.next);
            if due > now || due >= self.end_ns {
                return;
            }
            let size = self.sched.size(self.seed, self.next);
            if self.buffered() < size {
                self.underruns += 1;
                self.state = State::Stalled(due);
                o.underrun(due);
                return;
            }
            self.consumed += size;
            self.next += 1;
            self.room
                .reach(self.capacity + self.consumed + self.failed, self.io, due);
            o.level(due, self.buffered());
        }
    }

    /// When the oldest read allowed and not yet issued became allowed.
    #[inline]
    pub fn wanted(&self) -> Option<u64> {
        self.room.front()
    }

    /// The oldest allowed read is issued.
    #[inline]
    pub fn take(&mut self) {
        self.room.take();
    }

    /// When the next read will be allowed if none completes before: when playback frees room
    /// for it; `None` when it is not playing, runs dry first, or the schedule ends.
    pub fn next_chance(&self) -> Option<u64> {
        if self.state != State::Playing {
            return None;
        }
        let target = (self.room.crossed + 1) * self.io;
        let mut counter = self.capacity + self.consumed + self.failed;
        let mut buffered = self.buffered();
        let mut k = self.next;
        loop {
            let due = self.base + self.sched.time_ns(k);
            let size = self.sched.size(self.seed, k);
            if due >= self.end_ns || buffered < size {
                return None;
            }
            buffered -= size;
            counter += size;
            if counter >= target {
                return Some(due);
            }
            k += 1;
        }
    }

    /// A read of `asked` bytes completed at `now` with `got` of them.
    pub fn complete(&mut self, now: u64, asked: u64, got: u64, o: &mut impl Observer) {
        self.advance(now, o);
        let got = got.min(asked);
        self.received += got;
        self.failed += asked - got;
        self.room
            .reach(self.capacity + self.consumed + self.failed, self.io, now);
        self.peak = self.peak.max(self.buffered());
        o.level(now, self.buffered());
        if now >= self.end_ns || self.buffered() < self.needed() {
            return;
        }
        match self.state {
            State::Preroll => {
                self.started = Some(now);
                o.started(now);
            }
            State::Stalled(since) => {
                self.stall_ns += now - since;
                o.stall(since, now);
            }
            State::Playing => return,
        }
        // Frame `next` plays now; the rest follow on the schedule from here.
        self.base = now - self.sched.time_ns(self.next).min(now);
        self.state = State::Playing;
        self.advance(now, o);
    }

    /// Plays what is due before the end; a stall still going lasts until the end.
    pub fn finish(&mut self, o: &mut impl Observer) {
        self.advance(u64::MAX, o);
        if let State::Stalled(since) = self.state {
            if since < self.end_ns {
                self.stall_ns += self.end_ns - since;
                o.stall(since, self.end_ns);
            }
            self.state = State::Stalled(self.end_ns.max(since));
        }
    }

    /// Whether it never started (its pre-roll never came in).
    pub fn never_started(&self) -> bool {
        self.started.is_none()
    }

    pub fn tally(&self) -> Tally {
        Tally {
            generated: self.consumed,
            moved: self.received,
            failed: self.failed,
            buffered: self.buffered(),
            peak: self.peak,
            underruns: self.underruns,
            stall_ns: self.stall_ns,
            started_ns: self.started,
            ..Default::default()
        }
    }
}

/// Either buffer model, as one stream has it.
#[derive(Debug, Clone)]
pub enum Model<'a> {
    Record(Record<'a>),
    Playback(Playback<'a>),
}

impl<'a> Model<'a> {
    /// The model of stream `rt` seeded `seed`, doing `io`-byte I/Os, its schedule ending at
    /// `end_ns`.
    pub fn of(rt: &'a Realtime, seed: u64, io: u64, end_ns: u64) -> Model<'a> {
        let ring = rt.ring_len(io);
        match rt.role {
            Role::Record => {
                let prefill = rt.prefill_bytes(io);
                let r = Record::new(&rt.schedule, seed, io, rt.buffer, prefill, end_ns, ring);
                Model::Record(r)
            }
            Role::Playback => {
                let p = Playback::new(&rt.schedule, seed, io, rt.buffer, rt.preroll, end_ns, ring);
                Model::Playback(p)
            }
        }
    }

    /// Bytes in the buffer.
    pub fn buffered(&self) -> u64 {
        match self {
            Model::Record(m) => m.buffered(),
            Model::Playback(m) => m.buffered(),
        }
    }

    /// Brings the application up to `now`.
    #[inline]
    pub fn advance(&mut self, now: u64, o: &mut impl Observer) {
        match self {
            Model::Record(m) => m.advance(now, o),
            Model::Playback(m) => m.advance(now, o),
        }
    }

    /// When the oldest I/O allowed and not yet issued was wanted.
    #[inline]
    pub fn wanted(&self) -> Option<u64> {
        match self {
            Model::Record(m) => m.wanted(),
            Model::Playback(m) => m.wanted(),
        }
    }

    /// The oldest allowed I/O is issued.
    #[inline]
    pub fn take(&mut self) {
        match self {
            Model::Record(m) => m.take(),
            Model::Playback(m) => m.take(),
        }
    }

    /// When the next I/O will be allowed if none completes before.
    pub fn next_chance(&self) -> Option<u64> {
        match self {
            Model::Record(m) => m.next_chance(),
            Model::Playback(m) => m.next_chance(),
        }
    }

    /// An I/O of `asked` bytes completed at `now` with `got` of them.
    #[inline]
    pub fn complete(&mut self, now: u64, asked: u64, got: u64, o: &mut impl Observer) {
        match self {
            Model::Record(m) => m.complete(now, asked, got, o),
            Model::Playback(m) => m.complete(now, asked, got, o),
        }
    }

    /// Runs the application to the end of its schedule; the buffer's tally.
    pub fn finish(&mut self, o: &mut impl Observer) -> Tally {
        match self {
            Model::Record(m) => {
                m.finish(o);
                m.tally()
            }
            Model::Playback(m) => {
                m.finish(o);
                m.tally()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::schedule::FrameSizes;
    use super::*;

    const MS: u64 = 1_000_000;

    /// 8 Mbit/s at 10 fps: frames of 100,000 bytes every 100 ms.
    fn sched() -> Schedule {
        Schedule::new(8e6, 10.0, FrameSizes::Constant)
    }

    #[derive(Default)]
    struct Seen {
        lost: Vec<(u64, u64)>,
        underruns: Vec<u64>,
        stalls: Vec<(u64, u64)>,
        started: Option<u64>,
    }

    impl Observer for Seen {
        fn frame(&mut self, t: u64, _: u64, lost: u64) {
            if lost > 0 {
                self.lost.push((t, lost));
            }
        }
        fn started(&mut self, t: u64) {
            self.started = Some(t);
        }
        fn underrun(&mut self, t: u64) {
            self.underruns.push(t);
        }
        fn stall(&mut self, a: u64, b: u64) {
            self.stalls.push((a, b));
        }
    }

    #[test]
    fn a_record_buffer_fills_chunks_and_says_when_each_was_ready() {
        let s = sched();
        // Chunks of 250,000 bytes: the 3rd frame (t = 200 ms) makes the first ready.
        let mut r = Record::new(&s, 1, 250_000, 1_000_000, 0, 10_000 * MS, 8);
        assert_eq!(r.next_chance(), Some(200 * MS));
        r.advance(150 * MS, &mut ());
        assert_eq!((r.wanted(), r.buffered()), (None, 200_000));
        r.advance(200 * MS, &mut ());
        assert_eq!(r.wanted(), Some(200 * MS));
        r.take();
        assert_eq!(r.wanted(), None);
        // The 5th frame (400 ms) brings 500,000: the second chunk.
        assert_eq!(r.next_chance(), Some(400 * MS));
        r.complete(250 * MS, 250_000, 250_000, &mut ());
        assert_eq!(r.buffered(), 50_000);
        r.advance(999 * MS, &mut ());
        assert_eq!(r.wanted(), Some(400 * MS), "ready since 400 ms, not issued");
        r.take();
        assert_eq!(r.wanted(), Some(700 * MS), "the third at 750,000 bytes");
    }

    #[test]
    fn overflow_is_what_did_not_fit_to_the_byte() {
        let s = sched();
        // A 300,000-byte buffer never drained: frames at 0..=200 ms fit, then 3 frames are
        // lost whole until the write completes at 550 ms; one more run of losses follows.
        let mut r = Record::new(&s, 1, 250_000, 300_000, 0, 1_000 * MS, 4);
        let mut seen = Seen::default();
        r.advance(549 * MS, &mut seen);
        assert_eq!(r.wanted(), Some(200 * MS));
        r.take();
        assert_eq!(
            r.next_chance(),
            None,
            "full: nothing more until a write completes"
        );
        r.complete(550 * MS, 250_000, 250_000, &mut seen);
        r.finish(&mut seen);
        let t = r.tally();
        assert_eq!(t.generated, 1_000_000);
        assert_eq!(t.generated, t.moved + t.dropped + t.buffered);
        assert_eq!(t.buffered, 300_000);
        assert_eq!(
            seen.lost,
            [
                (300 * MS, 100_000),
                (400 * MS, 100_000),
                (500 * MS, 100_000),
                (800 * MS, 50_000),
                (900 * MS, 100_000)
            ]
        );
        assert_eq!((t.overflow_events, t.dropped), (2, 450_000));
    }

    #[test]
    fn a_record_prefill_counts_as_made_and_readies_chunks_sooner() {
        let s = sched();
        let mut r = Record::new(&s, 1, 250_000, 1_000_000, 120_000, 1_000 * MS, 8);
        assert_eq!(r.next_chance(), Some(100 * MS));
        r.finish(&mut ());
        assert_eq!(r.tally().generated, 1_120_000);
    }

    #[test]
    fn playback_waits_for_its_preroll_then_stalls_when_reads_are_late() {
        let s = sched();
        // 250,000-byte reads into 750,000 bytes; play once 250,000 are in.
        let mut p = Playback::new(&s, 1, 250_000, 750_000, 250_000, 2_000 * MS, 8);
        let mut seen = Seen::default();
        assert_eq!(p.wanted(), Some(0));
        p.take();
        p.take();
        p.take();
        assert_eq!(p.wanted(), None);
        assert_eq!(p.next_chance(), None, "not playing yet");
        p.complete(40 * MS, 250_000, 250_000, &mut seen);
        assert_eq!(seen.started, Some(40 * MS));
        assert_eq!(p.buffered(), 150_000, "frame 0 played at once");
        // Frames at 140 and 240 ms; the one at 240 finds 50,000: underrun.
        p.advance(300 * MS, &mut seen);
        assert_eq!(seen.underruns, [240 * MS]);
        assert_eq!(p.buffered(), 50_000);
        // A read at 500 ms brings 300,000 >= the pre-roll: playing again.
        p.complete(500 * MS, 250_000, 250_000, &mut seen);
        assert_eq!(seen.stalls, [(240 * MS, 500 * MS)]);
        assert_eq!(p.buffered(), 200_000);
        // The third read comes back at 550 ms; nothing more after.
        p.complete(550 * MS, 250_000, 250_000, &mut seen);
        p.finish(&mut seen);
        let t = p.tally();
        assert_eq!(t.underruns, 2);
        assert_eq!(t.moved, 750_000);
        assert_eq!(t.generated, t.moved - t.buffered);
        // The second stall: frames at 500, 600, ..., 900 ms take 500,000 of 550,000; the one
        // at 1000 ms finds 50,000 and stalls to the end.
        assert_eq!(seen.stalls[1], (1000 * MS, 2000 * MS));
        assert_eq!(t.stall_ns, 260 * MS + 1000 * MS);
    }

    #[test]
    fn room_for_a_read_opens_as_playback_consumes() {
        let s = sched();
        let mut p = Playback::new(&s, 1, 250_000, 500_000, 100_000, 10_000 * MS, 8);
        p.take();
        p.take();
        p.complete(10 * MS, 250_000, 250_000, &mut ());
        p.complete(20 * MS, 250_000, 250_000, &mut ());
        // Started at 10 ms with 250,000 (frame 0 consumed): room for a read once 250,000 are
        // consumed, at the third frame (210 ms).
        assert_eq!(p.wanted(), None);
        assert_eq!(p.next_chance(), Some(210 * MS));
        p.advance(210 * MS, &mut ());
        assert_eq!(p.wanted(), Some(210 * MS));
    }

    #[test]
    fn a_playback_that_never_gets_its_preroll_never_starts() {
        let s = sched();
        let mut p = Playback::new(&s, 1, 250_000, 500_000, 500_000, 1_000 * MS, 8);
        p.complete(10 * MS, 250_000, 0, &mut ());
        p.finish(&mut ());
        assert!(p.never_started());
        assert_eq!(p.tally().failed, 250_000);
    }
}
