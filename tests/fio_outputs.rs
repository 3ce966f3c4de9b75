//! What a job trial writes for fio's ecosystem: fio's log files in fio's format and names
//! (`write_lat_log`, `write_bw_log`, `write_iops_log`, `log_avg_msec`, `log_offset`), and its
//! json+ output (`--fio-json`), which Debian's `fio_jsonplus_clat2csv` converts, the bins of
//! every job adding up to its I/Os.

mod common;

use assert_cmd::Command;
use common::figures::results_root;
use common::{ready, which, Need};
use serde_json::Value;
use std::path::Path;

/// Runs `text` as a job file with `--fio-json`; result.json and the trial's directory.
fn run(text: &str, work: &Path) -> (Value, std::path::PathBuf) {
    let target = work.join("target");
    std::fs::create_dir_all(&target).unwrap();
    let f = work.join("logs.fio");
    std::fs::write(&f, text).unwrap();
    let a = Command::cargo_bin("iotrial")
        .unwrap()
        .args([
            "run",
            &format!("fio:{}", f.display()),
            "--json",
            "--fio-json",
        ])
        .args(["--monitor", "none", "--target"])
        .arg(format!("dir:{}", target.display()))
        .arg("--out")
        .arg(work.join("out"))
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let dir = results_root(&work.join("out")).join("trials/dir/job/r1");
    (doc, dir)
}

#[test]
fn fio_logs_in_fio_s_format_and_names() {
    let work = tempfile::tempdir().unwrap();
    let (doc, dir) = run(
        "[global]\nbs=4k\nsize=1m\n\
         [each]\nrw=randrw\nnumjobs=2\nwrite_lat_log=lat\nwrite_bw_log\nwrite_iops_log=io\nlog_offset=1\n\
         [avg]\nrw=read\nwrite_lat_log=avg\nwrite_iops_log=avg\nlog_avg_msec=10\nrate_iops=2000\n",
        work.path(),
    );
    for (k, name) in [
        (1, "lat_lat.1.log"),
        (2, "lat_clat.2.log"),
        (1, "each_bw.1.log"),
        (2, "io_iops.2.log"),
    ] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let ios = doc["streams"][k - 1]["ios"].as_u64().unwrap();
        assert_eq!(text.lines().count() as u64, ios, "{name}: a line per I/O");
        for l in text.lines() {
            let f: Vec<&str> = l.split(", ").collect();
            assert_eq!(
                f.len(),
                6,
                "{name}: time, value, direction, bytes, offset, priority: {l}"
            );
            assert!(["0", "1"].contains(&f[2]), "{l}");
            assert_eq!(f[3], "4096");
            assert_eq!(f[4].parse::<u64>().unwrap() % 4096, 0);
        }
    }
    // Averaged over 10 ms windows: a line per window with completions (block size 0), no
    // offset; the IOPS of the windows add up to every read.
    for kind in ["clat", "iops"] {
        let avg = std::fs::read_to_string(dir.join(format!("avg_{kind}.3.log"))).unwrap();
        let lines: Vec<Vec<&str>> = avg.lines().map(|l| l.split(", ").collect()).collect();
        assert!(!lines.is_empty());
        assert!(lines
            .iter()
            .all(|f| f.len() == 5 && f[0].parse::<u64>().unwrap() % 10 == 0 && f[3] == "0"));
        if kind == "iops" {
            let reads: u64 = lines
                .iter()
                .map(|f| f[1].parse::<u64>().unwrap() * 10 / 1000)
                .sum();
            assert_eq!(reads, 256, "each window's IOPS x 10 ms");
        }
    }
}

#[test]
fn fio_jsonplus_clat2csv_reads_the_json_plus_and_its_bins_add_up() {
    let test = "fio_jsonplus_clat2csv_reads_the_json_plus_and_its_bins_add_up";
    if !ready(test, &[Need::Tool("fio_jsonplus_clat2csv")]) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let (doc, dir) = run(
        "[global]\nbs=4k\nsize=2m\nioengine=libaio\niodepth=8\n[a]\nrw=randrw\nnumjobs=2\nfsync=16\n[b]\nstonewall\nrw=read\n",
        work.path(),
    );
    let json: Value =
        serde_json::from_slice(&std::fs::read(dir.join("fio.json")).unwrap()).unwrap();
    let jobs = json["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 3, "a json+ entry per job clone");
    assert_eq!(
        (&jobs[0]["groupid"], &jobs[2]["groupid"]),
        (&0.into(), &1.into())
    );
    let csv = work.path().join("lat.csv");
    let out = std::process::Command::new(which("fio_jsonplus_clat2csv").unwrap())
        .arg(dir.join("fio.json"))
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (k, job) in jobs.iter().enumerate() {
        let text = std::fs::read_to_string(work.path().join(format!("lat_job{k}.csv"))).unwrap();
        let head: Vec<&str> = text.lines().next().unwrap().split(", ").collect();
        let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
        let (rc, wc) = (col("read_clat_ns_count"), col("write_clat_ns_count"));
        let mut counted = 0u64;
        for l in text.lines().skip(1) {
            let f: Vec<&str> = l.split(", ").collect();
            for c in [rc, wc] {
                counted += f[c].trim().parse::<u64>().unwrap_or(0);
            }
        }
        let ios = job["read"]["total_ios"].as_u64().unwrap()
            + job["write"]["total_ios"].as_u64().unwrap();
        assert_eq!(counted, ios, "job {k}: the CSV's bins add up to its I/Os");
        // And to what result.json counted, fsyncs apart.
        let s = &doc["streams"][k];
        assert_eq!(
            ios,
            s["read_ios"].as_u64().unwrap() + s["write_ios"].as_u64().unwrap()
        );
    }
}
