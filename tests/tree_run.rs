//! The `tree` workload with the real binary: on an emulated SMR disk the create, remove and
//! cleaning figures, the phases in seed 002's order, every directory found again by the
//! removal's walk and journal writes when the tree is made; on the same drive without shingles
//! less cleaning; on a directory, without root, no cleaning time and why, and the file-server
//! mix; and an ext4 made
//! with too few inodes refused before the create phase, with the numbers; an idle wait that
//! reaches `idle_max` says so; on a disk the user named, the idle phase reads it until it is
//! calm, and on an image it does not.

mod common;

use common::*;
use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::path::Path;

fn bin() -> String {
    assert_cmd::cargo::cargo_bin("iotrial")
        .display()
        .to_string()
}

fn run_tree(work: &Path, target: &str, extra: &[&str]) -> Value {
    let a = iotrial(work)
        .args(["run", "tree", "--json", "--fs", "ext4", "--out"])
        .arg(work.join("out"))
        .args(["--target", target])
        .args(extra)
        .args([
            "--set",
            "dirs=2000",
            "--set",
            "threads=4",
            "--set",
            "depth=5",
        ])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    released(work);
    doc
}

/// Waits until nothing the run made under `work` is attached or mounted (a loop device
/// another process still has open detaches when it is closed).
fn released(work: &Path) {
    wait_until("the run's loop devices and mounts are released", 30, || {
        loops_under(work).is_empty() && mounts_under(work).is_empty()
    });
}

/// The phase named `name` of a result.
fn phase<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no phase {name}: {}", doc["phases"]))
}

/// The kinds of a result's phases, in order.
fn kinds(doc: &Value) -> Vec<&str> {
    let phases = doc["phases"].as_array().unwrap();
    phases.iter().map(|p| p["kind"].as_str().unwrap()).collect()
}

#[test]
fn tree_on_emulated_smr_and_cmr_disks() {
    if !ready_to_emulate(
        "tree_on_emulated_smr_and_cmr_disks",
        &["losetup", "mkfs.ext4", "dumpe2fs", "debugfs"],
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    // The drive waits a minute of idle time (6 s of the host's at scale 10) before it cleans,
    // so its cache is still full when the idle phase begins, however slowly the host gets
    // through the phases before it.
    let smr = run_tree(
        work.path(),
        "emu:smr,size=2GiB,cache=32MiB,idle=60s,scale=10",
        &[],
    );
    assert_eq!(
        kinds(&smr),
        [
            "prepare",
            "idle",
            "stream",
            "sync",
            "drop_caches",
            "idle",
            "stream",
            "sync",
            "idle"
        ]
    );
    // The creation began on a disk done with what mkfs left it: the model said when.
    assert_eq!(phase(&smr, "idle_mkfs")["idle"]["how"], "device");
    assert!(
        smr["verdict"]["cleaning_after_mkfs_s"].as_f64().is_some(),
        "{}",
        smr["verdict"]
    );
    let v = &smr["verdict"];
    assert!(v["create_s"].as_f64().unwrap() > 0.0, "{v}");
    assert!(v["remove_s"].as_f64().unwrap() > 0.0, "{v}");
    // The tree on the disk: the creation and the sync after it.
    let sync = phase(&smr, "sync_create");
    let sync_s = sync["end_s"].as_f64().unwrap() - sync["start_s"].as_f64().unwrap();
    let synced = v["create_synced_s"].as_f64().unwrap();
    assert!(
        (synced - v["create_s"].as_f64().unwrap() - sync_s).abs() < 1e-5,
        "{v}"
    );
    let smr_cleaning = v["cleaning_after_create_s"].as_f64().unwrap();
    assert!(smr_cleaning > 0.0, "{v}");
    assert_eq!(v["dirs_created"], 2000);
    assert_eq!(v["errors"], 0);
    // A tree this small fits one journal transaction, committed by the sync (20,000
    // directories commit in the create phase itself).
    let journal: u64 = v["io_by_class"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["phase"] == "create" || p["phase"] == "sync_create")
        .map(|p| p["journal_write_bytes"].as_u64().unwrap())
        .sum();
    assert!(journal > 0, "{v}");
    assert_eq!(v["io_classes_from"], "device log");
    assert!(v["smr"]["cache_write_bytes"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(phase(&smr, "idle_create")["idle"]["how"], "device");
    // Nothing is in service during the idle phase, so the device's clock is moved over the
    // cleaning rather than the phase waiting it out: the skip ends when the device went idle.
    // (Only a host that took over 6 s for the sync and the cache drop would find the drive
    // already cleaning, and then idle before the phase: nothing to skip.)
    let idle = &phase(&smr, "idle_create")["idle"];
    let device_idle = idle["device_idle_s"].as_f64().unwrap();
    match idle["fast_forward_s"].as_f64() {
        Some(skipped) => assert!((skipped - device_idle).abs() < 0.05, "{idle}"),
        None => assert!(device_idle <= 0.0, "{idle}"),
    }

    let work = tempfile::tempdir().unwrap();
    let cmr = run_tree(work.path(), "emu:hdd,size=2GiB,scale=10", &[]);
    let v = &cmr["verdict"];
    assert_eq!(v["dirs_created"], 2000);
    assert!(v["smr"].is_null());
    // A conventional disk has no cleaning to do: what is left after the host's last request
    // is its write-back buffer, far less than the shingled disk's band rewrites.
    assert!(
        v["cleaning_after_create_s"].as_f64().unwrap() < smr_cleaning,
        "{v}"
    );
}

/// A disk the user named (`block:`) cannot report its cleaning, and diskstats go quiet while
/// it cleans: the idle phase then reads it until it answers reads after an idle at once, and
/// says for how long it found it busy. An SMR disk served as a plain block device, with bands
/// slow to clean (64 MiB each) and a short quiet time, is still cleaning when diskstats go
/// quiet. On an image (a loop device this run made) nothing is read.
#[test]
fn an_idle_phase_reads_a_named_disk_until_it_is_calm() {
    if !ready_to_emulate(
        "an_idle_phase_reads_a_named_disk_until_it_is_calm",
        &["losetup", "mkfs.ext4"],
    ) {
        return;
    }
    let served = Served::start(
        &bin(),
        "emu:smr,size=2GiB,cache=32MiB,band=64MiB,idle=300ms",
    );
    let dev = served.device();
    let work = tempfile::tempdir().unwrap();
    let doc = run_tree(
        work.path(),
        &format!("block:{dev}"),
        &["--wipe", &dev, "--set", "idle_quiet=1s"],
    );
    let stats = served.stop();
    // mkfs's writes are what the disk is still cleaning when diskstats go quiet: the wait
    // before the creation finds it busy.
    let idle = &phase(&doc, "idle_mkfs")["idle"];
    assert_eq!(idle["how"], "diskstats, then reads", "{idle}");
    assert!(idle["busy_s"].as_f64().unwrap() > 0.0, "{idle} {stats}");
    assert!(
        idle["note"].as_str().unwrap().contains("at least"),
        "{idle}"
    );
    assert!(idle["cleaning_s"].is_null(), "{idle}");
    assert_eq!(
        phase(&doc, "idle_remove")["idle"]["how"],
        "diskstats, then reads"
    );
    assert_eq!(
        phase(&doc, "idle_create")["idle"]["how"],
        "diskstats, then reads"
    );
    let warnings = doc["warnings"].to_string();
    assert!(warnings.contains("idle_create: a disk hides"), "{warnings}");

    let work = tempfile::tempdir().unwrap();
    let img = work.path().join("disk.img");
    let doc = run_tree(
        work.path(),
        &format!("image:{},size=1GiB", img.display()),
        &["--set", "idle_quiet=1s"],
    );
    let idle = &phase(&doc, "idle_create")["idle"];
    assert_eq!(idle["how"], "diskstats", "{idle}");
    assert!(idle["busy_s"].is_null(), "{idle}");
}

#[test]
fn an_idle_wait_that_hits_its_cap_says_so() {
    if !ready_to_emulate(
        "an_idle_wait_that_hits_its_cap_says_so",
        &["losetup", "mkfs.ext4"],
    ) {
        return;
    }
    // The SMR disk waits a minute of idle time before it cleans: a cap of 100 ms is reached
    // with its cleaning still pending.
    let work = tempfile::tempdir().unwrap();
    let target = "emu:smr,size=2GiB,cache=32MiB,idle=60s,scale=10";
    let doc = run_tree(work.path(), target, &["--set", "idle_max=100ms"]);
    let capped: Vec<&Value> = doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["idle"]["capped"] == true)
        .collect();
    assert!(!capped.is_empty(), "{}", doc["phases"]);
    assert!(
        doc["warnings"].to_string().contains("idle_max"),
        "{}",
        doc["warnings"]
    );
}

#[test]
fn tree_on_a_directory_without_root_says_why_there_is_no_cleaning_time() {
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let root = rustix::process::geteuid().is_root();
    if root {
        // Run as nobody, in directories nobody may write.
        for d in [work.path(), target.as_path()] {
            std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o777))
                .unwrap();
        }
    }
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("iotrial"));
    cmd.env("IOTRIAL_LEDGER_DIR", work.path().join("ledger"))
        .env("TMPDIR", work.path())
        .args(["run", "tree", "--json", "--out"])
        .arg(work.path().join("out"))
        .arg("--target")
        .arg(format!("dir:{}", target.display()))
        .args([
            "--set",
            "dirs=200",
            "--set",
            "threads=2",
            "--set",
            "depth=3",
        ])
        .args([
            "--set",
            "fileserver_duration=1s",
            "--set",
            "fileserver_files=20",
        ]);
    if root {
        cmd.uid(65534).gid(65534);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = &doc["verdict"];
    assert_eq!(v["dirs_created"], 200);
    assert!(v["cleaning_after_create_s"].is_null());
    let warnings = doc["warnings"].to_string();
    assert!(warnings.contains("no cleaning time"), "{warnings}");
    assert!(warnings.contains("drop_caches"), "{warnings}");
    let mut with_fileserver = vec!["prepare", "idle"];
    with_fileserver.extend(["stream", "sync", "idle"].repeat(3));
    assert_eq!(kinds(&doc), with_fileserver);
    // filebench's fileserver loop ran, none of its operations failing.
    assert!(v["fileserver_ops_s"].as_f64().unwrap() > 0.0, "{v}");
    assert_eq!(v["errors"], 0);
}

#[test]
fn too_few_inodes_fail_before_the_create_phase() {
    if !ready_for_stacks(
        "too_few_inodes_fail_before_the_create_phase",
        &["mkfs.ext4"],
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let a = iotrial(work.path())
        .args(["run", "tree", "--fs", "ext4", "--mkfs", "-N 1024", "--out"])
        .arg(work.path().join("out"))
        .args(["--target", "image:size=128MiB", "--set", "dirs=5000"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(err.contains("free inodes") && err.contains("5017"), "{err}");
    assert!(err.contains("-N "), "{err}");
    assert!(
        !work.path().join("out").exists(),
        "nothing was run or written"
    );
    released(work.path());
}

#[test]
fn a_tree_on_a_raw_layout_is_the_users_mistake_said_once() {
    if !ready_for_stacks(
        "a_tree_on_a_raw_layout_is_the_users_mistake_said_once",
        &["losetup"],
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let a = iotrial(work.path())
        .args(["run", "tree", "--out"])
        .arg(work.path().join("out"))
        .args(["--target", "image:size=64MiB", "--set", "dirs=100"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert_eq!(err.matches("needs a filesystem").count(), 1, "{err}");
    released(work.path());
}
