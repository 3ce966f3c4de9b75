//! Root integration tests of stack building with the real binary: the guard's refusals, the
//! partitions layout, btrfs raid10 over four images, scheduler restore, and a SIGKILLed run
//! cleaned up by `iotrial cleanup`. Each skips with a reason when it cannot run here.

mod common;

use assert_cmd::Command;
use common::*;
use serde_json::Value;
use std::path::Path;

const SMALL: &[&str] = &[
    "--set",
    "samples=24",
    "--set",
    "region_size=8MiB",
    "--set",
    "io_size=64KiB",
    "--set",
    "window=50ms",
];

fn iotrial(ledger: &Path) -> Command {
    let mut c = Command::cargo_bin("iotrial").unwrap();
    c.env("IOTRIAL_LEDGER_DIR", ledger).env("TMPDIR", ledger);
    c
}

fn run_json(ledger: &Path, args: &[&str]) -> Value {
    let out = tempfile::tempdir().unwrap();
    let a = iotrial(ledger)
        .args(["run", "dvr", "--json", "--out"])
        .arg(out.path())
        .args(args)
        .args(SMALL)
        .assert()
        .success();
    serde_json::from_slice(&a.get_output().stdout).unwrap()
}

fn refusal(ledger: &Path, args: &[&str]) -> String {
    let out = tempfile::tempdir().unwrap();
    let a = iotrial(ledger)
        .args(["run", "dvr", "--out"])
        .arg(out.path())
        .args(args)
        .args(SMALL)
        .assert()
        .code(2);
    String::from_utf8_lossy(&a.get_output().stderr).into_owned()
}

#[test]
fn guard_refuses_signatures_and_mounts_unless_wiped() {
    if !can_build_stacks("guard_refuses_signatures_and_mounts_unless_wiped") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let lo = TestLoop::new(256 << 20);
    let dev = lo.dev.display().to_string();
    let target = format!("block:{dev}");
    // A filesystem signature: refused, and the device is left as it was.
    assert!(std::process::Command::new("mkfs.ext4")
        .args(["-q", "-F", &dev])
        .status()
        .unwrap()
        .success());
    let e = refusal(work.path(), &["--target", &target]);
    assert!(
        e.contains("carries a ext4 signature") && e.contains("--wipe"),
        "{e}"
    );
    let blkid = std::process::Command::new("blkid")
        .args(["-p", "-o", "value", "-s", "TYPE", &dev])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&blkid.stdout).trim(),
        "ext4",
        "refused device untouched"
    );
    // Mounted: refused even when named in --wipe.
    let mp = work.path().join("mp");
    std::fs::create_dir(&mp).unwrap();
    assert!(std::process::Command::new("mount")
        .arg(&dev)
        .arg(&mp)
        .status()
        .unwrap()
        .success());
    let m = TestMount(mp.clone());
    let e = refusal(work.path(), &["--target", &target, "--wipe", &dev]);
    assert!(e.contains("is mounted at"), "{e}");
    drop(m);
    // A partition table: refused.
    let gpt = std::process::Command::new("sfdisk")
        .args(["--quiet", &dev])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(b"label: gpt\n,\n")?;
            c.wait()
        })
        .unwrap();
    assert!(gpt.success());
    let e = refusal(work.path(), &["--target", &target]);
    assert!(e.contains("gpt") || e.contains("PMBR"), "{e}");
    // Named again in --wipe: accepted, used raw.
    let doc = run_json(work.path(), &["--target", &target, "--wipe", &dev]);
    assert_eq!(doc["stack"]["layout"], "regions");
    assert!(doc["verdict"]["record_mbit_guaranteed"].as_f64().unwrap() > 0.0);
    // The system disk is refused whatever the flags.
    let root = iotrial::mountinfo::mount_of(Path::new("/")).unwrap();
    if root.source.starts_with("/dev/") {
        let e = refusal(
            work.path(),
            &[
                "--target",
                &format!("block:{}", root.source),
                "--wipe",
                &root.source,
            ],
        );
        assert!(
            e.contains("system filesystem") || e.contains("mounted"),
            "{e}"
        );
    }
}

#[test]
fn scheduler_is_restored_after_a_run() {
    if !can_build_stacks("scheduler_is_restored_after_a_run") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let lo = TestLoop::new(256 << 20);
    let attr = format!("/sys/block/{}/queue/scheduler", lo.name());
    std::fs::write(&attr, "none").unwrap();
    let doc = run_json(
        work.path(),
        &[
            "--target",
            &format!("block:{}", lo.dev.display()),
            "--scheduler",
            "bfq",
            "--tunable",
            "slice_idle=0",
        ],
    );
    assert_eq!(
        doc["stack"]["scheduler"][0]["active"], "bfq",
        "bfq active during the run"
    );
    assert_eq!(doc["stack"]["scheduler"][0]["tunables"]["slice_idle"], "0");
    let now = std::fs::read_to_string(&attr).unwrap();
    assert!(now.contains("[none]"), "restored: {now}");
}

#[test]
fn partitions_layout_gives_each_stream_its_partition() {
    if !can_build_stacks("partitions_layout_gives_each_stream_its_partition") || !have("sfdisk") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let doc = run_json(
        work.path(),
        &[
            "--target",
            "image:size=256MiB",
            "--layout",
            "partitions",
            "--scheduler",
            "deadline",
        ],
    );
    let cmds = doc["stack"]["commands"].to_string();
    assert!(cmds.contains("sfdisk"), "{cmds}");
    assert_eq!(doc["stack"]["layout"], "partitions");
    assert_eq!(doc["streams"].as_array().unwrap().len(), 10);
    assert!(
        doc["warnings"].to_string().contains("mq-deadline"),
        "deadline mapped with a notice"
    );
    assert!(loops_under(work.path()).is_empty() && mounts_under(work.path()).is_empty());
}

#[test]
fn btrfs_raid10_over_four_images() {
    if !can_build_stacks("btrfs_raid10_over_four_images") {
        return;
    }
    if !have("mkfs.btrfs") {
        eprintln!("skipped btrfs_raid10_over_four_images: mkfs.btrfs missing (scripts/install-deps.sh installs it)");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let img = "image:size=512MiB";
    let doc = run_json(
        work.path(),
        &[
            "--target",
            img,
            "--target",
            img,
            "--target",
            img,
            "--target",
            img,
            "--fs",
            "btrfs",
            "--mkfs",
            "-d raid10 -m raid10",
        ],
    );
    assert_eq!(doc["stack"]["devices"].as_array().unwrap().len(), 4);
    let cmd = doc["stack"]["mkfs"]["command"].as_str().unwrap();
    assert!(
        cmd.starts_with("mkfs.btrfs -f -d raid10 -m raid10 /dev/loop"),
        "{cmd}"
    );
    assert!(doc["stack"]["mkfs"]["version"]
        .as_str()
        .unwrap()
        .contains("btrfs"));
    assert_eq!(doc["stack"]["mount"]["fs_type"], "btrfs");
    assert!(loops_under(work.path()).is_empty() && mounts_under(work.path()).is_empty());
}

#[test]
fn sigkill_mid_trial_then_cleanup_leaves_nothing() {
    if !can_build_stacks("sigkill_mid_trial_then_cleanup_leaves_nothing") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let out_s = out.display().to_string();
    let mut args = vec![
        "run",
        "dvr",
        "--target",
        "image:size=1GiB",
        "--fs",
        "ext4",
        "--scheduler",
        "bfq",
        "--out",
        &out_s,
    ];
    args.extend(ENDLESS);
    let mut child = spawn_iotrial(work.path(), &args);
    // Wait until the stack is mounted, then kill mid-trial.
    wait_until("the stack is mounted", 30, || {
        !mounts_under(work.path()).is_empty()
    });
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let loops = loop_backings_under(work.path());
    assert!(!loops.is_empty(), "the run attached a loop device");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !mounts_under(work.path()).is_empty(),
        "SIGKILL left the mount behind, as expected"
    );
    let a = iotrial(&work.path().join("ledger"))
        .arg("cleanup")
        .assert()
        .success();
    let said = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(said.contains("released"), "{said}");
    assert_cleaned_up(work.path(), &loops);
    assert!(
        !out.exists() || std::fs::read_dir(&out).unwrap().count() == 0,
        "no partial result"
    );
}

#[test]
fn xfs_with_its_log_on_a_second_device() {
    if !can_build_stacks("xfs_with_its_log_on_a_second_device") {
        return;
    }
    if !have("mkfs.xfs") {
        eprintln!("skipped xfs_with_its_log_on_a_second_device: mkfs.xfs missing (scripts/install-deps.sh installs it)");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let doc = run_json(
        work.path(),
        &[
            "--target",
            "image:size=512MiB",
            "--fs",
            "xfs",
            "--logdev",
            "image:size=64MiB",
        ],
    );
    let cmd = doc["stack"]["mkfs"]["command"].as_str().unwrap();
    assert!(cmd.contains("-l logdev=/dev/loop"), "{cmd}");
    let applied = doc["stack"]["mount"]["applied"].as_str().unwrap();
    assert!(
        applied.contains("logdev=/dev/loop"),
        "the kernel reports the external log: {applied}"
    );
    assert_eq!(doc["stack"]["logdev"]["size_bytes"], 64 << 20);
    assert!(loops_under(work.path()).is_empty() && mounts_under(work.path()).is_empty());
}
