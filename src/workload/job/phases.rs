//! job's phases: their names in the plan, in samples.csv and in result.json.

/// The phase whose I/O counts.
pub const PHASE: &str = "run";

/// The phase before it when `ramp_time` is set.
pub const RAMP_PHASE: &str = "ramp";
