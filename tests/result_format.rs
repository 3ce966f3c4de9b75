//! result.json as users read it: a real trial's document has exactly the keys
//! docs/result-format.md documents (so renaming a key fails here, not as a "-" in a table),
//! `iotrial analyze --json` prints the same keys for its part, and a document written before
//! `format_version` existed is migrated when read.

use assert_cmd::Command;
use iotrial::result;
use serde_json::Value;
use std::path::Path;

mod common;

/// Keys only a trial with the block trace has (tests/monitor.rs checks them on one).
fn trace_only(key: &str) -> bool {
    key.starts_with("monitor.io_classes[]") || key.starts_with("monitor.trace.")
}

fn iotrial() -> Command {
    Command::cargo_bin("iotrial").unwrap()
}

fn run_json(target: &Path, out: &Path) -> Value {
    let a = iotrial()
        .args(["run", "dvr", "--json", "--target"])
        .arg(format!("dir:{}", target.display()))
        .arg("--out")
        .arg(out)
        .args(["--set", "samples=20", "--set", "region_size=1MiB"])
        .args(["--set", "io_size=64KiB", "--set", "window=20ms"])
        .assert()
        .success();
    serde_json::from_slice(&a.get_output().stdout).unwrap()
}

/// Keys a run in real time writes only when something happened: a failure, an overflow, a
/// stall (an empty list has no keys below it).
fn when_it_failed(key: &str) -> bool {
    key.starts_with("verdict.first_failure")
        || key.starts_with("verdict.failure.")
        || key.starts_with("verdict.probes[].first_failure.")
        || key.starts_with("streams[].buffer.overflows[]")
        || key.starts_with("streams[].buffer.stalls[]")
}

/// Asserts that `doc`'s keys are exactly those documented for its kind (trace-only keys, and
/// device keys on a directory target with no device to watch, are not required; nor are
/// real-time keys in a run that was not in real time).
fn assert_documented(doc: &Value) {
    let kind = doc["kind"].as_str().unwrap_or_default().to_string();
    let realtime = doc["params"]["pacing"] == "realtime" || kind == "capacity";
    let other_pacing = |k: &str| {
        if realtime {
            when_it_failed(k)
        } else {
            common::keys::realtime_only(&kind, k)
        }
    };
    // A directory target on a disk-less filesystem (tmpfs) has no device to watch; the trace
    // trial of tests/monitor.rs checks every key on a stack that has one.
    let no_devices = doc["monitor"]["devices"].as_array().unwrap().is_empty();
    let no_stack_devices = doc["fingerprint"]["devices"]
        .as_array()
        .is_some_and(|d| d.is_empty());
    let without_device = |k: &str| {
        (no_devices && k.starts_with("monitor.devices[]"))
            || (no_stack_devices && k.starts_with("fingerprint.devices[]"))
    };
    // `verdict.impossible` is written only when a figure is impossible; `fsck` and `mkfs`
    // only on stacks with a filesystem iotrial made; a verify mismatch's details only when
    // there is one.
    let when_set = |k: &str| {
        k == "verdict.impossible"
            || k == "fingerprint.tools.mkfs"
            || k == "fingerprint.tools.fsck"
            || k.starts_with("streams[].verify.first[]")
            || k == "streams[].stopped"
            || k.starts_with("streams[].prio_ios")
            || k.starts_with("streams[].steadystate")
            || k.starts_with("streams[].latency_target")
    };
    let expected =
        |k: &str| !(trace_only(k) || without_device(k) || when_set(k) || other_pacing(k));
    let (undocumented, missing) = common::keys::compare_keys(doc, expected);
    assert!(
        undocumented.is_empty() && missing.is_empty(),
        "{}: keys not in docs/result-format.md: {undocumented:?}; documented but not written: {missing:?}",
        doc["kind"]
    );
}

#[test]
fn a_real_result_has_exactly_the_documented_keys() {
    let (target, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let doc = run_json(target.path(), out.path());
    assert_eq!(doc["format_version"], result::FORMAT_VERSION);
    assert_eq!(
        (&doc["workload"], &doc["kind"]),
        (&"dvr".into(), &"dvr".into())
    );
    assert_documented(&doc);
    let (target, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = iotrial()
        .args(["run", "stream", "--json", "--target"])
        .arg(format!("dir:{}", target.path().display()))
        .arg("--out")
        .arg(out.path())
        .args(["--set", "writers=2", "--set", "bytes=4MiB"])
        .args(["--set", "io_size=64KiB", "--set", "interval=10ms"])
        .args(["--set", "settle_window=20ms", "--set", "raw_mb_s=100"])
        .assert()
        .success();
    let stream: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(stream["kind"], "stream");
    assert_documented(&stream);
    // Both in real time: a writer and a reader each, every key of their buffers.
    for (kind, sets) in [
        (
            "dvr",
            [
                "recorders=1",
                "players=1",
                "region_size=4MiB",
                "io_size=64KiB",
            ],
        ),
        (
            "stream",
            ["writers=1", "readers=1", "file_size=4MiB", "io_size=64KiB"],
        ),
    ] {
        let (target, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let mut cmd = iotrial();
        cmd.args(["run", kind, "--json", "--target"])
            .arg(format!("dir:{}", target.path().display()))
            .arg("--out")
            .arg(out.path())
            .args(["--set", "pacing=realtime", "--set", "duration=1s"])
            .args(["--set", "bitrate=4", "--set", "preroll=100ms"]);
        for s in sets {
            cmd.args(["--set", s]);
        }
        let doc: Value =
            serde_json::from_slice(&cmd.assert().success().get_output().stdout).unwrap();
        assert_eq!(doc["params"]["pacing"], "realtime");
        assert!(doc["streams"][0]["buffer"].is_object(), "{kind}");
        assert_documented(&doc);
    }
    let (target, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = iotrial()
        .args(["run", "job", "--json", "--target"])
        .arg(format!("dir:{}", target.path().display()))
        .arg("--out")
        .arg(out.path())
        .args(["--set", "rw=randwrite", "--set", "numjobs=2"])
        .args(["--set", "size=1MiB", "--set", "bs=64KiB"])
        .args(["--set", "verify=crc32c"])
        .assert()
        .success();
    let job: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(job["kind"], "job");
    assert_documented(&job);
    assert_eq!(
        job["verdict"]["groups"][0]["ios"], 64,
        "size / bs writes per job, and as many reads back"
    );
    // A capacity search on a directory.
    let (target, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = iotrial()
        .args(["capacity", "dvr", "--json", "--max", "3", "--target"])
        .arg(format!("dir:{}", target.path().display()))
        .arg("--out")
        .arg(out.path())
        .args(["--set", "region_size=4MiB", "--set", "io_size=64KiB"])
        .args(["--set", "samples=20", "--set", "duration=1s"])
        .args(["--set", "bitrate=4", "--set", "preroll=1s"])
        .assert()
        .success();
    let search: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(search["kind"], "capacity");
    assert!(search["verdict"]["probes"].as_array().unwrap().len() >= 2);
    assert_documented(&search);
    let (target, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = iotrial()
        .args(["run", "tree", "--json", "--target"])
        .arg(format!("dir:{}", target.path().display()))
        .arg("--out")
        .arg(out.path())
        .args(["--set", "dirs=40", "--set", "threads=2", "--set", "depth=3"])
        .assert()
        .success();
    let tree: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(tree["kind"], "tree");
    assert_documented(&tree);
}

#[test]
fn analyze_prints_the_analysis_part_with_the_same_keys() {
    let (target, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let doc = run_json(target.path(), out.path());
    let run = std::fs::read_dir(out.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let samples = run.path().join("trials/dir/dvr/r1/samples.csv");
    let a = iotrial()
        .args(["analyze", "dvr", "--json"])
        .arg(&samples)
        .assert()
        .success();
    let re: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let keys: Vec<&str> = re.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    let mut want = vec![
        "format_version",
        "kind",
        "params",
        "warnings",
        "streams",
        "verdict",
    ];
    want.sort();
    assert_eq!(keys, want);
    for k in ["format_version", "kind", "params", "streams", "verdict"] {
        assert_eq!(re[k], doc[k], "{k}");
    }
}

#[test]
fn a_result_without_format_version_is_migrated() {
    let p = Path::new("tests/fixtures/results-0.1.0/trials/a/dvr-buffered/r1/result.json");
    let raw: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    assert!(raw.get("format_version").is_none() && raw.get("kind").is_none());
    let doc = result::read(p).unwrap();
    assert_eq!(doc.format_version, result::FORMAT_VERSION);
    assert_eq!(doc.kind, "dvr", "format 0's workload was the kind");
    assert_eq!(doc.workload, "dvr");
    assert_eq!(doc.verdict, raw["verdict"]);
    assert_eq!(doc.streams.len(), 4);
}

#[test]
fn unreadable_results_are_refused_with_the_reason() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("result.json");
    for (text, reason) in [
        (r#"{"verdict": {}}"#, "not a result.json written by iotrial"),
        (
            r#"{"workload": "dvr", "verdict": {}}"#,
            "before result.json had a format_version",
        ),
        (r#"{"format_version": 99}"#, "newer iotrial"),
        (r#"{"format_version": 1}"#, "missing field"),
    ] {
        std::fs::write(&p, text).unwrap();
        let e = result::read(&p).unwrap_err().to_string();
        assert!(
            e.contains("result.json") && e.contains(reason),
            "{text}: {e}"
        );
    }
}
