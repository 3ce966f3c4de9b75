//! Thin wrappers over the system: external tools run with an argument vector (never a shell),
//! loop devices, unmounting, FUSE connection abort, sysfs reads and writes.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A command line as text, for `--dry-run` and result.json (arguments quoted when needed).
pub fn display_command(program: &str, args: &[String]) -> String {
    let mut s = program.to_string();
    for a in args {
        s.push(' ');
        if a.is_empty() || a.contains(|c: char| c.is_whitespace() || "'\"$\\;&|<>()*?`".contains(c))
        {
            s.push('\'');
            s.push_str(&a.replace('\'', "'\\''"));
            s.push('\'');
        } else {
            s.push_str(a);
        }
    }
    s
}

/// Runs `program args...`; returns stdout, or an error with the command and its stderr.
pub fn run(program: &str, args: &[String]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("{}: {e}", display_command(program, args)))?;
    finished(program, args, out)
}

/// What `program args...` gave: its stdout when it succeeded, or an error with the command
/// and its stderr.
pub fn finished(
    program: &str,
    args: &[String],
    out: std::process::Output,
) -> Result<String, String> {
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "{} failed ({}): {}{}",
            display_command(program, args),
            out.status,
            err.trim(),
            hint(&err)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// What to do about a tool's failure that comes from elsewhere on the host. mkfs.btrfs, for
/// one, stats every mounted loop device's backing file, and a loop device over a FUSE mount
/// whose server died (as a killed run leaves it) answers ENOTCONN.
fn hint(stderr: &str) -> &'static str {
    if stderr.contains("Transport endpoint is not connected") {
        " (a FUSE mount on this host has lost its server, as a killed run leaves it: \
         `iotrial cleanup` releases a killed run's, `findmnt -t fuse.iotrial` lists them)"
    } else {
        ""
    }
}

/// Shorthand for string arguments.
pub fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// Whether `program` is on PATH (or an absolute path that exists).
pub fn have(program: &str) -> bool {
    if program.contains('/') {
        return Path::new(program).exists();
    }
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
        || ["/usr/sbin", "/sbin"]
            .iter()
            .any(|d| Path::new(d).join(program).is_file())
}

/// Whether the running kernel could load module `name` (listed in its modules.dep).
pub fn kernel_module(name: &str) -> bool {
    let rel = rustix::system::uname()
        .release()
        .to_string_lossy()
        .into_owned();
    std::fs::read_to_string(format!("/lib/modules/{rel}/modules.dep"))
        .map(|t| {
            t.lines().any(|l| {
                l.split(':').next().is_some_and(|m| {
                    m.ends_with(&format!("/{name}.ko")) || m.contains(&format!("/{name}.ko."))
                })
            })
        })
        .unwrap_or(false)
}

/// Attaches `file` to a free loop device with direct I/O on (and partition scanning when
/// `partscan`); returns the device path.
pub fn attach_loop(file: &Path, partscan: bool) -> Result<PathBuf, String> {
    let mut a = args(&["--find", "--show", "--direct-io=on"]);
    if partscan {
        a.push("--partscan".into());
    }
    a.push(file.display().to_string());
    let out = run("losetup", &a)?;
    Ok(PathBuf::from(out.trim()))
}

/// Detaches every loop device backed by `backing`; returns the devices detached (none when
/// nothing was attached to it).
pub fn detach_loops_of(backing: &Path) -> Result<Vec<String>, String> {
    if !backing.exists() {
        // The kernel keeps the name of a deleted backing file; look for it with " (deleted)".
        return detach_loops_matching(|b| {
            b == backing || b == Path::new(&format!("{} (deleted)", backing.display()))
        });
    }
    detach_loops_matching(|b| b == backing)
}

fn detach_loops_matching(matches: impl Fn(&Path) -> bool) -> Result<Vec<String>, String> {
    let Ok(rd) = std::fs::read_dir("/sys/block") else {
        return Ok(Vec::new());
    };
    let mut errors = Vec::new();
    let mut detached = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("loop") {
            continue;
        }
        let Ok(b) = std::fs::read_to_string(e.path().join("loop/backing_file")) else {
            continue;
        };
        if matches(Path::new(b.trim_end_matches('\n'))) {
            let dev = format!("/dev/{name}");
            match run("losetup", &[String::from("-d"), dev.clone()]) {
                Ok(_) => detached.push(dev),
                Err(err) => errors.push(err),
            }
        }
    }
    if errors.is_empty() {
        Ok(detached)
    } else {
        Err(errors.join("; "))
    }
}

/// How [`unmount`] went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unmounted {
    Clean,
    /// Busy: detached from the tree now, released by the kernel when its last user goes.
    Lazily,
    /// Nothing was mounted there.
    NotMounted,
}

/// Unmounts everything mounted at `target` (stacked mounts too); lazily when still busy after
/// a short wait. A mount that is already gone is [`Unmounted::NotMounted`], not an error.
pub fn unmount(target: &Path) -> Result<Unmounted, String> {
    use rustix::io::Errno;
    use rustix::mount::{unmount as um, UnmountFlags};
    let mut result = Unmounted::NotMounted;
    while crate::mountinfo::mount_at(target).is_some() {
        let mut r = um(target, UnmountFlags::empty());
        if r == Err(Errno::BUSY) {
            std::thread::sleep(std::time::Duration::from_millis(200));
            r = um(target, UnmountFlags::empty());
            if r == Err(Errno::BUSY) {
                r = um(target, UnmountFlags::DETACH);
                if r.is_ok() {
                    result = Unmounted::Lazily;
                    continue;
                }
            }
        }
        match r {
            Ok(()) if result == Unmounted::NotMounted => result = Unmounted::Clean,
            Ok(()) => {}
            // Gone between the look and the unmount.
            Err(Errno::INVAL) | Err(Errno::NOENT) => break,
            Err(e) => return Err(format!("unmount {}: {e}", target.display())),
        }
    }
    Ok(result)
}

/// How long [`unmount_when_free`] lets a busy filesystem be released: a directory listing or
/// a file another program has open for a moment (a file manager, updatedb, a shell's tab
/// completion) ends well within it; a shell whose working directory is in the mount does not.
pub const UNMOUNT_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

/// Unmounts the filesystem at `target`, never lazily: while it is busy, retries for up to
/// `patience` ([`crate::emu::unmount_waiting`]), calling `on_busy` once at the first refusal.
/// A filesystem still busy then is an error that says so (a lazy detach would leave its
/// device in use, and a checker must not run on it), as is nothing mounted there.
pub fn unmount_when_free(
    target: &Path,
    patience: std::time::Duration,
    on_busy: &mut dyn FnMut(),
) -> Result<(), String> {
    if crate::mountinfo::mount_at(target).is_none() {
        return Err(format!(
            "unmount {}: nothing is mounted there",
            target.display()
        ));
    }
    crate::emu::unmount_waiting(target, patience, on_busy).map_err(|e| match e {
        rustix::io::Errno::BUSY => format!(
            "unmount {}: still busy after {:.1} s: a process has a file or its working \
             directory in it",
            target.display(),
            patience.as_secs_f64()
        ),
        e => format!("unmount {}: {e}", target.display()),
    })
}

/// Reads a sysfs attribute, trimmed.
pub fn read_sysfs(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// What caps the block requests of an emulated device's loop device at the largest request
/// its server takes at once, so each reaches the model whole (and the server's request log
/// matches a block trace request for request): its `max_sectors_kb` attribute, the value it
/// has now (`None`: unreadable) and the cap.
pub struct RequestCap {
    pub attr: PathBuf,
    pub now: Option<String>,
    pub cap: String,
}

/// The [`RequestCap`] of loop device `disk` (kernel name), or `None` when its requests are
/// already within the cap.
pub fn request_cap(disk: &str) -> Option<RequestCap> {
    let attr = PathBuf::from(format!("/sys/block/{disk}/queue/max_sectors_kb"));
    let cap = u64::from(crate::emu::MAX_IO / 1024);
    let now = read_sysfs(&attr);
    if now
        .as_deref()
        .is_some_and(|v| v.parse::<u64>().is_ok_and(|v| v <= cap))
    {
        return None;
    }
    Some(RequestCap {
        attr,
        now,
        cap: cap.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_fuse_mount_is_named_with_what_releases_it() {
        let e =
            "ERROR: cannot check mount status of /dev/loop1: Transport endpoint is not connected";
        assert!(hint(e).contains("iotrial cleanup"));
        assert_eq!(hint("ERROR: /dev/loop1 is mounted"), "");
    }
}
