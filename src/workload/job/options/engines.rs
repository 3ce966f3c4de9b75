//! Which fio `ioengine`s iotrial runs, and why it refuses the others: engines that talk to a
//! network service or another machine, that drive NVMe or SCSI devices by passthrough, that
//! need special hardware or libraries, or that do not do storage I/O at all.

use super::super::spec::Engine;

/// The engines iotrial runs, by fio's name.
pub const RUNS: &[(&str, Engine)] = &Engine::ALL;

/// fio's engines iotrial does not run, and why.
const REFUSED: &[(&[&str], &str)] = &[
    (
        &["net", "netsplice", "rdma", "http", "nbd", "nfs", "rados", "rbd", "gfapi", "gfapi_async", "dfs", "libiscsi", "libhdfs", "librpma_apm_client", "librpma_apm_server", "librpma_gpspm_client", "librpma_gpspm_server"],
        "it is a network engine: its I/O goes to a service over the network, not to the stack iotrial builds",
    ),
    (
        &["io_uring_cmd", "xnvme", "sg", "nvme"],
        "it drives the device by passthrough (NVMe or SCSI commands), which the stack's loop, FUSE and filesystem layers do not carry",
    ),
    (
        &["dev-dax", "libpmem", "pmemblk"],
        "it needs persistent memory (a DAX device)",
    ),
    (&["mtd"], "it needs an MTD flash device"),
    (
        &["libzbc"],
        "it drives a zoned SCSI or ATA disk through libzbc",
    ),
    (
        &["libcufile", "libhipfile", "gpudirect"],
        "it moves data to a GPU's memory (cuFile or hipFile)",
    ),
    (&["ime_psync", "ime_psyncv", "ime_aio"], "it needs DDN's Infinite Memory Engine"),
    (
        &["libblkio"],
        "it drives a virtio-blk or vhost device through libblkio, not the kernel's block layer",
    ),
    (
        &["cpuio", "exec", "page_fault", "cpp_null"],
        "it does no storage I/O (it burns CPU, runs a program, or faults pages)",
    ),
    (
        &["e4defrag"],
        "it moves extents with ext4's EXT4_IOC_MOVE_EXT, which iotrial does not drive",
    ),
    (
        &["splice"],
        "it moves data through a pipe with splice(2), which iotrial does not model; psync does the same I/O",
    ),
    (
        &["windowsaio", "solarisaio"],
        "it is an engine of another operating system",
    ),
];

/// Why iotrial does not run fio's engine `name`, when it knows the engine.
pub fn why_not(name: &str) -> Option<&'static str> {
    REFUSED
        .iter()
        .find(|(names, _)| names.contains(&name))
        .map(|(_, why)| *why)
}

/// The engine `name` names, or why iotrial does not run it.
pub fn parse(name: &str) -> Result<Engine, String> {
    if let Some((_, e)) = RUNS.iter().find(|(n, _)| *n == name) {
        return Ok(*e);
    }
    let runs: Vec<&str> = RUNS.iter().map(|r| r.0).collect();
    match REFUSED.iter().find(|(names, _)| names.contains(&name)) {
        Some((_, why)) => Err(format!(
            "ioengine={name} cannot be honoured: {why}; iotrial runs {}",
            runs.join(", ")
        )),
        None => Err(format!(
            "ioengine={name} is not an engine iotrial runs; it runs {}",
            runs.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_say_why() {
        assert_eq!(parse("psync"), Ok(Engine::Psync));
        assert!(parse("rbd").unwrap_err().contains("network"));
        assert!(parse("io_uring_cmd").unwrap_err().contains("passthrough"));
        assert!(parse("nope").unwrap_err().contains("psync"));
    }
}
