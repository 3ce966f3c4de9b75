//! The ledger: every resource a run creates (temporary directory, image, loop device, mount,
//! FUSE server, scheduler change) is written here *before* it is created, and released in
//! reverse order on success, error, Ctrl-C or SIGTERM. A run killed with SIGKILL leaves its
//! ledger file behind; `iotrial cleanup` releases what it lists.

use super::sys;
use crate::emu::EmuServer;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One resource, described well enough to release it from another process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Resource {
    /// A directory iotrial made (images, mount points); removed recursively once unmounted.
    TempDir { path: PathBuf },
    /// An image file; removed.
    Image { path: PathBuf },
    /// Loop devices backed by this file; detached.
    Loop { backing: PathBuf },
    /// A mount; unmounted (lazily if busy).
    Mount { target: PathBuf },
    /// A FUSE server's mount; its connection is aborted, then it is unmounted.
    Fuse { mountpoint: PathBuf },
    /// A sysfs attribute (scheduler, tunable) changed from `previous`; written back.
    Sysfs { path: PathBuf, previous: String },
}

impl Resource {
    /// Releases the resource; missing resources are not an error (creation may have failed).
    pub fn release(&self) -> Result<(), String> {
        match self {
            Resource::TempDir { path } => match std::fs::remove_dir_all(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(format!("remove {}: {e}", path.display()))
                }
                _ => Ok(()),
            },
            Resource::Image { path } => match std::fs::remove_file(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(format!("remove {}: {e}", path.display()))
                }
                _ => Ok(()),
            },
            Resource::Loop { backing } => sys::detach_loops_of(backing),
            Resource::Mount { target } => sys::unmount(target),
            Resource::Fuse { mountpoint } => {
                // A live server unmounts cleanly once nothing holds its file; a dead one
                // (SIGKILL) leaves a connection to abort first.
                match crate::emu::unmount_patiently(mountpoint, std::time::Duration::from_secs(1)) {
                    Ok(()) => Ok(()),
                    Err(_) => crate::emu::abort_connection(mountpoint)
                        .map(|_| ())
                        .map_err(|e| format!("abort FUSE at {}: {e}", mountpoint.display())),
                }
            }
            Resource::Sysfs { path, previous } => {
                if path.exists() {
                    std::fs::write(path, previous)
                        .map_err(|e| format!("restore {}: {e}", path.display()))
                } else {
                    Ok(())
                }
            }
        }
    }
}

/// Where ledger files live: `$IOTRIAL_LEDGER_DIR`, else /run/iotrial as root, else a per-user
/// directory under the temporary directory.
pub fn ledger_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("IOTRIAL_LEDGER_DIR") {
        return PathBuf::from(d);
    }
    if rustix::process::geteuid().is_root() {
        PathBuf::from("/run/iotrial")
    } else {
        std::env::temp_dir().join(format!("iotrial-{}", rustix::process::geteuid().as_raw()))
    }
}

/// The resources of one running process, mirrored to its ledger file.
pub struct Ledger {
    /// The ledger file; None for a dry run, which creates nothing.
    path: Option<PathBuf>,
    entries: Vec<Resource>,
    /// In-process device servers, each with the index of its entry: stopped right after that
    /// entry is released.
    servers: Vec<(usize, EmuServer)>,
}

impl Ledger {
    /// A ledger for this process in [`ledger_dir`].
    pub fn new() -> std::io::Result<Ledger> {
        let dir = ledger_dir();
        std::fs::create_dir_all(&dir)?;
        let pid = std::process::id();
        let path = dir.join(format!("ledger-{pid}.json"));
        let l = Ledger {
            path: Some(path),
            entries: Vec::new(),
            servers: Vec::new(),
        };
        l.save()?;
        Ok(l)
    }

    /// A ledger kept in memory only (for `--dry-run`, where nothing is created).
    pub fn detached() -> Ledger {
        Ledger {
            path: None,
            entries: Vec::new(),
            servers: Vec::new(),
        }
    }

    fn save(&self) -> std::io::Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let doc = serde_json::json!({"pid": std::process::id(), "resources": self.entries});
        let tmp = path.with_extension("tmp");
        std::fs::write(
            &tmp,
            serde_json::to_vec_pretty(&doc).expect("ledger serializes"),
        )?;
        std::fs::rename(&tmp, path)
    }

    /// Records `r` before the caller creates it.
    pub fn record(&mut self, r: Resource) -> std::io::Result<usize> {
        self.entries.push(r);
        self.save()?;
        Ok(self.entries.len() - 1)
    }

    /// Keeps an in-process server alive until ledger entry `entry` (its mount) is released.
    pub fn hold_server(&mut self, entry: usize, server: EmuServer) {
        self.servers.push((entry, server));
    }

    /// What the in-process servers report (model state, request counters).
    pub fn server_stats(&self) -> Vec<serde_json::Value> {
        self.servers.iter().map(|(_, s)| s.stats()).collect()
    }

    /// Number of resources held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Releases every resource recorded after the first `keep`, newest first. Errors are
    /// collected, and release goes on past them.
    pub fn release_to(&mut self, keep: usize) -> Vec<String> {
        let mut errors = Vec::new();
        while self.entries.len() > keep {
            let r = self.entries.pop().expect("non-empty");
            if let Err(e) = r.release() {
                errors.push(e);
            }
            if self
                .servers
                .last()
                .is_some_and(|(i, _)| *i == self.entries.len())
            {
                let (_, server) = self.servers.pop().expect("non-empty");
                // Already unmounted by the release above; this joins the server's threads.
                let _ = server.stop();
            }
            let _ = self.save();
        }
        errors
    }

    /// Releases everything.
    pub fn release_all(&mut self) -> Vec<String> {
        self.release_to(0)
    }
}

impl Drop for Ledger {
    fn drop(&mut self) {
        if self.path.is_none() {
            return;
        }
        for e in self.release_all() {
            eprintln!("iotrial: cleanup: {e}");
        }
        if let Some(p) = &self.path {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// What `iotrial cleanup` did.
#[derive(Debug, Default)]
pub struct CleanupReport {
    pub released: Vec<String>,
    pub errors: Vec<String>,
    /// Ledgers of processes still running, left alone.
    pub live: Vec<u32>,
}

/// Whether `pid` is a live process. A zombie counts as dead: a killed run whose threads still
/// wait on its own FUSE server shows as one until its connection is aborted.
fn pid_alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the parenthesised command name, which may itself hold spaces.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    !matches!(state, Some("Z") | Some("X") | None)
}

/// Releases the resources of every ledger whose process is gone, newest first.
pub fn cleanup(dir: &Path) -> CleanupReport {
    let mut rep = CleanupReport::default();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return rep;
    };
    for ent in rd.flatten() {
        let p = ent.path();
        if p.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        let Ok(doc) = serde_json::from_str::<serde_json::Value>(&text) else {
            rep.errors.push(format!("{}: not a ledger", p.display()));
            continue;
        };
        let pid = doc["pid"].as_u64().unwrap_or(0) as u32;
        if pid != std::process::id() && pid_alive(pid) {
            rep.live.push(pid);
            continue;
        }
        let res: Vec<Resource> =
            serde_json::from_value(doc["resources"].clone()).unwrap_or_default();
        // The dead run's FUSE servers are gone: abort their connections first, so unmounting
        // the filesystems above them fails fast instead of waiting on a server forever (and so
        // the run's own threads, stuck on that I/O, can exit).
        // Abort only: the mount stays, so the loop devices on its file are still found by
        // their backing path, and the release below unmounts it in order.
        for r in &res {
            if let Resource::Fuse { mountpoint } = r {
                for m in crate::emu::fuse_mounts_at(mountpoint).unwrap_or_default() {
                    if let Err(e) = crate::emu::abort_minor(mountpoint, m.minor) {
                        rep.errors
                            .push(format!("abort FUSE at {}: {e}", mountpoint.display()));
                    }
                }
            }
        }
        for r in res.iter().rev() {
            match r.release() {
                Ok(()) => rep.released.push(format!("{r:?}")),
                Err(e) => rep.errors.push(e),
            }
        }
        if rep.errors.is_empty() {
            let _ = std::fs::remove_file(&p);
        }
    }
    rep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_in_reverse_order_and_cleanup_finds_dead_ledgers() {
        let root = tempfile::tempdir().unwrap();
        let d = root.path().join("made");
        let f = root.path().join("sysattr");
        std::fs::write(&f, "old").unwrap();
        let ledger_path;
        {
            let mut l = Ledger {
                path: Some(root.path().join("ledger-1.json")),
                entries: vec![],
                servers: vec![],
            };
            l.record(Resource::TempDir { path: d.clone() }).unwrap();
            std::fs::create_dir(&d).unwrap();
            l.record(Resource::Sysfs {
                path: f.clone(),
                previous: "old".into(),
            })
            .unwrap();
            std::fs::write(&f, "new").unwrap();
            ledger_path = l.path.clone().unwrap();
            // Simulate SIGKILL: the ledger file stays, nothing is released.
            std::mem::forget(l);
        }
        let text = std::fs::read_to_string(&ledger_path).unwrap().replace(
            &format!("\"pid\": {}", std::process::id()),
            "\"pid\": 4000000",
        );
        std::fs::write(&ledger_path, text).unwrap();
        let rep = cleanup(root.path());
        assert!(rep.errors.is_empty(), "{:?}", rep.errors);
        assert_eq!(rep.released.len(), 2);
        assert!(!d.exists());
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "old");
        assert!(!ledger_path.exists());
    }
}
