//! The raw layouts, I/O straight to a block device without a filesystem: `regions` (consecutive
//! offset ranges of the device, in stream order from 1 MiB) and `partitions` (a GPT with one
//! partition per stream, in stream order).

use super::actions::Actions;
use super::{sys, LayoutKind, StackError};
use crate::engine::{Placement, Plan};
use std::path::{Path, PathBuf};

const MIB: u64 = 1 << 20;

fn round_mib(x: u64) -> u64 {
    x.div_ceil(MIB) * MIB
}

/// Places `plan`'s streams on the block device `dev` with the raw layout `kind`.
pub fn place(
    dev: &Path,
    plan: &Plan,
    kind: LayoutKind,
    actions: &mut Actions,
) -> Result<Vec<Placement>, StackError> {
    match kind {
        LayoutKind::Partitions => partitions(dev, plan, actions),
        _ => regions(dev, plan, actions),
    }
}

/// Consecutive regions of `dev` in stream order, from offset 1 MiB.
fn regions(dev: &Path, plan: &Plan, actions: &mut Actions) -> Result<Vec<Placement>, StackError> {
    let mut off = MIB;
    let mut v = Vec::new();
    for s in &plan.streams {
        v.push(Placement {
            path: dev.to_path_buf(),
            offset: off,
            len: s.region_len,
        });
        off += round_mib(s.region_len);
    }
    check_fits(dev, off, actions.dry_run)?;
    actions.note(format!(
        "regions of {} in stream order from offset 1MiB",
        dev.display()
    ));
    Ok(v)
}

/// A GPT on `dev` with one partition per stream, in stream order.
fn partitions(
    dev: &Path,
    plan: &Plan,
    actions: &mut Actions,
) -> Result<Vec<Placement>, StackError> {
    let mut script = String::from("label: gpt\n");
    let mut total = 2 * MIB;
    for s in &plan.streams {
        script.push_str(&format!(
            "size={}, name={}\n",
            round_mib(s.region_len) / 512,
            s.name
        ));
        total += round_mib(s.region_len);
    }
    check_fits(dev, total + MIB, actions.dry_run)?;
    let disk = dev.display().to_string();
    actions.run_with_input(
        "sfdisk",
        &sys::args(&["--quiet", "--wipe", "always", &disk]),
        &script,
    )?;
    let parts: Vec<PathBuf> = (1..=plan.streams.len())
        .map(|i| partition_path(dev, i))
        .collect();
    if !actions.dry_run {
        wait_for_partitions(dev, &parts, actions)?;
    }
    Ok(parts
        .into_iter()
        .zip(&plan.streams)
        .map(|(path, s)| Placement {
            path,
            offset: 0,
            len: s.region_len,
        })
        .collect())
}

/// Waits for the partitions sfdisk made to appear. Some kernels ignore the re-read sfdisk asks
/// for on loop devices; then they are added one by one (BLKPG) instead.
fn wait_for_partitions(
    dev: &Path,
    parts: &[PathBuf],
    actions: &mut Actions,
) -> Result<(), StackError> {
    if wait_for(parts, 1) {
        return Ok(());
    }
    actions.run(
        "partx",
        &sys::args(&["--update", &dev.display().to_string()]),
    )?;
    if !wait_for(parts, 10) {
        return Err(StackError::Command(format!(
            "partitions of {} did not appear",
            dev.display()
        )));
    }
    Ok(())
}

/// Waits up to `secs` seconds for every path to exist.
fn wait_for(paths: &[PathBuf], secs: u64) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !paths.iter().all(|p| p.exists()) {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    true
}

/// The path of partition `n` (1-based) of `disk_path`.
pub fn partition_path(disk_path: &Path, n: usize) -> PathBuf {
    let s = disk_path.display().to_string();
    if s.ends_with(|c: char| c.is_ascii_digit()) {
        PathBuf::from(format!("{s}p{n}"))
    } else {
        PathBuf::from(format!("{s}{n}"))
    }
}

/// Size in bytes of the block device at `path`, from sysfs.
pub fn device_size(path: &Path) -> Option<u64> {
    let name = path
        .canonicalize()
        .ok()?
        .file_name()?
        .to_string_lossy()
        .into_owned();
    sys::read_sysfs(Path::new(&format!("/sys/class/block/{name}/size")))?
        .parse::<u64>()
        .ok()
        .map(|s| s * 512)
}

fn check_fits(dev: &Path, needed: u64, dry: bool) -> Result<(), StackError> {
    if dry {
        return Ok(());
    }
    let size = device_size(dev).unwrap_or(0);
    if needed > size {
        return Err(StackError::NoSpace {
            path: dev.display().to_string(),
            needed,
            free: size,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_names() {
        assert_eq!(
            partition_path(Path::new("/dev/loop3"), 2),
            PathBuf::from("/dev/loop3p2")
        );
        assert_eq!(
            partition_path(Path::new("/dev/sdb"), 10),
            PathBuf::from("/dev/sdb10")
        );
        assert_eq!(
            partition_path(Path::new("/dev/nvme0n1"), 1),
            PathBuf::from("/dev/nvme0n1p1")
        );
    }
}
