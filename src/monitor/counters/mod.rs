//! The monitors that read the kernel's counters once an interval: per-device iostat -x figures
//! ([`diskstats`], with iostat's arithmetic in `iostat`), the CPU of every thread
//! ([`threads`]) and of the host as a whole ([`hostcpu`]), and the page cache's dirty and
//! writeback memory ([`memory`]).

pub mod diskstats;
pub mod hostcpu;
pub(super) mod iostat;
pub mod memory;
pub mod threads;
