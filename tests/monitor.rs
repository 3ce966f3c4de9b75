//! The monitors with the real binary: diskstats against `iostat -x -y 1` run side by side,
//! kernel thread groups with CPU, the block trace's classes on ext4 against diskstats, an
//! emulated device's own request log against the trace, and bad monitor input. Tests that
//! need root, loop devices, mkfs, FUSE or sysstat skip with the reason (a failure under `CI`).

mod common;

use common::keys;
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
    // The series behind the summary, in the trial's directory.
    let monitor = trial_dir(out).join("monitor");
    for f in ["diskstats.csv", "threads.csv", "memory.csv", "phases.csv"] {
        let rows = std::fs::read_to_string(monitor.join(f))
            .unwrap()
            .lines()
            .count();
        assert!(rows >= 2, "{f}: a header and rows");
    }
    assert!(
        !monitor.join("blocktrace.csv").exists(),
        "no trace unless asked"
    );
    assert_cleaned_up(work.path(), &[]);
}

/// Runs `iotrial run dvr --json ARGS` with its files under `work` and its results in a
/// directory of its own; (result.json, the trial's directory).
fn run_trial(work: &Path, args: &[&str]) -> (Value, tempfile::TempDir) {
    let out = tempfile::tempdir().unwrap();
    let a = iotrial(work)
        .args(["run", "dvr", "--json", "--out"])
        .arg(out.path())
        .args(args)
        .assert()
        .success();
    (serde_json::from_slice(&a.get_output().stdout).unwrap(), out)
}

/// The one trial directory under the results directory `out`.
fn trial_dir(out: &Path) -> PathBuf {
    walk(out)
        .into_iter()
        .find(|p| p.join("result.json").exists())
        .expect("a trial directory")
}

/// Bytes per class of the read and write requests in blocktrace.csv.
fn blocktrace_bytes(path: &Path) -> std::collections::BTreeMap<String, u64> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |h: &str| head.iter().position(|c| *c == h).unwrap();
    let (bytes, class) = (at("bytes"), at("class"));
    let mut by = std::collections::BTreeMap::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        *by.entry(f[class].to_string()).or_insert(0) += f[bytes].parse::<u64>().unwrap();
    }
    by
}

#[test]
fn the_trace_classes_ext4_requests_and_agrees_with_diskstats() {
    let test = "the_trace_classes_ext4_requests_and_agrees_with_diskstats";
    if !ready_for_stacks(test, &["mkfs.ext4", "dumpe2fs", "debugfs"]) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    // Mounted `sync`: every O_DIRECT write into a preallocated extent commits the journal
    // before it returns, so the run itself writes the journal.
    let mut args = vec![
        "--monitor",
        "all",
        "--target",
        "image:size=2GiB",
        "--fs",
        "ext4",
    ];
    args.extend(["--mount", "sync"]);
    // No lazy init: ext4lazyinit's background zeroing (2 MiB requests) could fall between the
    // trace's start and diskstats' first reading, or after its last.
    args.extend(["--mkfs", "-E lazy_itable_init=0,lazy_journal_init=0"]);
    args.extend(&WRITERS[..4]);
    args.extend(["--set", "samples=100", "--set", "region_size=64MiB"]);
    args.extend(["--set", "io_size=64KiB", "--set", "window=50ms"]);
    let (doc, out) = run_trial(work.path(), &args);
    let m = &doc["monitor"];
    let rows = m["io_classes"].as_array().unwrap();
    let sum = |f: &dyn Fn(&Value) -> bool| -> u64 {
        rows.iter()
            .filter(|r| f(r))
            .map(|r| r["bytes"].as_u64().unwrap())
            .sum()
    };
    let journal_writes = sum(&|r| r["class"] == "journal" && r["direction"] == "write");
    let classes = sum(&|r| ["journal", "metadata", "data"].contains(&r["class"].as_str().unwrap()));
    let traced = sum(&|r| r["direction"] != "none");
    let traced_writes = sum(&|r| r["direction"] == "write");
    let disk = m["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["role"] == "data")
        .unwrap();
    let written = disk["totals"]["written_kB"].as_f64().unwrap() * 1024.0;
    println!(
        "journal writes {journal_writes} B; journal + metadata + data {classes} B of {traced} B traced; traced writes {traced_writes} B, diskstats {written} B"
    );
    assert!(journal_writes > 0, "{rows:?}");
    assert_eq!(classes, traced);
    assert!(
        (traced_writes as f64 - written).abs() <= 0.01 * written,
        "{traced_writes} vs {written}"
    );
    // The journal the tools reported, and every request of blocktrace.csv in the totals.
    let trace = &m["trace"];
    assert!(
        trace["journal"][0]["sectors"].as_u64().unwrap() > 0,
        "{trace}"
    );
    assert!(trace["journal_source"]
        .as_str()
        .unwrap()
        .starts_with("debugfs"));
    assert_eq!(trace["lost_events"], 0);
    let csv = blocktrace_bytes(&trial_dir(out.path()).join("monitor/blocktrace.csv"));
    for class in ["journal", "metadata", "data"] {
        let json = sum(&|r| r["class"] == class);
        assert_eq!(csv.get(class).copied().unwrap_or(0), json, "{class}");
    }
    // Every documented key but the emulated devices' (the next test's) is in this trial.
    // `io_classes[].outside` only comes with a request issued outside every phase, which
    // this trial may not have.
    let emulated_only = |k: &str| k.starts_with("monitor.trace.emulated[]");
    let (undocumented, missing) = keys::compare_keys(&doc, |k| {
        !emulated_only(k) && k != "monitor.io_classes[].outside" && !keys::realtime_only("dvr", k)
    });
    assert!(
        undocumented.is_empty() && missing.is_empty(),
        "not documented: {undocumented:?}; documented but not written: {missing:?}"
    );
    assert_cleaned_up(work.path(), &[]);
    assert!(
        findmnt_tracefs_instances().is_empty(),
        "trace instances left"
    );
}

/// Trace instances of iotrial left in any mounted tracefs.
fn findmnt_tracefs_instances() -> Vec<String> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    mounts
        .lines()
        .filter(|l| l.contains(" - tracefs "))
        .filter_map(|l| l.split(' ').nth(4))
        .flat_map(|mp| {
            std::fs::read_dir(Path::new(mp).join("instances"))
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!("iotrial-{}-", std::process::id())))
        .collect()
}

#[test]
fn an_emulated_devices_own_request_log_agrees_with_the_trace_request_for_request() {
    let test = "an_emulated_devices_own_request_log_agrees_with_the_trace_request_for_request";
    if !ready_to_emulate(test, &["losetup"]) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let args = [
        "--monitor",
        "all",
        "--target",
        "emu:hdd,size=2GiB,scale=100",
        "--layout",
        "regions",
        "--set",
        "recorders=2",
        "--set",
        "players=2",
        "--set",
        "samples=100",
        "--set",
        "region_size=64MiB",
        "--set",
        "io_size=64KiB",
        "--set",
        "window=50ms",
    ];
    let (doc, out) = run_trial(work.path(), &args);
    let checks = doc["monitor"]["trace"]["emulated"].as_array().unwrap();
    assert_eq!(checks.len(), 1, "{doc}");
    let c = &checks[0];
    let n = |k: &str| c[k].as_u64().unwrap();
    println!("{c}");
    // dvr's 400 samples and the I/O before sampling began, every one logged and traced.
    assert!(n("traced_requests") >= 400);
    assert_eq!(n("server_requests"), n("traced_requests"));
    assert_eq!(n("matched"), n("traced_requests"));
    let dir = trial_dir(out.path()).join("monitor");
    let log = std::fs::read_to_string(
        dir.join(format!("requests-{}.csv", c["device"].as_str().unwrap())),
    )
    .unwrap();
    assert_eq!(log.lines().count() as u64, n("server_requests") + 1);
    // The replies' lateness second by second, from the device's start: every request logged
    // was replied to in one of the series' seconds, and none the server did not count.
    let device = c["device"].as_str().unwrap();
    let series = std::fs::read_to_string(dir.join(format!("lateness-{device}.csv"))).unwrap();
    let rows: Vec<Vec<f64>> = series
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|f| f.parse().unwrap()).collect())
        .collect();
    let replied: f64 = rows.iter().map(|r| r[1]).sum();
    let server = &doc["stack"]["emulated"][0]["server"];
    let received: u64 = ["read", "write", "flush", "discard"]
        .iter()
        .map(|k| server["requests"][k].as_u64().unwrap())
        .sum();
    assert!(replied as u64 >= n("server_requests"), "{series}");
    assert!(replied as u64 <= received, "{series}");
    assert!(series.starts_with(
        "t_s,replies,inline,late_us_mean,late_us_max,over_5ms,inline_late_us_max,send_us_max,serviced,service_us_mean\n"
    ));
    // Every request logged was given its service time in one of the seconds, and none the
    // server did not receive.
    let serviced: f64 = rows.iter().map(|r| r[8]).sum();
    assert!(serviced as u64 >= n("server_requests"), "{series}");
    assert!(serviced as u64 <= received, "{series}");
    // The server's figures name the block device the monitors' series go by.
    assert_eq!(doc["stack"]["emulated"][0]["device"], device);
    // The latest reply a request thread sent itself is one of the second's replies.
    assert!(rows.iter().all(|r| r[6] <= r[4] + 0.1), "{series}");
    let worst = rows.iter().map(|r| r[4]).fold(0.0, f64::max);
    assert!(worst <= server["late_us_max"].as_f64().unwrap() + 0.1);
    // The summary splits the series at the monitors' start: provisioning before, the phases
    // after, every reply in one or the other.
    let late = &doc["monitor"]["late_seconds"][0];
    let m = |k: &str| late[k].as_u64().unwrap();
    assert_eq!(late["device"], device);
    assert_eq!(m("replies") + m("before_replies"), replied as u64, "{late}");
    let start = doc["monitor"]["start_s"].as_f64().unwrap();
    let monitored: Vec<&Vec<f64>> = rows.iter().filter(|r| r[0] + 1.0 > start).collect();
    assert_eq!(m("seconds") as usize, monitored.len());
    // The monitored time's service time is its own seconds' mean, weighted by their requests.
    let n_monitored: f64 = monitored.iter().map(|r| r[8]).sum();
    let mean = monitored.iter().map(|r| r[8] * r[9]).sum::<f64>() / n_monitored;
    let got = late["service_us_mean"].as_f64().unwrap();
    assert!((got - mean).abs() < 0.01 * mean, "{got} vs {mean}: {late}");
    let over = monitored.iter().filter(|r| r[5] > 0.0).count() as u64;
    assert_eq!(m("seconds_over_5ms"), over);
    for k in [
        "with_steal",
        "with_kernel_busy",
        "with_memory_stall",
        "with_server_waiting",
        "with_slow_request",
        "with_slow_send",
        "with_none",
    ] {
        assert!(m(k) <= over, "{k}: {late}");
    }
    let (undocumented, _) = keys::compare_keys(&doc, |_| false);
    assert!(undocumented.is_empty(), "not documented: {undocumented:?}");
    assert_cleaned_up(work.path(), &[]);
}

#[test]
fn bad_monitor_input_exits_2_naming_what_is_allowed() {
    let work = tempfile::tempdir().unwrap();
    for (args, says) in [
        (&["--monitor", "diskstat"][..], "--monitor: unknown monitor 'diskstat'; allowed: a comma list of diskstats, threads, memory, trace; or all; or none"),
        (&["--monitor-interval", "5ms"][..], "--monitor-interval: '5ms' is out of range; allowed: 10ms to 1h"),
        (&["--monitor-interval", "2h"][..], "--monitor-interval: '2h' is out of range"),
        (&["--monitor-interval", "soon"][..], "--monitor-interval: 'soon' has an unknown time unit"),
    ] {
        let a = iotrial(work.path()).args(["run", "dvr"]).args(args).assert().code(2);
        let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
        assert!(err.contains(says) && err.lines().count() == 1, "{args:?}: {err}");
    }
    // trace without root, as an unprivileged user when the test runs as root.
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("iotrial"));
    c.args(["run", "dvr", "--monitor", "diskstats,trace"]);
    if rustix::process::geteuid().is_root() {
        use std::os::unix::process::CommandExt;
        c.uid(65534).gid(65534);
    }
    let o = c.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--monitor: trace needs root") && err.contains("allowed:"),
        "{err}"
    );
    // A study file: the same parser, the error at the key.
    let study = work.path().join("study.toml");
    std::fs::write(
        &study,
        "name = \"m\"\nmonitor = \"diskstats,cpu\"\n\n[[workloads]]\nkind = \"dvr\"\n\n[[stacks]]\nname = \"d\"\ndevices = [\"dir:/tmp\"]\n",
    )
    .unwrap();
    let a = iotrial(work.path())
        .arg("study")
        .arg(&study)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(
        err.contains("study.toml:2:11: monitor: unknown monitor 'cpu'"),
        "{err}"
    );
}

#[test]
fn a_monitor_that_cannot_run_is_a_warning_not_a_failed_trial() {
    let test = "a_monitor_that_cannot_run_is_a_warning_not_a_failed_trial";
    if !ready(test, &[Need::Root]) {
        return;
    }
    // A directory target has no block device of its own to trace.
    let (work, target) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let dir = format!("dir:{}", target.path().display());
    let args = [
        "--monitor",
        "all",
        "--target",
        &dir,
        "--set",
        "samples=20",
        "--set",
        "region_size=1MiB",
        "--set",
        "io_size=64KiB",
        "--set",
        "window=20ms",
    ];
    let (doc, _out) = run_trial(work.path(), &args);
    let warnings: Vec<&str> = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        warnings.iter().any(|w| w
            .starts_with("monitor trace did not start: the stack has no block device to trace")),
        "{warnings:?}"
    );
    assert_eq!(doc["monitor"]["trace"], Value::Null);
    let ran = serde_json::json!(["diskstats", "threads", "memory"]);
    assert_eq!(doc["monitor"]["enabled"], ran, "the monitors that ran");
    assert!(doc["monitor"]["threads"].is_object() && doc["monitor"]["memory"].is_object());
    assert_cleaned_up(work.path(), &[]);
}
