//! Samples at scale: a `job` trial of at least 10 million I/Os, every one sampled, then
//! `iotrial analyze` and `iotrial report` on it, each timed with its peak memory (wait4's
//! maximum resident set). The trial runs buffered 512-byte reads from the page cache on a
//! tmpfs directory (`/dev/shm`, else a temporary directory), two jobs, for as long as a short
//! first run says 10 million take. Results: bench/README.md. `SAMPLES_SCALE` (10000000)
//! changes the target.

#[path = "../tests/common/mod.rs"]
mod common;

use common::figures::{results_root, total_ios};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Runs `iotrial args...`; returns stdout, seconds and peak RSS in MiB.
fn timed(args: &[&str]) -> (Vec<u8>, f64, f64) {
    let t = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_iotrial"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("iotrial runs");
    let pid = child.id() as i32;
    // SAFETY: wait4 on our own child fills the status and the zeroed rusage it is handed.
    let mut status = 0;
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let out = child.wait_with_output_keep_rusage(pid, &mut status, &mut ru);
    let secs = t.elapsed().as_secs_f64();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "iotrial {args:?} failed: {}",
        String::from_utf8_lossy(&out.1)
    );
    (out.0, secs, ru.ru_maxrss as f64 / 1024.0)
}

/// Reading a child's output to its end, then reaping it with wait4 for its rusage.
trait KeepRusage {
    fn wait_with_output_keep_rusage(
        self,
        pid: i32,
        status: &mut i32,
        ru: &mut libc::rusage,
    ) -> (Vec<u8>, Vec<u8>);
}

impl KeepRusage for std::process::Child {
    fn wait_with_output_keep_rusage(
        mut self,
        pid: i32,
        status: &mut i32,
        ru: &mut libc::rusage,
    ) -> (Vec<u8>, Vec<u8>) {
        use std::io::Read;
        let mut err_pipe = self.stderr.take().unwrap();
        let err_thread = std::thread::spawn(move || {
            let mut e = Vec::new();
            let _ = err_pipe.read_to_end(&mut e);
            e
        });
        let mut out = Vec::new();
        self.stdout.take().unwrap().read_to_end(&mut out).unwrap();
        let err = err_thread.join().unwrap();
        // SAFETY: pid is our child, not yet reaped; the pointers are valid.
        unsafe { libc::wait4(pid, status, 0, ru) };
        std::mem::forget(self);
        (out, err)
    }
}

fn run_job(dir: &Path, out: &Path, runtime: f64) -> (Value, f64, f64) {
    let target = format!("dir:{}", dir.display());
    let rt = format!("runtime={runtime:.1}s");
    let args = [
        "run",
        "job",
        "--json",
        "--monitor",
        "none",
        "--target",
        &target,
        "--out",
        out.to_str().unwrap(),
        "--set",
        "rw=read",
        "--set",
        "bs=512",
        "--set",
        "size=64m",
        "--set",
        "numjobs=2",
        "--set",
        "time_based=true",
        "--set",
        &rt,
    ];
    let (stdout, secs, rss) = timed(&args);
    (
        serde_json::from_slice(&stdout).expect("result.json"),
        secs,
        rss,
    )
}

fn main() {
    let want: f64 = std::env::var("SAMPLES_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1e7);
    let base = if Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let work = tempfile::tempdir_in(&base).unwrap();
    let out = tempfile::tempdir().unwrap();
    let (probe, _, _) = run_job(work.path(), &out.path().join("probe"), 2.0);
    let iops = probe["verdict"]["iops"].as_f64().unwrap();
    let runtime = (want * 1.1 / iops).max(2.0);
    let (doc, run_s, run_rss) = run_job(work.path(), &out.path().join("big"), runtime);
    let ios = total_ios(&doc);
    let root = results_root(&out.path().join("big"));
    let dir = root.join("trials/dir/job/r1");
    let csv = dir.join("samples.csv");
    let csv_mb = std::fs::metadata(&csv).unwrap().len() as f64 / 1e6;
    let (_, an_s, an_rss) = timed(&["analyze", "job", csv.to_str().unwrap(), "--json"]);
    let (_, rep_s, rep_rss) = timed(&["report", root.to_str().unwrap()]);
    println!(
        "{ios:.0} samples ({:.0} IOPS over {runtime:.1} s), samples.csv {csv_mb:.0} MB",
        ios / runtime
    );
    println!("| step | seconds | peak RSS MiB |");
    println!("|---|---|---|");
    println!("| `iotrial run job` (the run, spilling, writing samples.csv) | {run_s:.1} | {run_rss:.0} |");
    println!("| `iotrial analyze job samples.csv` | {an_s:.1} | {an_rss:.0} |");
    println!("| `iotrial report RESULTS_DIR` | {rep_s:.1} | {rep_rss:.0} |");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average after: {}", load.trim());
}
