//! `iotrial report` and `iotrial compare` as a user runs them: on a results directory made by
//! `iotrial run`, and on directories that are not results.

use assert_cmd::Command;
use predicates::str::contains;

fn iotrial() -> Command {
    Command::cargo_bin("iotrial").unwrap()
}

fn run_dvr(out: &std::path::Path) -> std::path::PathBuf {
    iotrial()
        .args(["run", "dvr", "--out"])
        .arg(out)
        .args([
            "--set",
            "samples=16",
            "--set",
            "region_size=1MiB",
            "--set",
            "io_size=64KiB",
        ])
        .assert()
        .success();
    std::fs::read_dir(out)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}

#[test]
fn report_and_compare_a_run() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (ra, rb) = (run_dvr(a.path()), run_dvr(b.path()));
    iotrial()
        .arg("report")
        .arg(&ra)
        .assert()
        .success()
        .stdout(contains("report.html"));
    assert!(ra.join("report.html").exists());
    let md = std::fs::read_to_string(ra.join("report.md")).unwrap();
    assert!(md.contains("| stack |") && md.contains("record guaranteed (Mbit/s)"));
    iotrial()
        .arg("compare")
        .arg(&ra)
        .arg(&rb)
        .assert()
        .success()
        .stdout(contains("record guaranteed"))
        .stdout(contains("Welch's two-sided t-test"));
    iotrial()
        .args(["compare", "--markdown"])
        .arg(&ra)
        .arg(&rb)
        .assert()
        .success()
        .stdout(contains("| workload | stack |"));
}

#[test]
fn a_run_writes_the_manifest_a_study_writes() {
    let out = tempfile::tempdir().unwrap();
    let root = run_dvr(out.path());
    let m = iotrial::study::Manifest::load(&root).unwrap();
    assert_eq!(m.trials.len(), 1);
    let t = &m.trials[0];
    assert_eq!((t.workload.as_str(), t.kind.as_str()), ("dvr", "dvr"));
    assert_eq!(t.status, iotrial::study::Status::Done);
    assert!(root.join(&t.path).join("result.json").is_file());
    assert_eq!(m.resolved.workloads[0].set.get("samples"), Some("16"));
    let again = iotrial::study::builtin::load(root.join("study.toml").to_str().unwrap()).unwrap();
    assert_eq!(again, m.resolved, "study.toml is the run as a study");
}

#[test]
fn not_a_results_directory_is_a_usage_error() {
    let d = tempfile::tempdir().unwrap();
    iotrial()
        .arg("report")
        .arg(d.path())
        .assert()
        .code(2)
        .stderr(contains("trials"));
    iotrial()
        .arg("compare")
        .arg(d.path())
        .arg(d.path())
        .assert()
        .code(2);
}
