//! The `tree` workload against plain `mkdir` and `rm -rf` (root only): in one run, on the same
//! ext4 (a loop device over an image on tmpfs, so the host's disk is not what is measured),
//! alternating rounds of:
//! - iotrial: `iotrial run tree --target dir:<ext4>/iotrial` with 8 threads; its
//!   `create_dirs_per_s` (mkdirs over the create phase) and `remove_dirs_per_s` (directories
//!   the `rm -rf`-like walk found over the remove phase, after a sync and a drop of the
//!   caches: on a `dir:` target iotrial does not freeze the filesystem, which is not its own,
//!   so ext4's journal may keep some of the tree cached);
//! - the tools: the same directories (each thread's list written out, parents first) made by
//!   eight `xargs -n 512 mkdir` started together, timed from their start to the last one's
//!   exit; then a sync and a drop of the caches (the same as iotrial's), and `rm -rf` of the
//!   eight trees, timed.
//!
//! Medians of each and their ratios are printed. Results: bench/README.md.

#[path = "../tests/common/mod.rs"]
mod common;

use common::{missing, Mounted, Need, TestLoop};
use iotrial::workload::tree::shape::Shape;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

const DIRS: u64 = 200_000;
const THREADS: u64 = 8;
const DEPTH: u64 = 10;
const ROUNDS: usize = 5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// What iotrial's `sync` and `drop_caches` phases do on a `dir:` target.
fn settle() {
    assert!(Command::new("sync").status().unwrap().success());
    std::fs::write("/proc/sys/vm/drop_caches", "3").unwrap();
}

/// iotrial's (create dirs/s, remove dirs/s) on `dir`.
fn iotrial_round(dir: &Path, out: &Path) -> (f64, f64) {
    std::fs::create_dir_all(dir).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_iotrial"))
        .args(["run", "tree", "--json", "--monitor", "none", "--target"])
        .arg(format!("dir:{}", dir.display()))
        .arg("--out")
        .arg(out)
        .args([
            "--set",
            &format!("dirs={DIRS}"),
            "--set",
            &format!("threads={THREADS}"),
        ])
        .args(["--set", &format!("depth={DEPTH}")])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let v = &doc["verdict"];
    assert_eq!(v["dirs_created"], DIRS, "{v}");
    let f = |k: &str| v[k].as_f64().unwrap();
    (f("create_dirs_per_s"), f("remove_dirs_per_s"))
}

/// The tools' (create dirs/s, remove dirs/s) on `dir`, the paths of each thread in `lists`.
fn tools_round(dir: &Path, lists: &[std::path::PathBuf]) -> (f64, f64) {
    std::fs::create_dir_all(dir).unwrap();
    let tops: Vec<_> = (0..THREADS).map(|t| dir.join(format!("t{t}"))).collect();
    for t in &tops {
        std::fs::create_dir(t).unwrap();
    }
    let t0 = Instant::now();
    let children: Vec<_> = lists
        .iter()
        .zip(&tops)
        .map(|(list, top)| {
            Command::new("xargs")
                .args(["-n", "512", "mkdir", "--"])
                .current_dir(top)
                .stdin(std::fs::File::open(list).unwrap())
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let create = DIRS as f64 / t0.elapsed().as_secs_f64();
    settle();
    let t0 = Instant::now();
    let ok = Command::new("rm").arg("-rf").args(&tops).status().unwrap();
    assert!(ok.success());
    let remove = DIRS as f64 / t0.elapsed().as_secs_f64();
    (create, remove)
}

fn main() {
    for need in [Need::Root, Need::Loop, Need::Tool("mkfs.ext4")] {
        if let Some(why) = missing(need) {
            eprintln!("tree_mkdir bench skipped: {why}");
            return;
        }
    }
    let work = tempfile::tempdir_in("/dev/shm").unwrap();
    let img = work.path().join("ext4.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(8 << 30)
        .unwrap();
    let lo = TestLoop::attach(&img, true).unwrap();
    common::run(
        "mkfs.ext4",
        &["-q", "-F", "-E", "lazy_itable_init=0", &lo.path()],
    )
    .unwrap();
    let mnt = work.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let m = Mounted::mount(&lo.path(), &mnt, "ext4").unwrap();
    // Each thread's directories, parents first, as the workload makes them.
    let lists: Vec<_> = (0..THREADS)
        .map(|t| {
            // DIRS is a multiple of THREADS: every thread makes the same share.
            let share = DIRS / THREADS;
            let mut walk = Shape::new(share, DEPTH).unwrap().walk();
            let mut text = String::new();
            while let Some(p) = walk.next_path() {
                text.push_str(p);
                text.push('\n');
            }
            let path = work.path().join(format!("list{t}"));
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect();
    let (mut ic, mut ir, mut tc, mut tr) = (vec![], vec![], vec![], vec![]);
    for round in 0..ROUNDS {
        let (c, r) = iotrial_round(&mnt.join(format!("i{round}")), &work.path().join("out"));
        ic.push(c);
        ir.push(r);
        let (c, r) = tools_round(&mnt.join(format!("x{round}")), &lists);
        tc.push(c);
        tr.push(r);
        println!(
            "round {round}: iotrial create {:.0}/s remove {:.0}/s; mkdir {:.0}/s, rm -rf {:.0}/s",
            ic[round], ir[round], tc[round], tr[round]
        );
    }
    let (ic, ir, tc, tr) = (median(ic), median(ir), median(tc), median(tr));
    println!("medians over {ROUNDS} rounds, {DIRS} directories, {THREADS} threads, depth {DEPTH}:");
    println!(
        "  create: iotrial {ic:.0} dirs/s, xargs mkdir {tc:.0} dirs/s, ratio {:.2}",
        ic / tc
    );
    println!(
        "  remove: iotrial {ir:.0} dirs/s, rm -rf {tr:.0} dirs/s, ratio {:.2}",
        ir / tr
    );
    m.unmount().unwrap();
    drop(lo);
}
