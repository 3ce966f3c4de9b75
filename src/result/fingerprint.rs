//! result.json's `fingerprint`: the machine a trial ran on (host, kernel and its command line,
//! CPU, memory), each block device of its stack (model, firmware, serial, rotational, zoned,
//! write cache, scheduler), the tools that made and checked its filesystem, and the page
//! cache's dirty-page settings. A study spread over machines keeps, for each trial, where it
//! ran; [`Fingerprint::differences`] says what of that can make two trials' figures differ
//! besides their stacks.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where a trial ran (result.json's `fingerprint`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Fingerprint {
    pub host: HostFacts,
    /// Every block device of the stack (its data devices, their partitions, the log device,
    /// the disk holding an image, an emulated device's data or a directory target).
    pub devices: Vec<DeviceFacts>,
    /// Versions: `iotrial`, and `mkfs` and `fsck` of the stack's filesystem when it has one.
    pub tools: BTreeMap<String, String>,
    /// The page cache's writeback settings, `/proc/sys/vm/dirty_*` (ratios in %, bytes,
    /// centiseconds, as the kernel gives them).
    pub sysctl: BTreeMap<String, u64>,
}

/// The machine.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct HostFacts {
    pub hostname: String,
    /// /etc/machine-id (None where the host has none).
    pub machine_id: Option<String>,
    /// /proc/sys/kernel/random/boot_id: changes at every boot.
    pub boot_id: Option<String>,
    /// The kernel's release (`uname -r`).
    pub kernel: String,
    /// Its build (`uname -v`).
    pub kernel_build: String,
    /// /proc/cmdline.
    pub cmdline: String,
    /// /proc/cpuinfo's `model name` (or `Processor`, `cpu model`).
    pub cpu_model: String,
    /// CPUs online.
    pub cpus: usize,
    /// MemTotal, bytes.
    pub memory_bytes: u64,
}

/// One block device.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DeviceFacts {
    /// Kernel name (`loop3`, `sda1`).
    pub name: String,
    /// `data`, `partition`, `log` or `backing` (see the monitors' devices).
    pub role: String,
    /// The whole disk a partition is on (its facts are the disk's).
    pub disk: Option<String>,
    /// sysfs `device/model` (None for loop, md and other virtual devices).
    pub model: Option<String>,
    /// sysfs `device/firmware_rev` (NVMe) or `device/rev` (SCSI/SATA).
    pub firmware: Option<String>,
    /// sysfs `device/serial`, or `device/wwid`.
    pub serial: Option<String>,
    /// queue/rotational.
    pub rotational: Option<bool>,
    /// queue/zoned: `none`, `host-aware`, `host-managed`.
    pub zoned: Option<String>,
    /// queue/write_cache: `write back` or `write through`.
    pub write_cache: Option<String>,
    /// The active I/O scheduler (queue/scheduler's bracketed entry).
    pub scheduler: Option<String>,
    /// A loop device's backing file.
    pub backing_file: Option<String>,
    pub size_bytes: Option<u64>,
}

impl DeviceFacts {
    /// `model firmware`, when the device is hardware that says what it is.
    pub fn hardware(&self) -> Option<String> {
        let m = self.model.as_deref()?.trim();
        Some(match self.firmware.as_deref().map(str::trim) {
            Some(f) if !f.is_empty() => format!("{m} (firmware {f})"),
            _ => m.to_string(),
        })
    }
}

impl Fingerprint {
    /// The machine, in a few words: `host (kernel, CPU model x N, 24 GiB)`.
    pub fn summary(&self) -> String {
        let h = &self.host;
        format!(
            "{} ({}, {} x {}, {:.0} GiB)",
            h.hostname,
            h.kernel,
            h.cpu_model,
            h.cpus,
            h.memory_bytes as f64 / (1u64 << 30) as f64
        )
    }

    /// The hardware of the stack's devices, each once, sorted.
    pub fn device_hardware(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .devices
            .iter()
            .filter_map(DeviceFacts::hardware)
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// Whether `other` ran on this machine in this boot.
    fn same_boot(&self, other: &Fingerprint) -> bool {
        let (a, b) = (&self.host, &other.host);
        a.machine_id == b.machine_id && a.hostname == b.hostname && a.boot_id == b.boot_id
    }

    /// What differs between the machines of two trials that can change their figures besides
    /// their stacks: the kernel, the CPU, and, when they ran on different machines or boots,
    /// the hardware of their devices (on one machine in one boot, different devices are the
    /// study's choice). Empty when nothing does.
    pub fn differences(&self, other: &Fingerprint) -> Vec<String> {
        let (a, b) = (&self.host, &other.host);
        let mut d = Vec::new();
        if a.kernel != b.kernel || a.kernel_build != b.kernel_build {
            d.push(format!("kernel {} vs {}", a.kernel, b.kernel));
        }
        if a.cpu_model != b.cpu_model || a.cpus != b.cpus {
            d.push(format!(
                "CPU {} x {} vs {} x {}",
                a.cpu_model, a.cpus, b.cpu_model, b.cpus
            ));
        }
        if !self.same_boot(other) {
            let (x, y) = (self.device_hardware(), other.device_hardware());
            if x != y {
                d.push(format!("devices [{}] vs [{}]", x.join(", "), y.join(", ")));
            }
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(name: &str, kernel: &str, disk: &str) -> Fingerprint {
        Fingerprint {
            host: HostFacts {
                hostname: name.into(),
                machine_id: Some(format!("id-{name}")),
                boot_id: Some("b".into()),
                kernel: kernel.into(),
                kernel_build: "#1".into(),
                cpu_model: "Xeon".into(),
                cpus: 8,
                memory_bytes: 32 << 30,
                ..Default::default()
            },
            devices: vec![
                DeviceFacts {
                    name: "loop0".into(),
                    role: "data".into(),
                    ..Default::default()
                },
                DeviceFacts {
                    name: "sda".into(),
                    role: "backing".into(),
                    model: Some(disk.into()),
                    firmware: Some("0A01".into()),
                    ..Default::default()
                },
            ],
            ..Default::default()
        }
    }

    #[test]
    fn identical_machines_do_not_differ() {
        let (a, b) = (host("n1", "6.1", "WDC"), host("n2", "6.1", "WDC"));
        assert!(a.differences(&b).is_empty());
        assert_eq!(a.device_hardware(), ["WDC (firmware 0A01)"]);
        assert_eq!(a.summary(), "n1 (6.1, Xeon x 8, 32 GiB)");
    }

    #[test]
    fn kernel_cpu_and_disks_are_named() {
        let a = host("n1", "6.1", "WDC");
        let b = host("n2", "6.12", "ST8000");
        let d = a.differences(&b);
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d[0].contains("kernel 6.1 vs 6.12"));
        assert!(d[1].contains("WDC") && d[1].contains("ST8000"));
        let mut c = host("n1", "6.1", "WDC");
        c.host.cpus = 4;
        assert!(a.differences(&c)[0].starts_with("CPU Xeon x 8 vs Xeon x 4"));
        // The same machine and boot with another disk: the study's own choice.
        let same = host("n1", "6.1", "ST8000");
        assert!(a.differences(&same).is_empty());
    }
}
