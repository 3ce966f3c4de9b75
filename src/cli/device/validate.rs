//! `iotrial device validate`: the validation set on a device and its twin, alternated, with
//! the Ruemmler-Wilkes demerit per workload beside the device's own noise floor; with `--fs`,
//! a small dvr and a small tree on ext4 and xfs on both (`iotrial run`, this same program),
//! their verdict figures side by side with their ratio.

use super::super::errors::{failed, usage};
use anyhow::{Context, Result};
use iotrial::present::Rows;
use iotrial::probe::validate::validate;
use iotrial::report::terminal;
use iotrial::stack::build::guard;
use iotrial::stack::ledger::Ledger;
use iotrial::stack::DeviceSpec;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// What `device validate` was asked.
pub struct Args {
    pub spec: String,
    pub twin: String,
    pub rounds: usize,
    pub time_scale: f64,
    pub fs: bool,
    pub wipe: Vec<PathBuf>,
    pub json: bool,
}

/// The small workloads of `--fs`: (kind, its --set arguments).
const FS_WORKLOADS: &[(&str, &[&str])] = &[
    ("dvr", &["samples=128", "region_size=64MiB"]),
    (
        "tree",
        &["dirs=4000", "depth=4", "threads=4", "idle_max=2min"],
    ),
];

/// Runs validate and prints its tables.
pub fn run(a: Args, stop: &Arc<AtomicBool>) -> Result<()> {
    if a.rounds < 3 {
        return Err(usage(
            "--rounds: at least 3 (the device's noise floor needs them)",
        ));
    }
    let DeviceSpec::Block(path) = DeviceSpec::parse(&a.spec).map_err(failed)? else {
        return Err(usage(format!(
            "'{}': validate takes a block device (block:/dev/X)",
            a.spec
        )));
    };
    guard::check(&path, &a.wipe).map_err(failed)?;
    if a.fs && a.time_scale != 1.0 {
        // `iotrial run` on a plain block device reports wall times; on the twin, its model's.
        return Err(usage(
            "--fs compares a trial's figures on the device (wall-clock) with the twin's (model time): only at --time-scale 1",
        ));
    }
    if a.fs && !a.wipe.iter().any(|w| w == &path) {
        return Err(usage(format!(
            "--fs makes filesystems on {}: name it again with --wipe {}",
            path.display(),
            path.display()
        )));
    }
    let twin = DeviceSpec::parse(&a.twin).map_err(failed)?;
    let DeviceSpec::Emu { model, .. } = &twin else {
        return Err(usage(format!(
            "--twin '{}': a twin is an emu: spec or a twin file",
            a.twin
        )));
    };
    let twin_scale = model.settings.scale;
    let mut ledger = Ledger::new().context("create the resource ledger")?;
    let started = Instant::now();
    let mut say = |line: &str| {
        let s = started.elapsed().as_secs();
        eprintln!("[{:>2}:{:02}] {line}", s / 60, s % 60);
    };
    let device = a.spec.clone();
    let twin_text = twin.to_string();
    let v = iotrial::probe::released_after(&mut ledger, |l| {
        let build = iotrial::stack::provision::BuildOptions::default();
        iotrial::probe::probe_built(&twin, &build, l, stop, |twin_dev, _| {
            validate(
                &device,
                &path,
                a.time_scale,
                &twin_text,
                twin_dev,
                twin_scale,
                a.rounds,
                stop,
                &mut say,
            )
            .map_err(|e| iotrial::probe::ProbeError::Cleanup(e.to_string()))
        })
    })
    .map_err(failed)?
    .0;
    let fs = if a.fs {
        filesystems(&a.spec, &path, &twin_text, &mut say)?
    } else {
        Vec::new()
    };
    if a.json {
        let out = serde_json::json!({ "validation": v, "filesystems": fs });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!(
        "{} against its twin {} ({} rounds each, alternated; each I/O's response time is its median over the rounds, all rounds pooled beside it)",
        v.device, v.twin, v.rounds
    );
    let rows = Rows {
        headings: [
            "workload",
            "device mean ms",
            "twin mean ms",
            "demerit ms",
            "demerit % of mean",
            "all rounds pooled %",
            "device vs itself ms",
            "device vs itself %",
        ]
        .map(String::from)
        .to_vec(),
        rows: v
            .figures
            .iter()
            .map(|f| {
                vec![
                    f.workload.to_string(),
                    format!("{:.3}", f.device_mean_ms),
                    format!("{:.3}", f.twin_mean_ms),
                    format!("{:.3}", f.demerit_ms),
                    format!("{:.1}", f.demerit_share * 100.0),
                    format!("{:.1}", f.pooled_share * 100.0),
                    format!("{:.3}", f.noise_ms),
                    format!("{:.1}", f.noise_share * 100.0),
                ]
            })
            .collect(),
    };
    println!("{}", terminal::table(&rows));
    if v.busy_s.iter().any(|&s| s > 0.0) || !v.settled {
        println!(
            "Each round started once its drive was calm (no background work after {CALM} s of idle): the device was busy up to {:.0} s before a round, the twin {:.0} s.{}",
            v.busy_s[0],
            v.busy_s[1],
            if v.settled {
                String::new()
            } else {
                format!(
                    " One of them was still busy after {:.0} s; the rounds ran anyway, from unlike states.",
                    iotrial::probe::validate::SETTLE_LIMIT
                )
            },
            CALM = iotrial::probe::validate::CALM_IDLE
        );
    }
    if !fs.is_empty() {
        let rows = Rows {
            headings: [
                "filesystem",
                "workload",
                "figure",
                "device",
                "twin",
                "twin / device",
            ]
            .map(String::from)
            .to_vec(),
            rows: fs
                .iter()
                .map(|f| {
                    vec![
                        f.fs.clone(),
                        f.workload.clone(),
                        f.figure.clone(),
                        format!("{:.4}", f.device),
                        format!("{:.4}", f.twin),
                        format!("{:.3}", f.twin / f.device),
                    ]
                })
                .collect(),
        };
        println!("{}", terminal::table(&rows));
    }
    Ok(())
}

/// One filesystem-level figure on the device and on the twin.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FsFigure {
    pub fs: String,
    pub workload: String,
    pub figure: String,
    pub device: f64,
    pub twin: f64,
}

/// The small dvr and tree on ext4 and xfs on both; every numeric verdict figure both have.
fn filesystems(
    spec: &str,
    path: &Path,
    twin: &str,
    say: &mut dyn FnMut(&str),
) -> Result<Vec<FsFigure>> {
    let exe = std::env::current_exe().context("find this program")?;
    let out_dir = tempfile::tempdir().context("a directory for the filesystem trials")?;
    let mut figures = Vec::new();
    for fs in ["ext4", "xfs"] {
        for (kind, sets) in FS_WORKLOADS {
            let mut got = Vec::new();
            for target in [spec, twin] {
                let mut c = Command::new(&exe);
                c.args([
                    "run", kind, "--target", target, "--fs", fs, "--json", "--out",
                ])
                .arg(out_dir.path());
                if target == spec {
                    c.arg("--wipe").arg(path);
                }
                for s in *sets {
                    c.args(["--set", s]);
                }
                let o = c.output().context("run a filesystem trial")?;
                if !o.status.success() {
                    anyhow::bail!(
                        "{kind} on {fs} on {target}: {}",
                        String::from_utf8_lossy(&o.stderr).trim()
                    );
                }
                let v: serde_json::Value =
                    serde_json::from_slice(&o.stdout).context("read the trial's result")?;
                got.push(numbers(&v["verdict"]));
                say(&format!("{kind} on {fs} on {target}: done"));
            }
            for (name, d) in &got[0] {
                if let Some((_, t)) = got[1].iter().find(|(n, _)| n == name) {
                    if *d != 0.0 {
                        figures.push(FsFigure {
                            fs: fs.into(),
                            workload: kind.to_string(),
                            figure: name.clone(),
                            device: *d,
                            twin: *t,
                        });
                    }
                }
            }
        }
    }
    Ok(figures)
}

/// Every number in a JSON value, named by its path.
fn numbers(v: &serde_json::Value) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    fn walk(v: &serde_json::Value, at: String, out: &mut Vec<(String, f64)>) {
        match v {
            serde_json::Value::Number(n) => {
                if let Some(x) = n.as_f64() {
                    out.push((at, x));
                }
            }
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    let p = if at.is_empty() {
                        k.clone()
                    } else {
                        format!("{at}.{k}")
                    };
                    walk(x, p, out);
                }
            }
            serde_json::Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, format!("{at}[{i}]"), out);
                }
            }
            _ => {}
        }
    }
    walk(v, String::new(), &mut out);
    out
}
