//! The block devices of a built stack, as the monitors watch them: every device the stack is
//! built on, each partition, the external log device, and the disk that holds an image, an
//! emulated device's data or a directory target when that is a real block device. Each has
//! its kernel name (`loop3`, `loop3p1`, `vda`) and its role.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// What a device is to the stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceRole {
    /// A device the stack is built on (a loop device, a real disk, a member of a
    /// multi-device filesystem).
    Data,
    /// A partition of a data device.
    Partition,
    /// The external log (journal) device.
    Log,
    /// The disk holding an image file, an emulated device's data or a directory target.
    Backing,
}

impl DeviceRole {
    /// `data`, `partition`, `log` or `backing`.
    pub fn name(self) -> &'static str {
        match self {
            DeviceRole::Data => "data",
            DeviceRole::Partition => "partition",
            DeviceRole::Log => "log",
            DeviceRole::Backing => "backing",
        }
    }
}

/// One block device of a built stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackDevice {
    /// Kernel name, as in /proc/diskstats.
    pub name: String,
    pub path: PathBuf,
    pub role: DeviceRole,
    /// For the loop device of an emulated device: the FUSE mount point its server serves.
    pub emulated: Option<PathBuf>,
}

/// The block devices of a built stack and the filesystem made on them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StackDevices {
    pub devices: Vec<StackDevice>,
    /// The filesystem iotrial made (`ext4`, `xfs`, ...); `None` on raw layouts and on
    /// directory targets.
    pub fs: Option<String>,
}

impl StackDevices {
    /// Adds `d` unless a device of that name is listed already.
    pub fn add(&mut self, d: StackDevice) {
        if !self.devices.iter().any(|o| o.name == d.name) {
            self.devices.push(d);
        }
    }

    /// Adds the disk holding `file` (an image, a directory) as a backing device, when it is a
    /// real block device.
    pub fn add_backing_of(&mut self, file: &Path) {
        if let Some(name) = disk_holding(file) {
            self.add(StackDevice {
                path: PathBuf::from("/dev").join(&name),
                name,
                role: DeviceRole::Backing,
                emulated: None,
            });
        }
    }

    /// The first device of `role`.
    pub fn first(&self, role: DeviceRole) -> Option<&StackDevice> {
        self.devices.iter().find(|d| d.role == role)
    }
}

/// The kernel name of the block device `path` is (a device node or a symlink to one).
pub fn kernel_name(path: &Path) -> String {
    let p = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    p.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// The kernel name of the block device whose filesystem holds `file`, when it is a real one
/// (not tmpfs, overlayfs or another filesystem without a device).
pub fn disk_holding(file: &Path) -> Option<String> {
    let dev = std::fs::metadata(file).ok()?.dev();
    let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    if major == 0 {
        return None;
    }
    let link = std::fs::read_link(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_are_listed_once() {
        let mut s = StackDevices::default();
        let d = StackDevice {
            name: "loop3".into(),
            path: "/dev/loop3".into(),
            role: DeviceRole::Data,
            emulated: None,
        };
        s.add(d.clone());
        s.add(d);
        assert_eq!(s.devices.len(), 1);
        assert_eq!(s.first(DeviceRole::Data).unwrap().name, "loop3");
        assert!(s.first(DeviceRole::Log).is_none());
    }

    #[test]
    fn the_disk_of_a_file_is_found_or_none() {
        let dir = tempfile::tempdir().unwrap();
        // Whatever holds the temporary directory: a real disk has a sysfs entry, tmpfs none.
        if let Some(name) = disk_holding(dir.path()) {
            assert!(Path::new("/sys/class/block").join(&name).exists(), "{name}");
        }
        assert_eq!(disk_holding(Path::new("/proc/self/stat")), None);
    }
}
