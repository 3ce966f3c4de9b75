//! Monitor overhead benchmark: the CPU the monitors cost, measured on the monitors' own
//! threads (their scheduler-counted CPU time, per second of wall time).
//!
//! 1. The periodic monitors (diskstats, threads, memory) at 1 s and at 100 ms intervals,
//!    watching this host's disks while nothing else of iotrial runs.
//! 2. (root) The block trace at about 10,000 requests/s: a thread issues paced QD1 4 KiB
//!    O_DIRECT reads to a loop device, first untraced, then traced; the trace's cost is its
//!    reader thread's CPU plus what the tracepoints add to the thread issuing the I/O.
//!
//! Results: bench/README.md and README.md.

#[path = "../tests/common/mod.rs"]
mod common;

use common::{missing, Need, TestLoop};
use iotrial::engine::buffer::AlignedBuf;
use iotrial::engine::rng::SplitMix64;
use iotrial::monitor::{self, Settings, Watch};
use iotrial::stack::blockdevs::{DeviceRole, StackDevice, StackDevices};
use iotrial::stack::ledger::Ledger;
use iotrial::timeline::Timeline;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The /proc task directory of this process's thread named `name` (its `comm`), waiting up
/// to a second for a thread just started to have named itself.
fn task_of(name: &str) -> Option<std::path::PathBuf> {
    let find = || {
        std::fs::read_dir("/proc/self/task")
            .ok()?
            .flatten()
            .find_map(|e| {
                let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
                (comm.trim() == name).then(|| e.path())
            })
    };
    for _ in 0..100 {
        if let Some(t) = find() {
            return Some(t);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

/// CPU ns the thread of task directory `task` has used.
fn cpu_ns(task: &Option<std::path::PathBuf>) -> Option<u64> {
    let s = std::fs::read_to_string(task.as_ref()?.join("schedstat")).ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// CPU ns of this process's thread named `name`.
fn thread_cpu_ns(name: &str) -> Option<u64> {
    cpu_ns(&task_of(name))
}

/// The host's whole disks (not partitions, loop or ram devices), as a stack's devices.
fn host_disks() -> StackDevices {
    let mut s = StackDevices::default();
    for e in std::fs::read_dir("/sys/block")
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if ["loop", "ram", "zram"].iter().any(|p| name.starts_with(p)) {
            continue;
        }
        s.add(StackDevice {
            path: format!("/dev/{name}").into(),
            name,
            role: DeviceRole::Data,
            emulated: None,
        });
    }
    s
}

/// Runs `settings` on `devices` for `secs` seconds; returns the monitor threads' CPU in %
/// of one core (periodic thread, trace reader).
fn measure(
    settings: &Settings,
    devices: &StackDevices,
    ledger: &mut Ledger,
    secs: f64,
) -> (f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let timeline = Arc::new(Timeline::start());
    let w = Watch {
        settings,
        devices,
        timeline: &timeline,
        dir: dir.path(),
    };
    let m = monitor::start(&w, ledger);
    timeline.begin("run", "stream");
    let t0 = Instant::now();
    let tasks = match settings.monitors.as_slice() {
        [monitor::Monitor::Trace] => (None, task_of("iotrial-trace")),
        m if m.contains(&monitor::Monitor::Trace) => {
            (task_of("iotrial-monitor"), task_of("iotrial-trace"))
        }
        _ => (task_of("iotrial-monitor"), None),
    };
    let cpu0 = (cpu_ns(&tasks.0), cpu_ns(&tasks.1));
    std::thread::sleep(Duration::from_secs_f64(secs));
    let cpu1 = (cpu_ns(&tasks.0), cpu_ns(&tasks.1));
    let wall = t0.elapsed().as_secs_f64();
    timeline.end();
    let rec = m.stop(ledger);
    for w in rec.warnings {
        println!("  warning: {w}");
    }
    let pct = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) => (b - a) as f64 / 1e9 / wall * 100.0,
        _ => 0.0,
    };
    (pct(cpu0.0, cpu1.0), pct(cpu0.1, cpu1.1))
}

fn periodic() {
    let devices = host_disks();
    let threads = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_dir(e.path().join("task")).ok())
        .map(|d| d.count())
        .sum::<usize>();
    println!(
        "periodic monitors (diskstats, threads, memory) on {} disk(s), {threads} threads on the host:",
        devices.devices.len()
    );
    let mut ledger = Ledger::detached();
    for (interval, secs) in [("1s", 30.0), ("100ms", 10.0)] {
        let s = Settings::parse("diskstats,threads,memory", interval).unwrap();
        let (cpu, _) = measure(&s, &devices, &mut ledger, secs);
        println!("  every {interval:>5}: {cpu:.3}% of one core over {secs} s");
    }
}

/// Issues QD1 random 4 KiB O_DIRECT reads to `dev` at `rate`/s until `stop`; counts them.
fn generator(dev: String, rate: u64, stop: Arc<AtomicBool>, done: Arc<AtomicU64>) {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32)
        .open(&dev)
        .unwrap();
    let mut buf = AlignedBuf::new(4096);
    let mut rng = SplitMix64::new(7);
    let blocks =
        iotrial::stack::build::raw::device_size(std::path::Path::new(&dev)).unwrap() / 4096;
    let batch = rate / 1000;
    let t0 = Instant::now();
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..batch {
            let off = rng.next_u64() % blocks * 4096;
            f.read_exact_at(buf.as_mut_slice(), off).unwrap();
        }
        n += batch;
        done.store(n, Ordering::Relaxed);
        let due = Duration::from_secs_f64(n as f64 / rate as f64);
        if let Some(wait) = due.checked_sub(t0.elapsed()) {
            std::thread::sleep(wait);
        }
    }
}

/// Runs the generator on `dev` for `secs` with `settings` watching; (requests/s, generator
/// CPU %, trace reader CPU %).
fn traced_run(
    dev: &TestLoop,
    settings: &Settings,
    ledger: &mut Ledger,
    secs: f64,
) -> (f64, f64, f64) {
    let devices = StackDevices {
        devices: vec![StackDevice {
            name: dev.name(),
            path: dev.dev.clone(),
            role: DeviceRole::Data,
            emulated: None,
        }],
        fs: None,
    };
    let (stop, done) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let (s2, d2, path) = (stop.clone(), done.clone(), dev.path());
    let g = std::thread::Builder::new()
        .name("generator".into())
        .spawn(move || generator(path, 10_000, s2, d2))
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let (n0, g0, t0) = (
        done.load(Ordering::Relaxed),
        thread_cpu_ns("generator").unwrap(),
        Instant::now(),
    );
    let (_, reader) = measure(settings, &devices, ledger, secs);
    let (n1, g1) = (
        done.load(Ordering::Relaxed),
        thread_cpu_ns("generator").unwrap(),
    );
    let wall = t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    g.join().unwrap();
    let rate = (n1 - n0) as f64 / wall;
    (rate, (g1 - g0) as f64 / 1e9 / wall * 100.0, reader)
}

fn trace() {
    if let Some(why) = [Need::Root, Need::Loop].into_iter().find_map(missing) {
        println!("block trace: skipped ({why})");
        return;
    }
    let ledger_dir = tempfile::tempdir().unwrap();
    std::env::set_var("IOTRIAL_LEDGER_DIR", ledger_dir.path());
    let mut ledger = Ledger::new().unwrap();
    let dev = TestLoop::new(256 << 20);
    let none = Settings::parse("none", "1s").unwrap();
    let traced = Settings::parse("trace", "1s").unwrap();
    println!(
        "block trace, QD1 4 KiB O_DIRECT reads paced at 10,000/s on {}:",
        dev.path()
    );
    for round in 1..=2 {
        let (r0, g0, _) = traced_run(&dev, &none, &mut ledger, 10.0);
        let (r1, g1, reader) = traced_run(&dev, &traced, &mut ledger, 10.0);
        println!(
            "  round {round}: untraced {r0:.0} req/s, issuing thread {g0:.1}% of a core; traced {r1:.0} req/s, issuing thread {g1:.1}%, trace reader {reader:.2}%; trace cost {:.2}% of one core",
            reader + (g1 - g0).max(0.0)
        );
    }
    drop(ledger);
}

fn main() {
    periodic();
    trace();
}
