//! Building a stack for one trial: check it, attach its devices (images on loop devices, guarded
//! real disks, emulated devices), set the scheduler, lay the streams' regions out (files on a
//! fresh filesystem, GPT partitions, or raw regions), and describe the stack as built. Every
//! resource goes into the ledger before it is created; the caller releases the ledger after the
//! trial.

use super::files::{self, FileLayout};
use crate::emu::ModelSpec;
use crate::engine::{Placement, Plan};
use crate::stack::actions::Actions;
use crate::stack::blockdevs::{kernel_name, DeviceRole, StackDevice, StackDevices};
use crate::stack::ledger::resource::Resource;
use crate::stack::ledger::Ledger;
use crate::stack::{
    build::dirty, build::fs, build::memimage, build::raw, build::scheduler, build::volume,
    build::volume::md, build::volume::zfs, ledger::guard, sys,
};
use crate::stack::{DeviceSpec, LayoutKind, StackError, StackSpec};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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
            described: describe(d),
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

/// One attached block device.
#[derive(Debug, Clone)]
struct Dev {
    spec: DeviceSpec,
    path: PathBuf,
    /// Kernel name of the whole disk (`loop3`, `sdb`).
    disk: String,
    /// The file holding the device's data (an image, an emulated device's image).
    backing: Option<PathBuf>,
    /// The FUSE mount point of an emulated device.
    emulated: Option<PathBuf>,
}

/// A stack's attached devices: the data devices (an MD array's members when there is one) and
/// the external log device.
struct Devs {
    data: Vec<Dev>,
    log: Option<Dev>,
    /// Where the emulated devices' images are.
    images: memimage::Placement,
}

impl Devs {
    /// Kernel names of every disk, for the scheduler.
    fn disks(&self) -> Vec<&str> {
        let mut disks: Vec<&str> = self
            .data
            .iter()
            .chain(self.log.iter())
            .map(|d| d.disk.as_str())
            .collect();
        disks.dedup();
        disks
    }

    /// The devices for the monitors: data devices, `partitions`, the log device, and the
    /// disks holding their images.
    fn watched(&self, partitions: &[PathBuf], fs: Option<&str>) -> StackDevices {
        let mut s = StackDevices {
            fs: fs.map(str::to_string),
            ..Default::default()
        };
        let roles = self.data.iter().map(|d| (d, DeviceRole::Data));
        for (d, role) in roles.chain(self.log.iter().map(|d| (d, DeviceRole::Log))) {
            s.add(StackDevice {
                name: d.disk.clone(),
                path: d.path.clone(),
                role,
                emulated: d.emulated.clone(),
            });
        }
        for p in partitions {
            s.add(StackDevice {
                name: kernel_name(p),
                path: p.clone(),
                role: DeviceRole::Partition,
                emulated: None,
            });
        }
        for b in self.data.iter().chain(self.log.iter()) {
            if let Some(file) = &b.backing {
                s.add_backing_of(file);
            }
        }
        s
    }
}

/// The streams' regions, laid out.
struct Laid {
    placements: Vec<Placement>,
    files: Option<FileLayout>,
    mounted: Option<fs::Mounted>,
    direct_ok: bool,
}

static SEQ: AtomicUsize = AtomicUsize::new(0);

fn ledger_err(e: std::io::Error) -> StackError {
    StackError::io("write the ledger", e)
}

fn kernel_release() -> String {
    rustix::system::uname()
        .release()
        .to_string_lossy()
        .into_owned()
}

/// One build in progress: what is built, for which plan, and where what it makes is recorded.
struct Builder<'a> {
    spec: &'a StackSpec,
    plan: &'a Plan,
    opts: &'a BuildOptions,
    ledger: &'a mut Ledger,
    actions: &'a mut Actions,
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
            "devices": devs.data.iter().map(describe).collect::<Vec<_>>(),
            "logdev": devs.log.as_ref().map(describe),
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

    /// A fresh work directory for images and mount points, in the ledger before it exists.
    fn work_dir(&mut self) -> Result<PathBuf, StackError> {
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("iotrial-stack-{}-{n}", std::process::id()));
        self.ledger
            .record(Resource::TempDir { path: dir.clone() })
            .map_err(ledger_err)?;
        if !self.actions.dry_run {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir)
                .map_err(|e| StackError::io(format!("create {}", dir.display()), e))?;
        }
        Ok(dir)
    }

    /// Attaches the data devices, then the log device.
    fn attach_all(
        &mut self,
        devices: &[DeviceSpec],
        logdev: Option<&DeviceSpec>,
        work: &Path,
    ) -> Result<Devs, StackError> {
        let partscan = self.spec.layout == LayoutKind::Partitions;
        let emulated: u64 = devices
            .iter()
            .chain(logdev)
            .filter_map(|d| match d {
                DeviceSpec::Emu { model, .. } => Some(model.values.u64("size")),
                _ => None,
            })
            .sum();
        // Every data device may hold a copy of what the workload writes (a mirror). Zeros are
        // kept as holes, unless a device reads its holes as an earlier owner's data.
        let copies = devices.len() as u64;
        let stale = devices
            .iter()
            .chain(logdev)
            .any(|d| matches!(d, DeviceSpec::Emu { model, .. } if model.settings.stale));
        let workload = match self.plan.writes_only_zeros() && !stale {
            true => Some(0),
            false => self.plan.stores_at_most,
        };
        let stored = memimage::stored_at_most(emulated, workload, copies);
        let images = memimage::place(emulated, stored, work, self.ledger, self.actions)?;
        let mut data = Vec::new();
        for (i, d) in devices.iter().enumerate() {
            data.push(self.attach(d, i, work, &images.dir, partscan)?);
        }
        let log = match logdev {
            Some(l) => Some(self.attach(l, data.len(), work, &images.dir, false)?),
            None => None,
        };
        Ok(Devs { data, log, images })
    }

    /// Attaches device number `index` of the stack; its files go in `work`, an emulated
    /// device's image in `images`.
    fn attach(
        &mut self,
        spec: &DeviceSpec,
        index: usize,
        work: &Path,
        images: &Path,
        partscan: bool,
    ) -> Result<Dev, StackError> {
        let (mut backing, mut emulated) = (None, None);
        let (path, disk) = match spec {
            DeviceSpec::Image { path, size } => {
                let file = self.create_image(path.as_deref(), *size, index, work)?;
                backing = Some(file.clone());
                self.attach_loop(&file, index, partscan)?
            }
            DeviceSpec::Block(p) => self.attach_block(p)?,
            DeviceSpec::Emu { text, model } => {
                let (image, mp) = (
                    images.join(format!("emu{index}.img")),
                    work.join(format!("emu{index}")),
                );
                let attached = self.attach_emu(text, model, index, (&image, &mp), partscan)?;
                (backing, emulated) = (Some(image), Some(mp));
                attached
            }
            DeviceSpec::Dir(_) | DeviceSpec::TempDir => {
                return Err(StackError::Invalid(
                    "a dir: device cannot be combined with other devices".into(),
                ))
            }
        };
        Ok(Dev {
            spec: spec.clone(),
            path,
            disk,
            backing,
            emulated,
        })
    }

    /// Creates the sparse image of an `image:` device: at `path` if the user named one (refused
    /// if it exists, unless named in `--wipe`), else in `work`.
    fn create_image(
        &mut self,
        path: Option<&Path>,
        size: u64,
        index: usize,
        work: &Path,
    ) -> Result<PathBuf, StackError> {
        let file = match path {
            Some(p) if p.exists() && !self.opts.wipe.iter().any(|w| w == p) => {
                return Err(StackError::Refused(format!(
                    "refusing image {}: it exists already (name it again with --wipe {} to overwrite it)",
                    p.display(),
                    p.display()
                )))
            }
            Some(p) => {
                if !p.exists() {
                    let r = Resource::Image {
                        path: p.to_path_buf(),
                    };
                    self.ledger.record(r).map_err(ledger_err)?;
                }
                p.to_path_buf()
            }
            None => work.join(format!("disk{index}.img")),
        };
        self.actions.note(format!(
            "create sparse image {} of {size} bytes",
            file.display()
        ));
        if !self.actions.dry_run {
            let f = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&file)
                .map_err(|e| StackError::io(format!("create {}", file.display()), e))?;
            f.set_len(size)
                .map_err(|e| StackError::io(format!("size {}", file.display()), e))?;
        }
        Ok(file)
    }

    /// A real disk: passes the guard, and loses its signatures (the user named it in `--wipe`).
    fn attach_block(&mut self, p: &Path) -> Result<(PathBuf, String), StackError> {
        let info = guard::check(p, &self.opts.wipe)?;
        if !guard::signatures(p)?.is_empty() {
            let args = sys::args(&["--all", "--quiet", &p.display().to_string()]);
            self.actions.run("wipefs", &args)?;
        }
        Ok((p.to_path_buf(), info.disk))
    }

    /// Serves an emulated device's model through FUSE and attaches the served file to a loop
    /// device. The one place a device server is started and handed to the ledger.
    fn attach_emu(
        &mut self,
        text: &str,
        model: &ModelSpec,
        index: usize,
        (backing, mp): (&Path, &Path),
        partscan: bool,
    ) -> Result<(PathBuf, String), StackError> {
        self.actions.note(format!(
            "serve model {model} through FUSE at {} (data in sparse {}), delays divided by {}",
            mp.display(),
            backing.display(),
            model.settings.scale
        ));
        let file = if self.actions.dry_run {
            mp.join(crate::emu::DISK_NAME)
        } else {
            let entry = self
                .ledger
                .record(Resource::Fuse {
                    mountpoint: mp.to_path_buf(),
                })
                .map_err(ledger_err)?;
            self.ledger
                .serve_emulated(entry, text, (backing, mp), self.opts.plan_cut)
                .map_err(|source| StackError::DeviceServer {
                    spec: format!("emu:{text}"),
                    source,
                })?
        };
        let (path, disk) = self.attach_loop(&file, index, partscan)?;
        self.cap_request_size(&disk)?;
        Ok((path, disk))
    }

    /// Caps the block requests of an emulated device's loop device at the largest request
    /// its server takes at once, so each block request reaches the model whole (and the
    /// server's request log matches a block trace request for request).
    fn cap_request_size(&mut self, disk: &str) -> Result<(), StackError> {
        let attr = PathBuf::from(format!("/sys/block/{disk}/queue/max_sectors_kb"));
        let cap = u64::from(crate::emu::MAX_IO / 1024);
        match sys::read_sysfs(&attr) {
            Some(p) if p.parse::<u64>().is_ok_and(|v| v <= cap) => Ok(()),
            Some(p) => scheduler::set(&attr, p, &cap.to_string(), self.ledger, self.actions),
            None if self.actions.dry_run => self.actions.write_sysfs(&attr, &cap.to_string()),
            None => Ok(()),
        }
    }

    /// Attaches `file` to a loop device (direct I/O on), in the ledger first; (path, kernel
    /// name).
    fn attach_loop(
        &mut self,
        file: &Path,
        index: usize,
        partscan: bool,
    ) -> Result<(PathBuf, String), StackError> {
        let r = Resource::Loop {
            backing: file.to_path_buf(),
        };
        self.ledger.record(r).map_err(ledger_err)?;
        let mut a = sys::args(&["--find", "--show", "--direct-io=on"]);
        if partscan {
            a.push("--partscan".into());
        }
        a.push(file.display().to_string());
        let out = self.actions.run("losetup", &a)?;
        let path = if self.actions.dry_run {
            PathBuf::from(format!("/dev/loopN{index}"))
        } else {
            PathBuf::from(out.trim())
        };
        let disk = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        Ok((path, disk))
    }

    /// Sets the stack's scheduler and tunables on every disk; returns notices (renames).
    fn set_scheduler(&mut self, devs: &Devs) -> Result<Vec<String>, StackError> {
        let mut notices = Vec::new();
        if let Some(s) = &self.spec.scheduler {
            for disk in devs.disks() {
                let t = &self.spec.tunables;
                notices.extend(scheduler::apply(disk, s, t, self.ledger, self.actions)?);
            }
        }
        Ok(notices)
    }

    /// What the layout goes on: the MD array made of the data devices, or the devices.
    fn volume(&mut self, devs: &Devs, as_built: &mut Json) -> Result<Vec<PathBuf>, StackError> {
        let data: Vec<PathBuf> = devs.data.iter().map(|d| d.path.clone()).collect();
        let Some(md) = self.spec.md_spec()? else {
            return Ok(data);
        };
        let (array, built) = volume::md_array(&md, &data, self.ledger, self.actions)?;
        as_built["md"] = built;
        Ok(vec![array])
    }

    /// The stack's filesystem made and mounted on `data` (with `log`): mkfs and mount, or a
    /// ZFS pool.
    fn make_filesystem(
        &mut self,
        data: &[PathBuf],
        log: Option<&Path>,
        work: &Path,
        as_built: &mut Json,
    ) -> Result<fs::Mounted, StackError> {
        let spec = self.spec;
        // The stack's checks make sure a files layout on block devices names its filesystem.
        let fs_name = spec.fs.as_deref().unwrap_or_default();
        as_built["fs"] = json!(fs_name);
        if fs_name == "zfs" {
            let layout = spec.zpool_layout();
            let (mounted, built) = volume::zfs_pool(
                layout,
                data,
                log,
                &spec.mkfs,
                work,
                self.ledger,
                self.actions,
            )?;
            as_built["zpool"] = built;
            return Ok(mounted);
        }
        as_built["mkfs"] = fs::mkfs(fs_name, &spec.mkfs, data, log, self.plan.seed, self.actions)?;
        fs::mount(
            fs_name,
            &data[0],
            &spec.mount,
            log,
            work,
            self.ledger,
            self.actions,
        )
    }

    /// The `files` layout: the filesystem made and mounted, one file per stream in it.
    fn files_layout(
        &mut self,
        data: &[PathBuf],
        log: Option<&Path>,
        work: &Path,
        as_built: &mut Json,
    ) -> Result<Laid, StackError> {
        let spec = self.spec;
        let mounted = self.make_filesystem(data, log, work, as_built)?;
        let mp = mounted.mountpoint.clone();
        let mut m = fs::applied_options(&mp);
        if m.is_object() {
            m["requested"] = json!(spec.mount);
        }
        as_built["mount"] = m;
        self.actions.note(format!(
            "a place per stream in {} (the plan's prepare phase makes the files: allocated, empty for appending streams, filled for reading ones)",
            mp.display()
        ));
        if self.actions.dry_run {
            return Ok(Laid {
                placements: vec![],
                files: None,
                mounted: Some(mounted),
                direct_ok: self.plan.direct,
            });
        }
        let layout = files::create(&mp, self.plan, self.ledger)?;
        Ok(Laid {
            placements: layout.placements.clone(),
            direct_ok: layout.direct_ok,
            files: Some(layout),
            mounted: Some(mounted),
        })
    }

    /// Caps the dirty page cache of the stack's writeback devices at the plan's limit (buffered
    /// plans with one).
    fn limit_dirty(
        &mut self,
        laid: &Laid,
        volume: &[PathBuf],
        as_built: &mut Json,
        warnings: &mut Vec<String>,
    ) -> Result<(), StackError> {
        let Some(bytes) = self.plan.dirty_limit.filter(|_| !laid.direct_ok) else {
            return Ok(());
        };
        let stack = dirty::Stack {
            zfs: self.spec.fs.as_deref() == Some("zfs"),
            mounted: laid.mounted.as_ref(),
            volume,
        };
        if let Some(done) = dirty::cap(&stack, bytes, self.ledger, self.actions, warnings)? {
            as_built["dirty_limit"] = done;
        }
        Ok(())
    }

    /// A raw layout on `devs` (read streams' regions are filled by the plan's `prepare`
    /// phase).
    fn raw_layout(&mut self, devs: &[PathBuf], kind: LayoutKind) -> Result<Laid, StackError> {
        let placements = raw::place(devs, self.plan, kind, self.actions)?;
        Ok(Laid {
            placements,
            files: None,
            mounted: None,
            direct_ok: self.plan.direct,
        })
    }
}

/// Facts about a block device for the stack as built.
fn describe(dev: &Dev) -> Json {
    let name = dev
        .path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let q = format!("/sys/block/{}", dev.disk);
    let read = |attr: &str| sys::read_sysfs(Path::new(&format!("{q}/{attr}")));
    let emulated = match &dev.spec {
        DeviceSpec::Emu { model, .. } => {
            Some(format!("emulated: {} ({model})", model.model.summary))
        }
        _ => None,
    };
    let model = emulated
        .or_else(|| read("device/model"))
        .or_else(|| read("loop/backing_file").map(|b| format!("loop device on {b}")));
    json!({
        "spec": dev.spec.to_string(),
        "path": dev.path,
        "kernel_name": name,
        "size_bytes": raw::device_size(&dev.path),
        "model": model,
        "rotational": read("queue/rotational").map(|r| r == "1"),
        "logical_block_size": read("queue/logical_block_size").and_then(|s| s.parse::<u64>().ok()),
    })
}

#[cfg(test)]
#[path = "provision_tests.rs"]
mod tests;
