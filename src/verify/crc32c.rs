//! CRC-32C (Castagnoli), the checksum fio's verify headers use for themselves and for
//! `verify=crc32c`: SSE4.2's `crc32` instruction when the CPU has it, a table otherwise.
//! [`crc32c`] is the standard value (reflected, initial and final XOR 0xFFFF_FFFF); fio stores
//! the register without the final XOR, [`crc32c_fio`].

/// The reflected Castagnoli polynomial.
const POLY: u32 = 0x82F6_3B78;

/// Byte-at-a-time table of the polynomial, built at compile time.
const TABLE: [u32; 256] = super::sums::reflected_table!(u32, POLY);

/// CRC-32C of `data`.
pub fn crc32c(data: &[u8]) -> u32 {
    !update(!0, data)
}

/// CRC-32C as fio computes it (`fio_crc32c`): the register started at 0xFFFF_FFFF, without the
/// final inversion, so the bitwise NOT of [`crc32c`].
pub fn crc32c_fio(data: &[u8]) -> u32 {
    update(!0, data)
}

/// Continues a CRC-32C register (not inverted) over `data`.
fn update(crc: u32, data: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("sse4.2") {
            // SAFETY: the CPU has SSE4.2, checked just above.
            return unsafe { update_sse42(crc, data) };
        }
    }
    update_table(crc, data)
}

/// The portable path: one table lookup per byte.
fn update_table(mut crc: u32, data: &[u8]) -> u32 {
    for &b in data {
        crc = TABLE[((crc ^ b as u32) & 0xFF) as usize] ^ (crc >> 8);
    }
    crc
}

/// Eight bytes per instruction with SSE4.2's `crc32`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
unsafe fn update_sse42(crc: u32, data: &[u8]) -> u32 {
    use std::arch::x86_64::{_mm_crc32_u64, _mm_crc32_u8};
    let mut c = crc as u64;
    let mut chunks = data.chunks_exact(8);
    for w in &mut chunks {
        c = _mm_crc32_u64(c, u64::from_le_bytes(w.try_into().expect("8 bytes")));
    }
    let mut c = c as u32;
    for &b in chunks.remainder() {
        c = _mm_crc32_u8(c, b);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_check_values() {
        // The CRC catalogue's check value for CRC-32C, and RFC 3720's test vectors.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(&[0xFFu8; 32]), 0x62A8_AB43);
        let inc: Vec<u8> = (0u8..32).collect();
        assert_eq!(crc32c(&inc), 0x46DD_794E);
        assert_eq!(crc32c(b""), 0);
        assert_eq!(crc32c_fio(b"123456789"), !0xE306_9283);
    }

    #[test]
    fn both_paths_agree_at_every_length_and_alignment() {
        let data: Vec<u8> = (0..4099u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for start in 0..9 {
            for len in [0, 1, 7, 8, 9, 63, 64, 65, 4000] {
                let d = &data[start..start + len];
                assert_eq!(
                    update(!0, d),
                    update_table(!0, d),
                    "start {start} len {len}"
                );
            }
        }
    }
}
