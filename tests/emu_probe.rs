//! Runs the real binary: `iotrial device probe emu:hdd,scale=4 --json --random-ios 1000` and
//! checks the measured figures against the model's expectation printed beside them. Root
//! only (FUSE mount and loop device); it skips with the reason otherwise, and checks that the
//! probe left no loop device, FUSE mount or image behind.
//!
//! Tolerances (scale 4 makes the host carry four times the modeled bandwidth):
//! - random 4 KiB read access time: within 5% (the requirement). 1000 samples of a
//!   ~4.5 ms-spread access time leave ~1.1% of noise; the host path adds tens of µs real per
//!   request (x4 in model time, ~1%).
//! - sequential read, inner 1% (120 MB/s, 480 MB/s real) and random 4 KiB writes (~315 IOPS
//!   real): within 5%; the host keeps up with both easily.
//! - sequential read, outer 1% (250 MB/s, 1 GB/s of reads through FUSE real): within 10%; the
//!   server sustains 1.4-3.4 GB/s of reads with the `null` model (bench/README.md), so a
//!   loaded host still keeps up, with less margin.
//! - sequential write (250 MB/s, 1 GB/s of writes real): the FUSE write path (three copies)
//!   ran at 0.8-1.8 GB/s with the `null` model on a loaded 2-core host, so only the upper
//!   bound (+5%: nothing may beat the model) and a floor of 60% are asserted. The floor still
//!   catches a lost revolution per request (swapped pieces, a destage backlog), which costs
//!   half the rate or more; the model itself is checked to 2% by its unit tests.

#[path = "emu_common/mod.rs"]
mod emu_common;

use assert_cmd::Command;
use emu_common::skip_reason;
use serde_json::Value;
use std::path::Path;

/// (figure name, lowest and highest allowed measured / expected).
const BOUNDS: &[(&str, f64, f64)] = &[
    ("random 4KiB read access time", 0.95, 1.05),
    ("sequential read, inner 1%", 0.95, 1.05),
    ("random 4KiB write", 0.95, 1.05),
    ("sequential read, outer 1%", 0.90, 1.10),
    ("sequential write, outer 1%", 0.60, 1.05),
];

/// Lines of `losetup -a` or mountinfo that mention `dir`.
fn leftovers(dir: &Path) -> Vec<String> {
    let dir = dir.to_string_lossy().into_owned();
    let loops = emu_common::run("losetup", &["-a"]).unwrap_or_default();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    loops
        .lines()
        .chain(mounts.lines())
        .filter(|l| l.contains(&dir))
        .map(str::to_string)
        .collect()
}

#[test]
fn hdd_probe_at_scale_4_tracks_the_model() {
    if let Some(why) = skip_reason(&["losetup"]) {
        eprintln!("skipped: {why}");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("iotrial")
        .unwrap()
        .args([
            "device",
            "probe",
            "emu:hdd,scale=4",
            "--json",
            "--random-ios",
            "1000",
        ])
        .env("TMPDIR", tmp.path())
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    let left = leftovers(tmp.path());
    let entries: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    assert!(entries.is_empty(), "left in TMPDIR: {entries:?}");
    assert!(
        out.status.success(),
        "probe failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["time_scale"], 4.0);
    let figures = v["figures"].as_array().unwrap();
    let mut report = String::new();
    let mut bad = vec![];
    for &(name, lo, hi) in BOUNDS {
        let f = figures
            .iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("no figure {name:?} in {v}"));
        let (m, e) = (
            f["measured"].as_f64().unwrap(),
            f["expected"].as_f64().unwrap(),
        );
        report += &format!(
            "{name}: {m:.3} vs {e:.3} ({:+.1}%)\n",
            (m / e - 1.0) * 100.0
        );
        if !(lo..=hi).contains(&(m / e)) {
            bad.push(format!("{name}: {m:.3} / {e:.3} outside [{lo}, {hi}]"));
        }
    }
    eprint!("{report}");
    assert!(
        bad.is_empty(),
        "{bad:?}\nserver: {}",
        v["stack"]["emulated"][0]
    );
}
