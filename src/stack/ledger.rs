//! The ledger: every resource a run creates (temporary directory, image, loop device, mount,
//! emulated device, scheduler change) is written here *before* it is created, and released in
//! reverse order on success, error, Ctrl-C or SIGTERM. The file lives in [`ledger_dir`]; the
//! run's device server process (spawned with the first resource) watches the run and, if it
//! dies (SIGKILL, OOM), releases what the file lists. `iotrial cleanup`
//! ([`super::release::cleanup`]) does the same for a run whose device server died with it.

use super::release::resource::{LedgerFile, Resource};
use super::server::client::{RemoteDevice, ServerError, ServerProcess};
use super::server::DeviceServer;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

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

/// The run's device server process: not spawned yet, running, or impossible here.
enum Process {
    NotYet,
    Running(Arc<Mutex<ServerProcess>>),
    /// Why there is none: this program is not iotrial (a library user without IOTRIAL_EXE),
    /// the spawn failed, or this is a dry run.
    Unavailable(ServerError),
}

/// The resources of one running process, mirrored to its ledger file.
pub struct Ledger {
    /// The ledger file; None for a dry run, which creates nothing.
    path: Option<PathBuf>,
    results: Option<PathBuf>,
    entries: Vec<Resource>,
    /// Resources whose release failed: kept in the file, so the device server (when this
    /// process ends) or `iotrial cleanup` tries again.
    unreleased: Vec<Resource>,
    /// Device servers, each with the index of the entry it serves: stopped in place of
    /// releasing that entry.
    servers: Vec<(usize, Box<dyn DeviceServer>)>,
    process: Process,
}

impl Ledger {
    /// A ledger for this process in [`ledger_dir`].
    pub fn new() -> std::io::Result<Ledger> {
        let dir = ledger_dir();
        std::fs::create_dir_all(&dir)?;
        let pid = std::process::id();
        let l = Ledger {
            path: Some(dir.join(format!("ledger-{pid}.json"))),
            results: None,
            entries: Vec::new(),
            unreleased: Vec::new(),
            servers: Vec::new(),
            process: Process::NotYet,
        };
        l.save()?;
        Ok(l)
    }

    /// A ledger kept in memory only (for `--dry-run`, where nothing is created).
    pub fn detached() -> Ledger {
        Ledger {
            path: None,
            results: None,
            entries: Vec::new(),
            unreleased: Vec::new(),
            servers: Vec::new(),
            process: Process::Unavailable(ServerError::Gone(
                "a dry run starts no device server".into(),
            )),
        }
    }

    /// Ties the ledger to a study's results directory, so `--resume` of that directory finds
    /// what this run left if it dies.
    pub fn set_results(&mut self, root: &Path) -> std::io::Result<()> {
        self.results = Some(root.canonicalize().unwrap_or_else(|_| root.to_path_buf()));
        self.save()
    }

    fn save(&self) -> std::io::Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let doc = LedgerFile {
            pid: std::process::id(),
            server_pid: match &self.process {
                Process::Running(p) => Some(lock(p).pid()),
                _ => None,
            },
            results: self.results.clone(),
            // In the order they were made: the failed ones were released newest first.
            resources: self
                .unreleased
                .iter()
                .rev()
                .chain(&self.entries)
                .cloned()
                .collect(),
        };
        let tmp = path.with_extension("tmp");
        let written = std::fs::write(
            &tmp,
            serde_json::to_vec_pretty(&doc).expect("ledger serializes"),
        )
        .and_then(|()| std::fs::rename(&tmp, path));
        if written.is_err() {
            // A full disk leaves a truncated file: the ledger itself is the previous version.
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }

    /// Starts the run's device server process if it is not running: from then on, a SIGKILL
    /// of this process leaves nothing behind. Without an iotrial binary to run (the library
    /// used from another program), resources are still recorded for `iotrial cleanup`.
    fn ensure_process(&mut self) {
        let Some(path) = &self.path else { return };
        if let Process::NotYet = self.process {
            self.process = match ServerProcess::spawn(path) {
                Ok(p) => Process::Running(Arc::new(Mutex::new(p))),
                Err(e) => Process::Unavailable(e),
            };
        }
    }

    /// Records `r` before the caller creates it.
    pub fn record(&mut self, r: Resource) -> std::io::Result<usize> {
        self.ensure_process();
        self.entries.push(r);
        self.save()?;
        Ok(self.entries.len() - 1)
    }

    /// Serves the emulated device `spec` (`hdd,size=8GiB`) in the run's device server process,
    /// its data in `backing`, as `<mountpoint>/disk`, planning a power cut from its first
    /// request when `journal`; the server is held until ledger entry `entry` (its
    /// [`Resource::Fuse`]) is released. Returns the device file.
    pub fn serve_emulated(
        &mut self,
        entry: usize,
        spec: &str,
        (backing, mountpoint): (&Path, &Path),
        journal: bool,
    ) -> Result<PathBuf, ServerError> {
        self.ensure_process();
        let process = match &self.process {
            Process::Running(p) => Arc::clone(p),
            Process::Unavailable(why) => return Err(why.clone()),
            Process::NotYet => unreachable!("ensure_process ran"),
        };
        let (device, file) = RemoteDevice::start(process, spec, (backing, mountpoint), journal)?;
        self.hold_server(entry, Box::new(device));
        Ok(file)
    }

    /// Keeps a device server until ledger entry `entry` (its mount) is released.
    pub fn hold_server(&mut self, entry: usize, server: Box<dyn DeviceServer>) {
        self.servers.push((entry, server));
    }

    /// The pid of the run's device server process, when it runs.
    pub fn server_pid(&self) -> Option<u32> {
        match &self.process {
            Process::Running(p) => Some(lock(p).pid()),
            _ => None,
        }
    }

    /// The server of the emulated device whose FUSE mount point is `mountpoint`.
    pub fn device_server(&self, mountpoint: &Path) -> Option<&dyn DeviceServer> {
        self.servers
            .iter()
            .find_map(|(i, s)| match &self.entries[*i] {
                Resource::Fuse { mountpoint: m } if m == mountpoint => Some(s.as_ref()),
                _ => None,
            })
    }

    /// What the device servers report (model state, request counters).
    pub fn server_stats(&self) -> Vec<Json> {
        self.server_stats_of(&[])
    }

    /// What the device servers report, each with `device`: the name of the block device of
    /// `devices` it was served as, where one of them is (its monitors' series go by it).
    pub fn server_stats_of(&self, devices: &[super::blockdevs::StackDevice]) -> Vec<Json> {
        self.servers
            .iter()
            .map(|(i, s)| {
                let mut stats = s.stats();
                let served = match &self.entries[*i] {
                    Resource::Fuse { mountpoint } => devices
                        .iter()
                        .find(|d| d.emulated.as_deref() == Some(mountpoint.as_path())),
                    _ => None,
                };
                if let (Some(d), Some(o)) = (served, stats.as_object_mut()) {
                    o.insert("device".into(), Json::from(d.name.as_str()));
                }
                stats
            })
            .collect()
    }

    /// Stops holding the newest resource when it is `r`, without releasing it: its caller
    /// owns it from then on. Returns whether it was the newest.
    pub fn forget(&mut self, r: &Resource) -> bool {
        if self.entries.last() != Some(r)
            || matches!(self.servers.last(), Some((i, _)) if *i + 1 == self.entries.len())
        {
            return false;
        }
        self.entries.pop();
        let _ = self.save();
        true
    }

    /// The resources held, in the order they were recorded.
    pub fn resources(&self) -> &[Resource] {
        &self.entries
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
            let index = self.entries.len();
            if matches!(self.servers.last(), Some((i, _)) if *i == index) {
                let (_, server) = self.servers.pop().expect("non-empty");
                if let Err(e) = server.stop() {
                    errors.push(e);
                }
            }
            if let Err(e) = r.release() {
                errors.push(e);
                self.unreleased.push(r);
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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
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
            if self.unreleased.is_empty() {
                let _ = std::fs::remove_file(p);
            } else {
                eprintln!(
                    "iotrial: what could not be released stays in {} for `iotrial cleanup`",
                    p.display()
                );
            }
        }
        // With the file gone, the device server has nothing left to guard and exits; with
        // resources left in it, it tries them once more first.
        if let Process::Running(p) = std::mem::replace(&mut self.process, Process::NotYet) {
            lock(&p).finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that only reports `{"model": ...}`.
    struct Reporting(&'static str);

    impl DeviceServer for Reporting {
        fn stats(&self) -> Json {
            serde_json::json!({ "model": self.0 })
        }
        fn stop(self: Box<Self>) -> Result<(), String> {
            Ok(())
        }
        fn start_log(&self, _: u64) -> Result<(), String> {
            Err("no log".into())
        }
        fn stop_log(&self, _: &Path, _: &Path) -> Result<(u64, u64), String> {
            Err("no log".into())
        }
        fn background(&self, _: u64) -> Result<super::super::server::BackgroundReply, String> {
            Err("no model".into())
        }
    }

    #[test]
    fn server_stats_name_the_block_device_each_server_was_served_as() {
        use super::super::blockdevs::{DeviceRole, StackDevice};
        let fuse = |p: &str| Resource::Fuse {
            mountpoint: PathBuf::from(p),
        };
        let mut l = Ledger {
            path: None,
            results: None,
            entries: vec![fuse("/m/a"), fuse("/m/b"), fuse("/m/c")],
            unreleased: vec![],
            servers: vec![],
            process: Process::Unavailable(ServerError::Gone("test".into())),
        };
        l.hold_server(0, Box::new(Reporting("hdd")));
        l.hold_server(1, Box::new(Reporting("smr")));
        l.hold_server(2, Box::new(Reporting("flash")));
        let served = |name: &str, mp: &str| StackDevice {
            name: name.into(),
            path: PathBuf::from("/dev").join(name),
            role: DeviceRole::Data,
            emulated: Some(PathBuf::from(mp)),
        };
        // Listed in another order than served; the third server's device is not in the stack.
        let stats = l.server_stats_of(&[served("loop7", "/m/b"), served("loop4", "/m/a")]);
        assert_eq!(
            stats,
            [
                serde_json::json!({"model": "hdd", "device": "loop4"}),
                serde_json::json!({"model": "smr", "device": "loop7"}),
                serde_json::json!({"model": "flash"}),
            ]
        );
        l.entries.clear();
        l.servers.clear();
    }

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
                results: None,
                entries: vec![],
                unreleased: vec![],
                servers: vec![],
                process: Process::Unavailable(ServerError::Gone("test".into())),
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
        let rep = crate::stack::release::cleanup::run(root.path());
        assert!(rep.errors.is_empty(), "{:?}", rep.errors);
        assert_eq!(rep.released.len(), 2);
        assert!(!d.exists());
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "old");
        assert!(!ledger_path.exists());
        // Idempotent: a second cleanup finds nothing and reports no error.
        let again = crate::stack::release::cleanup::run(root.path());
        assert!(again.errors.is_empty() && again.released.is_empty());
    }
}
