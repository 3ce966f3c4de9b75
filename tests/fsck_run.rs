//! Runs `iotrial run fsck` for real on an emulated disk (root): ext4 and xfs are filled,
//! synced, unmounted, checked by their own checker read-only and mounted again; the checker's
//! run and figures are in result.json with exactly the documented keys, its output is kept,
//! and nothing is left behind. A 4 TiB disk filled with a few files keeps its sparse image in
//! memory: what the fill writes, not the capacity, decides.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

fn run_fsck(fs: &str, out: &Path) -> Value {
    run_fsck_on(fs, "emu:hdd,size=2GiB,scale=100", out)
}

fn run_fsck_on(fs: &str, target: &str, out: &Path) -> Value {
    let work = tempfile::tempdir().unwrap();
    let a = iotrial(work.path())
        .args(["run", "fsck", "--json", "--fs", fs, "--target"])
        .arg(target)
        .arg("--out")
        .arg(out)
        .args([
            "--set",
            "files=300",
            "--set",
            "dirs=3",
            "--set",
            "threads=2",
        ])
        .args(["--set", "sync=none"])
        .assert()
        .success();
    serde_json::from_slice(&a.get_output().stdout).expect("JSON on stdout")
}

#[test]
fn fsck_fills_checks_and_mounts_again_on_ext4_and_xfs() {
    if !ready_to_emulate(
        "fsck_fills_checks_and_mounts_again_on_ext4_and_xfs",
        &["mkfs.ext4", "e2fsck", "mkfs.xfs", "xfs_repair"],
    ) {
        return;
    }
    for (fs, checker) in [("ext4", "e2fsck -f -n"), ("xfs", "xfs_repair -n")] {
        let out = tempfile::tempdir().unwrap();
        let doc = run_fsck(fs, out.path());
        let kinds: Vec<&str> = doc["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "prepare",
                "stream",
                "sync",
                "unmount",
                "drop_caches",
                "fsck",
                "mount"
            ]
        );
        let v = &doc["verdict"];
        assert_eq!(v["files"], 300, "{v}");
        assert_eq!(v["fsck_exit"], 0, "{v}");
        assert!(
            v["fsck_command"].as_str().unwrap().starts_with(checker),
            "{v}"
        );
        let secs = v["fsck_s"].as_f64().unwrap();
        assert!(
            secs > 0.0 && v["fsck_peak_rss_mib"].as_f64().unwrap() > 1.0,
            "{v}"
        );
        // The device's busy time is stretched by the scale, the host's own time is not.
        let check = doc["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["kind"] == "fsck")
            .unwrap();
        let m = &check["measured"];
        let f = |k: &str| m[k].as_f64().unwrap();
        let (wall, busy, scale) = (f("wall_s"), f("device_busy_s"), f("time_scale"));
        assert!(busy > 0.0 && busy <= wall * scale * 1.001, "{m}");
        let model = wall - busy / scale + busy;
        assert!(
            (secs - model).abs() <= 1e-9 * model,
            "{secs} against {model}: {m}"
        );
        let cpu = v["fsck_cpu_s"].as_f64().unwrap();
        assert!((cpu - (f("user_s") + f("sys_s"))).abs() < 1e-9, "{v}");
        let rate = v["fsck_files_per_s"].as_f64().unwrap();
        assert!((rate - 300.0 / secs).abs() <= 1e-9 * rate, "{v}");
        assert!(v["fill_files_per_s"].as_f64().unwrap() > 0.0, "{v}");
        assert!(v["fsync_us"].is_null() && v["create_us"].as_f64().unwrap() > 0.0);
        // The checker's output is kept in the trial's directory.
        let run = std::fs::read_dir(out.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        let trial = run.path().join(format!("trials/emu-{fs}/fsck/r1"));
        let kept = std::fs::read_to_string(trial.join("fsck.checker.txt")).unwrap();
        assert!(!kept.is_empty());
        // Exactly the documented keys (e2fsck's passes only for ext4).
        let has_passes = fs == "ext4";
        let (undocumented, missing) = keys::compare_keys(&doc, |k| {
            (has_passes || !k.contains("passes"))
                && !k.starts_with("monitor.io_classes")
                && !k.starts_with("monitor.trace.")
        });
        assert!(
            undocumented.is_empty() && missing.is_empty(),
            "{undocumented:?} {missing:?}"
        );
    }
    assert!(mounts_under(&std::env::temp_dir().join("iotrial-stack-")).is_empty());
    assert!(loops_under(&std::env::temp_dir().join("iotrial-stack-")).is_empty());
}

#[test]
fn a_large_sparse_disk_holding_a_small_fill_keeps_its_image_in_memory() {
    if !ready_to_emulate(
        "a_large_sparse_disk_holding_a_small_fill_keeps_its_image_in_memory",
        &["mkfs.ext4", "e2fsck"],
    ) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let doc = run_fsck_on("ext4", "emu:hdd,size=4TiB,scale=100", out.path());
    assert_eq!(doc["verdict"]["fsck_exit"], 0, "{}", doc["verdict"]);
    // mkfs's allowance (4 GiB and a 16384th of the capacity), then 300 files of one 4 KiB
    // block and a metadata block each, and 2 threads' 3 directories of a block each.
    let tib = 1u64 << 40;
    let bound = (4u64 << 30) + 4 * tib / 16384 + 300 * 8192 + 6 * 4096;
    let st = &doc["stack"];
    assert_eq!(st["emulated_images_at_most"], bound, "{st}");
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let available = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap()
        * 1024;
    // Well clear of the three-quarter line either way (other runs' tmpfs may take some).
    if available / 4 * 3 > 2 * bound {
        assert_eq!(st["emulated_images"], "memory", "{st}");
    } else if available / 4 * 3 < bound {
        assert_eq!(st["emulated_images"], "disk", "{st}");
    }
    assert!(mounts_under(&std::env::temp_dir().join("iotrial-stack-")).is_empty());
    assert!(loops_under(&std::env::temp_dir().join("iotrial-stack-")).is_empty());
}
