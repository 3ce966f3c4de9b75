//! A filesystem's own checker, run read-only and measured (seed 004): `e2fsck -f -n -t -t`,
//! `xfs_repair -n`, `btrfs check --readonly`, with the user's extra arguments. It runs with an
//! argument vector, its output goes to a file kept with the trial, and it is timed with its
//! user and system CPU and its peak resident memory from wait4. A non-zero exit is a finding
//! the caller reports, not an error here. e2fsck's per-pass timings are parsed from its output.

use crate::stack::{sys, StackError};
use serde::Serialize;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The version the checker of filesystem `fs` gives of itself (`e2fsck 1.47.0 (5-Feb-2023)`),
/// or None when `fs` has none iotrial knows or it is not installed.
pub fn version(fs: &str) -> Option<String> {
    let (prog, flag) = match fs {
        "ext2" | "ext3" | "ext4" => ("e2fsck", "-V"),
        "xfs" => ("xfs_repair", "-V"),
        "btrfs" => ("btrfs", "--version"),
        _ => return None,
    };
    let o = std::process::Command::new(prog).arg(flag).output().ok()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(line.to_string())
}

/// The checker command for filesystem `fs` on `device`, read-only, with `extra` arguments
/// (for example `-o ag_stride=8` for xfs_repair).
pub fn command(
    fs: &str,
    device: &Path,
    extra: &[String],
) -> Result<(String, Vec<String>), StackError> {
    let (prog, mut args): (&str, Vec<String>) = match fs {
        "ext2" | "ext3" | "ext4" => ("e2fsck", sys::args(&["-f", "-n", "-t", "-t"])),
        "xfs" => ("xfs_repair", sys::args(&["-n"])),
        "btrfs" => ("btrfs", sys::args(&["check", "--readonly"])),
        other => {
            return Err(StackError::Invalid(format!(
            "no read-only checker iotrial knows for {other}; known: ext2, ext3, ext4, xfs, btrfs"
        )))
        }
    };
    if !sys::have(prog) {
        return Err(StackError::Unavailable(format!(
            "the checker of {fs}, {prog}, is not installed (scripts/install-deps.sh installs it)"
        )));
    }
    args.extend(extra.iter().cloned());
    args.push(device.display().to_string());
    Ok((prog.to_string(), args))
}

/// What one checker run measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckerRun {
    /// The command line, as text.
    pub command: String,
    /// Exit status, or `None` when a signal ended it (`signal` says which).
    pub exit: Option<i32>,
    pub signal: Option<i32>,
    pub wall_s: f64,
    pub user_s: f64,
    pub sys_s: f64,
    /// Peak resident set size, bytes (ru_maxrss).
    pub peak_rss_bytes: u64,
    /// Where its standard output and error were written.
    pub output: PathBuf,
}

impl CheckerRun {
    /// CPU time over wall time: near 1 or above, the check was CPU-bound; well below, it waited
    /// for I/O.
    pub fn cpu_share(&self) -> f64 {
        if self.wall_s > 0.0 {
            (self.user_s + self.sys_s) / self.wall_s
        } else {
            0.0
        }
    }
}

/// Runs `prog args`, its output to `output`; `stop` (Ctrl-C) kills it. Returns what it
/// measured, whatever its exit status.
pub fn run(
    prog: &str,
    args: &[String],
    output: &Path,
    stop: &AtomicBool,
) -> Result<CheckerRun, StackError> {
    let command = sys::display_command(prog, args);
    let out = std::fs::File::create(output)
        .map_err(|e| StackError::io(format!("create {}", output.display()), e))?;
    let err = out
        .try_clone()
        .map_err(|e| StackError::io(format!("open {}", output.display()), e))?;
    let started = Instant::now();
    let child = std::process::Command::new(prog)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| StackError::Command(format!("{command}: {e}")))?;
    let pid = child.id() as i32;
    crate::stack::child::wait_or_stop(pid, stop);
    let (status, usage) =
        reap(pid).map_err(|e| StackError::Command(format!("{command}: wait: {e}")))?;
    // `child` is reaped by hand above; dropping it does not wait again.
    drop(child);
    let wall_s = started.elapsed().as_secs_f64();
    if stop.load(Ordering::Relaxed) {
        return Err(StackError::Interrupted);
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let status = std::process::ExitStatus::from_raw(status);
    Ok(CheckerRun {
        command,
        exit: status.code(),
        signal: status.signal(),
        wall_s,
        user_s: secs(usage.ru_utime),
        sys_s: secs(usage.ru_stime),
        peak_rss_bytes: usage.ru_maxrss.max(0) as u64 * 1024,
        output: output.to_path_buf(),
    })
}

/// Reaps `pid`: its wait status and its resource usage.
fn reap(pid: i32) -> std::io::Result<(i32, libc::rusage)> {
    let mut status = 0;
    // SAFETY: rusage is plain old data; wait4 fills it for the child it reaps.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: valid pointers to a status word and an rusage, for our own child.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            return Ok((status, usage));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// One e2fsck pass as `-t -t` reports it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassTime {
    /// `1` .. `5`.
    pub pass: String,
    pub real_s: f64,
    pub user_s: f64,
    pub sys_s: f64,
    /// MB read during the pass.
    pub read_mb: Option<f64>,
}

/// The per-pass timings in e2fsck `-t -t` output (`Pass 1: Memory used: ..., time: r/u/s` and
/// `Pass 1: I/O read: 1MB, ...`).
pub fn e2fsck_passes(output: &str) -> Vec<PassTime> {
    let mut passes: Vec<PassTime> = Vec::new();
    for line in output.lines() {
        let Some(rest) = line.strip_prefix("Pass ") else {
            continue;
        };
        let Some((pass, what)) = rest.split_once(": ") else {
            continue;
        };
        if let Some(times) = what.split("time:").nth(1) {
            let t: Vec<f64> = times
                .split('/')
                .filter_map(|x| x.trim().parse().ok())
                .collect();
            if let [real_s, user_s, sys_s] = t[..] {
                passes.push(PassTime {
                    pass: pass.to_string(),
                    real_s,
                    user_s,
                    sys_s,
                    read_mb: None,
                });
            }
        } else if let Some(io) = what.strip_prefix("I/O read: ") {
            let mb = io
                .split("MB")
                .next()
                .and_then(|x| x.trim().parse::<f64>().ok());
            if let Some(p) = passes.iter_mut().rev().find(|p| p.pass == pass) {
                p.read_mb = mb;
            }
        }
    }
    passes
}

#[cfg(test)]
mod tests {
    use super::*;

    const E2FSCK: &str = "\
Pass 1: Checking inodes, blocks, and sizes
Pass 1: Memory used: 132k/0k (38k/95k), time:  1.50/ 0.25/ 0.10
Pass 1: I/O read: 12MB, write: 0MB, rate: 2824.86MB/s
Pass 2: Checking directory structure
Pass 2: Memory used: 132k/0k (41k/92k), time:  0.75/ 0.05/ 0.02
Pass 2: I/O read: 3MB, write: 0MB, rate: 29411.76MB/s
Peak memory: Memory used: 132k/0k (41k/92k), time:  0.00/ 0.00/ 0.00
";

    #[test]
    fn parses_e2fsck_pass_timings() {
        let p = e2fsck_passes(E2FSCK);
        assert_eq!(p.len(), 2);
        assert_eq!(
            p[0],
            PassTime {
                pass: "1".into(),
                real_s: 1.5,
                user_s: 0.25,
                sys_s: 0.1,
                read_mb: Some(12.0)
            }
        );
        assert_eq!(p[1].read_mb, Some(3.0));
        assert!(e2fsck_passes("garbage\nPass x\n").is_empty());
    }

    #[test]
    fn checkers_say_their_version() {
        if sys::have("e2fsck") {
            assert!(version("ext4").unwrap().starts_with("e2fsck"));
        }
        if sys::have("btrfs") {
            assert!(version("btrfs").unwrap().contains("btrfs-progs"));
        }
        assert_eq!(version("zfs"), None);
    }

    #[test]
    fn commands_are_read_only_argument_vectors() {
        let dev = Path::new("/dev/loop7");
        if let Ok((prog, args)) = command("ext4", dev, &[]) {
            assert_eq!(prog, "e2fsck");
            assert_eq!(args, ["-f", "-n", "-t", "-t", "/dev/loop7"]);
        }
        if let Ok((prog, args)) = command("xfs", dev, &["-o".into(), "ag_stride=8".into()]) {
            assert_eq!(prog, "xfs_repair");
            assert_eq!(args, ["-n", "-o", "ag_stride=8", "/dev/loop7"]);
        }
        assert!(matches!(
            command("vfat", dev, &[]),
            Err(StackError::Invalid(_))
        ));
    }

    #[test]
    fn a_run_is_timed_with_its_memory_and_exit() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.txt");
        // A program that allocates ~32 MiB and exits 4, like a checker that found something.
        let args = sys::args(&[
            "-c",
            "x=$(head -c 33554432 /dev/zero | tr '\\\\0' a); echo found; exit 4",
        ]);
        let r = run("sh", &args, &out, &AtomicBool::new(false)).unwrap();
        assert_eq!(r.exit, Some(4));
        assert_eq!(r.signal, None);
        assert!(r.wall_s > 0.0);
        assert!(r.peak_rss_bytes > 1 << 20, "{r:?}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "found\n");
    }
}
