//! Runs `iotrial study` for real: a quick two-stack study on images (root) whose result.json
//! files hold the mount options the kernel applied, and a study killed in its second trial and
//! resumed, which releases what the killed run left and reruns only what was missing (no root:
//! directory stacks).

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn results_root(out: &Path) -> PathBuf {
    std::fs::read_dir(out)
        .unwrap()
        .flatten()
        .find(|e| e.path().join("manifest.json").exists())
        .expect("a results directory")
        .path()
}

/// Every trial of the manifest in `root` is done.
fn assert_all_done(root: &Path) {
    let m = read_json(&root.join("manifest.json"));
    let trials = m["trials"].as_array().unwrap();
    assert!(trials.iter().all(|t| t["status"] == "done"), "{m}");
}

/// Runs `iotrial study STUDY --out OUT --resume`, expecting success; its standard output.
fn resumed(work: &Path, study: &Path, out: &Path) -> String {
    let a = iotrial(work)
        .arg("study")
        .arg(study)
        .arg("--out")
        .arg(out)
        .arg("--resume")
        .assert()
        .success();
    String::from_utf8_lossy(&a.get_output().stdout).into_owned()
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn quick_two_stack_study_on_images_reads_mount_options_back() {
    if !ready_for_stacks(
        "quick_two_stack_study_on_images_reads_mount_options_back",
        &["mkfs.ext4", "mkfs.xfs"],
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let study = work.path().join("two.toml");
    std::fs::write(
        &study,
        r#"name = "two"
repeats = 1
description = "ext4 writeback vs xfs"
device = "image:size=512MiB"
[[workloads]]
kind = "dvr"
set = { samples = "24", region_size = "16MiB", io_size = "64KiB", window = "50ms" }
[[stacks]]
name = "ext4-wb"
fs = "ext4"
mount = "noatime,data=writeback"
scheduler = "mq-deadline"
[[stacks]]
name = "xfs"
fs = "xfs"
scheduler = "mq-deadline"
"#,
    )
    .unwrap();
    let out = work.path().join("out");
    let said = study_succeeds(work.path(), &study, &out);
    assert!(
        said.contains("ext4-wb") && said.contains("xfs") && said.contains("report: "),
        "{said}"
    );
    let root = results_root(&out);
    let ext4 = read_json(&root.join("trials/ext4-wb/dvr/r1/result.json"));
    let applied = ext4["stack"]["mount"]["applied"].as_str().unwrap();
    assert!(
        applied.contains("noatime") && applied.contains("data=writeback"),
        "{applied}"
    );
    assert_eq!(ext4["stack"]["mount"]["fs_type"], "ext4");
    assert!(ext4["stack"]["mkfs"]["version"]
        .as_str()
        .unwrap()
        .contains("mke2fs"));
    assert_eq!(ext4["stack"]["scheduler"][0]["active"], "mq-deadline");
    assert!(ext4["stack"]["devices"][0]["size_bytes"].as_u64().unwrap() == 512 << 20);
    let xfs = read_json(&root.join("trials/xfs/dvr/r1/result.json"));
    assert_eq!(xfs["stack"]["mount"]["fs_type"], "xfs");
    assert!(xfs["stack"]["mkfs"]["command"]
        .as_str()
        .unwrap()
        .starts_with("mkfs.xfs -f"));
    assert_all_done(&root);
    assert!(
        root.join("study.toml").exists()
            && root.join("report.html").exists()
            && root.join("report.md").exists()
    );
    assert!(loops_under(work.path()).is_empty() && mounts_under(work.path()).is_empty());
}

#[test]
fn killed_study_resumes_without_rerunning_finished_trials() {
    let work = tempfile::tempdir().unwrap();
    let data = work.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let study = work.path().join("three.toml");
    std::fs::write(
        &study,
        format!(
            "name = \"three\"\nrepeats = 1\n[[workloads]]\nkind = \"dvr\"\nset = {{ samples = \"4000\", region_size = \"8MiB\", io_size = \"4KiB\", window = \"50ms\" }}\n{}",
            dir_stacks(&data, &["a", "b", "c"])
        ),
    )
    .unwrap();
    let out = work.path().join("out");
    let (study_s, out_s) = (study.display().to_string(), out.display().to_string());
    let mut child = spawn_iotrial(work.path(), &["study", &study_s, "--out", &out_s]);
    // The kill point: trial a is complete and a later trial is running (its stream files
    // exist in the data directory from its layout until it ends). Stop the study, check that
    // is still so, then kill it: the kill lands inside a trial, whatever the timing.
    let root = loop {
        wait_until("trial a is done and the next trial is running", 120, || {
            results_dir(&out).is_some_and(|r| r.join("trials/a/dvr/r1/result.json").exists())
                && !stream_files_under(&data).is_empty()
        });
        signal(&child, rustix::process::Signal::STOP);
        let root = results_dir(&out).unwrap();
        let last_done = root.join("trials/c/dvr/r1/result.json").exists();
        assert!(!last_done, "the study ended before it could be stopped");
        if !stream_files_under(&data).is_empty() {
            break root;
        }
        // That trial ended between the look and the stop: look again.
        signal(&child, rustix::process::Signal::CONT);
    };
    child.kill().unwrap();
    signal(&child, rustix::process::Signal::CONT);
    let status = reaped(&mut child, 30);
    assert!(!status.success(), "killed");
    let first = root.join("trials/a/dvr/r1/result.json");
    let before = std::fs::metadata(&first).unwrap().modified().unwrap();
    let said = resumed(work.path(), &study, &out);
    assert!(
        !said.contains("a/dvr/r1:"),
        "finished trial not rerun: {said}"
    );
    assert_eq!(
        std::fs::metadata(&first).unwrap().modified().unwrap(),
        before,
        "finished trial untouched"
    );
    for s in ["a", "b", "c"] {
        assert!(
            root.join(format!("trials/{s}/dvr/r1/result.json")).exists(),
            "{s} done after resume"
        );
    }
    assert_all_done(&root);
    let partial: Vec<_> = walk(&root)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".partial"))
        .collect();
    assert!(partial.is_empty(), "{partial:?}");
    assert_eq!(
        std::fs::read_dir(&data).unwrap().count(),
        0,
        "stream files removed"
    );
}

#[test]
fn dry_run_prints_commands_and_runs_nothing() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let a = iotrial(work.path())
        .args(["study", "dvr", "--quick", "--dry-run", "--out"])
        .arg(&out)
        .assert()
        .success();
    let said = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    for needle in [
        "losetup --find --show --direct-io=on",
        "mkfs.ext4 -F -q -T largefile4",
        "mount -t ext4 -o noatime,data=writeback,commit=1",
        "mkfs.xfs -f",
        "sfdisk",
        "echo mq-deadline > /sys/block/",
    ] {
        assert!(said.contains(needle), "dry run shows '{needle}':\n{said}");
    }
    assert!(!out.exists(), "no results directory");
    assert!(loops_under(work.path()).is_empty() && mounts_under(work.path()).is_empty());
}

#[test]
fn without_root_stacks_are_skipped_with_the_reason() {
    // Run as an unprivileged user: as root via setpriv, else as we are.
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let bin = assert_cmd::cargo::cargo_bin("iotrial");
    let mut cmd = if rustix::process::geteuid().is_root() {
        if !ready(
            "without_root_stacks_are_skipped_with_the_reason",
            &[Need::Tool("setpriv")],
        ) {
            return;
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(work.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin);
        c
    } else {
        std::process::Command::new(&bin)
    };
    cmd.env("IOTRIAL_LEDGER_DIR", work.path().join("ledger"))
        .env("TMPDIR", work.path());
    let o = cmd
        .args([
            "study",
            "dvr",
            "--quick",
            "--only",
            "ext4,host-dir",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stdout).into_owned();
    if said.is_empty() && String::from_utf8_lossy(&o.stderr).contains("Permission denied") {
        skip(
            "without_root_stacks_are_skipped_with_the_reason",
            "the unprivileged user cannot run the test binary here",
        );
        return;
    }
    assert!(
        o.status.success(),
        "{said}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        said.contains("ext4/dvr/r1: skipped: stack needs root"),
        "{said}"
    );
    assert!(
        said.contains("host-dir/dvr/r1: records guaranteed"),
        "{said}"
    );
}

/// The results directory of the study under `out`, once it exists.
fn results_dir(out: &Path) -> Option<PathBuf> {
    std::fs::read_dir(out)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir())
}

/// A study of two dvr trials on a directory (no root) that pauses `pause` between trials.
fn paused_study(work: &Path, pause: &str) -> PathBuf {
    let data = work.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let study = work.join("paused.toml");
    std::fs::write(
        &study,
        format!(
            "name = \"paused\"\nrepeats = 1\npause = \"{pause}\"\n[[workloads]]\nkind = \"dvr\"\nset = {{ samples = \"16\", region_size = \"4MiB\", io_size = \"4KiB\", window = \"50ms\" }}\n{}",
            dir_stacks(&data, &["a", "b"])
        ),
    )
    .unwrap();
    study
}

#[test]
fn a_study_pauses_after_a_trial_and_records_the_idle_time() {
    let work = tempfile::tempdir().unwrap();
    let study = paused_study(work.path(), "300ms");
    let out = work.path().join("out");
    let said = study_succeeds(work.path(), &study, &out);
    let pausing: Vec<&str> = said.lines().filter(|l| l.starts_with("pausing")).collect();
    assert_eq!(
        pausing.len(),
        1,
        "one pause, between the two trials: {said}"
    );
    assert!(pausing[0].contains("before b/dvr/r1"), "{said}");
    let root = results_root(&out);
    let a = read_json(&root.join("trials/a/dvr/r1/result.json"));
    assert!(a["trial"].get("idle_before_s").is_none(), "{}", a["trial"]);
    let b = read_json(&root.join("trials/b/dvr/r1/result.json"));
    // A lower bound only: the pause is never shorter than asked.
    let idle = b["trial"]["idle_before_s"].as_f64().unwrap();
    assert!(idle >= 0.3, "{idle}");
    let toml = std::fs::read_to_string(root.join("study.toml")).unwrap();
    assert!(toml.contains("pause = \"300ms\""), "{toml}");
}

#[test]
fn a_study_stopped_in_its_pause_keeps_its_trials_and_resumes_without_one() {
    use std::io::BufRead;
    let work = tempfile::tempdir().unwrap();
    let study = paused_study(work.path(), "1h");
    let out = work.path().join("out");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iotrial"))
        .env("IOTRIAL_LEDGER_DIR", work.path().join("ledger"))
        .env("TMPDIR", work.path())
        .arg("study")
        .arg(&study)
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Synchronise on the line the study prints as its pause begins.
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut said = String::new();
    for l in lines.by_ref() {
        let l = l.unwrap();
        said.push_str(&l);
        said.push('\n');
        if l.starts_with("pausing") {
            break;
        }
    }
    assert!(said.contains("pausing 3600.0 s before b/dvr/r1"), "{said}");
    signal(&child, rustix::process::Signal::INT);
    let status = reaped(&mut child, 60);
    assert_eq!(status.code(), Some(130), "interrupted: {said}");
    let root = results_root(&out);
    let m = read_json(&root.join("manifest.json"));
    let status_of = |id: &str| {
        m["trials"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["id"] == id)
            .map(|t| t["status"].clone())
    };
    assert_eq!(status_of("a/dvr/r1"), Some("done".into()), "{m}");
    assert_eq!(status_of("b/dvr/r1"), Some("pending".into()), "{m}");
    // Resumed, the first trial it runs has nothing to pause after.
    let said = resumed(work.path(), &study, &out);
    assert!(
        !said.contains("pausing") && said.contains("b/dvr/r1:"),
        "{said}"
    );
    assert_all_done(&root);
    let b = read_json(&root.join("trials/b/dvr/r1/result.json"));
    assert!(b["trial"].get("idle_before_s").is_none(), "{}", b["trial"]);
}
