//! The engine's buffered streaming against `dd` (root only): in one run, on the same kind of
//! stack (xfs on a loop device with direct I/O over a plain sparse image, on tmpfs when it has
//! room), eight writers each writing the same amount through the page cache and then syncing,
//! both under the same cap on the loop device's dirty page cache (256 MiB, the `stream`
//! default), so the writers stream at the rate the device takes rather than into memory.
//! Engine: `iotrial run stream` with 8 writers of 1 MiB I/Os and `bytes` per writer, its
//! `total_mb_s` (all bytes over the streaming and the final syncfs). dd: eight `dd
//! if=/dev/zero bs=1M count=N conv=fsync` started together into eight files of a fresh
//! filesystem whose loop device has the same cap, all bytes over the time from their start to
//! the last one's exit. Rounds alternate; medians, the median of each round's ratio, and the
//! ratio of the medians are printed. Results: bench/README.md.

#[path = "../tests/common/mod.rs"]
mod common;

use common::{image_dir, missing, run, which, Mounted, Need, TestLoop};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const MIB: u64 = 1 << 20;
const WRITERS: usize = 8;
/// MiB each writer writes.
const PER_WRITER_MIB: u64 = 256;
const IMAGE: u64 = 4096 * MIB;
const ROUNDS: usize = 15;
/// The cap on dirty page cache both get (bytes).
const DIRTY: u64 = 256 * MIB;

/// Caps the dirty page cache of loop device `lo` at [`DIRTY`], as the engine's stack does;
/// returns what to write back afterwards.
fn cap_dirty(lo: &TestLoop) -> Vec<(PathBuf, String)> {
    let dev = std::fs::read_to_string(format!("/sys/block/{}/dev", lo.name())).unwrap();
    let bdi = PathBuf::from(format!("/sys/class/bdi/{}", dev.trim()));
    let keep: Vec<(PathBuf, String)> = ["strict_limit", "max_ratio_fine"]
        .iter()
        .map(|a| {
            let p = bdi.join(a);
            let v = std::fs::read_to_string(&p).unwrap().trim().to_string();
            (p, v)
        })
        .collect();
    std::fs::write(bdi.join("strict_limit"), "1").unwrap();
    std::fs::write(bdi.join("max_bytes"), DIRTY.to_string()).unwrap();
    keep
}

/// One engine round: `total_mb_s` of `iotrial run stream` on an image in `dir`.
fn engine(dir: &Path) -> f64 {
    let image = dir.join("engine.img");
    let out = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_iotrial"))
        .env("TMPDIR", dir)
        .args(["run", "stream", "--json", "--fs", "xfs", "--target"])
        .arg(format!("image:{},size={}MiB", image.display(), IMAGE / MIB))
        .arg("--out")
        .arg(out.path())
        .args([
            "--set",
            &format!("writers={WRITERS}"),
            "--set",
            "io_size=1MiB",
        ])
        .args(["--set", &format!("bytes={PER_WRITER_MIB}MiB")])
        .args(["--set", "interval=100ms", "--set", "settle_window=1s"])
        .args(["--set", &format!("dirty_limit={DIRTY}")])
        .output()
        .expect("iotrial runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let _ = std::fs::remove_file(&image);
    doc["verdict"]["total_mb_s"].as_f64().expect("total_mb_s")
}

/// One dd round: eight dd into a fresh xfs on a loop device over an image in `dir`.
fn dd(dir: &Path) -> f64 {
    let image = dir.join("dd.img");
    std::fs::File::create(&image)
        .and_then(|f| f.set_len(IMAGE))
        .unwrap();
    let lo = TestLoop::attach(&image, true).expect("losetup");
    let restore = cap_dirty(&lo);
    run("mkfs.xfs", &["-f", "-q", &lo.path()]).expect("mkfs.xfs");
    let mp = dir.join("mnt");
    let mounted = Mounted::mount(&lo.path(), &mp, "xfs").expect("mount");
    let dd = which("dd").unwrap();
    let t = Instant::now();
    let children: Vec<_> = (0..WRITERS)
        .map(|i| {
            Command::new(&dd)
                .arg("if=/dev/zero")
                .arg(format!("of={}", mp.join(format!("f{i}")).display()))
                .args(["bs=1M", &format!("count={PER_WRITER_MIB}"), "conv=fsync"])
                .stderr(Stdio::null())
                .spawn()
                .expect("dd starts")
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let secs = t.elapsed().as_secs_f64();
    mounted.unmount().expect("unmount");
    for (p, v) in restore {
        std::fs::write(p, v).unwrap();
    }
    drop(lo);
    let _ = std::fs::remove_file(&image);
    (WRITERS as u64 * PER_WRITER_MIB * MIB) as f64 / 1e6 / secs
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let needs = [
        Need::Root,
        Need::Loop,
        Need::Tool("losetup"),
        Need::Tool("mkfs.xfs"),
        Need::Tool("dd"),
    ];
    if let Some(why) = needs.into_iter().find_map(missing) {
        println!("stream_dd: skipped: {why}");
        return;
    }
    let dir: PathBuf = tempfile::tempdir_in(image_dir(2 * IMAGE)).unwrap().keep();
    let (mut e, mut d, mut r) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=ROUNDS {
        e.push(engine(&dir));
        d.push(dd(&dir));
        r.push(e[round - 1] / d[round - 1]);
        println!(
            "round {round}: engine {:.0} MB/s, dd {:.0} MB/s",
            e[round - 1],
            d[round - 1]
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    let (em, dm, rm) = (median(e), median(d), median(r));
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "{WRITERS} writers x {PER_WRITER_MIB} MiB, dirty cache capped at {} MiB, xfs on a loop image in {}: median engine {em:.0} MB/s, dd {dm:.0} MB/s; ratio of the medians {:.3}, median of the rounds' ratios {rm:.3} (load {})",
        DIRTY / MIB,
        image_dir(2 * IMAGE),
        em / dm,
        load.trim()
    );
}
