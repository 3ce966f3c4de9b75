//! Building what goes between a stack's devices and its filesystem: an MD array of them, or a
//! ZFS pool (which is its filesystem too). Each is written to the ledger before it is made —
//! the pool before its mount — so the ledger's reverse order unmounts the filesystem before it
//! stops the array or destroys the pool.

use crate::stack::actions::Actions;
use crate::stack::fs::Mounted;
use crate::stack::ledger::Ledger;
use crate::stack::release::resource::Resource;
use crate::stack::{md, sys, zfs, StackError};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};

fn record(ledger: &mut Ledger, r: Resource) -> Result<usize, StackError> {
    ledger
        .record(r)
        .map_err(|e| StackError::io("write the ledger", e))
}

/// Builds the array `spec` of `members`, in the ledger before it exists; its device and what
/// was done, for the stack as built.
pub fn md_array(
    spec: &md::MdSpec,
    members: &[PathBuf],
    ledger: &mut Ledger,
    actions: &mut Actions,
) -> Result<(PathBuf, Json), StackError> {
    let dev = md::free_device();
    let array = Resource::MdArray {
        device: dev.clone(),
        members: members.to_vec(),
    };
    record(ledger, array)?;
    let args = md::create_args(&dev, spec, members);
    actions.run("mdadm", &args)?;
    let built = json!({
        "array": dev,
        "level": spec.level,
        "members": members,
        "chunk_bytes": spec.chunk,
        "layout": spec.layout,
        "assume_clean": true,
        "command": sys::display_command("mdadm", &args),
        "mdstat": if actions.dry_run { None } else { std::fs::read_to_string("/proc/mdstat").ok() },
    });
    Ok((dev, built))
}

/// Creates the pool over `devices` mounted at `work`/mnt, in the ledger first (the pool, then
/// its mount, so its filesystem is unmounted before it is destroyed).
pub fn zfs_pool(
    layout: &str,
    devices: &[PathBuf],
    log: Option<&Path>,
    extra: &[String],
    work: &Path,
    ledger: &mut Ledger,
    actions: &mut Actions,
) -> Result<(Mounted, Json), StackError> {
    let pool = zfs::pool_name();
    let mp = work.join("mnt");
    record(ledger, Resource::ZfsPool { name: pool.clone() })?;
    record(ledger, Resource::Mount { target: mp.clone() })?;
    let args = zfs::create_args(&pool, &mp, layout, devices, log, extra);
    actions.run("zpool", &args)?;
    let set = zfs::compression_off_args(&pool);
    actions.run("zfs", &set)?;
    let built = json!({
        "pool": pool,
        "layout": layout,
        "command": sys::display_command("zpool", &args),
        "properties": sys::display_command("zfs", &set),
        "version": if actions.dry_run { String::new() } else { crate::stack::fs::mkfs_version("zfs") },
    });
    let mounted = Mounted {
        fs: "zfs".into(),
        device: PathBuf::from(&pool),
        mountpoint: mp,
        program: "zfs".into(),
        args: sys::args(&["mount", &pool]),
    };
    Ok((mounted, built))
}
