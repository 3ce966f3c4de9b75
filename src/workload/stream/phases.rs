//! stream's phases: their names in the plan, in samples.csv and in result.json.

/// The streaming phase's name.
pub const PHASE: &str = "stream";

/// The final sync phase's name.
pub const SYNC_PHASE: &str = "sync";
