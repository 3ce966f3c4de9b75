//! fio options iotrial knows but cannot honour, each with why: hardware it cannot reach from a
//! stack of loop, FUSE and filesystem layers, machinery outside what a trial measures (cgroups,
//! other users, shell commands), or I/O it does not do (trims under verify, appends past a
//! file's end).

use super::super::{refused, Opt};

/// Why fio's built-in profiles are refused.
const PROFILES: &str =
    "fio's built-in profiles (act, tiobench) make their own jobs; write them as job sections";
/// Why trims under verify are refused.
const TRIM_VERIFY: &str =
    "iotrial's verify does not trim the blocks it wrote (fio's trim_percentage and the options after it)";
/// Why blktrace merging is refused.
const MERGE: &str =
    "it merges blktrace binary logs, which iotrial does not replay (blkparse's text output it does, with `iotrial run replay`)";
/// Why cgroups are refused.
const CGROUP: &str = "iotrial runs every stream in its own process's cgroup; moving jobs into cgroups of their own (blkio weights) is not modelled";

/// Reasons several options share.
const FDP: &str =
    "it places data with NVMe Flexible Data Placement, which needs an FDP-capable NVMe device";
const PI: &str = "it uses NVMe end-to-end protection information (metadata per I/O), which needs an NVMe device formatted with it";
const SPR: &str = "SanDisk's SPRandom preconditioning is an option of fio releases after 3.33, which iotrial does not model";
const REMOTE: &str = "iotrial runs on the machine of its stack";
const EXEC: &str = "iotrial never runs a shell command taken from its input";
const EPOCH: &str = "iotrial's logs count time from the job's start; another epoch is not modelled";

/// The refused options.
pub static OPTIONS: &[Opt] = &[
    refused(&["fdp"], FDP)
    .unlisted(),
    refused(&["fdp_pli"], FDP)
    .unlisted(),
    refused(&["fdp_pli_select"], FDP)
    .unlisted(),
    refused(&["dataplacement"], FDP)
    .unlisted(),
    refused(&["plids"], FDP)
    .unlisted(),
    refused(&["md_per_io_size"], PI)
    .unlisted(),
    refused(&["pi_act"], PI)
    .unlisted(),
    refused(&["pi_chk"], PI)
    .unlisted(),
    refused(&["apptag"], PI)
    .unlisted(),
    refused(&["apptag_mask"], PI)
    .unlisted(),
    refused(
        &["atomic"],
        "it asks for untorn writes (RWF_ATOMIC), which the stack's loop and FUSE devices do not offer",
    ),
    refused(&["sprandom"], SPR)
    .unlisted(),
    refused(&["spr_op"], SPR)
    .unlisted(),
    refused(&["spr_num_regions"], SPR)
    .unlisted(),
    refused(
        &["numa_mem_policy"],
        "iotrial does not bind its buffers' memory to NUMA nodes",
    ),
    refused(&["client"], REMOTE).unlisted(),
    refused(&["server"], REMOTE).unlisted(),
    refused(&["remote_config"], REMOTE).unlisted(),
    refused(
        &["opendir"],
        "it adds every file of a directory tree of the user's, and iotrial does its I/O only in what it lays out on the stack's target",
    ),
    refused(
        &["ioscheduler"],
        "a stack sets its I/O scheduler (`--scheduler`, a study's `scheduler`), and restores it after the trial",
    ),
    refused(
        &["unlink_each_loop"],
        "iotrial lays a job's files out once before it starts; removing and laying them out again at each loop is not modelled",
    ),
    refused(
        &["zonecapacity"],
        "iotrial's emulated zones are writable to their whole size; a smaller capacity is not modelled",
    ),
    refused(
        &["sync_file_range"],
        "iotrial syncs with fsync and fdatasync, not sync_file_range (fdatasync=N is the nearest)",
    ),
    refused(
        &["lockmem"],
        "iotrial does not pin memory away from the page cache",
    ),
    refused(
        &["file_append"],
        "iotrial's I/O stays inside the size it lays a file out to",
    ),
    refused(&["cgroup"], CGROUP),
    refused(&["cgroup_weight"], CGROUP),
    refused(&["cgroup_nodelete"], CGROUP),
    refused(&["exec_prerun"], EXEC),
    refused(&["exec_postrun"], EXEC),
    refused(&["uid"], "iotrial's streams run as iotrial's own user"),
    refused(&["gid"], "iotrial's streams run as iotrial's own group"),
    refused(
        &["verify_offset"],
        "iotrial keeps fio's header at the start of each verify interval",
    ),
    refused(&["trim_percentage"], TRIM_VERIFY),
    refused(&["trim_verify_zero"], TRIM_VERIFY),
    refused(&["trim_backlog"], TRIM_VERIFY),
    refused(&["trim_backlog_batch"], TRIM_VERIFY),
    refused(&["merge_blktrace_file"], MERGE),
    refused(&["merge_blktrace_scalars"], MERGE),
    refused(&["merge_blktrace_iters"], MERGE),
    refused(&["profile"], PROFILES),
    refused(&["log_unix_epoch"], EPOCH),
    refused(&["log_alternate_epoch"], EPOCH),
    refused(&["log_alternate_epoch_clock_id"], EPOCH),
];
