//! fio options iotrial accepts without effect, each with why that is harmless: they name a
//! target iotrial does not use (it runs on its stack's), tune how fio keeps or prints its own
//! statistics (iotrial times and keeps every I/O whatever they say), or steer fio's threads in
//! ways iotrial's streams already behave.

use super::super::{ignored, Opt};

/// Why every latency option is moot: iotrial times each I/O once.
const EVERY_IO: &str = "iotrial times every I/O, issue to completion, whatever it says";
/// Why fio's statistics windows are moot.
const OWN_FIGURES: &str = "it shapes fio's own statistics; iotrial reports over the whole run (result.json) and per second (timeseries.csv)";
/// Why a profile's options are moot.
const TIOBENCH: &str = "an option of fio's tiobench profile, without effect unless profile=tiobench (which iotrial refuses)";
const ACT: &str =
    "an option of fio's act profile, without effect unless profile=act (which iotrial refuses)";
/// Why log compression is moot.
const LOGS_AFTER: &str = "iotrial writes its logs from its samples after the run, uncompressed";

/// The ignored options.
pub static OPTIONS: &[Opt] = &[
    ignored(&["directory"], "iotrial does its I/O on the stack's target, not in this directory"),
    ignored(&["thread"], "iotrial runs every job as a thread").default_differs(
        "a thread per clone (fio forks a process per job unless thread is given; its forked jobs each get a scheduler share of their own on a busy host)",
    ),
    ignored(&["openfiles"], "iotrial keeps every file of a job open while it runs"),
    ignored(&["allow_file_create"], "iotrial lays out its jobs' files on the stack's target itself"),
    ignored(&["create_serialize"], "iotrial lays out the jobs' files one job after the other"),
    ignored(
        &["gtod_reduce"],
        "iotrial still times every I/O (fio would skip most clock reads and report no latency)",
    ),
    ignored(&["verify_async"], "iotrial checks what it reads back in the job's own thread"),
    ignored(
        &["verify_async_cpus"],
        "iotrial checks what it reads back in the job's own thread (verify_async is ignored)",
    ),
    ignored(
        &["verify_dump"],
        "iotrial names each mismatch's offset and what is wrong in result.json instead of dumping the blocks to files",
    ),
    ignored(&["verify_backlog_batch"], "iotrial reads back every block of a backlog"),
    ignored(
        &["log_prio"],
        "iotrial counts each stream's I/Os per priority in result.json (`streams[].prio_ios`) rather than in its log lines, whose priority column is 0 (fio's is 1 for a real-time I/O, or with log_prio the priority in hex)",
    )
    .unlisted(),
    ignored(&["error_dump"], "iotrial keeps every I/O's errno in samples.csv"),
    ignored(&["flow_watermark"], "iotrial keeps a job's flow share at every I/O").unlisted(),
    ignored(
        &["iodepth_batch_complete_max"],
        "a wait takes every completion there is, up to the queue depth",
    ),
    ignored(
        &["io_submit_mode"],
        "iotrial issues a paced job's I/O on its schedule from the job's own thread whatever the completions, as long as its queue has room (fio's offload does it from other threads)",
    ),
    ignored(
        &["unit_base"],
        "it chooses bits or bytes in fio's own report; iotrial reports bytes (MB/s)",
    ),
    ignored(
        &["clocksource"],
        "iotrial reads the monotonic clock (CLOCK_MONOTONIC) for every I/O",
    ),
    ignored(
        &["gtod_cpu"],
        "iotrial reads the clock in each stream's own thread; there is no time-keeping thread to pin",
    ),
    ignored(
        &["unique_filename"],
        "it prefixes file names in fio's client/server mode only; iotrial runs on its stack's machine",
    ),
    ignored(
        &["allow_mounted_write"],
        "iotrial's own guard decides: it does I/O only on the target it built or was named, never on a mounted device",
    ),
    ignored(
        &["ignore_zone_limits"],
        "iotrial's emulated zones have no device limit beyond max_open_zones",
    ),
    ignored(
        &["unified_rw_reporting"],
        "iotrial reports every direction and their total anyway",
    ),
    ignored(
        &["write_barrier"],
        "only fio's sg engine acts on it, which iotrial does not run",
    ),
    ignored(
        &["softrandommap"],
        "iotrial always keeps its random map (unless norandommap), so the fallback it chooses never happens",
    ),
    ignored(
        &["hugepage-size"],
        "iotrial puts an I/O buffer of 128 KiB or more on the kernel's transparent huge pages of 2 MiB, whatever it says; a smaller one on base pages",
    ),
    ignored(
        &["read_iolog_chunked"],
        "iotrial reads the whole log before the run",
    ),
    ignored(&["stats"], "iotrial keeps every I/O's figures whatever it says"),
    ignored(
        &["write_hist_log"],
        "iotrial writes no histogram log; fio.json (`iotrial run --fio-json`) holds each job's latency histogram",
    ),
    ignored(
        &["log_hist_msec"],
        "write_hist_log is not written (see it)",
    ),
    ignored(
        &["log_hist_coarseness"],
        "write_hist_log is not written (see it)",
    ),
    ignored(&["log_entries"], "it sizes fio's in-memory logs; iotrial writes its logs from its samples after the run"),
    ignored(&["log_compression"], LOGS_AFTER),
    ignored(&["log_compression_cpus"], LOGS_AFTER),
    ignored(&["log_store_compressed"], LOGS_AFTER),
    ignored(
        &["block_error_percentiles"],
        "it reports the errors of trims under trim_percentage, which iotrial refuses",
    ),
    ignored(&["bwavgtime"], OWN_FIGURES),
    ignored(&["iopsavgtime"], OWN_FIGURES),
    ignored(
        &["disk_util"],
        "iotrial's monitor records every device of the stack (monitor/diskstats.csv) instead",
    ),
    ignored(&["disable_lat"], EVERY_IO),
    ignored(&["disable_clat"], EVERY_IO),
    ignored(&["disable_slat"], EVERY_IO),
    ignored(&["disable_bw_measurement", "disable_bw"], EVERY_IO),
    ignored(
        &["slat_percentiles"],
        "iotrial reports the percentiles of its one latency, issue to completion",
    ),
    ignored(
        &["clat_percentiles"],
        "iotrial reports the percentiles of its one latency, issue to completion",
    ),
    ignored(
        &["lat_percentiles"],
        "iotrial reports the percentiles of its one latency, issue to completion",
    ),
    ignored(
        &["significant_figures"],
        "it formats fio's normal output; iotrial prints its own figures",
    ),
    ignored(&["threads"], TIOBENCH),
    ignored(&["block"], TIOBENCH),
    ignored(&["numruns"], TIOBENCH),
    ignored(&["dir"], TIOBENCH),
    ignored(&["device-names"], ACT),
    ignored(&["load"], ACT),
    ignored(&["test-duration"], ACT),
    ignored(&["threads-per-queue"], ACT),
    ignored(&["read-req-num-512-blocks"], ACT),
    ignored(&["large-block-op-kbytes"], ACT),
    ignored(&["prep"], ACT),
];
