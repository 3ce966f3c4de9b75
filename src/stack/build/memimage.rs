//! Where the emulated devices of a stack keep their data: in memory when it fits. A device
//! server reads and writes its sparse backing image while replies are due; an image on the
//! host's disk makes a reply wait whenever the host has written its pages back and dropped
//! them (a read then goes to the disk) or throttles the server's writes. So the images of a
//! stack's emulated devices go in a tmpfs, mounted in the stack's work directory (in the
//! ledger, unmounted on release), when what they will hold is at most three quarters of the
//! memory the host has available; otherwise they stay on disk and a warning says so. The
//! images are sparse, so what they hold is not their capacity where the workload can tell
//! how much it writes ([`stored_at_most`]): a 72 TB array twin filled with a million 4 KiB
//! files holds a few GB. A tmpfs takes memory only as its images fill, so the room the other
//! runs' image tmpfs can still grow into ([`promised`]) is not available, however free it is
//! now: two studies started together would otherwise both fit and then exhaust the host's
//! memory.

use std::path::{Path, PathBuf};

use crate::stack::actions::Actions;
use crate::stack::ledger::Ledger;
use crate::stack::release::resource::Resource;
use crate::stack::StackError;

/// Where the images go, and the warning when that is the host's disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The directory the images are created in.
    pub dir: PathBuf,
    /// Whether it is a tmpfs in memory.
    pub in_memory: bool,
    /// Why the images are on disk, when they are.
    pub warning: Option<String>,
    /// The most bytes the images hold (their capacity, or [`stored_at_most`]).
    pub stored: u64,
}

/// Whether images of `capacity` bytes fit in memory with `available` bytes available: at
/// most three quarters of it, so the page cache and the workload keep the rest.
pub fn fits(capacity: u64, available: u64) -> bool {
    capacity > 0 && capacity <= available / 4 * 3
}

/// The most a filesystem's mkfs writes on devices of `capacity` bytes: its journal or log
/// (ext4's is 1 GiB at most, xfs's 2 GiB, zeroed) with room to spare, and its per-group
/// headers, a share of the capacity (mkfs.ext4 wrote 1.6 and 2.2 GB on sparse 38 and 72 TB
/// images, mkfs.xfs 2.0 GB on both; e2fsprogs 1.47, xfsprogs 6.1).
pub fn mkfs_allowance(capacity: u64) -> u64 {
    (4u64 << 30).saturating_add(capacity / 16384).min(capacity)
}

/// The most the images of `capacity` bytes hold for a workload that writes at most
/// `workload` bytes, each up to `copies` times (a mirror writes every byte on each of its
/// devices): what mkfs writes and the workload's bytes, never more than the capacity.
/// `None` (a workload that cannot tell, a duration or a device-wide pattern): the capacity.
pub fn stored_at_most(capacity: u64, workload: Option<u64>, copies: u64) -> u64 {
    match workload {
        None => capacity,
        Some(w) => mkfs_allowance(capacity)
            .saturating_add(w.saturating_mul(copies.max(1)))
            .min(capacity),
    }
}

/// The size of the tmpfs for images of `capacity` bytes that hold `stored` at most, with
/// `available` bytes of memory available: their capacity when that is the bound; when the bound
/// is a workload's estimate, the whole three quarters of the memory (never above the
/// capacity), so a filesystem that writes more than estimated (a copy-on-write one rewriting
/// its trees) fills the room there is before it runs out.
pub fn room(capacity: u64, stored: u64, available: u64) -> u64 {
    if stored >= capacity {
        capacity
    } else {
        (available / 4 * 3).max(stored).min(capacity)
    }
}

/// Bytes in GiB, one decimal.
fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// MemAvailable of a /proc/meminfo text, in bytes.
pub fn mem_available(meminfo: &str) -> Option<u64> {
    meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|kb| kb.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// Mount points of the image tmpfs mounted by iotrial runs, from a /proc/mounts text.
pub fn image_mounts(mounts: &str) -> Vec<PathBuf> {
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (source, target, fstype) = (f.next()?, f.next()?, f.next()?);
            (source == "iotrial-images" && fstype == "tmpfs")
                .then(|| PathBuf::from(target.replace("\\040", " ")))
        })
        .collect()
}

/// Bytes the image tmpfs mounted by other runs may still take: each one's free room.
pub fn promised() -> u64 {
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    image_mounts(&mounts)
        .iter()
        .filter_map(|m| rustix::fs::statvfs(m).ok())
        .map(|s| s.f_bavail.saturating_mul(s.f_frsize))
        .sum()
}

/// Chooses where the images of emulated devices of `capacity` bytes that hold `stored` bytes
/// at most (their capacity, or [`stored_at_most`]) go, mounting a tmpfs of [`room`]'s size
/// under `work` when they fit in memory. `stored` 0 (no emulated device): `work`.
pub fn place(
    capacity: u64,
    stored: u64,
    work: &Path,
    ledger: &mut Ledger,
    actions: &mut Actions,
) -> Result<Placement, StackError> {
    let on_disk = |warning| Placement {
        dir: work.to_path_buf(),
        in_memory: false,
        warning,
        stored,
    };
    if stored == 0 {
        return Ok(on_disk(None));
    }
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .as_deref()
        .and_then(mem_available)
        .unwrap_or(0);
    let promised = promised();
    let available = available.saturating_sub(promised);
    if !fits(stored, available) {
        let others = if promised > 0 {
            format!(
                ", once the {} the image tmpfs of other runs may still fill are taken out",
                gib(promised)
            )
        } else {
            String::new()
        };
        return Ok(on_disk(Some(format!(
            "the emulated devices' images (up to {}) do not fit in memory ({} available{others}): they are on the host's disk in {}, whose reads and write-back can make the device servers' replies late",
            gib(stored),
            gib(available),
            work.display()
        ))));
    }
    let dir = work.join("images");
    let ledger_err = |e| StackError::io("ledger", e);
    ledger
        .record(Resource::TempDir { path: dir.clone() })
        .map_err(ledger_err)?;
    if !actions.dry_run {
        std::fs::create_dir_all(&dir)
            .map_err(|e| StackError::io(format!("create {}", dir.display()), e))?;
    }
    ledger
        .record(Resource::Mount {
            target: dir.clone(),
        })
        .map_err(ledger_err)?;
    let args = [
        "-t".to_string(),
        "tmpfs".into(),
        "-o".into(),
        format!(
            "size={},mode=0700",
            room(capacity, stored, available).div_ceil(4096) * 4096 + (1 << 20)
        ),
        "iotrial-images".into(),
        dir.display().to_string(),
    ];
    actions.run("mount", &args)?;
    Ok(Placement {
        dir,
        in_memory: true,
        warning: None,
        stored,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_fit_in_three_quarters_of_the_available_memory() {
        let gib = 1u64 << 30;
        assert!(fits(16 * gib, 22 * gib));
        assert!(!fits(17 * gib, 22 * gib));
        assert!(!fits(gib, 0), "unknown memory: on disk");
        assert!(!fits(0, 22 * gib), "nothing to place");
    }

    #[test]
    fn sparse_images_hold_what_mkfs_and_the_workload_write() {
        let (gib, tb) = (1u64 << 30, 1_000_000_000_000u64);
        // A 72 TB array filled with 1 M files of 4 KiB (and a block of metadata each).
        let fill = 1_000_000 * 8192;
        let held = stored_at_most(72 * tb, Some(fill), 1);
        assert_eq!(held, 4 * gib + 72 * tb / 16384 + fill);
        assert!(fits(held, 22 * gib), "{held}");
        // A mirror writes each byte on every device.
        assert_eq!(
            stored_at_most(72 * tb, Some(gib), 2),
            4 * gib + 72 * tb / 16384 + 2 * gib
        );
        // Never more than the capacity; a workload that cannot tell holds all of it.
        assert_eq!(stored_at_most(2 * gib, Some(8 * gib), 1), 2 * gib);
        assert_eq!(stored_at_most(72 * tb, None, 1), 72 * tb);
        assert_eq!(mkfs_allowance(gib), gib);
    }

    #[test]
    fn the_tmpfs_leaves_an_estimate_the_room_there_is() {
        let gib = 1u64 << 30;
        // The capacity is a hard bound: exactly that.
        assert_eq!(room(2 * gib, 2 * gib, 20 * gib), 2 * gib);
        // An estimate gets three quarters of the available memory, within the capacity.
        assert_eq!(room(1000 * gib, 5 * gib, 20 * gib), 15 * gib);
        assert_eq!(room(10 * gib, 5 * gib, 20 * gib), 10 * gib);
    }

    #[test]
    fn reads_mem_available_in_bytes() {
        let text = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   23000000 kB\n";
        assert_eq!(mem_available(text), Some(23_000_000 * 1024));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn finds_the_image_tmpfs_of_other_runs_only() {
        let text = "tmpfs /dev/shm tmpfs rw 0 0\n\
            iotrial-images /tmp/iotrial-stack-7-0/images tmpfs rw,size=16777216k 0 0\n\
            iotrial-emu /tmp/iotrial-stack-7-0/emu0 fuse.iotrial rw 0 0\n\
            iotrial-images /tmp/a\\040b/images tmpfs rw 0 0\n\
            iotrial-images /mnt/x ext4 rw 0 0\n";
        assert_eq!(
            image_mounts(text),
            vec![
                PathBuf::from("/tmp/iotrial-stack-7-0/images"),
                PathBuf::from("/tmp/a b/images")
            ]
        );
    }

    #[test]
    fn a_dry_run_prints_the_tmpfs_it_would_mount() {
        let work = tempfile::tempdir().unwrap();
        let mut ledger = Ledger::detached();
        let mut actions = Actions::new(true);
        let p = place(1 << 30, 1 << 30, work.path(), &mut ledger, &mut actions).unwrap();
        if p.in_memory {
            assert_eq!(p.dir, work.path().join("images"));
            let line = actions.log.join("\n");
            // The capacity is the bound: the tmpfs is that, and a MiB.
            let size = (1u64 << 30) + (1 << 20);
            assert!(
                line.contains(&format!("mount -t tmpfs -o size={size},")),
                "{line}"
            );
        } else {
            // A host with under 1.4 GiB available keeps even this image on disk.
            assert!(p.warning.unwrap().contains("do not fit in memory"));
        }
        let none = place(0, 0, work.path(), &mut ledger, &mut actions).unwrap();
        assert_eq!(none.dir, work.path());
        assert!(none.warning.is_none());
    }
}
