//! The table-driven checksums fio's `verify=` offers besides CRC-32C, each as fio 3.33 computes
//! and stores it, so a header iotrial writes is one fio checks and the other way round:
//! `crc64` (the Jones polynomial, reflected, register from 0, no final inversion), `crc32`
//! (POSIX cksum's polynomial, most significant bit first, from 0, no length and no inversion),
//! `crc16` (CRC-16/ARC), `crc7` (x^7 + x^3 + 1, the MMC polynomial, a 7-bit register) and
//! `xxhash` (XXH32 seeded with 1).

/// The reflected Jones CRC-64 polynomial.
const POLY64: u64 = 0x95AC_9329_AC4B_C9B5;
/// POSIX cksum's CRC-32 polynomial (most significant bit first).
const POLY32: u32 = 0x04C1_1DB7;
/// CRC-16/ARC's polynomial 0x8005, reflected.
const POLY16: u16 = 0xA001;
/// x^7 + x^3 + 1 without its top term.
const POLY7: u8 = 0x09;

/// The byte-at-a-time table of a reflected CRC of type `$t` and polynomial `$poly`.
macro_rules! reflected_table {
    ($t:ty, $poly:expr) => {{
        let mut t = [0 as $t; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as $t;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 { (c >> 1) ^ $poly } else { c >> 1 };
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    }};
}
pub(crate) use reflected_table;

const TABLE64: [u64; 256] = reflected_table!(u64, POLY64);

const TABLE32: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = (i as u32) << 24;
        let mut k = 0;
        while k < 8 {
            c = if c & 0x8000_0000 != 0 {
                (c << 1) ^ POLY32
            } else {
                c << 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

const TABLE16: [u16; 256] = reflected_table!(u16, POLY16);

/// The 7-bit remainder of each byte times x^7: indexed by `(crc << 1) ^ byte`.
const TABLE7: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let mut reg = 0u8;
        let mut k = 0;
        while k < 8 {
            let bit = ((reg >> 6) & 1) ^ (((i as u8) >> (7 - k)) & 1);
            reg = (reg << 1) & 0x7f;
            if bit != 0 {
                reg ^= POLY7;
            }
            k += 1;
        }
        t[i] = reg;
        i += 1;
    }
    t
};

/// fio's `crc64`.
pub fn crc64(data: &[u8]) -> u64 {
    data.iter().fold(0u64, |c, &b| {
        TABLE64[((c ^ u64::from(b)) & 0xff) as usize] ^ (c >> 8)
    })
}

/// fio's `crc32`.
pub fn crc32(data: &[u8]) -> u32 {
    data.iter().fold(0u32, |c, &b| {
        (c << 8) ^ TABLE32[(((c >> 24) ^ u32::from(b)) & 0xff) as usize]
    })
}

/// fio's `crc16`.
pub fn crc16(data: &[u8]) -> u16 {
    data.iter().fold(0u16, |c, &b| {
        (c >> 8) ^ TABLE16[((c ^ u16::from(b)) & 0xff) as usize]
    })
}

/// fio's `crc7`.
pub fn crc7(data: &[u8]) -> u8 {
    data.iter()
        .fold(0u8, |c, &b| TABLE7[usize::from((c << 1) ^ b)])
}

const P1: u32 = 2_654_435_761;
const P2: u32 = 2_246_822_519;
const P3: u32 = 3_266_489_917;
const P4: u32 = 668_265_263;
const P5: u32 = 374_761_393;

fn le32(b: &[u8]) -> u32 {
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn round(acc: u32, lane: u32) -> u32 {
    acc.wrapping_add(lane.wrapping_mul(P2))
        .rotate_left(13)
        .wrapping_mul(P1)
}

/// XXH32 of `data` with `seed`.
pub fn xxh32(data: &[u8], seed: u32) -> u32 {
    let n = data.len();
    let mut rest = data;
    let mut h = if n >= 16 {
        let mut v = [
            seed.wrapping_add(P1).wrapping_add(P2),
            seed.wrapping_add(P2),
            seed,
            seed.wrapping_sub(P1),
        ];
        while rest.len() >= 16 {
            for (k, acc) in v.iter_mut().enumerate() {
                *acc = round(*acc, le32(&rest[4 * k..]));
            }
            rest = &rest[16..];
        }
        v[0].rotate_left(1)
            .wrapping_add(v[1].rotate_left(7))
            .wrapping_add(v[2].rotate_left(12))
            .wrapping_add(v[3].rotate_left(18))
    } else {
        seed.wrapping_add(P5)
    };
    h = h.wrapping_add(n as u32);
    while rest.len() >= 4 {
        h = h
            .wrapping_add(le32(rest).wrapping_mul(P3))
            .rotate_left(17)
            .wrapping_mul(P4);
        rest = &rest[4..];
    }
    for &b in rest {
        h = h
            .wrapping_add(u32::from(b).wrapping_mul(P5))
            .rotate_left(11)
            .wrapping_mul(P1);
    }
    h ^= h >> 15;
    h = h.wrapping_mul(P2);
    h ^= h >> 13;
    h = h.wrapping_mul(P3);
    h ^ (h >> 16)
}

/// fio's `xxhash`: XXH32 seeded with 1.
pub fn xxhash_fio(data: &[u8]) -> u32 {
    xxh32(data, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHECK: &[u8] = b"123456789";

    #[test]
    fn the_catalogued_check_values() {
        // CRC-64/Jones (Redis), CRC-16/ARC, XXH32: their published values for "123456789"
        // and for the empty input.
        assert_eq!(crc64(CHECK), 0xe9c6_d914_c4b8_d9ca);
        assert_eq!(crc16(CHECK), 0xbb3d);
        assert_eq!(xxh32(b"", 0), 0x02cc_5d05);
        assert_eq!(xxh32(b"a", 0), 0x550d_7456);
        assert_eq!(xxh32(b"abc", 0), 0x32d1_53ff);
        // CRC-32/MPEG-2 runs the same register from 0xFFFFFFFF: started there, it gives its
        // catalogued value.
        let mpeg2 = CHECK.iter().fold(!0u32, |c, &b| {
            (c << 8) ^ TABLE32[(((c >> 24) ^ u32::from(b)) & 0xff) as usize]
        });
        assert_eq!(mpeg2, 0x0376_e6e7);
        // CRC-7/MMC of "123456789" is 0x75.
        assert_eq!(crc7(CHECK), 0x75);
    }

    #[test]
    fn tables_hold_their_polynomials() {
        assert_eq!(TABLE64[128], POLY64);
        assert_eq!(TABLE64[1], 0x7ad8_70c8_3035_8979);
        assert_eq!(TABLE32[1], POLY32);
        assert_eq!(TABLE16[128], POLY16);
        assert_eq!((TABLE7[1], TABLE7[2]), (0x09, 0x12));
    }

    #[test]
    fn xxh32_long_input_takes_the_four_lanes() {
        let data: Vec<u8> = (0..100u8).collect();
        // Every prefix length from 0 to 100 differs from its neighbours.
        let all: Vec<u32> = (0..=100).map(|n| xxh32(&data[..n], 1)).collect();
        assert!(all.windows(2).all(|w| w[0] != w[1]));
    }
}
