//! The report finds a workload's kind in its trials' result.json, never in a directory name:
//! a study whose dvr workload is named `dvr-buffered` gets the same ranking, charts and
//! sections as when it is named `dvr` (issue 9), and results written before result.json had a
//! `format_version` still report under their kind.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn iotrial() -> Command {
    Command::cargo_bin("iotrial").unwrap()
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Copies the directory tree `from` to `to`, renaming every path component `old` to `new`.
fn copy_renamed(from: &Path, to: &Path, old: &str, new: &str) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().replace(old, new);
        if e.file_type().unwrap().is_dir() {
            copy_renamed(&e.path(), &to.join(name), old, new);
        } else {
            std::fs::copy(e.path(), to.join(name)).unwrap();
        }
    }
}

/// The `<h3>` titles of report.html, and how many charts it draws.
fn sections_and_charts(html: &str) -> (Vec<String>, usize) {
    let titles = html
        .split("<h3 id=\"")
        .skip(1)
        .filter_map(|s| s.split_once('>'))
        .filter_map(|(_, rest)| rest.split_once("</h3>"))
        .map(|(t, _)| t.to_string())
        .collect();
    (titles, html.matches("data-chart=\"").count())
}

/// Runs a two-stack study on `dir:` stacks with its dvr workload named `name`.
fn run_study(work: &Path, name: &str) -> (PathBuf, String) {
    let mut stacks = String::new();
    for s in ["a", "b"] {
        let d = work.join(s);
        std::fs::create_dir_all(&d).unwrap();
        stacks += &format!(
            "[[stacks]]\nname = \"{s}\"\ndevices = [\"dir:{}\"]\n",
            d.display()
        );
    }
    let file = work.join("study.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"kinds\"\nrepeats = 1\n[[workloads]]\nkind = \"dvr\"\nname = \"{name}\"\nset = {{ samples = \"40\", region_size = \"2MiB\", io_size = \"64KiB\", window = \"20ms\", recorders = \"2\", players = \"2\" }}\n{stacks}"
        ),
    )
    .unwrap();
    let out = work.join("out");
    let a = iotrial()
        .arg("study")
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let root = std::fs::read_dir(&out)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    (
        root,
        String::from_utf8_lossy(&a.get_output().stdout).into_owned(),
    )
}

#[test]
fn issue_9_workload_named_other_than_its_kind_is_reported_as_its_kind() {
    let work = tempfile::tempdir().unwrap();
    let (root, said) = run_study(work.path(), "dvr-buffered");
    let mut mbit = Vec::new();
    for s in ["a", "b"] {
        let doc = read_json(&root.join(format!("trials/{s}/dvr-buffered/r1/result.json")));
        assert_eq!(
            (doc["workload"].as_str(), doc["kind"].as_str()),
            (Some("dvr-buffered"), Some("dvr"))
        );
        mbit.push(doc["verdict"]["record_mbit_guaranteed"].as_f64().unwrap());
    }
    // The better record guarantee has the highest mean, untested (one repeat each: no ★),
    // in the terminal table and the report.
    let best = if mbit[0] > mbit[1] { "a" } else { "b" };
    let untested = format!("{best} has the highest mean record guaranteed, untested");
    assert!(said.contains("record guaranteed"), "{said}");
    assert!(said.contains(&untested), "{said}");
    assert!(!said.contains("★ a") && !said.contains("★ b"), "{said}");
    let md = std::fs::read_to_string(root.join("report.md")).unwrap();
    assert!(md.contains(&untested), "{md}");
    assert!(
        md.contains(&format!("| {best} |")) && !md.contains("| ★"),
        "{md}"
    );
    assert!(!md.contains("completion\\_spread"), "generic columns: {md}");

    // The same results with the workload named `dvr`: the same report.
    let twin = work.path().join("twin");
    copy_renamed(&root, &twin, "dvr-buffered", "dvr");
    for f in [
        "manifest.json",
        "study.toml",
        "trials/a/dvr/r1/result.json",
        "trials/b/dvr/r1/result.json",
    ] {
        let text = std::fs::read_to_string(twin.join(f)).unwrap();
        std::fs::write(twin.join(f), text.replace("dvr-buffered", "dvr")).unwrap();
    }
    iotrial().arg("report").arg(&twin).assert().success();
    let twin_md = std::fs::read_to_string(twin.join("report.md")).unwrap();
    assert_eq!(md.replace("dvr-buffered", "dvr"), twin_md);
    let html = std::fs::read_to_string(root.join("report.html")).unwrap();
    let twin_html = std::fs::read_to_string(twin.join("report.html")).unwrap();
    let (titles, charts) = sections_and_charts(&html);
    assert_eq!((titles.clone(), charts), sections_and_charts(&twin_html));
    // Per stack: records and playbacks; then the latency CDFs of both roles and fairness;
    // then each trial's devices, from its monitors (when the directory is on a disk).
    let device_charts = html.matches(": devices.</strong>").count();
    assert_eq!(charts, 2 * 2 + 2 + 1 + device_charts, "{titles:?}");
    for t in ["Stack a", "Stack b", "All stacks: fairness"] {
        assert!(titles.iter().any(|x| x == t), "{t} in {titles:?}");
    }
}

#[test]
fn results_without_format_version_report_under_their_kind() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("old");
    copy_renamed(Path::new("tests/fixtures/results-0.1.0"), &root, "", "");
    iotrial().arg("report").arg(&root).assert().success();
    let md = std::fs::read_to_string(root.join("report.md")).unwrap();
    // Stack a guaranteed 2998 Mbit/s, b 2410: a has the highest mean by dvr's headline
    // figure, untested (one repeat each).
    assert!(md.contains("| a | 2998 |"), "{md}");
    assert!(
        md.contains("a has the highest mean record guaranteed, untested"),
        "{md}"
    );
    let (titles, charts) =
        sections_and_charts(&std::fs::read_to_string(root.join("report.html")).unwrap());
    assert_eq!(charts, 7, "{titles:?}");
    iotrial()
        .arg("compare")
        .arg(&root)
        .arg(Path::new("tests/fixtures/results-0.1.0"))
        .assert()
        .success()
        .stdout(predicates::str::contains("record guaranteed (Mbit/s)"));
}
