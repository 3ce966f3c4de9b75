//! fio's iolog in a job file, both ways, and what a bad one gets: a job with `write_iolog` run
//! by iotrial is replayed by `fio --read_iolog` with the same number of I/Os; a fio iolog v2
//! written by hand is replayed by iotrial's `read_iolog` with exactly its I/Os; an iolog with
//! a malformed line, one doing I/O on a file it never added, one that does not exist, and a
//! `cpus_allowed` the host lacks each exit 2 naming the file and line and make nothing.

mod common;

use common::jobs::run_job_file;

use assert_cmd::Command;
use common::{ready, Need};
use predicates::str::contains;
use serde_json::Value;
use std::path::Path;

fn iotrial(cwd: &Path) -> Command {
    let mut c = Command::cargo_bin("iotrial").unwrap();
    c.current_dir(cwd);
    c
}

/// The I/Os of a stream of a result.json: reads, writes and trims.
fn data_ios(stream: &Value) -> u64 {
    stream["ios"].as_u64().unwrap()
}

#[test]
fn a_job_s_iolog_is_replayed_by_fio_with_the_same_ios() {
    if !ready(
        "a_job_s_iolog_is_replayed_by_fio_with_the_same_ios",
        &[Need::Tool("fio")],
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let (doc_w, dir_w) = run_job_file(
        work.path(),
        "w.fio",
        "[w]\nsize=512k\nbs=4k\nrw=randwrite\nioengine=libaio\niodepth=8\nnrfiles=2\nfsync=16\nwrite_iolog=w.log\n",
    );
    let (doc_r, dir_r) = run_job_file(
        work.path(),
        "r.fio",
        "[r]\nsize=512k\nrw=randread\nbssplit=4k/50:16k/50\nio_size=256k\nwrite_iolog=r.log\n",
    );
    for (doc, log) in [(doc_w, dir_w.join("w.log")), (doc_r, dir_r.join("r.log"))] {
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.starts_with("fio version 3 iolog\n"), "{text}");
        // The trial's files are gone with its stack: lay each one the log names out again at
        // its path, as big as the log reaches, for fio to replay on.
        let trace = iotrial::trace::parse(&log, &text).unwrap();
        for (k, f) in trace.files.iter().enumerate() {
            std::fs::create_dir_all(Path::new(f).parent().unwrap()).unwrap();
            let len = trace.extent_of(k as u32).div_ceil(4096) * 4096;
            std::fs::write(f, vec![7u8; len as usize]).unwrap();
        }
        let out = std::process::Command::new("fio")
            .args(["--name=replay", "--output-format=json"])
            .arg(format!("--read_iolog={}", log.display()))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let fio: Value = serde_json::from_slice(&out.stdout).unwrap();
        let j = &fio["jobs"][0];
        assert_eq!(j["error"], 0, "{j}");
        let fio_ios: u64 = ["read", "write", "trim"]
            .iter()
            .map(|d| j[d]["total_ios"].as_u64().unwrap())
            .sum();
        let ours: u64 = doc["streams"]
            .as_array()
            .unwrap()
            .iter()
            .map(data_ios)
            .sum();
        assert!(ours > 0);
        assert_eq!(
            fio_ios,
            ours,
            "{}: fio replayed {fio_ios} I/Os of iotrial's {ours}",
            log.display()
        );
        for f in &trace.files {
            let _ = std::fs::remove_dir_all(Path::new(f).parent().unwrap());
        }
    }
}

#[test]
fn a_hand_written_iolog_v2_is_replayed_with_exactly_its_ios() {
    let work = tempfile::tempdir().unwrap();
    let log = "fio version 2 iolog\n/dev/sdb add\n/dev/sdc add\n/dev/sdb open\n/dev/sdc open\n\
               /dev/sdb write 0 4096\n/dev/sdc write 8192 8192\n/dev/sdb wait 1000 0\n\
               /dev/sdb read 0 4096\n/dev/sdc read 12288 4096\n/dev/sdb write 65536 512\n\
               /dev/sdb trim 0 4096\n/dev/sdc sync\n/dev/sdb datasync\n/dev/sdb close\n/dev/sdc close\n";
    std::fs::write(work.path().join("hand.log"), log).unwrap();
    let (doc, dir) = run_job_file(
        work.path(),
        "replay.fio",
        "[replay]\nread_iolog=hand.log\nioengine=libaio\niodepth=4\n",
    );
    let csv = std::fs::read_to_string(dir.join("samples.csv")).unwrap();
    let mut done: Vec<(String, u64, u64)> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[3].to_string(),
                f[4].parse().unwrap(),
                f[5].parse().unwrap(),
            )
        })
        .collect();
    done.sort();
    let mut want: Vec<(String, u64, u64)> = [
        ("fdatasync", 0, 0),
        ("fsync", 0, 0),
        ("read", 0, 4096),
        ("read", 12288, 4096),
        ("trim", 0, 4096),
        ("write", 0, 4096),
        ("write", 8192, 8192),
        ("write", 65536, 512),
    ]
    .iter()
    .map(|(o, a, b)| (o.to_string(), *a, *b))
    .collect();
    want.sort();
    assert_eq!(done, want, "exactly the log's I/Os");
    assert_eq!(doc["streams"][0]["errors"], 0);
}

#[test]
fn a_bad_iolog_or_cpu_set_exits_2_naming_file_and_line_and_makes_nothing() {
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("target");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(
        work.path().join("malformed.log"),
        "fio version 2 iolog\nsdb add\nsdb open\nsdb read 0 4096\nsdb write 4096 four\n",
    )
    .unwrap();
    std::fs::write(
        work.path().join("unadded.log"),
        "fio version 3 iolog\n0 sdb add\n5 sdb read 0 4096\n9 sdc write 0 4096\n",
    )
    .unwrap();
    let last = *iotrial::engine::cpus::allowed_cpus().last().unwrap();
    let cpus = format!("0-{}", last + 2);
    for (job, needles) in [
        (
            "[j]\nread_iolog=malformed.log\n".to_string(),
            vec!["bad.fio:2:", "malformed.log:5: length 'four'"],
        ),
        (
            "[j]\nread_iolog=unadded.log\n".to_string(),
            vec!["bad.fio:2:", "unadded.log:4: an I/O on 'sdc'"],
        ),
        (
            "[global]\nsize=1m\n[j]\nrw=read\nread_iolog=missing.log\n".to_string(),
            vec!["bad.fio:5:", "cannot read missing.log"],
        ),
        (
            format!("[j]\nsize=1m\nnumjobs=2\ncpus_allowed={cpus}\n"),
            vec!["bad.fio:4:", "not on this host"],
        ),
    ] {
        std::fs::write(work.path().join("bad.fio"), &job).unwrap();
        let mut a = iotrial(work.path())
            .args(["run", "fio:bad.fio", "--out", "out", "--target"])
            .arg(format!("dir:{}", target.display()))
            .assert()
            .code(2);
        for n in needles {
            a = a.stderr(contains(n));
        }
        assert_eq!(
            std::fs::read_dir(&target).unwrap().count(),
            0,
            "nothing made on the target for {job}"
        );
    }
}
