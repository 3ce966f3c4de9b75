//! The flags that describe one stack (`--target`, `--fs`, `--mount`, ...) and the monitors, shared
//! by the subcommands that build a stack, and how they become a [`StackSpec`].

use crate::cli::errors::{refused_flag, usage};
use anyhow::Result;
use iotrial::params::split_assignment;
use iotrial::stack::provision::BuildOptions;
use iotrial::stack::spec::vm_key::{VmKey, VmSettings};
use iotrial::stack::{DeviceSpec, LayoutKind, StackSpec};
use iotrial::study::plan::expand;
use iotrial::trial;
use std::path::PathBuf;

/// One stack described on the command line.
#[derive(clap::Args)]
pub struct StackArgs {
    /// Filesystem to make on the target device (ext4, xfs, btrfs, ...).
    #[arg(long)]
    pub fs: Option<String>,
    /// Extra mkfs arguments, as one string split on spaces (e.g. "-T largefile4").
    #[arg(long, allow_hyphen_values = true)]
    pub mkfs: Option<String>,
    /// Mount options (e.g. noatime,data=writeback).
    #[arg(long)]
    pub mount: Option<String>,
    /// Layout: files (default), partitions or regions (raw I/O).
    #[arg(long)]
    pub layout: Option<String>,
    /// I/O scheduler for the device (none, mq-deadline, bfq, kyber).
    #[arg(long)]
    pub scheduler: Option<String>,
    /// Scheduler tunable, e.g. --tunable read_expire=250.
    #[arg(long = "tunable", value_name = "KEY=VALUE")]
    pub tunables: Vec<String>,
    /// An external log device for xfs, zfs or ext3/4 (their journal) (a device spec, e.g. image:size=256MiB).
    #[arg(long, value_name = "SPEC")]
    pub logdev: Option<String>,
    /// With --fs zfs: how the pool lays the devices out (stripe, mirror, raidz).
    #[arg(long, value_name = "LAYOUT")]
    pub zpool: Option<String>,
    /// Allow destroying the signatures on this block device (name it exactly as in --target).
    #[arg(long, value_name = "DEVICE")]
    pub wipe: Vec<PathBuf>,
    /// MD RAID over the --target devices, the filesystem or raw layout on the array:
    /// raid10[,chunk=SIZE][,layout=n2|f2|o2] (also raid0, raid1, raid5, raid6).
    #[arg(long, value_name = "LEVEL[,chunk=SIZE][,layout=L]")]
    pub md: Option<String>,
    /// Run the trial in a KVM guest, the targets passed to it as virtio disks; settings:
    /// --vm=cpus=N,memory=SIZE,cache=none|writeback|writethrough,aio=threads|native|io_uring,
    /// accel=auto|kvm|tcg,kernel=PATH.
    #[arg(long, value_name = "SETTINGS", num_args = 0..=1, default_missing_value = "", require_equals = true)]
    pub vm: Option<String>,
    /// Where the workload's stream threads run: all (every CPU) or apart (off the CPU of the
    /// emulated devices' reply timer, while another CPU is left).
    #[arg(long, value_name = "all|apart", default_value = "all")]
    pub workload_cpus: String,
}

impl StackArgs {
    /// The `--workload-cpus` policy, or a usage error saying what is allowed.
    pub fn cpus(&self) -> Result<iotrial::trial::cpus::Policy> {
        iotrial::trial::cpus::Policy::parse(&self.workload_cpus)
            .map_err(|e| usage(format!("--workload-cpus: {e}")))
    }
}

/// What watches a trial from outside its workload.
#[derive(clap::Args)]
pub struct MonitorArgs {
    /// Monitors: a comma list of diskstats, threads, memory, trace (root); or all; or none.
    #[arg(long, value_name = "LIST", default_value = iotrial::monitor::settings::DEFAULT)]
    pub monitor: String,
    /// Time between two samples of the monitors (10ms to 1h).
    #[arg(long, value_name = "DURATION", default_value = iotrial::monitor::settings::DEFAULT_INTERVAL)]
    pub monitor_interval: String,
}

impl MonitorArgs {
    /// The settings, or a usage error naming the flag and what is allowed.
    pub fn settings(&self) -> Result<iotrial::monitor::Settings> {
        use iotrial::monitor::{Settings, SettingsError};
        let flag = |e: SettingsError| {
            let name = match e {
                SettingsError::Interval(_) => "--monitor-interval",
                _ => "--monitor",
            };
            usage(format!("{name}: {e}"))
        };
        let s = Settings::parse(&self.monitor, &self.monitor_interval).map_err(flag)?;
        s.check_host().map_err(flag)?;
        Ok(s)
    }
}

/// `KEY=VALUE` assignments of `--set`, or a usage error naming the bad one.
pub fn parse_sets(set: &[String]) -> Result<Vec<(String, String)>> {
    set.iter()
        .map(|s| split_assignment(s).map_err(usage))
        .collect()
}

/// The stack described by `--target` and the stack flags.
pub fn stack_from_args(target: &[String], a: &StackArgs) -> Result<(StackSpec, Vec<DeviceSpec>)> {
    let mut devices = Vec::new();
    for t in target {
        devices.push(DeviceSpec::parse(t).map_err(|e| refused_flag("--target", e))?);
    }
    if devices.is_empty() {
        devices.push(DeviceSpec::TempDir);
    }
    let device = devices[0].clone();
    let layout = match a.layout.as_deref() {
        None => None,
        Some("files") => Some(LayoutKind::Files),
        Some("partitions") => Some(LayoutKind::Partitions),
        Some("regions") => Some(LayoutKind::Regions),
        Some(o) => {
            return Err(usage(format!(
                "--layout: unknown layout '{o}'; allowed: files, partitions, regions"
            )))
        }
    };
    // A block device without a filesystem is used raw.
    let layout = layout.unwrap_or(if device.needs_root() && a.fs.is_none() {
        LayoutKind::Regions
    } else {
        LayoutKind::Files
    });
    let mut tunables = std::collections::BTreeMap::new();
    for t in &a.tunables {
        let (k, v) = split_assignment(t).map_err(|e| usage(format!("--tunable: {e}")))?;
        tunables.insert(k, v);
    }
    let mut name = device.kind().to_string();
    if let Some(md) = &a.md {
        name = format!("{name}-{}", md.split(',').next().unwrap_or_default());
    }
    if let Some(fs) = &a.fs {
        name = format!("{name}-{fs}");
    }
    if layout != LayoutKind::Files {
        name = format!("{name}-{}", layout.name());
    }
    let vm = match &a.vm {
        None => VmKey::Native,
        Some(text) => {
            name.push_str("-vm");
            VmKey::Guest(VmSettings::parse(text).map_err(|e| usage(format!("--vm: {e}")))?)
        }
    };
    let spec = StackSpec {
        name,
        devices: devices.iter().map(|d| d.to_string()).collect(),
        layout,
        fs: a.fs.clone(),
        mkfs: a
            .mkfs
            .as_deref()
            .map(|m| m.split_whitespace().map(String::from).collect())
            .unwrap_or_default(),
        mount: a.mount.clone().unwrap_or_default(),
        scheduler: a.scheduler.clone(),
        tunables,
        logdev: a.logdev.clone(),
        md: a.md.clone(),
        zpool: a.zpool.clone(),
        baseline: false,
        vm,
    };
    Ok((spec, devices))
}

/// The one stack `run` and `capacity` build, as the flags describe it, with the monitors that
/// watch it and where its stream threads run.
pub struct OneStack {
    pub stack: StackSpec,
    pub devices: Vec<DeviceSpec>,
    pub monitor: iotrial::monitor::Settings,
    pub cpus: iotrial::trial::cpus::Policy,
    /// Devices named in `--wipe`.
    wipe: Vec<PathBuf>,
}

impl OneStack {
    /// Reads the monitors, the CPUs, then the stack and its devices from the flags.
    pub fn from_args(target: &[String], a: &StackArgs, monitor: &MonitorArgs) -> Result<OneStack> {
        let monitor = monitor.settings()?;
        let cpus = a.cpus()?;
        let (stack, devices) = stack_from_args(target, a)?;
        Ok(OneStack {
            stack,
            devices,
            monitor,
            cpus,
            wipe: a.wipe.clone(),
        })
    }

    /// The setup of a trial of `workload` on this stack: the first repeat, on this host.
    pub fn setup<'a>(&'a self, workload: &'a str) -> trial::Setup<'a> {
        trial::Setup {
            workload,
            stack: &self.stack,
            devices: &self.devices,
            build: BuildOptions {
                wipe: self.wipe.clone(),
                ..Default::default()
            },
            monitor: &self.monitor,
            repeat: 1,
            switch: None,
            cpus: self.cpus,
        }
    }

    /// What the one-trial study of a run on this stack records besides its workload.
    pub fn single(&self) -> expand::Single<'_> {
        expand::Single {
            monitor: &self.monitor,
            cpus: self.cpus,
        }
    }
}
