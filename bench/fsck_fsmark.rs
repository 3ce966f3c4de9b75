//! The fsck workload's fill against `fs_mark` (root only): in one run, on the same kind of
//! stack (ext4 on a loop device over a plain sparse image, on tmpfs when it has room), 20000
//! files of 4 KiB in 20 directories by one thread, each fsynced before its close (fs_mark's
//! default `-S 1`, the workload's `sync = fsync`). iotrial: `iotrial run fsck` on
//! `image:PATH,size=2GiB` with `--fs ext4`, its `fill_files_per_s`. fs_mark: `fs_mark -d DIR
//! -D 20 -n 20000 -s 4096 -t 1 -S 1 -L 1` on a fresh ext4 on a loop device over an image of
//! the same size in the same directory, its Files/sec. Rounds alternate; each round's ratio,
//! their median and the medians' ratio are printed. Results: bench/README.md.

#[path = "../tests/common/mod.rs"]
mod common;

use common::{image_dir, missing, run, run_in, Mounted, Need, TestLoop};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const MIB: u64 = 1 << 20;
const IMAGE: u64 = 2048 * MIB;
const FILES: u64 = 20000;
const DIRS: u64 = 20;
const SIZE: u64 = 4096;
const ROUNDS: usize = 5;

/// One iotrial round: the fill rate of `iotrial run fsck` on an image in `dir`.
fn iotrial(dir: &Path) -> f64 {
    let image = dir.join("iotrial.img");
    let out = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_iotrial"))
        .env("TMPDIR", dir)
        .args([
            "run",
            "fsck",
            "--json",
            "--fs",
            "ext4",
            "--monitor",
            "none",
            "--target",
        ])
        .arg(format!("image:{},size={}MiB", image.display(), IMAGE / MIB))
        .arg("--out")
        .arg(out.path())
        .args([
            "--set",
            &format!("files={FILES}"),
            "--set",
            &format!("dirs={DIRS}"),
        ])
        .args(["--set", &format!("file_size={SIZE}"), "--set", "sync=fsync"])
        .output()
        .expect("iotrial runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let _ = std::fs::remove_file(&image);
    doc["verdict"]["fill_files_per_s"]
        .as_f64()
        .expect("fill_files_per_s")
}

/// fs_mark's Files/sec: the fourth column of its result row.
fn files_per_sec(out: &str) -> Option<f64> {
    let mut lines = out.lines().skip_while(|l| !l.contains("Files/sec"));
    lines.next()?;
    lines.find_map(|l| l.split_whitespace().nth(3)?.parse().ok())
}

/// One fs_mark round: a fresh ext4 on a loop device over an image in `dir`.
fn fs_mark(dir: &Path) -> f64 {
    let image = dir.join("fsmark.img");
    std::fs::File::create(&image)
        .and_then(|f| f.set_len(IMAGE))
        .unwrap();
    let lo = TestLoop::attach(&image, true).expect("losetup");
    run("mkfs.ext4", &["-F", "-q", &lo.path()]).expect("mkfs.ext4");
    let mp = dir.join("mnt");
    let mounted = Mounted::mount(&lo.path(), &mp, "ext4").expect("mount");
    let work = mp.join("fsmark");
    std::fs::create_dir(&work).unwrap();
    let (n, d, s) = (FILES.to_string(), DIRS.to_string(), SIZE.to_string());
    let w = work.display().to_string();
    let args = [
        "-d", &w, "-D", &d, "-n", &n, "-s", &s, "-t", "1", "-S", "1", "-L", "1",
    ];
    // fs_mark writes its log (fs_log.txt) into its working directory: the round's own.
    let out = run_in(dir, "fs_mark", &args).expect("fs_mark");
    mounted.unmount().expect("unmount");
    drop(lo);
    let _ = std::fs::remove_file(&image);
    files_per_sec(&out).unwrap_or_else(|| panic!("no Files/sec in fs_mark's output:\n{out}"))
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
        Need::Tool("mkfs.ext4"),
        Need::Tool("fs_mark"),
    ];
    if let Some(why) = needs.into_iter().find_map(missing) {
        println!("skipped: {why}");
        return;
    }
    let base = tempfile::tempdir_in(image_dir(2 * IMAGE)).unwrap();
    println!(
        "{FILES} files of {SIZE} bytes in {DIRS} directories, one thread, fsync before close; ext4 on a loop device over an image in {}",
        image_dir(2 * IMAGE)
    );
    let (mut ours, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 1..=ROUNDS {
        let (a, b) = if round % 2 == 1 {
            let a = iotrial(base.path());
            (a, fs_mark(base.path()))
        } else {
            let b = fs_mark(base.path());
            (iotrial(base.path()), b)
        };
        println!(
            "round {round}: iotrial {a:.1} files/s, fs_mark {b:.1} files/s, ratio {:.3}",
            a / b
        );
        ours.push(a);
        theirs.push(b);
        ratios.push(a / b);
    }
    let (m1, m2) = (median(ours), median(theirs));
    println!(
        "median: iotrial {m1:.1} files/s, fs_mark {m2:.1} files/s; ratio of medians {:.3}, median ratio {:.3}",
        m1 / m2,
        median(ratios)
    );
}
