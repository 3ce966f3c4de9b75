//! Attaching a stack's devices, the first build step: images on loop devices, guarded real
//! disks (their signatures wiped when the user named them in `--wipe`), emulated devices served
//! through FUSE by the ledger's device server; the scheduler set on every disk; and each
//! device described as built.

use super::provision::{ledger_err, Builder};
use super::raw;
use super::{guard, memimage};
use crate::emu::ModelSpec;
use crate::stack::blockdevs::{kernel_name, DeviceRole, StackDevice, StackDevices};
use crate::stack::release::resource::Resource;
use crate::stack::scheduler;
use crate::stack::{sys, DeviceSpec, LayoutKind, StackError};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// One attached block device.
#[derive(Debug, Clone)]
pub(super) struct Dev {
    pub(super) spec: DeviceSpec,
    pub(super) path: PathBuf,
    /// Kernel name of the whole disk (`loop3`, `sdb`).
    pub(super) disk: String,
    /// The file holding the device's data (an image, an emulated device's image).
    pub(super) backing: Option<PathBuf>,
    /// The FUSE mount point of an emulated device.
    pub(super) emulated: Option<PathBuf>,
}

/// A stack's attached devices: the data devices (an MD array's members when there is one) and
/// the external log device.
pub(super) struct Devs {
    pub(super) data: Vec<Dev>,
    pub(super) log: Option<Dev>,
    /// Where the emulated devices' images are.
    pub(super) images: memimage::Placement,
}

impl Devs {
    /// Kernel names of every disk, for the scheduler.
    pub(super) fn disks(&self) -> Vec<&str> {
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
    pub(super) fn watched(&self, partitions: &[PathBuf], fs: Option<&str>) -> StackDevices {
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

static SEQ: AtomicUsize = AtomicUsize::new(0);

impl Builder<'_> {
    /// A fresh work directory for images and mount points, in the ledger before it exists.
    pub(super) fn work_dir(&mut self) -> Result<PathBuf, StackError> {
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
    pub(super) fn attach_all(
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
    pub(super) fn attach(
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
    pub(super) fn create_image(
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
    pub(super) fn attach_block(&mut self, p: &Path) -> Result<(PathBuf, String), StackError> {
        let info = guard::check(p, &self.opts.wipe)?;
        if !guard::signatures(p)?.is_empty() {
            let args = sys::args(&["--all", "--quiet", &p.display().to_string()]);
            self.actions.run("wipefs", &args)?;
        }
        Ok((p.to_path_buf(), info.disk))
    }

    /// Serves an emulated device's model through FUSE and attaches the served file to a loop
    /// device. The one place a device server is started and handed to the ledger.
    pub(super) fn attach_emu(
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
    /// its server takes at once ([`sys::request_cap`]), the previous value in the ledger.
    pub(super) fn cap_request_size(&mut self, disk: &str) -> Result<(), StackError> {
        let Some(c) = sys::request_cap(disk) else {
            return Ok(());
        };
        match c.now {
            Some(p) => scheduler::set(&c.attr, p, &c.cap, self.ledger, self.actions),
            None if self.actions.dry_run => self.actions.write_sysfs(&c.attr, &c.cap),
            None => Ok(()),
        }
    }

    /// Attaches `file` to a loop device (direct I/O on), in the ledger first; (path, kernel
    /// name).
    pub(super) fn attach_loop(
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
    pub(super) fn set_scheduler(&mut self, devs: &Devs) -> Result<Vec<String>, StackError> {
        let mut notices = Vec::new();
        if let Some(s) = &self.spec.scheduler {
            for disk in devs.disks() {
                let t = &self.spec.tunables;
                notices.extend(scheduler::apply(disk, s, t, self.ledger, self.actions)?);
            }
        }
        Ok(notices)
    }
}

impl Dev {
    /// Facts about the device for the stack as built.
    pub(super) fn describe(&self) -> Json {
        let name = self
            .path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let q = format!("/sys/block/{}", self.disk);
        let read = |attr: &str| sys::read_sysfs(Path::new(&format!("{q}/{attr}")));
        let emulated = match &self.spec {
            DeviceSpec::Emu { model, .. } => Some(format!("emulated: {} ({model})", model.label())),
            _ => None,
        };
        let model = emulated
            .or_else(|| read("device/model"))
            .or_else(|| read("loop/backing_file").map(|b| format!("loop device on {b}")));
        json!({
            "spec": self.spec.to_string(),
            "path": self.path,
            "kernel_name": name,
            "size_bytes": raw::device_size(&self.path),
            "model": model,
            "rotational": read("queue/rotational").map(|r| r == "1"),
            "logical_block_size": read("queue/logical_block_size").and_then(|s| s.parse::<u64>().ok()),
        })
    }
}
