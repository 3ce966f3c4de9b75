//! fsck's phases: their names in the plan, in samples.csv and in result.json.

/// The phases, in order.
pub const FILL: &str = "fill";
pub const SYNC: &str = "sync";
pub const UNMOUNT: &str = "unmount";
pub const DROP_CACHES: &str = "drop_caches";
pub const CHECK: &str = "fsck";
pub const MOUNT: &str = "mount";
