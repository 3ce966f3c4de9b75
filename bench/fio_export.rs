//! The fio job `iotrial export-fio` writes for a dvr trial, run by fio on the same emulated
//! device (root, loop, FUSE; prints why it skips otherwise). Runs `iotrial run dvr` on
//! `emu:hdd,size=8GiB` (scale 1, raw regions), exports its `trial.fio`, serves the same model
//! with `iotrial device serve` and runs fio on that device with the exported job. Prints each
//! role's mean latency (record: writes, playback: reads) by iotrial and by fio (completion
//! latency, weighted by I/Os over the role's jobs) and the ratio. Results: bench/README.md.

#[path = "../tests/common/mod.rs"]
mod common;

use common::figures::results_root;
use common::{missing, which, Need};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

const SPEC: &str = "emu:hdd,size=8GiB";

fn iotrial() -> Command {
    Command::new(env!("CARGO_BIN_EXE_iotrial"))
}

/// Mean of `(mean, weight)` pairs, weighted.
fn weighted(v: &[(f64, f64)]) -> f64 {
    let w: f64 = v.iter().map(|x| x.1).sum();
    v.iter().map(|x| x.0 * x.1).sum::<f64>() / w
}

fn main() {
    let needs = [
        Need::Root,
        Need::Loop,
        Need::Fuse,
        Need::Tool("fio"),
        Need::Tool("losetup"),
    ];
    if let Some(why) = needs.into_iter().find_map(missing) {
        println!("fio_export: skipped: {why}");
        return;
    }
    let samples = std::env::var("FIO_EXPORT_SAMPLES").unwrap_or_else(|_| "100".into());
    let out = tempfile::tempdir().unwrap();
    let run = iotrial()
        .args([
            "run",
            "dvr",
            "--json",
            "--monitor",
            "none",
            "--target",
            SPEC,
            "--out",
        ])
        .arg(out.path())
        .args([
            "--set",
            &format!("samples={samples}"),
            "--set",
            "region_size=256MiB",
        ])
        .output()
        .expect("iotrial runs");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let doc: Value = serde_json::from_slice(&run.stdout).unwrap();
    let results = results_root(out.path());
    let exported = iotrial().arg("export-fio").arg(&results).output().unwrap();
    assert!(
        exported.status.success(),
        "{}",
        String::from_utf8_lossy(&exported.stderr)
    );
    let job = String::from_utf8_lossy(&exported.stdout)
        .trim()
        .strip_prefix("wrote ")
        .expect("the file written")
        .to_string();
    let mut serve = iotrial()
        .args(["device", "serve", SPEC, "--json"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("device serve starts");
    let mut lines = BufReader::new(serve.stdout.take().unwrap());
    let mut line = String::new();
    lines.read_line(&mut line).unwrap();
    let ready: Value = serde_json::from_str(&line).expect("device line");
    let dev = ready["device"].as_str().unwrap().to_string();
    let fio = Command::new(which("fio").unwrap())
        .env("IOTRIAL_TARGET", &dev)
        .arg("--output-format=json")
        .arg(&job)
        .output()
        .expect("fio runs");
    let pid = rustix::process::Pid::from_raw(serve.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let _ = serve.wait();
    assert!(
        fio.status.success(),
        "{}",
        String::from_utf8_lossy(&fio.stderr)
    );
    let report: Value = serde_json::from_slice(&fio.stdout).unwrap();
    println!("{SPEC}: dvr, {samples} samples per stream, then fio with {job} on {dev}");
    println!(
        "| role | iotrial mean ms | fio mean clat ms | ratio iotrial / fio | I/Os iotrial / fio |"
    );
    println!("|---|---|---|---|---|");
    for (role, dir) in [("record", "write"), ("playback", "read")] {
        let mine: Vec<(f64, f64)> = doc["streams"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["role"] == role)
            .map(|s| {
                (
                    s["lat_ms"]["mean"].as_f64().unwrap(),
                    s["samples"].as_f64().unwrap(),
                )
            })
            .collect();
        let theirs: Vec<(f64, f64)> = report["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|j| j["jobname"].as_str().unwrap_or("").starts_with(role))
            .map(|j| {
                (
                    j[dir]["clat_ns"]["mean"].as_f64().unwrap() / 1e6,
                    j[dir]["total_ios"].as_f64().unwrap(),
                )
            })
            .collect();
        let (a, b) = (weighted(&mine), weighted(&theirs));
        let n = |v: &[(f64, f64)]| v.iter().map(|x| x.1).sum::<f64>();
        println!(
            "| {role} | {a:.2} | {b:.2} | **{:.3}** | {:.0} / {:.0} |",
            a / b,
            n(&mine),
            n(&theirs)
        );
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average after: {}", load.trim());
}
