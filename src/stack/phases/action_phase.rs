//! Action phases: what the stack does between a plan's stream phases. `sync` writes the stack's
//! dirty data out (syncfs of its filesystem, fsync of raw devices), `drop_caches` syncs, has the
//! stack's own filesystem write its journal home (freeze and thaw) and then drops the page
//! cache, `unmount` and `mount` take the stack's own filesystem down and bring it back with the
//! options it was built with, `fsck` runs the filesystem's own checker read-only on the
//! unmounted filesystem ([`super::checker`]) and returns what it measured. `idle` needs the
//! device servers and has a module of its own ([`super::idle`]).

use crate::engine::Action;
use crate::stack::build::provision::Built;
use crate::stack::{phases::checker, sys, StackError};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// What an action phase needs besides the stack.
pub struct ActionCtx<'a> {
    /// The phase's name (names the checker's output file).
    pub phase: &'a str,
    /// Where files the action keeps are written (the checker's output).
    pub dir: &'a Path,
    /// The checker's extra arguments (the plan's).
    pub checker_args: &'a [String],
    /// Ctrl-C: ends a running checker.
    pub stop: &'a AtomicBool,
    /// Model time the stack's emulated device has had a request in service so far
    /// ([`super::idle::outstanding_ns`]); `None` on other devices.
    pub outstanding_ns: &'a dyn Fn() -> Option<u64>,
}

/// Does `action` on the built stack. Returns what the action measured, for result.json's
/// phase (the checker's run for `fsck`), if anything.
pub fn perform(action: Action, built: &Built, ctx: &ActionCtx) -> Result<Option<Json>, StackError> {
    let done = |r: Result<(), StackError>| r.map(|()| None);
    match action {
        Action::Sync => done(sync(built)),
        Action::DropCaches => done(drop_caches(built)),
        Action::Unmount => done(unmount(built)),
        Action::Mount => done(mount(built)),
        Action::Fsck => fsck(built, ctx).map(Some),
        Action::Idle(_) => Err(StackError::Invalid(
            "the idle phase waits through stack::idle, with the device servers".into(),
        )),
        Action::PowerCut(_) => Err(StackError::Invalid(
            "the powercut phase recovers the stack through stack::powercut".into(),
        )),
    }
}

/// The name of the file an fsck phase's checker output is kept in, in the trial's directory.
pub fn checker_output(phase: &str) -> String {
    format!("{phase}.checker.txt")
}

/// Runs the stack's filesystem checker, read-only, on its unmounted device: timed, with its
/// CPU and peak memory from wait4 and its output kept in `ctx.dir`. A non-zero exit is a
/// finding in what it returns (`exit`), not an error. For e2fsck, its per-pass times.
fn fsck(built: &Built, ctx: &ActionCtx) -> Result<Json, StackError> {
    let m = own_filesystem(built, Action::Fsck)?;
    if is_mounted(&m.mountpoint) {
        return Err(StackError::Invalid(format!(
            "the fsck phase checks an unmounted filesystem; {} is mounted (put an unmount phase before it)",
            m.mountpoint.display()
        )));
    }
    let mut extra: Vec<String> = Vec::new();
    if let Some(log) = external_log(&m.args).filter(|_| m.fs == "xfs") {
        extra.extend(["-l".to_string(), log]);
    }
    extra.extend(ctx.checker_args.iter().cloned());
    let (prog, args) = checker::command(&m.fs, &m.device, &extra)?;
    let output = ctx.dir.join(checker_output(ctx.phase));
    let before = reads_of(&m.device);
    let busy_before = (ctx.outstanding_ns)();
    let run = checker::run(&prog, &args, &output, ctx.stop)?;
    let busy = busy_before
        .zip((ctx.outstanding_ns)())
        .map(|(a, b)| b.saturating_sub(a) as f64 / 1e9);
    let read = before
        .zip(reads_of(&m.device))
        .map(|(a, b)| (b.0 - a.0, b.1 - a.1));
    let mut out = json!({
        "command": run.command,
        "exit": run.exit,
        "signal": run.signal,
        "wall_s": run.wall_s,
        "user_s": run.user_s,
        "sys_s": run.sys_s,
        "cpu_share": run.cpu_share(),
        "peak_rss_bytes": run.peak_rss_bytes,
        "output": checker_output(ctx.phase),
        "time_scale": built.time_scale,
        "read_requests": read.map(|r| r.0),
        "read_bytes": read.map(|r| r.1),
        "device_busy_s": busy,
    });
    if m.fs.starts_with("ext") {
        let text = std::fs::read_to_string(&output).unwrap_or_default();
        out["passes"] = json!(checker::e2fsck_passes(&text));
    }
    Ok(out)
}

/// Read requests completed and bytes read by block device `dev` so far (its
/// `/sys/class/block/NAME/stat`), when the kernel has them.
fn reads_of(dev: &Path) -> Option<(u64, u64)> {
    let real = std::fs::canonicalize(dev).ok()?;
    let name = real.file_name()?.to_str()?;
    let stat = std::fs::read_to_string(format!("/sys/class/block/{name}/stat")).ok()?;
    let f: Vec<u64> = stat
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    Some((*f.first()?, *f.get(2)? * 512))
}

/// Whether something is mounted at `mp` (its device differs from its parent's).
fn is_mounted(mp: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let (Ok(a), Some(Ok(b))) = (std::fs::metadata(mp), mp.parent().map(std::fs::metadata)) else {
        return false;
    };
    a.dev() != b.dev()
}

/// The external log device in `mount`'s arguments (`-o ...,logdev=/dev/loopN`).
fn external_log(mount_args: &[String]) -> Option<String> {
    mount_args
        .iter()
        .flat_map(|a| a.split(','))
        .find_map(|o| o.strip_prefix("logdev=").map(str::to_string))
}

/// Where the stack's data lives: its files' directory, or its raw devices.
fn sync_targets(built: &Built) -> (Option<PathBuf>, Vec<PathBuf>) {
    if let Some(f) = &built.files {
        return (Some(f.dir().to_path_buf()), Vec::new());
    }
    let mut devs: Vec<PathBuf> = built.placements.iter().map(|p| p.path.clone()).collect();
    devs.sort();
    devs.dedup();
    (None, devs)
}

/// syncfs of the filesystem holding the stack's files, or fsync of every raw device at once
/// (as the kernel's flushers write every device at once when the whole host syncs).
fn sync(built: &Built) -> Result<(), StackError> {
    // Once the stack's filesystem is unmounted, the unmount has written everything out.
    if built
        .mounted
        .as_ref()
        .is_some_and(|m| !is_mounted(&m.mountpoint))
    {
        return Ok(());
    }
    let (dir, devices) = sync_targets(built);
    // syncfs through the mount point: after a power cut the files' directory may be gone
    // (its creation never reached the disk), and the filesystem still has to be synced.
    let dir = match &built.mounted {
        Some(m) => dir.map(|_| m.mountpoint.clone()),
        None => dir,
    };
    if let Some(d) = dir {
        let f = std::fs::File::open(&d)
            .map_err(|e| StackError::io(format!("open {} to sync it", d.display()), e))?;
        return rustix::fs::syncfs(&f)
            .map_err(|e| StackError::io(format!("syncfs {}", d.display()), e.into()));
    }
    std::thread::scope(|s| {
        let each: Vec<_> = devices.iter().map(|d| s.spawn(|| fsync(d))).collect();
        // The scope joins every thread, also those after a failed one.
        each.into_iter()
            .try_for_each(|h| h.join().expect("an fsync thread does not panic"))
    })
}

fn fsync(dev: &Path) -> Result<(), StackError> {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(dev)
        .map_err(|e| StackError::io(format!("open {} to sync it", dev.display()), e))?;
    f.sync_all()
        .map_err(|e| StackError::io(format!("fsync {}", dev.display()), e))
}

/// `_IOWR('X', 119, int)` and `_IOWR('X', 120, int)`: freeze and thaw a filesystem.
const FIFREEZE: libc::c_ulong = 0xC004_5877;
const FITHAW: libc::c_ulong = 0xC004_5878;

/// Freezes and thaws the filesystem mounted at `mountpoint`: a journaling filesystem writes
/// its journal home (ext4 checkpoints it), so the metadata buffers the journal still pinned
/// after a sync become clean and unpinned, and a drop of the caches can drop them too.
/// Filesystems that cannot freeze are left as they are.
fn flush_journal(mountpoint: &Path) {
    use std::os::fd::AsRawFd;
    let Ok(dir) = std::fs::File::open(mountpoint) else {
        return;
    };
    // SAFETY: both ioctls take an int argument the kernel ignores; the descriptor is open.
    unsafe {
        if libc::ioctl(dir.as_raw_fd(), FIFREEZE as _, 0) == 0 {
            libc::ioctl(dir.as_raw_fd(), FITHAW as _, 0);
        }
    }
}

/// Syncs the stack (and flushes its filesystem's journal), then drops the page cache,
/// dentries and inodes of the whole host.
fn drop_caches(built: &Built) -> Result<(), StackError> {
    if !rustix::process::geteuid().is_root() {
        return Err(StackError::NeedsRoot(
            "the drop_caches phase writes /proc/sys/vm/drop_caches".into(),
        ));
    }
    sync(built)?;
    if let Some(m) = &built.mounted {
        flush_journal(&m.mountpoint);
    }
    std::fs::write("/proc/sys/vm/drop_caches", "3")
        .map_err(|e| StackError::io("write 3 to /proc/sys/vm/drop_caches", e))
}

/// The stack's own filesystem, or why a phase cannot unmount or mount it.
fn own_filesystem(built: &Built, action: Action) -> Result<&crate::stack::fs::Mounted, StackError> {
    built.mounted.as_ref().ok_or_else(|| {
        StackError::Invalid(format!(
            "the {} phase needs a filesystem the stack made; this stack's layout is {} on {}",
            action.name(),
            built.as_built["layout"].as_str().unwrap_or("files"),
            built.as_built["devices"][0]["spec"]
                .as_str()
                .or(built.as_built["devices"][0].as_str())
                .unwrap_or("its device")
        ))
    })
}

/// Unmounts the stack's filesystem, waiting a moment for another program's brief use of it to
/// end; refuses (rather than detaching lazily) when it stays busy.
fn unmount(built: &Built) -> Result<(), StackError> {
    let m = own_filesystem(built, Action::Unmount)?;
    let mut busy = || {
        eprintln!(
            "iotrial: {} is busy; waiting up to {} s for it to be released",
            m.mountpoint.display(),
            sys::UNMOUNT_PATIENCE.as_secs()
        )
    };
    sys::unmount_when_free(&m.mountpoint, sys::UNMOUNT_PATIENCE, &mut busy)
        .map_err(StackError::Command)
}

/// Mounts the stack's filesystem again, as it was built.
fn mount(built: &Built) -> Result<(), StackError> {
    let m = own_filesystem(built, Action::Mount)?;
    sys::run(&m.program, &m.args)
        .map(|_| ())
        .map_err(StackError::Command)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cause::{Cause, HasCause};
    use crate::engine::Placement;
    use serde_json::json;

    fn raw_stack(dev: &Path) -> Built {
        Built {
            placements: vec![Placement {
                path: dev.to_path_buf(),
                offset: 0,
                len: 4096,
            }],
            direct_ok: false,
            as_built: json!({"layout": "regions", "devices": [{"spec": "image:size=1GiB"}]}),
            warnings: vec![],
            files: None,
            mounted: None,
            time_scale: 1.0,
            devices: Default::default(),
        }
    }

    fn ctx<'a>(dir: &'a Path, stop: &'a AtomicBool) -> ActionCtx<'a> {
        ActionCtx {
            phase: "fsck",
            dir,
            checker_args: &[],
            stop,
            outstanding_ns: &|| None,
        }
    }

    #[test]
    fn fsck_needs_a_filesystem() {
        let d = tempfile::tempdir().unwrap();
        let b = raw_stack(&d.path().join("x"));
        let stop = AtomicBool::new(false);
        let e = perform(Action::Fsck, &b, &ctx(d.path(), &stop)).unwrap_err();
        assert_eq!(e.why(), Cause::Input, "{e}");
        assert!(
            e.to_string().contains("the fsck phase needs a filesystem"),
            "{e}"
        );
    }

    #[test]
    fn an_external_xfs_log_is_found_in_the_mount_options() {
        let args = sys::args(&["-t", "xfs", "-o", "noatime,logdev=/dev/loop9", "/dev/loop8"]);
        assert_eq!(external_log(&args).as_deref(), Some("/dev/loop9"));
        assert_eq!(external_log(&sys::args(&["-t", "ext4"])), None);
    }

    #[test]
    fn a_raw_stack_syncs_its_devices_and_has_nothing_to_unmount() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("dev");
        std::fs::write(&f, b"data").unwrap();
        let b = raw_stack(&f);
        let stop = AtomicBool::new(false);
        assert_eq!(
            perform(Action::Sync, &b, &ctx(d.path(), &stop)).unwrap(),
            None
        );
        for a in [Action::Unmount, Action::Mount] {
            let e = perform(a, &b, &ctx(d.path(), &stop)).unwrap_err();
            assert_eq!(e.why(), Cause::Input, "{e}");
            assert!(e.to_string().contains("regions on image:size=1GiB"), "{e}");
        }
    }
}
