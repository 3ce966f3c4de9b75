//! Where the emulated devices of a stack keep their data: in memory when it fits. A device
//! server reads and writes its sparse backing image while replies are due; an image on the
//! host's disk makes a reply wait whenever the host has written its pages back and dropped
//! them (a read then goes to the disk) or throttles the server's writes. So the images of a
//! stack's emulated devices go in a tmpfs of their total capacity, mounted in the stack's
//! work directory (in the ledger, unmounted on release), when that capacity is at most three
//! quarters of the memory the host has available; otherwise they stay on disk and a warning
//! says so.

use std::path::{Path, PathBuf};

use super::actions::Actions;
use super::ledger::Ledger;
use super::resource::Resource;
use super::StackError;

/// Where the images go, and the warning when that is the host's disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The directory the images are created in.
    pub dir: PathBuf,
    /// Whether it is a tmpfs in memory.
    pub in_memory: bool,
    /// Why the images are on disk, when they are.
    pub warning: Option<String>,
}

/// Whether images of `capacity` bytes fit in memory with `available` bytes available: at
/// most three quarters of it, so the page cache and the workload keep the rest.
pub fn fits(capacity: u64, available: u64) -> bool {
    capacity > 0 && capacity <= available / 4 * 3
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

/// Chooses where the images of emulated devices of `capacity` bytes in all go, mounting a
/// tmpfs under `work` when they fit in memory. `capacity` 0 (no emulated device): `work`.
pub fn place(
    capacity: u64,
    work: &Path,
    ledger: &mut Ledger,
    actions: &mut Actions,
) -> Result<Placement, StackError> {
    let on_disk = |warning| Placement {
        dir: work.to_path_buf(),
        in_memory: false,
        warning,
    };
    if capacity == 0 {
        return Ok(on_disk(None));
    }
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .as_deref()
        .and_then(mem_available)
        .unwrap_or(0);
    if !fits(capacity, available) {
        return Ok(on_disk(Some(format!(
            "the emulated devices' images ({}) do not fit in memory ({} available): they are on the host's disk in {}, whose reads and write-back can make the device servers' replies late",
            gib(capacity),
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
            capacity.div_ceil(4096) * 4096 + (1 << 20)
        ),
        "iotrial-images".into(),
        dir.display().to_string(),
    ];
    actions.run("mount", &args)?;
    Ok(Placement {
        dir,
        in_memory: true,
        warning: None,
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
    fn reads_mem_available_in_bytes() {
        let text = "MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   23000000 kB\n";
        assert_eq!(mem_available(text), Some(23_000_000 * 1024));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
    }

    #[test]
    fn a_dry_run_prints_the_tmpfs_it_would_mount() {
        let work = tempfile::tempdir().unwrap();
        let mut ledger = Ledger::detached();
        let mut actions = Actions::new(true);
        let p = place(1 << 30, work.path(), &mut ledger, &mut actions).unwrap();
        if p.in_memory {
            assert_eq!(p.dir, work.path().join("images"));
            let line = actions.log.join("\n");
            assert!(line.contains("mount -t tmpfs -o size="), "{line}");
        } else {
            // A host with under 1.4 GiB available keeps even this image on disk.
            assert!(p.warning.unwrap().contains("do not fit in memory"));
        }
        let none = place(0, work.path(), &mut ledger, &mut actions).unwrap();
        assert_eq!(none.dir, work.path());
        assert!(none.warning.is_none());
    }
}
