//! Runs a study in shards and merges them (`iotrial study --shard`, `iotrial merge`): the
//! shards of a small study on directories merge to what one run of the whole study gives (the
//! same trials, manifest, table and report sections; no trial lost or doubled); a merge
//! refuses directories of different studies and, without --allow-partial, a missing trial,
//! naming it with the command that runs it again; trials whose fingerprints differ are flagged
//! in the table; and a stream trial whose raw reference ran in another shard gets its
//! raw_mb_s and raw_fraction at merge time (root: image stacks).

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// A dvr study of three directory stacks and two repeats (six trials), `samples` per stream.
/// Its window is longer than any trial samples, so every trial warns the same way: a 20 ms
/// window against about as long a sampling made the warning, and the report's Warnings
/// section, come and go between runs.
fn small_study(work: &Path, samples: u32) -> PathBuf {
    let data = work.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let study = work.join(format!("small-{samples}.toml"));
    std::fs::write(
        &study,
        format!(
            "name = \"small\"\nrepeats = 2\n[[workloads]]\nkind = \"dvr\"\nset = {{ samples = \"{samples}\", region_size = \"2MiB\", io_size = \"64KiB\", window = \"10s\" }}\n{}",
            dir_stacks(&data, &["a", "b", "c"])
        ),
    )
    .unwrap();
    study
}

/// The results directories directly under `dir`, sorted.
fn results_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("manifest.json").exists())
        .collect();
    v.sort();
    v
}

/// Runs the three shards of `study` into `<work>/shards`; their results directories.
fn run_shards(work: &Path, study: &Path) -> Vec<PathBuf> {
    let shards = work.join("shards");
    for k in 1..=3 {
        iotrial(work)
            .arg("study")
            .arg(study)
            .args(["--shard", &format!("{k}/3"), "--out"])
            .arg(&shards)
            .assert()
            .success();
    }
    results_dirs(&shards)
}

/// `iotrial merge OUT DIRS... EXTRA`: its exit status and its output (stdout then stderr).
fn merge(work: &Path, out: &Path, dirs: &[PathBuf], extra: &[&str]) -> (i32, String) {
    let o = iotrial(work)
        .arg("merge")
        .arg(out)
        .args(dirs)
        .args(extra)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code().unwrap_or(-1), text)
}

/// report.md's headings, and each verdict table's heading row and first column.
fn report_shape(root: &Path) -> (Vec<String>, Vec<String>) {
    let md = std::fs::read_to_string(root.join("report.md")).unwrap();
    let headings = md
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(String::from)
        .collect();
    let mut table = Vec::new();
    let mut in_verdict = false;
    for l in md.lines() {
        if l.starts_with("## ") {
            in_verdict = l.ends_with(": verdict");
        } else if l.starts_with("### ") {
            in_verdict = false;
        } else if in_verdict && l.starts_with('|') {
            // The stack's name; the best one (★) and those sharing the top (☆) are
            // measured, not the shape.
            let first = l.split(" | ").next().unwrap();
            table.push(first.replace("★ ", "").replace("☆ ", ""));
        }
    }
    // The heading row in full: the same columns in the same order.
    let head = md.lines().find(|l| l.starts_with("| stack |")).unwrap();
    table.push(head.to_string());
    (headings, table)
}

#[test]
fn shards_merge_to_the_whole_study() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let study = small_study(w, 16);
    let listed = iotrial(w)
        .arg("study")
        .arg(&study)
        .arg("--list-trials")
        .assert()
        .success();
    let listed = String::from_utf8_lossy(&listed.get_output().stdout).into_owned();
    let ids: Vec<String> = listed
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().last().unwrap().to_string())
        .collect();
    assert_eq!(
        ids,
        ["a/dvr/r1", "b/dvr/r1", "c/dvr/r1", "a/dvr/r2", "b/dvr/r2", "c/dvr/r2"],
        "round-robin: repeat 1 of every stack before repeat 2 of any"
    );

    let shards = run_shards(w, &study);
    assert_eq!(shards.len(), 3);
    let mut in_shards: Vec<String> = Vec::new();
    for (k, dir) in shards.iter().enumerate() {
        assert!(
            dir.to_string_lossy()
                .ends_with(&format!("shard{}of3", k + 1)),
            "{}",
            dir.display()
        );
        let m = read_json(&dir.join("manifest.json"));
        assert_eq!(m["options"]["shard"]["index"], k + 1);
        for t in m["trials"].as_array().unwrap() {
            assert_eq!(t["status"], "done");
            let doc = read_json(&dir.join(t["path"].as_str().unwrap()).join("result.json"));
            assert_eq!(doc["trial"]["id"], t["id"]);
            assert_eq!(doc["trial"]["digest"], t["digest"]);
            assert_eq!(doc["trial"]["study_hash"], m["study_hash"]);
            assert!(doc["fingerprint"]["host"]["kernel"].is_string());
            in_shards.push(t["id"].as_str().unwrap().to_string());
        }
    }
    in_shards.sort();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(in_shards, sorted, "every trial in exactly one shard");
    // A shard resumed when all its trials are done runs nothing.
    let again = iotrial(w)
        .arg("study")
        .arg(&study)
        .args(["--shard", "auto", "--resume", "--out"])
        .arg(w.join("shards"))
        .env("SLURM_ARRAY_TASK_ID", "1")
        .env("SLURM_ARRAY_TASK_COUNT", "3")
        .assert()
        .success();
    let said = String::from_utf8_lossy(&again.get_output().stdout).into_owned();
    assert!(
        said.contains("(shard 2/3 of small): 0 trials to run"),
        "{said}"
    );
    assert_eq!(results_dirs(&w.join("shards")).len(), 3);

    let whole = w.join("whole");
    study_succeeds(w, &study, &whole);
    let whole = results_dirs(&whole).pop().unwrap();
    let merged = w.join("merged");
    let (code, said) = merge(w, &merged, &shards, &[]);
    assert_eq!(code, 0, "{said}");
    assert!(said.contains("6 trials from 3 directories"), "{said}");

    let (m, u) = (
        read_json(&merged.join("manifest.json")),
        read_json(&whole.join("manifest.json")),
    );
    assert_eq!(m["study_hash"], u["study_hash"]);
    assert_eq!(m["resolved"], u["resolved"]);
    let rows = |m: &Value| -> Vec<(Value, Value, Value, Value)> {
        m["trials"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["id"].clone(),
                    t["status"].clone(),
                    t["path"].clone(),
                    t["digest"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(
        rows(&m),
        rows(&u),
        "the same trials, done, in the same places"
    );
    assert_eq!(m["merged_from"].as_array().unwrap().len(), 3);
    for t in m["trials"].as_array().unwrap() {
        assert!(merged
            .join(t["path"].as_str().unwrap())
            .join("samples.csv")
            .exists());
    }
    assert_eq!(
        report_shape(&merged),
        report_shape(&whole),
        "the same report sections and verdict table"
    );
    let md = std::fs::read_to_string(merged.join("report.md")).unwrap();
    assert!(md.contains("### Where each trial ran"), "{md}");
    assert!(!md.contains("other hardware"), "one machine: no warning");
}

#[test]
fn merge_refuses_other_studies_and_missing_trials() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let study = small_study(w, 8);
    let shards = run_shards(w, &study);
    // A study with other parameters is another study.
    let other = small_study(&w.join("other"), 9);
    iotrial(w)
        .arg("study")
        .arg(&other)
        .args(["--shard", "1/3", "--out"])
        .arg(w.join("other-out"))
        .assert()
        .success();
    let foreign = results_dirs(&w.join("other-out")).pop().unwrap();
    let mut dirs = shards.clone();
    dirs.push(foreign);
    let (code, said) = merge(w, &w.join("m1"), &dirs, &[]);
    assert_eq!(code, 2, "{said}");
    assert!(
        said.contains("hold different studies") && said.contains("parameter samples"),
        "{said}"
    );
    assert!(!w.join("m1").exists());

    // Shard 3 left out: its trials (positions 2 and 5) are missing.
    let (code, said) = merge(w, &w.join("m2"), &shards[..2], &[]);
    assert_eq!(code, 1, "{said}");
    for id in ["c/dvr/r1", "c/dvr/r2"] {
        assert!(said.contains(&format!("missing {id}")), "{said}");
        assert!(said.contains(&format!("--trial {id} --out")), "{said}");
    }
    assert!(said.contains("nothing written"), "{said}");
    assert!(!w.join("m2").exists());

    let (code, said) = merge(w, &w.join("m3"), &shards[..2], &["--allow-partial"]);
    assert_eq!(code, 0, "{said}");
    let m = read_json(&w.join("m3/manifest.json"));
    let pending: Vec<&str> = m["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["status"] == "pending")
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(pending, ["c/dvr/r1", "c/dvr/r2"]);
    assert!(w.join("m3/report.md").exists());

    // The command it names runs the trial; merging again with its directory completes it,
    // replacing the partial merge.
    let line = said
        .lines()
        .find(|l| l.contains("--trial c/dvr/r1"))
        .unwrap();
    let args: Vec<&str> = line
        .split("run it again: iotrial ")
        .nth(1)
        .unwrap()
        .split(" (then")
        .next()
        .unwrap()
        .split(' ')
        .collect();
    iotrial(w).args(&args).assert().success();
    let rerun = results_dirs(&w.join("shards"))
        .into_iter()
        .find(|d| d.to_string_lossy().contains("-trial-"))
        .unwrap();
    let (code, said) = merge(
        w,
        &w.join("m3"),
        &[w.join("m3"), rerun.clone()],
        &["--allow-partial"],
    );
    assert_eq!(
        code, 2,
        "a merge into one of its own inputs is refused: {said}"
    );
    let mut dirs = shards[..2].to_vec();
    dirs.push(rerun);
    let (code, said) = merge(w, &w.join("m3"), &dirs, &["--allow-partial"]);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("missing c/dvr/r2") && !said.contains("missing c/dvr/r1"),
        "{said}"
    );

    // A trial finished twice is named.
    let mut twice = shards.clone();
    twice.push(shards[0].clone());
    let (code, said) = merge(w, &w.join("m4"), &twice, &[]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("duplicate a/dvr/r1"), "{said}");
}

#[test]
fn differing_hardware_is_flagged_in_the_table() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let study = small_study(w, 8);
    let shards = run_shards(w, &study);
    // Shard 3 (c/dvr/r1, c/dvr/r2) as if it ran on another machine, with another kernel.
    let m = read_json(&shards[2].join("manifest.json"));
    for t in m["trials"].as_array().unwrap() {
        let p = shards[2]
            .join(t["path"].as_str().unwrap())
            .join("result.json");
        let mut doc = read_json(&p);
        let host = &mut doc["fingerprint"]["host"];
        host["hostname"] = "node7".into();
        host["machine_id"] = "0123456789abcdef0123456789abcdef".into();
        host["kernel"] = "6.1.0-28-amd64".into();
        std::fs::write(&p, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    }
    let merged = w.join("merged");
    let (code, said) = merge(w, &merged, &shards, &[]);
    assert_eq!(code, 0, "{said}");
    let md = std::fs::read_to_string(merged.join("report.md")).unwrap();
    assert!(md.contains(" c (other hardware ⚠) |"), "{md}");
    assert!(
        !md.contains(" a (other hardware") && !md.contains(" b (other hardware"),
        "{md}"
    );
    assert!(
        md.contains("may measure the machines, not the stacks: on node7 against a on")
            && md.contains("vs 6.1.0-28-amd64"),
        "{md}"
    );
    assert!(md.contains("| c r1 | node7 | 01234567 |"), "{md}");
    assert!(
        said.contains("(other hardware ⚠)"),
        "the terminal table too: {said}"
    );
}

#[test]
fn a_raw_reference_in_another_shard_is_applied_at_merge_time() {
    if !ready_for_stacks(
        "a_raw_reference_in_another_shard_is_applied_at_merge_time",
        &["mkfs.ext4"],
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let study = w.join("raw.toml");
    std::fs::write(
        &study,
        r#"name = "rawref"
device = "image:size=256MiB"
[[workloads]]
kind = "stream"
set = { writers = "2", bytes = "16MiB", interval = "100ms", settle_window = "500ms" }
[[stacks]]
name = "raw"
layout = "regions"
baseline = true
[[stacks]]
name = "ext4"
fs = "ext4"
"#,
    )
    .unwrap();
    let shards = w.join("shards");
    for k in 1..=2 {
        iotrial(w)
            .arg("study")
            .arg(&study)
            .args(["--shard", &format!("{k}/2"), "--out"])
            .arg(&shards)
            .assert()
            .success();
    }
    let dirs = results_dirs(&shards);
    let alone = dirs[1].join("trials/ext4/stream/r1/result.json");
    let before = std::fs::read_to_string(&alone).unwrap();
    let shard_doc: Value = serde_json::from_str(&before).unwrap();
    assert_eq!(
        shard_doc["params"]["raw_mb_s"], 0.0,
        "no reference in its shard"
    );
    assert!(shard_doc["verdict"]["raw_fraction"].is_null());

    let merged = w.join("merged");
    let (code, said) = merge(w, &merged, &dirs, &[]);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains("derived again against their reference: ext4/stream/r1"),
        "{said}"
    );
    let raw = read_json(&merged.join("trials/raw/stream/r1/result.json"));
    let ext4 = read_json(&merged.join("trials/ext4/stream/r1/result.json"));
    let v = &raw["verdict"];
    let raw_level = v["settled_mb_s"]
        .as_f64()
        .or(v["total_mb_s"].as_f64())
        .unwrap();
    let raw_mb_s = ext4["params"]["raw_mb_s"].as_f64().unwrap();
    // The raw level over the same one device, or its device's best settled rate when more.
    let peak = figures::peak_device_write_mb_s(&merged.join("trials/raw/stream/r1"), &raw);
    assert!(
        raw_mb_s >= raw_level * (1.0 - 1e-9) && raw_mb_s <= raw_level.max(peak) * (1.0 + 1e-9),
        "{raw_mb_s} vs {raw_level} (device peak {peak})"
    );
    let e = &ext4["verdict"];
    let level = e["settled_mb_s"]
        .as_f64()
        .or(e["total_mb_s"].as_f64())
        .unwrap();
    let fraction = e["raw_fraction"].as_f64().unwrap();
    assert!((fraction - level / raw_mb_s).abs() < 1e-9, "{fraction}");
    assert_eq!(e["raw_mb_s"].as_f64(), Some(raw_mb_s));
    let warnings = ext4["warnings"].as_array().unwrap();
    assert!(
        warnings
            .last()
            .unwrap()
            .as_str()
            .unwrap()
            .starts_with("raw figures are relative to stack raw"),
        "{warnings:?}"
    );
    // The shard's own file is untouched (the merge links, then replaces, never rewrites).
    assert_eq!(std::fs::read_to_string(&alone).unwrap(), before);

    // One run of the whole study judges ext4 against raw the same way.
    study_succeeds(w, &study, &w.join("whole"));
    let whole = results_dirs(&w.join("whole")).pop().unwrap();
    let doc = read_json(&whole.join("trials/ext4/stream/r1/result.json"));
    assert!(doc["verdict"]["raw_fraction"].as_f64().is_some());
    // `impossible` is there only when the figure is (buffered writes above the raw level).
    let keys = |d: &Value| -> Vec<String> {
        let v = d["verdict"].as_object().unwrap();
        v.keys().filter(|k| *k != "impossible").cloned().collect()
    };
    assert_eq!(keys(&doc), keys(&ext4));
    assert!(loops_under(w).is_empty() && mounts_under(w).is_empty());
}
