//! A fio job file run by the real binary on a `dir:` target: its result.json and its trial's
//! directory.

use super::figures::results_root;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Writes job-file `text` as `work/name` and runs it with `work` as the working directory, on
/// a `dir:` target in `work/target`, results in `work/out-NAME`; its result.json and trial
/// directory. Panics unless the run succeeds.
pub fn run_job_file(work: &Path, name: &str, text: &str) -> (Value, PathBuf) {
    let (target, out) = (work.join("target"), work.join(format!("out-{name}")));
    std::fs::create_dir_all(&target).unwrap();
    std::fs::write(work.join(name), text).unwrap();
    let _ = std::fs::remove_dir_all(&out);
    let a = assert_cmd::Command::cargo_bin("iotrial")
        .unwrap()
        .current_dir(work)
        .args(["run", &format!("fio:{name}"), "--json", "--monitor", "none"])
        .arg("--target")
        .arg(format!("dir:{}", target.display()))
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    (doc, results_root(&out).join("trials/dir/job/r1"))
}
