//! smallrand's parameters: iozone's `-t 4 -s 1m -r 4k -I` as defaults.

use crate::params::{Kind, ParamSpec};

pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "threads",
        Kind::Count,
        "4",
        "threads, each on its own file (iozone -t)",
    ),
    ParamSpec::new(
        "file_size",
        Kind::Size,
        "1MiB",
        "bytes of each thread's file (iozone -s)",
    ),
    ParamSpec::new("record", Kind::Size, "4KiB", "bytes per I/O (iozone -r)"),
    ParamSpec::new("direct", Kind::Bool, "true", "O_DIRECT (iozone -I)"),
    ParamSpec::new(
        "seed",
        Kind::Count,
        "1",
        "seed of the random offsets and the data",
    ),
];
