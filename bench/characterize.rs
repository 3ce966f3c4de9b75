//! `cargo bench --bench characterize`: draws random parameter sets of each model (the known
//! answers of `tests/characterize.rs`, seeded), serves each with `iotrial device serve` as a
//! plain block device, characterizes it (wall time measured), and prints each parameter's
//! drawn and found value with the error, then the round trip: `device validate` of the drive
//! against the twin characterize printed, each workload's demerit in ms and as a share of its
//! mean, beside the drive against itself (the noise floor). `CHAR_DRAWS` draws per model
//! (default 1: two hdd, one smr, one flash); `CHAR_MODELS` a comma list of hdd-rpo, hdd-fifo,
//! smr, flash. `CHAR_FS=1` adds `--fs` to the validation against the twin (a small dvr and
//! tree on ext4 and xfs on the drive and on its twin), and prints their figures side by side
//! with their ratio. `--fs` runs at scale 1 only, so the flash card, characterized at scale
//! 0.1, is then validated on a fresh copy served at scale 1 against its twin at scale 1.
//! `CHAR_FS=ext4` (a comma list) on the filesystems named; `CHAR_FS_MAX_ROUNDS=N` passes `--fs-max-rounds N` and `CHAR_FS_INTERVAL=P%` `--fs-interval P%`; `CHAR_FS_SELF=1` adds the same `--fs`
//! to the validation of the drive against its own model, the floor of the filesystem figures.
//! `CHAR_POLL_IDLE=1` passes `--poll-idle` to characterize and to every validate (root).
//! `CHAR_QD32_READS=N` passes `--qd32-reads N` to every validate of an rpo hdd (a drive that
//! switches between regimes at QD32 needs tens of thousands; the others keep 320).
//! `CHAR_JSON=DIR` keeps each characterize's and validate's `--json` output there
//! (`1-characterize.json`, `2-validate.json`, ...), every round's figures included.
//! Run it on a quiet machine, with nothing else measuring:
//!
//! ```sh
//! cargo build --release && cargo bench --bench characterize
//! ```

#[path = "../tests/common/mod.rs"]
mod common;

use common::draws::*;
use common::Served;
use serde_json::Value;
use std::process::Command;
use std::time::Instant;

const CHECKS: &[(&str, &[(&str, &str)])] = &[
    (
        "hdd",
        &[
            ("rpm", "number"),
            ("outer_rate", "number"),
            ("inner_rate", "number"),
            ("avg_seek", "duration"),
            ("full_stroke", "duration"),
            ("track_to_track", "duration"),
            ("zones", "number"),
            ("readahead", "size"),
            ("segments", "number"),
            ("buffer", "size"),
            ("write_buffer", "size"),
            ("write_slots", "number"),
            ("queue_order", "text"),
            ("age_limit", "duration"),
        ],
    ),
    (
        "smr",
        &[
            ("cache", "size"),
            ("band", "size"),
            ("idle", "duration"),
            ("outer_rate", "number"),
            ("inner_rate", "number"),
        ],
    ),
    (
        "flash",
        &[
            ("au", "size"),
            ("open_units", "number"),
            ("read_rate", "number"),
            ("write_rate", "number"),
            ("access", "duration"),
            ("in_order", "text"),
            ("copy_rate", "number"),
            ("erase", "duration"),
        ],
    ),
];

/// Serves `spec` with its image in memory (`TMPDIR` on /dev/shm, a tmpfs), as the twin's
/// trials keep theirs: `device serve` keeps its image in `TMPDIR`, and on the host's disk a
/// reply waits whenever the host writes the server's pages back (bench/README.md).
fn serve(spec: &str) -> Served {
    if !iotrial::stack::serve::on_tmpfs(std::path::Path::new("/dev/shm")) {
        println!("no tmpfs on /dev/shm: the served drive keeps its image on the host's disk");
        return Served::start(&bin(), spec);
    }
    Served::start_env(&bin(), spec, &[("TMPDIR", "/dev/shm")])
}

fn bin() -> String {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    dir.join("iotrial").display().to_string()
}

fn iotrial(args: &[&str]) -> Value {
    let o = Command::new(bin()).args(args).output().unwrap();
    if !o.status.success() {
        eprintln!("iotrial {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        std::process::exit(1);
    }
    if let Ok(dir) = std::env::var("CHAR_JSON") {
        static KEPT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = KEPT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let path = std::path::Path::new(&dir).join(format!("{n}-{}.json", args[1]));
        std::fs::write(&path, &o.stdout).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    serde_json::from_slice(&o.stdout).unwrap()
}

fn main() {
    let draws: u64 = std::env::var("CHAR_DRAWS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let models =
        std::env::var("CHAR_MODELS").unwrap_or_else(|_| "hdd-rpo,hdd-fifo,smr,flash".into());
    for k in 0..draws {
        for m in models.split(',') {
            let (spec, scale, model) = match m {
                "hdd-rpo" => (draw_disk(43 + 1000 * k, "rpo"), 1.0, "hdd"),
                "hdd-fifo" => (draw_disk(4343 + 1000 * k, "fifo"), 1.0, "hdd"),
                "smr" => (draw_smr(434343 + 1000 * k), 1.0, "smr"),
                "flash" => (draw_flash(43434343 + 1000 * k), 0.1, "flash"),
                other => {
                    eprintln!(
                        "CHAR_MODELS: unknown '{other}'; allowed: hdd-rpo, hdd-fifo, smr, flash"
                    );
                    std::process::exit(2);
                }
            };
            let served = serve(&format!("emu:{spec},scale={scale}"));
            let dev = format!("block:{}", served.device());
            let s = scale.to_string();
            let t = Instant::now();
            let mut args = vec!["device", "characterize", &dev, "--json", "--time-scale", &s];
            if poll_idle() {
                args.push("--poll-idle");
            }
            let v = iotrial(&args);
            let wall = t.elapsed().as_secs_f64();
            println!("\n{m}: {spec}");
            println!(
                "characterized as {} in {:.0} s of wall time ({} I/Os, {:.0} s of the drive's time, scale {scale})",
                v["twin"]["model"], wall, v["ios"], v["device_seconds"]
            );
            println!("the host's steal per probe, ms/s: {}", host_laps(&v));
            println!("--poll-idle: {}", v["poll_idle"]);
            println!("| parameter | drawn | found | error |\n|---|---|---|---|");
            let checks = CHECKS.iter().find(|c| c.0 == model).unwrap().1;
            let mut names: Vec<(&str, &str)> = checks.to_vec();
            if model == "smr" {
                names.extend([("rpm", "number"), ("avg_seek", "duration")]);
            }
            // The drawn disks keep the model's command overhead and interface rate, which
            // characterize takes net of the emulator's own path.
            let mut truth_spec = spec.clone();
            if model == "hdd" || model == "smr" {
                names.extend([("overhead", "duration"), ("iface_rate", "number")]);
                truth_spec.push_str(",overhead=0.1ms,iface_rate=550");
            }
            for (name, kind) in names {
                if !truth_spec.contains(&format!("{name}=")) {
                    continue;
                }
                let (truth, got, err) = compare(&v, &truth_spec, name, kind);
                let err = if kind == "text" {
                    if err == 0.0 {
                        "exact".to_string()
                    } else {
                        "wrong".to_string()
                    }
                } else {
                    format!("{:+.2}%", err * 100.0)
                };
                println!(
                    "| {name} | {truth} | {} | {err} |",
                    got.unwrap_or_else(|| "not identified".into())
                );
            }
            // How a disk's overhead was found: its hits, and the emulator's path at their wait.
            if let Some(f) = v["twin"]["found"]
                .as_array()
                .and_then(|f| f.iter().find(|f| f["name"] == "overhead"))
            {
                println!("overhead: {}", f["how"].as_str().unwrap_or(""));
            }
            // How the write buffer and the aging limit were found (a burst run again, the
            // method the aging limit came from).
            for name in ["write_buffer", "age_limit"] {
                if let Some(f) = v["twin"]["found"]
                    .as_array()
                    .and_then(|f| f.iter().find(|f| f["name"] == name))
                {
                    println!("{name}: {}", f["how"].as_str().unwrap_or(""));
                }
            }
            // What characterize could not identify, and why.
            for u in v["twin"]["unknown"].as_array().into_iter().flatten() {
                println!(
                    "not identified: {}: {}",
                    u["name"].as_str().unwrap_or("?"),
                    u["why"].as_str().unwrap_or("")
                );
            }
            // `--fs`, or `--fs=LIST` when CHAR_FS names filesystems.
            let fs_arg = std::env::var("CHAR_FS").ok().map(|v| match v.as_str() {
                "1" | "" => "--fs".to_string(),
                list => format!("--fs={list}"),
            });
            if fs_arg.is_some() && scale != 1.0 {
                // `--fs` compares wall-clock trials, so it runs at scale 1 only: a second copy
                // of the drawn card, fresh, served at scale 1, against the twin at scale 1.
                // The parameters characterize found do not depend on the scale it ran at.
                served.stop();
                let fresh = serve(&format!("emu:{spec},scale=1"));
                println!("validated at scale 1 (for --fs) on a fresh copy of the drawn card");
                round_trip(
                    &fresh,
                    &spec,
                    v["spec"].as_str().unwrap(),
                    1.0,
                    fs_arg.as_deref(),
                );
                fresh.stop();
            } else {
                round_trip(
                    &served,
                    &spec,
                    v["spec"].as_str().unwrap(),
                    scale,
                    fs_arg.as_deref(),
                );
                served.stop();
            }
        }
    }
}

/// `device validate` of the served drive against the twin characterize found (`found`, a
/// spec), then against its own drawn model (`spec`), both served at `scale`; with `fs_arg`
/// (`--fs` or `--fs=LIST`) the filesystem figures too. Prints each one's tables.
fn round_trip(served: &Served, spec: &str, found: &str, scale: f64, fs_arg: Option<&str>) {
    let dev = format!("block:{}", served.device());
    let s = scale.to_string();
    let twin = format!("{found},scale={scale}");
    println!("twin: {twin}");
    let with_fs = fs_arg.is_some();
    // CHAR_FS_MAX_ROUNDS: more rounds of a filesystem workload with a figure's interval
    // still wider than CHAR_FS_INTERVAL (validate's --fs-interval, 5% unless given).
    let fs_max = std::env::var("CHAR_FS_MAX_ROUNDS").ok();
    let fs_interval = std::env::var("CHAR_FS_INTERVAL").ok();
    // CHAR_FS_SELF: the filesystem figures of the drive against its own model too.
    let fs_self = std::env::var("CHAR_FS_SELF").is_ok_and(|v| v == "1");
    // CHAR_QD32_READS: more QD32 reads a round for an rpo drive.
    let qd32 = std::env::var("CHAR_QD32_READS")
        .ok()
        .filter(|_| spec.contains("queue_order=rpo"));
    for (label, twin) in [
        ("twin", twin),
        ("itself", format!("emu:{spec},scale={scale}")),
    ] {
        let t = Instant::now();
        let mut args = vec![
            "device",
            "validate",
            &dev,
            "--twin",
            &twin,
            "--time-scale",
            &s,
            "--json",
        ];
        if poll_idle() {
            args.push("--poll-idle");
        }
        if let Some(n) = &qd32 {
            args.extend(["--qd32-reads", n.as_str()]);
        }
        // After `--fs` the drive carries a filesystem: every later validate names it
        // in --wipe again.
        let wipe = served.device();
        if with_fs {
            args.extend(["--wipe", &wipe]);
            if label == "twin" || fs_self {
                args.extend(fs_arg);
                if let Some(n) = &fs_max {
                    args.extend(["--fs-max-rounds", n.as_str()]);
                }
                if let Some(p) = &fs_interval {
                    args.extend(["--fs-interval", p.as_str()]);
                }
            }
        }
        let r = iotrial(&args);
        println!(
            "validate against {label} ({:.0} s): | workload | mean ms | demerit ms | % of mean | drive vs itself % | drive at other offsets %, mean (largest; one more set) | against 5% |",
            t.elapsed().as_secs_f64()
        );
        for f in r["validation"]["figures"].as_array().unwrap() {
            let elsewhere = match (
                f["elsewhere_share"].as_f64(),
                f["elsewhere_max_share"].as_f64(),
                f["elsewhere_bound_share"].as_f64(),
            ) {
                (Some(e), Some(x), Some(b)) => {
                    format!("{:.2} ({:.2}; {:.2})", e * 100.0, x * 100.0, b * 100.0)
                }
                _ => "-".into(),
            };
            println!(
                "| {} | {:.3} | {:.3} | {:.2} | {:.2} | {elsewhere} | {} |",
                f["workload"].as_str().unwrap(),
                f["device_mean_ms"].as_f64().unwrap(),
                f["demerit_ms"].as_f64().unwrap(),
                f["demerit_share"].as_f64().unwrap() * 100.0,
                f["noise_share"].as_f64().unwrap() * 100.0,
                f["verdict"].as_str().unwrap_or("-")
            );
        }
        let busy = &r["validation"]["busy_s"];
        println!(
            "busy before a round, at most: the drive {:.0} s, the twin {:.0} s (settled: {})",
            busy[0].as_f64().unwrap_or(0.0),
            busy[1].as_f64().unwrap_or(0.0),
            r["validation"]["settled"]
        );
        if let Some(line) = burst_laps(&r["validation"]) {
            println!("{line}");
        }
        if let Some(fs) = r["filesystems"]["figures"]
            .as_array()
            .filter(|f| !f.is_empty())
        {
            println!("| filesystem | workload | figure | drive (rounds' range) | twin (rounds' range) | twin / drive | 90% interval | within 10% |\n|---|---|---|---|---|---|---|---|");
            let side = |x: &serde_json::Value| {
                let xs: Vec<f64> = x
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap())
                    .collect();
                let (lo, hi) = xs
                    .iter()
                    .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
                let mean = xs.iter().sum::<f64>() / xs.len() as f64;
                format!("{mean:.4} ({lo:.4}-{hi:.4}, {} rounds)", xs.len())
            };
            for f in fs {
                let r = &f["ratio"];
                println!(
                    "| {} | {} | {} | {} | {} | {} | {} | {} |",
                    f["fs"].as_str().unwrap(),
                    f["workload"].as_str().unwrap(),
                    f["figure"].as_str().unwrap(),
                    side(&f["device"]),
                    side(&f["twin"]),
                    r["ratio"]
                        .as_f64()
                        .map_or("-".into(), |x| format!("{x:.3}")),
                    match (r["lo90"].as_f64(), r["hi90"].as_f64()) {
                        (Some(lo), Some(hi)) => format!("{lo:.3}-{hi:.3}"),
                        _ => "-".into(),
                    },
                    // An undecided figure with the rounds in all, and the interval, that
                    // would decide it.
                    match (r["verdict"].as_str(), r["rounds_to_decide"].as_u64()) {
                        (Some("undecided"), Some(m)) => format!(
                            "undecided ({m} rounds at ±{:.2}% to decide)",
                            r["width_to_decide"].as_f64().unwrap_or(0.0) * 100.0
                        ),
                        (Some("undecided"), None) => format!(
                            "undecided (not within {} rounds)",
                            iotrial::analysis::ratio::MAX_PROJECTED
                        ),
                        (v, _) => v.unwrap_or("-").to_string(),
                    }
                );
            }
        }
    }
}

/// `CHAR_POLL_IDLE=1`: characterize and validate keep the host's CPUs out of idle sleep.
fn poll_idle() -> bool {
    std::env::var("CHAR_POLL_IDLE").is_ok_and(|v| v == "1")
}

/// The write burst round by round from a validation's `laps`: each side's mean, and on the
/// twin the replies its server sent late over that half (the host, not the model).
fn burst_laps(validation: &Value) -> Option<String> {
    let laps = validation["laps"].as_array()?;
    let text: Vec<String> = laps
        .iter()
        .filter_map(|l| {
            let burst = l["means"]
                .as_array()?
                .iter()
                .find(|m| m["workload"].as_str().is_some_and(|w| w.contains("burst")))?;
            let late = match (
                l["server"]["late"].as_u64(),
                l["server"]["replies"].as_u64(),
            ) {
                (Some(n), Some(of)) => format!(" ({n} of {of} replies late)"),
                _ => String::new(),
            };
            Some(format!(
                "round {} {} {:.3}{late}",
                l["round"],
                l["side"].as_str()?,
                burst["mean_ms"].as_f64()?
            ))
        })
        .collect();
    (!text.is_empty()).then(|| format!("the burst round by round, mean ms: {}", text.join("; ")))
}

/// The host's steal over each probe of a characterize run, from its `host` list.
fn host_laps(v: &Value) -> String {
    let laps = v["host"].as_array().cloned().unwrap_or_default();
    let text: Vec<String> = laps
        .iter()
        .map(|l| {
            format!(
                "{} {:.0}",
                l["probe"].as_str().unwrap_or("?"),
                l["steal_ms_per_s"].as_f64().unwrap_or(f64::NAN)
            )
        })
        .collect();
    text.join("; ")
}
