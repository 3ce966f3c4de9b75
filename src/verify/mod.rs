//! Self-verifying data: the header fio's `verify=` writes at the start of every verify interval
//! of a block (`header`, byte for byte fio's), and the checksums it uses ([`crc32c`],
//! [`md5`], [`sums`], [`sha`], each as fio stores it). A job's verify phase checks what its writes left, and a power-cut trial scans a
//! stack after recovery, with the same header: each one says which writer wrote the block, where
//! it meant it to land, when, and in which order.

pub mod crc32c;
mod header;
pub mod md5;
pub mod sha;
pub mod sums;

pub use header::{inspect, seal, seal_block, BlockHeader, Checksum, Mismatch, Sealed, HEADER_LEN};
