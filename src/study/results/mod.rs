//! The results directory of DESIGN.md: `<out>/<study>-<UTC timestamp>/` with manifest.json and
//! `trials/<stack>/<workload>/r<N>/`. A trial is written under a temporary name and renamed
//! when complete, so an interrupted study never shows a partial trial as finished.
//!
//! Beside it, what is read from and written to a results directory: its manifest, study.toml
//! (`write`), the merge of several, the comparison table, and the figures that relate one
//! trial to another (the raw reference a trial is judged against, computed where both are).

pub mod manifest;
pub mod merge;
pub(super) mod reference;
pub mod relate;
pub mod table;
pub(super) mod write;

use crate::utc::utc_stamp;
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Facts about the machine a study ran on.
pub fn host_json() -> Json {
    let u = rustix::system::uname();
    let s = |c: &std::ffi::CStr| c.to_string_lossy().into_owned();
    json!({
        "hostname": s(u.nodename()),
        "kernel": s(u.release()),
        "kernel_build": s(u.version()),
        "machine": s(u.machine()),
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "iotrial_version": env!("CARGO_PKG_VERSION"),
    })
}

/// One study's results directory.
#[derive(Debug, Clone)]
pub struct ResultsDir {
    pub root: PathBuf,
}

impl ResultsDir {
    /// Creates `<out>/<name>-<stamp>/` (with a numeric suffix if it exists already).
    pub fn create(out: &Path, name: &str) -> std::io::Result<ResultsDir> {
        ResultsDir::create_part(out, name, None)
    }

    /// Creates `<out>/<name>-<stamp>[-<part>]/` (with a numeric suffix if it exists already):
    /// `part` names the shard or trial a run of part of a study holds (`shard2of3`).
    pub fn create_part(out: &Path, name: &str, part: Option<&str>) -> std::io::Result<ResultsDir> {
        std::fs::create_dir_all(out)?;
        let mut base = format!("{name}-{}", utc_stamp(SystemTime::now()));
        if let Some(p) = part {
            base = format!("{base}-{p}");
        }
        for i in 0..1000 {
            let dir = if i == 0 {
                out.join(&base)
            } else {
                out.join(format!("{base}.{i}"))
            };
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(ResultsDir { root: dir }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::other(
            "too many results directories with the same timestamp",
        ))
    }

    /// Opens an existing results directory.
    pub fn open(root: &Path) -> ResultsDir {
        ResultsDir {
            root: root.to_path_buf(),
        }
    }

    /// Final path of a trial's directory.
    pub fn trial_dir(&self, stack: &str, workload: &str, repeat: usize) -> PathBuf {
        self.root
            .join("trials")
            .join(stack)
            .join(workload)
            .join(format!("r{repeat}"))
    }

    /// A fresh temporary directory beside the trial's final one, to write into.
    pub fn begin_trial(
        &self,
        stack: &str,
        workload: &str,
        repeat: usize,
    ) -> std::io::Result<PathBuf> {
        let fin = self.trial_dir(stack, workload, repeat);
        let tmp = fin.with_file_name(format!("r{repeat}.partial"));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp)?;
        Ok(tmp)
    }

    /// Renames a finished trial's temporary directory to its final name.
    pub fn commit_trial(
        &self,
        tmp: &Path,
        stack: &str,
        workload: &str,
        repeat: usize,
    ) -> std::io::Result<PathBuf> {
        let fin = self.trial_dir(stack, workload, repeat);
        let _ = std::fs::remove_dir_all(&fin);
        std::fs::rename(tmp, &fin)?;
        Ok(fin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trial_is_renamed_when_complete() {
        let out = tempfile::tempdir().unwrap();
        let r = ResultsDir::create(out.path(), "dvr").unwrap();
        let tmp = r.begin_trial("dir", "dvr", 1).unwrap();
        assert!(!r.trial_dir("dir", "dvr", 1).exists());
        std::fs::write(tmp.join("result.json"), "{}").unwrap();
        let fin = r.commit_trial(&tmp, "dir", "dvr", 1).unwrap();
        assert!(fin.join("result.json").exists() && !tmp.exists());
    }
}
