//! burst's parameters: seed 003's Cacti poll (about 1000 .rrd files, 118 MB in all, updated
//! every 5 minutes) and the database beside it.

use crate::params::{Kind, ParamSpec};

pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("files", Kind::Count, "1000", "rrd files updated in each burst"),
    ParamSpec::new("file_size", Kind::Size, "118KiB", "bytes of each file (seed 003: 118 MB over ~1000 files)"),
    ParamSpec::new("archives", Kind::Count, "4", "round-robin archives per file; an update rewrites one 4 KiB row in each"),
    ParamSpec::new("updates", Kind::Count, "1", "updates per file per burst"),
    ParamSpec::new("bursts", Kind::Count, "3", "bursts (polls)"),
    ParamSpec::new("period", Kind::Duration, "30s", "idle gap after each burst's updates are on disk (Cacti polls every 300 s)"),
    ParamSpec::new("cold", Kind::Bool, "true", "drop the page cache before each burst, so updates read their rows from the device"),
    ParamSpec::new("victims", Kind::Count, "1", "foreground readers (the database): random 4 KiB O_DIRECT reads of their own file at a fixed rate, throughout"),
    ParamSpec::new("victim_rate", Kind::Float, "20", "reads per second of each victim").in_unit("reads/s"),
    ParamSpec::new("victim_file", Kind::Size, "16MiB", "bytes of each victim's file"),
    ParamSpec::new("seed", Kind::Count, "1", "seed of the data and the victims' offsets"),
];
