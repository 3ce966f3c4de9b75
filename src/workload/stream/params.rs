//! stream's parameters, with their defaults and units: what the plan, the analysis and the
//! report read back from a result.json all resolve against.

use crate::params::{Kind, ParamSpec};
use crate::workload::realtime;

/// What the writers write: `random` (the stream's seeded bytes, each 4 KiB sealed with fio's
/// verify header) or `zero` (zeros, as seed 001's `dd` from /dev/zero).
pub const DATA: &[&str] = &["random", "zero"];

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
    ParamSpec::new("raw_mb_s", Kind::Float, "0", "the stack's raw sequential capability, for raw_fraction; 0: none, or, in a study with a raw stack, what that stack sustained times this stack's share of its drives' bandwidth, or the most one of its drives took while streaming times this stack's data drives when that is more").in_unit("MB/s"),
    ParamSpec::new("media_mb_s", Kind::Float, "0", "what the stack's data drives stream at by their models (emulated drives: the slowest one's sequential write rate at its outer edge times the data drives), so a figure above raw_mb_s but within it is told from one the page cache absorbed; 0: not known, or, in a study, set from the stack's emulated drives").in_unit("MB/s"),
    ParamSpec::new("seed", Kind::Count, "1", "seed of the streams' write buffers"),
    ParamSpec::new("data", Kind::Choice(DATA), "random", "what the writers write: random (seeded bytes, each 4 KiB carrying fio's crc32c verify header, as every workload writes) or zero (zeros only, as seed 001's dd from /dev/zero: no headers; an emulated device keeps zeros as holes of its image, so a long run at full speed takes no memory for its data)"),
    ParamSpec::new("pacing", Kind::Choice(realtime::PACINGS), "max", "max: every stream moves its next I/O as soon as the last one is done (seed 001's dd); realtime: writers write what a camera makes at `bitrate` through a `buffer`, readers read what a player plays after a `preroll`, for `duration`"),
    ParamSpec::new("bitrate", Kind::Float, "100", "realtime: each stream's mean bitrate (100: a 4K camera recording XAVC S at its highest setting)").in_unit("Mbit/s"),
    ParamSpec::new("buffer", Kind::Text, "5s", "realtime: each writer's buffer, in seconds of its bitrate (5s) or bytes (64MiB); what does not fit is dropped (an overflow)"),
    ParamSpec::new("preroll", Kind::Text, "1.5s", "realtime: what a reader buffers before it starts playing, and again after a stall: seconds or bytes"),
    ParamSpec::new("playback_buffer", Kind::Text, "0", "realtime: each reader's buffer, seconds or bytes; 0: the pre-roll in whole I/Os plus one I/O"),
    ParamSpec::new("fps", Kind::Float, "30", "realtime: frames a second of the streams' applications").in_unit("frames/s"),
    ParamSpec::new("frames", Kind::Text, "constant", "realtime: frame sizes: constant, lognormal,cv=0.3, uniform,cv=0.2, exponential, or trace=PATH (one size in bytes a line, cycled and scaled to the bitrate)"),
];
