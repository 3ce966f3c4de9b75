//! Building a stack for one trial: check it, then run the build steps in order: attach its
//! devices and set their scheduler (`attach.rs`: images on loop devices, guarded real disks,
//! emulated devices), make the volume and the filesystem and lay the streams' regions out
//! (`layout.rs`: files on a fresh filesystem, GPT partitions, or raw regions), and describe
//! the stack as built. Every resource goes into the ledger before it is created; the caller
//! releases the ledger after the trial.

use super::files::{self, FileLayout};
use crate::engine::{Placement, Plan};
use crate::stack::actions::Actions;
use crate::stack::blockdevs::{kernel_name, DeviceRole, StackDevice, StackDevices};
use crate::stack::ledger::Ledger;
use crate::stack::{fs, md, scheduler, zfs};
use crate::stack::{DeviceSpec, LayoutKind, StackError, StackSpec};
use serde_json::{json, Value as Json};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// How to build.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    pub dry_run: bool,
    /// Devices the user named in `--wipe`.
    pub wipe: Vec<PathBuf>,
    /// The time scale of devices emulated out of sight (a guest's disks, served on the host);
    /// None: the devices' own.
    pub time_scale: Option<f64>,
    /// A dry run of what a guest will build: the host's own lack of MD or ZFS does not matter.
    pub for_guest: bool,
    /// A power cut is planned: emulated devices journal their writes from the first one.
    pub plan_cut: bool,
}

/// A stack ready for the engine.
pub struct Built {
    pub placements: Vec<Placement>,
    pub direct_ok: bool,
    /// The stack as built: devices, mkfs command and version, mount options read back,
    /// scheduler and tunables read back, kernel, every command run.
    pub as_built: Json,
    pub warnings: Vec<String>,
    /// Files of the `files` layout; removed before the filesystem is unmounted.
    pub files: Option<FileLayout>,
    /// The stack's own filesystem as mounted (the `files` layout on block devices).
    pub mounted: Option<fs::Mounted>,
    /// Emulated devices run this many times faster than the model: multiply measured times
    /// by it to get the model's (1 for real devices).
    pub time_scale: f64,
    /// The block devices the stack uses, for the monitors.
    pub devices: StackDevices,
}

/// Builds `spec` on `devices` for `plan`. Resources go into `ledger`; release it afterwards
/// (after dropping the returned [`Built`]).
pub fn build(
    spec: &StackSpec,
    devices: &[DeviceSpec],
    plan: &Plan,
    opts: &BuildOptions,
    ledger: &mut Ledger,
    actions: &mut Actions,
    stop: &AtomicBool,
) -> Result<Built, StackError> {
    let logdev = spec.logdev.as_deref().map(DeviceSpec::parse).transpose()?;
    spec.check()?;
    spec.check_devices(devices, logdev.as_ref())?;
    if !opts.for_guest {
        host_can_build(spec, actions)?;
    }
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(StackError::Interrupted);
    }
    let mut b = Builder {
        spec,
        plan,
        opts,
        ledger,
        actions,
    };
    match devices {
        [d @ (DeviceSpec::Dir(_) | DeviceSpec::TempDir)] => b.on_directory(d),
        _ => b.on_block_devices(devices, logdev.as_ref()),
    }
}

/// A device attached on the host and nothing more (for a guest, which builds the rest of the
/// stack itself): its spec, its block device and its description for the stack as built.
#[derive(Debug, Clone)]
pub struct Attached {
    pub spec: DeviceSpec,
    pub path: PathBuf,
    pub described: Json,
    /// The FUSE mount point of an emulated device's server.
    pub emulated: Option<PathBuf>,
}

/// Attaches `devices` and the stack's log device (last), in the ledger first, for a trial in
/// a guest: the scheduler, MD, partitions and filesystem are the guest's to make.
pub fn attach_only(
    spec: &StackSpec,
    devices: &[DeviceSpec],
    opts: &BuildOptions,
    ledger: &mut Ledger,
    actions: &mut Actions,
    stop: &AtomicBool,
) -> Result<Vec<Attached>, StackError> {
    let logdev = spec.logdev.as_deref().map(DeviceSpec::parse).transpose()?;
    spec.check()?;
    spec.check_devices(devices, logdev.as_ref())?;
    if !actions.dry_run && !rustix::process::geteuid().is_root() {
        return Err(StackError::NeedsRoot(format!(
            "{} passes {} to a guest (loop devices and KVM need root)",
            spec.name, devices[0]
        )));
    }
    // Attaching lays nothing out, so no plan is needed.
    let plan = Plan::sampled("attach", Vec::new(), false, 0);
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(StackError::Interrupted);
    }
    let mut b = Builder {
        spec,
        plan: &plan,
        opts,
        ledger,
        actions,
    };
    let work = b.work_dir()?;
    let devs = b.attach_all(devices, logdev.as_ref(), &work)?;
    Ok(devs
        .data
        .iter()
        .chain(devs.log.iter())
        .map(|d| Attached {
            spec: d.spec.clone(),
            path: d.path.clone(),
            described: d.describe(),
            emulated: d.emulated.clone(),
        })
        .collect())
}

/// Whether this host has what an MD array or a ZFS pool needs, before anything is made; a dry
/// run notes what is missing and goes on to show the commands.
fn host_can_build(spec: &StackSpec, actions: &mut Actions) -> Result<(), StackError> {
    let mut checks = Vec::new();
    if spec.md.is_some() {
        checks.push(md::available());
    }
    if spec.fs.as_deref() == Some("zfs") {
        checks.push(zfs::available());
    }
    for c in checks {
        match c {
            Err(e) if actions.dry_run => actions.note(format!("this host cannot build it: {e}")),
            other => other?,
        }
    }
    Ok(())
}

/// A failure to write the ledger, as the build reports it.
pub(super) fn ledger_err(e: std::io::Error) -> StackError {
    StackError::io("write the ledger", e)
}

fn kernel_release() -> String {
    rustix::system::uname()
        .release()
        .to_string_lossy()
        .into_owned()
}

/// One build in progress: what is built, for which plan, and where what it makes is recorded.
pub(super) struct Builder<'a> {
    pub(super) spec: &'a StackSpec,
    pub(super) plan: &'a Plan,
    pub(super) opts: &'a BuildOptions,
    pub(super) ledger: &'a mut Ledger,
    pub(super) actions: &'a mut Actions,
}

impl Builder<'_> {
    /// A directory stack: one file per stream in it; no provisioning, no root.
    fn on_directory(&mut self, d: &DeviceSpec) -> Result<Built, StackError> {
        let parent = match d {
            DeviceSpec::Dir(p) => p.clone(),
            _ => self.work_dir()?,
        };
        self.actions.note(format!(
            "a place per stream in {} (the plan's prepare phase makes the files)",
            parent.display()
        ));
        let name = &self.spec.name;
        if self.actions.dry_run {
            return Ok(Built {
                placements: vec![],
                direct_ok: self.plan.direct,
                as_built: json!({"name": name, "layout": "files", "devices": [d.to_string()], "commands": self.actions.log}),
                warnings: vec![],
                files: None,
                mounted: None,
                time_scale: 1.0,
                devices: StackDevices::default(),
            });
        }
        let layout = files::create(&parent, self.plan, self.ledger)?;
        let mut devices = StackDevices::default();
        devices.add_backing_of(&parent);
        let mut warnings = layout.warnings.clone();
        if self.plan.dirty_limit.is_some() && !layout.direct_ok {
            warnings.push(format!(
                "dirty_limit is not applied on a dir: target: {} is the host's filesystem, whose limits apply",
                parent.display()
            ));
        }
        let as_built = json!({
            "name": name, "layout": "files", "kernel": kernel_release(),
            "devices": [{"spec": d.to_string(), "path": parent, "filesystem": layout.fs_type}],
            "fs": layout.fs_type, "commands": self.actions.log,
        });
        Ok(Built {
            placements: layout.placements.clone(),
            direct_ok: layout.direct_ok,
            as_built,
            warnings,
            files: Some(layout),
            mounted: None,
            time_scale: 1.0,
            devices,
        })
    }

    /// A stack on block devices: attach them, set the scheduler, lay the regions out.
    fn on_block_devices(
        &mut self,
        devices: &[DeviceSpec],
        logdev: Option<&DeviceSpec>,
    ) -> Result<Built, StackError> {
        if !self.actions.dry_run && !rustix::process::geteuid().is_root() {
            return Err(StackError::NeedsRoot(format!(
                "{} uses {} (loop devices, mkfs and mount need root)",
                self.spec.name, devices[0]
            )));
        }
        let work = self.work_dir()?;
        let devs = self.attach_all(devices, logdev, &work)?;
        let notices = self.set_scheduler(&devs)?;
        let mut as_built = json!({
            "name": self.spec.name,
            "layout": self.spec.layout.name(),
            "kernel": kernel_release(),
            "devices": devs.data.iter().map(|d| d.describe()).collect::<Vec<_>>(),
            "logdev": devs.log.as_ref().map(|d| d.describe()),
            "scheduler_requested": self.spec.scheduler,
            "notices": notices,
        });
        if devs.images.in_memory || devs.images.warning.is_some() {
            let place = if devs.images.in_memory {
                "memory"
            } else {
                "disk"
            };
            as_built["emulated_images"] = json!(place);
            as_built["emulated_images_at_most"] = json!(devs.images.stored);
        }
        let mut warnings = notices;
        warnings.extend(devs.images.warning.clone());
        let volume = self.volume(&devs, &mut as_built)?;
        let log = devs.log.as_ref().map(|d| d.path.as_path());
        let laid = match self.spec.layout {
            LayoutKind::Files => self.files_layout(&volume, log, &work, &mut as_built)?,
            raw => self.raw_layout(&volume, raw)?,
        };
        if let Some(f) = &laid.files {
            warnings.extend(f.warnings.iter().cloned());
        }
        self.limit_dirty(&laid, &volume, &mut as_built, &mut warnings)?;
        if !self.actions.dry_run {
            let back: Vec<Json> = devs
                .disks()
                .iter()
                .map(|d| scheduler::read_back(d))
                .collect();
            as_built["scheduler"] = json!(back);
        }
        as_built["commands"] = json!(self.actions.log);
        let partitions: Vec<PathBuf> = match self.spec.layout {
            LayoutKind::Partitions => laid.placements.iter().map(|p| p.path.clone()).collect(),
            _ => Vec::new(),
        };
        let fs = (self.spec.layout == LayoutKind::Files).then_some(self.spec.fs.as_deref());
        let mut watched = devs.watched(&partitions, fs.flatten());
        if self.spec.md.is_some() {
            // The array the filesystem or the layout is on, beside its members.
            watched.add(StackDevice {
                name: kernel_name(&volume[0]),
                path: volume[0].clone(),
                role: DeviceRole::Data,
                emulated: None,
            });
        }
        Ok(Built {
            devices: watched,
            placements: laid.placements,
            direct_ok: laid.direct_ok,
            as_built,
            warnings,
            files: laid.files,
            mounted: laid.mounted,
            time_scale: self.opts.time_scale.unwrap_or(devices[0].time_scale()),
        })
    }
}

#[cfg(test)]
#[path = "provision_tests.rs"]
mod tests;
