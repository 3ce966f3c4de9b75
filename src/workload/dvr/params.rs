//! dvr's parameters, with their defaults and units: what the plan, the analysis and the
//! report read back from a result.json all resolve against.

use crate::params::{Kind, ParamSpec};

pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("recorders", Kind::Count, "8", "record streams (writers)"),
    ParamSpec::new("players", Kind::Count, "2", "playback streams (readers)"),
    ParamSpec::new("io_size", Kind::Size, "1MiB", "bytes per I/O"),
    ParamSpec::new("samples", Kind::Count, "2048", "timed I/Os collected per stream (N of the sampling protocol)"),
    ParamSpec::new("window", Kind::Duration, "5s", "record buffer: the moving window the record guarantee is computed over"),
    ParamSpec::new("playback_ios", Kind::Count, "2", "I/Os per playback read (a 2 MB read of two 1 MB fragments is 2)"),
    ParamSpec::new("region_size", Kind::Size, "256MiB", "bytes of disk per stream (seed 000 used 800 GB; the default fits a temp directory: 10 x 256MiB = 2.5GiB)"),
    ParamSpec::new("target_mbit", Kind::Float, "19.4", "bitrate each record stream must sustain, Mbit/s (ATSC MPTS = 19.4)"),
    ParamSpec::new("direct", Kind::Bool, "true", "O_DIRECT I/O (false: buffered, through the page cache)"),
    ParamSpec::new("seed", Kind::Count, "1", "seed of the random offsets (the same seed gives every stack the same offsets)"),
];
