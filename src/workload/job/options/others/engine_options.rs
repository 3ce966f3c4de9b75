//! The options of fio's I/O engines that iotrial does not honour: those of its own engines it
//! ignores or refuses (io_uring's kernel polling thread, pvsync2's RWF_NOWAIT), and every option
//! of the engines it does not run, refused with the engine (the engine's own refusal says why,
//! [`super::super::engines`]).

use super::super::{ignored, refused, Opt};

/// What an option of an engine iotrial does not run says.
pub const OTHER_ENGINE: &str = "an option of an engine iotrial does not run";

/// An option of the engines `e`, which iotrial does not run.
const fn other(names: &'static [&'static str], e: &'static [&'static str]) -> Opt {
    refused(names, OTHER_ENGINE).of(e)
}

/// Engines by the options they share in fio's HOWTO.
const NET: &[&str] = &["net", "netsplice"];
const RBD: &[&str] = &["rbd", "rados"];
const HTTP: &[&str] = &["http"];
const XNVME: &[&str] = &["xnvme"];
const EXEC: &[&str] = &["exec"];
const CPUIO: &[&str] = &["cpuio"];
const SG: &[&str] = &["sg"];
const RPMA: &[&str] = &["librpma_apm_client", "librpma_gpspm_client"];

/// The options of fio's engines iotrial does not honour.
pub static OPTIONS: &[Opt] = &[
    ignored(
        &["fixedbufs"],
        "iotrial's io_uring registers its buffers whenever the kernel allows",
    )
    .of(&["io_uring"]),
    ignored(
        &["registerfiles"],
        "iotrial's io_uring registers its files whenever the kernel allows",
    )
    .of(&["io_uring"]),
    ignored(
        &["userspace_reap"],
        "iotrial's libaio reaps its completions with io_getevents",
    )
    .of(&["libaio"]),
    ignored(
        &["nonvectored"],
        "iotrial's io_uring issues non-vectored reads and writes of registered buffers whatever it says",
    )
    .of(&["io_uring"]),
    refused(
        &["force_async"],
        "iotrial's io_uring does not force asynchronous punting (IOSQE_ASYNC)",
    )
    .of(&["io_uring"]),
    refused(
        &["sqthread_poll"],
        "iotrial's io_uring submits from the stream's own thread, whose CPU it counts; a kernel polling thread is not modelled",
    )
    .of(&["io_uring"]),
    refused(
        &["sqthread_poll_cpu"],
        "iotrial's io_uring submits from the stream's own thread (sqthread_poll is refused)",
    )
    .of(&["io_uring"]),
    refused(
        &["uncached"],
        "RWF_UNCACHED buffered I/O is not in the kernels iotrial runs on",
    )
    .of(&["io_uring", "pvsync2"])
    .unlisted(),
    refused(
        &["nowait"],
        "RWF_NOWAIT makes I/O that would block fail with EAGAIN, which iotrial does not model",
    )
    .of(&["pvsync2", "libaio", "io_uring"]),
    refused(
        &["hipri_percentage"],
        "iotrial's pvsync2 sets RWF_HIPRI on every I/O or on none (hipri)",
    )
    .of(&["pvsync2"]),
    other(&["cmd_type"], &["io_uring_cmd"]),
    other(&["cpuload"], CPUIO),
    other(&["cpuchunks"], CPUIO),
    other(&["cpumode"], CPUIO),
    other(&["exit_on_io_done"], CPUIO),
    other(&["namenode"], &["libhdfs"]),
    other(&["hdfsdirectory"], &["libhdfs"]),
    other(&["port"], &["net", "netsplice", "rdma", "libhdfs", "librpma_apm_client"]),
    other(&["hostname"], &["net", "netsplice", "rdma"]),
    other(&["serverip"], RPMA),
    other(&["direct_write_to_pmem"], RPMA),
    other(&["busy_wait_polling"], &["librpma_apm_server", "librpma_gpspm_server"]),
    other(&["interface"], NET),
    other(&["ttl"], NET),
    other(&["nodelay"], NET),
    other(&["protocol", "proto"], NET),
    other(&["listen"], NET),
    other(&["pingpong"], NET),
    other(&["window_size"], NET),
    other(&["mss"], NET),
    other(&["donorname"], &["e4defrag"]),
    other(&["inplace"], &["e4defrag"]),
    other(&["clustername"], RBD),
    other(&["rbdname"], &["rbd"]),
    other(&["clientname"], RBD),
    other(&["conf"], &["rados"]),
    other(&["busy_poll"], RBD),
    other(&["touch_objects"], &["rados"]),
    other(&["pool"], &["rbd", "rados", "dfs"]),
    other(&["cont"], &["dfs"]),
    other(&["chunk_size"], &["dfs"]),
    other(&["object_class"], &["dfs"]),
    other(&["skip_bad"], &["mtd"]),
    other(&["verb"], &["rdma"]),
    other(&["bindname"], &["rdma"]),
    other(&["readfua"], SG),
    other(&["writefua"], SG),
    other(&["sg_write_mode"], SG),
    other(&["stream_id"], SG),
    other(&["http_host"], HTTP),
    other(&["http_user"], HTTP),
    other(&["http_pass"], HTTP),
    other(&["https"], HTTP),
    other(&["http_mode"], HTTP),
    other(&["http_s3_region"], HTTP),
    other(&["http_s3_key"], HTTP),
    other(&["http_s3_keyid"], HTTP),
    other(&["http_s3_sse_customer_key"], HTTP),
    other(&["http_s3_sse_customer_algorithm"], HTTP),
    other(&["http_s3_storage_class"], HTTP),
    other(&["http_swift_auth_token"], HTTP),
    other(&["http_verbose"], HTTP),
    other(&["uri"], &["nbd"]),
    other(&["gpu_dev_ids"], &["libcufile"]),
    other(&["cuda_io"], &["libcufile"]),
    other(&["nfs_url"], &["nfs"]),
    other(&["program"], EXEC),
    other(&["arguments"], EXEC),
    other(&["grace_time"], EXEC),
    other(&["std_redirect"], EXEC),
    other(&["xnvme_async"], XNVME),
    other(&["xnvme_sync"], XNVME),
    other(&["xnvme_admin"], XNVME),
    other(&["xnvme_dev_nsid"], XNVME),
    other(&["xnvme_iovec"], XNVME),
];
