//! Action phases: what the stack does between a plan's stream phases. `sync` writes the stack's
//! dirty data out (syncfs of its filesystem, fsync of raw devices), `drop_caches` syncs, has the
//! stack's own filesystem write its journal home (freeze and thaw) and then drops the page cache, `unmount` and `mount` take the stack's own filesystem down and bring it
//! back with the options it was built with. `idle` needs the device servers and has a module of
//! its own ([`super::idle`]). `fsck` is part of the plan's vocabulary but comes with the
//! workload that needs it; until then it fails with [`StackError::ActionNotYet`].

use super::provision::Built;
use super::{sys, StackError};
use crate::engine::Action;
use std::path::{Path, PathBuf};

/// Does `action` on the built stack (`idle`: see [`super::idle::wait`]).
pub fn perform(action: Action, built: &Built) -> Result<(), StackError> {
    match action {
        Action::Sync => sync(built),
        Action::DropCaches => drop_caches(built),
        Action::Unmount => unmount(built),
        Action::Mount => mount(built),
        Action::Fsck => Err(StackError::ActionNotYet {
            action: action.name(),
            with: "the fsck workload (fill, unmount, check)",
        }),
        Action::Idle(_) => Err(StackError::Invalid(
            "the idle phase waits through stack::idle, with the device servers".into(),
        )),
    }
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
    let (dir, devices) = sync_targets(built);
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
fn own_filesystem(built: &Built, action: Action) -> Result<&super::fs::Mounted, StackError> {
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

/// Unmounts the stack's filesystem; refuses (rather than detaching lazily) when it is busy.
fn unmount(built: &Built) -> Result<(), StackError> {
    let m = own_filesystem(built, Action::Unmount)?;
    rustix::mount::unmount(&m.mountpoint, rustix::mount::UnmountFlags::empty())
        .map_err(|e| StackError::Command(format!("unmount {}: {e}", m.mountpoint.display())))
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

    #[test]
    fn fsck_fails_until_its_workload_comes() {
        let d = tempfile::tempdir().unwrap();
        let b = raw_stack(&d.path().join("x"));
        let e = perform(Action::Fsck, &b).unwrap_err();
        assert!(matches!(e, StackError::ActionNotYet { .. }), "{e}");
        assert_eq!(e.why(), Cause::Input);
        assert!(e.to_string().contains("fsck"), "{e}");
    }

    #[test]
    fn a_raw_stack_syncs_its_devices_and_has_nothing_to_unmount() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("dev");
        std::fs::write(&f, b"data").unwrap();
        let b = raw_stack(&f);
        perform(Action::Sync, &b).unwrap();
        for a in [Action::Unmount, Action::Mount] {
            let e = perform(a, &b).unwrap_err();
            assert_eq!(e.why(), Cause::Input, "{e}");
            assert!(e.to_string().contains("regions on image:size=1GiB"), "{e}");
        }
    }
}
