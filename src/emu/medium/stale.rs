//! A used disk: sectors this run never wrote hold an earlier owner's data, not zeros, and the
//! drive has no TRIM (a hard disk: discards and write-zeroes fail, so the kernel writes zeros
//! itself where it needs them). With `stale=true` a device reads the holes of its image (never
//! written since it was made) as that earlier data: fio verify headers of a writer no trial
//! has (thread [`THREAD`], seed [`SEED`]) over seeded bytes, one per 4 KiB, so a scan after a
//! power cut recognises "whatever happened to be on the disk" wherever a filesystem exposes it.

use crate::verify::{seal, BlockHeader, Checksum};

/// The `thread` of the earlier owner's headers (no stream of a plan has this index).
pub const THREAD: u16 = u16::MAX;
/// The `rand_seed` of the earlier owner's headers.
pub const SEED: u64 = 0x5747_A1E0_0D15_C0DE;
/// Bytes per stale block.
pub const BLOCK: u64 = 4096;

/// Whether a header read back is the earlier owner's.
pub fn is_stale(thread: u16, rand_seed: u64) -> bool {
    thread == THREAD && rand_seed == SEED
}

/// Writes the earlier owner's data for device bytes `[offset, offset + buf.len())` into `buf`.
pub fn fill(buf: &mut [u8], offset: u64) {
    let mut block = [0u8; BLOCK as usize];
    let mut done = 0usize;
    while done < buf.len() {
        let at = offset + done as u64;
        let start = at - at % BLOCK;
        let mut rng = crate::engine::rng::SplitMix64::new(SEED ^ start);
        for c in block.chunks_mut(8) {
            c.copy_from_slice(&rng.next_u64().to_le_bytes());
        }
        let h = BlockHeader {
            rand_seed: SEED,
            offset: start,
            thread: THREAD,
            ..BlockHeader::default()
        };
        seal(&mut block, &h, Checksum::Crc32c);
        let from = (at - start) as usize;
        let n = (BLOCK as usize - from).min(buf.len() - done);
        buf[done..done + n].copy_from_slice(&block[from..from + n]);
        done += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_blocks_carry_the_earlier_owners_header_at_their_place() {
        let mut buf = vec![0u8; 3 * BLOCK as usize];
        fill(&mut buf, 8192);
        let h = crate::verify::inspect(&buf[4096..8192], None)
            .unwrap()
            .header;
        assert!(is_stale(h.thread, h.rand_seed));
        assert_eq!(h.offset, 12288);
        // The same bytes whatever the read's alignment.
        let mut part = vec![0u8; 100];
        fill(&mut part, 12288 + 50);
        assert_eq!(part, buf[4096 + 50..4096 + 150]);
    }
}
