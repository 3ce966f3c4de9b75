//! tree's phases: their names in the plan, in samples.csv and in result.json.

/// Phase names, in plan order.
pub const IDLE_MKFS: &str = "idle_mkfs";
pub const CREATE: &str = "create";
pub const SYNC_CREATE: &str = "sync_create";
pub const DROP_CACHES: &str = "drop_caches";
pub const IDLE_CREATE: &str = "idle_create";
pub const REMOVE: &str = "remove";
pub const SYNC_REMOVE: &str = "sync_remove";
pub const IDLE_REMOVE: &str = "idle_remove";
pub const FILESERVER: &str = "fileserver";
pub const SYNC_FILESERVER: &str = "sync_fileserver";
pub const IDLE_FILESERVER: &str = "idle_fileserver";
