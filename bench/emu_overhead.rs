//! Emulator overhead benchmark (root only): the cost of serving a device through the FUSE
//! server and a loop device, with a model that adds no delay. Measures, in one run and on the
//! same filesystem, sequential 1 MiB O_DIRECT write and read throughput through FUSE + loop
//! against a loop device on a plain image file, and the added latency of QD1 random 4 KiB
//! O_DIRECT reads. Cross-checks one throughput figure with `dd`. Results: bench/README.md.

#[path = "../tests/common/mod.rs"]
mod common;

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::time::Instant;

use common::{image_dir, missing, Need, TestLoop};
use iotrial::emu::model::{DeviceModel, Request, Response};
use iotrial::emu::EmuServer;
use iotrial::engine::buffer::AlignedBuf;
use iotrial::engine::rng::SplitMix64;
use serde_json::{json, Value as Json};

const MIB: u64 = 1 << 20;
/// Device size, and bytes moved per sequential pass.
const DEVICE: u64 = 1024 * MIB;
const SEQ_BYTES: u64 = 512 * MIB;
const ROUNDS: usize = 5;
const RAND_READS: usize = 20_000;

/// Completes every request the moment it arrives.
struct NullModel(u64);

impl DeviceModel for NullModel {
    fn name(&self) -> &'static str {
        "null"
    }
    fn capacity(&self) -> u64 {
        self.0
    }
    fn service(&mut self, now_ns: u64, _req: Request) -> Response {
        Response {
            done_ns: now_ns,
            errno: 0,
        }
    }
    fn stats(&self) -> Json {
        json!({})
    }
}

fn open_direct(dev: &str) -> File {
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32)
        .open(dev)
        .unwrap_or_else(|e| panic!("open {dev}: {e}"))
}

/// MB/s (10^6 bytes) of one sequential 1 MiB pass.
fn seq_pass(f: &File, buf: &mut AlignedBuf, write: bool) -> f64 {
    let t = Instant::now();
    let mut off = 0;
    while off < SEQ_BYTES {
        if write {
            f.write_all_at(buf.as_slice(), off).expect("write");
        } else {
            f.read_exact_at(buf.as_mut_slice(), off).expect("read");
        }
        off += MIB;
    }
    if write {
        f.sync_all().expect("fsync");
    }
    SEQ_BYTES as f64 / t.elapsed().as_secs_f64() / 1e6
}

/// QD1 random aligned 4 KiB reads on `f`, their latencies in microseconds appended to `lat`.
fn rand_reads(f: &File, rng: &mut SplitMix64, n: usize, lat: &mut Vec<f64>) {
    let mut buf = AlignedBuf::new(4096);
    let blocks = SEQ_BYTES / 4096;
    for _ in 0..n {
        let off = rng.next_u64() % blocks * 4096;
        let t = Instant::now();
        f.read_exact_at(buf.as_mut_slice(), off).expect("read");
        lat.push(t.elapsed().as_nanos() as f64 / 1e3);
    }
}

/// Mean, p50 and p99 of latencies.
fn summary(mut lat: Vec<f64>) -> (f64, f64, f64) {
    let mean = lat.iter().sum::<f64>() / lat.len() as f64;
    lat.sort_by(f64::total_cmp);
    (mean, lat[lat.len() / 2], lat[lat.len() * 99 / 100])
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

struct Figures {
    write: f64,
    read: f64,
    rand: (f64, f64, f64),
}

/// Sequential write then read rounds and random reads on each device, interleaved so both
/// see the same machine state.
fn measure(devs: &[&str]) -> Vec<Figures> {
    let files: Vec<File> = devs.iter().map(|d| open_direct(d)).collect();
    let mut buf = AlignedBuf::new(MIB as usize);
    buf.fill_random(1);
    let mut w = vec![Vec::new(); devs.len()];
    let mut r = vec![Vec::new(); devs.len()];
    let mut lat = vec![Vec::with_capacity(RAND_READS); devs.len()];
    let mut rng = SplitMix64::new(7);
    for _ in 0..ROUNDS {
        for (i, f) in files.iter().enumerate() {
            w[i].push(seq_pass(f, &mut buf, true));
            r[i].push(seq_pass(f, &mut buf, false));
            rand_reads(f, &mut rng, RAND_READS / ROUNDS, &mut lat[i]);
        }
    }
    (0..devs.len())
        .map(|i| Figures {
            write: median(w[i].clone()),
            read: median(r[i].clone()),
            rand: summary(std::mem::take(&mut lat[i])),
        })
        .collect()
}

/// The MB/s figure of a `dd` run (its last stderr line ends "..., X MB/s").
fn dd(args: &[&str]) -> String {
    let out = std::process::Command::new("dd")
        .args(args)
        .output()
        .expect("dd runs");
    let err = String::from_utf8_lossy(&out.stderr);
    let last = err.lines().last().unwrap_or("").to_string();
    last.rsplit(", ").next().unwrap_or("").to_string()
}

fn main() {
    let needs = [
        Need::Root,
        Need::Loop,
        Need::Fuse,
        Need::Tool("losetup"),
        Need::Tool("dd"),
    ];
    if let Some(why) = needs.into_iter().find_map(missing) {
        println!("emu_overhead: skipped: {why}");
        return;
    }
    let dir = tempfile::tempdir_in(image_dir(4 * DEVICE)).expect("temp dir");
    let plain = dir.path().join("plain.img");
    File::create(&plain)
        .and_then(|f| f.set_len(DEVICE))
        .expect("plain image");
    let server = EmuServer::start(
        Box::new(NullModel(DEVICE)),
        &dir.path().join("emu.img"),
        &dir.path().join("fuse"),
        1.0,
    )
    .expect("server starts");
    // Baseline: the server keeps its image in the page cache (buffered pread/pwrite), so
    // the like-for-like baseline is a loop device doing buffered I/O on a plain image; a
    // direct-I/O loop on a plain image is reported beside it.
    let base = TestLoop::attach(&plain, false).expect("losetup plain");
    let emu = TestLoop::attach(&server.device_file(), true).expect("losetup emu");
    assert!(
        emu.direct_io(),
        "the FUSE loop device does not do direct I/O"
    );
    let plain_dio_img = dir.path().join("plain-dio.img");
    File::create(&plain_dio_img)
        .and_then(|f| f.set_len(DEVICE))
        .expect("plain image");
    let base_dio = TestLoop::attach(&plain_dio_img, true).expect("losetup plain dio");

    println!(
        "devices: {} (plain image, buffered loop), {} (plain image, direct-I/O loop), \
         {} (FUSE null model, direct-I/O loop); image dir {}",
        base.path(),
        base_dio.path(),
        emu.path(),
        dir.path().display()
    );
    let load = || std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average before: {}", load().trim());
    let f = measure(&[&base.path(), &base_dio.path(), &emu.path()]);
    println!("load average after:  {}", load().trim());
    let names = [
        "loop on plain file",
        "loop (dio) on plain file",
        "FUSE null + loop (dio)",
    ];
    println!(
        "{:<28} {:>12} {:>12} {:>10} {:>10} {:>10}",
        "device", "write MB/s", "read MB/s", "4k mean us", "4k p50 us", "4k p99 us"
    );
    for (n, x) in names.iter().zip(&f) {
        println!(
            "{:<28} {:>12.0} {:>12.0} {:>10.1} {:>10.1} {:>10.1}",
            n, x.write, x.read, x.rand.0, x.rand.1, x.rand.2
        );
    }
    let (b, d, e) = (&f[0], &f[1], &f[2]);
    println!(
        "throughput ratio FUSE/plain: write {:.2}, read {:.2} (vs direct-I/O plain loop: write {:.2}, read {:.2})",
        e.write / b.write,
        e.read / b.read,
        e.write / d.write,
        e.read / d.read
    );
    println!(
        "per-request overhead at QD1 4 KiB random read (FUSE - direct-I/O plain loop): \
         {:.1} us mean, {:.1} us p50; (FUSE - buffered plain loop): {:.1} us mean, {:.1} us p50",
        e.rand.0 - d.rand.0,
        e.rand.1 - d.rand.1,
        e.rand.0 - b.rand.0,
        e.rand.1 - b.rand.1
    );
    let count = (SEQ_BYTES / MIB).to_string();
    let of = format!("of={}", emu.path());
    let iff = format!("if={}", emu.path());
    let count_arg = format!("count={count}");
    let w = dd(&[
        "if=/dev/zero",
        &of,
        "bs=1M",
        &count_arg,
        "oflag=direct",
        "conv=fsync",
    ]);
    let r = dd(&[&iff, "of=/dev/null", "bs=1M", &count_arg, "iflag=direct"]);
    println!(
        "dd cross-check on the FUSE loop device (1 MiB O_DIRECT, {count} MiB): write {w}, read {r}"
    );
    println!("server stats: {}", server.stats());
    drop(base_dio);
    drop(emu);
    drop(base);
    server.stop().expect("server stops");
}
