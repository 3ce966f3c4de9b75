//! fio on `iotrial device serve` (root only): serves `emu:hdd,size=8GiB` (scale 1), runs fio's
//! QD1 random 4 KiB O_DIRECT reads on the loop device for 10 s, and compares fio's mean
//! completion latency with the model's expected random access time (the figure `device probe`
//! prints beside its own measurement) and with the service time the server says the model gave
//! those reads. Results: bench/README.md.

#[path = "../tests/common/mod.rs"]
mod common;

use common::{missing, which, Need, Served};
use serde_json::Value;
use std::process::Command;

const SPEC: &str = "emu:hdd,size=8GiB";
const RUNTIME_S: &str = "10";

fn main() {
    let needs = [
        Need::Root,
        Need::Loop,
        Need::Fuse,
        Need::Tool("losetup"),
        Need::Tool("fio"),
    ];
    if let Some(why) = needs.into_iter().find_map(missing) {
        println!("serve_fio: skipped: {why}");
        return;
    }
    let served = Served::start(env!("CARGO_BIN_EXE_iotrial"), SPEC);
    let dev = served.device();
    let expected_ms = served.ready["expectations"]["random_read_ms"]
        .as_f64()
        .unwrap();
    let fio = Command::new(which("fio").unwrap())
        .args([
            "--name=seek",
            "--rw=randread",
            "--bs=4k",
            "--iodepth=1",
            "--ioengine=psync",
            "--direct=1",
            "--time_based",
            "--output-format=json",
        ])
        .arg(format!("--runtime={RUNTIME_S}"))
        .arg(format!("--filename={dev}"))
        .output()
        .expect("fio runs");
    let stats = served.stop();
    assert!(
        fio.status.success(),
        "{}",
        String::from_utf8_lossy(&fio.stderr)
    );
    let report: Value = serde_json::from_slice(&fio.stdout).unwrap();
    let read = &report["jobs"][0]["read"];
    let clat_ms = read["clat_ns"]["mean"].as_f64().unwrap() / 1e6;
    let ios = read["total_ios"].as_u64().unwrap();
    let server = &stats["server"];
    let model_ms = server["service_us_mean"]["read"].as_f64().unwrap() / 1e3;
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("{SPEC} on {dev}: fio randread 4 KiB QD1, {RUNTIME_S} s, {ios} I/Os");
    println!(
        "fio mean completion latency {clat_ms:.3} ms; model expects {expected_ms:.3} ms; ratio {:.4}",
        clat_ms / expected_ms
    );
    println!(
        "server: mean service time of reads {model_ms:.3} ms (ratio to the expectation {:.4}); replies late by {:.1} µs on average, {:.0} µs at most",
        model_ms / expected_ms,
        server["late_us_mean"].as_f64().unwrap(),
        server["late_us_max"].as_f64().unwrap()
    );
    println!("load average: {}", load.trim());
}
