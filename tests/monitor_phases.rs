//! Per-phase monitor figures with the real binary, on trials whose phases last less than one
//! monitor interval: a tree of 2000 directories (create, sync, drop caches, idle, remove, ...)
//! and a dvr trial of about a second. The counters are read at every phase boundary, so each
//! device's phases, with the time before the first and after the last, add up to its totals;
//! each phase's kilobytes written agree with the block trace of the same run (a write that
//! completed while a boundary's counters were being read may count on either side); every phase has
//! its own row in diskstats.csv; and each device has exactly one row per reading. Needs root,
//! loop devices, mkfs.ext4 and tracefs; skips with the reason otherwise (a failure under `CI`).

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Runs `iotrial run ARGS --json --monitor all` with its results under `out`; (result.json,
/// the trial's directory).
fn run_trial(work: &Path, out: &Path, args: &[&str]) -> (Value, std::path::PathBuf) {
    let a = iotrial(work)
        .args(["run"])
        .args(args)
        .args(["--json", "--monitor", "all", "--out"])
        .arg(out)
        .assert()
        .success();
    let doc = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let dir = walk(out)
        .into_iter()
        .find(|p| p.join("result.json").exists())
        .expect("a trial directory");
    (doc, dir)
}

/// The phases of phases.csv: (name, start_s, end_s).
fn phases(dir: &Path) -> Vec<(String, f64, f64)> {
    let text = std::fs::read_to_string(dir.join("monitor/phases.csv")).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].to_string(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
            )
        })
        .collect()
}

/// Each phase of `phases` with the times at which the diskstats reading that closes it and
/// the one that closes the phase before it were taken (seconds of the trial's clock, to the
/// millisecond diskstats.csv keeps). A boundary's reading starts at that time and the phase
/// is marked ended once every monitor has read: a write that completed between the two is
/// counted after the boundary by diskstats but before it by its completion time.
fn readings(dir: &Path, phases: &[(String, f64, f64)]) -> BTreeMap<String, (f64, f64)> {
    let text = std::fs::read_to_string(dir.join("monitor/diskstats.csv")).unwrap();
    let rows: Vec<(f64, String)> = text
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].parse().unwrap(), f[1].to_string())
        })
        .collect();
    let last_of = |name: &str, until: f64| {
        rows.iter()
            .filter(|(t, p)| p == name && *t <= until + MS)
            .map(|(t, _)| *t)
            .fold(f64::NAN, f64::max)
    };
    let mut before = last_of("", phases.first().map_or(0.0, |p| p.1));
    phases
        .iter()
        .map(|(name, _, end)| {
            let closing = last_of(name, *end);
            let r = (name.clone(), (before, closing));
            before = closing;
            r
        })
        .collect()
}

/// The millisecond diskstats.csv keeps its times to.
const MS: f64 = 0.001;

/// Bytes written to `device` per phase by the block trace, each request in the phase it
/// completed in (diskstats counts a request's sectors when it completes); and per phase, the
/// bytes of those that completed between one of its boundaries' readings and the boundary
/// itself (see [`readings`]), which either side may count.
fn traced_writes(
    dir: &Path,
    device: &str,
    phases: &[(String, f64, f64)],
) -> (BTreeMap<String, u64>, BTreeMap<String, u64>) {
    let read_at = readings(dir, phases);
    let text = std::fs::read_to_string(dir.join("monitor/blocktrace.csv")).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |h: &str| head.iter().position(|c| *c == h).unwrap();
    let (t, dev, bytes, rwbs, lat) = (
        at("t_s"),
        at("device"),
        at("bytes"),
        at("rwbs"),
        at("latency_ms"),
    );
    let mut by = BTreeMap::new();
    let mut near = BTreeMap::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        // The operation is the first letter after the flush flags: W, or N (write zeroes)
        // with bytes, is a write, as diskstats counts it.
        let op = f[rwbs].trim_start_matches('F').chars().next();
        let n: u64 = f[bytes].parse().unwrap();
        if f[dev] != device || !(op == Some('W') || (op == Some('N') && n > 0)) {
            continue;
        }
        let done = f[t].parse::<f64>().unwrap() + f[lat].parse::<f64>().unwrap_or(0.0) / 1e3;
        let phase = phases
            .iter()
            .find(|(_, s, e)| *s <= done && done <= *e)
            .map_or("", |(n, _, _)| n.as_str());
        *by.entry(phase.to_string()).or_insert(0) += n;
        for (name, start, end) in phases {
            let (opened, closed) = read_at[name];
            let between = |read: f64, mark: f64| read - MS <= done && done <= mark + MS;
            if between(opened, *start) || between(closed, *end) {
                *near.entry(name.clone()).or_insert(0) += n;
            }
        }
    }
    (by, near)
}

/// Checks the per-phase figures of one trial: sums, the trace, rows per phase and per reading.
fn check_phases(doc: &Value, dir: &Path) {
    let phases = phases(dir);
    let devices = doc["monitor"]["devices"].as_array().unwrap();
    assert!(!devices.is_empty());
    for d in devices {
        let name = d["device"].as_str().unwrap();
        let list = d["phases"].as_array().unwrap();
        // The time before the first phase comes first, the time after the last comes last.
        assert_eq!(
            list.first().unwrap()["outside"],
            "before",
            "{name}: {list:?}"
        );
        assert_eq!(list.last().unwrap()["outside"], "after", "{name}: {list:?}");
        for (p, _, _) in &phases {
            assert!(
                list.iter().any(|q| q["phase"] == p.as_str()),
                "{name}: phase {p} has no figures: {list:?}"
            );
        }
        for key in [
            "read_kB",
            "written_kB",
            "read_requests",
            "write_requests",
            "flush_requests",
        ] {
            let whole = d["totals"][key].as_f64().unwrap();
            let summed: f64 = list
                .iter()
                .map(|q| q["totals"][key].as_f64().unwrap())
                .sum();
            assert_eq!(
                summed, whole,
                "{name} {key}: phases {summed} against the trial's {whole}"
            );
        }
    }
    // The stack's data device against the block trace, phase by phase.
    let data = devices.iter().find(|d| d["role"] == "data").unwrap();
    let name = data["device"].as_str().unwrap();
    let (traced, near) = traced_writes(dir, name, &phases);
    let mut seen_writes = false;
    for q in data["phases"].as_array().unwrap() {
        let Some(p) = q["phase"].as_str() else {
            continue;
        };
        let kb = q["totals"]["written_kB"].as_f64().unwrap();
        let trace_kb = traced.get(p).copied().unwrap_or(0) as f64 / 1024.0;
        let near_kb = near.get(p).copied().unwrap_or(0) as f64 / 1024.0;
        println!(
            "{name} {p}: diskstats {kb} kB written, trace {trace_kb} kB ({near_kb} kB between a boundary and its reading)"
        );
        assert!(
            (kb - trace_kb).abs() <= 0.02 * kb.max(trace_kb) + near_kb,
            "{p}: diskstats {kb} kB against the trace's {trace_kb} kB ({near_kb} kB at a reading)"
        );
        seen_writes |= kb > 0.0;
    }
    assert!(seen_writes, "no phase wrote: {data}");
    // One row per device per reading (a reading writes its devices' rows one after the
    // other), and a reading labelled with every phase.
    let text = std::fs::read_to_string(dir.join("monitor/diskstats.csv")).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let names: Vec<&str> = devices
        .iter()
        .map(|d| d["device"].as_str().unwrap())
        .collect();
    assert_eq!(
        rows.len() % names.len(),
        0,
        "{} rows for {names:?}",
        rows.len()
    );
    let mut labelled = std::collections::BTreeSet::new();
    for reading in rows.chunks(names.len()) {
        let mut seen: Vec<&str> = reading.iter().map(|f| f[2]).collect();
        seen.sort_unstable();
        let mut want = names.clone();
        want.sort_unstable();
        assert_eq!(
            seen, want,
            "one row per device in the reading at {}",
            reading[0][0]
        );
        assert!(reading
            .iter()
            .all(|f| f[0] == reading[0][0] && f[1] == reading[0][1]));
        labelled.insert(reading[0][1].to_string());
    }
    for (p, _, _) in &phases {
        assert!(labelled.contains(p), "no diskstats row closes phase {p}");
    }
}

/// Runs `args` as the test `test` wants it, when this host can, and checks its phases; the
/// result, the trial's directory, and the work and results directories (kept until the
/// caller's checks are done).
fn checked_trial(
    test: &str,
    args: &[&str],
) -> Option<(
    Value,
    std::path::PathBuf,
    tempfile::TempDir,
    tempfile::TempDir,
)> {
    if !ready_for_stacks(test, &["mkfs.ext4", "dumpe2fs", "debugfs"]) {
        return None;
    }
    let (work, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (doc, dir) = run_trial(work.path(), out.path(), args);
    check_phases(&doc, &dir);
    Some((doc, dir, work, out))
}

#[test]
fn short_tree_phases_add_up_and_agree_with_the_trace() {
    let args = [
        "tree",
        "--target",
        "image:size=4GiB",
        "--fs",
        "ext4",
        "--set",
        "dirs=2000",
    ];
    let Some((_, dir, work, _out)) =
        checked_trial("short_tree_phases_add_up_and_agree_with_the_trace", &args)
    else {
        return;
    };
    assert!(phases(&dir).len() >= 6);
    assert_cleaned_up(work.path(), &[]);
}

#[test]
fn a_dvr_trial_shorter_than_its_intervals_keeps_its_io_in_its_phase() {
    let args = [
        "dvr",
        "--target",
        "image:size=2GiB",
        "--fs",
        "ext4",
        "--set",
        "samples=128",
        "--set",
        "region_size=64MiB",
    ];
    let test = "a_dvr_trial_shorter_than_its_intervals_keeps_its_io_in_its_phase";
    let Some((doc, _, work, _out)) = checked_trial(test, &args) else {
        return;
    };
    // The run phase holds the device's writes but for the prepare phase's, which lays out the
    // playback files (a journal commit may fall outside it).
    let data = doc["monitor"]["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["role"] == "data")
        .unwrap();
    let run = data["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["phase"] == "run")
        .unwrap();
    let prepare = data["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["phase"] == "prepare")
        .unwrap();
    let (in_run, all) = (
        run["totals"]["written_kB"].as_f64().unwrap(),
        data["totals"]["written_kB"].as_f64().unwrap()
            - prepare["totals"]["written_kB"].as_f64().unwrap(),
    );
    assert!(in_run >= 0.99 * all, "run {in_run} kB of {all} kB written");
    assert_cleaned_up(work.path(), &[]);
}
