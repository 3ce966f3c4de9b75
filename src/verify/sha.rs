//! The SHA checksums of fio's `verify=`, laid out in the header as fio 3.33 lays them out, which
//! is not always the digest the standard names:
//!
//! - `sha1`: the standard SHA-1, its five state words stored little-endian (fio keeps the words,
//!   not the big-endian digest bytes);
//! - `sha256`: SHA-256's compression over the data, padded with the bit length little-endian
//!   (fio's), and 64 bytes stored: the last block the compression took, its first 8 bytes
//!   replaced by the low byte of each state word;
//! - `sha512`: fio's never finishes the hash; what it stores is its 128-byte block buffer after
//!   the data went through: the last partial block over the first block's bytes.

/// SHA-1's initial state.
const SHA1_INIT: [u32; 5] = [
    0x6745_2301,
    0xefcd_ab89,
    0x98ba_dcfe,
    0x1032_5476,
    0xc3d2_e1f0,
];

/// SHA-256's initial state.
const SHA256_INIT: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

/// SHA-1's compression of one 64-byte block.
fn sha1_block(h: &mut [u32; 5], block: &[u8]) {
    let mut w = [0u32; 80];
    for (t, c) in block.chunks_exact(4).enumerate() {
        w[t] = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
    }
    for t in 16..80 {
        w[t] = (w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]).rotate_left(1);
    }
    let [mut a, mut b, mut c, mut d, mut e] = *h;
    for (t, &wt) in w.iter().enumerate() {
        let (f, k) = match t {
            0..=19 => ((b & c) | (!b & d), 0x5a82_7999),
            20..=39 => (b ^ c ^ d, 0x6ed9_eba1),
            40..=59 => ((b & c) | (b & d) | (c & d), 0x8f1b_bcdc),
            _ => (b ^ c ^ d, 0xca62_c1d6),
        };
        let tmp = a
            .rotate_left(5)
            .wrapping_add(f)
            .wrapping_add(e)
            .wrapping_add(k)
            .wrapping_add(wt);
        e = d;
        d = c;
        c = b.rotate_left(30);
        b = a;
        a = tmp;
    }
    for (x, v) in h.iter_mut().zip([a, b, c, d, e]) {
        *x = x.wrapping_add(v);
    }
}

/// The standard SHA-1 state after `data`, padded (its words: the digest read big-endian).
pub fn sha1_state(data: &[u8]) -> [u32; 5] {
    let mut h = SHA1_INIT;
    let full = data.len() / 64 * 64;
    for block in data[..full].chunks_exact(64) {
        sha1_block(&mut h, block);
    }
    let tail = &data[full..];
    let mut last = [0u8; 128];
    last[..tail.len()].copy_from_slice(tail);
    last[tail.len()] = 0x80;
    let blocks = if tail.len() < 56 { 1 } else { 2 };
    let bits = (data.len() as u64) << 3;
    last[blocks * 64 - 8..blocks * 64].copy_from_slice(&bits.to_be_bytes());
    for block in last[..blocks * 64].chunks_exact(64) {
        sha1_block(&mut h, block);
    }
    h
}

/// fio's `sha1` header field (20 bytes).
pub fn fio_sha1(data: &[u8]) -> [u8; 20] {
    let mut out = [0u8; 20];
    for (o, w) in out.chunks_exact_mut(4).zip(sha1_state(data)) {
        o.copy_from_slice(&w.to_le_bytes());
    }
    out
}

/// fio's `sha256` header field (64 bytes).
pub fn fio_sha256(data: &[u8]) -> [u8; 64] {
    let mut state = SHA256_INIT;
    let full = data.len() / 64 * 64;
    for block in data[..full].chunks_exact(64) {
        let b: [u8; 64] = block.try_into().expect("64 bytes");
        sha2::block_api::compress256(&mut state, &[b]);
    }
    let tail = &data[full..];
    let bits = ((data.len() as u32 as u64) << 3).to_le_bytes();
    let mut last = [0u8; 64];
    if tail.len() < 56 {
        last[..tail.len()].copy_from_slice(tail);
        last[tail.len()] = 0x80;
    } else {
        let mut first = [0u8; 64];
        first[..tail.len()].copy_from_slice(tail);
        first[tail.len()] = 0x80;
        sha2::block_api::compress256(&mut state, &[first]);
    }
    last[56..].copy_from_slice(&bits);
    sha2::block_api::compress256(&mut state, &[last]);
    for (b, s) in last.iter_mut().zip(state) {
        *b = s as u8;
    }
    last
}

/// fio's `sha512` header field (128 bytes): its block buffer after `data`. Below 128 bytes of
/// data fio leaves the rest of the buffer as it was (unknown); iotrial zeroes it.
pub fn fio_sha512(data: &[u8]) -> [u8; 128] {
    let mut buf = [0u8; 128];
    if data.len() < 128 {
        buf[..data.len()].copy_from_slice(data);
        return buf;
    }
    buf.copy_from_slice(&data[..128]);
    let consumed = data.len() / 128 * 128;
    let rest = &data[consumed..];
    buf[..rest.len()].copy_from_slice(rest);
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(words: &[u32]) -> String {
        words.iter().map(|w| format!("{w:08x}")).collect()
    }

    #[test]
    fn sha1_is_the_standard_one() {
        assert_eq!(
            hex(&sha1_state(b"abc")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(
            hex(&sha1_state(b"")),
            "da39a3ee5e6b4b0d3255bfef95601890afd80709"
        );
        let long = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        assert_eq!(
            hex(&sha1_state(long)),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
        );
        // Stored as little-endian words.
        assert_eq!(fio_sha1(b"abc")[..4], [0x36, 0x3e, 0x99, 0xa9]);
    }

    #[test]
    fn sha256_keeps_the_last_block_and_low_bytes_of_the_state() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7) as u8).collect();
        let s = fio_sha256(&data);
        // 1000 = 15 x 64 + 40: the last block holds the 40 bytes, 0x80, zeros, the length.
        assert_eq!(s[8..40], data[968..1000]);
        assert_eq!(s[40], 0x80);
        assert!(s[41..56].iter().all(|&b| b == 0));
        assert_eq!(s[56..], 8000u64.to_le_bytes());
        // A tail of 56 bytes or more takes a block of its own: zeros, then the length.
        let s = fio_sha256(&data[..60]);
        assert!(s[8..56].iter().all(|&b| b == 0));
        assert_ne!(fio_sha256(&data[..999]), fio_sha256(&data[1..]));
    }

    #[test]
    fn sha512_is_the_block_buffer() {
        let data: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
        let s = fio_sha512(&data);
        // 300 = 2 x 128 + 44: the last 44 bytes over the first block's.
        assert_eq!(s[..44], data[256..300]);
        assert_eq!(s[44..], data[44..128]);
        assert_eq!(
            fio_sha512(&data[..256]),
            <[u8; 128]>::try_from(&data[..128]).unwrap()
        );
    }
}
