//! Reply lateness of the emulated-device server (root only): how long after its due time each
//! reply goes out, with the workload that exposed it: the dvr trial's 10 streams of 1 MiB
//! random I/O (8 record, 2 playback) on `emu:hdd,size=8GiB` at scale 1, raw regions, through the
//! real binary and its device server process. Rounds alternate three timers, so all see the
//! same host load: the default (a real-time lead and, with two CPUs, a standby on another
//! CPU), one real-time thread (`IOTRIAL_EMU_ONE_TIMER`), and ordinary threads
//! (`IOTRIAL_EMU_NO_REALTIME`). Prints, per round, the mean and maximum lateness, split by who
//! sent the reply, the replies the standby sent, and the load average. Results:
//! bench/README.md.

#[path = "../tests/common/mod.rs"]
mod common;

use common::{missing, Need};
use serde_json::Value;

const ROUNDS: usize = 3;
const SAMPLES: &str = "samples=200";

/// A timer to measure: its name and the variables that select it.
const TIMERS: [(&str, &[&str]); 3] = [
    ("real-time, standby", &[]),
    ("real-time, one thread", &["IOTRIAL_EMU_ONE_TIMER"]),
    ("normal", &["IOTRIAL_EMU_NO_REALTIME"]),
];

fn round(env: &[&str], out: &std::path::Path) -> Value {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_iotrial"));
    cmd.args(["run", "dvr", "--target", "emu:hdd,size=8GiB", "--json"])
        .args(["--set", SAMPLES, "--out"])
        .arg(out);
    for var in env {
        cmd.env(var, "1");
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
    println!("| round | timer | late mean µs | late max µs | timer-sent mean / max µs | inline mean / max µs (n) | send mean / max µs | standby sent | load |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---|");
    for r in 1..=ROUNDS {
        for (timer, env) in TIMERS {
            let s = round(env, out.path());
            let asked_rt = !timer.starts_with("normal");
            let f = |k: &str| s[k].as_f64().unwrap_or(f64::NAN);
            let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
            println!(
                "| {r} | {timer}{} | {:.1} | {:.0} | {:.1} / {:.0} | {:.0} / {:.0} ({}) | {:.1} / {:.0} | {} | {} |",
                if asked_rt && s["timer_realtime"] != true { " (not granted)" } else { "" },
                f("late_us_mean"),
                f("late_us_max"),
                f("late_timer_us_mean"),
                f("late_timer_us_max"),
                f("late_inline_us_mean"),
                f("late_inline_us_max"),
                s["replies_inline"],
                f("send_us_mean"),
                f("send_us_max"),
                s["timer_standby_fired"],
                load.split_whitespace().take(3).collect::<Vec<_>>().join(" "),
            );
        }
    }
}
