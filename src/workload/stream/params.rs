//! stream's parameters, with their defaults and units: what the plan, the analysis and the
//! report read back from a result.json all resolve against.

use crate::params::{Kind, ParamSpec};

pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("writers", Kind::Count, "8", "streaming writers, one file (or raw region) each, appending from its start (seed 001: 8 dd processes)"),
    ParamSpec::new("readers", Kind::Count, "0", "streaming readers, each reading its own file (or region), filled before the run, from its start"),
    ParamSpec::new("io_size", Kind::Size, "1MiB", "bytes per I/O (dd's bs)"),
    ParamSpec::new("direct", Kind::Bool, "false", "O_DIRECT I/O (false: through the page cache, as dd in seed 001)"),
    ParamSpec::new("duration", Kind::Duration, "60s", "how long the streams run (the device model's time on emulated devices); unused when bytes is set"),
    ParamSpec::new("bytes", Kind::Size, "0", "bytes each stream moves before it stops (whole I/Os); 0: run for duration"),
    ParamSpec::new("interval", Kind::Duration, "1s", "harvest interval: throughput is taken per interval (seed 001's killall -USR1 dd)"),
    ParamSpec::new("dirty_limit", Kind::Size, "256MiB", "buffered writes: the most dirty page cache the stack's own device may hold (a strict per-device limit, restored after), so a run settles in seconds whatever the host's memory; 0: the host's limits (a fifth of its memory)"),
    ParamSpec::new("end_sync", Kind::Bool, "true", "end with a sync phase counted in total_mb_s, so the page cache cannot flatter a buffered run"),
    ParamSpec::new("file_size", Kind::Size, "0", "bytes of file or raw region per stream; 0: an equal share of the target's free space (a writer that reaches it starts over at offset 0)"),
    ParamSpec::new("settle_window", Kind::Duration, "10s", "window of the steady-state rule"),
    ParamSpec::new("settle_tolerance", Kind::Float, "10", "the aggregate has settled once the least-squares trend over a window changes it by at most this much of the window's mean").in_unit("%"),
    ParamSpec::new("raw_mb_s", Kind::Float, "0", "the stack's raw sequential capability, for raw_fraction; 0: none, or, in a study with a raw stack, what that stack sustained times this stack's share of its drives' bandwidth").in_unit("MB/s"),
    ParamSpec::new("seed", Kind::Count, "1", "seed of the streams' write buffers"),
];
