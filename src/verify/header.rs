//! fio's verify header, byte for byte as fio 3.33 (Debian's fio) writes it, so a block iotrial
//! wrote is one `fio --verify_only` checks and a block fio wrote is one iotrial reads:
//!
//! ```text
//! 0  magic u16 (0xacca)   2  verify_type u16   4  len u32 (bytes this header covers)
//! 8  rand_seed u64        16 offset u64 (of this header in the file or device)
//! 24 time_sec u32         28 time_nsec u32 (when the write was issued)
//! 32 thread u16           34 numberio u16 (the writer's sequence number, mod 2^16)
//! 36 crc32 u32: CRC-32C of bytes 0..36 (fio's: without the final inversion)
//! 40 the checksum of the data (md5 16 bytes, crc64 8, crc32 and crc32c 4, crc16 2, crc7 1,
//!    sha256 64, sha512 128, sha1 20, xxhash 4; meta and pattern: none), then data
//! ```
//! All fields little-endian. One header starts every `verify_interval` bytes of a written
//! block; its checksum covers the data from the end of the checksum to the next header.

use super::crc32c::crc32c_fio as crc32c;
use super::md5::md5;
use super::{sha, sums};

/// The header's first two bytes.
pub const MAGIC: u16 = 0xACCA;
/// Bytes of the header itself, before the data's checksum.
pub const HEADER_LEN: usize = 40;
/// Where the header's own CRC-32C starts (it covers the bytes before it).
const CRC_AT: usize = 36;

/// What checks the data after a header: fio's `verify=` values iotrial implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Checksum {
    /// The header only (fio's `meta`, `VERIFY_HDR_ONLY`): offset, writer, sequence and time.
    Meta,
    /// MD5 of the data.
    Md5,
    /// fio's CRC-64 of the data ([`super::sums::crc64`]).
    Crc64,
    /// fio's CRC-32 of the data ([`super::sums::crc32`]).
    Crc32,
    /// CRC-32C of the data (`crc32c`, also `crc32c-intel`).
    Crc32c,
    /// fio's CRC-16 and CRC-7 of the data.
    Crc16,
    Crc7,
    /// fio's SHA-256, SHA-512 and SHA-1 fields ([`super::sha`]).
    Sha256,
    Sha512,
    Sha1,
    /// XXH32 of the data, seeded with 1.
    Xxhash,
    /// The data holds the job's `verify_pattern`, compared byte for byte.
    Pattern,
}

impl Checksum {
    /// Every kind, in fio's order of `verify_type`.
    pub const ALL: [Checksum; 12] = [
        Checksum::Meta,
        Checksum::Md5,
        Checksum::Crc64,
        Checksum::Crc32,
        Checksum::Crc32c,
        Checksum::Crc16,
        Checksum::Crc7,
        Checksum::Sha256,
        Checksum::Sha512,
        Checksum::Xxhash,
        Checksum::Sha1,
        Checksum::Pattern,
    ];

    /// The value fio writes in `verify_type`.
    pub fn fio_type(self) -> u16 {
        match self {
            Checksum::Meta => 1,
            Checksum::Md5 => 2,
            Checksum::Crc64 => 3,
            Checksum::Crc32 => 4,
            Checksum::Crc32c => 5,
            Checksum::Crc16 => 7,
            Checksum::Crc7 => 8,
            Checksum::Sha256 => 9,
            Checksum::Sha512 => 10,
            Checksum::Xxhash => 15,
            Checksum::Sha1 => 16,
            Checksum::Pattern => 17,
        }
    }

    /// The kind fio's `verify_type` value names, if iotrial implements it.
    pub fn from_fio_type(t: u16) -> Option<Checksum> {
        match t {
            6 => Some(Checksum::Crc32c),
            t => Checksum::ALL.into_iter().find(|c| c.fio_type() == t),
        }
    }

    /// The kind a `verify=` value names (`crc32c-intel` is `crc32c`).
    pub fn parse(name: &str) -> Option<Checksum> {
        match name {
            "crc32c-intel" => Some(Checksum::Crc32c),
            n => Checksum::ALL.into_iter().find(|c| c.name() == n),
        }
    }

    /// The name `verify=` takes.
    pub fn name(self) -> &'static str {
        match self {
            Checksum::Meta => "meta",
            Checksum::Md5 => "md5",
            Checksum::Crc64 => "crc64",
            Checksum::Crc32 => "crc32",
            Checksum::Crc32c => "crc32c",
            Checksum::Crc16 => "crc16",
            Checksum::Crc7 => "crc7",
            Checksum::Sha256 => "sha256",
            Checksum::Sha512 => "sha512",
            Checksum::Sha1 => "sha1",
            Checksum::Xxhash => "xxhash",
            Checksum::Pattern => "pattern",
        }
    }

    /// Bytes of the data's checksum stored after the header.
    pub fn sum_len(self) -> usize {
        match self {
            Checksum::Md5 => 16,
            Checksum::Crc64 => 8,
            Checksum::Crc32 | Checksum::Crc32c | Checksum::Xxhash => 4,
            Checksum::Crc16 => 2,
            Checksum::Crc7 => 1,
            Checksum::Sha256 => 64,
            Checksum::Sha512 => 128,
            Checksum::Sha1 => 20,
            Checksum::Meta | Checksum::Pattern => 0,
        }
    }

    /// Bytes at the start of each verify interval that are not data: header and checksum.
    pub fn prefix_len(self) -> usize {
        HEADER_LEN + self.sum_len()
    }

    /// The smallest verify interval this kind fits in (fio refuses a block no larger than the
    /// header and checksum: "Blocksize too small").
    pub fn min_interval(self) -> usize {
        self.prefix_len() + 1
    }

    /// Writes the checksum of `data` into `out` (its [`Checksum::sum_len`] bytes), as fio
    /// stores it.
    fn fill(self, data: &[u8], out: &mut [u8]) {
        match self {
            Checksum::Md5 => out.copy_from_slice(&md5(data)),
            Checksum::Crc64 => out.copy_from_slice(&sums::crc64(data).to_le_bytes()),
            Checksum::Crc32 => out.copy_from_slice(&sums::crc32(data).to_le_bytes()),
            Checksum::Crc32c => out.copy_from_slice(&crc32c(data).to_le_bytes()),
            Checksum::Crc16 => out.copy_from_slice(&sums::crc16(data).to_le_bytes()),
            Checksum::Crc7 => out[0] = sums::crc7(data),
            Checksum::Sha256 => out.copy_from_slice(&sha::fio_sha256(data)),
            Checksum::Sha512 => out.copy_from_slice(&sha::fio_sha512(data)),
            Checksum::Sha1 => out.copy_from_slice(&sha::fio_sha1(data)),
            Checksum::Xxhash => out.copy_from_slice(&sums::xxhash_fio(data).to_le_bytes()),
            Checksum::Meta | Checksum::Pattern => {}
        }
    }
}

/// The fields of one header a writer chooses; `len` is the interval's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockHeader {
    pub len: u32,
    pub rand_seed: u64,
    pub offset: u64,
    pub time_sec: u32,
    pub time_nsec: u32,
    pub thread: u16,
    pub numberio: u16,
}

/// A header read back from an interval that passed every check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sealed {
    pub header: BlockHeader,
    pub checksum: Checksum,
}

/// Why an interval read back is not one a writer sealed whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Mismatch {
    /// No header magic: never written with a header, or overwritten by other data. `zeros` says
    /// the whole interval is zero (never written, or discarded).
    #[error("no verify header (magic missing){}", if *zeros { "; the block is all zeros" } else { "" })]
    NoHeader { zeros: bool },
    /// The header's own CRC-32C does not match: the header is damaged or half written.
    #[error("bad header crc {stored:#010x}, computed {computed:#010x}")]
    HeaderCrc { stored: u32, computed: u32 },
    /// The header covers another length than the interval read.
    #[error("bad header length {stored}, wanted {wanted}")]
    Length { stored: u32, wanted: usize },
    /// A verify type iotrial does not implement (fio's sha3 family).
    #[error("verify type {0} is not one iotrial checks (meta, md5, crc64, crc32, crc32c, crc16, crc7, sha256, sha512, xxhash, sha1, pattern)")]
    UnknownType(u16),
    /// The header is whole but the data's checksum (or pattern) differs: the data is damaged,
    /// or only part of the write reached the medium (torn).
    #[error("{} of the data does not match its header{}", checksum.name(), first_bad.map(|b| format!(" (first bad byte at +{b})")).unwrap_or_default())]
    Data {
        checksum: Checksum,
        /// For a pattern: the first byte (from the interval's start) that differs.
        first_bad: Option<usize>,
    },
}

/// Writes a header for `h` at the start of `interval` and the checksum of the data after it.
/// The data must already be in place (random bytes, or the pattern for [`Checksum::Pattern`]).
/// `h.len` is set to the interval's length.
///
/// # Panics
/// If the interval is shorter than [`Checksum::min_interval`] (checked where a job's sizes are
/// resolved, so never in a run).
pub fn seal(interval: &mut [u8], h: &BlockHeader, sum: Checksum) {
    assert!(
        interval.len() >= sum.min_interval() && interval.len() <= u32::MAX as usize,
        "verify interval of {} bytes cannot hold a {} header",
        interval.len(),
        sum.name()
    );
    let p = sum.prefix_len();
    let (head, data) = interval.split_at_mut(p);
    sum.fill(data, &mut head[HEADER_LEN..]);
    let len = interval.len() as u32;
    let b = &mut interval[..HEADER_LEN];
    b[0..2].copy_from_slice(&MAGIC.to_le_bytes());
    b[2..4].copy_from_slice(&sum.fio_type().to_le_bytes());
    b[4..8].copy_from_slice(&len.to_le_bytes());
    b[8..16].copy_from_slice(&h.rand_seed.to_le_bytes());
    b[16..24].copy_from_slice(&h.offset.to_le_bytes());
    b[24..28].copy_from_slice(&h.time_sec.to_le_bytes());
    b[28..32].copy_from_slice(&h.time_nsec.to_le_bytes());
    b[32..34].copy_from_slice(&h.thread.to_le_bytes());
    b[34..36].copy_from_slice(&h.numberio.to_le_bytes());
    let crc = crc32c(&b[..CRC_AT]);
    b[CRC_AT..HEADER_LEN].copy_from_slice(&crc.to_le_bytes());
}

/// Seals every `interval` bytes of `block`, fio's way: header k holds `base.offset + k *
/// interval`, the other fields as `base`. A last piece shorter than `interval` gets a header
/// of its own length.
pub fn seal_block(block: &mut [u8], interval: usize, base: &BlockHeader, sum: Checksum) {
    for (k, piece) in block.chunks_mut(interval).enumerate() {
        let h = BlockHeader {
            offset: base.offset + (k * interval) as u64,
            ..*base
        };
        seal(piece, &h, sum);
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Reads the header at the start of `interval` and checks it: magic, its own CRC, the length it
/// covers, and the data's checksum. `pattern` is the job's verify pattern, compared with the
/// data of a [`Checksum::Pattern`] header (no pattern: only the header is checked).
pub fn inspect(interval: &[u8], pattern: Option<&[u8]>) -> Result<Sealed, Mismatch> {
    if interval.len() < HEADER_LEN || u16_at(interval, 0) != MAGIC {
        return Err(Mismatch::NoHeader {
            zeros: interval.iter().all(|&b| b == 0),
        });
    }
    let stored = u32_at(interval, CRC_AT);
    let computed = crc32c(&interval[..CRC_AT]);
    if stored != computed {
        return Err(Mismatch::HeaderCrc { stored, computed });
    }
    let t = u16_at(interval, 2);
    let checksum = Checksum::from_fio_type(t).ok_or(Mismatch::UnknownType(t))?;
    let len = u32_at(interval, 4);
    if len as usize != interval.len() || interval.len() < checksum.min_interval() {
        return Err(Mismatch::Length {
            stored: len,
            wanted: interval.len(),
        });
    }
    let p = checksum.prefix_len();
    let data_ok = match checksum {
        Checksum::Meta => true,
        Checksum::Pattern => match pattern.filter(|q| !q.is_empty()) {
            None => true,
            Some(q) => {
                if let Some(bad) = (p..interval.len()).find(|&i| interval[i] != q[i % q.len()]) {
                    return Err(Mismatch::Data {
                        checksum,
                        first_bad: Some(bad),
                    });
                }
                true
            }
        },
        sum => {
            let mut computed = [0u8; 128];
            let slot = &mut computed[..sum.sum_len()];
            sum.fill(&interval[p..], slot);
            *slot == interval[HEADER_LEN..p]
        }
    };
    if !data_ok {
        return Err(Mismatch::Data {
            checksum,
            first_bad: None,
        });
    }
    Ok(Sealed {
        header: BlockHeader {
            len,
            rand_seed: u64_at(interval, 8),
            offset: u64_at(interval, 16),
            time_sec: u32_at(interval, 24),
            time_nsec: u32_at(interval, 28),
            thread: u16_at(interval, 32),
            numberio: u16_at(interval, 34),
        },
        checksum,
    })
}

#[cfg(test)]
#[path = "header_tests.rs"]
mod tests;
