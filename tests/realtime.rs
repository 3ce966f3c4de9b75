//! Streams in real time on emulated disks (root): at a bitrate the disk holds easily nothing
//! overflows, no playback stalls and a record buffer holds about one chunk; on a disk slowed on
//! purpose (seeks five times as long, no write cache) the record buffers overflow, and every
//! byte is accounted for: what the application made is what was written, plus what is still
//! buffered, plus what overflowed, checked against samples.csv, timeseries.csv, the schedule and
//! the streams' own live count. And input no run could do is refused with exit status 2.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const MIB: u64 = 1 << 20;

fn trial_dir(out: &Path) -> PathBuf {
    let run = std::fs::read_dir(out)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let stacks = run.join("trials");
    let stack = std::fs::read_dir(stacks).unwrap().next().unwrap().unwrap();
    stack.path().join("dvr/r1")
}

/// Runs dvr in real time on `target`, raw regions, 4 recorders and a player, for `secs`.
fn run_realtime(work: &Path, out: &Path, target: &str, sets: &[&str]) -> Value {
    let mut cmd = iotrial(work);
    cmd.args([
        "run", "dvr", "--json", "--layout", "regions", "--target", target,
    ])
    .arg("--out")
    .arg(out)
    .args(["--set", "pacing=realtime", "--set", "recorders=4"])
    .args(["--set", "players=1", "--set", "region_size=0"]);
    for s in sets {
        cmd.args(["--set", s]);
    }
    let a = cmd.assert().success();
    serde_json::from_slice(&a.get_output().stdout).unwrap()
}

/// Bytes written by each stream, from samples.csv.
fn written(samples: &Path) -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string(samples).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let (stream, op, bytes) = (col("stream"), col("op"), col("bytes"));
    let mut m = BTreeMap::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        if f[op] == "write" {
            *m.entry(f[stream].to_string()).or_default() += f[bytes].parse::<u64>().unwrap();
        }
    }
    m
}

/// Each stream's overflow bytes summed over timeseries.csv's intervals.
fn dropped_per_interval(series: &Path) -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string(series).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let (stream, dropped) = (col("stream"), col("overflow_bytes"));
    let mut m = BTreeMap::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        if !f[dropped].is_empty() {
            *m.entry(f[stream].to_string()).or_default() += f[dropped].parse::<u64>().unwrap();
        }
    }
    m
}

/// The live count of stream `name` in the run phase's `measured.buffers`.
fn live<'a>(doc: &'a Value, name: &str) -> &'a Value {
    let run = doc["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "run")
        .unwrap();
    run["measured"]["buffers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["stream"] == name)
        .unwrap()
}

#[test]
fn at_an_easy_bitrate_nothing_overflows_and_a_record_buffer_holds_about_one_chunk() {
    if !ready_to_emulate(
        "at_an_easy_bitrate_nothing_overflows_and_a_record_buffer_holds_about_one_chunk",
        &["losetup"],
    ) {
        return;
    }
    let (work, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let doc = run_realtime(
        work.path(),
        out.path(),
        "emu:hdd,size=2GiB,scale=2",
        &["bitrate=4", "duration=20s"],
    );
    let v = &doc["verdict"];
    assert_eq!(v["meets_target"], true, "{v}");
    assert_eq!(
        (v["overflow_mb"].as_f64(), v["underruns"].as_u64()),
        (Some(0.0), Some(0))
    );
    assert!(v.get("first_failure").is_none(), "{v}");
    for s in doc["streams"].as_array().unwrap() {
        let b = &s["buffer"];
        if b["role"] == "record" {
            // A chunk is written once the application has made it; while it is written the
            // application adds a few 16,667-byte frames.
            let peak = b["peak_bytes"].as_u64().unwrap();
            assert!(
                (MIB..MIB + MIB / 4).contains(&peak),
                "{}: peak {peak}",
                s["name"]
            );
            assert_eq!(b["overflow_bytes"], 0);
        } else {
            assert_eq!(
                (b["underruns"].as_u64(), b["stall_s"].as_f64()),
                (Some(0), Some(0.0))
            );
            assert!(b["startup_s"].as_f64().unwrap() < 1.0, "{b}");
        }
    }
    assert_cleaned_up(work.path(), &[]);
}

#[test]
fn on_a_slowed_disk_the_record_buffers_overflow_and_every_byte_is_accounted_for() {
    if !ready_to_emulate(
        "on_a_slowed_disk_the_record_buffers_overflow_and_every_byte_is_accounted_for",
        &["losetup"],
    ) {
        return;
    }
    let (work, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // Seeks eight times the default's and no write cache: six 19.4 Mbit/s recorders need about
    // 14 writes of 1 MiB a second, which take about 110 ms each here.
    let slow = "emu:hdd,size=2GiB,avg_seek=100ms,full_stroke=200ms,write_back=false";
    let doc = run_realtime(
        work.path(),
        out.path(),
        slow,
        &["recorders=6", "bitrate=19.4", "buffer=2s", "duration=20s"],
    );
    let dir = trial_dir(out.path());
    let on_disk = written(&dir.join("samples.csv"));
    let per_interval = dropped_per_interval(&dir.join("timeseries.csv"));
    // 600 frames of 19.4 Mbit/s at 30 fps come in 20 s: 48,500,000 bytes, plus the fraction of
    // a chunk each recorder held at its start.
    let made = (600.0 * 19.4e6 / 8.0 / 30.0f64).floor() as u64;
    let mut overflowed = 0;
    for s in doc["streams"].as_array().unwrap() {
        let (name, b) = (s["name"].as_str().unwrap(), &s["buffer"]);
        if b["role"] != "record" {
            continue;
        }
        let n = |k: &str| b[k].as_u64().unwrap();
        assert_eq!(
            n("overflow_bytes"),
            n("app_bytes") - n("io_bytes") - n("failed_bytes") - n("end_bytes"),
            "{name}: {b}"
        );
        assert_eq!(
            n("io_bytes"),
            on_disk[name],
            "{name}: written per samples.csv"
        );
        assert!((made..made + MIB).contains(&n("app_bytes")), "{name}: {b}");
        assert_eq!(
            per_interval[name],
            n("overflow_bytes"),
            "{name}: timeseries.csv"
        );
        let listed: u64 = b["overflows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["bytes"].as_u64().unwrap())
            .sum();
        if n("overflow_events") <= 100 {
            assert_eq!(listed, n("overflow_bytes"), "{name}");
        }
        let l = live(&doc, name);
        let counted = [
            (l["generated"].as_u64(), n("app_bytes")),
            (l["moved"].as_u64(), n("io_bytes")),
            (l["dropped"].as_u64(), n("overflow_bytes")),
            (l["buffered"].as_u64(), n("end_bytes")),
        ];
        for (a, b) in counted {
            assert_eq!(a, Some(b), "{name}: the live count and the replay");
        }
        if n("overflow_bytes") > 0 {
            overflowed += 1;
            assert_eq!(b["peak_pct"].as_f64(), Some(100.0));
        }
    }
    assert!(
        overflowed >= 2,
        "the slowed disk overflowed only {overflowed} recorders"
    );
    let v = &doc["verdict"];
    assert_eq!(v["meets_target"], false);
    assert!(v["overflow_mb"].as_f64().unwrap() > 0.0 && v["first_failure"]["stream"].is_string());
    assert!(
        !doc["warnings"]
            .to_string()
            .contains("differs from its replay"),
        "{}",
        doc["warnings"]
    );
    assert_cleaned_up(work.path(), &[]);
}

/// `iotrial ARGS`: its exit status and stderr.
fn refused(args: &[&str]) -> (i32, String) {
    let work = tempfile::tempdir().unwrap();
    let out = iotrial(work.path())
        .args(args)
        .arg("--out")
        .arg(work.path().join("out"))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn input_no_run_could_do_exits_2_with_the_reason() {
    for (args, needle) in [
        (
            &[
                "run",
                "dvr",
                "--set",
                "pacing=realtime",
                "--set",
                "bitrate=0",
            ][..],
            "bitrate: 0 Mbit/s: must be greater than 0",
        ),
        (
            &[
                "run",
                "stream",
                "--set",
                "pacing=realtime",
                "--set",
                "buffer=50ms",
            ][..],
            "smaller than one I/O",
        ),
        (&["capacity", "dvr", "--set", "bitrate=0"][..], "bitrate"),
        (
            &["capacity", "dvr", "--set", "buffer=512KiB"][..],
            "buffer: the buffer (524288 bytes) is smaller than one I/O (1048576 bytes)",
        ),
        (
            &["capacity", "dvr", "--min", "10", "--max", "4"][..],
            "cannot hold: min 10 is above max 4",
        ),
        (
            &["capacity", "dvr", "--max", "5000"][..],
            "cannot hold: at max = 5000 recorders",
        ),
        (
            &[
                "capacity",
                "dvr",
                "--vary",
                "bitrate",
                "--set",
                "buffer=5s",
                "--min",
                "0.5",
            ][..],
            "cannot hold: at min = 0.5 bitrate",
        ),
        (
            &["capacity", "dvr", "--vary", "samples"][..],
            "allowed: recorders, players, bitrate",
        ),
        (
            &["capacity", "tree"][..],
            "no streams that run in real time",
        ),
        (&["capacity", "dvr", "--confirm", "0"][..], "confirm"),
    ] {
        let (code, err) = refused(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
