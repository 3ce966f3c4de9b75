//! The guard: before iotrial writes to a real block device it checks that the user named it
//! exactly, that it is not mounted, does not hold the root or boot filesystem or swap, is not
//! held by another driver, and carries no partition table or filesystem signature — unless the
//! user names it again in `--wipe`. Mounted and system devices are refused even then.

use crate::mountinfo;
use crate::stack::{sys, StackError};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// A block device's kernel identity.
#[derive(Debug, Clone)]
pub struct BlockInfo {
    pub path: PathBuf,
    /// Kernel name (`sdb`, `loop3`, `sdb1`).
    pub name: String,
    /// Kernel name of the whole disk (`sdb` for `sdb1`).
    pub disk: String,
    pub dev: (u32, u32),
    /// Device numbers of the device and all its partitions.
    pub family: Vec<(u32, u32)>,
    pub family_names: Vec<String>,
}

fn major_minor(rdev: u64) -> (u32, u32) {
    (rustix::fs::major(rdev), rustix::fs::minor(rdev))
}

/// Looks up `path` as a block device.
pub fn block_info(path: &Path) -> Result<BlockInfo, StackError> {
    let refuse = |m: String| StackError::Refused(format!("block:{}: {m}", path.display()));
    let meta = std::fs::metadata(path).map_err(|e| refuse(format!("cannot be opened ({e})")))?;
    if !meta.file_type().is_block_device() {
        return Err(refuse("is not a block device".into()));
    }
    let dev = major_minor(meta.rdev());
    let sys_dir = std::fs::canonicalize(format!("/sys/dev/block/{}:{}", dev.0, dev.1))
        .map_err(|e| refuse(format!("has no sysfs entry ({e})")))?;
    let name = sys_dir
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let is_part = sys_dir.join("partition").exists();
    let disk_dir = if is_part {
        sys_dir
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or(sys_dir.clone())
    } else {
        sys_dir.clone()
    };
    let disk = disk_dir
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let mut family = vec![dev];
    let mut family_names = vec![name.clone()];
    if let Ok(rd) = std::fs::read_dir(&sys_dir) {
        for e in rd.flatten() {
            if e.path().join("partition").exists() {
                if let Some(d) = sys::read_sysfs(&e.path().join("dev")) {
                    if let Some((a, b)) = d.split_once(':') {
                        if let (Ok(a), Ok(b)) = (a.parse(), b.parse()) {
                            family.push((a, b));
                            family_names.push(e.file_name().to_string_lossy().into_owned());
                        }
                    }
                }
            }
        }
    }
    Ok(BlockInfo {
        path: path.to_path_buf(),
        name,
        disk,
        dev,
        family,
        family_names,
    })
}

/// Checks `path` before iotrial writes to it. `wipe` lists the devices the user named in
/// `--wipe`. Returns the device's identity, or a refusal that says why and what to do.
pub fn check(path: &Path, wipe: &[PathBuf]) -> Result<BlockInfo, StackError> {
    let info = block_info(path)?;
    let refuse = |m: String| StackError::Refused(format!("refusing block:{}: {m}", path.display()));
    let in_family = |m: &mountinfo::Mount| {
        info.family.contains(&m.dev)
            || info
                .family_names
                .iter()
                .any(|n| m.source == format!("/dev/{n}"))
    };
    let mounts = mountinfo::read();
    for m in &mounts {
        if in_family(m)
            && ["/", "/boot", "/boot/efi", "/usr"]
                .iter()
                .any(|s| m.mount_point == Path::new(s))
        {
            return Err(refuse(format!(
                "it holds the system filesystem mounted at {}",
                m.mount_point.display()
            )));
        }
    }
    if let Some(m) = mounts.iter().find(|m| in_family(m)) {
        return Err(refuse(format!(
            "it is mounted at {} ({})",
            m.mount_point.display(),
            m.fs_type
        )));
    }
    if let Ok(swaps) = std::fs::read_to_string("/proc/swaps") {
        for n in &info.family_names {
            if swaps
                .lines()
                .any(|l| l.split_whitespace().next() == Some(&format!("/dev/{n}")))
            {
                return Err(refuse(format!("/dev/{n} is in use as swap")));
            }
        }
    }
    let holders = std::fs::read_dir(format!("/sys/class/block/{}/holders", info.name))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    if !holders.is_empty() {
        return Err(refuse(format!("it is held by {}", holders.join(", "))));
    }
    let sigs = signatures(path)?;
    if !sigs.is_empty() {
        let canon = path.canonicalize().unwrap_or(path.to_path_buf());
        let named = wipe
            .iter()
            .any(|w| w == path || w.canonicalize().ok().as_ref() == Some(&canon));
        if !named {
            return Err(refuse(format!(
                "it carries {} (name it again with --wipe {} to destroy that)",
                sigs.join(", "),
                path.display()
            )));
        }
    }
    Ok(info)
}

/// Partition-table and filesystem signatures on a device (as wipefs finds them).
pub fn signatures(path: &Path) -> Result<Vec<String>, StackError> {
    let out = sys::run(
        "wipefs",
        &sys::args(&[
            "--no-act",
            "--noheadings",
            "--output",
            "TYPE",
            &path.display().to_string(),
        ]),
    )
    .map_err(StackError::Command)?;
    let mut v: Vec<String> = out
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    v.dedup();
    Ok(v.into_iter().map(|t| format!("a {t} signature")).collect())
}
