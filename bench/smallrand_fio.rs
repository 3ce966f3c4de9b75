//! smallrand's random-write phase against fio (root only): serves
//! `emu:flash,card=duracell,size=1GiB` (scale 1), makes ext2 on it and mounts it, runs
//! `iotrial run smallrand` (iozone's -t 4 -s 1m -r 4k -I) in a directory of it, then fio's
//! equivalent (4 jobs, each on its own 1 MiB file in the same filesystem, 4 KiB O_DIRECT random
//! writes, psync) on the same device in the same run, and prints both aggregate KB/s and their
//! ratio. iozone itself is not in Debian's main archive. Results: bench/README.md.

#[path = "../tests/common/mod.rs"]
mod common;

use common::{missing, run, which, Need, Served};
use serde_json::Value;
use std::process::Command;

const SPEC: &str = "emu:flash,card=duracell,size=1GiB";

fn main() {
    let needs = [
        Need::Root,
        Need::Loop,
        Need::Fuse,
        Need::Tool("fio"),
        Need::Tool("mkfs.ext2"),
    ];
    if let Some(why) = needs.into_iter().find_map(missing) {
        println!("smallrand_fio: skipped: {why}");
        return;
    }
    let served = Served::start(env!("CARGO_BIN_EXE_iotrial"), SPEC);
    let dev = served.device();
    let mnt = tempfile::tempdir().unwrap();
    let m = mnt.path().to_str().unwrap().to_string();
    run("mkfs.ext2", &["-q", "-F", &dev]).expect("mkfs.ext2");
    run("mount", &[&dev, &m]).expect("mount");
    let results = tempfile::tempdir().unwrap();
    let ours = Command::new(env!("CARGO_BIN_EXE_iotrial"))
        .args([
            "run",
            "smallrand",
            "--json",
            "--monitor",
            "none",
            "--target",
        ])
        .arg(format!("dir:{m}"))
        .arg("--out")
        .arg(results.path())
        .output()
        .expect("iotrial runs");
    let fio = Command::new(which("fio").unwrap())
        .args([
            "--name=randwrite",
            "--numjobs=4",
            "--size=1m",
            "--bs=4k",
            "--rw=randwrite",
            "--direct=1",
            "--ioengine=psync",
            "--group_reporting",
            "--output-format=json",
        ])
        .arg(format!("--directory={m}"))
        .output()
        .expect("fio runs");
    let _ = run("umount", &[&m]);
    served.stop();
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    assert!(
        fio.status.success(),
        "{}",
        String::from_utf8_lossy(&fio.stderr)
    );
    let doc: Value = serde_json::from_slice(&ours.stdout).unwrap();
    let v = &doc["verdict"];
    let report: Value = serde_json::from_slice(&fio.stdout).unwrap();
    let fio_kbs = report["jobs"][0]["write"]["bw"].as_f64().unwrap();
    let rw = v["random_write_kB_s"].as_f64().unwrap();
    println!("{SPEC}, ext2, 4 threads x 1 MiB, 4 KiB O_DIRECT");
    println!(
        "iotrial smallrand: initial writers {:.0}, rewriters {:.0}, readers {:.0}, re-readers {:.0}, random readers {:.0}, random writers {rw:.0} kB/s",
        v["write_kB_s"].as_f64().unwrap(),
        v["rewrite_kB_s"].as_f64().unwrap(),
        v["read_kB_s"].as_f64().unwrap(),
        v["reread_kB_s"].as_f64().unwrap(),
        v["random_read_kB_s"].as_f64().unwrap(),
    );
    println!(
        "fio randwrite (4 jobs, group): {fio_kbs:.0} KiB/s; iotrial / fio = {:.3}",
        rw / fio_kbs
    );
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average: {}", load.trim());
}
