//! Options of fio's test jobs a job file runs with, checked by what the run did:
//! `serialize_overlap` (no two overlapping I/Os in flight at once), `cpus_allowed` with
//! `cpus_allowed_policy=split` (each clone on its CPU, said in result.json),
//! `verify_state_save` / `verify_state_load` (the later check reads only what completed),
//! `verify_only` (reads back and checks, writes nothing) and `experimental_verify`.

mod common;

use common::jobs::run_job_file;

use std::path::Path;

/// Pairs of samples of one stream in flight at once over overlapping bytes.
fn overlapping_in_flight(dir: &Path) -> usize {
    let csv = std::fs::read_to_string(dir.join("samples.csv")).unwrap();
    let ios: Vec<(u64, u64, u64, u64)> = csv
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let (off, len): (u64, u64) = (f[4].parse().ok()?, f[5].parse().ok()?);
            let (issue, lat): (u64, u64) = (f[6].parse().ok()?, f[7].parse().ok()?);
            (f[3] == "write").then_some((issue, issue + lat, off, off + len))
        })
        .collect();
    let mut n = 0;
    for (i, a) in ios.iter().enumerate() {
        for b in &ios[i + 1..] {
            let in_flight = a.0 < b.1 && b.0 < a.1;
            let overlap = a.2 < b.3 && b.2 < a.3;
            n += usize::from(in_flight && overlap);
        }
    }
    n
}

#[test]
fn serialize_overlap_keeps_overlapping_ios_apart() {
    let work = tempfile::tempdir().unwrap();
    let job = "[w]\nrw=randwrite\nbsrange=4k-16k\nsize=32k\nnorandommap\nioengine=libaio\niodepth=8\nio_size=64m\nnumber_ios=3000\n";
    let (_, loose) = run_job_file(work.path(), "loose.fio", job);
    let (doc, serial) = run_job_file(
        work.path(),
        "serial.fio",
        &format!("{job}serialize_overlap=1\n"),
    );
    assert_eq!(doc["streams"][0]["ios"], 3000);
    assert!(
        overlapping_in_flight(&loose) > 0,
        "without it, 8 I/Os in flight over 32 KiB overlap"
    );
    assert_eq!(overlapping_in_flight(&serial), 0);
}

#[test]
fn split_cpus_put_each_clone_on_its_cpu_and_say_so() {
    let work = tempfile::tempdir().unwrap();
    let host = iotrial::engine::cpus::allowed_cpus();
    let list: Vec<String> = host.iter().map(|c| c.to_string()).collect();
    let (doc, _) = run_job_file(
        work.path(),
        "cpus.fio",
        &format!(
            "[r]\nrw=randread\nsize=256k\nnumjobs=3\ncpus_allowed={}\ncpus_allowed_policy=split\n",
            list.join(",")
        ),
    );
    for (k, s) in doc["streams"].as_array().unwrap().iter().enumerate() {
        assert_eq!(s["cpus"], serde_json::json!([host[k % host.len()]]), "{s}");
    }
}

#[test]
fn a_saved_verify_state_limits_the_later_check_to_what_completed() {
    let work = tempfile::tempdir().unwrap();
    // The writer does 100 of the file's 256 blocks; the checker, a job of the same name (a
    // state file is the job's, by its name and clone), reads all 256.
    let text = "[global]\nname=pair\nfilename=data\nsize=1m\nbs=4k\nverify=md5\n\
                [write]\nrw=write\nnumber_ios=100\ndo_verify=0\nverify_state_save=1\n\
                [check]\nstonewall\nrw=read\nLOAD\n";
    let (doc, _) = run_job_file(
        work.path(),
        "state.fio",
        &text.replace("LOAD", "verify_state_load=1"),
    );
    let v = &doc["streams"][1]["verify"];
    assert_eq!(
        (&v["checked"], &v["mismatches"], &v["not_written"]),
        (&100.into(), &0.into(), &156.into()),
        "{v}"
    );
    let state = std::fs::read_to_string(work.path().join("local-pair-0-verify.state")).unwrap();
    assert!(state.contains("written 0 100"), "{state}");
    // Without the state, the blocks never written are mismatches.
    let (doc, _) = run_job_file(work.path(), "nostate.fio", &text.replace("LOAD", ""));
    assert_eq!(doc["streams"][1]["verify"]["mismatches"], 156);
    // A state the job cannot read ends it saying why.
    let (doc, _) = run_job_file(
        work.path(),
        "nofile.fio",
        "[lone]\nfilename=data\nsize=64k\nrw=read\nverify=md5\nverify_state_load=1\n",
    );
    let stopped = doc["streams"][0]["stopped"].as_str().unwrap();
    assert!(stopped.contains("local-lone-0-verify.state"), "{stopped}");
}

#[test]
fn verify_only_checks_without_writing_and_experimental_verify_checks_the_same() {
    let work = tempfile::tempdir().unwrap();
    let (doc, _) = run_job_file(
        work.path(),
        "only.fio",
        "[global]\nfilename=data\nsize=256k\nbs=8k\nverify=crc64\n\
         [write]\nrw=randwrite\ndo_verify=0\n\
         [only]\nstonewall\nrw=randwrite\nverify_only=1\n\
         [again]\nstonewall\nrw=write\nexperimental_verify=1\nverify=sha256\n",
    );
    let s = doc["streams"].as_array().unwrap();
    assert_eq!(s[1]["write_ios"], 0, "verify_only writes nothing");
    assert_eq!(
        (&s[1]["verify"]["checked"], &s[1]["verify"]["mismatches"]),
        (&32.into(), &0.into())
    );
    assert_eq!(
        (&s[2]["verify"]["checked"], &s[2]["verify"]["mismatches"]),
        (&32.into(), &0.into())
    );
}

#[test]
fn a_verify_state_saved_before_a_power_cut_is_what_the_check_after_it_reads() {
    use common::{assert_cleaned_up, iotrial, ready, Need};
    if !ready(
        "a_verify_state_saved_before_a_power_cut_is_what_the_check_after_it_reads",
        &[Need::Root, Need::Loop, Need::Fuse, Need::Tool("mkfs.ext4")],
    ) {
        return;
    }
    let (work, tmp) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(
        work.path().join("cut.fio"),
        "[global]\nname=pair\nfilename=data\nsize=1m\nbs=4k\nverify=crc32c\ndirect=1\n\
         [write]\nrw=write\ndo_verify=0\nverify_state_save=1\nfsync=8\n\
         [check]\nstonewall\nrw=read\nverify_state_load=1\n",
    )
    .unwrap();
    let a = iotrial(tmp.path())
        .current_dir(work.path())
        .args(["run", "fio:cut.fio", "--json", "--monitor", "none"])
        .args(["--target", "emu:ssd,size=1GiB", "--fs", "ext4"])
        .args(["--set", "powercut=after:100", "--out", "out"])
        .assert()
        .success();
    let doc: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let s = doc["streams"].as_array().unwrap();
    // The cut ended the writer; the state holds the writes it saw complete, and the check
    // after the stack came back reads those and no others.
    let state = std::fs::read_to_string(work.path().join("local-pair-0-verify.state")).unwrap();
    let written: u64 = state
        .lines()
        .filter_map(|l| l.strip_prefix("written "))
        .map(|r| {
            let (a, b) = r.split_once(' ').unwrap();
            b.parse::<u64>().unwrap() - a.parse::<u64>().unwrap()
        })
        .sum();
    assert!(written > 0 && written < 256, "{state}");
    let v = &s[1]["verify"];
    assert_eq!(v["checked"], written, "{v}");
    assert_eq!(v["not_written"], 256 - written, "{v}");
    // Direct writes synced every 8: at most the last 8 can have been lost in the drive's cache.
    assert!(v["mismatches"].as_u64().unwrap() <= 8, "{v}");
    assert_cleaned_up(tmp.path(), &[]);
}
