//! tree's parameters, with their defaults and units: what the plan, the analysis and the
//! report read back from a result.json all resolve against.

use crate::params::{Kind, ParamSpec};

pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("dirs", Kind::Count, "800000", "directories the create phase makes, in all (seed 002: 800,000)"),
    ParamSpec::new("depth", Kind::Count, "10", "levels of directories below each creating thread's own directory (seed 002: 10)"),
    ParamSpec::new("threads", Kind::Count, "8", "creating threads, each making its share of the directories as a tree of its own (seed 002: 8)"),
    ParamSpec::new("remove_threads", Kind::Count, "1", "threads removing the tree, each walking its share of the creating threads' trees as `rm -rf` does (1: `rm -rf` itself)"),
    ParamSpec::new("files_per_dir", Kind::Count, "0", "files created in each directory after it is made"),
    ParamSpec::new("file_size", Kind::Size, "0", "bytes written to each of those files"),
    ParamSpec::new("fileserver_duration", Kind::Duration, "0s", "how long the file-server phase runs (filebench's fileserver mix, one loop per creating thread); 0: no file-server phase"),
    ParamSpec::new("fileserver_files", Kind::Count, "1000", "the file-server phase's working set, files in all (each thread keeps its share)"),
    ParamSpec::new("settle", Kind::Bool, "true", "wait, before the creation, for the device to finish what mkfs left it doing (an SMR disk cleaning the inode tables mkfs wrote into its persistent cache), as on a disk formatted long before (seed 002's); false: create at once, racing that work"),
    ParamSpec::new("idle_max", Kind::Duration, "30min", "the most an idle phase waits for the device's background work (SMR cleaning), in the device model's time"),
    ParamSpec::new("idle_quiet", Kind::Duration, "5s", "devices that cannot report their background work: the idle phase ends after this long without I/O in diskstats"),
    ParamSpec::new("seed", Kind::Count, "1", "seed of the file-server phase's choices and of written data"),
];
