//! Building a stack for one trial: attach its devices (images on loop devices, guarded real
//! disks), set the scheduler, lay the streams' regions out (files on a fresh filesystem, GPT
//! partitions, or raw regions), and describe the stack as built. Every resource goes into the
//! ledger before it is created; the caller releases the ledger after the trial.

use super::actions::Actions;
use super::files::{self, FileLayout};
use super::guard;
use super::ledger::{Ledger, Resource};
use super::{fs, scheduler, sys, DeviceSpec, LayoutKind, StackError, StackSpec};
use crate::emu::{EmuServer, ModelSpec};
use crate::engine::{Op, Placement, Plan};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// How to build.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    pub dry_run: bool,
    /// Devices the user named in `--wipe`.
    pub wipe: Vec<PathBuf>,
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
    /// Emulated devices run this many times faster than the model: multiply measured times
    /// by it to get the model's (1 for real devices).
    pub time_scale: f64,
}

/// One attached block device.
#[derive(Debug, Clone)]
struct Dev {
    spec: String,
    path: PathBuf,
    disk: String,
}

static SEQ: AtomicUsize = AtomicUsize::new(0);

fn ledger_err(e: std::io::Error) -> StackError {
    StackError::io("write the ledger", e)
}

/// A fresh work directory for images and mount points, in the ledger before it exists.
fn work_dir(ledger: &mut Ledger, actions: &mut Actions) -> Result<PathBuf, StackError> {
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("iotrial-stack-{}-{n}", std::process::id()));
    ledger
        .record(Resource::TempDir { path: dir.clone() })
        .map_err(ledger_err)?;
    if !actions.dry_run {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .map_err(|e| StackError::io(format!("create {}", dir.display()), e))?;
    }
    Ok(dir)
}

fn attach(
    spec: &DeviceSpec,
    index: usize,
    work: &Path,
    partscan: bool,
    opts: &BuildOptions,
    ledger: &mut Ledger,
    actions: &mut Actions,
) -> Result<Dev, StackError> {
    match spec {
        DeviceSpec::Image { path, size } => {
            let file = match path {
                Some(p) if p.exists() && !opts.wipe.iter().any(|w| w == p) => {
                    return Err(StackError::Refused(format!(
                        "refusing image {}: it exists already (name it again with --wipe {} to overwrite it)",
                        p.display(),
                        p.display()
                    )))
                }
                Some(p) => {
                    if !p.exists() {
                        ledger.record(Resource::Image { path: p.clone() }).map_err(ledger_err)?;
                    }
                    p.clone()
                }
                None => work.join(format!("disk{index}.img")),
            };
            actions.note(format!(
                "create sparse image {} of {} bytes",
                file.display(),
                size
            ));
            if !actions.dry_run {
                let f = std::fs::OpenOptions::new()
                    .create(true)
                    .truncate(false)
                    .write(true)
                    .open(&file)
                    .map_err(|e| StackError::io(format!("create {}", file.display()), e))?;
                f.set_len(*size)
                    .map_err(|e| StackError::io(format!("size {}", file.display()), e))?;
            }
            let (path, disk) = attach_loop(&file, index, partscan, ledger, actions)?;
            Ok(Dev {
                spec: spec.to_string(),
                path,
                disk,
            })
        }
        DeviceSpec::Block(p) => {
            let info = guard::check(p, &opts.wipe)?;
            if !guard::signatures(p)?.is_empty() {
                actions.run(
                    "wipefs",
                    &sys::args(&["--all", "--quiet", &p.display().to_string()]),
                )?;
            }
            Ok(Dev {
                spec: spec.to_string(),
                path: p.clone(),
                disk: info.disk,
            })
        }
        DeviceSpec::Emu(m) => {
            let model_spec =
                ModelSpec::parse(m).map_err(|e| StackError::Spec(format!("emu:{m}: {e}")))?;
            let backing = work.join(format!("emu{index}.img"));
            let mp = work.join(format!("emu{index}"));
            actions.note(format!(
                "serve model {model_spec} through FUSE at {} (data in sparse {}), delays divided by {}",
                mp.display(),
                backing.display(),
                model_spec.settings.scale
            ));
            let file = if actions.dry_run {
                mp.join(crate::emu::DISK_NAME)
            } else {
                let model = model_spec
                    .build()
                    .map_err(|e| StackError::Spec(format!("emu:{m}: {e}")))?;
                let entry = ledger
                    .record(Resource::Fuse {
                        mountpoint: mp.clone(),
                    })
                    .map_err(ledger_err)?;
                let server = EmuServer::start(model, &backing, &mp, model_spec.settings.scale)
                    .map_err(|e| StackError::Command(format!("emu:{m}: {e}")))?;
                let f = server.device_file();
                ledger.hold_server(entry, server);
                f
            };
            let (path, disk) = attach_loop(&file, index, partscan, ledger, actions)?;
            Ok(Dev {
                spec: spec.to_string(),
                path,
                disk,
            })
        }
        DeviceSpec::Dir(_) | DeviceSpec::TempDir => Err(StackError::Spec(
            "a dir: device cannot be combined with other devices".into(),
        )),
    }
}

/// Attaches `file` to a loop device (direct I/O on), in the ledger first; (path, kernel name).
fn attach_loop(
    file: &Path,
    index: usize,
    partscan: bool,
    ledger: &mut Ledger,
    actions: &mut Actions,
) -> Result<(PathBuf, String), StackError> {
    ledger
        .record(Resource::Loop {
            backing: file.to_path_buf(),
        })
        .map_err(ledger_err)?;
    let mut a = sys::args(&["--find", "--show", "--direct-io=on"]);
    if partscan {
        a.push("--partscan".into());
    }
    a.push(file.display().to_string());
    let out = actions.run("losetup", &a)?;
    let path = if actions.dry_run {
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

/// Facts about a block device for the stack as built.
fn describe(dev: &Dev) -> Json {
    let name = dev
        .path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let size = sys::read_sysfs(Path::new(&format!("/sys/class/block/{name}/size")))
        .and_then(|s| s.parse::<u64>().ok())
        .map(|s| s * 512);
    let q = format!("/sys/block/{}", dev.disk);
    let emulated = dev
        .spec
        .strip_prefix("emu:")
        .and_then(|m| ModelSpec::parse(m).ok())
        .map(|m| format!("emulated: {} ({m})", m.model.summary));
    let model = emulated
        .or_else(|| sys::read_sysfs(Path::new(&format!("{q}/device/model"))))
        .or_else(|| {
            sys::read_sysfs(Path::new(&format!("{q}/loop/backing_file")))
                .map(|b| format!("loop device on {b}"))
        });
    json!({
        "spec": dev.spec,
        "path": dev.path,
        "kernel_name": name,
        "size_bytes": size,
        "model": model,
        "rotational": sys::read_sysfs(Path::new(&format!("{q}/queue/rotational"))).map(|r| r == "1"),
        "logical_block_size": sys::read_sysfs(Path::new(&format!("{q}/queue/logical_block_size"))).and_then(|s| s.parse::<u64>().ok()),
    })
}

fn device_size(path: &Path) -> Option<u64> {
    let name = path
        .canonicalize()
        .ok()?
        .file_name()?
        .to_string_lossy()
        .into_owned();
    sys::read_sysfs(Path::new(&format!("/sys/class/block/{name}/size")))?
        .parse::<u64>()
        .ok()
        .map(|s| s * 512)
}

/// Waits up to `secs` seconds for every path to exist.
fn wait_for(paths: &[PathBuf], secs: u64) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !paths.iter().all(|p| p.exists()) {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    true
}

/// The path of partition `n` (1-based) of `disk_path`.
pub fn partition_path(disk_path: &Path, n: usize) -> PathBuf {
    let s = disk_path.display().to_string();
    if s.ends_with(|c: char| c.is_ascii_digit()) {
        PathBuf::from(format!("{s}p{n}"))
    } else {
        PathBuf::from(format!("{s}{n}"))
    }
}

const MIB: u64 = 1 << 20;

fn round_mib(x: u64) -> u64 {
    x.div_ceil(MIB) * MIB
}

fn check_fits(dev: &Dev, needed: u64, dry: bool) -> Result<(), StackError> {
    if dry {
        return Ok(());
    }
    let size = device_size(&dev.path).unwrap_or(0);
    if needed > size {
        return Err(StackError::NoSpace {
            path: dev.path.display().to_string(),
            needed,
            free: size,
        });
    }
    Ok(())
}

fn raw_layout(
    dev: &Dev,
    plan: &Plan,
    kind: LayoutKind,
    actions: &mut Actions,
) -> Result<Vec<Placement>, StackError> {
    match kind {
        LayoutKind::Regions => {
            let mut off = MIB;
            let mut v = Vec::new();
            for s in &plan.streams {
                v.push(Placement {
                    path: dev.path.clone(),
                    offset: off,
                    len: s.region_len,
                });
                off += round_mib(s.region_len);
            }
            check_fits(dev, off, actions.dry_run)?;
            actions.note(format!(
                "regions of {} in stream order from offset 1MiB",
                dev.path.display()
            ));
            Ok(v)
        }
        LayoutKind::Partitions => {
            let mut script = String::from("label: gpt\n");
            let mut total = 2 * MIB;
            for s in &plan.streams {
                script.push_str(&format!(
                    "size={}, name={}\n",
                    round_mib(s.region_len) / 512,
                    s.name
                ));
                total += round_mib(s.region_len);
            }
            check_fits(dev, total + MIB, actions.dry_run)?;
            actions.run_with_input(
                "sfdisk",
                &sys::args(&[
                    "--quiet",
                    "--wipe",
                    "always",
                    &dev.path.display().to_string(),
                ]),
                &script,
            )?;
            let parts: Vec<PathBuf> = (1..=plan.streams.len())
                .map(|i| partition_path(&dev.path, i))
                .collect();
            if !actions.dry_run && !wait_for(&parts, 1) {
                // Some kernels ignore the re-read sfdisk asks for on loop devices; add the
                // partitions one by one (BLKPG) instead.
                actions.run(
                    "partx",
                    &sys::args(&["--update", &dev.path.display().to_string()]),
                )?;
                if !wait_for(&parts, 10) {
                    return Err(StackError::Command(format!(
                        "partitions of {} did not appear",
                        dev.path.display()
                    )));
                }
            }
            Ok(parts
                .into_iter()
                .zip(&plan.streams)
                .map(|(path, s)| Placement {
                    path,
                    offset: 0,
                    len: s.region_len,
                })
                .collect())
        }
        LayoutKind::Files => unreachable!("files layout is not raw"),
    }
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
    let mut warnings = Vec::new();
    let kernel = rustix::system::uname()
        .release()
        .to_string_lossy()
        .into_owned();
    if devices.is_empty() {
        return Err(StackError::Spec(format!(
            "stack {} names no device",
            spec.name
        )));
    }
    // Directory stacks: no provisioning, no root.
    if let [d @ (DeviceSpec::Dir(_) | DeviceSpec::TempDir)] = devices {
        if spec.fs.is_some()
            || spec.layout != LayoutKind::Files
            || spec.scheduler.is_some()
            || !spec.mount.is_empty()
        {
            return Err(StackError::Spec(format!(
                "stack {}: a dir: device takes the files layout only, with no fs, mount options or scheduler (iotrial changes only devices it is given)",
                spec.name
            )));
        }
        let parent = match d {
            DeviceSpec::Dir(p) => p.clone(),
            _ => work_dir(ledger, actions)?,
        };
        actions.note(format!(
            "create one file per stream in {}",
            parent.display()
        ));
        if actions.dry_run {
            return Ok(Built {
                placements: vec![],
                direct_ok: plan.direct,
                as_built: json!({"name": spec.name, "layout": "files", "devices": [d.to_string()], "commands": actions.log}),
                warnings,
                files: None,
                time_scale: 1.0,
            });
        }
        let layout = files::create(&parent, plan, stop)?;
        warnings.extend(layout.warnings.clone());
        let as_built = json!({
            "name": spec.name, "layout": "files", "kernel": kernel,
            "devices": [{"spec": d.to_string(), "path": parent, "filesystem": layout.fs_type}],
            "fs": layout.fs_type, "commands": actions.log,
        });
        return Ok(Built {
            placements: layout.placements.clone(),
            direct_ok: layout.direct_ok,
            as_built,
            warnings,
            files: Some(layout),
            time_scale: 1.0,
        });
    }
    if let Some(d) = devices.iter().find(|d| !d.needs_root()) {
        return Err(StackError::Spec(format!(
            "stack {}: {d} cannot be combined with block devices",
            spec.name
        )));
    }
    if !actions.dry_run && !rustix::process::geteuid().is_root() {
        return Err(StackError::NeedsRoot(format!(
            "{} uses {} (loop devices, mkfs and mount need root)",
            spec.name, devices[0]
        )));
    }
    let mut all_specs = devices.to_vec();
    if let Some(l) = &spec.logdev {
        all_specs.extend(DeviceSpec::parse(l).ok());
    }
    let time_scale = time_scale_of(&spec.name, &all_specs)?;
    let work = work_dir(ledger, actions)?;
    let partscan = spec.layout == LayoutKind::Partitions;
    let mut devs = Vec::new();
    for (i, d) in devices.iter().enumerate() {
        devs.push(attach(d, i, &work, partscan, opts, ledger, actions)?);
    }
    let logdev = match &spec.logdev {
        Some(l) => {
            let ds = DeviceSpec::parse(l)
                .map_err(|m| StackError::Spec(format!("stack {} logdev: {m}", spec.name)))?;
            Some(attach(
                &ds,
                devs.len(),
                &work,
                false,
                opts,
                ledger,
                actions,
            )?)
        }
        None => None,
    };
    let mut notices = Vec::new();
    let mut disks: Vec<&str> = devs
        .iter()
        .chain(logdev.iter())
        .map(|d| d.disk.as_str())
        .collect();
    disks.dedup();
    if let Some(s) = &spec.scheduler {
        for disk in &disks {
            notices.extend(scheduler::apply(disk, s, &spec.tunables, ledger, actions)?);
        }
    } else if !spec.tunables.is_empty() {
        return Err(StackError::Spec(format!(
            "stack {}: tunables need a scheduler",
            spec.name
        )));
    }
    warnings.extend(notices.iter().cloned());
    let mut as_built = json!({
        "name": spec.name,
        "layout": spec.layout.name(),
        "kernel": kernel,
        "devices": devs.iter().map(describe).collect::<Vec<_>>(),
        "logdev": logdev.as_ref().map(describe),
        "scheduler_requested": spec.scheduler,
        "notices": notices,
    });
    let (placements, files_layout, direct_ok) = match spec.layout {
        LayoutKind::Files => {
            let fs_name = spec.fs.as_deref().ok_or_else(|| {
                StackError::Spec(format!(
                    "stack {}: the files layout on a block device needs fs (ext4, xfs, btrfs, ...)",
                    spec.name
                ))
            })?;
            let data: Vec<PathBuf> = devs.iter().map(|d| d.path.clone()).collect();
            let log_path = logdev.as_ref().map(|d| d.path.clone());
            as_built["fs"] = json!(fs_name);
            as_built["mkfs"] = fs::mkfs(fs_name, &spec.mkfs, &data, log_path.as_deref(), actions)?;
            let mp = fs::mount(
                fs_name,
                &data[0],
                &spec.mount,
                log_path.as_deref(),
                &work,
                ledger,
                actions,
            )?;
            let mut m = fs::applied_options(&mp);
            if m.is_object() {
                m["requested"] = json!(spec.mount);
            }
            as_built["mount"] = m;
            actions.note(format!(
                "create one file per stream in {} with fallocate; fill read files",
                mp.display()
            ));
            if actions.dry_run {
                (vec![], None, plan.direct)
            } else {
                let layout = files::create(&mp, plan, stop)?;
                warnings.extend(layout.warnings.clone());
                let d = layout.direct_ok;
                (layout.placements.clone(), Some(layout), d)
            }
        }
        raw => {
            if spec.fs.is_some() || !spec.mount.is_empty() || !spec.mkfs.is_empty() {
                return Err(StackError::Spec(format!(
                    "stack {}: the {} layout is raw I/O; it takes no fs, mkfs or mount",
                    spec.name,
                    raw.name()
                )));
            }
            if devs.len() != 1 || logdev.is_some() {
                return Err(StackError::Spec(format!(
                    "stack {}: the {} layout takes exactly one device",
                    spec.name,
                    raw.name()
                )));
            }
            let p = raw_layout(&devs[0], plan, raw, actions)?;
            for (s, pl) in plan.streams.iter().zip(&p) {
                if s.op == Op::Read && !actions.dry_run {
                    files::fill_random(&pl.path, pl.offset, pl.len, plan.direct, stop)?;
                }
            }
            (p, None, plan.direct)
        }
    };
    if !actions.dry_run {
        as_built["scheduler"] = json!(disks
            .iter()
            .map(|d| scheduler::read_back(d))
            .collect::<Vec<_>>());
    }
    as_built["commands"] = json!(actions.log);
    Ok(Built {
        placements,
        direct_ok,
        as_built,
        warnings,
        files: files_layout,
        time_scale,
    })
}

/// The one time scale of a stack's devices: every emulated device must share it, and a
/// time-scaled device cannot be mixed with real ones (their times would not compare).
fn time_scale_of(name: &str, devices: &[DeviceSpec]) -> Result<f64, StackError> {
    let mut scales = Vec::new();
    for d in devices {
        scales.push(match d {
            DeviceSpec::Emu(m) => {
                ModelSpec::parse(m)
                    .map_err(|e| StackError::Spec(format!("emu:{m}: {e}")))?
                    .settings
                    .scale
            }
            _ => 1.0,
        });
    }
    let first = scales.first().copied().unwrap_or(1.0);
    if scales.iter().any(|s| *s != first) {
        return Err(StackError::Spec(format!(
            "stack {name}: its devices run at different time scales ({scales:?}); give every emu: device the same scale and mix no real device with a scaled one"
        )));
    }
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_names() {
        assert_eq!(
            partition_path(Path::new("/dev/loop3"), 2),
            PathBuf::from("/dev/loop3p2")
        );
        assert_eq!(
            partition_path(Path::new("/dev/sdb"), 10),
            PathBuf::from("/dev/sdb10")
        );
        assert_eq!(
            partition_path(Path::new("/dev/nvme0n1"), 1),
            PathBuf::from("/dev/nvme0n1p1")
        );
    }
}
