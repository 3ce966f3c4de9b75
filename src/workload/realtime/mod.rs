//! What the kinds whose streams can run in real time (`dvr`, `stream`) share: their real-time
//! parameters turned into each stream's pacing ([`pacing`]); the buffer figures and the verdict
//! part they add ([`figures`]); the replay of every real-time stream's buffer over its samples
//! that makes them ([`analysis`]); their part of the report ([`report`]); and what a capacity
//! search needs of them ([`capacity`]). A kind keeps its own streams, roles and layout; this
//! module only paces them.

pub mod analysis;
pub mod capacity;
pub mod figures;
pub mod pacing;
pub mod report;

pub use analysis::RealtimeOutcome;
pub use figures::{
    BufferFigures, Failure, RealtimeVerdict, Summary, BUFFER_HEADINGS, REALTIME_COLUMNS,
    REALTIME_KEYS,
};
pub use pacing::{
    amount, check, frame_sizes, is_realtime, pacing_of, schedule, MAX, PACINGS, REALTIME,
};
