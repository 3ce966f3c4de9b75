//! The length of a job's next I/O: its direction's one size, a size from its range (a
//! multiple of the smallest unless `blocksize_unaligned`), or a size drawn by its `bssplit`
//! weights.

use super::super::spec::BlockSizes;
use super::dist::unit;
use crate::engine::rng::SplitMix64;

/// A draw of a size from `bs`.
pub fn draw(bs: &BlockSizes, unaligned: bool, r: &mut SplitMix64) -> u64 {
    match bs {
        BlockSizes::Fixed(b) => *b,
        BlockSizes::Range { min, max } => {
            if min == max {
                return *min;
            }
            let b = min + ((max - min) as f64 * unit(r)) as u64;
            if unaligned || !min.is_power_of_two() {
                b
            } else {
                (b & !(min - 1)).max(*min)
            }
        }
        BlockSizes::Split(split) => {
            let v = r.below(100) as u32;
            let mut acc = 0;
            for &(b, p) in split {
                acc += p;
                if v < acc {
                    return b;
                }
            }
            split.last().map_or(4096, |x| x.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_follow_the_weights_and_the_range() {
        let mut r = SplitMix64::new(1);
        let s = BlockSizes::Split(vec![(4096, 80), (65536, 20)]);
        let n = (0..10_000)
            .filter(|_| draw(&s, false, &mut r) == 4096)
            .count();
        assert!((7700..8300).contains(&n), "{n}");
        let range = BlockSizes::Range {
            min: 4096,
            max: 16384,
        };
        for _ in 0..1000 {
            let b = draw(&range, false, &mut r);
            assert!((4096..=16384).contains(&b) && b % 4096 == 0, "{b}");
        }
    }
}
