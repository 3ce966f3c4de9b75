//! burst's phases: the prefixes of their names in the plan, in samples.csv and in result.json.

/// Prefixes of the phase names.
pub const BURST: &str = "burst";
pub const SYNC: &str = "sync";
pub const GAP: &str = "gap";
