//! The monitors with the real binary: diskstats against `iostat -x -y 1` run side by side,
//! kernel thread groups with CPU, the block trace's classes on ext4 against diskstats, an
//! emulated device's own request log against the trace, and bad monitor input. Tests that
//! need root, loop devices, mkfs, FUSE or sysstat skip with the reason (a failure under `CI`).

mod common;

use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The live file `name` of the trial's monitors under `work` (its TMPDIR), once it exists.
fn monitor_file(work: &Path, name: &str) -> Option<PathBuf> {
    std::fs::read_dir(work)
        .ok()?
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("iotrial-monitor-")
        })
        .map(|e| e.path().join(name))
        .find(|p| p.exists())
}

/// Waits, polling as fast as it can, until `name` exists among the trial's monitor files.
/// The bound is a deadlock guard.
fn await_monitor_file(work: &Path, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while monitor_file(work, name).is_none() {
        assert!(Instant::now() < deadline, "no monitor file {name}");
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// One report of `iostat -x -y -d 1`: per device, (write requests, kilobytes written) over its
/// interval (rates times the 1 s interval).
type Report = Vec<(String, f64, f64)>;

/// `iostat -x -y -d 1` in the background; its reports arrive on a channel as they are
/// printed.
struct Iostat {
    child: std::process::Child,
    reports: mpsc::Receiver<Report>,
}

impl Iostat {
    fn start() -> Iostat {
        let mut child = Command::new(which("iostat").unwrap())
            .args(["-x", "-y", "-d", "1"])
            .env("LC_ALL", "C")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, reports) = mpsc::channel();
        std::thread::spawn(move || {
            let mut cols: Option<(usize, usize)> = None;
            let mut report = Report::new();
            for line in out.lines().map_while(Result::ok) {
                let f: Vec<&str> = line.split_whitespace().collect();
                if f.first() == Some(&"Device") {
                    let at = |h: &str| f.iter().position(|c| *c == h).unwrap();
                    cols = Some((at("w/s"), at("wkB/s")));
                } else if f.is_empty() {
                    if cols.take().is_some() && tx.send(std::mem::take(&mut report)).is_err() {
                        return;
                    }
                } else if let Some((w, kb)) = cols {
                    report.push((
                        f[0].to_string(),
                        f[w].parse().unwrap(),
                        f[kb].parse().unwrap(),
                    ));
                }
            }
        });
        Iostat { child, reports }
    }

    /// The next report, waiting for it.
    fn next(&self) -> Report {
        self.reports
            .recv_timeout(Duration::from_secs(30))
            .expect("an iostat report")
    }

    /// Stops iostat; returns the reports it printed and nobody read yet.
    fn stop(mut self) -> Vec<Report> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.reports.try_iter().collect()
    }
}

fn stop_process(child: &std::process::Child, stopped: bool) {
    let sig = if stopped {
        rustix::process::Signal::STOP
    } else {
        rustix::process::Signal::CONT
    };
    signal(child, sig);
}

/// The dvr trial of these tests: four record streams of 64 KiB O_DIRECT writes.
const WRITERS: &[&str] = &[
    "--set",
    "recorders=4",
    "--set",
    "players=0",
    "--set",
    "samples=3000",
    "--set",
    "region_size=128MiB",
    "--set",
    "io_size=64KiB",
    "--set",
    "window=50ms",
];

#[test]
fn diskstats_agree_with_iostat_side_by_side_and_kernel_threads_use_cpu() {
    let test = "diskstats_agree_with_iostat_side_by_side_and_kernel_threads_use_cpu";
    if !ready_for_stacks(test, &["mkfs.ext4", "iostat"]) {
        return;
    }
    let (work, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let out = out.path();
    let mut args: Vec<String> = ["run", "dvr", "--json", "--target", "image:size=2GiB"]
        .map(String::from)
        .to_vec();
    args.extend(
        [
            "--fs",
            "ext4",
            "--mkfs",
            "-E lazy_itable_init=0,lazy_journal_init=0",
        ]
        .map(String::from),
    );
    args.extend(["--out".into(), out.display().to_string()]);
    args.extend(WRITERS.iter().map(|s| s.to_string()));
    let child = Command::new(assert_cmd::cargo::cargo_bin("iotrial"))
        .env("IOTRIAL_LEDGER_DIR", work.path().join("ledger"))
        .env("TMPDIR", work.path())
        .args(&args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // The monitors have taken their first readings once memory.csv exists: hold the trial
    // there while iostat takes its own, so both count from the same state.
    await_monitor_file(work.path(), "memory.csv");
    stop_process(&child, true);
    let iostat = Iostat::start();
    let mut reports = vec![iostat.next()];
    stop_process(&child, false);
    // phases.csv is written once the monitors took their last readings: hold the trial again
    // (before it unmounts anything) until iostat's interval holding that moment is reported.
    await_monitor_file(work.path(), "phases.csv");
    stop_process(&child, true);
    reports.extend(iostat.reports.try_iter());
    reports.push(iostat.next());
    reports.extend(iostat.stop());
    stop_process(&child, false);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let devices = doc["monitor"]["devices"].as_array().unwrap();
    let data: Vec<&Value> = devices.iter().filter(|d| d["role"] == "data").collect();
    assert_eq!(data.len(), 1, "{devices:?}");
    for d in data {
        let name = d["device"].as_str().unwrap();
        let ours = (
            d["totals"]["write_requests"].as_f64().unwrap(),
            d["totals"]["written_kB"].as_f64().unwrap(),
        );
        let theirs = reports
            .iter()
            .flatten()
            .filter(|r| r.0 == name)
            .fold((0.0, 0.0), |a, r| (a.0 + r.1, a.1 + r.2));
        println!(
            "{name}: diskstats {} write requests, {} kB; iostat -x {:.0} and {:.0} over {} reports",
            ours.0,
            ours.1,
            theirs.0,
            theirs.1,
            reports.len()
        );
        assert!(ours.0 > 1000.0, "the trial wrote: {d}");
        for (a, b) in [(ours.0, theirs.0), (ours.1, theirs.1)] {
            assert!(
                (a - b).abs() <= 0.02 * a,
                "{name}: diskstats {a}, iostat {b}"
            );
        }
    }
    let groups = doc["monitor"]["threads"]["groups"].as_array().unwrap();
    let kernel: Vec<String> = groups
        .iter()
        .filter(|g| g["kernel"] == true && g["cpu_pct_mean"].as_f64().unwrap() > 0.0)
        .map(|g| g["group"].as_str().unwrap().to_string())
        .collect();
    println!("kernel thread groups with CPU: {kernel:?}");
    assert!(
        kernel
            .iter()
            .any(|g| ["jbd2", "kworker", "loop"].contains(&g.as_str())),
        "{groups:?}"
    );
    assert!(
        doc["monitor"]["threads"]["kernel_cpu_pct_mean"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert_cleaned_up(work.path(), &[]);
}
