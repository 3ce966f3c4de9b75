//! Every job file of fio's own `examples/` directory run by `iotrial run fio:FILE`, end to end,
//! on a `dir:` target, an ext4 `image:` and an ext4 `emu:ssd` (root; prints why it skips
//! otherwise). fio's files are not part of iotrial: `FIO_EXAMPLES=DIR` names the `examples/`
//! directory of a checkout of fio's repository.
//!
//! Each file runs with `--set runtime=` (`FIO_EXAMPLES_RUNTIME`, 2 s) and, where it asks for
//! more room or a device's offsets than a 4 GiB target has, the shortenings of [`SHORTEN`];
//! nothing else of it changes. A file iotrial refuses (exit 2 naming file:line, the option and
//! why) is refused before any target is touched, so it is tried on the first target only.
//! Prints one row per file (the engines it names, what was shortened, and per target: ran with
//! its I/Os and errors, refused and why, or failed), then the counts: of the files that use
//! only the engines iotrial runs, how many ran on every target, and the refusals by reason.
//! Results: bench/README.md. `FIO_EXAMPLES_TARGETS` (`dir,image,emu`) and
//! `FIO_EXAMPLES_ONLY` (file names, comma-separated) narrow a run. With `FIO_KEPT` naming
//! fio's `t/jobs` directory, the kept set of fio files that are not examples (fio's test jobs)
//! is tried first, each accepted or refused by `iotrial study --dry-run` ([`fio_kept`]).

#[path = "../tests/common/mod.rs"]
mod common;
mod fio_kept;

use common::figures::total_ios;
use common::{missing, Need};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The engines a plain Linux machine runs, which iotrial is to honour (fio's default is psync):
/// the bench's own list, so that what counts as runnable does not follow what iotrial accepts.
const LISTED: &str = "sync psync vsync pvsync pvsync2 libaio io_uring posixaio mmap null falloc \
                      ftruncate filecreate filestat filedelete dircreate dirstat dirdelete";

/// Files whose sizes or offsets are a large device's: what the bench sets besides the runtime,
/// and why.
const SHORTEN: &[(&str, &[&str], &str)] = &[
    (
        "cross-stripe-verify.fio",
        &["offset_increment=64m", "io_size=32m"],
        "30 jobs 124 GiB apart",
    ),
    (
        "enospc-pressure.fio",
        &["filesize=512m", "size=1g"],
        "128 GiB files, 999 GiB",
    ),
    ("example_latency_steadystate.fio", &["size=1g"], "10 GiB"),
    ("fio-rand-RW.fio", &["size=1g"], "10 GiB"),
    ("fio-rand-read.fio", &["size=1g"], "10 GiB"),
    ("fio-rand-write.fio", &["size=1g"], "10 GiB"),
    ("fio-seq-RW.fio", &["size=1g"], "10 GiB"),
    ("fio-seq-read.fio", &["size=1g"], "10 GiB"),
    ("fio-seq-write.fio", &["size=1g"], "10 GiB"),
    ("flow.fio", &["size=1g"], "100 GiB"),
    ("iometer-file-access-server.fio", &["size=1g"], "4 GiB"),
    ("ssd-test.fio", &["size=1g"], "10 GiB"),
    (
        "tiobench-example.fio",
        &["size=128m"],
        "16 files of 512 MiB",
    ),
    (
        "zbd-rand-write-trim-gc.fio",
        &["offset=0", "size=1g"],
        "from zone 524, 128 zones of 256 MiB",
    ),
    (
        "zbd-rand-write-zone-reset-gc.fio",
        &["offset=0", "size=1g"],
        "from zone 524",
    ),
    (
        "zbd-seq-read.fio",
        &["offset=0", "size=1g"],
        "10 GiB from 131 GiB",
    ),
];

/// Variables some files take from fio's environment (`${FIO_BS}`), as their comments run them.
const ENV: &[(&str, &str)] = &[("FIO_BS", "4096"), ("FIO_RW", "randread")];

/// A run's end on one target.
enum Outcome {
    Ran { ios: f64, errors: f64, secs: f64 },
    Refused(String),
    Failed(String),
}

/// The engines a file names: its `ioengine=` options, and those of the fio command lines its
/// comments give (a file written for `--ioengine=xnvme` names none of its own); psync if none.
fn engines(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        let comment = t.starts_with(';') || t.starts_with('#');
        let value = if comment {
            t.find("--ioengine=").map(|i| &t[i + "--ioengine=".len()..])
        } else {
            t.strip_prefix("ioengine")
                .and_then(|r| r.trim_start().strip_prefix('='))
        };
        if let Some(v) = value {
            let e: String = v
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '-')
                .collect();
            if !e.is_empty() && !out.contains(&e) {
                out.push(e);
            }
        }
    }
    if out.is_empty() {
        out.push("psync".into());
    }
    out
}

/// The refusal's own words: iotrial's last error line, without the file's path and the list
/// of what is supported.
fn reason(stderr: &str, file: &str) -> String {
    let line = stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("iotrial: "))
        .unwrap_or_else(|| stderr.lines().last().unwrap_or("no message"));
    let mut r = line.trim_start_matches("iotrial: ").to_string();
    if let Some(i) = r.find(file) {
        r = r[i + file.len()..].trim_start_matches(':').to_string();
        r = format!("line {r}");
    }
    for cut in ["; supported:", "; iotrial runs"] {
        if let Some(i) = r.find(cut) {
            r.truncate(i);
        }
    }
    r.replace('|', "\\|")
}

/// What a refusal is counted under: the engine or option it names.
fn reason_key(r: &str) -> String {
    let after = r.split_once(": ").map_or(r, |x| x.1);
    if let Some(i) = after.find(" cannot be honoured") {
        return after[..i].to_string();
    }
    if let Some(i) = after.find(" is not supported") {
        return after[..i].to_string();
    }
    after.chars().take(60).collect()
}

fn run(file: &Path, target: &str, sets: &[&str], runtime: u32, work: &Path) -> Outcome {
    let out = work.join("out");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_iotrial"));
    cmd.env("TMPDIR", work)
        .env("IOTRIAL_LEDGER_DIR", work.join("ledger"))
        .envs(ENV.iter().copied())
        .args(["run", &format!("fio:{}", file.display()), "--json"])
        .args(["--monitor", "none", "--out"])
        .arg(&out)
        .args(["--set", &format!("runtime={runtime}")]);
    for s in sets {
        cmd.args(["--set", s]);
    }
    match target {
        "dir" => {
            let d = work.join("dir");
            std::fs::create_dir_all(&d).unwrap();
            cmd.arg("--target").arg(format!("dir:{}", d.display()))
        }
        "image" => cmd.args(["--target", "image:size=4GiB", "--fs", "ext4"]),
        _ => cmd.args(["--target", "emu:ssd,size=4GiB", "--fs", "ext4"]),
    };
    let start = Instant::now();
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("iotrial starts");
    // Read both pipes while it runs: a long run fills them.
    let (mut so, mut se) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let o = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut so, &mut b).ok();
        b
    });
    let e = std::thread::spawn(move || {
        let mut b = String::new();
        std::io::Read::read_to_string(&mut se, &mut b).ok();
        b
    });
    let limit = Duration::from_secs(600);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > limit {
            // SIGINT: iotrial removes what the run made before it exits.
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let (stdout, stderr) = (o.join().unwrap(), e.join().unwrap());
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(work.join("dir"));
    let name = file.display().to_string();
    match status.map(|s| s.code()) {
        None => Outcome::Failed(format!("still running after {} s", limit.as_secs())),
        Some(Some(0)) => {
            let doc: Value = serde_json::from_slice(&stdout).expect("result.json");
            let errors = doc["verdict"]["run_groups"]
                .as_array()
                .map_or(0.0, |g| g.iter().filter_map(|x| x["errors"].as_f64()).sum());
            Outcome::Ran {
                ios: total_ios(&doc),
                errors,
                secs: start.elapsed().as_secs_f64(),
            }
        }
        Some(Some(2)) => Outcome::Refused(reason(&stderr, &name)),
        Some(c) => Outcome::Failed(format!("exit {c:?}: {}", reason(&stderr, &name))),
    }
}

fn cell(o: &Outcome) -> String {
    match o {
        Outcome::Ran { ios, errors, secs } if *errors > 0.0 => {
            format!("ran, {ios:.0} I/Os, {errors:.0} errors, {secs:.0} s")
        }
        Outcome::Ran { ios, secs, .. } => format!("ran, {ios:.0} I/Os, {secs:.0} s"),
        Outcome::Refused(r) => format!("refused: {r}"),
        Outcome::Failed(r) => format!("**failed**: {r}"),
    }
}

fn main() {
    let kept = std::env::var("FIO_KEPT").ok();
    if let Some(k) = &kept {
        let run = std::env::var("FIO_KEPT_RUN").is_ok_and(|v| v == "1");
        fio_kept::report(&fio_kept::try_all(Path::new(k), run), k);
    }
    let Ok(dir) = std::env::var("FIO_EXAMPLES") else {
        if kept.is_none() {
            println!("fio_examples: skipped: set FIO_EXAMPLES to the examples/ directory of fio's repository (and FIO_KEPT to its t/jobs for the kept set)");
        }
        return;
    };
    let targets: Vec<String> = std::env::var("FIO_EXAMPLES_TARGETS")
        .unwrap_or_else(|_| "dir,image,emu".into())
        .split(',')
        .map(str::to_string)
        .collect();
    let mut needs = vec![Need::Root];
    if targets.iter().any(|t| t == "image") {
        needs.extend([Need::Loop, Need::Tool("mkfs.ext4")]);
    }
    if targets.iter().any(|t| t == "emu") {
        needs.push(Need::Fuse);
    }
    if let Some(why) = needs.into_iter().find_map(missing) {
        println!("fio_examples: skipped: {why}");
        return;
    }
    let runtime: u32 = std::env::var("FIO_EXAMPLES_RUNTIME")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let only: Vec<String> = std::env::var("FIO_EXAMPLES_ONLY")
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("FIO_EXAMPLES is a directory")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "fio"))
        .filter(|p| only.is_empty() || only.iter().any(|o| p.ends_with(o)))
        .collect();
    files.sort();
    let work = tempfile::tempdir().unwrap();
    println!(
        "{} job files of {dir}; --set runtime={runtime} on each; targets: {}",
        files.len(),
        targets.join(", ")
    );
    println!();
    println!("| file | engines | also set | {} |", targets.join(" | "));
    println!("|---|---|---|{}", "---|".repeat(targets.len()));
    let (mut listed, mut ran_all) = (0, 0);
    let mut ran_on: BTreeMap<&str, usize> = BTreeMap::new();
    let mut refused: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut failed: Vec<String> = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let eng = engines(&text);
        let ours = eng
            .iter()
            .all(|e| LISTED.split_whitespace().any(|l| l == e));
        listed += usize::from(ours);
        let (sets, why) = SHORTEN
            .iter()
            .find(|s| s.0 == name)
            .map_or((&[][..], ""), |s| (s.1, s.2));
        let mut cells = Vec::new();
        let mut all = true;
        for t in &targets {
            eprintln!("fio_examples: {name} on {t}");
            let o = run(f, t, sets, runtime, work.path());
            let c = cell(&o);
            match &o {
                Outcome::Ran { .. } => *ran_on.entry(t.as_str()).or_default() += 1,
                Outcome::Refused(r) => {
                    all = false;
                    // A job file's refusal comes before any target: the same on every one.
                    if r.starts_with("line ") {
                        refused.entry(reason_key(r)).or_default().push(name.clone());
                        cells.push(c);
                        break;
                    }
                    refused
                        .entry(format!("{t}: {}", reason_key(r)))
                        .or_default()
                        .push(name.clone());
                }
                Outcome::Failed(_) => {
                    all = false;
                    failed.push(format!("{name} on {t}"));
                }
            }
            cells.push(c);
        }
        cells.resize(targets.len(), "(as above)".into());
        if all && ours {
            ran_all += 1;
        }
        let also = if sets.is_empty() {
            String::new()
        } else {
            format!("{} ({why})", sets.join(" "))
        };
        println!(
            "| {name} | {}{} | {also} | {} |",
            eng.join(", "),
            if ours { "" } else { " (not run here)" },
            cells.join(" | ")
        );
    }
    println!();
    println!(
        "Files naming only the engines iotrial runs: {listed}; ran end to end on every target: \
         {ran_all} ({:.0}%).",
        100.0 * ran_all as f64 / listed.max(1) as f64
    );
    for t in &targets {
        println!(
            "Ran on {t}: {} of {}.",
            ran_on.get(t.as_str()).unwrap_or(&0),
            files.len()
        );
    }
    println!();
    println!("| refused because of | files |");
    println!("|---|---|");
    let mut by: Vec<_> = refused.into_iter().collect();
    by.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    for (k, v) in by {
        println!(
            "| {} | {} ({}) |",
            k.replace('|', "\\|"),
            v.len(),
            v.join(", ")
        );
    }
    if !failed.is_empty() {
        println!();
        println!("Failed: {}", failed.join(", "));
    }
}
