//! Runs `iotrial run fsck` for real on an emulated disk (root): ext4 and xfs are filled,
//! synced, unmounted, checked by their own checker read-only and mounted again; the checker's
//! run and figures are in result.json with exactly the documented keys, its output is kept,
//! and nothing is left behind.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

fn run_fsck(fs: &str, out: &Path) -> Value {
    let work = tempfile::tempdir().unwrap();
    let a = iotrial(work.path())
        .args(["run", "fsck", "--json", "--fs", fs, "--target"])
        .arg("emu:hdd,size=2GiB,scale=100")
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
