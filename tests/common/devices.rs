//! Loop devices and mounts a test made, released on drop even when the test fails; external
//! tools run with argument vectors; and checks that a run left no loop device, mount or file.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::need::which;

/// Runs `tool args...` and returns its stdout, or a message with its stderr.
pub fn run(tool: &str, args: &[&str]) -> Result<String, String> {
    run_in(Path::new("."), tool, args)
}

/// [`run`] with `dir` as the tool's working directory (for tools that write files there).
pub fn run_in(dir: &Path, tool: &str, args: &[&str]) -> Result<String, String> {
    let exe = which(tool).ok_or_else(|| format!("{tool} not found"))?;
    let out = Command::new(exe)
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("{tool}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{tool} {args:?}: {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A loop device the test attached; detached on drop (with the image it made, if any).
pub struct TestLoop {
    pub dev: PathBuf,
    _dir: Option<tempfile::TempDir>,
}

impl TestLoop {
    /// A loop device on a fresh sparse image of `size` bytes.
    pub fn new(size: u64) -> TestLoop {
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("test.img");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(size)
            .unwrap();
        let mut lo = TestLoop::attach(&image, false).expect("losetup");
        lo._dir = Some(dir);
        lo
    }

    /// `losetup --find --show [--direct-io=on] FILE`.
    pub fn attach(file: &Path, direct_io: bool) -> Result<TestLoop, String> {
        let file = file.to_str().ok_or("non-UTF-8 path")?;
        let mut args = vec!["--find", "--show"];
        if direct_io {
            args.push("--direct-io=on");
        }
        args.push(file);
        let dev = run("losetup", &args)?.trim().to_string();
        if !dev.starts_with("/dev/loop") {
            return Err(format!("losetup printed {dev:?}"));
        }
        Ok(TestLoop {
            dev: PathBuf::from(dev),
            _dir: None,
        })
    }

    /// The device path as a string.
    pub fn path(&self) -> String {
        self.dev.display().to_string()
    }

    /// The kernel name (`loop3`).
    pub fn name(&self) -> String {
        self.dev.file_name().unwrap().to_string_lossy().into_owned()
    }

    /// Whether the kernel really does direct I/O on the backing file.
    pub fn direct_io(&self) -> bool {
        std::fs::read_to_string(format!("/sys/block/{}/loop/dio", self.name()))
            .map(|s| s.trim() == "1")
            .unwrap_or(false)
    }
}

impl Drop for TestLoop {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dev).output();
        if let Err(e) = run("losetup", &["-d", &self.path()]) {
            eprintln!("cleanup: {e}");
        }
    }
}

/// A mount the test made; unmounted on drop (lazily if busy).
pub struct Mounted {
    pub dir: PathBuf,
    armed: bool,
}

impl Mounted {
    /// Mounts `dev` on `dir` (created if needed).
    pub fn mount(dev: &str, dir: &Path, fstype: &str) -> Result<Mounted, String> {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        rustix::mount::mount(dev, dir, fstype, rustix::mount::MountFlags::empty(), None)
            .map_err(|e| format!("mount {dev} on {}: {e}", dir.display()))?;
        Ok(Mounted::adopt(dir))
    }

    /// Takes charge of a mount made some other way.
    pub fn adopt(dir: &Path) -> Mounted {
        Mounted {
            dir: dir.to_path_buf(),
            armed: true,
        }
    }

    /// Unmounts now, reporting an error.
    pub fn unmount(mut self) -> Result<(), String> {
        self.armed = false;
        rustix::mount::unmount(&self.dir, rustix::mount::UnmountFlags::empty())
            .map_err(|e| format!("umount {}: {e}", self.dir.display()))
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if self.armed {
            use rustix::mount::{unmount, UnmountFlags};
            if unmount(&self.dir, UnmountFlags::empty()).is_err() {
                let _ = unmount(&self.dir, UnmountFlags::DETACH);
            }
        }
    }
}

/// `dir` with a trailing slash: a prefix that matches paths under it and not a sibling whose
/// name merely starts with the same characters.
fn under(dir: &Path) -> String {
    format!("{}/", dir.display().to_string().trim_end_matches('/'))
}

/// Loop devices whose backing file lies under `dir`.
pub fn loops_under(dir: &Path) -> Vec<String> {
    let out = Command::new("losetup").args(["-a"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(&under(dir)))
        .map(String::from)
        .collect()
}

/// Mounts whose mount point lies under `dir`.
pub fn mounts_under(dir: &Path) -> Vec<String> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|l| l.contains(&under(dir)))
        .map(String::from)
        .collect()
}

/// FUSE connection numbers (device minors) of the FUSE mounts under `dir`.
pub fn fuse_connections_under(dir: &Path) -> Vec<u32> {
    mounts_under(dir)
        .iter()
        .filter(|l| l.contains(" - fuse"))
        .filter_map(|l| l.split(' ').nth(2)?.split_once(':')?.1.parse().ok())
        .collect()
}

/// Whether FUSE connection `minor` still exists (fusectl is mounted on this host, or the
/// connection's mount is gone and the check falls back to mountinfo).
pub fn fuse_connection_alive(minor: u32) -> bool {
    let fusectl = Path::new("/sys/fs/fuse/connections");
    if fusectl.join(minor.to_string()).exists() {
        return true;
    }
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .any(|l| l.contains(" - fuse") && l.split(' ').nth(2) == Some(&format!("0:{minor}")))
}

/// Loop devices as (name, backing inode, backing device, backing file): the backing file's
/// identity survives the lazy unmount of a FUSE mount that renames its path to `/disk`.
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
    let d = under(dir);
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

/// What a run under `work` left: mounts, loop devices (including `loops`, identified by their
/// backing files), and files other than the ledger directory. Empty when nothing is left.
pub fn leftovers(work: &Path, loops: &[(String, String)]) -> Vec<String> {
    let mut left: Vec<String> = mounts_under(work);
    left.extend(loops_under(work));
    left.extend(loops.iter().filter_map(loop_attached));
    left.extend(
        std::fs::read_dir(work)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "ledger"),
    );
    left.extend(
        std::fs::read_dir(work.join("ledger"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path().display().to_string()),
    );
    left
}

/// The run's loop devices `loops` are detached, nothing is mounted under `work`, and `work`
/// holds nothing but the (empty) ledger directory.
pub fn assert_cleaned_up(work: &Path, loops: &[(String, String)]) {
    let left = leftovers(work, loops);
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Where a bench's images go: tmpfs (`/dev/shm`) when it has `bytes` free, so the figures do
/// not measure the host's disk, else `/var/tmp`.
pub fn image_dir(bytes: u64) -> &'static str {
    let room = rustix::fs::statvfs("/dev/shm")
        .map(|s| s.f_bavail * s.f_frsize >= bytes)
        .unwrap_or(false);
    if room {
        "/dev/shm"
    } else {
        "/var/tmp"
    }
}
