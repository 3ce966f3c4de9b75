//! Where a stack's emulated images go when another run's image tmpfs is mounted: the room that
//! tmpfs may still fill is not available to this run (root: it mounts a tmpfs).

mod common;

use common::*;
use iotrial::stack::actions::Actions;
use iotrial::stack::build::memimage;
use iotrial::stack::ledger::Ledger;
use std::path::Path;
use std::process::Command;

fn mount_images(dir: &Path, size: &str) -> Mounted {
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0700")])
        .arg("iotrial-images")
        .arg(dir)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mount tmpfs at {}", dir.display());
    Mounted::adopt(dir)
}

#[test]
fn another_runs_image_tmpfs_keeps_its_room_from_this_run() {
    if !ready(
        "another_runs_image_tmpfs_keeps_its_room_from_this_run",
        &[Need::Root, Need::Tool("mount")],
    ) {
        return;
    }
    let other = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let mut ledger = Ledger::detached();
    let mut actions = Actions::new(true);
    let alone = memimage::place(1 << 30, 1 << 30, work.path(), &mut ledger, &mut actions).unwrap();
    if !alone.in_memory {
        skip(
            "another_runs_image_tmpfs_keeps_its_room_from_this_run",
            "under 1.4 GiB of memory available: a 1 GiB image is on disk even alone",
        );
        return;
    }
    // A limit, not memory taken: an empty tmpfs of 4 TiB claims nothing yet.
    let m = mount_images(other.path(), "4T");
    assert!(memimage::promised() >= 4 << 40, "{}", memimage::promised());
    let p = memimage::place(1 << 30, 1 << 30, work.path(), &mut ledger, &mut actions).unwrap();
    assert!(!p.in_memory, "{p:?}");
    let why = p.warning.unwrap();
    assert!(
        why.contains("image tmpfs of other runs may still fill"),
        "{why}"
    );
    m.unmount().unwrap();
    // Other tests' image tmpfs may be mounted meanwhile, none anywhere near 4 TiB.
    assert!(memimage::promised() < 4 << 40, "{}", memimage::promised());
}
