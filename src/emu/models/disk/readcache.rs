//! A disk's read buffer: segments holding what the drive read, with read-ahead (the drive goes
//! on reading after a read while nothing else needs the head) and look-behind (what passed
//! under the head while it waited for the first sector). A read wholly inside a segment is a hit,
//! served from the buffer; a write over a segment invalidates it. Shared by the disks of
//! [`super::hdd`] and [`super::queued`].

/// A read segment of the buffer: logical `[start, end)`; data up to `o_end` was read by `t_end`,
/// later data arrives at `rate` (read-ahead) unless the segment was cut short.
#[derive(Debug, Clone, Copy, Default)]
struct Segment {
    start: u64,
    end: u64,
    o_end: u64,
    t_end: u64,
    rate: f64,
    used: u64,
}

impl Segment {
    #[inline]
    fn ready(&self, x: u64) -> u64 {
        if x <= self.o_end {
            self.t_end
        } else {
            self.t_end + ((x - self.o_end) as f64 / self.rate) as u64
        }
    }
}

/// A read found in the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// When its last byte is in the buffer.
    pub ready: u64,
    /// Some of it is still to be read ahead: the head reads on until `ready` for it.
    pub ahead: bool,
}

/// The segments, the one still reading ahead, and their sizes.
#[derive(Debug, Clone)]
pub struct ReadCache {
    segs: Vec<Segment>,
    /// Index of the segment still reading ahead, or `segs.len()` for none.
    active: usize,
    /// Bytes read ahead after a read.
    readahead: u64,
    /// Bytes one segment holds at most.
    seg_max: u64,
    clock: u64,
}

impl ReadCache {
    /// A buffer of `buffer` bytes in `segments` segments (at least one), reading `readahead`
    /// bytes ahead.
    pub fn new(buffer: u64, segments: u64, readahead: u64) -> ReadCache {
        let n = segments.max(1);
        ReadCache {
            segs: vec![Segment::default(); n as usize],
            active: n as usize,
            readahead,
            seg_max: (buffer / n).max(1),
            clock: 0,
        }
    }

    /// When logical `[o, o + len)` is all in a segment: the time its last byte is there, and
    /// whether the head is still reading it ahead (then the head is busy until that time). A
    /// hit on the segment reading ahead extends it.
    #[inline]
    pub fn lookup(&mut self, o: u64, len: u64) -> Option<Hit> {
        self.clock += 1;
        let end = o + len;
        let i = self
            .segs
            .iter()
            .position(|g| g.start <= o && end <= g.end && g.end > g.start)?;
        let g = &mut self.segs[i];
        g.used = self.clock;
        let ahead = i == self.active && end > g.o_end;
        if i == self.active {
            g.end = g.end.max(end + self.readahead);
            g.start = g.start.max(g.end.saturating_sub(self.seg_max));
        }
        Some(Hit {
            ready: g.ready(end),
            ahead,
        })
    }

    /// The mechanism starts other work at `t`: the active read-ahead stops there.
    #[inline]
    pub fn stop_readahead(&mut self, t: u64) {
        if self.active < self.segs.len() {
            let s = &mut self.segs[self.active];
            let read = (t.saturating_sub(s.t_end) as f64 * s.rate) as u64;
            s.end = s.end.min(s.o_end + read).max(s.o_end);
            self.active = self.segs.len();
        }
    }

    /// The media read `[o, o + len)` by `done`, having passed `behind` bytes just before `o`
    /// while waiting for it; the drive reads ahead at `rate` (bytes per ns) from there.
    pub fn fill(&mut self, o: u64, len: u64, done: u64, behind: u64, rate: f64) {
        let v = (0..self.segs.len())
            .min_by_key(|&i| self.segs[i].used)
            .unwrap_or(0);
        let end = o + len;
        let seg_end = end + self.readahead;
        let start = o.saturating_sub(behind);
        self.segs[v] = Segment {
            start: start.max(seg_end.saturating_sub(self.seg_max)),
            end: seg_end,
            o_end: end,
            t_end: done,
            rate,
            used: self.clock,
        };
        self.active = v;
    }

    /// A write over `[o, o + len)`: segments holding any of it are dropped.
    pub fn invalidate(&mut self, o: u64, len: u64) {
        let end = o + len;
        let none = self.segs.len();
        for (i, g) in self.segs.iter_mut().enumerate() {
            if g.start < end && o < g.end {
                *g = Segment::default();
                if i == self.active {
                    self.active = none;
                }
            }
        }
    }
}
