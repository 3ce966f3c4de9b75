//! fio's own example job files, side by side with fio per job group: six files of fio's
//! `examples/` (a checkout's, named by `FIO_EXAMPLES`; not part of iotrial), each shortened the
//! same way for both tools (the runtime and sizes of [`EXAMPLES`] appended to every job
//! section, so they win over the file's own, and the file's `directory=` dropped), run by fio
//! and by `iotrial run fio:FILE` in fresh directories of one filesystem, alternating which goes
//! first. Each reporting group's IOPS and MB/s are compared as medians over the rounds: fio's
//! as its "Run status group" line gives them (the I/Os and bytes of the group's jobs over the
//! longest job's runtime, per direction; a sum of the jobs' own rates would count a job that
//! ended early at its own faster rate), iotrial's `verdict.run_groups` (the group's I/Os over
//! the time from its first issue to its last completion). `FIO_FILES_ONLY` (file
//! names, comma-separated) runs only those.

use crate::common::figures::median;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The files and what both tools run of them instead of their own sizes and runtimes.
const EXAMPLES: &[(&str, &[&str])] = &[
    ("fio-rand-read.fio", &["runtime=5", "size=1g"]),
    ("fio-seq-write.fio", &["runtime=5", "size=1g"]),
    ("fio-rand-RW.fio", &["runtime=5", "size=1g"]),
    ("ssd-test.fio", &["runtime=5", "size=1g"]),
    // 16 files, one per clone of its four jobs: 2 GiB.
    ("tiobench-example.fio", &["runtime=5", "size=128m"]),
    ("iometer-file-access-server.fio", &["runtime=5", "size=1g"]),
];

/// One reporting group's figures.
#[derive(Clone, Copy)]
pub struct Group {
    pub iops: f64,
    pub mb_s: f64,
}

/// One direction of a reporting group in fio's json: I/Os, bytes and the longest job's
/// runtime (ms).
type Direction = (f64, f64, f64);

/// `text` with `sets` at the end of every job section and without `directory=` lines.
fn shorten(text: &str, sets: &[&str]) -> String {
    let mut out = String::new();
    let mut in_job = false;
    let close = |out: &mut String, in_job: bool| {
        if in_job {
            for s in sets {
                out.push_str(s);
                out.push('\n');
            }
        }
    };
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            close(&mut out, in_job);
            in_job = !t.starts_with("[global");
        }
        if t.starts_with("directory") && t[9..].trim_start().starts_with('=') {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    close(&mut out, in_job);
    out
}

/// fio's figures of `file` run in `dir`, per reporting group.
pub fn fio(file: &Path, dir: &Path) -> Vec<Group> {
    let out = Command::new("fio")
        .arg("--output-format=json")
        .arg(format!("--directory={}", dir.display()))
        .arg(file)
        .output()
        .expect("fio runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("fio's json");
    let mut groups: Vec<(u64, [Direction; 3])> = Vec::new();
    for j in doc["jobs"].as_array().unwrap() {
        let id = j["groupid"].as_u64().unwrap_or(0);
        let at = match groups.iter().position(|g| g.0 == id) {
            Some(i) => i,
            None => {
                groups.push((id, [(0.0, 0.0, 0.0); 3]));
                groups.len() - 1
            }
        };
        for (k, d) in ["read", "write", "trim"].iter().enumerate() {
            let g = &mut groups[at].1[k];
            g.0 += j[d]["total_ios"].as_f64().unwrap_or(0.0);
            g.1 += j[d]["io_bytes"].as_f64().unwrap_or(0.0);
            g.2 = g.2.max(j[d]["runtime"].as_f64().unwrap_or(0.0));
        }
    }
    // fio's "Run status group" line: each direction's bytes over its longest job's runtime.
    let per_s = |n: f64, ms: f64| if ms > 0.0 { n * 1e3 / ms } else { 0.0 };
    groups
        .into_iter()
        .map(|(_, d)| Group {
            iops: d.iter().map(|x| per_s(x.0, x.2)).sum(),
            mb_s: d.iter().map(|x| per_s(x.1, x.2)).sum::<f64>() / 1e6,
        })
        .collect()
}

/// iotrial's figures of `file` run on `dir:DIR`, per reporting group, and each group's jobs.
pub fn iotrial(file: &Path, dir: &Path, out: &Path) -> (Vec<Group>, Vec<String>) {
    let o = Command::new(env!("CARGO_BIN_EXE_iotrial"))
        .args(["run", &format!("fio:{}", file.display())])
        .args(["--json", "--monitor", "none", "--target"])
        .arg(format!("dir:{}", dir.display()))
        .arg("--out")
        .arg(out)
        .output()
        .expect("iotrial runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("result.json");
    let groups = doc["verdict"]["run_groups"].as_array().unwrap();
    let names = groups
        .iter()
        .map(|g| {
            let jobs: Vec<&str> = g["jobs"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|j| j.as_str())
                .collect();
            jobs.join(", ")
        })
        .collect();
    let figures = groups
        .iter()
        .map(|g| Group {
            iops: g["iops"].as_f64().unwrap(),
            mb_s: g["mb_s"].as_f64().unwrap(),
        })
        .collect();
    (figures, names)
}

/// Runs the files `rounds` times with each tool in fresh directories under `mnt` and prints
/// one row per reporting group.
pub fn compare(examples: &Path, mnt: &Path, work: &Path, rounds: usize) {
    println!();
    println!("fio's examples, per reporting group, {rounds} rounds per file and tool:");
    println!("| job file | group (jobs) | fio IOPS | iotrial IOPS | IOPS ratio | fio MB/s | iotrial MB/s | MB/s ratio | IOPS ratio per round |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let only: Vec<String> = std::env::var("FIO_FILES_ONLY")
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let chosen = EXAMPLES
        .iter()
        .filter(|e| only.is_empty() || only.iter().any(|o| o == e.0));
    for (name, sets) in chosen {
        let text = std::fs::read_to_string(examples.join(name)).expect("fio's example");
        let file = work.join(name);
        std::fs::write(&file, shorten(&text, sets)).unwrap();
        let (mut f, mut i, mut names) = (Vec::new(), Vec::new(), Vec::new());
        for r in 0..rounds {
            // Each tool's files go before the other's run: both have the whole filesystem.
            let (fd, id, out) = (mnt.join("fio"), mnt.join("iotrial"), work.join("out"));
            let theirs = || {
                std::fs::create_dir_all(&fd).unwrap();
                let g = fio(&file, &fd);
                let _ = std::fs::remove_dir_all(&fd);
                g
            };
            let mut ours = || {
                std::fs::create_dir_all(&id).unwrap();
                let (g, n) = iotrial(&file, &id, &out);
                names = n;
                let _ = std::fs::remove_dir_all(&id);
                let _ = std::fs::remove_dir_all(&out);
                g
            };
            if r % 2 == 0 {
                f.push(theirs());
                i.push(ours());
            } else {
                i.push(ours());
                f.push(theirs());
            }
        }
        let n = f[0].len();
        if i.iter().chain(&f).any(|g| g.len() != n) {
            println!("| {name} | **the tools report different numbers of groups** | | | | | | | |");
            continue;
        }
        for g in 0..n {
            let m = |v: &[Vec<Group>], k: fn(&Group) -> f64| {
                median(v.iter().map(|x| k(&x[g])).collect())
            };
            let (fi, ii) = (m(&f, |x| x.iops), m(&i, |x| x.iops));
            let (fm, im) = (m(&f, |x| x.mb_s), m(&i, |x| x.mb_s));
            let per: Vec<String> = f
                .iter()
                .zip(&i)
                .map(|(a, b)| format!("{:.3}", b[g].iops / a[g].iops))
                .collect();
            println!(
                "| {name} | {g} ({}) | {fi:.0} | {ii:.0} | **{:.3}** | {fm:.1} | {im:.1} | **{:.3}** | {} |",
                names.get(g).map_or("", String::as_str),
                ii / fi,
                im / fm,
                per.join(", ")
            );
        }
    }
}
