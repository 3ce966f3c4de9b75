//! Releasing what runs that are gone left behind, from their ledger files: by `iotrial
//! cleanup`, by `study --resume` (the runs of one results directory), and by a run's device
//! server process when the run dies. A ledger file is locked while it is released, so two of
//! them never release the same resources at once, and it is removed once everything in it is
//! gone. Running it again finds nothing: a resource already gone is "already released".

use super::resource::{LedgerFile, Released, Resource};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a cleanup waits for a dead run's device server to finish releasing.
const SERVER_PATIENCE: Duration = Duration::from_secs(120);

/// What a cleanup did.
#[derive(Debug, Default)]
pub struct CleanupReport {
    /// One line per resource.
    pub released: Vec<Released>,
    pub errors: Vec<String>,
    /// Ledgers of processes still running, left alone.
    pub live: Vec<u32>,
}

impl CleanupReport {
    fn absorb(&mut self, other: CleanupReport) {
        self.released.extend(other.released);
        self.errors.extend(other.errors);
        self.live.extend(other.live);
    }
}

/// Whether `pid` is a live process. A zombie counts as dead: it holds no resources.
pub fn pid_alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the parenthesised command name, which may itself hold spaces.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    !matches!(state, Some("Z") | Some("X") | None)
}

/// Waits up to `patience` for process `pid` to end; true when it did (or was never there).
pub fn wait_for_exit(pid: u32, patience: Duration) -> bool {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let Some(p) = rustix::process::Pid::from_raw(pid as i32) else {
        return true;
    };
    let Ok(fd) = rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()) else {
        return !pid_alive(pid);
    };
    let timeout = Timespec::try_from(patience).unwrap_or(Timespec {
        tv_sec: 120,
        tv_nsec: 0,
    });
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    let _ = poll(&mut fds, Some(&timeout));
    !pid_alive(pid)
}

/// The ledger files in `dir`.
fn ledger_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().and_then(|e| e.to_str()) == Some("json")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("ledger-"))
        })
        .collect();
    v.sort();
    v
}

fn read_ledger(path: &Path) -> Result<Option<LedgerFile>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| format!("{}: not a ledger ({e})", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("read {}: {e}", path.display())),
    }
}

/// Releases the resources of every ledger in `dir` whose run is gone, newest resource first.
pub fn run(dir: &Path) -> CleanupReport {
    let mut rep = CleanupReport::default();
    for path in ledger_files(dir) {
        rep.absorb(release_dead(&path));
    }
    rep
}

/// A run of the results directory is still going.
#[derive(Debug, thiserror::Error)]
#[error("a run of this results directory is still going (process {pid}, ledger {ledger})")]
pub struct StillRunning {
    pub pid: u32,
    pub ledger: PathBuf,
}

/// Releases what dead runs of the study whose results directory is `root` left (for
/// `--resume`); refuses while one of them is still running.
pub fn for_results(dir: &Path, root: &Path) -> Result<CleanupReport, StillRunning> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut rep = CleanupReport::default();
    for path in ledger_files(dir) {
        let Ok(Some(l)) = read_ledger(&path) else {
            continue;
        };
        let ours = l
            .results
            .as_ref()
            .is_some_and(|r| r.canonicalize().unwrap_or_else(|_| r.clone()) == root);
        if !ours || l.pid == std::process::id() {
            continue;
        }
        if pid_alive(l.pid) {
            return Err(StillRunning {
                pid: l.pid,
                ledger: path,
            });
        }
        rep.absorb(release_dead(&path));
    }
    Ok(rep)
}

/// Releases one ledger file if its run is gone: waits for the run's device server to finish
/// releasing first, then releases whatever is left.
fn release_dead(path: &Path) -> CleanupReport {
    let mut rep = CleanupReport::default();
    let l = match read_ledger(path) {
        Ok(Some(l)) => l,
        Ok(None) => return rep,
        Err(e) => {
            rep.errors.push(e);
            return rep;
        }
    };
    if l.pid != std::process::id() && pid_alive(l.pid) {
        rep.live.push(l.pid);
        return rep;
    }
    if let Some(server) = l.server_pid.filter(|p| pid_alive(*p)) {
        if !wait_for_exit(server, SERVER_PATIENCE) {
            rep.errors.push(format!(
                "{}: the device server (process {server}) of dead run {} is still releasing it",
                path.display(),
                l.pid
            ));
            return rep;
        }
    }
    let mut not_ours = |_: &Resource| None;
    rep.absorb(release_file(path, true, &mut not_ours));
    rep
}

/// Decides how to release a resource the caller serves itself: `Some(result)` when it did,
/// `None` to release it the ordinary way.
pub type OwnRelease<'a> = dyn FnMut(&Resource) -> Option<Result<Released, String>> + 'a;

/// Releases every resource of the ledger file at `path`, newest first, holding a lock on it;
/// removes the file when nothing is left. `servers_dead`: the run's emulated devices have no
/// server any more, so their FUSE connections are aborted first (the filesystems above them
/// then fail fast instead of waiting on a server forever).
pub fn release_file(path: &Path, servers_dead: bool, own: &mut OwnRelease<'_>) -> CleanupReport {
    let mut rep = CleanupReport::default();
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return rep,
        Err(e) => {
            rep.errors.push(format!("open {}: {e}", path.display()));
            return rep;
        }
    };
    if let Err(e) = rustix::fs::flock(file.as_fd(), rustix::fs::FlockOperation::LockExclusive) {
        rep.errors.push(format!("lock {}: {e}", path.display()));
        return rep;
    }
    // Whoever held the lock before may have released everything and removed the file.
    if rustix::fs::fstat(&file)
        .map(|s| s.st_nlink == 0)
        .unwrap_or(true)
    {
        return rep;
    }
    let resources = match read_ledger(path) {
        Ok(Some(l)) => l.resources,
        Ok(None) => return rep,
        Err(e) => {
            rep.errors.push(e);
            return rep;
        }
    };
    if servers_dead {
        abort_dead_connections(&resources, &mut rep);
    }
    let backings: Vec<&Path> = resources
        .iter()
        .filter_map(|r| match r {
            Resource::Loop { backing } => Some(backing.as_path()),
            _ => None,
        })
        .collect();
    for r in resources.iter().rev() {
        if let Resource::Sysfs { path, .. } = r {
            if let Some(other) = serving_another(Path::new("/sys"), path, &backings) {
                rep.released.push(Released::AlreadyGone(format!(
                    "{r} (the loop device now serves {other}, left as it is)"
                )));
                continue;
            }
        }
        match own(r).unwrap_or_else(|| r.release()) {
            Ok(done) => rep.released.push(done),
            Err(e) => rep.errors.push(e),
        }
    }
    if rep.errors.is_empty() {
        let _ = std::fs::remove_file(path);
    }
    rep
}

/// The file a loop device serves when the sysfs attribute `attr` (under `sys`, `/sys/block/NAME/..`
/// or `/sys/class/bdi/MAJ:MIN/..`) belongs to a loop device attached to a file that is none of
/// `ours`: the run that changed it has detached it, and another run attached it since, so
/// writing the old value back would change that run's device. None for any other attribute.
fn serving_another(sys: &Path, attr: &Path, ours: &[&Path]) -> Option<String> {
    let rel = attr.strip_prefix("/sys").ok()?;
    let mut parts = rel
        .components()
        .map(|c| c.as_os_str().to_str().unwrap_or(""));
    let dev = match (parts.next()?, parts.next()?, parts.next()?) {
        ("block", name, _) => sys.join("block").join(name),
        ("class", "bdi", id) => sys.join("dev/block").join(id),
        _ => return None,
    };
    let text = std::fs::read_to_string(dev.join("loop/backing_file")).ok()?;
    let serving = text.trim_end().trim_end_matches(" (deleted)");
    (!ours.iter().any(|b| Path::new(serving) == *b)).then(|| serving.to_string())
}

/// Aborts the FUSE connection of every emulated device in `resources` whose server is gone.
/// Abort only: the mount stays, so the loop devices on its file are still found by their
/// backing path, and the release unmounts it in order.
fn abort_dead_connections(resources: &[Resource], rep: &mut CleanupReport) {
    for r in resources {
        if let Resource::Fuse { mountpoint } = r {
            for m in crate::emu::fuse_mounts_at(mountpoint).unwrap_or_default() {
                if let Err(e) = crate::emu::abort_minor(mountpoint, m.minor) {
                    rep.errors
                        .push(format!("abort FUSE at {}: {e}", mountpoint.display()));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_device_another_run_attached_since_is_left_alone() {
        let sys = tempfile::tempdir().unwrap();
        let put = |dir: &str, backing: &str| {
            let d = sys.path().join(dir).join("loop");
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("backing_file"), format!("{backing}\n")).unwrap();
        };
        put("block/loop0", "/tmp/theirs/emu0/disk");
        put("dev/block/7:0", "/tmp/theirs/emu0/disk");
        put("block/loop1", "/tmp/mine/emu0/disk (deleted)");
        let mine = [Path::new("/tmp/mine/emu0/disk")];
        let sched = Path::new("/sys/block/loop0/queue/scheduler");
        let bdi = Path::new("/sys/class/bdi/7:0/max_ratio_fine");
        for attr in [sched, bdi] {
            assert_eq!(
                serving_another(sys.path(), attr, &mine).as_deref(),
                Some("/tmp/theirs/emu0/disk"),
                "{}",
                attr.display()
            );
        }
        let own = Path::new("/sys/block/loop1/queue/scheduler");
        assert_eq!(serving_another(sys.path(), own, &mine), None);
        // Detached (no backing file), or not a loop device: restored as recorded.
        let free = Path::new("/sys/block/loop2/queue/scheduler");
        assert_eq!(serving_another(sys.path(), free, &mine), None);
        let disk = Path::new("/sys/block/sda/queue/scheduler");
        assert_eq!(serving_another(sys.path(), disk, &mine), None);
    }

    fn write_ledger(dir: &Path, pid: u32, results: Option<&Path>, res: Vec<Resource>) -> PathBuf {
        let p = dir.join(format!("ledger-{pid}.json"));
        let l = LedgerFile {
            pid,
            server_pid: None,
            results: results.map(Path::to_path_buf),
            resources: res,
        };
        std::fs::write(&p, serde_json::to_vec(&l).unwrap()).unwrap();
        p
    }

    #[test]
    fn resume_releases_only_its_own_results_directory() {
        let root = tempfile::tempdir().unwrap();
        let (mine, other) = (root.path().join("mine"), root.path().join("other"));
        std::fs::create_dir_all(&mine).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let (d1, d2) = (root.path().join("d1"), root.path().join("d2"));
        std::fs::create_dir(&d1).unwrap();
        std::fs::create_dir(&d2).unwrap();
        let ledgers = root.path().join("ledgers");
        std::fs::create_dir(&ledgers).unwrap();
        let l1 = write_ledger(
            &ledgers,
            4_000_001,
            Some(&mine),
            vec![Resource::TempDir { path: d1.clone() }],
        );
        let l2 = write_ledger(
            &ledgers,
            4_000_002,
            Some(&other),
            vec![Resource::TempDir { path: d2.clone() }],
        );
        let rep = for_results(&ledgers, &mine).unwrap();
        assert!(rep.errors.is_empty(), "{:?}", rep.errors);
        assert!(!d1.exists() && !l1.exists());
        assert!(
            d2.exists() && l2.exists(),
            "another study's leftovers untouched"
        );
    }

    #[test]
    fn resume_refuses_while_a_run_of_the_directory_is_alive() {
        let root = tempfile::tempdir().unwrap();
        let d = root.path().join("d");
        std::fs::create_dir(&d).unwrap();
        // Our parent (the test harness) is a live process other than us.
        let live = rustix::process::getppid().unwrap().as_raw_nonzero().get() as u32;
        write_ledger(
            root.path(),
            live,
            Some(root.path()),
            vec![Resource::TempDir { path: d.clone() }],
        );
        let err = for_results(root.path(), root.path()).unwrap_err();
        assert_eq!(err.pid, live);
        assert!(d.exists());
    }

    #[test]
    fn own_resources_are_released_by_the_caller() {
        let root = tempfile::tempdir().unwrap();
        let p = write_ledger(
            root.path(),
            4_000_003,
            None,
            vec![Resource::Fuse {
                mountpoint: root.path().join("emu0"),
            }],
        );
        let mut seen = Vec::new();
        let mut own = |r: &Resource| {
            seen.push(r.clone());
            Some(Ok(Released::Done("stopped".into())))
        };
        let rep = release_file(&p, false, &mut own);
        assert_eq!(rep.released, vec![Released::Done("stopped".into())]);
        assert_eq!(seen.len(), 1);
        assert!(!p.exists());
    }
}
