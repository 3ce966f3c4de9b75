//! Cleanup of FUSE mounts a killed server left behind: find the mount's FUSE connection
//! (its device minor in /proc/self/mountinfo is the connection number under
//! /sys/fs/fuse/connections), abort it so nothing waits on a dead server, then unmount lazily.

use std::path::{Path, PathBuf};

use rustix::mount::{MountFlags, UnmountFlags};

use super::error::EmuError;

const MOUNTINFO: &str = "/proc/self/mountinfo";
const FUSECTL: &str = "/sys/fs/fuse/connections";

/// One FUSE mount found in mountinfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FuseMount {
    /// Connection number (the device minor).
    pub minor: u32,
    pub mountpoint: PathBuf,
    /// `fuse`, `fuse.SUBTYPE` or `fuseblk`.
    pub fstype: String,
    pub source: String,
}

/// Parses the FUSE mounts out of the text of a mountinfo file.
pub fn parse_fuse_mounts(mountinfo: &str) -> Vec<FuseMount> {
    crate::mountinfo::parse(mountinfo)
        .into_iter()
        .filter(|m| m.fs_type == "fuse" || m.fs_type == "fuseblk" || m.fs_type.starts_with("fuse."))
        .map(|m| FuseMount {
            minor: m.dev.1,
            mountpoint: m.mount_point,
            fstype: m.fs_type,
            source: m.source,
        })
        .collect()
}

/// The absolute form of `path` without touching a possibly dead mount at its last component
/// (stat on a mount whose server died fails with ENOTCONN).
pub fn resolve_mountpoint(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    match (abs.parent(), abs.file_name()) {
        (Some(parent), Some(name)) => parent
            .canonicalize()
            .map(|p| p.join(name))
            .unwrap_or(abs.clone()),
        _ => abs,
    }
}

/// FUSE mounts currently at `mountpoint`, innermost (most recent) last.
pub fn fuse_mounts_at(mountpoint: &Path) -> Result<Vec<FuseMount>, EmuError> {
    let target = resolve_mountpoint(mountpoint);
    let text = std::fs::read_to_string(MOUNTINFO).map_err(|source| EmuError::MountInfo {
        path: MOUNTINFO.into(),
        source,
    })?;
    Ok(parse_fuse_mounts(&text)
        .into_iter()
        .filter(|m| m.mountpoint == target)
        .collect())
}

/// Unmounts `target`, retrying for up to `patience` while it is busy: the kernel releases a
/// FUSE file asynchronously, so a mount can stay busy for a moment after its last user closed.
/// `Ok` also when nothing is mounted there.
pub fn unmount_patiently(
    target: &Path,
    patience: std::time::Duration,
) -> Result<(), rustix::io::Errno> {
    unmount_waiting(target, patience, &mut || {})
}

/// [`unmount_patiently`], calling `on_busy` once at the first refusal (retries every 20 ms).
pub fn unmount_waiting(
    target: &Path,
    patience: std::time::Duration,
    on_busy: &mut dyn FnMut(),
) -> Result<(), rustix::io::Errno> {
    let deadline = std::time::Instant::now() + patience;
    let mut noted = false;
    loop {
        match rustix::mount::unmount(target, UnmountFlags::empty()) {
            Ok(()) | Err(rustix::io::Errno::INVAL) | Err(rustix::io::Errno::NOENT) => return Ok(()),
            Err(rustix::io::Errno::BUSY) if std::time::Instant::now() < deadline => {
                if !std::mem::replace(&mut noted, true) {
                    on_busy();
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Writes to the `abort` file of FUSE connection `minor`, mounting fusectl first if needed.
pub fn abort_minor(mountpoint: &Path, minor: u32) -> Result<(), EmuError> {
    let dir = Path::new(FUSECTL).join(minor.to_string());
    // fusectl may not be mounted; mount it for the abort and put things back after.
    let mounted_here = !dir.exists()
        && rustix::mount::mount("fusectl", FUSECTL, "fusectl", MountFlags::empty(), None).is_ok();
    let result = if dir.exists() {
        std::fs::write(dir.join("abort"), b"1").map_err(|source| EmuError::Abort {
            path: mountpoint.to_path_buf(),
            minor,
            source,
        })
    } else {
        // The connection is already gone (its superblock was released).
        Ok(())
    };
    if mounted_here {
        let _ = rustix::mount::unmount(FUSECTL, UnmountFlags::DETACH);
    }
    result
}

/// Aborts the FUSE connection of every FUSE mount at `mountpoint` and lazily unmounts it, so a
/// killed server leaves nothing behind. Returns how many mounts were removed; 0 when nothing
/// was mounted there.
pub fn abort_connection(mountpoint: &Path) -> Result<usize, EmuError> {
    let mounts = fuse_mounts_at(mountpoint)?;
    let target = resolve_mountpoint(mountpoint);
    for m in mounts.iter().rev() {
        abort_minor(mountpoint, m.minor)?;
        rustix::mount::unmount(&target, UnmountFlags::DETACH).map_err(|e| EmuError::Unmount {
            path: target.clone(),
            source: e.into(),
        })?;
    }
    Ok(mounts.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
51 22 0:47 / /tmp/a\\040b rw,nosuid,nodev,relatime shared:30 - fuse.iotrial iotrial-emu rw,user_id=0,group_id=0
52 22 0:48 / /mnt/x rw,relatime - fuse /dev/fuse rw,user_id=0
53 22 0:49 / /mnt/y rw,relatime - fusectl fusectl rw
";

    #[test]
    fn parses_fuse_mounts_with_escaped_paths() {
        let m = parse_fuse_mounts(SAMPLE);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].minor, 47);
        assert_eq!(m[0].mountpoint, PathBuf::from("/tmp/a b"));
        assert_eq!(m[0].fstype, "fuse.iotrial");
        assert_eq!(m[0].source, "iotrial-emu");
        assert_eq!(m[1].minor, 48);
        assert_eq!(m[1].mountpoint, PathBuf::from("/mnt/x"));
    }

    #[test]
    fn nothing_mounted_is_not_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(abort_connection(dir.path()).unwrap(), 0);
    }
}
