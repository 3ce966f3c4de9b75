//! `iotrial device validate`: the validation set on a device and its twin, alternated, with
//! the Ruemmler-Wilkes demerit per workload beside the device's own noise floor; with `--fs`,
//! a small dvr and a small tree on ext4 and xfs (or the filesystems named) on both
//! (`iotrial run`, this same program), in the same alternated rounds, their verdict figures
//! side by side with the ratio of their means, its interval, and whether it is within 10%.

use super::super::errors::{failed, usage, Interrupted};
use anyhow::{Context, Result};
use iotrial::analysis::compare::Estimate;
use iotrial::analysis::ratio;
use iotrial::present::verdict::estimate_text;
use iotrial::present::Rows;
use iotrial::probe::character::calm::settle;
use iotrial::probe::validate::laps::ServerLate;
use iotrial::probe::validate::validate;
use iotrial::report::terminal;
use iotrial::stack::build::guard;
use iotrial::stack::child::{output_or_stop, Ended};
use iotrial::stack::ledger::Ledger;
use iotrial::stack::DeviceSpec;
use iotrial::units::Percent;
use std::os::unix::process::CommandExt;
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
    /// QD32 reads in each round.
    pub qd32_reads: usize,
    pub time_scale: f64,
    /// The filesystems of `--fs` (none without it).
    pub fs: Vec<String>,
    /// Rounds in all, at most, of a filesystem workload with a figure whose interval is still
    /// wider than `fs_interval`.
    pub fs_max_rounds: usize,
    /// The 90% interval's half-width over a figure's ratio that is narrow enough (0.05: ±5%).
    pub fs_interval: f64,
    /// The reads only, the device opened read-only.
    pub read_only: bool,
    /// The host's CPUs kept out of idle sleep while it runs.
    pub poll_idle: bool,
    pub wipe: Vec<PathBuf>,
    pub json: bool,
}

/// The small workloads of `--fs`: (kind, its --set arguments).
const FS_WORKLOADS: &[(&str, &[&str])] = &[
    ("dvr", &["samples=128", "region_size=64MiB"]),
    (
        "tree",
        &["dirs=20000", "depth=4", "threads=4", "idle_max=2min"],
    ),
];

/// Runs validate and prints its tables.
pub fn run(a: Args, stop: &Arc<AtomicBool>) -> Result<()> {
    if a.rounds < 3 {
        return Err(usage(
            "--rounds: at least 3 (the device's noise floor needs them)",
        ));
    }
    if a.qd32_reads < iotrial::probe::validate::QD32_READS {
        return Err(usage(format!(
            "--qd32-reads {}: at least {} (ten times the queue)",
            a.qd32_reads,
            iotrial::probe::validate::QD32_READS
        )));
    }
    let DeviceSpec::Block(path) = DeviceSpec::parse(&a.spec).map_err(failed)? else {
        return Err(usage(format!(
            "'{}': validate takes a block device (block:/dev/X)",
            a.spec
        )));
    };
    // Mounted, system, swap and held devices are refused even read-only; a signature only
    // stops a set that writes.
    let wipe = match a.read_only {
        true => vec![path.clone()],
        false => a.wipe.clone(),
    };
    guard::check(&path, &wipe).map_err(failed)?;
    let set = match a.read_only {
        true => iotrial::probe::validate::Set::ReadOnly,
        false => iotrial::probe::validate::Set::Full,
    };
    for fs in &a.fs {
        iotrial::stack::fs::check_name(fs).map_err(|e| usage(format!("--fs: {e}")))?;
    }
    let with_fs = !a.fs.is_empty();
    if a.fs_max_rounds < a.rounds {
        return Err(usage(format!(
            "--fs-max-rounds {}: at least --rounds ({})",
            a.fs_max_rounds, a.rounds
        )));
    }
    if !(a.fs_interval > 0.0 && a.fs_interval < FS_MARGIN) {
        return Err(usage(format!(
            "--fs-interval {}: above 0% and below the margin ({})",
            Percent::from_share(a.fs_interval).text(),
            Percent::from_share(FS_MARGIN).text()
        )));
    }
    if with_fs && a.time_scale != 1.0 {
        // `iotrial run` on a plain block device reports wall times; on the twin, its model's.
        return Err(usage(
            "--fs compares a trial's figures on the device (wall-clock) with the twin's (model time): only at --time-scale 1",
        ));
    }
    if with_fs && !a.wipe.iter().any(|w| w == &path) {
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
    if with_fs && twin_scale != 1.0 {
        return Err(usage(format!(
            "--fs times both sides' trials in wall-clock time: the twin must run at scale 1 (its spec has scale={twin_scale})"
        )));
    }
    // Held to the end, the filesystem trials included; the kernel drops it with the process.
    let _poll = super::poll_idle(a.poll_idle)?;
    let mut ledger = Ledger::new().context("create the resource ledger")?;
    let started = Instant::now();
    let mut say = |line: &str| {
        let s = started.elapsed().as_secs();
        eprintln!("[{:>2}:{:02}] {line}", s / 60, s % 60);
    };
    let device = a.spec.clone();
    let twin_text = twin.to_string();
    let mark = ledger.len();
    // The twin is served once, for the rounds and the filesystem trials: like the device, it
    // carries from one to the next what the last left it doing.
    let both = (|| -> Result<_> {
        let build = iotrial::stack::provision::BuildOptions::default();
        let raw = iotrial::probe::built_raw(&twin, &build, &mut ledger, stop).map_err(failed)?;
        let l: &Ledger = &ledger;
        // The twin's server, asked at each half's start and end how many replies it sent late.
        let server = || l.server_stats().first().and_then(ServerLate::of);
        let v = validate(
            &device,
            &path,
            a.time_scale,
            &twin_text,
            (&raw.path, Some(&server)),
            twin_scale,
            (a.rounds, set, a.qd32_reads),
            stop,
            &mut say,
        )
        .map_err(failed)?;
        let fs = if with_fs {
            let rounds = a.rounds..=a.fs_max_rounds;
            let sides = [(a.spec.as_str(), path.as_path()), (&twin_text, &raw.path)];
            filesystems(sides, &a.fs, (rounds, a.fs_interval), stop, &mut say)?
        } else {
            FsFigures::default()
        };
        Ok((v, fs))
    })();
    let released = ledger.release_to(mark);
    let (v, fs) = both?;
    if !released.is_empty() {
        return Err(failed(iotrial::probe::ProbeError::Cleanup(
            released.join("; "),
        )));
    }
    if a.json {
        let out =
            serde_json::json!({ "validation": v, "filesystems": fs, "poll_idle": a.poll_idle });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!(
        "{} against its twin {} ({} rounds each, alternated, {} QD32 reads a round; each I/O's response time is its median over the rounds, all rounds pooled beside it)",
        v.device, v.twin, v.rounds, v.qd32_reads
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
            "at other offsets %",
            "against 5%",
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
                    match (
                        f.elsewhere_share,
                        f.elsewhere_max_share,
                        f.elsewhere_bound_share,
                    ) {
                        (Some(e), Some(x), Some(b)) => format!(
                            "{:.1} (up to {:.1}; one more set: {:.1})",
                            e * 100.0,
                            x * 100.0,
                            b * 100.0
                        ),
                        _ => "-".into(),
                    },
                    f.verdict.text().to_string(),
                ]
            })
            .collect(),
    };
    println!("{}", terminal::table(&rows));
    if !v.not_run.is_empty() {
        println!(
            "--read-only: not run, as it writes: {}. The device was opened read-only.",
            v.not_run.join(", ")
        );
    }
    println!(
        "\"device vs itself\" is the device between its own rounds (the same places); \"at other offsets\" is the device on {} more rounds of the random reads at places drawn afresh, against its rounds' medians (mean, the largest, and how far one more set may be: the upper end of their 95% prediction interval): how much a figure depends on which places were drawn, which a twin, knowing the drive's mechanics but not where each sector sits, cannot follow. \"against 5%\": the demerit within 5% of the mean, or over it but no further than the device was from itself (between its rounds, or as far as one more set of other offsets may be: this set cannot judge that twin), or over.",
        iotrial::probe::validate::ELSEWHERE
    );
    if let Some(f) = v.figures.iter().find(|f| {
        f.workload == iotrial::probe::validate::WORKLOADS[1]
            && f.verdict == iotrial::probe::validate::Verdict::OwnSpread
    }) {
        println!(
            "The QD32 reads at one more set of other offsets may be up to {:.1}% from the device's own: over {} reads a round, this set cannot tell the twin's QD32 reads from the device's dependence on the places drawn. More reads a round may (--qd32-reads; a drive whose QD32 reads switch between regimes needs tens of thousands).",
            f.elsewhere_bound_share.unwrap_or(f.noise_share) * 100.0,
            v.qd32_reads
        );
    }
    println!(
        "Round by round, in the order the rounds began (each workload's mean response time in that round; the host's steal, the larger of the round's two halves):"
    );
    println!("{}", terminal::table(&super::laps::table(&v.laps)));
    if let Some(note) = super::laps::late_note(&v.laps) {
        println!("{note}");
    }
    if a.poll_idle {
        println!(
            "--poll-idle: the host's CPUs were kept out of idle sleep ({} held at 0 µs) on both sides.",
            iotrial::probe::idle::LATENCY_FILE
        );
    }
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
    if with_fs {
        let mean_ci = |xs: &[f64]| estimate_text(Estimate::of(xs).as_ref());
        let rows = Rows {
            headings: [
                "filesystem",
                "workload",
                "figure",
                "rounds",
                "device (95% CI)",
                "twin (95% CI)",
                "twin / device",
                "90% interval",
                "within 10%",
            ]
            .map(String::from)
            .to_vec(),
            rows: fs
                .figures
                .iter()
                .map(|f| {
                    let (r, iv, verdict) = match &f.ratio {
                        Some(r) => (
                            format!("{:.3}", r.ratio),
                            if r.hi90.is_finite() {
                                format!("{:.3}-{:.3}", r.lo90, r.hi90)
                            } else {
                                "-".into()
                            },
                            r.verdict.word().to_string(),
                        ),
                        None => ("-".into(), "-".into(), "-".into()),
                    };
                    vec![
                        f.fs.clone(),
                        f.workload.clone(),
                        f.figure.clone(),
                        f.device.len().to_string(),
                        mean_ci(&f.device),
                        mean_ci(&f.twin),
                        r,
                        iv,
                        verdict,
                    ]
                })
                .collect(),
        };
        println!("{}", terminal::table(&rows));
        let count = |v: ratio::Verdict| {
            fs.figures
                .iter()
                .filter(|f| f.ratio.map(|r| r.verdict) == Some(v))
                .count()
        };
        println!(
            "Filesystem figures over {} rounds each, device and twin running the same workload seed in a round (so the same offsets and, on ext2/3/4, the same directory hash seed) and another seed in each round, the interval taken over the pairs: {} within 10% of the device's (their 90% interval inside 0.9-1.1), {} outside (95% interval wholly beyond), {} undecided (the pairs spread too widely to tell). {} more were the same on both in every round (the workload's own shape and counts) and are not compared.",
            rounds_text(&fs.figures),
            count(ratio::Verdict::Within),
            count(ratio::Verdict::Outside),
            count(ratio::Verdict::Undecided),
            fs.same.len()
        );
        if a.fs_max_rounds > a.rounds {
            println!("{}", added_rounds_text(a.fs_max_rounds, a.fs_interval));
        }
        if let Some(text) = to_decide_text(&fs.figures) {
            println!("{text}");
        }
        if !fs.rerun.is_empty() {
            println!(
                "Pairs run again, their figures not counted ({} of them): {}.",
                fs.rerun.len(),
                fs.rerun.join("; ")
            );
        }
    }
    Ok(())
}

/// One filesystem-level figure on the device and on the twin, each round's value and the
/// twin's mean over the device's with its interval and verdict.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FsFigure {
    pub fs: String,
    pub workload: String,
    pub figure: String,
    pub device: Vec<f64>,
    pub twin: Vec<f64>,
    pub ratio: Option<ratio::Ratio>,
}

/// The filesystem figures of `--fs`, and the names of those every round had the same on
/// both sides (the workload's shape, counts it always reaches), which are not compared.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct FsFigures {
    pub figures: Vec<FsFigure>,
    pub same: Vec<String>,
    /// The pairs run again because the host's hypervisor took its CPUs during one side's
    /// trial ([`STEAL_LIMIT`]), each said in words.
    pub rerun: Vec<String>,
}

/// A pair is run again when either side's trial had the host's CPUs stolen by the hypervisor
/// (steal, /proc/stat) by more than this, ms per second over the trial: 5% of two CPUs. On
/// a shared host a trial's figures then measure the host: a flash twin's tree removal took
/// 27.8 s in a trial with 419 ms/s of steal, five on both sides with 3-68 ms/s 13.4-15.8 s
/// (bench/README.md).
const STEAL_LIMIT: f64 = 100.0;

/// At most this many pairs of one workload in one round are run again for steal; the last
/// is kept whatever its steal.
const STEAL_RETRIES: usize = 2;

/// The host's steal over a trial, ms per second (0 when the result has none).
fn steal(result: &serde_json::Value) -> f64 {
    result["monitor"]["threads"]["host"]["steal_ms_per_s_mean"]
        .as_f64()
        .unwrap_or(0.0)
}

/// The margin the twin's filesystem figures are judged by (±10%).
const FS_MARGIN: f64 = 0.10;

/// The half-width of a figure's 90% interval over its ratio that `--fs-max-rounds` adds
/// rounds until (`--fs-interval`): half the margin, so that a twin about 5% or less from the
/// device (a ratio of about 0.95-1.05) is called within once its figures are that narrow.
pub const FS_INTERVAL: f64 = FS_MARGIN / 2.0;

/// The small dvr and tree on each of `filesystems` on both `sides` (each named by its spec and
/// reached at its block device: the device, then the twin as its server serves it), alternated
/// (each round swaps which goes first), for the first of `rounds`; then more rounds of each
/// workload with a figure whose 90% interval is wider than `width` of its ratio
/// ([`ratio::Ratio::half_width`]), up to the last of `rounds` in all: by the width alone, never
/// the verdict, which would give a twin on the margin another chance to pass at each round
/// (docs/twins.md). Both sides of a
/// round run its workload seed ([`round_seed`]), so each figure's ratio is judged over the pairs
/// ([`ratio::paired`]). Every numeric verdict figure both have. Both sides go through one path:
/// `iotrial run` on a disk named with `--wipe`. Each carries what the trials before left it
/// doing (an SMR disk cleaning what they wrote), so each trial starts once its side answers
/// reads after an idle at once ([`settle`]), and its `idle` phases read the disk until it is
/// calm again. A pair in which the host's hypervisor took its CPUs ([`STEAL_LIMIT`]) is run
/// again, up to [`STEAL_RETRIES`] times.
fn filesystems(
    sides: [(&str, &Path); 2],
    filesystems: &[String],
    (rounds, width): (std::ops::RangeInclusive<usize>, f64),
    stop: &AtomicBool,
    say: &mut dyn FnMut(&str),
) -> Result<FsFigures> {
    let exe = std::env::current_exe().context("find this program")?;
    let out_dir = tempfile::tempdir().context("a directory for the filesystem trials")?;
    // Both sides are made for the device's size, so with the same journal.
    let size = iotrial::stack::build::raw::device_size(sides[0].1);
    let cases: Vec<Case> = filesystems
        .iter()
        .flat_map(|fs| {
            FS_WORKLOADS
                .iter()
                .map(move |(k, sets)| (fs.as_str(), *k, *sets))
        })
        .collect();
    // Per case: each side's figures, round by round.
    let mut got: Vec<[Vec<Named>; 2]> = vec![[Vec::new(), Vec::new()]; cases.len()];
    let mut active = vec![true; cases.len()];
    let mut rerun = Vec::new();
    for round in 0..*rounds.end() {
        if round >= *rounds.start() {
            active = too_wide(&cases, &compared(&cases, &got), width);
            if !active.contains(&true) {
                break;
            }
            say(&format!(
                "round {}: {} with a figure's interval still wider than ±{}, another round",
                round + 1,
                cases
                    .iter()
                    .zip(&active)
                    .filter(|(_, &a)| a)
                    .map(|((fs, kind, _), _)| format!("{kind} on {fs}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                Percent::from_share(width).text()
            ));
        }
        for (c, (fs, kind, sets)) in cases.iter().enumerate() {
            if !active[c] {
                continue;
            }
            let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for attempt in 0..=STEAL_RETRIES {
                let mut pair: [Named; 2] = Default::default();
                let mut stolen = [0.0; 2];
                for side in order {
                    let (name, path) = sides[side];
                    let target = format!("block:{}", path.display());
                    let mut cmd = Command::new(&exe);
                    // In a group of its own: a terminal's Ctrl-C reaches this process only,
                    // which passes the trial one SIGTERM (two would end it at once).
                    cmd.process_group(0);
                    cmd.args(trial_args(kind, fs, &target, size, sets, round_seed(round)))
                        .arg("--out")
                        .arg(out_dir.path())
                        .arg("--wipe")
                        .arg(path);
                    let busy = calm(path, round_seed(round), stop)?;
                    if busy > 0.0 {
                        say(&format!(
                            "{name} was busy on its own for {busy:.0} s before {kind} on {fs}"
                        ));
                    }
                    // A stop (SIGTERM to this process alone) ends the trial too, which
                    // releases what it made.
                    let o =
                        match output_or_stop(&mut cmd, stop).context("run a filesystem trial")? {
                            Ended::Ran(o) => o,
                            Ended::Stopped => return Err(Interrupted.into()),
                        };
                    if !o.status.success() {
                        anyhow::bail!(
                            "{kind} on {fs} on {name}: {}",
                            String::from_utf8_lossy(&o.stderr).trim()
                        );
                    }
                    let v: serde_json::Value =
                        serde_json::from_slice(&o.stdout).context("read the trial's result")?;
                    pair[side] = numbers(&v["verdict"]);
                    stolen[side] = steal(&v);
                    say(&format!(
                        "{kind} on {fs} on {name}: round {} done",
                        round + 1
                    ));
                }
                if let Some(why) = disturbed(stolen) {
                    if attempt < STEAL_RETRIES {
                        let text = format!("{kind} on {fs}, round {}: {why}", round + 1);
                        say(&format!("{text}: the pair runs again"));
                        rerun.push(text);
                        continue;
                    }
                }
                let [d, t] = pair;
                got[c][0].push(d);
                got[c][1].push(t);
                break;
            }
        }
    }
    let mut f = compared(&cases, &got);
    f.rerun = rerun;
    Ok(f)
}

/// Why a pair whose trials had `stolen` ms per second of steal (device, twin) measures the
/// host rather than the two sides, or `None`.
fn disturbed(stolen: [f64; 2]) -> Option<String> {
    let worst = if stolen[0] >= stolen[1] { 0 } else { 1 };
    (stolen[worst] > STEAL_LIMIT).then(|| {
        format!(
            "the hypervisor took {:.0} ms/s of the host's CPUs (steal) during the {}'s trial, over {STEAL_LIMIT:.0}",
            stolen[worst],
            ["device", "twin"][worst]
        )
    })
}

/// Waits until the device at `path` answers reads after an idle at once (the calm check of
/// the validation set's rounds); the seconds it was found busy.
fn calm(path: &Path, seed: u64, stop: &AtomicBool) -> Result<f64> {
    let cap = iotrial::stack::build::raw::device_size(path)
        .with_context(|| format!("the size of {}", path.display()))?;
    let mut run = iotrial::probe::script::Runner::new(path, 1.0, false, stop);
    let s = settle(&mut run, cap, 0xf5 + seed)
        .with_context(|| format!("wait for {} to be calm", path.display()))?;
    if !s.calm {
        anyhow::bail!(
            "{} was still busy on its own after {:.0} s: its trials cannot start calm",
            path.display(),
            s.busy_s
        );
    }
    Ok(s.busy_s)
}

/// A filesystem workload of `--fs`: (filesystem, kind, its --set arguments).
type Case<'a> = (&'a str, &'a str, &'a [&'a str]);

/// Each case's figures from its rounds so far (`got[case][side][round]`), and the names of
/// those every round had the same on both sides.
fn compared(cases: &[Case], got: &[[Vec<Named>; 2]]) -> FsFigures {
    let (mut figures, mut same) = (Vec::new(), Vec::new());
    for ((fs, kind, _), [dev, tw]) in cases.iter().zip(got) {
        let Some(first) = dev.first() else {
            continue;
        };
        for (name, _) in first {
            let pick = |side: &[Named]| -> Option<Vec<f64>> {
                side.iter()
                    .map(|r| r.iter().find(|(n, _)| n == name).map(|(_, x)| *x))
                    .collect()
            };
            let (Some(d), Some(t)) = (pick(dev), pick(tw)) else {
                continue;
            };
            if d.iter().all(|&x| x == 0.0) {
                continue;
            }
            // The workload's own shape and counts every run reaches: not a measurement.
            if d.iter().chain(&t).all(|&x| x == d[0]) {
                same.push(format!("{fs} {kind} {name}"));
                continue;
            }
            figures.push(FsFigure {
                fs: fs.to_string(),
                workload: kind.to_string(),
                figure: name.clone(),
                ratio: ratio::paired(&d, &t, FS_MARGIN),
                device: d,
                twin: t,
            });
        }
    }
    FsFigures {
        figures,
        same,
        rerun: Vec::new(),
    }
}

/// Per case, whether one of its figures has a 90% interval wider than `width` of its ratio.
fn too_wide(cases: &[Case], f: &FsFigures, width: f64) -> Vec<bool> {
    cases
        .iter()
        .map(|(fs, kind, _)| {
            f.figures.iter().any(|x| {
                x.fs == *fs
                    && x.workload == *kind
                    && x.ratio.is_some_and(|r| r.half_width() > width)
            })
        })
        .collect()
}

/// For the undecided figures, the rounds in all that would decide each were its pairs to keep
/// their ratio and spread, and the interval's width that would (`None` when none is
/// undecided).
fn to_decide_text(figures: &[FsFigure]) -> Option<String> {
    let each: Vec<String> = figures
        .iter()
        .filter_map(|f| {
            let r = f.ratio.filter(|r| r.verdict == ratio::Verdict::Undecided)?;
            let rounds = match (r.rounds_to_decide, r.width_to_decide) {
                (Some(m), Some(w)) if w > 0.0 => {
                    format!("{m} at ±{}", Percent::from_share(w).text())
                }
                (Some(m), _) => m.to_string(),
                (None, _) => format!("not within {}", ratio::MAX_PROJECTED),
            };
            Some(format!("{} {} {} {rounds}", f.fs, f.workload, f.figure))
        })
        .collect();
    (!each.is_empty()).then(|| {
        format!(
            "Rounds in all that would decide each undecided figure, were its pairs to keep the ratio and spread they have, and the 90% interval that would (`--fs-max-rounds N --fs-interval P%`): {}.",
            each.join(", ")
        )
    })
}

/// What `--fs-max-rounds max` with `--fs-interval width` did, for under the table.
fn added_rounds_text(max: usize, width: f64) -> String {
    format!(
        "--fs-max-rounds {max}: a workload got another round, up to {max} in all, while one of its figures had a 90% interval wider than ±{} of its ratio (--fs-interval): by the interval's width, not the verdict, so that no extra round gives a twin another chance to pass.",
        Percent::from_share(width).text()
    )
}

/// The rounds the figures had: "5", or "5 to 9" where more rounds were added to some.
fn rounds_text(figures: &[FsFigure]) -> String {
    let n = figures.iter().map(|f| f.device.len());
    match (n.clone().min(), n.max()) {
        (Some(lo), Some(hi)) if lo != hi => format!("{lo} to {hi}"),
        (Some(lo), _) => lo.to_string(),
        _ => "0".into(),
    }
}

/// mkfs's arguments for the ext filesystems: inode tables and journal zeroed by mkfs itself.
/// Left for later (mke2fs's default), the kernel's ext4lazyinit zeroes them in the background
/// of the trial's first minute, one table at a time, each after a pause ten times as long as
/// the last one took: how much of that work lands in a trial, and where, follows the device's
/// speed and the host's timing, which is not what the device and its twin are compared on.
const EXT_MKFS: &str = "-E lazy_itable_init=0,lazy_journal_init=0";

/// The journal the ext filesystems with one (ext3, ext4) get at least, in MiB: mke2fs's own
/// size from 16 GiB up ([`EXT_JOURNAL_FROM`]). The tree's creation puts about 66-88 MB through
/// a 64 MiB journal (8 GiB), which then has to be checkpointed while the creation runs; whether
/// the creation's last transaction waits for that, and writes 21 MB more to the journal and 20
/// MB more home, is the host's timing (two values on the device and its twin alike). Through
/// 128 MiB it writes about 44 MB and never waits for space.
const EXT_JOURNAL_MIB: u64 = 128;

/// The smallest filesystem mke2fs gives a journal of [`EXT_JOURNAL_MIB`] by itself (e2fsprogs
/// 1.47: 4 Mi blocks of 4 KiB; 64 MiB below, 256 MiB from 32 GiB).
const EXT_JOURNAL_FROM: u64 = 16 << 30;

/// mkfs's arguments for `fs` on a device of `size` bytes (`None`: not known), or `None` for a
/// filesystem validate makes as mkfs makes it.
fn mkfs_args(fs: &str, size: Option<u64>) -> Option<String> {
    match fs {
        "ext2" => Some(EXT_MKFS.to_string()),
        "ext3" | "ext4" if size.is_some_and(|s| s < EXT_JOURNAL_FROM) => {
            Some(format!("{EXT_MKFS} -J size={EXT_JOURNAL_MIB}"))
        }
        "ext3" | "ext4" => Some(EXT_MKFS.to_string()),
        _ => None,
    }
}

/// The mount options of ext2/3/4 (the ext4 driver mounts all three): no prefetch of the
/// block bitmaps. With it (the default), ext4 reads every group's bitmap in the background
/// from the mount on, and its first allocations pass over the groups not read yet: on a disk
/// as slow as an hdd, the workload's files then land where the seed puts them, or in the
/// first gigabyte, or split between the two, as far as the prefetch had got, which is the
/// host's timing. Without it, the files of one seed land at one place on both sides.
const EXT_MOUNT: &str = "no_prefetch_block_bitmaps";

/// The workload seed of round `round` (from 0), the same on the device and on the twin: it
/// draws the dvr's offsets and ext4's directory hash seed, so where the filesystem puts the
/// workload's files. Each round is then a pair at one layout, and the rounds differ in it.
fn round_seed(round: usize) -> u64 {
    round as u64 + 1
}

/// The arguments of one filesystem trial (`iotrial run`) on a device of `size` bytes, but for
/// `--out` and `--wipe`.
fn trial_args(
    kind: &str,
    fs: &str,
    target: &str,
    size: Option<u64>,
    sets: &[&str],
    seed: u64,
) -> Vec<String> {
    let mut args: Vec<String> = ["run", kind, "--target", target, "--fs", fs, "--json"]
        .map(String::from)
        .to_vec();
    if let Some(mkfs) = mkfs_args(fs, size) {
        args.extend(["--mkfs".to_string(), mkfs]);
    }
    if matches!(fs, "ext2" | "ext3" | "ext4") {
        args.extend(["--mount".to_string(), EXT_MOUNT.to_string()]);
    }
    for s in sets {
        args.extend(["--set".to_string(), s.to_string()]);
    }
    args.extend(["--set".to_string(), format!("seed={seed}")]);
    args
}

/// A trial's numbers, each named by its path in the verdict.
type Named = Vec<(String, f64)>;

/// Every number in a JSON value, named by its path.
fn numbers(v: &serde_json::Value) -> Named {
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
                // Entries of a phase (io_by_class) by the phase's name: a side whose idle
                // phase read the disk has an entry more than the other.
                for (i, x) in a.iter().enumerate() {
                    let key = x["phase"].as_str().map_or(i.to_string(), String::from);
                    walk(x, format!("{at}[{key}]"), out);
                }
            }
            _ => {}
        }
    }
    walk(v, String::new(), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ext_filesystems_are_made_with_their_tables_zeroed_and_others_as_mkfs_makes_them() {
        let gib = |n: u64| Some(n << 30);
        let ext4 = trial_args("tree", "ext4", "emu:hdd", gib(32), &["dirs=10"], 3);
        assert_eq!(
            ext4,
            [
                "run", "tree", "--target", "emu:hdd", "--fs", "ext4", "--json", "--mkfs", EXT_MKFS,
                "--mount", EXT_MOUNT, "--set", "dirs=10", "--set", "seed=3"
            ]
        );
        assert!(
            EXT_MKFS.contains("lazy_itable_init=0") && EXT_MKFS.contains("lazy_journal_init=0")
        );
        let xfs = trial_args("dvr", "xfs", "block:/dev/x", gib(8), &[], 1);
        assert_eq!(
            xfs,
            [
                "run",
                "dvr",
                "--target",
                "block:/dev/x",
                "--fs",
                "xfs",
                "--json",
                "--set",
                "seed=1"
            ]
        );
    }

    /// Below 16 GiB mke2fs's journal is 64 MiB or less, which the tree's creation overruns:
    /// ext3 and ext4 get 128 MiB there, mke2fs's own from 16 GiB up; ext2 has no journal.
    #[test]
    fn a_journal_of_at_least_128_mib_where_mkfs_would_make_a_smaller_one() {
        let gib = |n: u64| Some(n << 30);
        let with = format!("{EXT_MKFS} -J size=128");
        for fs in ["ext3", "ext4"] {
            assert_eq!(mkfs_args(fs, gib(8)), Some(with.clone()));
            assert_eq!(mkfs_args(fs, Some((16 << 30) - 4096)), Some(with.clone()));
            assert_eq!(mkfs_args(fs, gib(16)), Some(EXT_MKFS.to_string()));
            assert_eq!(mkfs_args(fs, gib(32)), Some(EXT_MKFS.to_string()));
            // A size not known is left to mke2fs.
            assert_eq!(mkfs_args(fs, None), Some(EXT_MKFS.to_string()));
        }
        assert_eq!(mkfs_args("ext2", gib(8)), Some(EXT_MKFS.to_string()));
        for fs in ["xfs", "btrfs"] {
            assert_eq!(mkfs_args(fs, gib(8)), None);
        }
        let small = trial_args("tree", "ext4", "emu:flash", gib(8), &[], 2);
        let at = small.iter().position(|a| a == "--mkfs").unwrap();
        assert_eq!(small[at + 1], with);
    }

    /// A side whose idle phase read the disk has an entry more in a per-phase list: entries
    /// are named by their phase, so the same phase is compared on both sides.
    #[test]
    fn per_phase_entries_are_named_by_their_phase() {
        let device = serde_json::json!({"io_by_class": [
            {"phase": "create", "bytes": 1}, {"phase": "idle_create", "bytes": 2},
            {"phase": "remove", "bytes": 3}], "spread": [5, 6]});
        let twin = serde_json::json!({"io_by_class": [
            {"phase": "create", "bytes": 1}, {"phase": "remove", "bytes": 3}]});
        let (d, t) = (numbers(&device), numbers(&twin));
        let remove = |n: &Named| {
            n.iter()
                .find(|(k, _)| k == "io_by_class[remove].bytes")
                .map(|x| x.1)
        };
        assert_eq!((remove(&d), remove(&t)), (Some(3.0), Some(3.0)));
        assert!(
            d.iter().any(|(k, x)| k == "spread[1]" && *x == 6.0),
            "{d:?}"
        );
    }

    #[test]
    fn a_pair_with_the_host_stolen_runs_again_and_says_which_side() {
        assert_eq!(disturbed([20.0, 99.0]), None);
        let why = disturbed([12.0, 419.0]).unwrap();
        assert!(why.contains("419 ms/s") && why.contains("twin's"), "{why}");
        assert!(disturbed([355.0, 0.0]).unwrap().contains("device's"));
        let host = |x: f64| serde_json::json!({"monitor": {"threads": {"host": {"steal_ms_per_s_mean": x}}}});
        assert_eq!(steal(&host(355.1)), 355.1);
        assert_eq!(steal(&serde_json::json!({"monitor": null})), 0.0);
    }

    #[test]
    fn each_round_has_a_seed_of_its_own() {
        let seeds: Vec<u64> = (0..12).map(round_seed).collect();
        let mut distinct = seeds.clone();
        distinct.dedup();
        assert_eq!(distinct.len(), 12, "{seeds:?}");
        assert!(seeds.iter().all(|&s| s > 0));
    }

    /// Rounds are added only to the workloads with a figure whose interval is still wider
    /// than asked: one whose rounds agree is left as it is, one that spreads goes on, and the
    /// verdict plays no part.
    #[test]
    fn only_workloads_with_a_wide_interval_get_more_rounds() {
        let cases: Vec<Case> = vec![("ext4", "dvr", &[]), ("ext4", "tree", &[])];
        let named = |x: f64| -> Named { vec![("rate".to_string(), x), ("count".to_string(), 7.0)] };
        let side = |xs: &[f64]| xs.iter().map(|&x| named(x)).collect::<Vec<_>>();
        // dvr: the twin within 1% every round; tree: the twin's rounds spread 0.5-1.5.
        let got = vec![
            [side(&[10.0, 10.1, 9.9]), side(&[10.0, 10.05, 9.95])],
            [side(&[10.0, 10.0, 10.0]), side(&[5.0, 15.0, 10.0])],
        ];
        let f = compared(&cases, &got);
        assert_eq!(f.same, ["ext4 dvr count", "ext4 tree count"]);
        let verdicts: Vec<_> = f.figures.iter().map(|x| x.ratio.unwrap().verdict).collect();
        assert_eq!(
            verdicts,
            [ratio::Verdict::Within, ratio::Verdict::Undecided]
        );
        let dvr = f.figures[0].ratio.unwrap().half_width();
        assert!(dvr > 0.0 && dvr < 0.05, "{dvr}");
        assert_eq!(too_wide(&cases, &f, 0.05), [false, true]);
        // Within, but wider than asked: the dvr goes on too.
        assert_eq!(too_wide(&cases, &f, dvr / 2.0), [true, true]);
        // The undecided one is said with the rounds and the width that would decide it; the
        // other is not.
        let r = f.figures[1].ratio.unwrap();
        let (m, w) = (r.rounds_to_decide.unwrap(), r.width_to_decide.unwrap());
        let text = to_decide_text(&f.figures).unwrap();
        let want = format!("ext4 tree rate {m} at ±{}.", Percent::from_share(w).text());
        assert!(text.contains(&want) && !text.contains("dvr"), "{text}");
        assert!(to_decide_text(&f.figures[..1]).is_none());
        assert_eq!(rounds_text(&f.figures), "3");
        // A fourth round for the tree only.
        let mut more = got.clone();
        more[1][0].push(named(10.0));
        more[1][1].push(named(10.0));
        assert_eq!(rounds_text(&compared(&cases, &more).figures), "3 to 4");
        let said = added_rounds_text(14, 0.025);
        assert!(
            said.starts_with("--fs-max-rounds 14: ") && said.contains("wider than ±2.5% of"),
            "{said}"
        );
    }
}
