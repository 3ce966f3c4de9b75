//! Root integration tests of stack building with the real binary: the guard's refusals, the
//! partitions layout, btrfs raid10 over four images, scheduler restore, a SIGKILLed run whose
//! device server releases everything, and a run killed together with its device server,
//! cleaned up by `iotrial cleanup`. Each skips with the reason when it cannot run here (a
//! failure under `CI`).

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

/// Held by the tests that kill a device server (leaving its FUSE mount dead until it is
/// released) and by the btrfs test: mkfs.btrfs stats every mounted loop device's backing file
/// to check its own devices are unmounted, and a dead FUSE mount answers ENOTCONN.
static DEAD_FUSE_MOUNTS: Mutex<()> = Mutex::new(());

fn no_dead_fuse_mounts() -> MutexGuard<'static, ()> {
    DEAD_FUSE_MOUNTS.lock().unwrap_or_else(|e| e.into_inner())
}

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

fn run_json(work: &Path, args: &[&str]) -> Value {
    let out = tempfile::tempdir().unwrap();
    let a = iotrial(work)
        .args(["run", "dvr", "--json", "--out"])
        .arg(out.path())
        .args(args)
        .args(SMALL)
        .assert()
        .success();
    serde_json::from_slice(&a.get_output().stdout).unwrap()
}

fn refusal(work: &Path, args: &[&str]) -> String {
    let out = tempfile::tempdir().unwrap();
    let a = iotrial(work)
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
    if !ready_for_stacks(
        "guard_refuses_signatures_and_mounts_unless_wiped",
        &["mkfs.ext4", "blkid", "sfdisk", "mount"],
    ) {
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
    let m = Mounted::adopt(&mp);
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

/// A scheduler other than `none` that this kernel offers, with one of its tunables as
/// `--tunable` takes it: bfq where the kernel has it (Debian's kernels do), else kyber, else
/// mq-deadline. What these tests check is a scheduler set for a run and restored after it,
/// whichever it is.
fn other_scheduler() -> (&'static str, &'static str) {
    let attrs: Vec<String> = std::fs::read_dir("/sys/block")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|d| std::fs::read_to_string(d.path().join("queue/scheduler")).ok())
        .collect();
    let offered: Vec<&str> = attrs
        .iter()
        .flat_map(|a| iotrial::stack::scheduler::offered(a))
        .collect();
    for (name, tunable) in [
        ("bfq", "slice_idle=0"),
        ("kyber", "read_lat_nsec=4000000"),
        ("mq-deadline", "read_expire=250"),
    ] {
        if offered.contains(&name) {
            if name != "bfq" {
                eprintln!("note: this kernel offers no bfq; the scheduler is {name} here");
            }
            return (name, tunable);
        }
    }
    panic!("this kernel offers no I/O scheduler but none: {offered:?}");
}

#[test]
fn scheduler_is_restored_after_a_run() {
    if !ready_for_stacks("scheduler_is_restored_after_a_run", &[]) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let lo = TestLoop::new(256 << 20);
    let attr = format!("/sys/block/{}/queue/scheduler", lo.name());
    std::fs::write(&attr, "none").unwrap();
    let (name, tunable) = other_scheduler();
    let doc = run_json(
        work.path(),
        &[
            "--target",
            &format!("block:{}", lo.dev.display()),
            "--scheduler",
            name,
            "--tunable",
            tunable,
        ],
    );
    assert_eq!(
        doc["stack"]["scheduler"][0]["active"], name,
        "{name} active during the run"
    );
    let (key, value) = tunable.split_once('=').unwrap();
    assert_eq!(doc["stack"]["scheduler"][0]["tunables"][key], value);
    let now = std::fs::read_to_string(&attr).unwrap();
    assert!(now.contains("[none]"), "restored: {now}");
}

#[test]
fn partitions_layout_gives_each_stream_its_partition() {
    if !ready_for_stacks(
        "partitions_layout_gives_each_stream_its_partition",
        &["sfdisk", "partx"],
    ) {
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
    // The monitors watch the disk and each of its ten partitions.
    assert_eq!(watched(&doc, "data").len(), 1);
    assert_eq!(watched(&doc, "partition").len(), 10);
    assert!(
        doc["warnings"].to_string().contains("mq-deadline"),
        "deadline mapped with a notice"
    );
    assert!(loops_under(work.path()).is_empty() && mounts_under(work.path()).is_empty());
}

#[test]
fn btrfs_raid10_over_four_images() {
    if !ready_for_stacks("btrfs_raid10_over_four_images", &["mkfs.btrfs"]) {
        return;
    }
    let _alone = no_dead_fuse_mounts();
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
    // The monitors watch every member of the filesystem.
    let members: Vec<String> = doc["stack"]["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kernel_name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(watched(&doc, "data"), members);
    assert!(loops_under(work.path()).is_empty() && mounts_under(work.path()).is_empty());
}

/// The devices of `role` the trial's diskstats monitor watched.
fn watched(doc: &Value, role: &str) -> Vec<String> {
    doc["monitor"]["devices"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["role"] == role)
        .map(|d| d["device"].as_str().unwrap().to_string())
        .collect()
}

/// The stack the kill tests run on: ext4 on an image, with a scheduler other than `none`
/// (bfq where the kernel has it).
fn killed_stack() -> [&'static str; 6] {
    [
        "--target",
        "image:size=1GiB",
        "--fs",
        "ext4",
        "--scheduler",
        other_scheduler().0,
    ]
}

/// The pid of the device server process of the only run whose ledger is under `work`.
fn device_server_pid(work: &Path) -> u32 {
    let ledgers: Vec<_> = std::fs::read_dir(work.join("ledger"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(ledgers.len(), 1, "{ledgers:?}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&ledgers[0]).unwrap()).unwrap();
    doc["server_pid"]
        .as_u64()
        .expect("the ledger names its device server") as u32
}

#[test]
fn sigkill_mid_trial_leaves_nothing_without_cleanup() {
    if !ready_for_stacks(
        "sigkill_mid_trial_leaves_nothing_without_cleanup",
        &["mkfs.ext4"],
    ) {
        return;
    }
    let _alone = no_dead_fuse_mounts();
    let work = tempfile::tempdir().unwrap();
    let mut child = start_endless_trial(work.path(), &killed_stack());
    let loops = loop_backings_under(work.path());
    assert!(!loops.is_empty(), "the run attached a loop device");
    child.kill().unwrap();
    reaped(&mut child, 10);
    wait_until("the device server releases everything", 15, || {
        leftovers(work.path(), &loops).is_empty()
    });
    let a = iotrial(work.path()).arg("cleanup").assert().success();
    let said = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(said.starts_with("nothing to clean up"), "{said}");
    assert!(
        !work.path().join("out").exists(),
        "no partial result written"
    );
}

#[test]
fn run_killed_with_its_device_server_is_released_by_cleanup_once() {
    if !ready_for_stacks(
        "run_killed_with_its_device_server_is_released_by_cleanup_once",
        &["mkfs.ext4"],
    ) {
        return;
    }
    let _alone = no_dead_fuse_mounts();
    let work = tempfile::tempdir().unwrap();
    let mut child = start_endless_trial(work.path(), &killed_stack());
    let server = device_server_pid(work.path());
    let loops = loop_backings_under(work.path());
    let disk = loops_under(work.path())[0]
        .split(':')
        .next()
        .unwrap()
        .trim_start_matches("/dev/")
        .to_string();
    let sched = format!("/sys/block/{disk}/queue/scheduler");
    let active = format!("[{}]", other_scheduler().0);
    assert!(std::fs::read_to_string(&sched).unwrap().contains(&active));
    // SIGKILL to both, as an OOM kill of the group or a CI job timeout would do.
    let server_pid = rustix::process::Pid::from_raw(server as i32).unwrap();
    rustix::process::kill_process(server_pid, rustix::process::Signal::KILL).unwrap();
    child.kill().unwrap();
    reaped(&mut child, 30);
    wait_until("the device server exits", 30, || {
        !Path::new(&format!("/proc/{server}")).exists()
            || std::fs::read_to_string(format!("/proc/{server}/stat"))
                .is_ok_and(|s| s.contains(") Z "))
    });
    assert!(
        !mounts_under(work.path()).is_empty(),
        "with its device server killed too, the run's mount is left for cleanup"
    );
    let a = iotrial(work.path()).arg("cleanup").assert().success();
    let said = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    for line in said.lines() {
        assert!(
            !line.contains('{') && !line.contains("PathBuf"),
            "plain lines, no debug output: {said}"
        );
    }
    for needle in ["unmounted ", "detached /dev/loop", "restored ", "removed "] {
        assert!(said.contains(needle), "'{needle}' in:\n{said}");
    }
    assert_cleaned_up(work.path(), &loops);
    // Idempotent: nothing left, nothing to say but that, exit 0.
    let again = iotrial(work.path()).arg("cleanup").assert().success();
    let said = String::from_utf8_lossy(&again.get_output().stdout).into_owned();
    assert!(said.starts_with("nothing to clean up"), "{said}");
}

#[test]
fn xfs_with_its_log_on_a_second_device() {
    if !ready_for_stacks("xfs_with_its_log_on_a_second_device", &["mkfs.xfs"]) {
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
    let log = doc["stack"]["logdev"]["kernel_name"].as_str().unwrap();
    assert_eq!(
        watched(&doc, "log"),
        [log],
        "the monitors watch the log device"
    );
    assert!(loops_under(work.path()).is_empty() && mounts_under(work.path()).is_empty());
}
