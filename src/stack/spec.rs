//! A stack as a user describes it (in a study file or on the command line): devices, layout,
//! filesystem with mkfs arguments, mount options, and the I/O scheduler with its tunables; and
//! the checks of it that need no host, each naming the key at fault (a study runs them when its
//! file is read, and every build runs them first).

use super::device::DeviceSpec;
use super::{fs, scheduler};
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
    /// An external log device for xfs (`logdev=`), as a device spec.
    #[serde(default)]
    pub logdev: Option<String>,
    /// A reference stack shown beside the others but never ranked: not marked best, not the
    /// stack others are tested against.
    #[serde(default)]
    pub baseline: bool,
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
        fs::check_mount_options(&self.mount).map_err(|m| self.error("mount", m))?;
        match &self.scheduler {
            Some(s) => scheduler::check_name(s).map_err(|m| self.error("scheduler", m)),
            None if !self.tunables.is_empty() => {
                Err(self.error("tunables", "tunables need a scheduler"))
            }
            None => Ok(()),
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
            return self.check_dir(devices, logdev);
        }
        if logdev.is_some_and(|l| !l.needs_root()) {
            return Err(self.error("logdev", "a dir: device cannot be a log device"));
        }
        match (self.layout, self.fs.as_deref()) {
            (LayoutKind::Files, None) => Err(self.error(
                "fs",
                "the files layout on a block device needs fs (ext4, xfs, btrfs, ...)",
            )),
            (LayoutKind::Files, Some(fs)) if devices.len() > 1 && fs != "btrfs" => Err(self.error(
                "devices",
                format!(
                    "{fs} takes one device; {} given (only btrfs spans several)",
                    devices.len()
                ),
            )),
            (LayoutKind::Files, Some(fs)) if logdev.is_some() && fs != "xfs" => Err(self.error(
                "logdev",
                format!("an external log device is an xfs feature, not {fs}"),
            )),
            (LayoutKind::Files, _) => self.check_time_scales(devices.iter().chain(logdev)),
            (_, _) if logdev.is_some() => {
                Err(self.error("logdev", "a raw layout has no filesystem, so no log device"))
            }
            (LayoutKind::Partitions, _) if devices.len() != 1 => Err(self.error(
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
            || self.layout != LayoutKind::Files
            || !self.mkfs.is_empty()
            || !self.mount.is_empty()
            || self.scheduler.is_some()
            || logdev.is_some();
        if set {
            return Err(self.error("devices", "a dir: device takes the files layout only, with no fs, mkfs, mount options, scheduler or logdev (iotrial changes only devices it is given)"));
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
