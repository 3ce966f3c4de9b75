//! What a run creates and must give back: temporary directories, images, loop devices,
//! mounts, emulated devices (FUSE mounts) and sysfs changes, each described well enough to be
//! released from another process (the device server or `iotrial cleanup`). Releasing says what
//! it did in one plain line, and a resource that is already gone is "already released", never
//! an error. A run's ledger file ([`LedgerFile`]) lists them in the order they were made.

use crate::stack::sys;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One resource, described well enough to release it from another process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Resource {
    /// A directory iotrial made (images, mount points, stream files); removed recursively
    /// once unmounted.
    TempDir { path: PathBuf },
    /// An image file; removed.
    Image { path: PathBuf },
    /// Loop devices backed by this file; detached.
    Loop { backing: PathBuf },
    /// A mount; unmounted (lazily if busy).
    Mount { target: PathBuf },
    /// An emulated device's FUSE mount; unmounted, its connection aborted if its server died.
    Fuse { mountpoint: PathBuf },
    /// A sysfs attribute (scheduler, tunable) changed from `previous`; written back.
    Sysfs { path: PathBuf, previous: String },
    /// A guest's QEMU process, known by its pid and a path only its command line holds (its
    /// control socket); killed, so it lets go of the devices passed to it.
    Guest { pid: u32, marker: PathBuf },
    /// A tracefs instance (the block trace's own buffer and events); removed, which stops
    /// its events.
    TraceInstance { path: PathBuf },
    /// An MD array over `members`; stopped, its members' superblocks cleared.
    MdArray {
        device: PathBuf,
        members: Vec<PathBuf>,
    },
    /// A ZFS pool; destroyed.
    ZfsPool { name: String },
}

/// What releasing one resource did, as one line for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Released {
    /// It was there and is now gone (or restored).
    Done(String),
    /// Nothing was left to release.
    AlreadyGone(String),
}

impl std::fmt::Display for Released {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Released::Done(s) => f.write_str(s),
            Released::AlreadyGone(s) => write!(f, "already released: {s}"),
        }
    }
}

impl std::fmt::Display for Resource {
    /// What the resource is, in the words the release lines use.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Resource::TempDir { path } => write!(f, "directory {}", path.display()),
            Resource::Image { path } => write!(f, "image {}", path.display()),
            Resource::Loop { backing } => write!(f, "loop device on {}", backing.display()),
            Resource::Mount { target } => write!(f, "mount {}", target.display()),
            Resource::Fuse { mountpoint } => {
                write!(f, "emulated device at {}", mountpoint.display())
            }
            Resource::Sysfs { path, .. } => write!(f, "{}", sysfs_name(path)),
            Resource::Guest { pid, .. } => write!(f, "guest (QEMU pid {pid})"),
            Resource::TraceInstance { path } => write!(f, "trace instance {}", path.display()),
            Resource::MdArray { device, .. } => write!(f, "MD array {}", device.display()),
            Resource::ZfsPool { name } => write!(f, "ZFS pool {name}"),
        }
    }
}

/// `loop3 scheduler` for /sys/block/loop3/queue/scheduler, `loop3 iosched/read_expire` for a
/// tunable, else the path.
fn sysfs_name(path: &Path) -> String {
    let s = path.display().to_string();
    let Some(rest) = s.strip_prefix("/sys/block/") else {
        return s;
    };
    match rest.split_once("/queue/") {
        Some((disk, attr)) => format!("{disk} {attr}"),
        None => s,
    }
}

impl Resource {
    /// Releases the resource. A resource that is not there (creation failed, or someone
    /// released it already) is [`Released::AlreadyGone`].
    pub fn release(&self) -> Result<Released, String> {
        match self {
            Resource::TempDir { path } => remove(path, |p| std::fs::remove_dir_all(p), "removed"),
            Resource::Image { path } => remove(path, |p| std::fs::remove_file(p), "removed image"),
            Resource::TraceInstance { path } => {
                remove(path, |p| std::fs::remove_dir(p), "removed trace instance")
            }
            Resource::Loop { backing } => {
                let detached = sys::detach_loops_of(backing)?;
                if detached.is_empty() {
                    return Ok(Released::AlreadyGone(self.to_string()));
                }
                Ok(Released::Done(format!(
                    "detached {} ({})",
                    detached.join(", "),
                    backing.display()
                )))
            }
            Resource::Mount { target } => Ok(match sys::unmount(target)? {
                sys::Unmounted::Clean => Released::Done(format!("unmounted {}", target.display())),
                sys::Unmounted::Lazily => Released::Done(format!(
                    "unmounted {} lazily (it was busy)",
                    target.display()
                )),
                sys::Unmounted::NotMounted => Released::AlreadyGone(self.to_string()),
            }),
            Resource::Fuse { mountpoint } => release_fuse(mountpoint, self),
            Resource::MdArray { device, members } => {
                Ok(match crate::stack::md::release(device, members)? {
                    true => Released::Done(format!("stopped MD array {}", device.display())),
                    false => Released::AlreadyGone(self.to_string()),
                })
            }
            Resource::ZfsPool { name } => Ok(match crate::stack::zfs::release(name)? {
                true => Released::Done(format!("destroyed ZFS pool {name}")),
                false => Released::AlreadyGone(self.to_string()),
            }),
            Resource::Sysfs { path, previous } => {
                if !path.exists() {
                    return Ok(Released::AlreadyGone(self.to_string()));
                }
                std::fs::write(path, previous)
                    .map_err(|e| format!("restore {}: {e}", path.display()))?;
                Ok(Released::Done(format!(
                    "restored {} to {previous}",
                    sysfs_name(path)
                )))
            }
            Resource::Guest { pid, marker } => Ok(match kill_guest(*pid, marker)? {
                true => Released::Done(format!("killed guest (QEMU pid {pid})")),
                false => Released::AlreadyGone(self.to_string()),
            }),
        }
    }
}

/// Kills process `pid` if its command line holds `marker` (so a reused pid is left alone) and
/// waits until it is gone. Whether there was one to kill.
fn kill_guest(pid: u32, marker: &Path) -> Result<bool, String> {
    let ours = |pid: u32| {
        std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
            let m = marker.as_os_str().as_encoded_bytes();
            c.windows(m.len()).any(|w| w == m)
        })
    };
    let Some(p) = rustix::process::Pid::from_raw(pid as i32).filter(|_| ours(pid)) else {
        return Ok(false);
    };
    let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while ours(pid) && !is_zombie(pid) {
        if std::time::Instant::now() > deadline {
            return Err(format!("guest (QEMU pid {pid}) did not end after SIGKILL"));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Ok(true)
}

/// Whether `pid` has ended and waits to be reaped by its parent.
fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| r.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

/// Removes `path` with `op`; a missing path is already released.
fn remove(
    path: &Path,
    op: fn(&Path) -> std::io::Result<()>,
    verb: &str,
) -> Result<Released, String> {
    match op(path) {
        Ok(()) => Ok(Released::Done(format!("{verb} {}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Released::AlreadyGone(format!(
            "{} (not there)",
            path.display()
        ))),
        Err(e) => Err(format!("remove {}: {e}", path.display())),
    }
}

/// Unmounts an emulated device's FUSE mount whose server is not ours to stop: a live server
/// ends its session when unmounted; a dead one (killed) leaves a connection to abort first.
fn release_fuse(mountpoint: &Path, r: &Resource) -> Result<Released, String> {
    let mounted = crate::emu::fuse_mounts_at(mountpoint)
        .map_err(|e| e.to_string())?
        .len();
    if mounted == 0 {
        return Ok(Released::AlreadyGone(r.to_string()));
    }
    match crate::emu::unmount_patiently(mountpoint, std::time::Duration::from_secs(1)) {
        Ok(()) => Ok(Released::Done(format!(
            "unmounted emulated device {}",
            mountpoint.display()
        ))),
        Err(_) => crate::emu::abort_connection(mountpoint)
            .map(|_| {
                Released::Done(format!(
                    "aborted and unmounted emulated device {} (its server was gone or it was busy)",
                    mountpoint.display()
                ))
            })
            .map_err(|e| format!("abort FUSE at {}: {e}", mountpoint.display())),
    }
}

/// The ledger file as written to disk.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LedgerFile {
    /// The run that owns the resources.
    pub pid: u32,
    /// Its device server process, which releases them if the run dies.
    #[serde(default)]
    pub server_pid: Option<u32>,
    /// The results directory of the study the run belongs to (for `--resume`).
    #[serde(default)]
    pub results: Option<PathBuf>,
    pub resources: Vec<Resource>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_plain_words() {
        let r = Resource::Sysfs {
            path: "/sys/block/loop3/queue/scheduler".into(),
            previous: "none".into(),
        };
        assert_eq!(r.to_string(), "loop3 scheduler");
        let t = Resource::Sysfs {
            path: "/sys/block/loop3/queue/iosched/read_expire".into(),
            previous: "500".into(),
        };
        assert_eq!(t.to_string(), "loop3 iosched/read_expire");
        let m = Resource::Mount {
            target: "/tmp/x/mnt".into(),
        };
        assert_eq!(m.to_string(), "mount /tmp/x/mnt");
    }

    #[test]
    fn a_missing_resource_is_already_released() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        for r in [
            Resource::TempDir { path: gone.clone() },
            Resource::Image { path: gone.clone() },
            Resource::Sysfs {
                path: gone.clone(),
                previous: "x".into(),
            },
            Resource::Mount {
                target: gone.clone(),
            },
            Resource::Fuse {
                mountpoint: gone.clone(),
            },
            Resource::Loop {
                backing: gone.clone(),
            },
            Resource::Guest {
                pid: std::process::id(),
                marker: gone.clone(),
            },
            Resource::TraceInstance { path: gone.clone() },
            Resource::MdArray {
                device: PathBuf::from("/dev/md-iotrial-test-none"),
                members: vec![gone.clone()],
            },
            Resource::ZfsPool {
                name: "iotrial-test-none".into(),
            },
        ] {
            let rel = r.release().unwrap_or_else(|e| panic!("{r}: {e}"));
            assert!(matches!(rel, Released::AlreadyGone(_)), "{r}: {rel}");
            assert!(rel.to_string().starts_with("already released: "), "{rel}");
        }
    }

    #[test]
    fn release_removes_and_restores() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("made");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("f"), "x").unwrap();
        let r = Resource::TempDir { path: d.clone() }.release().unwrap();
        assert_eq!(r, Released::Done(format!("removed {}", d.display())));
        assert!(!d.exists());
        let attr = dir.path().join("attr");
        std::fs::write(&attr, "new").unwrap();
        let r = Resource::Sysfs {
            path: attr.clone(),
            previous: "old".into(),
        }
        .release()
        .unwrap();
        assert!(matches!(r, Released::Done(_)));
        assert_eq!(std::fs::read_to_string(&attr).unwrap(), "old");
    }
}
