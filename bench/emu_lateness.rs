//! Reply lateness of the emulated-device server (root only): how long after its due time each
//! reply goes out, with the workload that exposed it: the dvr trial's 10 streams of 1 MiB
//! random I/O (8 record, 2 playback) on `emu:hdd,size=8GiB` at scale 1, raw regions, through the
//! real binary and its device server process. Rounds alternate the timer thread in the
//! real-time class (the default when permitted) and not (`IOTRIAL_EMU_NO_REALTIME`), so both
//! see the same host load. Prints, per round, the mean and maximum lateness, split by who sent
//! the reply, and the load average. Results: bench/README.md.

#[path = "../tests/common/mod.rs"]
mod common;

use common::{missing, Need};
use serde_json::Value;

const ROUNDS: usize = 3;
const SAMPLES: &str = "samples=200";

fn round(realtime: bool, out: &std::path::Path) -> Value {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_iotrial"));
    cmd.args(["run", "dvr", "--target", "emu:hdd,size=8GiB", "--json"])
        .args(["--set", SAMPLES, "--out"])
        .arg(out);
    if !realtime {
        cmd.env("IOTRIAL_EMU_NO_REALTIME", "1");
    }
    let o = cmd.output().expect("iotrial runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("result.json");
    doc["stack"]["emulated"][0]["server"].clone()
}

fn main() {
    let needs = [Need::Root, Need::Loop, Need::Fuse, Need::Tool("losetup")];
    if let Some(why) = needs.into_iter().find_map(missing) {
        println!("emu_lateness: skipped: {why}");
        return;
    }
    let out = tempfile::tempdir().unwrap();
    println!("| round | timer | late mean µs | late max µs | timer-sent mean / max µs | inline mean / max µs (n) | send mean / max µs | load |");
    println!("|---|---|---:|---:|---:|---:|---:|---|");
    for r in 1..=ROUNDS {
        for realtime in [true, false] {
            let s = round(realtime, out.path());
            let f = |k: &str| s[k].as_f64().unwrap_or(f64::NAN);
            let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
            println!(
                "| {r} | {} | {:.1} | {:.0} | {:.1} / {:.0} | {:.0} / {:.0} ({}) | {:.1} / {:.0} | {} |",
                if s["timer_realtime"] == true { "real-time" } else { "normal" },
                f("late_us_mean"),
                f("late_us_max"),
                f("late_timer_us_mean"),
                f("late_timer_us_max"),
                f("late_inline_us_mean"),
                f("late_inline_us_max"),
                s["replies_inline"],
                f("send_us_mean"),
                f("send_us_max"),
                load.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
            );
        }
    }
}
