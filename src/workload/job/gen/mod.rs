//! One clone of a fio job as a generator of block I/O ([`crate::engine::IoGen`]): it lays out
//! its files in the plan's `prepare` phase ([`place`]), then issues fio's I/O: the direction
//! by `rw` and `rwmixread`, the file by `file_service_type`, the size by `bs`/`bsrange`/
//! `bssplit` ([`sizes`]), the offset as fio picks it ([`offsets`], [`dist`]), paced by `rate`
//! or `rate_iops` (fixed intervals, or `rate_process=poisson`), with an fsync or fdatasync after
//! every N writes; it starts after `startdelay`, and ends after `runtime`, once it has moved
//! `io_size` bytes per pass `loops` times (passes start over when `time_based`), or after
//! `number_ios`; then it syncs its files (`end_fsync`, `fsync_on_close`) and removes them
//! (`unlink`).

pub mod buffers;
pub mod dist;
pub mod fileops;
pub mod generator;
pub mod offsets;
pub mod place;
mod replayed;
pub mod sizes;
pub mod steady;
mod thread;
pub mod verify;
pub mod zones;

pub use generator::{Clone, Exits, Flow, JobGen};
