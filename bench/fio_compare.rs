//! iotrial's `job` against fio, side by side on one zram device the bench creates and releases
//! (root; prints why it skips otherwise). The device is filled with 1 MiB writes first, so
//! reads decompress real data. Six cases, each run by fio and by `iotrial run job` with the
//! same options (O_DIRECT), alternating which goes first, over several rounds: 4 KiB random
//! reads at QD1 with psync, 1 and 2 jobs; 4 KiB random reads at QD32 with io_uring
//! (registered buffers and file for both) and with libaio (the kernel's native AIO for both);
//! 1 MiB sequential writes; all time-based; and the
//! two 4 KiB random-read cases of one job again as fio's default runs a job with a size and no
//! `time_based`: one pass over 1 GiB; and two buffered one-pass cases (fio's default
//! `direct=0`: 4 KiB random reads over 256 MiB, 128 KiB sequential reads over 1 GiB), each tool
//! run twice in a row over the same region, so the second run follows one that read it
//! through the page cache (both drop its cached pages first: fio's `invalidate=1`). iotrial
//! samples every I/O (spilled, then written to
//! samples.csv). Prints IOPS and MB/s of each (median of the rounds), the ratio iotrial / fio,
//! the median latency of each (fio's clat p50, iotrial's p50), then iotrial's one-pass p50 over
//! its time-based p50 for both engines, and CPU time per I/O: the processes' own (getrusage of
//! the child, which for iotrial includes building the stack and writing samples.csv) and the
//! workers' during the run (fio's usr+sys per job; the CPU time of iotrial's stream threads in
//! its `run` phase, result.json's `phases[].cpu_s`). Results: bench/README.md.
//!
//! fio runs its jobs as threads (`--thread`), as iotrial runs its streams: forked, each fio job
//! calls setsid, and with the kernel's autogroup scheduling every session gets an equal share
//! of a busy CPU, so on a loaded machine two forked jobs get two shares and two threads one.
//!
//! `FIO_COMPARE_ROUNDS` (3) and `FIO_COMPARE_RUNTIME` (5, seconds) change the defaults;
//! `FIO_COMPARE_CASES` runs only the cases whose names contain one of its comma-separated words.

#[path = "../tests/common/mod.rs"]
mod common;

use common::figures::{median, total_ios};
use common::{missing, which, Need};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// zram's size: two 512 MiB regions, or one pass over 1 GiB, at 1 MiB, and room to spare.
const DISK: &str = "1536M";

/// One case: its name, fio's options, iotrial's parameters (the same, in iotrial's words),
/// whether it makes one pass over its size (else it runs for the bench's runtime), and whether
/// it reads through the page cache (fio's default `direct=0`; then each tool runs twice in a
/// row, and each run is compared with the other tool's run of the same rank).
struct Case {
    name: &'static str,
    fio: &'static [&'static str],
    iotrial: &'static [&'static str],
    one_pass: bool,
    buffered: bool,
}

const CASES: &[Case] = &[
    Case {
        name: "4k randread QD1 psync, 1 job",
        fio: &["--rw=randread", "--bs=4k", "--ioengine=psync", "--size=1g"],
        iotrial: &["rw=randread", "bs=4k", "ioengine=psync", "size=1g"],
        one_pass: false,
        buffered: false,
    },
    Case {
        name: "4k randread QD1 psync, 2 jobs",
        fio: &[
            "--rw=randread",
            "--bs=4k",
            "--ioengine=psync",
            "--size=512m",
            "--numjobs=2",
            "--offset_increment=512m",
        ],
        iotrial: &[
            "rw=randread",
            "bs=4k",
            "ioengine=psync",
            "size=512m",
            "numjobs=2",
        ],
        one_pass: false,
        buffered: false,
    },
    Case {
        name: "4k randread QD32 io_uring",
        fio: &[
            "--rw=randread",
            "--bs=4k",
            "--ioengine=io_uring",
            "--iodepth=32",
            "--fixedbufs",
            "--registerfiles",
            "--size=1g",
        ],
        iotrial: &[
            "rw=randread",
            "bs=4k",
            "ioengine=io_uring",
            "iodepth=32",
            "size=1g",
        ],
        one_pass: false,
        buffered: false,
    },
    Case {
        name: "4k randread QD32 libaio",
        fio: &[
            "--rw=randread",
            "--bs=4k",
            "--ioengine=libaio",
            "--iodepth=32",
            "--size=1g",
        ],
        iotrial: &[
            "rw=randread",
            "bs=4k",
            "ioengine=libaio",
            "iodepth=32",
            "size=1g",
        ],
        one_pass: false,
        buffered: false,
    },
    Case {
        name: "1M seq write QD1 psync",
        // iotrial writes the same random buffer every time: fio too, without its default
        // scrambling of the buffer before each write (which costs it 0.8 ms of CPU per MiB).
        fio: &[
            "--rw=write",
            "--bs=1m",
            "--ioengine=psync",
            "--size=1g",
            "--scramble_buffers=0",
        ],
        iotrial: &["rw=write", "bs=1m", "ioengine=psync", "size=1g"],
        one_pass: false,
        buffered: false,
    },
    Case {
        name: "4k randread QD1 psync, one pass over 1 GiB",
        fio: &["--rw=randread", "--bs=4k", "--ioengine=psync", "--size=1g"],
        iotrial: &["rw=randread", "bs=4k", "ioengine=psync", "size=1g"],
        one_pass: true,
        buffered: false,
    },
    Case {
        name: "4k randread QD32 io_uring, one pass over 1 GiB",
        fio: &[
            "--rw=randread",
            "--bs=4k",
            "--ioengine=io_uring",
            "--iodepth=32",
            "--fixedbufs",
            "--registerfiles",
            "--size=1g",
        ],
        iotrial: &[
            "rw=randread",
            "bs=4k",
            "ioengine=io_uring",
            "iodepth=32",
            "size=1g",
        ],
        one_pass: true,
        buffered: false,
    },
    Case {
        name: "4k randread QD1 psync, buffered, one pass over 256 MiB",
        fio: &[
            "--rw=randread",
            "--bs=4k",
            "--ioengine=psync",
            "--size=256m",
        ],
        iotrial: &["rw=randread", "bs=4k", "ioengine=psync", "size=256m"],
        one_pass: true,
        buffered: true,
    },
    Case {
        name: "128k read QD1 psync, buffered, one pass over 1 GiB",
        fio: &["--rw=read", "--bs=128k", "--ioengine=psync", "--size=1g"],
        iotrial: &["rw=read", "bs=128k", "ioengine=psync", "size=1g"],
        one_pass: true,
        buffered: true,
    },
];

/// The time-based case each one-pass case is compared with (same engine, queue depth and
/// 1 GiB region: at QD32 the median latency is the queue depth over the IOPS, and zram serves
/// a 512 MiB region about a sixth faster than a 1 GiB one).
const PAIRS: &[(&str, &str)] = &[
    (
        "4k randread QD1 psync, one pass over 1 GiB",
        "4k randread QD1 psync, 1 job",
    ),
    (
        "4k randread QD32 io_uring, one pass over 1 GiB",
        "4k randread QD32 io_uring",
    ),
];

/// A zram device of its own, reset and removed on drop.
struct Zram(u32);

impl Zram {
    fn create() -> std::io::Result<Zram> {
        let n: u32 = std::fs::read_to_string("/sys/class/zram-control/hot_add")?
            .trim()
            .parse()
            .map_err(std::io::Error::other)?;
        let z = Zram(n);
        std::fs::write(z.sys("disksize"), DISK)?;
        Ok(z)
    }

    fn sys(&self, f: &str) -> PathBuf {
        PathBuf::from(format!("/sys/block/zram{}/{f}", self.0))
    }

    fn dev(&self) -> String {
        format!("/dev/zram{}", self.0)
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        let _ = std::fs::write(self.sys("reset"), "1");
        let _ = std::fs::write("/sys/class/zram-control/hot_remove", self.0.to_string());
    }
}

/// CPU seconds (user + system) of this process's waited-for children so far.
fn children_cpu_s() -> f64 {
    // SAFETY: getrusage fills the zeroed struct it is handed.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// What one run measured.
#[derive(Debug, Clone, Copy)]
struct Run {
    iops: f64,
    mb_s: f64,
    /// CPU of the whole process per I/O, µs.
    proc_us: f64,
    /// CPU of the workers during the run per I/O, µs.
    work_us: f64,
    ios: f64,
    /// Median latency, µs: fio's clat p50 (of its first job), iotrial's p50.
    p50_us: f64,
}

fn fio(fio: &Path, dev: &str, c: &Case, runtime: u32) -> Run {
    let before = children_cpu_s();
    let mut cmd = Command::new(fio);
    cmd.args(["--name=job", "--thread", "--offset=1m"]);
    cmd.arg(format!("--direct={}", u8::from(!c.buffered)));
    if !c.one_pass {
        cmd.arg("--time_based").arg(format!("--runtime={runtime}"));
    }
    let out = cmd
        .arg(format!("--filename={dev}"))
        .args(c.fio)
        .arg("--output-format=json")
        .output()
        .expect("fio runs");
    let cpu = children_cpu_s() - before;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("fio's json");
    let (mut iops, mut bw, mut ios, mut work) = (0.0, 0.0, 0.0, 0.0);
    let first = &doc["jobs"][0];
    let dir = if c.fio.contains(&"--rw=write") {
        "write"
    } else {
        "read"
    };
    let p50_us = first[dir]["clat_ns"]["percentile"]["50.000000"]
        .as_f64()
        .unwrap_or(0.0)
        / 1e3;
    for j in doc["jobs"].as_array().unwrap() {
        for dir in ["read", "write"] {
            let d = &j[dir];
            iops += d["iops"].as_f64().unwrap_or(0.0);
            bw += d["bw_bytes"].as_f64().unwrap_or(0.0);
            ios += d["total_ios"].as_f64().unwrap_or(0.0);
        }
        let pct = j["usr_cpu"].as_f64().unwrap() + j["sys_cpu"].as_f64().unwrap();
        work += pct / 100.0 * j["job_runtime"].as_f64().unwrap() / 1e3;
    }
    Run {
        iops,
        mb_s: bw / 1e6,
        proc_us: cpu / ios * 1e6,
        work_us: work / ios * 1e6,
        ios,
        p50_us,
    }
}

fn iotrial(dev: &str, c: &Case, runtime: u32, out: &Path) -> Run {
    let before = children_cpu_s();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_iotrial"));
    cmd.args(["run", "job", "--json", "--monitor", "none", "--target"])
        .arg(format!("block:{dev}"))
        .arg("--out")
        .arg(out);
    let direct = if c.buffered {
        "direct=false"
    } else {
        "direct=true"
    };
    for s in c.iotrial.iter().copied().chain([direct]) {
        cmd.args(["--set", s]);
    }
    if !c.one_pass {
        cmd.args(["--set", "time_based=true"]);
        cmd.args(["--set", &format!("runtime={runtime}s")]);
    }
    let o = cmd.output().expect("iotrial runs");
    let cpu = children_cpu_s() - before;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("result.json");
    let v = &doc["verdict"];
    let ios = total_ios(&doc);
    let work = doc["phases"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["name"] == "run"))
        .and_then(|p| p["cpu_s"].as_f64())
        .expect("the run phase's CPU time");
    Run {
        iops: v["iops"].as_f64().unwrap(),
        mb_s: v["mb_s"].as_f64().unwrap(),
        proc_us: cpu / ios * 1e6,
        work_us: work / ios * 1e6,
        ios,
        p50_us: v["lat_p50_us"].as_f64().unwrap(),
    }
}

fn env_u32(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let needs = [Need::Root, Need::Tool("fio")];
    if let Some(why) = needs.into_iter().find_map(missing) {
        println!("fio_compare: skipped: {why}");
        return;
    }
    if !Path::new("/sys/class/zram-control/hot_add").exists() {
        println!("fio_compare: skipped: no zram (modprobe zram)");
        return;
    }
    let (rounds, runtime) = (
        env_u32("FIO_COMPARE_ROUNDS", 3),
        env_u32("FIO_COMPARE_RUNTIME", 5),
    );
    let fio_bin = which("fio").unwrap();
    let zram = Zram::create().expect("a zram device");
    let dev = zram.dev();
    let fill = Command::new(&fio_bin)
        .args([
            "--name=fill",
            "--rw=write",
            "--bs=1m",
            "--direct=1",
            "--size=1536m",
        ])
        .arg(format!("--filename={dev}"))
        .output()
        .expect("fio fills the device");
    assert!(fill.status.success());
    let tmp = tempfile::tempdir().unwrap();
    let version = Command::new(&fio_bin).arg("--version").output().unwrap();
    println!(
        "{dev} ({DISK} zram), {}, {rounds} rounds of {runtime} s per case and tool, O_DIRECT",
        String::from_utf8_lossy(&version.stdout).trim()
    );
    println!("| case | fio IOPS | iotrial IOPS | ratio | fio MB/s | iotrial MB/s | p50 µs fio / iotrial | CPU µs/I/O fio / iotrial (process) | CPU µs/I/O fio / iotrial (workers, run) |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut p50 = std::collections::BTreeMap::new();
    let only: Vec<String> = std::env::var("FIO_COMPARE_CASES")
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let chosen = CASES
        .iter()
        .filter(|c| only.is_empty() || only.iter().any(|w| c.name.contains(w.as_str())));
    let mut twice: Vec<String> = Vec::new();
    for c in chosen {
        // A buffered case runs each tool twice in a row: the second run follows one that
        // read the same region through the page cache.
        let runs = if c.buffered { 2 } else { 1 };
        let (mut f, mut i) = (vec![Vec::new(); runs], vec![Vec::new(); runs]);
        for r in 0..rounds {
            let out = tmp.path().join(format!("r{r}"));
            let fio_runs = |f: &mut Vec<Vec<Run>>| {
                for run in f.iter_mut() {
                    run.push(fio(&fio_bin, &dev, c, runtime));
                }
            };
            let iotrial_runs = |i: &mut Vec<Vec<Run>>| {
                for run in i.iter_mut() {
                    run.push(iotrial(&dev, c, runtime, &out));
                    let _ = std::fs::remove_dir_all(&out);
                }
            };
            if r % 2 == 0 {
                fio_runs(&mut f);
                iotrial_runs(&mut i);
            } else {
                iotrial_runs(&mut i);
                fio_runs(&mut f);
            }
        }
        let m = |v: &[Run], g: fn(&Run) -> f64| median(v.iter().map(g).collect());
        if c.buffered {
            for k in 0..runs {
                let per: Vec<String> = f[k]
                    .iter()
                    .zip(&i[k])
                    .map(|(a, b)| format!("{:.3}", b.iops / a.iops))
                    .collect();
                twice.push(format!(
                    "| {} | {} | {:.0} | {:.0} | **{:.3}** | {} |",
                    c.name,
                    ["first", "second"][k],
                    m(&f[k], |r| r.iops),
                    m(&i[k], |r| r.iops),
                    m(&i[k], |r| r.iops) / m(&f[k], |r| r.iops),
                    per.join(", ")
                ));
            }
        }
        let (f, i) = (&f[0], &i[0]);
        let per_round: Vec<String> = f
            .iter()
            .zip(i)
            .map(|(a, b)| format!("{:.3}", b.iops / a.iops))
            .collect();
        p50.insert(c.name, m(i, |r| r.p50_us));
        println!(
            "| {} | {:.0} | {:.0} | **{:.3}** | {:.0} | {:.0} | {:.2} / {:.2} | {:.2} / {:.2} | {:.2} / {:.2} |",
            c.name,
            m(f, |r| r.iops),
            m(i, |r| r.iops),
            m(i, |r| r.iops) / m(f, |r| r.iops),
            m(f, |r| r.mb_s),
            m(i, |r| r.mb_s),
            m(f, |r| r.p50_us),
            m(i, |r| r.p50_us),
            m(f, |r| r.proc_us),
            m(i, |r| r.proc_us),
            m(f, |r| r.work_us),
            m(i, |r| r.work_us),
        );
        eprintln!(
            "  {}: per-round ratios {}; I/Os per run fio {:.0}, iotrial {:.0}",
            c.name,
            per_round.join(", "),
            m(f, |r| r.ios),
            m(i, |r| r.ios)
        );
    }
    if !twice.is_empty() {
        println!();
        println!("| buffered case | run of the two in a row | fio IOPS | iotrial IOPS | ratio | per round |");
        println!("|---|---|---|---|---|---|");
        for row in &twice {
            println!("{row}");
        }
    }
    println!();
    println!("| iotrial p50, one pass over time-based | one pass µs | time-based µs | ratio |");
    println!("|---|---|---|---|");
    for (one, timed) in PAIRS {
        let (Some(a), Some(b)) = (p50.get(one), p50.get(timed)) else {
            continue;
        };
        println!("| {one} | {a:.2} | {b:.2} | **{:.3}** |", a / b);
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average after: {}", load.trim());
    drop(zram);
}
