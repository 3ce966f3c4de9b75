//! Seed 003's workloads for real on an emulated flash card (root, loop, FUSE): smallrand's six
//! iozone phases, burst's drain time and victim latency, a replay of an iolog with the same
//! requests and bytes, and `capture` of dd on a loop device writing an iolog replay reads
//! back; malformed traces end with exit 2 naming the line. Sizes are small and the time scale
//! high so they run in seconds; no figure's size is asserted, only that it is there.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

const CARD: &str = "emu:flash,card=duracell,size=512MiB,scale=10";

fn run_json(work: &Path, args: &[&str]) -> Value {
    let results = tempfile::tempdir().unwrap();
    let out = results.path();
    let a = iotrial(work)
        .args(["run"])
        .args(args)
        .arg("--json")
        .arg("--out")
        .arg(out)
        .assert()
        .success();
    serde_json::from_slice(&a.get_output().stdout).expect("JSON on stdout")
}

#[test]
fn smallrand_reports_all_six_iozone_figures() {
    if !ready_to_emulate("smallrand_reports_all_six_iozone_figures", &["mkfs.ext2"]) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let doc = run_json(
        work.path(),
        &[
            "smallrand",
            "--target",
            CARD,
            "--fs",
            "ext2",
            "--set",
            "file_size=128KiB",
        ],
    );
    let names: Vec<&str> = doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "prepare",
            "write",
            "rewrite",
            "read",
            "reread",
            "random_read",
            "random_write"
        ]
    );
    for k in [
        "write",
        "rewrite",
        "read",
        "reread",
        "random_read",
        "random_write",
    ] {
        let v = doc["verdict"][format!("{k}_kB_s")].as_f64();
        assert!(v.is_some_and(|x| x > 0.0), "{k}: {}", doc["verdict"]);
    }
    assert_eq!(doc["verdict"]["errors"], 0);
    assert_eq!(doc["streams"].as_array().unwrap().len(), 4);
    assert_cleaned_up(work.path(), &[]);
}

#[test]
fn burst_gives_drain_time_and_victim_latency_during_and_between() {
    if !ready_to_emulate(
        "burst_gives_drain_time_and_victim_latency_during_and_between",
        &["mkfs.xfs"],
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let doc = run_json(
        work.path(),
        &[
            "burst",
            "--target",
            CARD,
            "--fs",
            "xfs",
            "--set",
            "files=30",
            "--set",
            "bursts=2",
            "--set",
            "period=2s",
            "--set",
            "victim_file=2MiB",
        ],
    );
    let v = &doc["verdict"];
    assert_eq!(v["drains_s"].as_array().unwrap().len(), 2, "{v}");
    assert!(v["drain_s"].as_f64().unwrap() > 0.0);
    // 30 files, each: open, header, 4 x (read, write), header, close.
    assert_eq!(v["update_ops"], 2 * 30 * 12);
    for k in [
        "victim_burst_p50_ms",
        "victim_burst_max_ms",
        "victim_idle_p50_ms",
        "victim_idle_p99_ms",
    ] {
        assert!(v[k].as_f64().is_some(), "{k}: {v}");
    }
    // The device's await comes from diskstats' intervals, which phases this short may miss.
    assert!(
        v.get("peak_await_ms").is_some() && v.get("peak_aqu_sz").is_some(),
        "{v}"
    );
    // The peak is the highest interval, never below a busy phase's mean (both in model time).
    let scale = doc["time_scale"].as_f64().unwrap();
    let data = doc["monitor"]["devices"].as_array().unwrap().iter();
    let busy = data
        .filter(|d| d["role"] == "data")
        .flat_map(|d| d["phases"].as_array().unwrap())
        .filter(|p| {
            p["phase"]
                .as_str()
                .is_some_and(|n| n.starts_with("burst") || n.starts_with("sync"))
        });
    for p in busy {
        let (peak, mean) = (&v["peak_await_ms"], p["await_ms"].as_f64().unwrap() * scale);
        let (aqu_peak, aqu) = (&v["peak_aqu_sz"], p["means"]["aqu_sz"].as_f64().unwrap());
        assert!(
            peak.as_f64().is_some_and(|x| x >= mean * (1.0 - 1e-9)),
            "{peak} < {mean}: {p}"
        );
        assert!(
            aqu_peak.as_f64().is_some_and(|x| x >= aqu * (1.0 - 1e-9)),
            "{aqu_peak} < {aqu}: {p}"
        );
    }
    assert_eq!(v["errors"], 0);
    assert_cleaned_up(work.path(), &[]);
}

#[test]
fn replay_of_an_iolog_does_its_requests_and_bytes() {
    if !ready_to_emulate(
        "replay_of_an_iolog_does_its_requests_and_bytes",
        &["mkfs.xfs"],
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("t.iolog");
    let mut text = String::from("fio version 3 iolog\n0 /f add\n0 /f open\n");
    for i in 0..40u64 {
        let op = if i % 3 == 0 { "write" } else { "read" };
        text.push_str(&format!(
            "{} /f {op} {} 4096\n",
            i * 500,
            (i * 7919 % 256) * 4096
        ));
    }
    text.push_str("20000 /f sync\n20001 /f close\n");
    std::fs::write(&log, text).unwrap();
    let set = format!("trace={}", log.display());
    for (pace, target) in [("original", CARD), ("afap", CARD)] {
        let doc = run_json(
            work.path(),
            &[
                "replay",
                "--target",
                target,
                "--fs",
                "xfs",
                "--set",
                &set,
                "--set",
                &format!("pace={pace}"),
            ],
        );
        let v = &doc["verdict"];
        assert_eq!(
            (v["ops"].as_u64(), v["bytes"].as_u64(), v["syncs"].as_u64()),
            (Some(40), Some(40 * 4096), Some(1)),
            "{v}"
        );
        assert_eq!(v["behind_max_s"].is_number(), pace == "original", "{v}");
    }
    assert_cleaned_up(work.path(), &[]);
}

#[test]
fn malformed_traces_exit_2_naming_the_line() {
    let work = tempfile::tempdir().unwrap();
    let log = work.path().join("bad.iolog");
    std::fs::write(&log, "fio version 2 iolog\n/f add\n/f read 0 x\n").unwrap();
    let a = iotrial(work.path())
        .args(["run", "replay", "--target"])
        .arg(format!("dir:{}", work.path().display()))
        .arg("--set")
        .arg(format!("trace={}", log.display()))
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(
        err.contains("bad.iolog, line 3") && err.contains("length"),
        "{err}"
    );
}

#[test]
fn capture_of_dd_writes_an_iolog_replay_reads() {
    if !ready_for_stacks("capture_of_dd_writes_an_iolog_replay_reads", &["dd"]) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let lo = TestLoop::new(16 << 20);
    let log = work.path().join("dd.iolog");
    let of = format!("of={}", lo.path());
    iotrial(work.path())
        .args(["capture", "--device", &lo.path(), "--out"])
        .arg(&log)
        .args([
            "--",
            "dd",
            "if=/dev/zero",
            &of,
            "bs=64k",
            "count=20",
            "oflag=direct",
        ])
        .assert()
        .success();
    let t = iotrial::trace::load(&log).unwrap();
    assert_eq!(t.format, "iolog3");
    let writes: Vec<_> = t
        .ops
        .iter()
        .filter(|o| o.kind == iotrial::trace::TraceKind::Write)
        .collect();
    assert_eq!(writes.iter().map(|o| o.len).sum::<u64>(), 20 * 65536);
    assert_eq!(writes[0].offset, 0);
    // A file is not a block device: refused as the user's mistake.
    iotrial(work.path())
        .args(["capture", "--device"])
        .arg(&log)
        .args(["--out", "/dev/null", "--duration", "1s"])
        .assert()
        .code(2);
}
