//! dvr's phase: its name in the plan, in samples.csv and in result.json.

/// dvr's one phase: every stream under seed 000's sampling protocol. samples.csv files written
/// before phases existed are read as this phase.
pub const PHASE: &str = "run";
