//! A cap on the page cache's dirty data for the stack's own writes: the writeback device (bdi)
//! that holds them gets `strict_limit` and `max_bytes`, so buffered writers are throttled to
//! what the stack writes back once that much is dirty, whatever the host's memory (a host's
//! default, a fifth of its memory, takes a minute of a 100 MB/s disk to drain). Only devices
//! the stack made are touched: its filesystem's bdi, or its raw devices'; the values before are
//! in the ledger and written back when it is released. In iotrial's own guest, whose kernel
//! may lack per-device limits, the guest's whole page cache is capped instead.

use crate::stack::actions::Actions;
use crate::stack::fs::Mounted;
use crate::stack::ledger::Ledger;
use crate::stack::release::resource::Resource;
use crate::stack::StackError;
use serde_json::{json, Value as Json};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// What a stack's writes go through: its filesystem, or its raw devices.
pub struct Stack<'a> {
    pub zfs: bool,
    pub mounted: Option<&'a Mounted>,
    /// The devices the filesystem or the raw layout is on.
    pub volume: &'a [PathBuf],
}

/// Caps the dirty page cache of `stack`'s writeback devices at `bytes`; what was done, for
/// the stack as built, or `None` (noted in `warnings`) where it cannot be.
pub fn cap(
    stack: &Stack,
    bytes: u64,
    ledger: &mut Ledger,
    actions: &mut Actions,
    warnings: &mut Vec<String>,
) -> Result<Option<Json>, StackError> {
    if stack.zfs {
        warnings.push("dirty_limit does not apply to ZFS, which buffers writes in its own ARC and transaction groups".into());
        return Ok(None);
    }
    if actions.dry_run {
        actions.note(format!("cap the dirty page cache of the stack's writeback devices at {bytes} bytes (strict_limit, max_bytes)"));
        return Ok(None);
    }
    let mut bdis: Vec<PathBuf> = match stack.mounted {
        Some(m) => of_filesystem(&m.mountpoint, &stack.volume[0])
            .into_iter()
            .collect(),
        None => stack
            .volume
            .iter()
            .filter_map(|d| of_block_device(d))
            .collect(),
    };
    bdis.dedup();
    if bdis.is_empty() {
        warnings.push("dirty_limit: found no writeback device of the stack's own to limit; the host's limits apply".into());
    }
    if let Some(b) = bdis.iter().find(|b| !can_limit(b)) {
        if WHOLE_MACHINE.load(Ordering::Relaxed) {
            limit_machine(bytes, ledger, actions)?;
            return Ok(Some(json!({"bytes": bytes, "whole_machine": true})));
        }
        warnings.push(format!(
            "dirty_limit: this kernel has no per-device strict_limit and max_bytes ({} lacks them; they came with Linux 6.2), so the host's dirty limits apply and a buffered run may take longer to settle",
            b.display()
        ));
        return Ok(None);
    }
    for b in &bdis {
        limit(b, bytes, ledger, actions)?;
    }
    Ok(Some(json!({"bytes": bytes, "bdi": bdis})))
}

/// Set in iotrial's own guest, which runs nothing but its trial: where the kernel has no
/// per-device limit (Debian's 6.1 guest kernel), the machine's own dirty limits are set instead.
static WHOLE_MACHINE: AtomicBool = AtomicBool::new(false);

/// Lets [`cap`] set the machine's dirty limits where the kernel has no per-device ones: only
/// for a machine that runs nothing but the trial (iotrial's guest).
pub fn allow_whole_machine() {
    WHOLE_MACHINE.store(true, Ordering::Relaxed);
}

/// Caps the machine's dirty page cache at `bytes` (writeback starting at half of it): the
/// ratios before are recorded in the ledger and written back, which also clears the byte
/// limits.
fn limit_machine(bytes: u64, ledger: &mut Ledger, actions: &mut Actions) -> Result<(), StackError> {
    let vm = Path::new("/proc/sys/vm");
    let changes = [
        ("dirty_ratio", "dirty_bytes", bytes),
        (
            "dirty_background_ratio",
            "dirty_background_bytes",
            bytes / 2,
        ),
    ];
    for (kept, written, value) in changes {
        let path = vm.join(kept);
        let previous = std::fs::read_to_string(&path)
            .map_err(|e| StackError::io(format!("read {}", path.display()), e))?
            .trim()
            .to_string();
        ledger
            .record(Resource::Sysfs { path, previous })
            .map_err(|e| StackError::io("write the ledger", e))?;
        actions.write_sysfs(&vm.join(written), &value.to_string())?;
    }
    Ok(())
}

/// Whether the kernel lets `bdi` have a strict limit in bytes of its own.
fn can_limit(bdi: &Path) -> bool {
    ["strict_limit", "max_bytes", "max_ratio_fine"]
        .iter()
        .all(|a| bdi.join(a).exists())
}

/// The bdi directory of device number `dev`, when the kernel has one by that number.
fn bdi_of_dev(dev: u64) -> Option<PathBuf> {
    let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    let p = PathBuf::from(format!("/sys/class/bdi/{major}:{minor}"));
    p.exists().then_some(p)
}

/// The bdi a btrfs filesystem on `member` (a block device path) writes back through.
fn btrfs_bdi(member: &Path) -> Option<PathBuf> {
    let name = member.file_name()?.to_string_lossy().into_owned();
    std::fs::read_dir("/sys/fs/btrfs")
        .ok()?
        .flatten()
        .find(|fs| fs.path().join("devices").join(&name).exists())
        .and_then(|fs| fs.path().join("bdi").canonicalize().ok())
}

/// The bdi holding the dirty data of a filesystem mounted at `mp` over `first` device.
pub fn of_filesystem(mp: &Path, first: &Path) -> Option<PathBuf> {
    let dev = std::fs::metadata(mp).ok()?.dev();
    bdi_of_dev(dev).or_else(|| btrfs_bdi(first))
}

/// The bdi of the block device at `path`.
pub fn of_block_device(path: &Path) -> Option<PathBuf> {
    bdi_of_dev(std::fs::metadata(path).ok()?.rdev())
}

/// Caps the dirty data of `bdi` at `bytes` (strict limit), each value recorded in the ledger
/// before it is changed. `max_bytes` is kept by the kernel as a share of the host's limit
/// (`max_ratio_fine`, millionths), which is what is recorded and restored: the bytes it stood
/// for move with the host's free memory.
pub fn limit(
    bdi: &Path,
    bytes: u64,
    ledger: &mut Ledger,
    actions: &mut Actions,
) -> Result<(), StackError> {
    let changes = [
        ("strict_limit", "strict_limit", "1".to_string()),
        ("max_ratio_fine", "max_bytes", bytes.to_string()),
    ];
    for (kept, written, value) in changes {
        let path = bdi.join(kept);
        let previous = std::fs::read_to_string(&path)
            .map_err(|e| StackError::io(format!("read {}", path.display()), e))?
            .trim()
            .to_string();
        ledger
            .record(Resource::Sysfs { path, previous })
            .map_err(|e| StackError::io("write the ledger", e))?;
        actions.write_sysfs(&bdi.join(written), &value)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_whole_machine_limit_records_the_ratios_and_writes_the_bytes() {
        let mut ledger = Ledger::detached();
        let mut actions = Actions::new(true);
        limit_machine(256 << 20, &mut ledger, &mut actions).unwrap();
        let log = actions.log.join("\n");
        assert!(
            log.contains("echo 268435456 > /proc/sys/vm/dirty_bytes"),
            "{log}"
        );
        assert!(
            log.contains("echo 134217728 > /proc/sys/vm/dirty_background_bytes"),
            "{log}"
        );
        // Writing the ratios back clears the byte limits, so the ratios are what is kept.
        let kept: Vec<Resource> = ledger.resources().to_vec();
        let paths: Vec<String> = kept
            .iter()
            .map(|r| match r {
                Resource::Sysfs { path, .. } => path.display().to_string(),
                other => format!("{other}"),
            })
            .collect();
        assert_eq!(
            paths,
            [
                "/proc/sys/vm/dirty_ratio",
                "/proc/sys/vm/dirty_background_ratio"
            ]
        );
        // A dry run changed nothing: nothing to write back.
        for r in &kept {
            ledger.forget(r);
        }
    }
}
