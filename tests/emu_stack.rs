//! Root integration tests of emulated devices in stacks, with the real binary: ext4 and xfs
//! made and mounted on `emu:hdd`, a dvr trial on each whose result.json carries the model's
//! state and times in model time; a device failing requests (the trial reports the errors and
//! finishes); and a SIGKILLed run on an emulated device cleaned up by `iotrial cleanup`.

mod common;

use assert_cmd::Command;
use common::*;
use serde_json::Value;
use std::path::Path;

const SMALL: &[&str] = &[
    "--set",
    "samples=24",
    "--set",
    "region_size=16MiB",
    "--set",
    "io_size=64KiB",
    "--set",
    "window=200ms",
];

fn can_emulate(test: &str) -> bool {
    if !can_build_stacks(test) {
        return false;
    }
    if !Path::new("/dev/fuse").exists() {
        eprintln!("skipped {test}: /dev/fuse missing (no FUSE in this kernel)");
        return false;
    }
    true
}

fn iotrial(work: &Path) -> Command {
    let mut c = Command::cargo_bin("iotrial").unwrap();
    c.env("IOTRIAL_LEDGER_DIR", work.join("ledger"))
        .env("TMPDIR", work);
    c
}

fn run_json(work: &Path, args: &[&str]) -> Value {
    let out = work.join("out");
    let a = iotrial(work)
        .args(["run", "dvr", "--json", "--out"])
        .arg(&out)
        .args(args)
        .args(SMALL)
        .assert()
        .success();
    serde_json::from_slice(&a.get_output().stdout).unwrap()
}

fn assert_nothing_left(work: &Path) {
    assert!(
        loops_under(work).is_empty(),
        "loop devices left: {:?}",
        loops_under(work)
    );
    assert!(
        mounts_under(work).is_empty(),
        "mounts left: {:?}",
        mounts_under(work)
    );
}

#[test]
fn ext4_and_xfs_on_an_emulated_hdd() {
    if !can_emulate("ext4_and_xfs_on_an_emulated_hdd") {
        return;
    }
    for fs in ["ext4", "xfs"] {
        if !have(&format!("mkfs.{fs}")) {
            eprintln!(
                "skipped {fs} on emu:hdd: mkfs.{fs} missing (scripts/install-deps.sh installs it)"
            );
            continue;
        }
        let work = tempfile::tempdir().unwrap();
        let doc = run_json(
            work.path(),
            &[
                "--target",
                "emu:hdd,size=2GiB,scale=20",
                "--fs",
                fs,
                "--scheduler",
                "mq-deadline",
            ],
        );
        assert_eq!(doc["stack"]["mount"]["fs_type"], fs);
        assert_eq!(doc["time_scale"], 20.0);
        let emu = &doc["stack"]["emulated"][0];
        assert_eq!(emu["model"], "hdd");
        assert!(
            emu["server"]["requests"]["write"].as_u64().unwrap() > 0,
            "{emu}"
        );
        assert!(emu["model_stats"].is_object(), "{emu}");
        // Ten streams queue at one spindle: a 64 KiB random I/O takes milliseconds of model time.
        let rec = doc["streams"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["role"] == "record")
            .unwrap();
        let mean = rec["lat_ms"]["mean"].as_f64().unwrap();
        assert!(
            mean > 5.0,
            "{fs}: mean record access {mean} ms is not a disk's"
        );
        assert!(
            doc["warnings"].to_string().contains("time scale 20"),
            "{}",
            doc["warnings"]
        );
        assert_nothing_left(work.path());
    }
}

#[test]
fn a_failing_device_reports_errors_per_stream_and_finishes() {
    if !can_emulate("a_failing_device_reports_errors_per_stream_and_finishes") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    // Raw regions (no filesystem to trip over the errors); records only, as reads of the
    // playback regions would need them filled first.
    let doc = run_json(
        work.path(),
        &[
            "--target",
            "emu:null,size=1GiB,fail_prob=0.1",
            "--set",
            "players=0",
        ],
    );
    let streams = doc["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 8);
    let errors: u64 = streams.iter().map(|s| s["errors"].as_u64().unwrap()).sum();
    assert!(errors > 0, "a 10% failure rate over 192 I/Os gave no error");
    assert!(
        streams.iter().all(|s| s["samples"] == 24),
        "every stream still has its samples"
    );
    assert!(
        doc["warnings"].to_string().contains("I/Os failed"),
        "{}",
        doc["warnings"]
    );
    let out = work.path().join("out");
    let run = std::fs::read_dir(&out)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let csv = std::fs::read_to_string(run.join("trials/emu-regions/dvr/r1/samples.csv")).unwrap();
    assert!(
        csv.lines().any(|l| l.ends_with(",EIO")),
        "samples.csv names the errno"
    );
    assert_nothing_left(work.path());
}

#[test]
fn sigkill_on_an_emulated_device_then_cleanup() {
    if !can_emulate("sigkill_on_an_emulated_device_then_cleanup") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out").display().to_string();
    let mut args = vec![
        "run",
        "dvr",
        "--target",
        "emu:hdd,size=2GiB,scale=20",
        "--fs",
        "ext4",
        "--out",
        &out,
    ];
    args.extend(ENDLESS);
    let mut child = spawn_iotrial(work.path(), &args);
    wait_until("ext4 is mounted on the emulated disk", 60, || {
        mounts_under(work.path())
            .iter()
            .any(|m| m.contains(" - ext4 "))
    });
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let loops = loop_backings_under(work.path());
    assert!(!loops.is_empty(), "the run attached a loop device");
    child.kill().unwrap();
    // The killed process cannot finish exiting while its threads wait on its own FUSE server:
    // cleanup must abort that connection. Give the kernel a moment, then clean up.
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(
        mounts_under(work.path()).iter().any(|m| m.contains("fuse")),
        "the FUSE mount outlived the process"
    );
    let a = iotrial(work.path())
        .arg("cleanup")
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
    child.wait().unwrap();
    let said = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(said.contains("Fuse"), "{said}");
    assert_cleaned_up(work.path(), &loops);
    let ps = std::process::Command::new("pgrep")
        .arg("-f")
        .arg(work.path())
        .output()
        .unwrap();
    assert!(ps.stdout.is_empty(), "no process left");
}
