//! Capacity searches for real: on an emulated hard disk (root) the search brackets its edge, the
//! count that passes (both its runs) and the one above that fails (one or both of its runs, the
//! verdict saying which), and lands near what the hammering run's guarantee predicts; in a study (on a directory, no root) each stack's trial is
//! a search whose table shows the capacity beside the hammering guarantee; a range that cannot
//! hold is refused where the study file says it; the built-in capacity studies are seed 000's
//! and seed 001's stacks.

mod common;

use common::*;
use iotrial::study::{builtin, expand, Options};
use serde_json::Value;
use std::path::Path;

fn search_dir(out: &Path) -> std::path::PathBuf {
    let run = std::fs::read_dir(out)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let stack = std::fs::read_dir(run.join("trials"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let workload = std::fs::read_dir(stack).unwrap().next().unwrap().unwrap();
    workload.path().join("r1")
}

#[test]
fn on_an_emulated_hdd_the_search_brackets_its_edge_near_the_hammering_estimate() {
    if !ready_to_emulate(
        "on_an_emulated_hdd_the_search_brackets_its_edge_near_the_hammering_estimate",
        &["losetup"],
    ) {
        return;
    }
    let (work, out) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    // Seed 000's drive's twin, at twice its speed, raw regions: recorders at 19.4 Mbit/s with
    // 5 s buffers beside two players with 1.5 s of pre-roll, 20 s runs.
    let a = iotrial(work.path())
        .args(["capacity", "dvr", "--json", "--layout", "regions"])
        .args(["--target", "emu:hdd,drive=wd80emaz,size=4GiB,scale=2"])
        .args(["--scheduler", "mq-deadline"])
        .arg("--out")
        .arg(out.path())
        .args(["--set", "region_size=0", "--set", "samples=48"])
        .args(["--set", "duration=20s"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(doc["kind"], "capacity");
    let v = &doc["verdict"];
    let n = v["capacity"].as_f64().unwrap();
    // N passed both its runs; N + 1 is the first failing count, run twice too. Whether it
    // failed both (a confirmed edge) or one (a soft edge: near the edge a stall is a matter
    // of one read's luck) the verdict says, and warns when it is soft.
    assert_eq!(v["first_failing"].as_f64(), Some(n + 1.0), "{v}");
    assert_eq!(v["confirm"], 2);
    assert_eq!(v["capacity_runs"], 2, "{v}");
    let runs = |value: f64| -> Vec<bool> {
        let p = v["probes"].as_array().unwrap().iter();
        p.filter(|p| p["value"] == value)
            .map(|p| p["passed"].as_bool().unwrap())
            .collect()
    };
    assert_eq!(runs(n), [true, true], "{v}");
    let above = runs(n + 1.0);
    let failed = above.iter().filter(|&&p| !p).count() as u64;
    assert_eq!(above.len(), 2, "{v}");
    assert!(failed >= 1, "{v}");
    assert_eq!(v["first_failing_failed"].as_u64(), Some(failed));
    assert_eq!(v["confirmed"], failed == 2, "{v}");
    let soft = doc["warnings"]
        .to_string()
        .contains("the edge is not confirmed");
    assert_eq!(soft, failed < 2, "{}", doc["warnings"]);
    let what = v["failure"]["what"].as_str().unwrap();
    assert!(
        what.starts_with("overflow") || what.starts_with("underrun"),
        "{what}"
    );
    // The hammering run's 8 recorders were each guaranteed G Mbit/s: 8 x G / 19.4 recorders.
    let g = v["hammer_guarantee_mbit"].as_f64().unwrap();
    let estimate = v["hammer_estimate"].as_f64().unwrap();
    assert!((estimate - 8.0 * g / 19.4).abs() < 1e-6, "{v}");
    let ratio = n / estimate;
    eprintln!(
        "capacity {n} (then {} failed {failed} of 2); G {g:.1} Mbit/s, estimate {estimate:.2}, ratio {ratio:.2}; failure: {what}",
        n + 1.0
    );
    assert!(
        (0.5..=2.0).contains(&ratio),
        "capacity {n}, estimate {estimate}"
    );
    // Every run's own trial is kept beside the search's result.
    let dir = search_dir(out.path());
    assert!(dir.join("probes/hammer/result.json").exists());
    for p in v["probes"].as_array().unwrap() {
        let run = dir.join(p["dir"].as_str().unwrap());
        let probe = iotrial::result::read(&run.join("result.json")).unwrap();
        assert_eq!(probe.params["pacing"], "realtime");
        assert_eq!(
            probe.params["recorders"],
            p["value"].as_f64().unwrap() as u64
        );
        assert!(run.join("timeseries.csv").exists() && run.join("samples.csv").exists());
    }
    assert_cleaned_up(work.path(), &[]);
}

/// A study on a directory: dvr with a capacity search of at most two recorders.
const STUDY: &str = r#"
name = "cap"
repeats = 1

[[workloads]]
kind = "dvr"
set = { region_size = "4MiB", io_size = "64KiB", samples = "20", duration = "1s", bitrate = "4", preroll = "1s" }
capacity = { vary = "recorders", max = 2 }

[[stacks]]
name = "here"
devices = ["dir:TARGET"]
"#;

#[test]
fn in_a_study_each_stack_is_searched_and_the_table_shows_capacity_beside_the_guarantee() {
    let (work, target) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let file = work.path().join("cap.toml");
    let text = STUDY.replace("TARGET", &target.path().display().to_string());
    std::fs::write(&file, text).unwrap();
    let out = work.path().join("out");
    let a = iotrial(work.path())
        .args(["study"])
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(text.contains("here/dvr/r1: hammering"), "{text}");
    // Every value up to max passed, so there is no first failing value ("-").
    for column in [
        "capacity",
        "first failing",
        "hammer guarantee",
        "hammer estimate",
    ] {
        assert!(text.contains(column), "{column}: {text}");
    }
    assert!(text.contains("capacity at least 2 recorders"), "{text}");
    let dir = search_dir(&out);
    let doc = iotrial::result::read(&dir.join("result.json")).unwrap();
    assert_eq!(doc.kind, "capacity");
    assert!(dir.join("probes/hammer/samples.csv").exists());
    let root = dir.ancestors().nth(4).unwrap();
    let html = std::fs::read_to_string(root.join("report.html")).unwrap();
    assert!(
        html.contains("Every run of the search"),
        "the probes' table"
    );
    // study.toml keeps the search, so running it again runs the same study.
    let again = builtin::load(root.join("study.toml").to_str().unwrap()).unwrap();
    assert_eq!(
        again.workloads[0].capacity.as_ref().unwrap().vary,
        "recorders"
    );
}

#[test]
fn a_range_that_cannot_hold_is_refused_where_the_study_file_says_it() {
    let work = tempfile::tempdir().unwrap();
    for (capacity, needle) in [
        (
            r#"{ vary = "recorders", min = 8, max = 4 }"#,
            "cannot hold: min 8 is above max 4",
        ),
        (
            r#"{ vary = "recorders", max = 4000 }"#,
            "cannot hold: at max = 4000 recorders",
        ),
        (
            r#"{ vary = "samples" }"#,
            "allowed: recorders, players, bitrate",
        ),
        (
            r#"{ vary = "recorders", confrim = 3 }"#,
            "unknown field `confrim`",
        ),
    ] {
        let text = STUDY
            .replace("TARGET", "/tmp")
            .replace(r#"{ vary = "recorders", max = 2 }"#, capacity);
        let file = work.path().join("bad.toml");
        std::fs::write(&file, text).unwrap();
        let o = iotrial(work.path())
            .args(["study"])
            .arg(&file)
            .args(["--dry-run"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{capacity}: {err}");
        assert!(
            err.contains("bad.toml:8:12: workloads[0].capacity") && err.contains(needle),
            "{capacity}: {err}"
        );
    }
}

#[test]
fn the_built_in_capacity_studies_are_the_seeds_stacks() {
    let dvr = builtin::load("dvr-capacity").unwrap();
    let seed = builtin::load("dvr").unwrap();
    // Seed 000's six stacks as the dvr study has them (its host-directory baseline aside).
    assert_eq!(dvr.stacks[..], seed.stacks[..6]);
    let w = &dvr.workloads[0];
    assert_eq!(w.capacity.as_ref().unwrap().vary, "recorders");
    let exp = expand(&dvr, &Options::default()).unwrap();
    for t in &exp.trials {
        assert_eq!(t.stack.devices, ["emu:hdd,drive=wd80emaz"]);
        let p = &t.params;
        assert_eq!(
            (p.f64("bitrate"), p.text("buffer")),
            (19.4, "5s".to_string())
        );
        assert_eq!(
            (p.u64("players"), p.text("preroll")),
            (2, "1.5s".to_string())
        );
        assert_eq!(p.u64("region_size"), 0, "the streams split the disk");
    }
    let quick = expand(
        &dvr,
        &Options {
            quick: true,
            ..Options::default()
        },
    )
    .unwrap();
    let names: Vec<&str> = quick.trials.iter().map(|t| t.stack.name.as_str()).collect();
    assert_eq!(names, ["raw-partitions", "ext4", "xfs"]);
    assert!(quick.trials.iter().all(|t| t.capacity.is_some()));
    // study.toml keeps the search: resolved, written and read back, it is the same study.
    for exp in [&exp, &quick] {
        let text = exp.study.to_toml();
        let back =
            iotrial::study::plan::file::parse(&text, &iotrial::study::Origin::File("s".into()))
                .unwrap();
        assert_eq!(back, exp.study, "{text}");
    }

    let cams = builtin::load("cameras").unwrap();
    let streaming = builtin::load("streaming").unwrap();
    for s in &cams.stacks {
        let twin = streaming.stacks.iter().find(|t| t.name == s.name).unwrap();
        assert_eq!(
            (&s.devices, &s.fs, &s.md),
            (&twin.devices, &twin.fs, &twin.md)
        );
    }
    let exp = expand(&cams, &Options::default()).unwrap();
    let p = &exp.trials[0].params;
    assert_eq!(
        (p.f64("bitrate"), p.text("pacing")),
        (100.0, "max".to_string())
    );
    assert_eq!(cams.workloads[0].capacity.as_ref().unwrap().vary, "writers");
}
