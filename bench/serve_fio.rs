//! fio on `iotrial device serve` (root only): serves `emu:hdd,size=8GiB` (scale 1), runs fio's
//! QD1 random 4 KiB O_DIRECT reads on the loop device for 10 s, and compares fio's mean
//! completion latency with the model's expected random access time (the figure `device probe`
//! prints beside its own measurement) and with the service time the server says the model gave
//! those reads. Results: bench/README.md.

#[path = "../tests/common/mod.rs"]
mod common;

use common::{missing, which, Need};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

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
    let mut serve = Command::new(env!("CARGO_BIN_EXE_iotrial"))
        .args(["device", "serve", SPEC, "--json"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("device serve starts");
    let mut out = BufReader::new(serve.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let ready: Value = serde_json::from_str(&line).expect("device line");
    let dev = ready["device"].as_str().unwrap().to_string();
    let expected_ms = ready["expectations"]["random_read_ms"].as_f64().unwrap();
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
    let pid = rustix::process::Pid::from_raw(serve.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    assert!(serve.wait().unwrap().success());
    line.clear();
    out.read_line(&mut line).unwrap();
    let stats: Value = serde_json::from_str(&line).expect("statistics line");
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
