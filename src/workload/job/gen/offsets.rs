//! Where in one file a job's next I/O goes, as fio decides it: sequential I/O goes on from the
//! end of the last (plus an offset modifier, wrapping at the end, or backwards from the end
//! for a negative one); random I/O draws a block (of `blockalign` bytes) by the job's
//! distribution, and with the random map (the default) takes each block once per pass,
//! moving to the next free block when the drawn one is taken (fio's `axmap_next_free`);
//! `randread:N` goes on sequentially for N I/Os from each random offset, and with
//! `percentage_random` a share of a random job's I/Os go on from the last. A file whose blocks
//! are all taken, or whose sequential I/O has reached its end, is done for the pass.

use super::super::spec::{Distribution, Sequencer};
use super::dist::{unit, Skew};
use crate::engine::rng::SplitMix64;

/// The random map: one bit per block, set once the block has been used in this pass.
#[derive(Debug, Clone)]
struct Map {
    words: Vec<u64>,
    blocks: u64,
    used: u64,
}

impl Map {
    fn new(blocks: u64) -> Map {
        Map {
            words: vec![0; blocks.div_ceil(64) as usize],
            blocks,
            used: 0,
        }
    }

    fn is_free(&self, b: u64) -> bool {
        self.words[(b / 64) as usize] & (1 << (b % 64)) == 0
    }

    /// Marks up to `n` blocks from `from`, stopping at the first one already used (as fio's
    /// map does, whose I/O is then cut there); how many it marked.
    fn mark(&mut self, from: u64, n: u64) -> u64 {
        let mut marked = 0;
        for b in from..(from + n).min(self.blocks) {
            let w = &mut self.words[(b / 64) as usize];
            if *w & (1 << (b % 64)) != 0 {
                break;
            }
            *w |= 1 << (b % 64);
            self.used += 1;
            marked += 1;
        }
        marked
    }

    /// The first free block at or after `b`, wrapping; `None` when every block is used.
    fn next_free(&self, b: u64) -> Option<u64> {
        if self.used >= self.blocks {
            return None;
        }
        let n = self.words.len();
        let start = (b / 64) as usize;
        for k in 0..=n {
            let i = (start + k) % n;
            let mut w = !self.words[i];
            if k == 0 {
                w &= !0u64 << (b % 64);
            }
            if w != 0 {
                let found = i as u64 * 64 + u64::from(w.trailing_zeros());
                if found < self.blocks {
                    return Some(found);
                }
            }
        }
        // Only the bits before `b` in its own word are left.
        let w = !self.words[start] & ((1u64 << (b % 64)) - 1);
        (w != 0).then(|| start as u64 * 64 + u64::from(w.trailing_zeros()))
    }

    fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
        self.used = 0;
    }
}

/// How a job picks offsets: the same for all its files.
#[derive(Debug, Clone)]
pub struct Picking {
    pub random: bool,
    /// The offset modifier of `rw=KIND:N`.
    pub modifier: i64,
    pub sequencer: Sequencer,
    /// Bytes per block of the random map and of random offsets (fio's `blockalign`).
    pub align: u64,
    pub randommap: bool,
    pub distribution: Distribution,
    /// Per direction, the share of a random job's I/Os that are random, %; the others go on
    /// from the last (`percentage_random`).
    pub pct_random: [u32; 3],
}

/// Where one direction of one file stands.
#[derive(Debug, Clone)]
pub struct FileCursor {
    /// The region's length, bytes (offsets are relative to its start).
    len: u64,
    /// The next sequential position per direction (read, write, trim).
    pos: [u64; 3],
    map: Option<Map>,
    skew: Option<Skew>,
    /// I/Os left going on from the last random offset (`randread:N`).
    run_left: u64,
    last: u64,
    /// Where a `sequence` distribution stands: its index and base.
    seq_at: u64,
    /// The length the random map let the last I/O have: cut at the first block the pass has
    /// already done, as fio cuts it.
    granted: u64,
}

impl FileCursor {
    /// A cursor over a region of `len` bytes.
    pub fn new(len: u64, p: &Picking, seed: u64) -> FileCursor {
        let blocks = len / p.align.max(1);
        let map = (p.random
            && p.randommap
            && matches!(
                p.distribution,
                Distribution::Random | Distribution::Zoned(_) | Distribution::ZonedAbs(_)
            ))
        .then(|| Map::new(blocks));
        FileCursor {
            len,
            pos: [0; 3],
            map,
            skew: Skew::of(&p.distribution, blocks, seed),
            run_left: 0,
            last: 0,
            seq_at: 0,
            granted: 0,
        }
    }

    /// The length the last I/O [`FileCursor::next`] placed may have: its `len`, or less where
    /// the random map found a block of it already done in this pass.
    pub fn granted(&self) -> u64 {
        self.granted
    }

    /// Starts a new pass: positions back to the start, the map cleared.
    pub fn reset(&mut self) {
        self.pos = [0; 3];
        if let Some(m) = &mut self.map {
            m.clear();
        }
        self.run_left = 0;
        self.seq_at = 0;
    }

    /// The offset (in the region) of the next I/O of `len` bytes in direction `dir`, or
    /// `None` when the file is done for this pass in that direction.
    pub fn next(&mut self, dir: usize, len: u64, p: &Picking, r: &mut SplitMix64) -> Option<u64> {
        if len > self.len {
            return None;
        }
        self.granted = len;
        if !p.random {
            return self.next_seq(dir, len, p.modifier);
        }
        if p.pct_random[dir] < 100 && r.below(100) as u32 >= p.pct_random[dir] {
            // percentage_random: this one goes on from the last, if it fits.
            let off = self.pos[dir];
            if off + len <= self.len {
                self.pos[dir] = off + len;
                return Some(off);
            }
        }
        if self.run_left > 0 {
            self.run_left -= 1;
            let off = match p.sequencer {
                Sequencer::Identical => self.last,
                Sequencer::Sequential => self.pos[dir],
            };
            if off + len <= self.len {
                self.pos[dir] = off + len;
                return Some(off);
            }
        }
        let off = self.next_random(len, p, r)?;
        self.last = off;
        self.pos[dir] = off + self.granted;
        if p.modifier > 1 {
            self.run_left = p.modifier as u64 - 1;
        }
        Some(off)
    }

    fn next_seq(&mut self, dir: usize, len: u64, modifier: i64) -> Option<u64> {
        let mut pos = self.pos[dir];
        if pos != 0 && modifier != 0 {
            if modifier > 0 {
                pos += modifier as u64;
                if pos >= self.len {
                    pos = 0;
                }
            } else {
                let back = modifier.unsigned_abs();
                pos = if back > pos {
                    // Going backwards past the start: on from the end (as fio does).
                    self.len.saturating_sub(back)
                } else {
                    pos - back
                };
            }
        }
        if pos + len > self.len {
            return None;
        }
        self.pos[dir] = pos + len;
        Some(pos)
    }

    fn next_random(&mut self, len: u64, p: &Picking, r: &mut SplitMix64) -> Option<u64> {
        let align = p.align.max(1);
        let blocks = self.len / align;
        if blocks == 0 {
            return None;
        }
        // Blocks where an I/O of `len` fits.
        let last_fit = (self.len - len) / align;
        let b = match (&p.distribution, &self.skew) {
            (_, Some(s)) => s.next(r).min(last_fit),
            (Distribution::Zoned(zones), _) => {
                let (lo, hi) = zone_of(r, zones.iter().map(|z| (z.0, z.1 / 100.0 * blocks as f64)));
                self.draw_in(lo, hi, last_fit, r)?
            }
            (Distribution::ZonedAbs(zones), _) => {
                let (lo, hi) = zone_of(r, zones.iter().map(|z| (z.0, (z.1 / align) as f64)));
                self.draw_in(lo, hi, last_fit, r)?
            }
            (
                Distribution::Sequence {
                    blocks: list,
                    stride,
                },
                _,
            ) => {
                let k = self.seq_at as usize % list.len();
                let round = self.seq_at / list.len() as u64;
                self.seq_at += 1;
                let base = if *stride {
                    round * list.len() as u64
                } else {
                    0
                };
                let b = base + list[k];
                if b > last_fit {
                    return None;
                }
                b
            }
            _ => self.draw_in(0, blocks, last_fit, r)?,
        };
        if let Some(m) = &mut self.map {
            let marked = m.mark(b, len.div_ceil(align));
            self.granted = len.min(marked.max(1) * align);
        }
        Some(b * align)
    }

    /// A block in [lo, hi) (clipped to where an I/O fits), the next free one with the map.
    fn draw_in(&self, lo: u64, hi: u64, last_fit: u64, r: &mut SplitMix64) -> Option<u64> {
        let hi = hi.min(last_fit + 1).max(lo + 1);
        let b = (lo + ((hi - lo) as f64 * unit(r)) as u64).min(last_fit);
        match &self.map {
            None => Some(b),
            Some(m) if m.is_free(b) => Some(b),
            Some(m) => m
                .next_free(b)
                .filter(|&f| f <= last_fit)
                .or_else(|| m.next_free(0).filter(|&f| f <= last_fit)),
        }
    }
}

/// The block range of the zone a uniform draw of 1..=100 falls in: zones given as (share of
/// accesses %, blocks), in order.
fn zone_of(r: &mut SplitMix64, zones: impl Iterator<Item = (u32, f64)>) -> (u64, u64) {
    let v = r.below(100) as u32 + 1;
    let (mut acc, mut start) = (0u32, 0.0f64);
    let mut last = (0, 0);
    for (p, size) in zones {
        acc += p;
        last = (start as u64, (start + size) as u64);
        if v <= acc {
            return last;
        }
        start += size;
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picking(random: bool, modifier: i64) -> Picking {
        Picking {
            random,
            modifier,
            sequencer: Sequencer::Sequential,
            align: 4096,
            randommap: true,
            distribution: Distribution::Random,
            pct_random: [100; 3],
        }
    }

    #[test]
    fn an_io_is_cut_at_the_first_block_its_pass_already_did() {
        // fio's map: 64 KiB drawn where only 8 KiB are still free gives 8 KiB.
        let mut m = Map::new(32);
        assert_eq!(m.mark(4, 2), 2);
        assert_eq!(m.mark(2, 16), 2, "stops at block 4");
        assert_eq!(m.mark(6, 4), 4);
        // Through a cursor whose only free blocks are 0 and 1: a 4-block I/O gets 2.
        let p = picking(true, 0);
        let mut c = FileCursor::new(4 * 4096, &p, 1);
        if let Some(m) = &mut c.map {
            m.mark(2, 2);
        }
        let mut r = SplitMix64::new(3);
        let off = c.next(0, 4096 * 4, &p, &mut r);
        assert_eq!((off, c.granted()), (Some(0), 2 * 4096));
    }

    #[test]
    fn the_random_map_takes_each_block_once_per_pass() {
        let p = picking(true, 0);
        let mut c = FileCursor::new(1000 * 4096, &p, 1);
        let mut r = SplitMix64::new(9);
        let mut seen = std::collections::BTreeSet::new();
        while let Some(off) = c.next(0, 4096, &p, &mut r) {
            assert!(seen.insert(off), "{off} twice");
        }
        assert_eq!(seen.len(), 1000);
        c.reset();
        assert!(c.next(0, 4096, &p, &mut r).is_some(), "a new pass");
    }

    #[test]
    fn sequential_holes_and_backwards() {
        let p = picking(false, -8192);
        let mut c = FileCursor::new(64 * 1024, &p, 1);
        let mut r = SplitMix64::new(1);
        let offs: Vec<u64> = (0..4)
            .map(|_| c.next(0, 4096, &p, &mut r).unwrap())
            .collect();
        assert_eq!(offs, [0, 65536 - 8192, 65536 - 12288, 65536 - 16384]);
        let p = picking(false, 112 << 10);
        let mut c = FileCursor::new(1 << 20, &p, 1);
        let offs: Vec<u64> = (0..3)
            .map(|_| c.next(1, 16384, &p, &mut r).unwrap())
            .collect();
        assert_eq!(offs, [0, 128 << 10, 256 << 10], "16k written every 128k");
        let p = picking(false, 0);
        let mut c = FileCursor::new(8192, &p, 1);
        assert_eq!(c.next(0, 4096, &p, &mut r), Some(0));
        assert_eq!(c.next(0, 4096, &p, &mut r), Some(4096));
        assert_eq!(c.next(0, 4096, &p, &mut r), None, "done for the pass");
    }

    #[test]
    fn random_runs_zones_and_sequences() {
        let mut r = SplitMix64::new(5);
        let p = picking(true, 8);
        let mut c = FileCursor::new(1 << 30, &p, 1);
        let first = c.next(0, 4096, &p, &mut r).unwrap();
        for k in 1..8 {
            assert_eq!(c.next(0, 4096, &p, &mut r), Some(first + k * 4096));
        }
        let mut p = picking(true, 0);
        p.randommap = false;
        p.distribution = Distribution::Zoned(vec![(50, 5.0), (30, 15.0), (20, 80.0)]);
        let mut c = FileCursor::new(100 * 4096, &p, 1);
        let low = (0..10_000)
            .filter(|_| c.next(0, 4096, &p, &mut r).unwrap() < 5 * 4096)
            .count();
        assert!(
            (4700..5300).contains(&low),
            "half the accesses in the first 5%: {low}"
        );
        p.distribution = Distribution::Sequence {
            blocks: vec![2, 0, 1],
            stride: true,
        };
        let mut c = FileCursor::new(12 * 4096, &p, 1);
        let b: Vec<u64> = (0..6)
            .map(|_| c.next(0, 4096, &p, &mut r).unwrap() / 4096)
            .collect();
        assert_eq!(b, [2, 0, 1, 5, 3, 4]);
    }
}
