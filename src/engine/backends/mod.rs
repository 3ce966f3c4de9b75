//! The I/O backends a block stream issues its I/O through, one file each behind one trait
//! ([`backend::Backend`]): `psync` (pread/pwrite), `aio` (Linux native AIO), `posixaio`,
//! `uring` (io_uring), `syncvar` (preadv2/pwritev2 and friends) and `memio` (mmap and a null
//! backend); [`backend_kind::BackendKind`] names them and opens one.

pub(super) mod aio;
pub mod backend;
pub(super) mod backend_kind;
pub(super) mod memio;
pub(super) mod posixaio;
pub mod psync;
pub(super) mod syncvar;
pub(super) mod uring;
