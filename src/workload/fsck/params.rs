//! fsck's parameters, with their defaults and units: what the plan, the analysis and the
//! report read back from a result.json all resolve against.

use crate::params::{Kind, ParamSpec};

pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("files", Kind::Count, "20000", "files the fill creates, over all threads (fs_mark's -n times -t)"),
    ParamSpec::new("dirs", Kind::Count, "20", "directories per thread, one level deep, files spread over them in turn (fs_mark's -D)"),
    ParamSpec::new("file_size", Kind::Size, "4KiB", "bytes written to each file; 0: empty files (fs_mark's -s; Ric Wheeler's zero-length runs)"),
    ParamSpec::new("threads", Kind::Count, "1", "fill threads, each in a directory of its own with its share of the files (fs_mark's -t)"),
    ParamSpec::new("sync", Kind::Text, "fsync", "when the fill makes its files durable (fs_mark's -S): fsync (each file before its close, fs_mark's default -S 1), none (never: -S 0), end (one sync of the filesystem after the last file, counted in the fill rate)"),
    ParamSpec::new("checker_args", Kind::Text, "", "extra arguments of the checker, split on spaces (`-o ag_stride=8` for xfs_repair)"),
    ParamSpec::new("seed", Kind::Count, "1", "seed of the file names' random part"),
];
