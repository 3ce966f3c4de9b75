//! `iotrial run fio:FILE` against `fio FILE` on the same stack in the same run (root; prints
//! why it skips otherwise): the bench builds the stack itself, an ext4 filesystem on a loop
//! device (direct I/O, as iotrial's `image:` target makes it) over a 4 GiB image on the
//! machine's disk, and runs job files from examples/ with each tool in turn, over
//! several rounds, each in a fresh directory of that filesystem (fio's files in one, iotrial's
//! `dir:` target in another; both lay their read files out before the timed part). Prints
//! each tool's IOPS (sum over jobs; median of the rounds), the ratio iotrial / fio of those
//! medians, and the median of each round's own ratio (the two runs of a round are back to back,
//! so a change of the machine's load between rounds cancels).
//! With `FIO_EXAMPLES` naming the examples/ directory of fio's repository, six of fio's own
//! files follow, compared per reporting group ([`fio_groups`]).
//! Results: bench/README.md. `FIO_FILES_ROUNDS` (3) changes the rounds; `FIO_FILES_OWN=0`
//! leaves out iotrial's own examples; `FIO_FILES_IMAGE_DIR` puts the image elsewhere than
//! `/var/tmp` (`/dev/shm`: in memory, so the virtual machine's disk, whose speed changes from
//! one round to the next, is out of the comparison and what the tools cost is left).

#[path = "../tests/common/mod.rs"]
mod common;
mod fio_groups;

use common::devices::{run, Mounted, TestLoop};
use common::figures::median;
use common::{missing, Need};
use std::path::Path;

const FILES: &[&str] = &["randread-4k-qd1.fio", "seqwrite-1m.fio"];

fn fio_iops(file: &Path, dir: &Path) -> f64 {
    fio_groups::fio(file, dir).iter().map(|g| g.iops).sum()
}

fn iotrial_iops(file: &Path, dir: &Path, out: &Path) -> f64 {
    fio_groups::iotrial(file, dir, out)
        .0
        .iter()
        .map(|g| g.iops)
        .sum()
}

fn main() {
    let needs = [
        Need::Root,
        Need::Loop,
        Need::Tool("fio"),
        Need::Tool("mkfs.ext4"),
        Need::Tool("losetup"),
    ];
    if let Some(why) = needs.into_iter().find_map(missing) {
        println!("fio_files: skipped: {why}");
        return;
    }
    let rounds: usize = std::env::var("FIO_FILES_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    // The image as iotrial's own `image:` target makes it: a sparse file on the machine's disk
    // under a loop device doing direct I/O, so reads reach the disk, not the page cache.
    let dir = std::env::var("FIO_FILES_IMAGE_DIR").unwrap_or_else(|_| "/var/tmp".into());
    let images = tempfile::tempdir_in(&dir).unwrap();
    let image = images.path().join("fio-files.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(4 << 30)
        .unwrap();
    let lo = TestLoop::attach(&image, true).expect("losetup --direct-io=on");
    run("mkfs.ext4", &["-q", "-F", &lo.path()]).expect("mkfs.ext4");
    let work = tempfile::tempdir().unwrap();
    let mnt = Mounted::mount(&lo.path(), &work.path().join("mnt"), "ext4").expect("mount");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    println!(
        "ext4 on {} (4 GiB image in {dir}, loop direct I/O), {rounds} rounds per file and tool",
        lo.path()
    );
    println!("| job file | fio IOPS | iotrial IOPS | ratio of medians | median of round ratios | per round |");
    println!("|---|---|---|---|---|---|");
    let own = std::env::var("FIO_FILES_OWN").map_or(true, |v| v != "0");
    for name in FILES.iter().filter(|_| own) {
        let file = examples.join(name);
        let (mut f, mut i) = (Vec::new(), Vec::new());
        for r in 0..rounds {
            let (fd, id) = (mnt.dir.join("fio"), mnt.dir.join("iotrial"));
            std::fs::create_dir_all(&fd).unwrap();
            std::fs::create_dir_all(&id).unwrap();
            let out = work.path().join("out");
            if r % 2 == 0 {
                f.push(fio_iops(&file, &fd));
                i.push(iotrial_iops(&file, &id, &out));
            } else {
                i.push(iotrial_iops(&file, &id, &out));
                f.push(fio_iops(&file, &fd));
            }
            for d in [fd, id, out] {
                let _ = std::fs::remove_dir_all(d);
            }
        }
        let ratios: Vec<f64> = f.iter().zip(&i).map(|(a, b)| b / a).collect();
        let per: Vec<String> = ratios.iter().map(|r| format!("{r:.3}")).collect();
        let (mf, mi) = (median(f), median(i));
        println!(
            "| {name} | {mf:.0} | {mi:.0} | {:.3} | **{:.3}** | {} |",
            mi / mf,
            median(ratios),
            per.join(", ")
        );
    }
    match std::env::var("FIO_EXAMPLES") {
        Ok(dir) => fio_groups::compare(Path::new(&dir), &mnt.dir, work.path(), rounds),
        Err(_) => println!("(set FIO_EXAMPLES to fio's examples/ directory to compare six of fio's own files per job group)"),
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average after: {}", load.trim());
    mnt.unmount().expect("unmount");
}
