//! A stack as a user describes it (in a study file or on the command line): devices, layout,
//! filesystem with mkfs arguments, mount options, and the I/O scheduler with its tunables.

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
    /// Raw I/O to consecutive offset ranges of one device.
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
