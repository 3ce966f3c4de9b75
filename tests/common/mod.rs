//! Helpers shared by the integration tests: root detection with a printed skip reason, loop
//! devices that detach themselves, and leftover checks.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// True when the test may use loop devices, mkfs and mount; otherwise prints why it skips.
pub fn can_build_stacks(test: &str) -> bool {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped {test}: needs root (loop devices, mkfs, mount)");
        return false;
    }
    if !Path::new("/dev/loop-control").exists() {
        eprintln!("skipped {test}: no loop device support (/dev/loop-control missing)");
        return false;
    }
    true
}

/// Whether `prog` can be found (PATH or sbin).
pub fn have(prog: &str) -> bool {
    ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        .iter()
        .any(|d| Path::new(d).join(prog).exists())
}

/// A loop device on a sparse image in a temp dir, detached and removed on drop.
pub struct TestLoop {
    pub dev: PathBuf,
    pub image: PathBuf,
    _dir: tempfile::TempDir,
}

impl TestLoop {
    pub fn new(size: u64) -> TestLoop {
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("test.img");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(size)
            .unwrap();
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&image)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "losetup: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        TestLoop {
            dev,
            image,
            _dir: dir,
        }
    }

    /// The kernel name (`loop3`).
    pub fn name(&self) -> String {
        self.dev.file_name().unwrap().to_string_lossy().into_owned()
    }
}

impl Drop for TestLoop {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dev).output();
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).output();
    }
}

/// A mount that unmounts itself.
pub struct TestMount(pub PathBuf);

impl Drop for TestMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).output();
    }
}

/// Loop devices whose backing file lies under `dir`.
pub fn loops_under(dir: &Path) -> Vec<String> {
    let out = Command::new("losetup").args(["-a"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(&dir.display().to_string()))
        .map(String::from)
        .collect()
}

/// Mounts whose mount point lies under `dir`.
pub fn mounts_under(dir: &Path) -> Vec<String> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|l| l.contains(&dir.display().to_string()))
        .map(String::from)
        .collect()
}
