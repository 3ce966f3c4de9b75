//! Real-time record streams against fio's `rate` (root only): one emulated disk served with
//! `iotrial device serve emu:hdd,size=8GiB,write_back=false` (scale 1, every write to the
//! media), on which fio and `iotrial run dvr` with `pacing=realtime` take turns: one writer of
//! 1 MiB random O_DIRECT writes over the whole disk, paced at RATE writes a second (fio:
//! `rate_iops`; iotrial: a bitrate of RATE MiB a second, a chunk ready every 1/RATE s). One
//! writer, because fio starts its jobs together on one period, so several of its paced jobs
//! issue in bursts where iotrial's recorders, each starting with its own fraction of a chunk,
//! do not. Prints each tool's mean latency
//! and their ratio: fio's `lat` (from its submission), iotrial's latency counted from when
//! each chunk was wanted (`streams[].buffer.lat_from_wanted_ms`) and its plain access time.
//! Where the disk keeps up the two means agree. Then the same at a rate the disk cannot keep
//! up with: fio's latency stays the disk's service time (each late write is measured from its
//! own late issue: coordinated omission), iotrial's from-wanted latency grows with the backlog,
//! and its record buffers overflow. Results: bench/README.md.
//!
//! `REALTIME_FIO_ROUNDS` (2) and `REALTIME_FIO_RUNTIME` (30, seconds) change the defaults. Run
//! it at normal priority on a busy host (build it niced with `--no-run`, then run the binary):
//! iotrial counts its own thread's late wake-up in the latency from wanted, fio does not count
//! its late issue.

#[path = "../tests/common/mod.rs"]
mod common;

use common::{missing, which, Need, Served};
use serde_json::Value;
use std::process::Command;

const SPEC: &str = "emu:hdd,size=8GiB,write_back=false";
const STREAMS: u64 = 1;
/// The writer's region: the whole disk.
const REGION: u64 = 8 << 30;
const MIB: u64 = 1 << 20;

/// Mean latencies of one run, ms.
struct Run {
    /// fio's `lat` mean, or iotrial's access time (completion minus issue).
    mean_ms: f64,
    /// iotrial: completion minus when the chunk was wanted.
    from_wanted_ms: Option<f64>,
    ios: u64,
    overflow_mb: Option<f64>,
}

fn fio(dev: &str, rate: u64, runtime: u32) -> Run {
    let o = Command::new(which("fio").unwrap())
        .args([
            "--name=rec",
            "--rw=randwrite",
            "--bs=1M",
            "--direct=1",
            "--ioengine=psync",
            "--iodepth=1",
            "--thread",
            "--time_based",
            "--group_reporting",
            "--output-format=json",
        ])
        .arg(format!("--numjobs={STREAMS}"))
        .arg(format!("--size={REGION}"))
        .arg(format!("--rate_iops={rate}"))
        .arg(format!("--runtime={runtime}"))
        .arg(format!("--filename={dev}"))
        .output()
        .expect("fio runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let w = &r["jobs"][0]["write"];
    Run {
        mean_ms: w["lat_ns"]["mean"].as_f64().unwrap() / 1e6,
        from_wanted_ms: None,
        ios: w["total_ios"].as_u64().unwrap(),
        overflow_mb: None,
    }
}

fn iotrial(dev: &str, rate: u64, runtime: u32, out: &std::path::Path) -> Run {
    // RATE chunks of 1 MiB a second, in Mbit/s.
    let mbit = (rate * MIB * 8) as f64 / 1e6;
    let o = Command::new(env!("CARGO_BIN_EXE_iotrial"))
        .args(["run", "dvr", "--json", "--monitor", "none", "--target"])
        .arg(format!("block:{dev}"))
        .arg("--out")
        .arg(out)
        .args(["--set", "pacing=realtime", "--set", "players=0"])
        .args(["--set", &format!("recorders={STREAMS}")])
        .args(["--set", "io_size=1MiB", "--set", "region_size=0"])
        .args(["--set", &format!("bitrate={mbit}"), "--set", "buffer=5s"])
        .args(["--set", &format!("duration={runtime}s")])
        .output()
        .expect("iotrial runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let streams = doc["streams"].as_array().unwrap();
    let weighted = |f: &dyn Fn(&Value) -> f64| {
        let n: f64 = streams.iter().map(|s| s["samples"].as_f64().unwrap()).sum();
        streams
            .iter()
            .map(|s| f(s) * s["samples"].as_f64().unwrap())
            .sum::<f64>()
            / n
    };
    Run {
        mean_ms: weighted(&|s| s["lat_ms"]["mean"].as_f64().unwrap()),
        from_wanted_ms: Some(weighted(&|s| {
            s["buffer"]["lat_from_wanted_ms"]["mean"].as_f64().unwrap()
        })),
        ios: streams.iter().map(|s| s["samples"].as_u64().unwrap()).sum(),
        overflow_mb: doc["verdict"]["overflow_mb"].as_f64(),
    }
}

fn env_u32(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let needs = [
        Need::Root,
        Need::Loop,
        Need::Fuse,
        Need::Tool("losetup"),
        Need::Tool("fio"),
    ];
    if let Some(why) = needs.into_iter().find_map(missing) {
        println!("realtime_fio: skipped: {why}");
        return;
    }
    let rounds = env_u32("REALTIME_FIO_ROUNDS", 2);
    let runtime = env_u32("REALTIME_FIO_RUNTIME", 30);
    let out = tempfile::tempdir().unwrap();
    let served = Served::start(env!("CARGO_BIN_EXE_iotrial"), SPEC);
    let dev = served.device();
    println!(
        "{SPEC} on {dev}: {STREAMS} writer of 1 MiB random O_DIRECT writes over {} GiB, {runtime} s a run, {rounds} rounds",
        REGION >> 30
    );
    // 10 writes a second of a disk that takes about 45 at random (it keeps up); 80 (it cannot).
    for (rate, what) in [
        (10u64, "the disk keeps up"),
        (80, "the disk cannot keep up"),
    ] {
        let (mut f, mut i) = (Vec::new(), Vec::new());
        for r in 0..rounds {
            // Alternate which goes first.
            if r % 2 == 0 {
                f.push(fio(&dev, rate, runtime));
                i.push(iotrial(&dev, rate, runtime, out.path()));
            } else {
                i.push(iotrial(&dev, rate, runtime, out.path()));
                f.push(fio(&dev, rate, runtime));
            }
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let fio_ms = mean(&f.iter().map(|r| r.mean_ms).collect::<Vec<_>>());
        let wanted_ms = mean(
            &i.iter()
                .map(|r| r.from_wanted_ms.unwrap())
                .collect::<Vec<_>>(),
        );
        let access_ms = mean(&i.iter().map(|r| r.mean_ms).collect::<Vec<_>>());
        let overflow = mean(
            &i.iter()
                .map(|r| r.overflow_mb.unwrap_or(0.0))
                .collect::<Vec<_>>(),
        );
        println!(
            "rate {rate} writes/s a writer ({what}): fio lat mean {fio_ms:.2} ms ({} I/Os a run); iotrial from wanted {wanted_ms:.2} ms, access time {access_ms:.2} ms ({} I/Os a run, {overflow:.1} MB overflowed); iotrial from wanted / fio {:.3}",
            f[0].ios,
            i[0].ios,
            wanted_ms / fio_ms
        );
    }
    let stats = served.stop();
    let server = &stats["server"];
    println!(
        "server: replies late by {:.1} µs on average, {:.0} µs at most",
        server["late_us_mean"].as_f64().unwrap_or(0.0),
        server["late_us_max"].as_f64().unwrap_or(0.0)
    );
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average: {}", load.trim());
}
