//! The unmount phase's patience: a filesystem another program uses for a moment (a directory
//! listing, a file open briefly) is unmounted once it is released, and one that stays busy is
//! refused with the reason, still mounted, never detached lazily. On a tmpfs, so it needs only
//! root.

mod common;

use common::need::{ready, Need};
use iotrial::stack::sys::unmount_when_free;
use rustix::mount::{mount, unmount, MountFlags, UnmountFlags};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A tmpfs mounted in a temporary directory, detached whatever happens to the test.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn new() -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        mount(
            "tmpfs",
            dir.path(),
            "tmpfs",
            MountFlags::empty(),
            c"size=1m",
        )
        .unwrap();
        Tmpfs { dir }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = unmount(self.dir.path(), UnmountFlags::DETACH);
    }
}

fn mounted(p: &Path) -> bool {
    iotrial::mountinfo::mount_at(p).is_some()
}

#[test]
fn a_filesystem_released_while_the_unmount_waits_is_unmounted() {
    if !ready(
        "a_filesystem_released_while_the_unmount_waits_is_unmounted",
        &[Need::Root],
    ) {
        return;
    }
    let fs = Tmpfs::new();
    let mut held = Some(std::fs::File::open(fs.path()).unwrap());
    let mut refusals = 0;
    let mut release = || {
        refusals += 1;
        drop(held.take());
    };
    unmount_when_free(&fs.path(), Duration::from_secs(60), &mut release).unwrap();
    assert_eq!(refusals, 1, "the busy mount was reported once");
    assert!(!mounted(&fs.path()));
}

#[test]
fn a_filesystem_that_stays_busy_is_refused_and_stays_mounted() {
    if !ready(
        "a_filesystem_that_stays_busy_is_refused_and_stays_mounted",
        &[Need::Root],
    ) {
        return;
    }
    let fs = Tmpfs::new();
    let _held = std::fs::File::open(fs.path()).unwrap();
    let mut refusals = 0;
    let e = unmount_when_free(&fs.path(), Duration::from_millis(100), &mut || {
        refusals += 1
    })
    .unwrap_err();
    assert!(e.contains("still busy"), "{e}");
    assert_eq!(refusals, 1);
    assert!(
        mounted(&fs.path()),
        "a busy filesystem is not detached lazily"
    );
}
