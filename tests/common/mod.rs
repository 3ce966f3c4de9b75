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

/// Parameters that keep a dvr trial running until it is interrupted.
pub const ENDLESS: &[&str] = &[
    "--set",
    "samples=1000000",
    "--set",
    "region_size=16MiB",
    "--set",
    "io_size=64KiB",
];

/// Starts the real binary with `args` in the background, its ledger and temporary files under
/// `work`, its output discarded.
pub fn spawn_iotrial(work: &Path, args: &[&str]) -> std::process::Child {
    Command::new(assert_cmd::cargo::cargo_bin("iotrial"))
        .env("IOTRIAL_LEDGER_DIR", work.join("ledger"))
        .env("TMPDIR", work)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// Polls `cond` every 20 ms for up to `secs` seconds; panics naming `what` if it never holds.
pub fn wait_until(what: &str, secs: u64, mut cond: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !cond() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting: {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Loop devices as (name, backing inode, backing device) — the backing file's identity,
/// which survives the lazy unmount of a FUSE mount that renames its path to `/disk`.
fn loop_identities() -> Vec<(String, String, String, String)> {
    let out = Command::new("losetup")
        .args([
            "--list",
            "--noheadings",
            "-O",
            "NAME,BACK-INO,BACK-MAJ:MIN,BACK-FILE",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (n, i, d) = (f.next()?, f.next()?, f.next()?);
            Some((
                n.to_string(),
                i.to_string(),
                d.to_string(),
                f.collect::<Vec<_>>().join(" "),
            ))
        })
        .collect()
}

/// Identities (backing inode, backing device) of the loop devices whose backing file lies
/// under `dir`.
pub fn loop_backings_under(dir: &Path) -> Vec<(String, String)> {
    let d = dir.display().to_string();
    loop_identities()
        .into_iter()
        .filter(|l| l.3.contains(&d))
        .map(|l| (l.1, l.2))
        .collect()
}

/// The loop device still backed by the file `backing` identifies, if any.
pub fn loop_attached(backing: &(String, String)) -> Option<String> {
    loop_identities()
        .into_iter()
        .find(|l| (&l.1, &l.2) == (&backing.0, &backing.1))
        .map(|l| l.0)
}

/// After `iotrial cleanup`: the run's loop devices `loops` are detached, nothing is mounted
/// under `work`, and `work` holds nothing but the (empty) ledger directory.
pub fn assert_cleaned_up(work: &Path, loops: &[(String, String)]) {
    assert!(
        mounts_under(work).is_empty(),
        "mounts left: {:?}",
        mounts_under(work)
    );
    assert!(
        loops_under(work).is_empty(),
        "loop devices left: {:?}",
        loops_under(work)
    );
    for l in loops {
        if let Some(dev) = loop_attached(l) {
            panic!("{dev} still attached to the run's backing file after cleanup");
        }
    }
    let left: Vec<_> = std::fs::read_dir(work)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != "ledger")
        .collect();
    assert!(
        left.is_empty(),
        "images and work directories removed: {left:?}"
    );
    let ledgers = std::fs::read_dir(work.join("ledger"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(ledgers, 0, "ledger file removed");
}
