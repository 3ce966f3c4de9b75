//! `iotrial launch slurm` on a real one-node Slurm cluster started for the test
//! (scripts/slurm-local.sh: munged, slurmctld and slurmd as root): a six-trial study on
//! emulated disks runs as a job array, one task per trial, and a merge job after it; one task
//! is cancelled mid-trial (scancel), the merge names its trial missing, `launch slurm --resume`
//! submits only that trial again with a new merge, and the final report is complete. Nothing is
//! left: no loop device, mount, FUSE server or process of the trials, no Slurm or munge daemon.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// `iotrial launch slurm ...` with the test's ledger and temporary files, against `slurm`;
/// its standard output.
fn launch(slurm: &Slurm, work: &Path, args: &[&str]) -> String {
    let o = slurm
        .command(assert_cmd::cargo::cargo_bin("iotrial"))
        .env("IOTRIAL_LEDGER_DIR", work.join("ledger"))
        .env("TMPDIR", work.join("tmp"))
        .args(["launch", "slurm"])
        .args(args)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    said
}

/// The job ids of the launch's last submission.
fn last_jobs(dir: &Path) -> (String, String) {
    let r = read_json(&dir.join("launch.json"));
    let s = r["submissions"].as_array().unwrap().last().unwrap().clone();
    (
        s["trials_job"].as_str().unwrap().to_string(),
        s["merge_job"].as_str().unwrap().to_string(),
    )
}

/// Waits until the cluster has none of `jobs` left (a deadlock guard, not a timing test).
fn wait_jobs(slurm: &Slurm, jobs: &[String]) {
    wait_until("the jobs leave the queue", 900, || {
        slurm.queued(jobs).is_empty()
    });
}

/// The results directory of shard `k` of `n` under the launch's shards/.
fn shard_dir(dir: &Path, k: usize, n: usize) -> Option<PathBuf> {
    std::fs::read_dir(dir.join("shards"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(&format!("-shard{k}of{n}")))
}

/// Processes whose command line or environment names `dir`.
fn processes_under(dir: &Path) -> Vec<String> {
    let d = dir.display().to_string();
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.chars().all(|c| c.is_ascii_digit()) || name == std::process::id().to_string() {
            continue;
        }
        let read = |f: &str| std::fs::read(e.path().join(f)).unwrap_or_default();
        let (cmd, env) = (read("cmdline"), read("environ"));
        if String::from_utf8_lossy(&cmd).contains(&d) || String::from_utf8_lossy(&env).contains(&d)
        {
            v.push(format!(
                "{name}: {}",
                String::from_utf8_lossy(&cmd).replace('\0', " ")
            ));
        }
    }
    v
}

#[test]
fn a_study_runs_as_a_job_array_and_a_cancelled_trial_is_resumed() {
    if !ready_for_slurm(
        "a_study_runs_as_a_job_array_and_a_cancelled_trial_is_resumed",
        &[
            Need::Loop,
            Need::Fuse,
            Need::Tool("mkfs.ext4"),
            Need::Tool("mkfs.xfs"),
        ],
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    std::fs::create_dir_all(w.join("tmp")).unwrap();
    let slurm = Slurm::start(&w.join("slurm"));
    let study = w.join("six.toml");
    std::fs::write(
        &study,
        r#"name = "six"
repeats = 2
device = "emu:hdd,size=2GiB,scale=10"
[[workloads]]
kind = "dvr"
set = { samples = "150", region_size = "16MiB", io_size = "64KiB", window = "100ms" }
[[stacks]]
name = "raw"
layout = "partitions"
[[stacks]]
name = "ext4"
fs = "ext4"
[[stacks]]
name = "xfs"
fs = "xfs"
"#,
    )
    .unwrap();
    let (study_s, out) = (study.display().to_string(), w.join("out"));
    let out_s = out.display().to_string();
    let said = launch(
        &slurm,
        w,
        &[
            &study_s,
            "--out",
            &out_s,
            "--max-parallel",
            "1",
            "--time",
            "30:00",
            "--submit",
        ],
    );
    assert!(said.contains("submitted: trials job"), "{said}");
    let dir = PathBuf::from(
        said.lines()
            .find_map(|l| l.strip_prefix("launch directory: "))
            .unwrap(),
    );
    let report = said
        .lines()
        .find_map(|l| l.strip_prefix("report (once merged): "))
        .map(PathBuf::from)
        .unwrap();
    assert_eq!(report, dir.join("merged/report.html"));
    let (array, merge) = last_jobs(&dir);
    let script = std::fs::read_to_string(dir.join("trials.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-5%1") && script.contains("#SBATCH --exclusive"));

    // Task 2 runs xfs/dvr/r1 (position 2 of the round-robin order: raw, ext4, xfs, then
    // repeat 2): cancel it once its streams are writing.
    wait_until("task 2's trial is running", 600, || {
        // The manifest is written (renamed into place) just after the directory is made.
        let manifest = shard_dir(&dir, 3, 6).map(|d| d.join("manifest.json"));
        let running = manifest
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .is_some_and(|m| m["trials"][0]["status"] == "running");
        running && stream_files_under(&w.join("tmp")).len() == 10
    });
    let st = slurm
        .command("scancel")
        .arg(format!("{array}_2"))
        .status()
        .unwrap();
    assert!(st.success());
    wait_jobs(&slurm, &[array.clone(), merge.clone()]);

    // The merge ran after the array and names the cancelled trial.
    let m = read_json(&dir.join("merged/manifest.json"));
    let status = |m: &Value, id: &str| {
        m["trials"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(status(&m, "xfs/dvr/r1"), "pending", "{m}");
    for id in [
        "raw/dvr/r1",
        "raw/dvr/r2",
        "ext4/dvr/r1",
        "ext4/dvr/r2",
        "xfs/dvr/r2",
    ] {
        assert_eq!(status(&m, id), "done", "{id}: {m}");
    }
    let shard3 = shard_dir(&dir, 3, 6).unwrap();
    assert_eq!(
        read_json(&shard3.join("manifest.json"))["trials"][0]["status"],
        "pending",
        "the cancelled trial was stopped cleanly and left to run again"
    );
    assert!(loops_under(w).is_empty() && mounts_under(w).is_empty());

    // --resume submits the one trial no task finished, and a merge after it.
    let said = launch(
        &slurm,
        w,
        &[&study_s, "--out", &out_s, "--resume", "--submit"],
    );
    assert!(said.contains("(tasks 2), 1 trial(s)"), "{said}");
    let (array2, merge2) = last_jobs(&dir);
    assert_ne!(array2, array);
    wait_jobs(&slurm, &[array2.clone(), merge2]);
    let logs: Vec<String> = std::fs::read_dir(dir.join("logs"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(&format!("job{array2}")))
        .collect();
    assert_eq!(
        logs,
        [format!("trial-2-job{array2}.out")],
        "only task 2 ran again"
    );
    let m = read_json(&dir.join("merged/manifest.json"));
    assert!(
        m["trials"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["status"] == "done"),
        "{m}"
    );
    assert!(report.exists(), "the report is where the launch said");
    let md = std::fs::read_to_string(dir.join("merged/report.md")).unwrap();
    assert!(!md.contains("did not finish"), "{md}");
    for stack in ["raw", "ext4", "xfs"] {
        assert!(
            md.contains(&format!("| {stack} |")) || md.contains(&format!("★ {stack} |")),
            "{stack}: {md}"
        );
    }

    slurm.stop();
    assert!(
        slurm.daemons_alive().is_empty(),
        "{:?}",
        slurm.daemons_alive()
    );
    assert!(loops_under(w).is_empty(), "{:?}", loops_under(w));
    assert!(mounts_under(w).is_empty(), "{:?}", mounts_under(w));
    assert!(processes_under(w).is_empty(), "{:?}", processes_under(w));
}
