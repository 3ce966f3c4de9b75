//! MD RAID under a stack: the stack's devices become the members of one array (`mdadm --create
//! ... --level=10 --assume-clean`, so no initial resync runs: the seed's array rebuilt all night
//! first), and the filesystem or the raw layout goes on the array. Here: the levels, the command
//! lines, whether this host can build one (the kernel's md driver, mdadm), and releasing one;
//! [`super::volume`] builds it, in the ledger first, and the ledger stops it after the
//! filesystem on it is unmounted.

use super::{sys, StackError};
use std::path::{Path, PathBuf};

/// RAID levels iotrial builds: (name, fewest members).
const LEVELS: &[(&str, usize)] = &[
    ("raid0", 2),
    ("raid1", 2),
    ("raid10", 2),
    ("raid5", 3),
    ("raid6", 4),
];

/// Checks a level's name and that `members` devices are enough for it.
pub fn check(level: &str, members: Option<usize>) -> Result<(), String> {
    let Some(&(_, least)) = LEVELS.iter().find(|(l, _)| *l == level) else {
        let known: Vec<&str> = LEVELS.iter().map(|l| l.0).collect();
        return Err(format!(
            "unknown MD level '{level}'; known: {}",
            known.join(", ")
        ));
    };
    match members {
        Some(n) if n < least => Err(format!("{level} needs at least {least} devices; {n} given")),
        _ => Ok(()),
    }
}

/// How many members' worth of sequential write bandwidth the data gets: every byte goes to
/// every mirror, and parity takes one or two members' worth.
pub fn data_devices(level: &str, members: usize) -> f64 {
    let n = members as f64;
    match level {
        "raid0" => n,
        "raid1" => 1.0,
        "raid10" => n / 2.0,
        "raid5" => n - 1.0,
        "raid6" => n - 2.0,
        _ => n,
    }
}

/// Whether this host can build MD arrays: the kernel's md driver and mdadm.
pub fn available() -> Result<(), StackError> {
    let driver = Path::new("/proc/mdstat").exists() || sys::kernel_module("md-mod");
    if !driver {
        return Err(StackError::Unavailable(
            "MD RAID is not available in this kernel (no md driver: /proc/mdstat is missing and there is no md-mod module), so this stack cannot be built here".into(),
        ));
    }
    if !sys::have("mdadm") {
        return Err(StackError::Unavailable(
            "MD RAID needs mdadm, which is not installed (scripts/install-deps.sh installs it)"
                .into(),
        ));
    }
    Ok(())
}

/// `mdadm --create` of `dev` at `level` over `members`, without an initial resync.
pub fn create_args(dev: &Path, level: &str, members: &[PathBuf]) -> Vec<String> {
    let mut a = sys::args(&["--create", &dev.display().to_string(), "--run", "--quiet"]);
    a.push("--metadata=1.2".into());
    a.push(format!("--level={}", level.trim_start_matches("raid")));
    a.push(format!("--raid-devices={}", members.len()));
    a.push("--assume-clean".into());
    a.extend(members.iter().map(|m| m.display().to_string()));
    a
}

/// `mdadm --stop` of `dev`.
pub fn stop_args(dev: &Path) -> Vec<String> {
    sys::args(&["--stop", &dev.display().to_string()])
}

/// `mdadm --zero-superblock` of `members`, so no member is assembled again by itself.
pub fn zero_args(members: &[PathBuf]) -> Vec<String> {
    let mut a = vec!["--zero-superblock".to_string()];
    a.extend(members.iter().map(|m| m.display().to_string()));
    a
}

/// A free array device: `/dev/md<N>` for the first N from 100 the kernel does not have.
pub fn free_device() -> PathBuf {
    let n = (100..)
        .find(|n| !Path::new(&format!("/sys/block/md{n}")).exists())
        .expect("a free md number");
    PathBuf::from(format!("/dev/md{n}"))
}

/// Stops the array `dev` and clears its members' superblocks; `Ok(false)` when there was no
/// such array.
pub fn release(dev: &Path, members: &[PathBuf]) -> Result<bool, String> {
    let name = dev.file_name().unwrap_or_default().to_string_lossy();
    if !Path::new(&format!("/sys/block/{name}")).exists() {
        return Ok(false);
    }
    sys::run("mdadm", &stop_args(dev))?;
    let present: Vec<PathBuf> = members.iter().filter(|m| m.exists()).cloned().collect();
    if !present.is_empty() {
        sys::run("mdadm", &zero_args(&present))?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(n: usize) -> Vec<PathBuf> {
        (0..n)
            .map(|i| PathBuf::from(format!("/dev/loop{i}")))
            .collect()
    }

    #[test]
    fn the_array_is_made_without_a_resync_and_stopped_by_name() {
        let a = create_args(Path::new("/dev/md100"), "raid10", &members(6));
        assert_eq!(
            sys::display_command("mdadm", &a),
            "mdadm --create /dev/md100 --run --quiet --metadata=1.2 --level=10 --raid-devices=6 --assume-clean /dev/loop0 /dev/loop1 /dev/loop2 /dev/loop3 /dev/loop4 /dev/loop5"
        );
        assert_eq!(stop_args(Path::new("/dev/md100")), ["--stop", "/dev/md100"]);
        assert_eq!(
            zero_args(&members(2)),
            ["--zero-superblock", "/dev/loop0", "/dev/loop1"]
        );
    }

    #[test]
    fn levels_are_checked_and_say_how_much_bandwidth_the_data_gets() {
        assert_eq!(check("raid10", Some(6)), Ok(()));
        assert!(check("raid5", Some(2)).unwrap_err().contains("at least 3"));
        assert!(check("raid9", None).unwrap_err().contains("known: raid0"));
        assert_eq!(data_devices("raid10", 6), 3.0);
        assert_eq!(data_devices("raid1", 2), 1.0);
        assert_eq!(data_devices("raid6", 6), 4.0);
    }

    #[test]
    fn a_missing_array_is_already_released() {
        let gone = Path::new("/dev/md-iotrial-test-none");
        assert_eq!(release(gone, &members(2)), Ok(false));
    }
}
