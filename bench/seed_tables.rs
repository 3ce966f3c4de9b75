//! Seed 000's published table beside the built-in `dvr` study on the WD twin: for each of the
//! seed's six stacks, the record bitrate the seed's text gives and the one iotrial measured,
//! their ratio, and the rank agreement over the six (Spearman's rho); then, per stack, the
//! figures that explain a difference (write and read access times, the playback/record time
//! ratio, the flushes the drive received and their service time, journal and metadata bytes
//! from the block trace, the device server's lateness over the monitored time with its seconds
//! over 5 ms and whether the trial was flagged late, the host's worst second of steal).
//! docs/seeds.md quotes its output.
//!
//! First it checks the twin's calibration: the raw-partition row (no filesystem) beside the
//! seed's four device-level figures (record window ~200 ms, reads ~400 ms on average and ~750
//! ms at worst, playback/record time 2.0), each to be within 10%; the bench fails when one is
//! not. The full study's raw row is the check; a `--quick` run's is printed but not held to it.
//!
//! `cargo bench --bench seed_tables` runs `iotrial study dvr` (root; about an hour at scale 1)
//! and prints the tables; `SEED_TABLES_FROM=DIR` prints them from an existing results
//! directory of the study instead; `SEED_TABLES_RAW=1` runs the raw-partition stack alone
//! (about 14 minutes: the calibration check only); `SEED_TABLES_QUICK=1` runs `--quick` (a few
//! minutes, 64 samples per stream: the ranks are then noisier than the full study's).

#[path = "../tests/common/mod.rs"]
mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The seed's stacks in its order, iotrial's stack name, and the record bitrate its text
/// gives (Mbit/s guaranteed with a 5 s buffer), with the words it is read from.
const SEED_000: &[(&str, &str, f64, &str)] = &[
    ("raw partitions", "raw-partitions", 40.0, "~200 ms window"),
    ("ext4 default", "ext4", 12.3, "650 ms worst"),
    ("ext4 noatime", "ext4-noatime", 16.0, "peaks near 500 ms"),
    (
        "ext4 noatime,data=writeback",
        "ext4-writeback",
        20.0,
        "peaks above 400 ms",
    ),
    ("ext4 + commit=1", "ext4-commit1", 20.5, "just under 400 ms"),
    ("xfs", "xfs", 20.5, "about the tuned ext4"),
];

fn main() {
    let dir = match std::env::var_os("SEED_TABLES_FROM") {
        Some(d) => PathBuf::from(d),
        None => match run_study() {
            Some(d) => d,
            None => return,
        },
    };
    let calibrated = print_calibration(&dir);
    print_table(&dir);
    if !calibrated && std::env::var_os("SEED_TABLES_QUICK").is_none() {
        eprintln!("seed_tables: the twin's raw row is not within 10% of the seed's");
        std::process::exit(1);
    }
}

/// The raw row beside the seed's device-level figures; whether all four are within 10%.
fn print_calibration(dir: &Path) -> bool {
    let Some(doc) = result(dir, "raw-partitions") else {
        println!("calibration: the raw-partitions trial did not run");
        return false;
    };
    let (_, window) = over(&doc, "record", |s| s["window_peak_ms"].as_f64());
    let (read_mean, _) = over(&doc, "playback", |s| s["lat_ms"]["mean"].as_f64());
    let (_, read_worst) = over(&doc, "playback", |s| s["lat_ms"]["max"].as_f64());
    let (_, played) = over(&doc, "playback", |s| s["elapsed_s"].as_f64());
    let (_, recorded) = over(&doc, "record", |s| s["elapsed_s"].as_f64());
    let rows = [
        ("record window (peak 5 s average), ms", 200.0, window),
        ("read mean, ms", 400.0, read_mean),
        ("read worst, ms", 750.0, read_worst),
        ("playback time / record time", 2.0, played / recorded),
    ];
    println!("| raw row (the twin's calibration) | seed 000 | twin | twin / seed |");
    println!("|---|---|---|---|");
    let mut all = true;
    for (figure, seed, twin) in rows {
        let ok = (twin / seed - 1.0).abs() <= 0.10;
        all &= ok;
        let mark = if ok { "" } else { " (outside 10%)" };
        println!(
            "| {figure} | {seed} | {twin:.2} | {:.2}{mark} |",
            twin / seed
        );
    }
    println!();
    all
}

/// Runs the built-in study; its results directory, or None (printed why) when it cannot run.
fn run_study() -> Option<PathBuf> {
    if !rustix::process::geteuid().is_root() {
        println!("seed_tables: skipped, the dvr study needs root (loop devices, mkfs, mount)");
        return None;
    }
    let out = tempfile::Builder::new()
        .prefix("seed-tables-")
        .tempdir()
        .unwrap()
        .keep();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_iotrial"));
    cmd.args(["study", "dvr", "--out"]).arg(&out);
    if std::env::var_os("SEED_TABLES_QUICK").is_some() {
        cmd.arg("--quick");
    }
    if std::env::var_os("SEED_TABLES_RAW").is_some() {
        cmd.args(["--only", "raw-partitions"]);
    }
    let status = cmd.status().expect("run iotrial");
    assert!(status.success(), "iotrial study dvr failed");
    let dir = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.is_dir())
        .expect("a results directory");
    println!("results: {}", dir.display());
    Some(dir)
}

/// The result.json of stack `name`'s first trial, if it ran.
fn result(dir: &Path, name: &str) -> Option<Value> {
    let p = dir.join("trials").join(name).join("dvr/r1/result.json");
    let text = std::fs::read_to_string(p).ok()?;
    serde_json::from_str(&text).ok()
}

/// Mean over the streams of `role` of `f`, and the largest.
fn over(doc: &Value, role: &str, f: impl Fn(&Value) -> Option<f64>) -> (f64, f64) {
    let v: Vec<f64> = doc["streams"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["role"] == role)
        .filter_map(f)
        .collect();
    let max = v.iter().cloned().fold(f64::MIN, f64::max);
    (v.iter().sum::<f64>() / v.len().max(1) as f64, max)
}

/// MiB and requests the block trace classed as `class` during the run, reads and writes.
fn class(doc: &Value, class: &str) -> (f64, u64) {
    let mut mib = 0.0;
    let mut requests = 0;
    for c in doc["monitor"]["io_classes"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if c["class"] == class && c["phase"] == "run" {
            mib += c["bytes"].as_f64().unwrap_or(0.0) / (1u64 << 20) as f64;
            requests += c["requests"].as_u64().unwrap_or(0);
        }
    }
    (mib, requests)
}

/// Ranks of `v`, 1 for the smallest, ties sharing their mean rank.
fn ranks(v: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut r = vec![0.0; v.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && v[idx[j + 1]] == v[idx[i]] {
            j += 1;
        }
        for &k in &idx[i..=j] {
            r[k] = (i + j) as f64 / 2.0 + 1.0;
        }
        i = j + 1;
    }
    r
}

/// Spearman's rho: Pearson's correlation of the ranks.
fn spearman(a: &[f64], b: &[f64]) -> f64 {
    let (ra, rb) = (ranks(a), ranks(b));
    let n = ra.len() as f64;
    let (ma, mb) = (ra.iter().sum::<f64>() / n, rb.iter().sum::<f64>() / n);
    let cov: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let sa = ra.iter().map(|x| (x - ma).powi(2)).sum::<f64>().sqrt();
    let sb = rb.iter().map(|y| (y - mb).powi(2)).sum::<f64>().sqrt();
    cov / (sa * sb)
}

fn print_table(dir: &Path) {
    println!("| stack | seed 000 | iotrial | ratio |");
    println!("|---|---|---|---|");
    let (mut seed, mut ours) = (Vec::new(), Vec::new());
    let mut causes = Vec::new();
    for &(label, name, mbit, words) in SEED_000 {
        let Some(doc) = result(dir, name) else {
            println!("| {label} | {mbit} ({words}) | did not run | |");
            continue;
        };
        let got = doc["verdict"]["record_mbit_guaranteed"].as_f64().unwrap();
        println!(
            "| {label} | {mbit} ({words}) | {got:.1} | {:.2} |",
            got / mbit
        );
        seed.push(mbit);
        ours.push(got);
        causes.push((label, doc));
    }
    if seed.len() > 2 {
        println!(
            "\nrank agreement (Spearman's rho over {} stacks): {:.2}",
            seed.len(),
            spearman(&seed, &ours)
        );
    }
    println!("\n| stack | window peak ms | write mean / max ms | read mean / max ms | pre-roll s | playback/record time | flushes (mean ms) | journal MiB | metadata MiB | late mean µs / max ms | s with a reply over 5 ms late | flagged late | host steal, worst second ms |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (label, doc) in &causes {
        let (_, win) = over(doc, "record", |s| s["window_peak_ms"].as_f64());
        let (wmean, _) = over(doc, "record", |s| s["lat_ms"]["mean"].as_f64());
        let (_, wmax) = over(doc, "record", |s| s["lat_ms"]["max"].as_f64());
        let (rmean, _) = over(doc, "playback", |s| s["lat_ms"]["mean"].as_f64());
        let (_, rmax) = over(doc, "playback", |s| s["lat_ms"]["max"].as_f64());
        let (_, pt) = over(doc, "playback", |s| s["elapsed_s"].as_f64());
        let (_, rt) = over(doc, "record", |s| s["elapsed_s"].as_f64());
        let emu = &doc["stack"]["emulated"][0];
        let flushes = emu["model_stats"]["flushes"].as_u64().unwrap_or(0);
        let flush_ms = emu["server"]["service_us_mean"]["flush"]
            .as_f64()
            .unwrap_or(0.0)
            / 1e3;
        // The replies' lateness over the monitored time where the server's series ran (else
        // the whole run's), its seconds with a reply over 5 ms late, and whether the trial
        // carries the lateness warning.
        let monitored = &doc["monitor"]["late_seconds"][0];
        let figures = if monitored.is_object() {
            monitored
        } else {
            &emu["server"]
        };
        let late = figures["late_us_mean"].as_f64().unwrap_or(0.0);
        let late_max = figures["late_us_max"].as_f64().unwrap_or(0.0) / 1e3;
        let over = match monitored["seconds_over_5ms"].as_u64() {
            Some(n) => format!("{n} of {}", monitored["seconds"].as_u64().unwrap_or(0)),
            None => "not recorded".into(),
        };
        let flagged = doc["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|w| w.as_str().is_some_and(|w| w.contains("replies were late")));
        let flagged = if flagged { "yes" } else { "no" };
        let host = &doc["monitor"]["threads"]["host"];
        let steal = match host["steal_ms_per_s_peak"].as_f64() {
            Some(ms) => format!("{ms:.0} of {}", host["cpus"].as_u64().unwrap_or(1) * 1000),
            None => "not recorded".into(),
        };
        let (journal, _) = class(doc, "journal");
        let (meta, _) = class(doc, "metadata");
        println!(
            "| {label} | {win:.0} | {wmean:.0} / {wmax:.0} | {rmean:.0} / {rmax:.0} | {:.2} | {:.2} | {flushes} ({flush_ms:.0}) | {journal:.1} | {meta:.1} | {late:.1} / {late_max:.1} | {over} | {flagged} | {steal} |",
            doc["verdict"]["playback_preroll_s"].as_f64().unwrap_or(0.0),
            pt / rt
        );
    }
}
