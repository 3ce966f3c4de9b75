//! Tests of the verify header: round trips, every kind of damage, and fio's layout.

use super::*;

fn data(len: usize, seed: u32) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 11) as u8)
        .collect()
}

fn header(offset: u64) -> BlockHeader {
    BlockHeader {
        len: 0,
        rand_seed: 0x1234_5678_9ABC_DEF0,
        offset,
        time_sec: 1_764_000_000,
        time_nsec: 123_456_789,
        thread: 3,
        numberio: 65_535,
    }
}

#[test]
fn every_kind_round_trips() {
    for sum in Checksum::ALL {
        let mut b = data(4096, 7);
        seal(&mut b, &header(8192), sum);
        let s = inspect(&b, None).unwrap();
        assert_eq!(s.checksum, sum);
        assert_eq!(
            s.header,
            BlockHeader {
                len: 4096,
                ..header(8192)
            }
        );
        assert_eq!(Checksum::parse(sum.name()), Some(sum));
        assert_eq!(Checksum::from_fio_type(sum.fio_type()), Some(sum));
    }
}

#[test]
fn the_layout_is_fios() {
    let mut b = vec![0u8; 512];
    seal(&mut b, &header(0x0102_0304_0506_0708), Checksum::Crc32c);
    assert_eq!(&b[0..2], &[0xCA, 0xAC], "magic 0xacca, little-endian");
    assert_eq!(u16_at(&b, 2), 5, "VERIFY_CRC32C");
    assert_eq!(u32_at(&b, 4), 512);
    assert_eq!(u64_at(&b, 16), 0x0102_0304_0506_0708);
    assert_eq!(u16_at(&b, 32), 3);
    assert_eq!(u16_at(&b, 34), 65_535);
    assert_eq!(u32_at(&b, 36), crc32c(&b[..36]));
    assert_eq!(u32_at(&b, 40), crc32c(&b[44..]));
}

#[test]
fn damage_is_named() {
    let mut b = data(4096, 1);
    seal(&mut b, &header(0), Checksum::Crc32c);
    let mut d = b.clone();
    d[3000] ^= 1;
    assert_eq!(
        inspect(&d, None),
        Err(Mismatch::Data {
            checksum: Checksum::Crc32c,
            first_bad: None
        })
    );
    let mut h = b.clone();
    h[20] ^= 0x80;
    assert!(matches!(inspect(&h, None), Err(Mismatch::HeaderCrc { .. })));
    assert_eq!(
        inspect(&vec![0u8; 4096], None),
        Err(Mismatch::NoHeader { zeros: true })
    );
    assert_eq!(
        inspect(&data(4096, 9), None),
        Err(Mismatch::NoHeader { zeros: false })
    );
    assert_eq!(
        inspect(&b[..2048], None),
        Err(Mismatch::Length {
            stored: 4096,
            wanted: 2048
        })
    );
    // A torn write: the first sectors new, the rest an older version of the block.
    let mut old = data(4096, 2);
    seal(&mut old, &header(0), Checksum::Md5);
    let mut new = data(4096, 3);
    seal(&mut new, &header(0), Checksum::Md5);
    new[512..].copy_from_slice(&old[512..]);
    assert!(matches!(
        inspect(&new, None),
        Err(Mismatch::Data {
            checksum: Checksum::Md5,
            ..
        })
    ));
}

#[test]
fn a_pattern_is_compared_byte_for_byte() {
    let pat = [0xDE, 0xAD, 0xBE, 0xEF, 0x01];
    let mut b: Vec<u8> = (0..1000).map(|i| pat[i % pat.len()]).collect();
    seal(&mut b, &header(0), Checksum::Pattern);
    assert!(inspect(&b, Some(&pat)).is_ok());
    b[777] = 0;
    assert_eq!(
        inspect(&b, Some(&pat)),
        Err(Mismatch::Data {
            checksum: Checksum::Pattern,
            first_bad: Some(777)
        })
    );
    assert!(
        inspect(&b, None).is_ok(),
        "without a pattern only the header is checked"
    );
}

#[test]
fn a_block_gets_one_header_per_interval() {
    let mut b = data(10_000, 4);
    seal_block(&mut b, 4096, &header(1 << 20), Checksum::Crc32c);
    let offsets: Vec<(u64, u32)> = [0..4096, 4096..8192, 8192..10_000]
        .into_iter()
        .map(|r| {
            let s = inspect(&b[r], None).unwrap();
            (s.header.offset, s.header.len)
        })
        .collect();
    assert_eq!(
        offsets,
        [
            (1 << 20, 4096),
            ((1 << 20) + 4096, 4096),
            ((1 << 20) + 8192, 1808)
        ]
    );
}

#[test]
#[should_panic(expected = "cannot hold")]
fn an_interval_too_small_for_the_header_is_refused() {
    let mut b = vec![0u8; Checksum::Md5.prefix_len()];
    seal(&mut b, &header(0), Checksum::Md5);
}
