//! dvr's parameters, with their defaults and units: what the plan, the analysis and the
//! report read back from a result.json all resolve against.

use crate::params::{Kind, ParamSpec};
use crate::workload::realtime;

pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("recorders", Kind::Count, "8", "record streams (writers)"),
    ParamSpec::new("players", Kind::Count, "2", "playback streams (readers)"),
    ParamSpec::new("io_size", Kind::Size, "1MiB", "bytes per I/O"),
    ParamSpec::new("samples", Kind::Count, "2048", "timed I/Os collected per stream (N of the sampling protocol)"),
    ParamSpec::new("window", Kind::Duration, "5s", "record buffer: the moving window the record guarantee is computed over"),
    ParamSpec::new("playback_ios", Kind::Count, "2", "I/Os per playback read (a 2 MB read of two 1 MB fragments is 2)"),
    ParamSpec::new("region_size", Kind::Size, "256MiB", "bytes of disk per stream (seed 000 used 800 GB; the default fits a temp directory: 10 x 256MiB = 2.5GiB); 0: an equal share of the target, so the streams cover it whatever their number"),
    ParamSpec::new("target_mbit", Kind::Float, "19.4", "bitrate each record stream must sustain, Mbit/s (ATSC MPTS = 19.4)"),
    ParamSpec::new("direct", Kind::Bool, "true", "O_DIRECT I/O (false: buffered, through the page cache)"),
    ParamSpec::new("seed", Kind::Count, "1", "seed of the random offsets (the same seed gives every stack the same offsets)"),
    ParamSpec::new("pacing", Kind::Choice(realtime::PACINGS), "max", "max: every stream issues its next I/O when the last completes, collecting `samples` each (seed 000's hammering); realtime: record streams write what their application makes at `bitrate` through a `buffer`, playback streams read what theirs plays after a `preroll`, for `duration`"),
    ParamSpec::new("bitrate", Kind::Float, "19.4", "realtime: each stream's mean bitrate (ATSC MPTS = 19.4)").in_unit("Mbit/s"),
    ParamSpec::new("buffer", Kind::Text, "5s", "realtime: each record stream's buffer, in seconds of its bitrate (5s) or bytes (12MiB); what does not fit is dropped (an overflow)"),
    ParamSpec::new("preroll", Kind::Text, "1.5s", "realtime: what a playback buffers before it starts, and again after a stall: seconds (1.5s) or bytes"),
    ParamSpec::new("playback_buffer", Kind::Text, "0", "realtime: each playback stream's buffer, seconds or bytes; 0: the pre-roll in whole I/Os plus one I/O"),
    ParamSpec::new("fps", Kind::Float, "30", "realtime: frames a second of the streams' applications").in_unit("frames/s"),
    ParamSpec::new("frames", Kind::Text, "constant", "realtime: frame sizes: constant, lognormal,cv=0.3, uniform,cv=0.2, exponential, or trace=PATH (one size in bytes a line, cycled and scaled to the bitrate)"),
    ParamSpec::new("duration", Kind::Duration, "60s", "realtime: how long the streams run (the device model's time on emulated devices)"),
];
