//! Root integration tests of emulated devices in stacks, with the real binary: ext4 and xfs
//! made and mounted on `emu:hdd`, a dvr trial on each whose result.json carries the model's
//! state and times in model time; a device failing requests (the trial reports the errors and
//! finishes); and a SIGKILLed run on an emulated device, which its device server process
//! cleans up by itself: the run is reaped and nothing is left, without `iotrial cleanup`; and a
//! SIGTERM to a run alone while its mkfs runs, which ends the mkfs and leaves nothing.

mod common;

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
    if !ready_to_emulate(
        "ext4_and_xfs_on_an_emulated_hdd",
        &["losetup", "mkfs.ext4", "mkfs.xfs"],
    ) {
        return;
    }
    for fs in ["ext4", "xfs"] {
        let work = tempfile::tempdir().unwrap();
        // The ext4 trial keeps its streams apart from the device's timer; xfs's run everywhere.
        let apart = fs == "ext4";
        let doc = run_json(
            work.path(),
            &[
                "--target",
                "emu:hdd,size=2GiB,scale=20",
                "--fs",
                fs,
                "--scheduler",
                "mq-deadline",
                "--workload-cpus",
                if apart { "apart" } else { "all" },
            ],
        );
        assert_eq!(doc["stack"]["mount"]["fs_type"], fs);
        // A small emulated disk keeps its image in memory, so no reply waits for the host's disk.
        assert_eq!(
            doc["stack"]["emulated_images"], "memory",
            "{}",
            doc["stack"]
        );
        assert_eq!(doc["time_scale"], 20.0);
        let emu = &doc["stack"]["emulated"][0];
        assert_eq!(emu["model"], "hdd");
        // The device is described from its own values, not the model's generic line.
        let described = doc["stack"]["devices"][0]["model"]
            .as_str()
            .unwrap_or_default();
        assert!(
            described
                .starts_with("emulated: 7200 rpm hard disk, 8.5 ms average seek, 250-120 MB/s"),
            "{described}"
        );
        assert!(
            emu["server"]["requests"]["write"].as_u64().unwrap() > 0,
            "{emu}"
        );
        assert!(emu["model_stats"].is_object(), "{emu}");
        let late = emu["server"]["late_us_mean"].as_f64().unwrap();
        assert!(late.is_finite() && late >= 0.0, "{emu}");
        // Kept apart, the streams keep off the CPU of the device's lead timer, where one is
        // pinned (two CPUs or more).
        let workload_cpus = &doc["target"]["workload_cpus"];
        match (emu["server"]["timer_cpus"][0].as_u64(), apart) {
            (Some(lead), true) => {
                let cpus: Vec<u64> = workload_cpus
                    .as_array()
                    .unwrap_or_else(|| panic!("no workload_cpus: {}", doc["target"]))
                    .iter()
                    .map(|c| c.as_u64().unwrap())
                    .collect();
                assert!(!cpus.is_empty() && !cpus.contains(&lead), "{cpus:?} {lead}");
            }
            _ => assert!(workload_cpus.is_null(), "{}", doc["target"]),
        }
        // The report shows the lateness next to the device.
        let root = std::fs::read_dir(work.path().join("out"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        iotrial(work.path())
            .arg("report")
            .arg(&root)
            .assert()
            .success();
        let html = std::fs::read_to_string(root.join("report.html")).unwrap();
        assert!(
            html.contains("emulated hdd (time scale 20): replies late by"),
            "report.html shows the device's reply lateness"
        );
        assert_eq!(
            html.contains(", workload on CPU "),
            workload_cpus.is_array(),
            "report.html's host table names the workload's CPUs when they were kept apart"
        );
        // Ten streams queue at one spindle: a 64 KiB random read takes milliseconds of model
        // time. (Not the record streams: the drive acknowledges their writes from its write
        // buffer while it has room, so their mean depends on how fast this host fills it, from
        // under 2 ms to 70 ms here; the reads always wait for the media.)
        let play = doc["streams"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["role"] == "playback")
            .unwrap();
        let mean = play["lat_ms"]["mean"].as_f64().unwrap();
        assert!(
            mean > 5.0,
            "{fs}: mean playback access {mean} ms is not a disk's"
        );
        assert!(
            doc["warnings"].to_string().contains("time scale 20")
                && doc["warnings"]
                    .to_string()
                    .contains("kernel's timers, which run in host time"),
            "{}",
            doc["warnings"]
        );
        assert_nothing_left(work.path());
    }
}

#[test]
fn a_failing_device_reports_errors_per_stream_and_finishes() {
    if !ready_to_emulate(
        "a_failing_device_reports_errors_per_stream_and_finishes",
        &["losetup"],
    ) {
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
fn sigkill_on_an_emulated_device_leaves_nothing_without_cleanup() {
    if !ready_to_emulate(
        "sigkill_on_an_emulated_device_leaves_nothing_without_cleanup",
        &["losetup", "mkfs.ext4"],
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let mut child = start_endless_trial(
        work.path(),
        &["--target", "emu:hdd,size=8GiB,scale=10", "--fs", "ext4"],
    );
    let loops = loop_backings_under(work.path());
    let fuse = fuse_connections_under(work.path());
    assert!(!loops.is_empty(), "the run attached a loop device");
    assert_eq!(fuse.len(), 1, "the run served one emulated device");
    child.kill().unwrap();
    // The device server is another process: it answers the I/O the killed run left in
    // flight, so no thread of the run waits in the kernel and the run is reaped.
    let status = reaped(&mut child, 10);
    assert!(!status.success());
    // Then it releases what the run made, in order, without `iotrial cleanup`.
    wait_until("the device server releases everything", 15, || {
        leftovers(work.path(), &loops).is_empty()
    });
    assert!(
        !fuse_connection_alive(fuse[0]),
        "FUSE connection {} is gone",
        fuse[0]
    );
    let a = iotrial(work.path()).arg("cleanup").assert().success();
    let said = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(said.starts_with("nothing to clean up"), "{said}");
}

/// The first child of process `parent` whose command line holds every one of `words`.
fn child_running(parent: u32, words: &[&str]) -> Option<u32> {
    let kids = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children")).ok()?;
    kids.split_whitespace()
        .filter_map(|p| p.parse::<u32>().ok())
        .find(|p| {
            std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| {
                let c = String::from_utf8_lossy(&c);
                words.iter().all(|w| c.contains(w))
            })
        })
}

/// Kills the processes it holds when dropped: a failing test leaves no mkfs or run behind
/// (their device server then releases the rest by itself).
struct KillOnDrop(Vec<u32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for &p in &self.0 {
            if let Some(pid) = rustix::process::Pid::from_raw(p as i32) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }
}

#[test]
fn sigterm_to_the_run_alone_ends_the_mkfs_it_waits_for() {
    if !ready_to_emulate(
        "sigterm_to_the_run_alone_ends_the_mkfs_it_waits_for",
        &["losetup", "mkfs.ext4"],
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out").display().to_string();
    // A disk 200 times slower than the drive it models: zeroing the inode tables and journal
    // of 64 GiB takes mkfs far longer than this test waits.
    let mut child = spawn_iotrial(
        work.path(),
        &[
            "run",
            "tree",
            "--out",
            &out,
            "--target",
            "emu:hdd,size=64GiB,scale=0.005",
            "--fs",
            "ext4",
            "--mkfs",
            "-E lazy_itable_init=0,lazy_journal_init=0",
            "--set",
            "dirs=100",
        ],
    );
    let mut held = KillOnDrop(vec![child.id()]);
    let mut mkfs = None;
    // mkfs making the filesystem on the loop device (not `mkfs.ext4 -V`, which the run asks
    // for its version).
    wait_until("the run's mkfs starts", 120, || {
        mkfs = child_running(
            child.id(),
            &["mkfs.ext4", "lazy_itable_init=0", "/dev/loop"],
        );
        mkfs.is_some()
    });
    let mkfs = mkfs.unwrap();
    held.0.push(mkfs);
    let loops = loop_backings_under(work.path());
    assert!(!loops.is_empty(), "the run attached a loop device");
    // SIGTERM to the run alone, not to its process group, as a container runtime or a
    // batch scheduler sends it: the run ends its mkfs, releases what it made and says so.
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let status = reaped(&mut child, 60);
    assert_eq!(status.code(), Some(130), "{status}");
    assert!(
        !std::path::Path::new(&format!("/proc/{mkfs}")).exists(),
        "mkfs ({mkfs}) was ended with the run"
    );
    assert!(
        leftovers(work.path(), &loops).is_empty(),
        "{:?}",
        leftovers(work.path(), &loops)
    );
    assert!(
        !work.path().join("out").exists(),
        "no partial result written"
    );
}
