//! Shared helpers of the emulated-device tests and benchmark: root / tool checks that explain
//! a skip, external tools run with argument vectors, guards that detach loop devices and
//! unmount on drop (even when a test fails), and tiny device models with fixed delays.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use iotrial::emu::model::{DeviceModel, ReqKind, Request, Response};
use serde_json::{json, Value as Json};

/// Why a root test cannot run here, or None.
pub fn skip_reason(tools: &[&str]) -> Option<String> {
    if !rustix::process::geteuid().is_root() {
        return Some("needs root".into());
    }
    if !Path::new("/dev/fuse").exists() {
        return Some("/dev/fuse is missing (load the fuse module)".into());
    }
    for t in tools {
        if which(t).is_none() {
            return Some(format!("{t} is not installed"));
        }
    }
    None
}

/// The path of an executable on PATH (or in the sbin directories).
pub fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"])
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.is_file());
    found
}

/// Runs `tool args...` and returns its stdout, or a message with its stderr.
pub fn run(tool: &str, args: &[&str]) -> Result<String, String> {
    let exe = which(tool).ok_or_else(|| format!("{tool} not found"))?;
    let out = Command::new(exe)
        .args(args)
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

/// A loop device we attached; detached on drop.
pub struct LoopDev {
    pub dev: String,
}

impl LoopDev {
    /// `losetup --find --show [--direct-io=on] FILE`.
    pub fn attach(file: &Path, direct_io: bool) -> Result<LoopDev, String> {
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
        Ok(LoopDev { dev })
    }

    /// Whether the kernel really does direct I/O on the backing file.
    pub fn direct_io(&self) -> bool {
        let name = self.dev.trim_start_matches("/dev/");
        std::fs::read_to_string(format!("/sys/block/{name}/loop/dio"))
            .map(|s| s.trim() == "1")
            .unwrap_or(false)
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        if let Err(e) = run("losetup", &["-d", &self.dev]) {
            eprintln!("cleanup: {e}");
        }
    }
}

/// A filesystem we mounted; unmounted on drop (lazily if busy).
pub struct Mounted {
    pub dir: PathBuf,
    armed: bool,
}

impl Mounted {
    pub fn mount(dev: &str, dir: &Path, fstype: &str) -> Result<Mounted, String> {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        rustix::mount::mount(dev, dir, fstype, rustix::mount::MountFlags::empty(), None)
            .map_err(|e| format!("mount {dev} on {}: {e}", dir.display()))?;
        Ok(Mounted {
            dir: dir.to_path_buf(),
            armed: true,
        })
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

/// A model that serves each request `delay_ns` after it arrives, one at a time (`serial`) or
/// all in parallel, and fails reads and writes that touch `[fail_from, fail_to)` with EIO.
pub struct FixedModel {
    pub capacity: u64,
    pub delay_ns: u64,
    pub serial: bool,
    pub fail: (u64, u64),
    busy_until: u64,
    counts: [u64; 4],
}

impl FixedModel {
    pub fn new(capacity: u64, delay_ns: u64, serial: bool) -> Self {
        FixedModel {
            capacity,
            delay_ns,
            serial,
            fail: (0, 0),
            busy_until: 0,
            counts: [0; 4],
        }
    }
}

impl DeviceModel for FixedModel {
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn service(&mut self, now_ns: u64, req: Request) -> Response {
        let k = match req.kind {
            ReqKind::Read => 0,
            ReqKind::Write => 1,
            ReqKind::Flush => 2,
            ReqKind::Discard => 3,
        };
        self.counts[k] += 1;
        let start = if self.serial {
            now_ns.max(self.busy_until)
        } else {
            now_ns
        };
        let done_ns = start + self.delay_ns;
        self.busy_until = done_ns;
        let hit = req.offset < self.fail.1 && req.offset + req.len > self.fail.0;
        let data = matches!(req.kind, ReqKind::Read | ReqKind::Write);
        Response {
            done_ns,
            errno: if hit && data { 5 } else { 0 },
        }
    }
    fn stats(&self) -> Json {
        json!({"read": self.counts[0], "write": self.counts[1],
               "flush": self.counts[2], "discard": self.counts[3]})
    }
}
