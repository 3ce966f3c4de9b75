//! A stack as a user describes it (in a study file or on the command line): devices, an MD
//! array over them, layout, filesystem with mkfs arguments (or a ZFS pool), mount options, and
//! the I/O scheduler with its tunables; the checks of it that need no host, each naming the key
//! at fault (a study runs them when its file is read, and every build runs them first); and how
//! much of its devices' write bandwidth its data can use.

pub mod vm_key;

use self::vm_key::VmKey;
use super::device::DeviceSpec;
use super::md::MdSpec;
use super::{fs, scheduler, zfs};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How streams' regions are laid out on the stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LayoutKind {
    /// A filesystem; one file per stream, created in stream order with fallocate.
    #[default]
    Files,
    /// A GPT with one partition per stream in stream order; raw I/O on the partitions.
    Partitions,
    /// Raw I/O to consecutive offset ranges of the devices (stream i on device i mod n).
    Regions,
}

impl LayoutKind {
    pub fn name(self) -> &'static str {
        match self {
            LayoutKind::Files => "files",
            LayoutKind::Partitions => "partitions",
            LayoutKind::Regions => "regions",
        }
    }
}

/// One candidate stack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct StackSpec {
    /// Unique name; used in result paths and tables.
    pub name: String,
    /// Device specs (`image:[PATH][,size=]`, `block:/dev/X`, `dir:PATH`, `emu:MODEL[,k=v]`).
    /// Empty: the study's default device. Several for multi-device filesystems (btrfs raid10).
    #[serde(default)]
    pub devices: Vec<String>,
    #[serde(default)]
    pub layout: LayoutKind,
    /// Filesystem for the `files` layout (`ext4`, `xfs`, `btrfs`, ...); none for raw layouts.
    #[serde(default)]
    pub fs: Option<String>,
    /// Extra mkfs arguments, e.g. `["-T", "largefile4"]` or `["-d", "raid10", "-m", "raid10"]`.
    #[serde(default)]
    pub mkfs: Vec<String>,
    /// Mount options as one string, e.g. `noatime,data=writeback,commit=1`.
    #[serde(default)]
    pub mount: String,
    /// I/O scheduler (`none`, `mq-deadline`, `bfq`, `kyber`; `deadline`, `cfq`, `noop` are mapped).
    #[serde(default)]
    pub scheduler: Option<String>,
    /// Scheduler tunables under /sys/block/X/queue/iosched/, e.g. `read_expire = "500"`.
    #[serde(default)]
    pub tunables: BTreeMap<String, String>,
    /// An external log device, as a device spec: xfs's `logdev=`, or a ZFS pool's log vdev.
    #[serde(default)]
    pub logdev: Option<String>,
    /// MD RAID over the stack's devices (`raid10[,chunk=512KiB][,layout=n2]`; levels raid0,
    /// raid1, raid10, raid5, raid6; see [`MdSpec`]): the devices become one array, built
    /// without an initial resync, and the filesystem or raw layout goes on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md: Option<String>,
    /// With `fs = "zfs"`: how the pool lays out the devices (`mirror`: pairs, striped;
    /// `stripe`, the default; `raidz`).
    #[serde(default)]
    pub zpool: Option<String>,
    /// A reference stack shown beside the others but never ranked: not marked best, not the
    /// stack others are tested against.
    #[serde(default)]
    pub baseline: bool,
    /// Where the trial runs: on the host, in a KVM guest with the stack's devices passed to it
    /// (`true`, settings), or (study files) a list expanded into one stack per entry.
    #[serde(default, skip_serializing_if = "VmKey::is_native")]
    pub vm: VmKey,
}

/// A stack description that cannot be built, and the key at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("stack {stack}: {key}: {message}")]
pub struct StackSpecError {
    pub stack: String,
    /// The key of the stack at fault (`scheduler`, `mount`, `devices`, ...).
    pub key: &'static str,
    pub message: String,
}

impl StackSpec {
    fn error(&self, key: &'static str, message: impl Into<String>) -> StackSpecError {
        StackSpecError {
            stack: self.name.clone(),
            key,
            message: message.into(),
        }
    }

    /// Checks what needs no device: filesystem keys on a raw layout, the filesystem's name,
    /// the mount options' syntax, the scheduler's name, tunables without a scheduler.
    pub fn check(&self) -> Result<(), StackSpecError> {
        if self.layout != LayoutKind::Files {
            let set = [
                ("fs", self.fs.is_some()),
                ("mkfs", !self.mkfs.is_empty()),
                ("mount", !self.mount.is_empty()),
            ];
            if let Some((key, _)) = set.into_iter().find(|(_, on)| *on) {
                return Err(self.error(key, format!(
                    "layout '{}' does raw I/O without a filesystem, so `{key}` does not apply; use layout = \"files\" for a filesystem",
                    self.layout.name()
                )));
            }
        }
        if let Some(fs) = &self.fs {
            fs::check_name(fs).map_err(|m| self.error("fs", m))?;
        }
        self.check_volume()?;
        fs::check_mount_options(&self.mount).map_err(|m| self.error("mount", m))?;
        match &self.scheduler {
            Some(s) => scheduler::check_name(s).map_err(|m| self.error("scheduler", m)),
            None if !self.tunables.is_empty() => {
                Err(self.error("tunables", "tunables need a scheduler"))
            }
            None => Ok(()),
        }
    }

    /// The stacks a `vm` list stands for, one per entry in its order: `NAME` on the host,
    /// `NAME-vm` in a guest (`NAME-vm2`, ... for further guests). A stack without a list is
    /// itself.
    pub fn expand_vm(&self) -> Vec<StackSpec> {
        let VmKey::Each(list) = &self.vm else {
            return vec![self.clone()];
        };
        let mut guests = 0;
        list.iter()
            .map(|k| {
                let mut s = self.clone();
                s.vm = k.clone();
                if k.guest().is_some() {
                    guests += 1;
                    s.name = match guests {
                        1 => format!("{}-vm", self.name),
                        n => format!("{}-vm{n}", self.name),
                    };
                }
                s
            })
            .collect()
    }

    /// The stack's MD array, parsed.
    pub fn md_spec(&self) -> Result<Option<MdSpec>, StackSpecError> {
        self.md
            .as_deref()
            .map(|m| MdSpec::parse(m).map_err(|e| self.error("md", e)))
            .transpose()
    }

    /// The `md` and `zpool` keys: known names, and each where it applies.
    fn check_volume(&self) -> Result<(), StackSpecError> {
        let zfs = self.fs.as_deref() == Some("zfs");
        if self.md_spec()?.is_some() && zfs {
            return Err(self.error(
                "md",
                "ZFS makes its own pool of the devices; use zpool, not md",
            ));
        }
        match &self.zpool {
            Some(_) if !zfs => {
                Err(self.error("zpool", "zpool lays out a ZFS pool; it needs fs = \"zfs\""))
            }
            Some(l) => zfs::check(l, None).map_err(|m| self.error("zpool", m)),
            None => Ok(()),
        }
    }

    /// How the ZFS pool lays the devices out.
    pub fn zpool_layout(&self) -> &str {
        self.zpool.as_deref().unwrap_or("stripe")
    }

    /// How many of its devices' worth of sequential write bandwidth the stack's data can use:
    /// every device for a raw layout or a striped pool, half of them for RAID10, btrfs raid10
    /// and ZFS mirror pairs (every byte is written twice), one for a filesystem on one device.
    pub fn data_devices(&self) -> f64 {
        let n = self.devices.len().max(1);
        if let Ok(Some(md)) = self.md_spec() {
            return md.data_devices(n);
        }
        match (self.layout, self.fs.as_deref()) {
            (LayoutKind::Files, Some("zfs")) => zfs::data_devices(self.zpool_layout(), n),
            (LayoutKind::Files, Some("btrfs")) => n as f64 / btrfs_copies(&self.mkfs, n),
            (LayoutKind::Files, _) => 1.0,
            _ => n as f64,
        }
    }

    /// Checks the stack on `devices` and its log device: what a `dir:` device allows, what each
    /// layout and filesystem takes, one time scale for every emulated device.
    pub fn check_devices(
        &self,
        devices: &[DeviceSpec],
        logdev: Option<&DeviceSpec>,
    ) -> Result<(), StackSpecError> {
        if devices.is_empty() {
            return Err(self.error("devices", "names no device"));
        }
        if devices.iter().any(|d| !d.needs_root()) {
            if self.vm.guest().is_some() {
                return Err(self.error(
                    "vm",
                    "a guest takes block devices (image:, emu:, block:), not a directory",
                ));
            }
            return self.check_dir(devices, logdev);
        }
        if logdev.is_some_and(|l| !l.needs_root()) {
            return Err(self.error("logdev", "a dir: device cannot be a log device"));
        }
        if let Some(md) = self.md_spec()? {
            md.check_members(devices.len())
                .map_err(|m| self.error("md", m))?;
        }
        if self.fs.as_deref() == Some("zfs") {
            zfs::check(self.zpool_layout(), Some(devices.len()))
                .map_err(|m| self.error("zpool", m))?;
        }
        // An MD array is one device to what goes on it.
        let volumes = if self.md.is_some() { 1 } else { devices.len() };
        match (self.layout, self.fs.as_deref()) {
            (LayoutKind::Files, None) => Err(self.error(
                "fs",
                "the files layout on a block device needs fs (ext4, xfs, btrfs, ...)",
            )),
            (LayoutKind::Files, Some(fs)) if volumes > 1 && fs != "btrfs" && fs != "zfs" => {
                Err(self.error(
                    "devices",
                    format!(
                        "{fs} takes one device; {} given (btrfs and zfs span several; md = \"raid10\" makes one array of them)",
                        devices.len()
                    ),
                ))
            }
            (LayoutKind::Files, Some(fs))
                if logdev.is_some() && !matches!(fs, "xfs" | "zfs" | "ext3" | "ext4") =>
            {
                Err(self.error(
                    "logdev",
                    format!("an external log device is an xfs, zfs, ext3 or ext4 feature (the journal), not {fs}"),
                ))
            }
            (LayoutKind::Files, _) => self.check_time_scales(devices.iter().chain(logdev)),
            (_, _) if logdev.is_some() => {
                Err(self.error("logdev", "a raw layout has no filesystem, so no log device"))
            }
            (LayoutKind::Partitions, _) if volumes != 1 => Err(self.error(
                "devices",
                "the partitions layout takes exactly one device (regions spread over several)",
            )),
            _ => self.check_time_scales(devices.iter()),
        }
    }

    /// A `dir:` device: alone, with the files layout and nothing to make or set.
    fn check_dir(
        &self,
        devices: &[DeviceSpec],
        logdev: Option<&DeviceSpec>,
    ) -> Result<(), StackSpecError> {
        if devices.len() > 1 {
            return Err(self.error(
                "devices",
                "a dir: device cannot be combined with other devices",
            ));
        }
        let set = self.fs.is_some()
            || self.md.is_some()
            || self.layout != LayoutKind::Files
            || !self.mkfs.is_empty()
            || !self.mount.is_empty()
            || self.scheduler.is_some()
            || logdev.is_some();
        if set {
            return Err(self.error("devices", "a dir: device takes the files layout only, with no fs, md, mkfs, mount options, scheduler or logdev (iotrial changes only devices it is given)"));
        }
        Ok(())
    }

    /// Every emulated device runs at one time scale, and a time-scaled device is not mixed with
    /// real ones (their times would not compare).
    fn check_time_scales<'a>(
        &self,
        devices: impl Iterator<Item = &'a DeviceSpec>,
    ) -> Result<(), StackSpecError> {
        let scales: Vec<f64> = devices.map(DeviceSpec::time_scale).collect();
        if scales.iter().any(|s| *s != scales[0]) {
            return Err(self.error("devices", format!(
                "its devices run at different time scales ({scales:?}); give every emu: device the same scale and mix no real device with a scaled one"
            )));
        }
        Ok(())
    }
}

/// How many times btrfs writes each data byte, from its mkfs arguments (`-d raid10`,
/// `--data raid1`, ...): its default data profile on several devices is `single`.
fn btrfs_copies(mkfs: &[String], devices: usize) -> f64 {
    let profile = mkfs
        .windows(2)
        .find(|w| w[0] == "-d" || w[0] == "--data")
        .map(|w| w[1].to_ascii_lowercase());
    match profile.as_deref() {
        Some("raid1" | "raid10" | "dup") => 2.0,
        Some("raid1c3") => 3.0,
        Some("raid1c4") => 4.0,
        Some("raid5") => devices as f64 / (devices as f64 - 1.0).max(1.0),
        Some("raid6") => devices as f64 / (devices as f64 - 2.0).max(1.0),
        _ => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vm_list_expands_into_named_stacks() {
        let s: StackSpec = toml::from_str(
            "name = \"xfs\"\nfs = \"xfs\"\nvm = [false, true, \"cpus=1\"]\nmd = \"raid10\"",
        )
        .unwrap();
        let e = s.expand_vm();
        let names: Vec<&str> = e.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["xfs", "xfs-vm", "xfs-vm2"]);
        assert!(e[0].vm.is_native() && e[2].vm.guest().unwrap().cpus == Some(1));
        assert_eq!(e[1].md.as_deref(), Some("raid10"));
        let bad = StackSpec {
            name: "x".into(),
            md: Some("raid9".into()),
            ..Default::default()
        };
        assert_eq!(bad.check().unwrap_err().key, "md");
    }

    #[test]
    fn md_takes_enough_devices_and_a_guest_no_directory() {
        let md = StackSpec {
            name: "r".into(),
            fs: Some("xfs".into()),
            md: Some("raid10".into()),
            ..Default::default()
        };
        let one = [DeviceSpec::parse("image:size=1GiB").unwrap()];
        assert_eq!(md.check_devices(&one, None).unwrap_err().key, "md");
        let four = vec![one[0].clone(); 4];
        md.check_devices(&four, None).unwrap();
        // Seed 001's XFS on MD RAID10 with its log on an SSD: the array is the one data device.
        let log = DeviceSpec::parse("image:size=256MiB").unwrap();
        md.check_devices(&vec![one[0].clone(); 6], Some(&log))
            .unwrap();
        let guest = StackSpec {
            name: "d".into(),
            vm: VmKey::Guest(Default::default()),
            ..Default::default()
        };
        let dir = [DeviceSpec::parse("dir:/tmp").unwrap()];
        assert_eq!(guest.check_devices(&dir, None).unwrap_err().key, "vm");
    }

    fn stack(devices: usize) -> StackSpec {
        StackSpec {
            name: "s".into(),
            devices: vec!["emu:hdd".into(); devices],
            ..Default::default()
        }
    }

    fn on(s: &StackSpec) -> Result<(), StackSpecError> {
        let devs: Vec<DeviceSpec> = s
            .devices
            .iter()
            .map(|d| DeviceSpec::parse(d).unwrap())
            .collect();
        let log = s.logdev.as_deref().map(|l| DeviceSpec::parse(l).unwrap());
        s.check()?;
        s.check_devices(&devs, log.as_ref())
    }

    #[test]
    fn md_and_zpool_go_where_they_apply() {
        let xfs_md = StackSpec {
            fs: Some("xfs".into()),
            md: Some("raid10".into()),
            logdev: Some("emu:ssd".into()),
            ..stack(6)
        };
        assert_eq!(on(&xfs_md), Ok(()));
        let zfs = StackSpec {
            fs: Some("zfs".into()),
            zpool: Some("mirror".into()),
            logdev: Some("emu:ssd".into()),
            ..stack(6)
        };
        assert_eq!(on(&zfs), Ok(()));
        let bad = |s: StackSpec, key: &str| assert_eq!(on(&s).unwrap_err().key, key, "{s:?}");
        bad(
            StackSpec {
                zpool: Some("mirror".into()),
                fs: Some("xfs".into()),
                ..stack(2)
            },
            "zpool",
        );
        bad(
            StackSpec {
                zpool: Some("mirror".into()),
                ..zfs.clone()
            }
            .with_devices(5),
            "zpool",
        );
        bad(
            StackSpec {
                md: Some("raid10".into()),
                ..zfs
            },
            "md",
        );
        bad(
            StackSpec {
                md: Some("raid5".into()),
                ..xfs_md.clone()
            }
            .with_devices(2),
            "md",
        );
        bad(
            StackSpec {
                md: None,
                logdev: None,
                ..xfs_md
            },
            "devices",
        );
    }

    #[test]
    fn data_devices_count_what_the_data_can_use() {
        let raw = StackSpec {
            layout: LayoutKind::Regions,
            ..stack(6)
        };
        assert_eq!(raw.data_devices(), 6.0);
        let btrfs = StackSpec {
            fs: Some("btrfs".into()),
            mkfs: vec!["-d".into(), "raid10".into(), "-m".into(), "raid10".into()],
            ..stack(6)
        };
        assert_eq!(btrfs.data_devices(), 3.0);
        let md = StackSpec {
            fs: Some("xfs".into()),
            md: Some("raid10".into()),
            ..stack(6)
        };
        assert_eq!(md.data_devices(), 3.0);
        let zfs = StackSpec {
            fs: Some("zfs".into()),
            zpool: Some("mirror".into()),
            ..stack(6)
        };
        assert_eq!(zfs.data_devices(), 3.0);
        assert_eq!(
            StackSpec {
                fs: Some("xfs".into()),
                ..stack(1)
            }
            .data_devices(),
            1.0
        );
    }

    impl StackSpec {
        fn with_devices(mut self, n: usize) -> StackSpec {
            self.devices = vec!["emu:hdd".into(); n];
            self
        }
    }
}
