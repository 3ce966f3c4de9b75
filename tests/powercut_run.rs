//! Power-cut trials with the real binary: a cut during a dvr recording on an emulated disk,
//! its durability verdict in result.json (mount, checker, blocks, the drive's losses) and the
//! checker's output kept; what cannot be cut refused with exit status 2 before anything is
//! made (a real disk, a directory, an image, a cut outside its phase) or when the phase ends
//! before its cut; a cut before the stream's files reached the disk counts them lost and the
//! trial still ends; and a cut trial stopped by SIGINT or SIGKILL, during the recording or the
//! recovery, leaving no loop device, mount, FUSE server or process in D state. The root tests
//! skip with the reason when the host cannot emulate (a failure under `CI`).

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

/// A dvr recording that outlasts any cut here: small I/Os over small regions.
const RECORD: &[&str] = &[
    "--set",
    "samples=1000000",
    "--set",
    "region_size=32MiB",
    "--set",
    "io_size=64KiB",
    "--set",
    "window=200ms",
];

const DISK: &str = "emu:hdd,size=2GiB,stale=true";

/// The processes of the run whose temporary files are under `work` (the run, its device
/// server, the tools they started: they inherit its TMPDIR), with their state letter.
fn processes_of(work: &Path) -> Vec<(char, String)> {
    let tmpdir = format!("TMPDIR={}", work.display());
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let p = e.path();
        let env = std::fs::read(p.join("environ")).unwrap_or_default();
        if !env.split(|&b| b == 0).any(|v| v == tmpdir.as_bytes()) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(p.join("stat")) else {
            continue;
        };
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next())
            .and_then(|s| s.chars().next());
        out.push((state.unwrap_or('?'), stat));
    }
    out
}

/// No loop device, mount or FUSE connection of the run is left, and none of its processes
/// is left, in D state or any other.
fn assert_nothing_left(work: &Path, loops: &[(String, String)]) {
    wait_until("everything the run made is released", 20, || {
        leftovers(work, loops).is_empty()
    });
    assert!(fuse_connections_under(work).is_empty());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !processes_of(work).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "processes of the run left (state, stat): {:?}",
            processes_of(work)
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_cut_trial_judges_what_the_stack_kept() {
    if !ready_to_emulate(
        "a_cut_trial_judges_what_the_stack_kept",
        &["losetup", "mkfs.ext4"],
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let results = tempfile::tempdir().unwrap();
    let out = results.path();
    let a = iotrial(work.path())
        .args(["run", "dvr", "--json", "--out"])
        .arg(out)
        .args([
            "--target",
            DISK,
            "--fs",
            "ext4",
            "--set",
            "powercut=after:60",
        ])
        .args(RECORD)
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let d = &doc["durability"];
    // Every key of it documented in docs/result-format.md.
    let (undocumented, _) = keys::compare_keys(&doc, |_| false);
    let undocumented: Vec<&String> = undocumented
        .iter()
        .filter(|k| k.starts_with("durability") || k.starts_with("params.powercut"))
        .collect();
    assert!(undocumented.is_empty(), "undocumented: {undocumented:?}");
    assert_eq!(d["phase"], "run");
    assert_eq!(d["in_flight"], "torn");
    assert_eq!(d["mount_ok"], true, "{d}");
    assert_eq!(d["checker_clean"], true, "{d}");
    assert!(d["replay_s"].as_f64().unwrap() > 0.0);
    let b = &d["blocks"];
    for k in [
        "intact",
        "lost_older",
        "lost_zeros",
        "torn",
        "foreign",
        "stale",
    ] {
        assert!(b[k].is_u64(), "blocks.{k}: {b}");
    }
    assert_eq!(
        d["streams"].as_array().unwrap().len(),
        8,
        "one per recorder"
    );
    // What the drive lost, the acknowledged part at most all of it.
    let dev = &d["device"];
    assert!(dev["acked_bytes_lost"].as_u64() <= dev["bytes_lost"].as_u64());
    assert!(d["summary"].as_str().unwrap().starts_with("cut "));
    let cut = doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["kind"] == "powercut")
        .expect("a powercut phase");
    assert_eq!(cut["measured"]["unmount"], "clean");
    let dir = walk(out)
        .into_iter()
        .find(|p| p.ends_with("r1"))
        .expect("the trial's directory");
    let checker = std::fs::read_to_string(dir.join("powercut.checker.txt")).unwrap();
    assert!(checker.contains("Pass 5"), "{checker}");
    assert_nothing_left(work.path(), &[]);
}

#[test]
fn what_cannot_be_cut_is_refused_with_the_reason() {
    let work = tempfile::tempdir().unwrap();
    for (target, why) in [
        ("block:/dev/iotrial-none", "real disk"),
        ("dir:/var/tmp", "directory"),
        ("image:size=1GiB", "loop device"),
    ] {
        let a = iotrial(work.path())
            .args(["run", "dvr", "--target", target, "--set", "powercut=5s"])
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
        assert!(
            err.contains("powercut") && err.contains(why),
            "{target}: {err}"
        );
    }
    // A cut after the phase it cuts has ended.
    let a = iotrial(work.path())
        .args(["run", "stream", "--target", DISK, "--fs", "ext4"])
        .args(["--set", "duration=2s", "--set", "powercut=5s"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(err.contains("not inside phase"), "{err}");
    let a = iotrial(work.path())
        .args(["run", "dvr", "--set", "powercut=soon"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(err.contains("after:N or random:FROM-TO"), "{err}");
    assert!(loops_under(work.path()).is_empty());
}

#[test]
fn a_cut_the_phase_never_reached_is_the_users_input() {
    if !ready_to_emulate(
        "a_cut_the_phase_never_reached_is_the_users_input",
        &["losetup", "mkfs.ext4"],
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let a = iotrial(work.path())
        .args(["run", "dvr", "--target", DISK, "--fs", "ext4"])
        .args(["--set", "samples=8", "--set", "region_size=16MiB"])
        .args(["--set", "io_size=64KiB", "--set", "powercut=600s"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(err.contains("before the cut at 600 s came"), "{err}");
    assert_nothing_left(work.path(), &[]);
}

#[test]
fn a_cut_before_the_files_reach_the_disk_loses_them_and_the_trial_still_ends() {
    if !ready_to_emulate(
        "a_cut_before_the_files_reach_the_disk_loses_them_and_the_trial_still_ends",
        &["losetup", "mkfs.ext4"],
    ) {
        return;
    }
    // Buffered appends on an ext4 that commits its journal once a minute, cut after one
    // second: the directory and files the stream made never reached the disk. The stream
    // workload's final sync then syncs a filesystem that lacks them.
    let work = tempfile::tempdir().unwrap();
    let results = tempfile::tempdir().unwrap();
    let a = iotrial(work.path())
        .args(["run", "stream", "--json", "--out"])
        .arg(results.path())
        .args(["--target", DISK, "--fs", "ext4", "--mount", "commit=60"])
        .args(["--set", "writers=2", "--set", "io_size=64KiB"])
        .args(["--set", "direct=false", "--set", "duration=4s"])
        .args(["--set", "powercut=1s"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let d = &doc["durability"];
    assert_eq!(d["mount_ok"], true, "{d}");
    let streams = d["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 2);
    for s in streams {
        assert_eq!(s["file_missing"], true, "{s}");
    }
    assert!(d["metadata_lost"].as_u64().unwrap() >= 2, "{d}");
    let kinds: Vec<&str> = doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["prepare", "stream", "powercut", "sync"]);
    assert_nothing_left(work.path(), &[]);
}

/// Starts a cut trial in the background (its results in `out`): the cut after `after`
/// writes, on an ext4 whose regions take a while to scan; returns once its stream files exist.
/// Starts a cut trial (its standard error in `log`) and waits until it lays out its files.
fn start_cut_trial(
    work: &Path,
    out: &Path,
    log: &Path,
    after: &str,
) -> (std::process::Child, Vec<(String, String)>) {
    let mut args = vec![
        "run",
        "dvr",
        "--out",
        out.to_str().unwrap(),
        "--target",
        DISK,
        "--fs",
        "ext4",
        "--set",
        after,
    ];
    args.extend(RECORD);
    let mut child = spawn_iotrial_logged(work, &args, log);
    wait_until("the trial lays out its files", 60, || {
        if let Ok(Some(s)) = child.try_wait() {
            panic!("the trial ended early: {s}\n{}", stderr_of(log));
        }
        !stream_files_under(work).is_empty()
    });
    let loops = loop_backings_under(work);
    (child, loops)
}

/// What a trial started by [`start_cut_trial`] wrote to its standard error.
fn stderr_of(log: &Path) -> String {
    std::fs::read_to_string(log).unwrap_or_else(|e| format!("(its stderr unreadable: {e})"))
}

/// The checker's output of the powercut phase exists: the stack is in its recovery.
fn recovering(work: &Path) -> bool {
    walk_this_fs(work)
        .iter()
        .any(|p| p.ends_with("powercut.checker.txt"))
}

#[test]
fn sigint_during_the_recovery_releases_everything() {
    if !ready_to_emulate(
        "sigint_during_the_recovery_releases_everything",
        &["losetup", "mkfs.ext4"],
    ) {
        return;
    }
    // The recovery lasts about two seconds after the checker's output appears; a test thread
    // kept off the CPU that long on a loaded host sees the trial end instead. Such a trial must
    // have ended well and left nothing; the test then cuts another one.
    for attempt in 1..=3 {
        let work = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let log = tempfile::NamedTempFile::new().unwrap();
        let (mut child, loops) =
            start_cut_trial(work.path(), out.path(), log.path(), "powercut=after:40");
        let mut ended = None;
        wait_until("the recovery checks the filesystem", 120, || {
            ended = child.try_wait().unwrap();
            ended.is_some() || recovering(work.path())
        });
        if let Some(status) = ended {
            assert!(
                status.success(),
                "attempt {attempt}: the trial failed: {status}\n{}",
                stderr_of(log.path())
            );
            assert_nothing_left(work.path(), &loops);
            eprintln!("attempt {attempt}: the trial ended before its recovery was seen");
            continue;
        }
        signal(&child, rustix::process::Signal::INT);
        let status = reaped(&mut child, 60);
        assert_eq!(
            status.code(),
            Some(130),
            "interrupted in its recovery\n{}",
            stderr_of(log.path())
        );
        assert_nothing_left(work.path(), &loops);
        return;
    }
    panic!("three cut trials ended before their recovery was seen");
}

#[test]
fn sigkill_during_a_cut_trial_leaves_nothing() {
    if !ready_to_emulate(
        "sigkill_during_a_cut_trial_leaves_nothing",
        &["losetup", "mkfs.ext4"],
    ) {
        return;
    }
    // Killed while recording with its cut armed, and killed during its recovery.
    for (after, wait_recovery) in [
        ("powercut=after:100000000", false),
        ("powercut=after:40", true),
    ] {
        let work = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let log = tempfile::NamedTempFile::new().unwrap();
        let (mut child, loops) = start_cut_trial(work.path(), out.path(), log.path(), after);
        if wait_recovery {
            wait_until("the recovery checks the filesystem", 120, || {
                recovering(work.path()) || matches!(child.try_wait(), Ok(Some(_)))
            });
        }
        child.kill().unwrap();
        let _ = reaped(&mut child, 30);
        assert_nothing_left(work.path(), &loops);
        let a = iotrial(work.path()).arg("cleanup").assert().success();
        let said = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
        assert!(said.starts_with("nothing to clean up"), "{said}");
    }
}

#[test]
fn a_drive_that_ignores_flushes_loses_fsynced_writes_and_the_verdict_says_so() {
    if !ready_to_emulate(
        "a_drive_that_ignores_flushes_loses_fsynced_writes_and_the_verdict_says_so",
        &["losetup"],
    ) {
        return;
    }
    // A writer that fsyncs after every 64 KiB write at a random place of a raw region: every
    // write it saw completed was flushed, so an honest drive loses none of them; a drive that
    // acknowledges flushes at once fills its buffer with them faster than it can destage
    // (each destage seeks).
    for flush in ["ignore", "honour"] {
        let work = tempfile::tempdir().unwrap();
        let results = tempfile::tempdir().unwrap();
        let a = iotrial(work.path())
            .args(["run", "job", "--json", "--layout", "regions", "--out"])
            .arg(results.path())
            .args(["--target", &format!("emu:hdd,size=2GiB,flush={flush}")])
            .args([
                "--set",
                "rw=randwrite",
                "--set",
                "bs=64k",
                "--set",
                "fsync=1",
            ])
            .args(["--set", "size=256MiB", "--set", "runtime=10s"])
            .args(["--set", "time_based=true", "--set", "powercut=3s"])
            .assert()
            .success();
        let doc: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
        let d = &doc["durability"];
        let flushed = d["device"]["flushed_writes_lost"].as_u64().unwrap();
        // The job's writes carry fio's verify header (an implied verify=crc32c, never read
        // back), so the scan judges its region against its samples.
        let fsynced = d["seconds_lost_fsynced"].as_f64().unwrap();
        assert_eq!(d["streams"].as_array().unwrap().len(), 1, "{d}");
        assert!(d["blocks"]["intact"].as_u64().unwrap() > 0, "{d}");
        let summary = d["summary"].as_str().unwrap();
        if flush == "ignore" {
            assert!(flushed > 0 && fsynced > 0.0, "{d}");
            assert!(summary.contains("the drive ignores flushes"), "{summary}");
        } else {
            assert_eq!((flushed, fsynced), (0, 0.0), "{d}");
            assert!(!summary.contains("ignores flushes"), "{summary}");
        }
        // No verify report the job did not ask for.
        assert!(
            doc["verdict"]["verify_mismatches"].is_null(),
            "{}",
            doc["verdict"]
        );
        assert_nothing_left(work.path(), &[]);
    }
}

#[test]
fn a_jobs_files_are_judged_block_by_block_after_a_cut() {
    if !ready_to_emulate(
        "a_jobs_files_are_judged_block_by_block_after_a_cut",
        &["losetup", "mkfs.ext4"],
    ) {
        return;
    }
    // Two jobs on ext4 over a used disk: one clone overwriting its laid-out file at random
    // (judged against its samples), one writing two files of its own (judged by each
    // block's header). The files are laid out sealed, so nothing the run did not rewrite
    // reads as stale, and no block of any file is another's.
    let work = tempfile::tempdir().unwrap();
    let results = tempfile::tempdir().unwrap();
    let jobs = "[global]\nbs=16k\nsize=8m\ndirect=1\nruntime=30s\ntime_based\n[over]\nrw=randwrite\noverwrite=1\n[two]\nrw=write\nnrfiles=2\nfsync=4\n";
    let file = results.path().join("cut.fio");
    std::fs::write(&file, jobs).unwrap();
    let a = iotrial(work.path())
        .args(["run"])
        .arg(format!("fio:{}", file.display()))
        .args(["--json", "--out"])
        .arg(results.path())
        .args(["--target", DISK, "--fs", "ext4", "--set", "powercut=2s"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let d = &doc["durability"];
    assert_eq!(d["mount_ok"], true, "{d}");
    let names: Vec<&str> = d["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["over.0", "two.0:two.0.0", "two.0:two.0.1"],
        "a region per file, named by its file where the stream has several: {d}"
    );
    let b = &d["blocks"];
    // 8 MiB laid out and overwritten, 4 MiB per file of the other: 4 KiB intervals.
    let over = &d["streams"][0]["blocks"];
    let counted = |b: &Value| -> u64 {
        [
            "intact",
            "lost_older",
            "lost_zeros",
            "torn",
            "foreign",
            "stale",
            "unwritten",
        ]
        .iter()
        .map(|k| b[*k].as_u64().unwrap())
        .sum()
    };
    assert_eq!(counted(over), 2048, "{over}");
    assert!(over["intact"].as_u64().unwrap() > 0, "{over}");
    assert_eq!(b["foreign"], 0, "{d}");
    assert_eq!(b["stale"], 0, "{d}");
    assert!(d["scan_errors"].is_null(), "{d}");
    assert_nothing_left(work.path(), &[]);
}
