//! Takes a trial's fingerprint ([`crate::result::fingerprint`]) from the running system: the
//! host from /etc, /proc and uname, each device of the built stack from sysfs, the tools'
//! versions from the tools themselves. Reads only; a fact the system does not give is left
//! out (None), never guessed.

use crate::result::fingerprint::{DeviceFacts, Fingerprint, HostFacts};
use crate::stack::blockdevs::StackDevices;
use std::collections::BTreeMap;
use std::path::Path;

/// The dirty-page settings recorded, under /proc/sys/vm.
const SYSCTLS: &[&str] = &[
    "dirty_ratio",
    "dirty_background_ratio",
    "dirty_bytes",
    "dirty_background_bytes",
    "dirty_expire_centisecs",
    "dirty_writeback_centisecs",
];

/// A file's text, trimmed; None when absent or empty.
fn read(path: impl AsRef<Path>) -> Option<String> {
    let s = std::fs::read_to_string(path).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// The host's facts.
pub fn host() -> HostFacts {
    let u = rustix::system::uname();
    let s = |c: &std::ffi::CStr| c.to_string_lossy().into_owned();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |names: &[&str]| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            names
                .contains(&k.trim())
                .then(|| v.trim().to_string())
                .filter(|v| !v.is_empty())
        })
    };
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kib = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap_or(0);
    HostFacts {
        hostname: s(u.nodename()),
        machine_id: read("/etc/machine-id"),
        boot_id: read("/proc/sys/kernel/random/boot_id"),
        kernel: s(u.release()),
        kernel_build: s(u.version()),
        cmdline: read("/proc/cmdline").unwrap_or_default(),
        cpu_model: field(&["model name", "Processor", "cpu model"]).unwrap_or_default(),
        cpus: online_cpus(),
        memory_bytes: mem_kib * 1024,
    }
}

/// CPUs online (/sys/devices/system/cpu/online, `0-3,6`), else the ones this process may use.
fn online_cpus() -> usize {
    let counted = read("/sys/devices/system/cpu/online").and_then(|list| {
        list.split(',')
            .map(|r| match r.split_once('-') {
                Some((a, b)) => Some(b.parse::<usize>().ok()? + 1 - a.parse::<usize>().ok()?),
                None => r.parse::<usize>().ok().map(|_| 1),
            })
            .sum::<Option<usize>>()
    });
    counted.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The facts sysfs gives of block device `name` (a partition's are its disk's).
pub fn device(name: &str, role: &str) -> DeviceFacts {
    let class = Path::new("/sys/class/block").join(name);
    // A partition's directory sits inside its disk's.
    let disk = class
        .join("partition")
        .exists()
        .then(|| {
            let real = class.canonicalize().ok()?;
            Some(real.parent()?.file_name()?.to_string_lossy().into_owned())
        })
        .flatten();
    let sys = Path::new("/sys/class/block").join(disk.as_deref().unwrap_or(name));
    let dev = sys.join("device");
    let queue = sys.join("queue");
    let scheduler = read(queue.join("scheduler")).and_then(|s| {
        s.split_whitespace()
            .find(|w| w.starts_with('['))
            .map(|w| w.trim_matches(['[', ']']).to_string())
    });
    DeviceFacts {
        name: name.to_string(),
        role: role.to_string(),
        disk,
        model: read(dev.join("model")),
        firmware: read(dev.join("firmware_rev")).or_else(|| read(dev.join("rev"))),
        serial: read(dev.join("serial")).or_else(|| read(dev.join("wwid"))),
        rotational: read(queue.join("rotational")).map(|r| r == "1"),
        zoned: read(queue.join("zoned")),
        write_cache: read(queue.join("write_cache")),
        scheduler,
        backing_file: read(sys.join("loop/backing_file")),
        size_bytes: read(class.join("size")).and_then(|s| s.parse::<u64>().ok().map(|n| n * 512)),
    }
}

/// The dirty-page settings.
pub fn sysctls() -> BTreeMap<String, u64> {
    SYSCTLS
        .iter()
        .filter_map(|k| {
            let v = read(Path::new("/proc/sys/vm").join(k))?.parse().ok()?;
            Some((k.to_string(), v))
        })
        .collect()
}

/// The fingerprint of a trial on `devices`, whose filesystem `fs` was made by `mkfs_version`.
pub fn take(devices: &StackDevices, mkfs_version: Option<&str>) -> Fingerprint {
    let mut tools = BTreeMap::new();
    tools.insert("iotrial".to_string(), env!("CARGO_PKG_VERSION").to_string());
    if let Some(v) = mkfs_version.filter(|v| !v.is_empty()) {
        tools.insert("mkfs".to_string(), v.to_string());
    }
    if let Some(v) = devices
        .fs
        .as_deref()
        .and_then(crate::stack::phases::checker::version)
    {
        tools.insert("fsck".to_string(), v);
    }
    Fingerprint {
        host: host(),
        devices: devices
            .devices
            .iter()
            .map(|d| device(&d.name, d.role.name()))
            .collect(),
        tools,
        sysctl: sysctls(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_host_is_described() {
        let h = host();
        assert!(!h.hostname.is_empty() && !h.kernel.is_empty());
        assert!(h.cpus >= 1 && h.memory_bytes > 0);
        assert!(sysctls().contains_key("dirty_ratio"));
    }

    #[test]
    fn a_missing_device_has_no_facts() {
        let d = device("no-such-device", "data");
        assert_eq!((d.model, d.rotational, d.size_bytes), (None, None, None));
    }
}
