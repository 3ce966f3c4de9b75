//! ZFS as a stack's filesystem: one pool over the stack's devices laid out as its `zpool` key
//! says (`mirror`: pairs, striped, as seed 001's three mirror pairs; `stripe`; `raidz`), an
//! external log device as the pool's `log` vdev, compression off (seed 001: "compression was
//! off because that would have turned it into a CPU test"), mounted in the stack's work
//! directory. Here: the layouts, the command lines, whether this host can build one (the
//! kernel's zfs module, zpool and zfs), and releasing one; [`crate::stack::build::volume`] creates it, in the
//! ledger first, and the ledger destroys it after its filesystem is unmounted.

use crate::stack::{sys, StackError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Pool layouts iotrial builds: (name, fewest devices).
const LAYOUTS: &[(&str, usize)] = &[("stripe", 1), ("mirror", 2), ("raidz", 3)];

/// Checks a pool layout's name, and that `devices` suit it (mirror: pairs).
pub fn check(layout: &str, devices: Option<usize>) -> Result<(), String> {
    let Some(&(_, least)) = LAYOUTS.iter().find(|(l, _)| *l == layout) else {
        let known: Vec<&str> = LAYOUTS.iter().map(|l| l.0).collect();
        return Err(format!(
            "unknown zpool layout '{layout}'; known: {}",
            known.join(", ")
        ));
    };
    match devices {
        Some(n) if n < least => Err(format!(
            "{layout} needs at least {least} devices; {n} given"
        )),
        Some(n) if layout == "mirror" && n % 2 != 0 => Err(format!(
            "mirror makes mirror pairs and needs an even number of devices; {n} given"
        )),
        _ => Ok(()),
    }
}

/// How many devices' worth of sequential write bandwidth the data gets.
pub fn data_devices(layout: &str, devices: usize) -> f64 {
    let n = devices as f64;
    match layout {
        "mirror" => n / 2.0,
        "raidz" => n - 1.0,
        _ => n,
    }
}

/// Whether this host can build ZFS pools: the kernel's zfs module, zpool and zfs.
pub fn available() -> Result<(), StackError> {
    if !(Path::new("/sys/module/zfs").exists() || sys::kernel_module("zfs")) {
        return Err(StackError::Unavailable(
            "ZFS is not available in this kernel (no zfs module: /sys/module/zfs is missing and there is no zfs.ko), so this stack cannot be built here".into(),
        ));
    }
    for tool in ["zpool", "zfs"] {
        if !sys::have(tool) {
            return Err(StackError::Unavailable(format!(
                "ZFS needs {tool}, which is not installed (zfsutils-linux)"
            )));
        }
    }
    Ok(())
}

/// A fresh pool name: `iotrial<pid>x<n>`.
pub fn pool_name() -> String {
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    format!("iotrial{}x{n}", std::process::id())
}

/// The vdevs of `layout` over `devices`: `mirror a b mirror c d ...`, `raidz a b c`, or the
/// devices themselves (striped).
fn vdevs(layout: &str, devices: &[PathBuf]) -> Vec<String> {
    let names = devices.iter().map(|d| d.display().to_string());
    match layout {
        "mirror" => devices
            .chunks(2)
            .flat_map(|pair| {
                std::iter::once("mirror".to_string())
                    .chain(pair.iter().map(|d| d.display().to_string()))
            })
            .collect(),
        "raidz" => std::iter::once("raidz".to_string()).chain(names).collect(),
        _ => names.collect(),
    }
}

/// `zpool create` of `pool` mounted at `mp`, `layout` over `devices`, `log` as its log vdev,
/// with the user's `extra` arguments before the pool's name.
pub fn create_args(
    pool: &str,
    mp: &Path,
    layout: &str,
    devices: &[PathBuf],
    log: Option<&Path>,
    extra: &[String],
) -> Vec<String> {
    let mut a = sys::args(&["create", "-f", "-m", &mp.display().to_string()]);
    a.extend(extra.iter().cloned());
    a.push(pool.to_string());
    a.extend(vdevs(layout, devices));
    if let Some(l) = log {
        a.push("log".into());
        a.push(l.display().to_string());
    }
    a
}

/// `zfs set compression=off` of `pool`.
pub fn compression_off_args(pool: &str) -> Vec<String> {
    sys::args(&["set", "compression=off", pool])
}

/// `zpool destroy -f` of `pool`.
pub fn destroy_args(pool: &str) -> Vec<String> {
    sys::args(&["destroy", "-f", pool])
}

/// Destroys `pool`; `Ok(false)` when there is no such pool (or no zpool to ask).
pub fn release(pool: &str) -> Result<bool, String> {
    if !sys::have("zpool") || sys::run("zpool", &sys::args(&["list", "-H", pool])).is_err() {
        return Ok(false);
    }
    sys::run("zpool", &destroy_args(pool)).map(|_| true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn devs(n: usize) -> Vec<PathBuf> {
        (0..n)
            .map(|i| PathBuf::from(format!("/dev/loop{i}")))
            .collect()
    }

    #[test]
    fn three_mirror_pairs_striped_with_and_without_a_log() {
        let mp = Path::new("/tmp/s/mnt");
        let a = create_args(
            "p",
            mp,
            "mirror",
            &devs(6),
            Some(Path::new("/dev/loop6")),
            &[],
        );
        assert_eq!(
            sys::display_command("zpool", &a),
            "zpool create -f -m /tmp/s/mnt p mirror /dev/loop0 /dev/loop1 mirror /dev/loop2 /dev/loop3 mirror /dev/loop4 /dev/loop5 log /dev/loop6"
        );
        let extra = vec!["-o".to_string(), "ashift=12".to_string()];
        let b = create_args("p", mp, "raidz", &devs(3), None, &extra);
        assert_eq!(
            b,
            [
                "create",
                "-f",
                "-m",
                "/tmp/s/mnt",
                "-o",
                "ashift=12",
                "p",
                "raidz",
                "/dev/loop0",
                "/dev/loop1",
                "/dev/loop2"
            ]
        );
        assert_eq!(compression_off_args("p"), ["set", "compression=off", "p"]);
        assert_eq!(destroy_args("p"), ["destroy", "-f", "p"]);
    }

    #[test]
    fn layouts_are_checked_and_say_how_much_bandwidth_the_data_gets() {
        assert_eq!(check("mirror", Some(6)), Ok(()));
        assert!(check("mirror", Some(5)).unwrap_err().contains("even"));
        assert!(check("raidz", Some(2)).unwrap_err().contains("at least 3"));
        assert!(check("raid10", None).unwrap_err().contains("known: stripe"));
        assert_eq!(data_devices("mirror", 6), 3.0);
        assert_eq!(data_devices("stripe", 6), 6.0);
    }
}
