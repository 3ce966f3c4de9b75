//! Runs the real `iotrial` binary: a small dvr trial on a temporary directory, its files
//! checked against each other, `analyze` re-deriving the same verdict, and bad input refused.

mod common;

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

const SMALL: &[&str] = &[
    "--set",
    "samples=40",
    "--set",
    "region_size=4MiB",
    "--set",
    "io_size=64KiB",
    "--set",
    "window=50ms",
];

fn iotrial() -> Command {
    Command::cargo_bin("iotrial").unwrap()
}

/// The single trial directory under a results root.
fn trial_dir(out: &Path) -> PathBuf {
    let run = std::fs::read_dir(out)
        .unwrap()
        .next()
        .expect("a results directory")
        .unwrap()
        .path();
    run.join("trials/dir/dvr/r1")
}

fn run_small(target: &Path, out: &Path, extra: &[&str]) -> Value {
    let assert = iotrial()
        .args(["run", "dvr", "--json", "--target"])
        .arg(format!("dir:{}", target.display()))
        .arg("--out")
        .arg(out)
        .args(SMALL)
        .args(extra)
        .assert()
        .success();
    serde_json::from_slice(&assert.get_output().stdout).expect("result.json on stdout")
}

#[test]
fn dvr_run_writes_consistent_results_and_analyze_agrees() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let doc = run_small(target.path(), out.path(), &[]);
    let dir = trial_dir(out.path());

    let on_disk: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(on_disk, doc, "--json prints result.json");
    for key in [
        "workload", "params", "target", "warnings", "streams", "verdict",
    ] {
        assert!(doc.get(key).is_some(), "result.json has {key}");
    }
    assert_eq!(doc["params"]["io_size"], 65536);
    assert_eq!(doc["params"]["recorders"], 8);
    let streams = doc["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 10);
    assert_eq!(streams[0]["name"], "playback0");
    assert_eq!(streams[9]["name"], "playback1");
    for s in streams {
        for k in ["name", "role", "samples", "elapsed_s", "mbit_s", "lat_ms"] {
            assert!(s.get(k).is_some(), "stream has {k}");
        }
        for k in ["mean", "p50", "p90", "p99", "p999", "max", "stddev"] {
            assert!(s["lat_ms"][k].as_f64().is_some(), "lat_ms.{k}");
        }
        match s["role"].as_str().unwrap() {
            "record" => assert!(
                s["mbit_guaranteed"].as_f64().unwrap() > 0.0
                    && s["window_peak_ms"].as_f64().is_some()
            ),
            "playback" => assert!(s["preroll_s"].as_f64().unwrap() > 0.0),
            r => panic!("unexpected role {r}"),
        }
    }
    let v = &doc["verdict"];
    for k in [
        "record_mbit_guaranteed",
        "playback_preroll_s",
        "record_fairness_jain",
        "playback_fairness_jain",
        "record_completion_spread",
        "playback_completion_spread",
        "target_mbit",
        "meets_target",
    ] {
        assert!(v.get(k).is_some(), "verdict has {k}");
    }

    let samples = std::fs::read_to_string(dir.join("samples.csv")).unwrap();
    let mut lines = samples.lines();
    assert_eq!(
        lines.next().unwrap(),
        "stream,phase,role,op,offset,bytes,issue_ns,latency_ns,error"
    );
    assert_eq!(lines.count(), 10 * 40, "row count = streams x samples");
    let ts = std::fs::read_to_string(dir.join("timeseries.csv")).unwrap();
    assert!(ts.starts_with("start_s,phase,stream,role,ios,"));
    assert_eq!(doc["phases"][0]["kind"], "prepare");
    assert_eq!(doc["phases"][1]["name"], "run");
    assert_eq!(doc["phases"][1]["samples"], 400);
    assert!(dir
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("manifest.json")
        .exists());

    let a = iotrial()
        .args(["analyze", "dvr", "--json"])
        .arg(dir.join("samples.csv"))
        .assert()
        .success();
    let re: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(
        re["verdict"], doc["verdict"],
        "analyze re-derives the run's verdict"
    );
    assert_eq!(re["streams"], doc["streams"]);

    // A 10x longer buffer can only smooth the worst window, never worsen it.
    let a = iotrial()
        .args(["analyze", "dvr", "--json", "--set", "window=500ms"])
        .arg(dir.join("samples.csv"))
        .assert()
        .success();
    let longer: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(longer["params"]["window"], 0.5);

    assert_eq!(
        std::fs::read_dir(target.path()).unwrap().count(),
        0,
        "the run removed its files"
    );
}

#[test]
fn terminal_output_has_table_and_verdict_line() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let a = iotrial()
        .args(["run", "dvr", "--target"])
        .arg(format!("dir:{}", target.path().display()))
        .arg("--out")
        .arg(out.path())
        .args(SMALL)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(text.contains("record7"), "{text}");
    assert!(
        text.contains("records guaranteed ") && text.contains("Mbit/s with a 0.05 s buffer"),
        "{text}"
    );
    assert!(text.contains("playback needs "), "{text}");
    assert!(text.contains("results: "), "{text}");
}

/// Runs `iotrial run dvr` with `args`, expecting exit 2 and `needle` in the single error line.
fn refused(args: &[&str], needle: &str) {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut cmd = iotrial();
    cmd.args(["run"]).args(args).arg("--out").arg(out.path());
    if !args.contains(&"--target") {
        cmd.arg("--target")
            .arg(format!("dir:{}", target.path().display()));
    }
    let a = cmd.assert().code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(err.contains(needle), "expected '{needle}' in: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one clear line: {err}");
    assert_eq!(
        std::fs::read_dir(target.path()).unwrap().count(),
        0,
        "nothing left in the target"
    );
    assert_eq!(
        std::fs::read_dir(out.path()).unwrap().count(),
        0,
        "no results written"
    );
}

#[test]
fn bad_input_gets_one_line_and_exit_2() {
    refused(&["dvd"], "unknown workload 'dvd'; available: dvr");
    refused(
        &["dvr", "--set", "recorderz=3"],
        "unknown parameter 'recorderz'",
    );
    refused(
        &["dvr", "--set", "io_size=0"],
        "parameter io_size: must be greater than 0",
    );
    refused(&["dvr", "--set", "io_size=1000"], "multiple of 4096");
    refused(&["dvr", "--set", "io_size=lots"], "parameter io_size:");
    refused(
        &["dvr", "--set", "window=5 fortnights"],
        "parameter window:",
    );
    refused(&["dvr", "--set", "samples"], "not of the form key=value");
    refused(&["dvr", "--set", "region_size=1000TiB"], "region_size");
    refused(
        &["dvr", "--target", "dir:/nonexistent/iotrial"],
        "does not exist",
    );
    refused(
        &["dvr", "--target", "tape:/dev/st0"],
        "unknown device kind 'tape'",
    );
    refused(
        &[
            "dvr",
            "--target",
            "dir:/proc/sys",
            "--set",
            "region_size=1MiB",
        ],
        "not writable",
    );
}

#[test]
fn analyze_refuses_a_bad_samples_file() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("samples.csv");
    std::fs::write(&p, "stream,role\nx,y\n").unwrap();
    let a = iotrial().args(["analyze", "dvr"]).arg(&p).assert().code(2);
    assert!(String::from_utf8_lossy(&a.get_output().stderr).contains("header is"));
}

#[test]
fn ctrl_c_stops_the_trial_and_leaves_nothing() {
    let target = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out").display().to_string();
    let target_s = format!("dir:{}", target.path().display());
    let mut args = vec!["run", "dvr", "--target", &target_s, "--out", &out];
    args.extend(common::ENDLESS);
    let mut child = common::spawn_iotrial(work.path(), &args);
    common::wait_until("the trial's stream files exist", 120, || {
        common::stream_files_under(target.path()).len() == 10
    });
    common::signal(&child, rustix::process::Signal::INT);
    // The engine polls its stop flag every 20 ms; the bound only guards against a hang.
    let status = common::reaped(&mut child, 30);
    assert_eq!(status.code(), Some(130));
    assert_eq!(
        std::fs::read_dir(target.path()).unwrap().count(),
        0,
        "stream files removed"
    );
    assert!(
        !work.path().join("out").exists(),
        "no partial result written"
    );
}

/// tests/fixtures/dvr-before-phases: a dvr trial (seed 11) and `iotrial analyze --json` of its
/// samples.csv, both written by iotrial before phases existed.
const BEFORE_PHASES: &str = "tests/fixtures/dvr-before-phases";

fn json_file(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn analyze_gives_a_samples_csv_from_before_phases_the_verdict_it_gave_then() {
    let before = Path::new(BEFORE_PHASES);
    let then = json_file(&before.join("analyze.json"));
    let a = iotrial()
        .args(["analyze", "dvr", "--json"])
        .arg(before.join("samples.csv"))
        .assert()
        .success();
    let now: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(now["verdict"], then["verdict"]);
    assert_eq!(now["streams"], then["streams"]);
    // Every parameter it had then, as it was; parameters added since (real-time pacing) are
    // at their defaults.
    for (k, v) in then["params"].as_object().unwrap() {
        assert_eq!(&now["params"][k], v, "params.{k}");
    }
    assert_eq!(now["params"]["pacing"], "max");
    // The file alone (no result.json beside it), with the parameters it was run with.
    let alone = tempfile::tempdir().unwrap();
    std::fs::copy(before.join("samples.csv"), alone.path().join("samples.csv")).unwrap();
    let a = iotrial()
        .args(["analyze", "dvr", "--json"])
        .arg(alone.path().join("samples.csv"))
        .args(["--set", "window=50ms", "--set", "target_mbit=19.4"])
        .assert()
        .success();
    let now: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(now["verdict"], then["verdict"]);
}

/// Each stream's offsets in a samples.csv, in issue order.
fn offsets_by_stream(samples: &Path) -> Vec<(String, Vec<u64>)> {
    let text = std::fs::read_to_string(samples).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (stream, offset) = (col("stream"), col("offset"));
    let mut out: Vec<(String, Vec<u64>)> = Vec::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        let o = f[offset].parse().unwrap();
        match out.iter_mut().find(|(n, _)| n == f[stream]) {
            Some((_, v)) => v.push(o),
            None => out.push((f[stream].to_string(), vec![o])),
        }
    }
    out
}

/// The first `n` offsets stream `index` of a dvr plan seeded with `seed` issues over its
/// `region` bytes in `io`-byte I/Os: the stream's generator draws a slot per I/O. `then`: as
/// versions before hashed stream seeds (CHANGELOG) drew them, the fixture's among them: the
/// plan's seed xored with the index times SplitMix64's step, which gave streams one
/// sequence, some draws apart.
fn seeded_offsets(
    seed: &str,
    index: usize,
    (region, io, n): (u64, u64, usize),
    then: bool,
) -> Vec<u64> {
    use iotrial::workload::{dvr::Dvr, Workload};
    let params = Dvr
        .resolve(&[("seed".to_string(), seed.to_string())])
        .unwrap();
    let plan = Dvr.plan(&params).unwrap();
    let stream_seed = match then {
        true => plan.seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        false => iotrial::engine::stream_seed(plan.seed, index),
    };
    let mut rng = iotrial::engine::rng::SplitMix64::new(stream_seed);
    (0..n).map(|_| rng.below(region / io) * io).collect()
}

/// Where `window` stands in `sequence`, if it is a run of it.
fn found_at(window: &[u64], sequence: &[u64]) -> Option<usize> {
    sequence.windows(window.len()).position(|w| w == window)
}

#[test]
fn the_same_seed_issues_the_offsets_its_stream_seeds_draw() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let doc = run_small(target.path(), out.path(), &["--set", "seed=11"]);
    assert_eq!(doc["params"]["seed"], 11);
    let now = offsets_by_stream(&trial_dir(out.path()).join("samples.csv"));
    let then = offsets_by_stream(&Path::new(BEFORE_PHASES).join("samples.csv"));
    assert_eq!(now.len(), then.len());
    for (index, ((name, a), (name_then, b))) in now.iter().zip(&then).enumerate() {
        assert_eq!(name, name_then);
        // Sampling begins once every stream has completed an I/O, so each run skips as many
        // of a stream's first offsets as it issued before the slowest stream's first I/O
        // ended (a few, or hundreds on a loaded machine). Both runs' samples are runs of the
        // sequence the seed draws (the old one of the sequence its version drew), the old
        // one near its start.
        let sizes = (4 << 20, 64 << 10, 20_000);
        let (sequence, then_sequence) = (
            seeded_offsets("11", index, sizes, false),
            seeded_offsets("11", index, sizes, true),
        );
        let old = found_at(b, &then_sequence);
        assert!(
            old.is_some_and(|k| k < 50),
            "{name}: the fixture's {b:?} is not near the start of the seed's sequence"
        );
        assert!(
            found_at(a, &sequence).is_some(),
            "{name}: {a:?} is not a run of the seed's sequence (before phases: {b:?})"
        );
    }
}
