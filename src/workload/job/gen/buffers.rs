//! What a job's writes carry, as fio fills its buffers: pseudo-random bytes with each 512-byte
//! sector stamped with the write's offset and number (fio's `scramble_buffers`, on by default,
//! so no two writes are alike to a deduplicating stack), new random bytes for every write
//! (`refill_buffers`), zeros (`zero_buffers`) or `buffer_pattern`; `buffer_compress_percentage`
//! makes each `buffer_compress_chunk` that share zeros (or the pattern) after its random part,
//! so a compressing stack compresses it that much; `dedupe_percentage` makes that share of the
//! writes repeat earlier content, the last unique one (`dedupe_mode=repeat`) or one of a working
//! set of `dedupe_working_set_percentage` of the file (`working_set`), shared between jobs with
//! `dedupe_global`.

use super::super::spec::BufferSpec;
use crate::engine::rng::SplitMix64;

/// Fills one job clone's write buffers.
#[derive(Debug, Clone)]
pub struct Filler {
    spec: BufferSpec,
    rng: SplitMix64,
    /// The content seed of the last unique write (repeat mode).
    last: u64,
    /// The working set: this many seeds from `base`.
    ws_base: u64,
    ws_len: u64,
    /// Writes filled so far (fio's scramble stamps it).
    count: u64,
}

impl Filler {
    /// A filler for a job of `spec` whose files hold `file_bytes` written in `bs`-byte writes;
    /// `seed` its own, `global_seed` the one jobs share with `dedupe_global`.
    pub fn new(spec: BufferSpec, file_bytes: u64, bs: u64, seed: u64, global_seed: u64) -> Filler {
        let ws_len = (file_bytes * u64::from(spec.dedupe_ws_pct) / 100 / bs.max(1)).max(1);
        Filler {
            ws_base: if spec.dedupe_global {
                global_seed
            } else {
                seed
            },
            rng: SplitMix64::new(seed ^ 0xB0FF),
            last: seed,
            ws_len,
            count: 0,
            spec,
        }
    }

    /// Fills `buf`, a write to `offset`.
    pub fn fill(&mut self, buf: &mut [u8], offset: u64, pattern: Option<&[u8]>) {
        self.count += 1;
        let s = &self.spec;
        if s.zero {
            buf.fill(0);
            return;
        }
        let dedupe = s.dedupe_pct > 0 && (self.rng.below(100) as u32) < s.dedupe_pct;
        let fresh = s.refill || s.compress_pct > 0 || s.dedupe_pct > 0;
        if !fresh {
            if let Some(p) = pattern {
                for (i, b) in buf.iter_mut().enumerate() {
                    *b = p[i % p.len()];
                }
                return;
            }
            if s.scramble {
                scramble(buf, offset, self.count);
            }
            return;
        }
        let seed = match (dedupe, s.dedupe_working_set) {
            (true, false) => self.last,
            (true, true) => self.ws_base.wrapping_add(self.rng.below(self.ws_len)),
            (false, _) => {
                let n = self.rng.next_u64();
                self.last = n;
                n
            }
        };
        random_fill(buf, seed);
        if s.compress_pct > 0 {
            let chunk = if s.compress_chunk == 0 {
                buf.len()
            } else {
                s.compress_chunk as usize
            };
            for c in buf.chunks_mut(chunk.max(1)) {
                let keep = c.len() * (100 - s.compress_pct.min(100) as usize) / 100;
                match pattern {
                    Some(p) => {
                        for (i, b) in c[keep..].iter_mut().enumerate() {
                            *b = p[i % p.len()];
                        }
                    }
                    None => c[keep..].fill(0),
                }
            }
        }
    }
}

/// Pseudo-random bytes of `seed` over `buf`.
fn random_fill(buf: &mut [u8], seed: u64) {
    let mut r = SplitMix64::new(seed);
    for c in buf.chunks_mut(8) {
        let v = r.next_u64().to_le_bytes();
        c.copy_from_slice(&v[..c.len()]);
    }
}

/// fio's scramble: the first 16 bytes of each 512-byte sector hold the write's offset and
/// number, so no two writes carry the same sectors.
fn scramble(buf: &mut [u8], offset: u64, n: u64) {
    for (k, s) in buf.chunks_mut(512).enumerate() {
        if s.len() >= 16 {
            s[..8].copy_from_slice(&(offset + 512 * k as u64).to_le_bytes());
            s[8..16].copy_from_slice(&n.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn spec() -> BufferSpec {
        BufferSpec {
            scramble: true,
            compress_chunk: 512,
            ..BufferSpec::default()
        }
    }

    #[test]
    fn compressible_to_the_share_asked() {
        let mut s = spec();
        s.compress_pct = 50;
        let mut f = Filler::new(s, 1 << 20, 4096, 1, 2);
        let mut buf = vec![0xffu8; 4096];
        f.fill(&mut buf, 0, None);
        let zeros = buf.iter().filter(|&&b| b == 0).count();
        assert!(
            (2040..2100).contains(&zeros),
            "half of each 512-byte chunk: {zeros}"
        );
        assert!(buf[..256].iter().filter(|&&b| b == 0).count() < 10);
    }

    #[test]
    fn a_share_of_writes_repeats_and_the_others_are_unique() {
        for ws in [false, true] {
            let mut s = spec();
            s.dedupe_pct = 50;
            s.dedupe_working_set = ws;
            s.dedupe_ws_pct = 10;
            let mut f = Filler::new(s, 4 << 20, 4096, 7, 8);
            let mut seen = HashSet::new();
            let mut dups = 0;
            for k in 0..1000u64 {
                let mut buf = vec![0u8; 4096];
                f.fill(&mut buf, k * 4096, None);
                if !seen.insert(buf) {
                    dups += 1;
                }
            }
            assert!(
                (400..600).contains(&dups),
                "about half repeat ({ws}): {dups}"
            );
        }
        // fio's default: every write differs (the scramble), even from one buffer.
        let mut f = Filler::new(spec(), 1 << 20, 4096, 1, 1);
        let (mut a, mut b) = (vec![9u8; 4096], vec![9u8; 4096]);
        f.fill(&mut a, 0, None);
        f.fill(&mut b, 4096, None);
        assert_ne!(a, b);
        let mut z = spec();
        z.zero = true;
        Filler::new(z, 1, 1, 1, 1).fill(&mut a, 0, None);
        assert!(a.iter().all(|&x| x == 0));
    }
}
