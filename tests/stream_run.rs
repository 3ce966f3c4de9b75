//! Runs `iotrial run stream` for real: writers streaming into a directory (no root) with its
//! phases, per-interval rows and the verdict `iotrial analyze` re-derives; and on an emulated
//! disk with xfs (root), leaving nothing behind.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const SMALL: &[&str] = &[
    "--set",
    "writers=3",
    "--set",
    "bytes=6MiB",
    "--set",
    "io_size=64KiB",
    "--set",
    "interval=10ms",
    "--set",
    "settle_window=20ms",
];

fn trial_dir(out: &Path, stack: &str) -> PathBuf {
    let run = std::fs::read_dir(out)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    run.join(format!("trials/{stack}/stream/r1"))
}

/// Held by the tests that stream on an emulated disk: one compares every writeback device's
/// limits before and after, which another stream trial's capped device would change meanwhile.
static EMULATED_STREAM: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn json_of(out: &[u8]) -> Value {
    serde_json::from_slice(out).expect("JSON on stdout")
}

#[test]
fn stream_on_a_directory_streams_then_syncs_and_analyze_agrees() {
    let work = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let a = iotrial(work.path())
        .args(["run", "stream", "--json", "--target"])
        .arg(format!("dir:{}", target.path().display()))
        .arg("--out")
        .arg(&out)
        .args(SMALL)
        .assert()
        .success();
    let doc = json_of(&a.get_output().stdout);
    let phases: Vec<(&str, &str)> = doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        phases,
        [
            ("prepare", "prepare"),
            ("stream", "stream"),
            ("sync", "sync")
        ]
    );
    assert_eq!(doc["phases"][1]["samples"], 3 * 96);
    let streams = doc["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 3);
    for s in streams {
        assert_eq!(s["bytes"], 6 << 20, "{s}");
        assert_eq!(
            (s["ios"].as_u64(), s["wrapped"].as_bool()),
            (Some(96), Some(false))
        );
    }
    let v = &doc["verdict"];
    // However fast the host, the total (bytes over the streaming and the sync) is known; the
    // mean over full intervals exists when at least one interval was full.
    assert!(
        v["total_mb_s"].as_f64().unwrap() > 0.0 && v["sync_s"].as_f64().is_some(),
        "{v}"
    );
    let full = v["intervals"].as_u64().unwrap();
    assert_eq!(v["mean_mb_s"].is_null(), full == 0, "{v}");

    let dir = trial_dir(&out, "dir");
    let samples = std::fs::read_to_string(dir.join("samples.csv")).unwrap();
    assert_eq!(samples.lines().count(), 1 + 3 * 96);
    assert!(samples
        .lines()
        .skip(1)
        .all(|l| l.split(',').nth(1) == Some("stream")));
    let ts = std::fs::read_to_string(dir.join("timeseries.csv")).unwrap();
    let rows: Vec<&str> = ts.lines().skip(1).collect();
    assert!(!rows.is_empty() && rows.iter().all(|r| r.contains(",stream,writer")));

    let a = iotrial(work.path())
        .args(["analyze", "stream", "--json"])
        .arg(dir.join("samples.csv"))
        .assert()
        .success();
    let re = json_of(&a.get_output().stdout);
    assert_eq!(
        re["verdict"], doc["verdict"],
        "analyze re-derives the run's verdict"
    );
    assert_eq!(re["streams"], doc["streams"]);
    assert_eq!(
        std::fs::read_dir(target.path()).unwrap().count(),
        0,
        "files removed"
    );
}

#[test]
fn terminal_output_says_whether_the_aggregate_settled() {
    let work = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let a = iotrial(work.path())
        .args(["run", "stream", "--target"])
        .arg(format!("dir:{}", target.path().display()))
        .arg("--out")
        .arg(work.path().join("out"))
        .args(SMALL)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(text.contains("writer2"), "{text}");
    assert!(
        text.contains("settled at ") || text.contains("never settled ("),
        "{text}"
    );
    assert!(text.contains("MB/s with the final sync"), "{text}");
}

#[test]
fn stream_on_an_emulated_disk_with_xfs_leaves_nothing_behind() {
    if !ready_to_emulate(
        "stream_on_an_emulated_disk_with_xfs_leaves_nothing_behind",
        &["mkfs.xfs", "losetup"],
    ) {
        return;
    }
    let _alone = EMULATED_STREAM.lock().unwrap_or_else(|e| e.into_inner());
    let work = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let bdis_before = bdi_limits();
    let a = iotrial(work.path())
        .args(["run", "stream", "--json", "--fs", "xfs", "--target"])
        .arg("emu:hdd,size=2GiB,scale=4")
        .arg("--out")
        .arg(out.path())
        .args([
            "--set",
            "writers=2",
            "--set",
            "duration=2s",
            "--set",
            "io_size=256KiB",
        ])
        .args(["--set", "interval=250ms", "--set", "settle_window=500ms"])
        .assert()
        .success();
    let doc = json_of(&a.get_output().stdout);
    assert_eq!(doc["time_scale"], 4.0);
    assert_eq!(doc["stack"]["fs"], "xfs");
    let p = &doc["phases"];
    assert_eq!(
        (&p[1]["kind"], &p[2]["kind"]),
        (&"stream".into(), &"sync".into())
    );
    // The streaming phase lasts its duration of model time (times are the model's).
    assert!(p[1]["end_s"].as_f64().unwrap() - p[1]["sampling_start_s"].as_f64().unwrap() >= 2.0);
    assert!(doc["verdict"]["total_mb_s"].as_f64().unwrap() > 0.0);
    let streams = doc["streams"].as_array().unwrap();
    assert!(streams.iter().all(|s| s["bytes"].as_u64().unwrap() > 0));
    let ts = std::fs::read_to_string(trial_dir(out.path(), "emu-xfs").join("timeseries.csv"));
    assert!(ts.unwrap().lines().count() > 1);
    // The stack's own device had its dirty page cache capped, and got its limits back.
    let dirty = &doc["stack"]["dirty_limit"];
    assert_eq!(dirty["bytes"], 256 << 20, "{dirty}");
    assert_eq!(dirty["bdi"].as_array().unwrap().len(), 1, "{dirty}");
    // (Loop devices other programs make meanwhile come with the kernel's defaults.)
    for (name, strict, ratio) in bdi_limits() {
        let was = bdis_before.iter().find(|b| b.0 == name);
        let default = (strict.trim() == "0", ratio.trim() == "1000000") == (true, true);
        assert!(
            was.map_or(default, |w| (&w.1, &w.2) == (&strict, &ratio)),
            "{name}: strict_limit {strict} max_ratio_fine {ratio}, before {was:?}"
        );
    }
    assert_cleaned_up(work.path(), &[]);
}

#[test]
fn writers_of_zeros_keep_a_large_emulated_disk_in_memory() {
    let test = "writers_of_zeros_keep_a_large_emulated_disk_in_memory";
    if !ready_to_emulate(test, &["mkfs.xfs", "losetup"]) {
        return;
    }
    // A 4 TiB disk streamed for a time: only zeros are written, so its image holds what
    // mkfs.xfs writes, and that bound goes in memory where it fits.
    let bound = (4u64 << 30) + (4u64 << 40) / 16384;
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let available = iotrial::stack::build::memimage::mem_available(&meminfo).unwrap();
    if bound > available / 4 * 3 {
        skip(
            test,
            "under 5.7 GiB of memory available: the bound would not fit",
        );
        return;
    }
    let _alone = EMULATED_STREAM.lock().unwrap_or_else(|e| e.into_inner());
    let work = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let a = iotrial(work.path())
        .args(["run", "stream", "--json", "--fs", "xfs", "--target"])
        .arg("emu:hdd,size=4TiB,scale=4")
        .arg("--out")
        .arg(out.path())
        .args([
            "--set",
            "data=zero",
            "--set",
            "writers=2",
            "--set",
            "duration=2s",
        ])
        .args(["--set", "io_size=256KiB", "--set", "interval=250ms"])
        .args(["--set", "settle_window=500ms"])
        .assert()
        .success();
    let doc = json_of(&a.get_output().stdout);
    let stack = &doc["stack"];
    assert_eq!(stack["emulated_images"], "memory", "{stack}");
    assert_eq!(
        stack["emulated_images_at_most"].as_u64(),
        Some(bound),
        "{stack}"
    );
    let written: u64 = doc["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["bytes"].as_u64().unwrap())
        .sum();
    assert!(written > 0);
    // Every byte the writers wrote reached the device as zeros kept as holes.
    let server = &stack["emulated"][0]["server"];
    let holes = server["bytes_zero_holes"].as_u64().unwrap();
    assert!(holes >= written, "{holes} < {written}: {server}");
    assert!(
        holes <= server["bytes_written"].as_u64().unwrap(),
        "{server}"
    );
    assert_cleaned_up(work.path(), &[]);
}

/// Every writeback device's strict_limit and max_ratio_fine.
fn bdi_limits() -> Vec<(String, String, String)> {
    let mut v: Vec<_> = std::fs::read_dir("/sys/class/bdi")
        .unwrap()
        .flatten()
        .map(|e| {
            let read = |a: &str| std::fs::read_to_string(e.path().join(a)).unwrap_or_default();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, read("strict_limit"), read("max_ratio_fine"))
        })
        .collect();
    v.sort();
    v
}
