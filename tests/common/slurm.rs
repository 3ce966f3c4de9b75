//! A one-node Slurm cluster for a test: scripts/slurm-local.sh starts munged, slurmctld and
//! slurmd as root with everything under the test's own directory, and stops them when the
//! guard is dropped (also when the test fails), so nothing of it is left running.

use super::need::{ready, Need};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What a test of the Slurm launcher needs: root, the daemons and the clients.
pub fn ready_for_slurm(test: &str, extra: &[Need]) -> bool {
    let mut needs = vec![
        Need::Root,
        Need::Tool("munged"),
        Need::Tool("slurmctld"),
        Need::Tool("slurmd"),
        Need::Tool("sbatch"),
        Need::Tool("squeue"),
        Need::Tool("scancel"),
    ];
    needs.extend_from_slice(extra);
    ready(test, &needs)
}

/// A running cluster; stopped on drop.
pub struct Slurm {
    pub dir: PathBuf,
    /// Its slurm.conf: clients find the cluster through `SLURM_CONF`.
    pub conf: PathBuf,
    /// (daemon, pid) of munged, slurmctld and slurmd, as they started.
    pids: Vec<(&'static str, i32)>,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-local.sh")
}

/// The pid in file `p`.
fn pid_in(p: &Path) -> Option<i32> {
    std::fs::read_to_string(p).ok()?.trim().parse().ok()
}

/// Whether process `pid` is alive and runs `name`.
fn runs(pid: i32, name: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .is_ok_and(|c| String::from_utf8_lossy(&c).contains(name))
}

impl Slurm {
    /// Starts the cluster under `dir`; panics with the script's output if it cannot.
    pub fn start(dir: &Path) -> Slurm {
        let out = Command::new(script())
            .arg("start")
            .arg(dir)
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        let conf = said
            .lines()
            .find_map(|l| l.strip_prefix("SLURM_CONF="))
            .map(PathBuf::from);
        match (out.status.success(), conf) {
            (true, Some(conf)) => {
                let pids = [
                    ("munged", "munge/munged.pid"),
                    ("slurmctld", "slurmctld.pid"),
                    ("slurmd", "slurmd.pid"),
                ]
                .iter()
                .filter_map(|(name, f)| pid_in(&dir.join(f)).map(|p| (*name, p)))
                .collect::<Vec<_>>();
                assert_eq!(pids.len(), 3, "each daemon wrote its pid: {pids:?}");
                Slurm {
                    dir: dir.to_path_buf(),
                    conf,
                    pids,
                }
            }
            _ => panic!(
                "the one-node Slurm cluster did not start: {said}{}",
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    }

    /// A Slurm client (or anything that submits) pointed at this cluster.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    /// The job ids among `ids` the cluster still has pending or running.
    pub fn queued(&self, ids: &[String]) -> Vec<String> {
        let out = self
            .command("squeue")
            .args(["--noheader", "--format=%i"])
            .arg(format!("--jobs={}", ids.join(",")))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    }

    /// The daemons of this cluster still alive (by the pids they had when it started).
    pub fn daemons_alive(&self) -> Vec<String> {
        self.pids
            .iter()
            .filter(|(name, pid)| runs(*pid, name))
            .map(|(name, pid)| format!("{name} ({pid})"))
            .collect()
    }

    /// Stops the daemons and waits until they are gone.
    pub fn stop(&self) {
        let _ = Command::new(script()).arg("stop").arg(&self.dir).status();
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        self.stop();
    }
}
