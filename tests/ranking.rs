//! A study's ranking is a claim its repeats must carry (no root: directory stacks). A study
//! runs its repeats round-robin; one run per stack crowns nobody; a results directory edited on
//! purpose and rebuilt with `iotrial report` stars the runner-up beside the winner when their
//! values are made equal and leaves it unstarred when they are halved; and a study asking for
//! narrow intervals adds repeats up to its maximum, while a wide target stops at its minimum.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// A study of a tiny dvr on three directory stacks, with `head` (repeats and so on) on top.
fn study(work: &Path, head: &str) -> PathBuf {
    let data = work.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let path = work.join("ranked.toml");
    std::fs::write(
        &path,
        format!(
            "name = \"ranked\"\n{head}\n[[workloads]]\nkind = \"dvr\"\nset = {{ samples = \"8\", region_size = \"1MiB\", io_size = \"4KiB\", window = \"10ms\", recorders = \"2\", players = \"1\" }}\n{}",
            dir_stacks(&data, &["a", "b", "c"])
        ),
    )
    .unwrap();
    path
}

/// Runs the study; its results directory and what it printed.
fn run(work: &Path, study: &Path, extra: &[&str]) -> (PathBuf, String) {
    let out = work.join("out");
    let a = iotrial(work)
        .arg("study")
        .arg(study)
        .arg("--out")
        .arg(&out)
        .args(extra)
        .assert()
        .success();
    let said = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    let root = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .max()
        .unwrap();
    (root, said)
}

/// The ids of the manifest's trials, in the order they ran (by start time, then place).
fn run_order(root: &Path) -> Vec<String> {
    let m = read_json(&root.join("manifest.json"));
    let mut t: Vec<(String, usize, String)> = m["trials"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, t)| {
            (
                t["started_utc"].as_str().unwrap_or_default().to_string(),
                i,
                t["id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    t.sort();
    t.into_iter().map(|x| x.2).collect()
}

/// Sets the record guarantee of `stack`'s repeats to `values` in the results directory.
fn set_mbit(root: &Path, stack: &str, values: &[f64]) {
    for (r, v) in values.iter().enumerate() {
        let p = root.join(format!("trials/{stack}/dvr/r{}/result.json", r + 1));
        let mut doc = read_json(&p);
        doc["verdict"]["record_mbit_guaranteed"] = (*v).into();
        std::fs::write(&p, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    }
}

/// `iotrial report ROOT`; report.md's verdict table rows.
fn report_rows(work: &Path, root: &Path) -> (Vec<String>, String) {
    iotrial(work).arg("report").arg(root).assert().success();
    let md = std::fs::read_to_string(root.join("report.md")).unwrap();
    let rows = md
        .lines()
        .skip_while(|l| !l.starts_with("| stack |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(String::from)
        .collect();
    (rows, md)
}

#[test]
fn a_study_repeats_round_robin_and_edited_results_move_the_star() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let (root, said) = run(w, &study(w, "note = \"a note on what it cannot say\""), &[]);
    assert!(
        said.contains("9 trials to run (3 repeats of every stack, round-robin)"),
        "{said}"
    );
    assert_eq!(
        said.matches("note: a note on what it cannot say").count(),
        2,
        "{said}"
    );
    let order = run_order(&root);
    assert_eq!(
        order,
        [
            "a/dvr/r1", "b/dvr/r1", "c/dvr/r1", "a/dvr/r2", "b/dvr/r2", "c/dvr/r2", "a/dvr/r3",
            "b/dvr/r3", "c/dvr/r3"
        ],
        "repeat 1 of every stack before repeat 2 of any"
    );
    // The table shows intervals and ranks.
    assert!(said.contains(" ± ") && said.contains("rank"), "{said}");

    // a clearly first, b second, c last: a alone is starred.
    set_mbit(&root, "a", &[40.0, 40.4, 39.8]);
    set_mbit(&root, "b", &[30.0, 30.3, 29.9]);
    set_mbit(&root, "c", &[10.0, 10.2, 9.9]);
    let (rows, md) = report_rows(w, &root);
    assert!(rows[0].starts_with("| ★ a | 3 | 1 |"), "{md}");
    assert!(rows[1].starts_with("| b | 3 | 2 |"), "{md}");
    // The runner-up made equal to the winner: they share the top.
    set_mbit(&root, "b", &[40.0, 40.4, 39.8]);
    let (rows, md) = report_rows(w, &root);
    assert!(rows[0].starts_with("| ☆ a | 3 | 1-2 |"), "{md}");
    assert!(rows[1].starts_with("| ☆ b | 3 | 1-2 |"), "{md}");
    assert!(!md.contains("★ a") && md.contains("share the top"), "{md}");
    // The runner-up halved: it stays unstarred, a alone is starred again.
    set_mbit(&root, "b", &[20.0, 20.2, 19.9]);
    let (rows, md) = report_rows(w, &root);
    assert!(rows[0].starts_with("| ★ a | 3 | 1 |"), "{md}");
    assert!(rows[1].starts_with("| b | 3 | 2 |"), "{md}");
    assert!(md.contains("- note: a note on what it cannot say"), "{md}");
    // The HTML report says the same.
    let html = std::fs::read_to_string(root.join("report.html")).unwrap();
    assert_eq!(html.matches("★</span> a<").count(), 1, "one star, on a");
    assert!(!html.contains("☆</span>"), "no shared top");
    assert!(loops_under(w).is_empty() && mounts_under(w).is_empty());
}

#[test]
fn a_one_repeat_study_crowns_nobody() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let (root, said) = run(w, &study(w, ""), &["--repeats", "1"]);
    assert!(
        said.contains("3 trials to run (1 repeat of every stack"),
        "{said}"
    );
    assert!(
        !said.contains("★ a") && !said.contains("★ b") && !said.contains("★ c"),
        "{said}"
    );
    assert!(said.contains("untested"), "{said}");
    let md = std::fs::read_to_string(root.join("report.md")).unwrap();
    assert!(!md.contains("| ★") && !md.contains("| ☆"), "{md}");
    assert!(
        md.contains("has the highest mean record guaranteed, untested"),
        "{md}"
    );
}

#[test]
fn narrow_intervals_add_repeats_up_to_the_maximum_and_wide_ones_stop_at_the_minimum() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    // No run on a host directory comes within ±0.0001% three times running: every stack
    // gets repeats up to the maximum, round by round.
    let (root, said) = run(
        w,
        &study(w, "repeats = 2\nmax_repeats = 4\ninterval = \"0.0001%\""),
        &[],
    );
    assert!(said.contains("(2-4 repeats"), "{said}");
    assert!(said.contains("round 3: 3 more trials"), "{said}");
    assert!(
        said.contains("a/dvr after 2 repeats: ±") && said.contains("wider than ±0.0001%: one more"),
        "{said}"
    );
    assert!(said.contains("round 4: 3 more trials"), "{said}");
    assert!(!said.contains("round 5"), "{said}");
    let order = run_order(&root);
    assert_eq!(order.len(), 12, "{order:?}");
    assert_eq!(
        order[6..],
        ["a/dvr/r3", "b/dvr/r3", "c/dvr/r3", "a/dvr/r4", "b/dvr/r4", "c/dvr/r4"]
    );
    let m = read_json(&root.join("manifest.json"));
    assert!(m["trials"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["status"] == "done"));
    // A merge of the run keeps the repeats it added.
    let merged = w.join("merged");
    iotrial(w)
        .arg("merge")
        .arg(&merged)
        .arg(&root)
        .assert()
        .success();
    let mm = read_json(&merged.join("manifest.json"));
    let done: Vec<&str> = mm["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["status"] == "done")
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(done.len(), 12, "{mm}");
    assert!(done.contains(&"c/dvr/r4") && merged.join("trials/c/dvr/r4/result.json").exists());

    // A target every interval meets (three positive values never spread to ±1000% of their
    // mean): the study stops at its minimum.
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let (root, said) = run(
        w,
        &study(w, "repeats = 2\nmax_repeats = 4\ninterval = \"0.0001%\""),
        &["--repeats", "3", "--interval", "1000%"],
    );
    assert!(!said.contains("round 4"), "{said}");
    assert!(
        said.contains("after 3 repeats: ±") && said.contains("narrow enough"),
        "{said}"
    );
    assert_eq!(run_order(&root).len(), 9);
    // A part of the study runs its own repeats only.
    let (_, said) = run(
        w,
        &study(w, "repeats = 2\nmax_repeats = 4\ninterval = \"0.0001%\""),
        &["--shard", "1/2"],
    );
    assert!(said.contains("runs its 2 repeats only"), "{said}");
    assert!(!said.contains("round 3"), "{said}");
}
