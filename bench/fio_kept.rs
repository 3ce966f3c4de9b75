//! The kept set of fio job files that are not fio's examples: fio's own test jobs (`t/jobs` of
//! a checkout of fio's repository, named by `FIO_KEPT`), each accepted or refused as a new user
//! meets it, by `iotrial study --dry-run` of a study naming it. Every file is tried in a fresh
//! working directory with what fio's test runner (`t/run-fio-tests.py`) gives it first: the
//! 16 KiB pattern file t0027 reads, and the run of its `-pre` job for a file that has one (its
//! iolog and verify state then in the working directory). With `FIO_KEPT_RUN=1` each accepted
//! file also runs end to end on a `dir:` target with `--set runtime=2`. Prints one row per file
//! and the share accepted. fio's files are not part of iotrial.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// What became of one file.
pub struct Kept {
    pub name: String,
    pub accepted: bool,
    pub why: String,
    pub ran: Option<String>,
}

fn iotrial(work: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iotrial"));
    c.current_dir(work).env("TMPDIR", work);
    c
}

/// The last line iotrial printed to stderr.
fn last_error(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .rev()
        .find(|l| l.starts_with("iotrial: "))
        .unwrap_or("")
        .to_string()
}

/// Runs job file `file` for real on a `dir:` target under `work`, its runtime capped at 2 s;
/// what the trial wrote beside result.json is copied into `work` (an iolog a later job reads).
fn run_for_real(file: &Path, work: &Path) -> Result<String, String> {
    let (target, out) = (work.join("target"), work.join("out"));
    std::fs::create_dir_all(&target).unwrap();
    let o = iotrial(work)
        .args(["run", &format!("fio:{}", file.display()), "--json"])
        .args(["--monitor", "none", "--set", "runtime=2", "--out"])
        .arg(&out)
        .arg("--target")
        .arg(format!("dir:{}", target.display()))
        .output()
        .expect("iotrial runs");
    let result = if o.status.success() {
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
        let ios: f64 = doc["streams"]
            .as_array()
            .map_or(0.0, |s| s.iter().filter_map(|x| x["ios"].as_f64()).sum());
        Ok(format!("ran, {ios:.0} I/Os"))
    } else {
        Err(format!("exit {:?}: {}", o.status.code(), last_error(&o)))
    };
    for e in walk(&out) {
        let name = e.file_name().unwrap().to_string_lossy().to_string();
        let keep = !["result.json", "samples.csv", "timeseries.csv", "trial.fio"]
            .contains(&name.as_str())
            && !e.to_string_lossy().contains("/monitor/");
        if keep && e.is_file() {
            let _ = std::fs::copy(&e, work.join(&name));
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    result
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// The file fio's test runner runs before `file`: `NAME-pre.fio` for `NAME-post.fio` or
/// `NAME.fio`.
fn pre_job(file: &Path) -> Option<PathBuf> {
    let stem = file.file_stem()?.to_string_lossy().to_string();
    let base = stem.strip_suffix("-post").unwrap_or(&stem);
    let pre = file.with_file_name(format!("{base}-pre.fio"));
    (pre != file && pre.exists()).then_some(pre)
}

/// Tries every file of `dir`.
pub fn try_all(dir: &Path, run: bool) -> Vec<Kept> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("FIO_KEPT is a directory")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "fio"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        eprintln!("fio_kept: {name}");
        let work = tempfile::tempdir().unwrap();
        let w = work.path();
        if name.starts_with("t0027") {
            // fio's runner writes the pattern t0027 reads: 16 KiB of random bytes.
            let bytes: Vec<u8> = (0..16384u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
                .collect();
            std::fs::write(w.join("t0027.pattern"), bytes).unwrap();
        }
        if let Some(pre) = pre_job(f) {
            if let Err(e) = run_for_real(&pre, w) {
                eprintln!("fio_kept: {name}: its pre job failed: {e}");
            }
        }
        std::fs::create_dir_all(w.join("target")).unwrap();
        let study = w.join("kept.toml");
        std::fs::write(
            &study,
            format!(
                "name = \"kept\"\n[[workloads]]\nkind = \"fio:{}\"\n[[stacks]]\nname = \"d\"\ndevices = [\"dir:{}\"]\n",
                f.display(),
                w.join("target").display()
            ),
        )
        .unwrap();
        let o = iotrial(w)
            .args(["study"])
            .arg(&study)
            .args(["--dry-run", "--out"])
            .arg(w.join("dry"))
            .output()
            .expect("iotrial runs");
        let accepted = o.status.success();
        let why = if accepted {
            String::new()
        } else {
            let e = last_error(&o);
            let at = e.find(&name).map_or(0, |i| i + name.len() + 1);
            e[at..].to_string()
        };
        let ran = (run && accepted)
            .then(|| run_for_real(f, w).unwrap_or_else(|e| format!("**failed**: {e}")));
        out.push(Kept {
            name,
            accepted,
            why,
            ran,
        });
    }
    out
}

/// Prints the rows and the share accepted.
pub fn report(kept: &[Kept], dir: &str) {
    println!();
    println!("Kept set: fio's test jobs, {} files of {dir}", kept.len());
    println!();
    println!("| file | accepted | why not, or the run |");
    println!("|---|---|---|");
    for k in kept {
        let what = match (&k.ran, k.accepted) {
            (_, false) => k.why.replace('|', "\\|"),
            (Some(r), true) => r.replace('|', "\\|"),
            (None, true) => String::new(),
        };
        println!(
            "| {} | {} | {what} |",
            k.name,
            if k.accepted { "yes" } else { "no" }
        );
    }
    let n = kept.iter().filter(|k| k.accepted).count();
    println!();
    println!(
        "Accepted: {n} of {} ({:.0}%).",
        kept.len(),
        100.0 * n as f64 / kept.len().max(1) as f64
    );
}
