//! What a stream issues beside plain block I/O, and the loops that issue it: op sources
//! ([`source::OpSource`]: file-system operations, [`fsops`]), generated block I/O
//! ([`blockgen::IoGen`]), and each one's per-stream run loop (`source_run`, `blockgen_run`).

pub mod blockgen;
pub(super) mod blockgen_run;
pub mod fsops;
pub mod source;
pub(super) mod source_run;
