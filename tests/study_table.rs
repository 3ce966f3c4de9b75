//! The end-of-study comparison table: one row per stack, means over repeats with their
//! confidence intervals and rank ranges, the best value of each column marked by its direction
//! only where the repeats separate it, pass/fail, baselines labelled and never marked, one
//! repeat crowning nobody, stacks that did not run listed, and a result.json whose verdict
//! lacks a figure refused rather than shown as "-".

use iotrial::result::{self, TrialResult};
use iotrial::study::results::table::StudyTable;
use iotrial::study::results::ResultsDir;
use iotrial::study::{builtin, expand, Manifest, Options, Status};
use serde_json::json;
use std::path::Path;

const LEGACY: &str = "tests/fixtures/results-0.1.0/trials/a/dvr-buffered/r1/result.json";

/// A real dvr result.json with its verdict's headline figures replaced.
fn doc(mbit: f64, preroll: f64, meets: bool) -> TrialResult {
    let mut d = result::read(Path::new(LEGACY)).unwrap();
    d.verdict["record_mbit_guaranteed"] = json!(mbit);
    d.verdict["playback_preroll_s"] = json!(preroll);
    d.verdict["record_fairness_jain"] = json!(0.99);
    d.verdict["playback_fairness_jain"] = json!(null);
    d.verdict["meets_target"] = json!(meets);
    d
}

/// A results directory of the built-in dvr study with `stacks` and `repeats`.
fn results(out: &Path, stacks: &str, repeats: u32) -> (ResultsDir, Manifest) {
    let r = ResultsDir::create(out, "dvr").unwrap();
    let mut study = builtin::load("dvr").unwrap();
    study.repeats = repeats;
    let opts = Options {
        only: vec![stacks.into()],
        ..Options::default()
    };
    let m = Manifest::create(&r, &expand(&study, &opts).unwrap()).unwrap();
    (r, m)
}

/// Writes a finished trial the way the runner does.
fn finish(r: &ResultsDir, m: &mut Manifest, stack: &str, rep: usize, d: &TrialResult) {
    let tmp = r.begin_trial(stack, "dvr", rep).unwrap();
    result::write(&tmp.join("result.json"), d).unwrap();
    r.commit_trial(&tmp, stack, "dvr", rep).unwrap();
    m.update(&r.root, &format!("{stack}/dvr/r{rep}"), Status::Done, None)
        .unwrap();
}

#[test]
fn best_is_marked_by_direction_and_repeats_are_averaged() {
    let out = tempfile::tempdir().unwrap();
    let (r, mut m) = results(out.path(), "raw-partitions,ext4,xfs", 3);
    for (rep, raw, ext4, preroll) in [
        (1, 32.0, 12.3, 1.3),
        (2, 30.0, 20.0, 1.1),
        (3, 31.0, 16.0, 1.2),
    ] {
        finish(&r, &mut m, "raw-partitions", rep, &doc(raw, 1.5, true));
        finish(&r, &mut m, "ext4", rep, &doc(ext4, preroll, rep != 1));
    }
    for rep in [1, 2, 3] {
        let id = format!("xfs/dvr/r{rep}");
        m.update(&r.root, &id, Status::Skipped, Some("needs root".into()))
            .unwrap();
    }
    let t = StudyTable::from_results(&r.root, &m).unwrap();
    let rows = t.tables[0]
        .1
        .rows_text(iotrial::present::verdict::Medium::Terminal);
    assert_eq!(rows.headings[1], "repeats");
    assert_eq!(rows.headings[2], "rank");
    assert_eq!(rows.headings[3], "record guaranteed\nMbit/s");
    assert_eq!(rows.rows.len(), 2, "xfs did not run");
    // Higher is better for bitrate, lower for pre-roll; t(0.975, 2) = 4.303.
    assert_eq!(rows.rows[0][0], "★ raw-partitions");
    assert_eq!(
        (rows.rows[0][2].as_str(), rows.rows[1][2].as_str()),
        ("1", "2")
    );
    assert_eq!(rows.rows[0][3], "31.0 ± 2.48 *");
    assert!(rows.rows[1][3].starts_with("16.1 ± "), "{:?}", rows.rows[1]);
    assert_eq!(rows.rows[0][4], "1.50 ± 0.000");
    assert!(rows.rows[1][4].starts_with("1.20 ± ") && rows.rows[1][4].ends_with(" *"));
    // Every stack has the same fairness: they tie, nothing to mark; a figure nobody has is
    // "-".
    assert_eq!(rows.rows[0][5], "0.990 ± 0.000");
    assert_eq!(rows.rows[0][6], "-");
    assert_eq!(rows.rows[0][9], "pass");
    assert_eq!(rows.rows[1][9], "met 2/3", "the report's wording");
    assert_eq!(rows.rows[0][10], "top mean");
    assert!(rows.rows[1][10].ends_with(", apart"), "{:?}", rows.rows[1]);
    let text = t.render();
    assert!(text.contains("mean over repeats"), "{text}");
    assert!(
        text.contains("★ raw-partitions: its record guaranteed is the highest"),
        "{text}"
    );
    assert!(text.contains("Holm"), "{text}");
    assert!(text.contains("skipped xfs: needs root"), "{text}");
}

#[test]
fn one_stack_is_shown_unranked() {
    let out = tempfile::tempdir().unwrap();
    let (r, mut m) = results(out.path(), "raw-partitions,xfs", 1);
    finish(&r, &mut m, "raw-partitions", 1, &doc(32.0, 1.5, true));
    m.update(
        &r.root,
        "xfs/dvr/r1",
        Status::Failed,
        Some("mkfs.xfs not found".into()),
    )
    .unwrap();
    let text = StudyTable::from_results(&r.root, &m).unwrap().render();
    assert!(
        text.contains("raw-partitions") && text.contains("32.0"),
        "{text}"
    );
    assert!(
        !text.contains("32.0 *"),
        "one stack: nothing to mark\n{text}"
    );
    assert!(text.contains("No stack is ranked"), "{text}");
    assert!(text.contains("failed xfs: mkfs.xfs not found"), "{text}");
}

#[test]
fn baseline_with_the_best_values_is_labelled_not_starred() {
    let out = tempfile::tempdir().unwrap();
    let (r, mut m) = results(out.path(), "raw-partitions,xfs,host-dir", 1);
    // host-dir, the dvr study's baseline, has the best value in every column.
    for (stack, mbit, preroll) in [
        ("raw-partitions", 30.0, 1.5),
        ("xfs", 20.0, 1.8),
        ("host-dir", 90.0, 0.2),
    ] {
        finish(&r, &mut m, stack, 1, &doc(mbit, preroll, true));
    }
    let t = StudyTable::from_results(&r.root, &m).unwrap();
    let rows = t.tables[0]
        .1
        .rows_text(iotrial::present::verdict::Medium::Terminal);
    // One repeat each: nothing is tested, so nobody is starred and no value is marked.
    assert_eq!(rows.rows[0][..3], ["raw-partitions", "30.0", "1.50"]);
    assert_eq!(rows.rows[1][..3], ["xfs", "20.0", "1.80"]);
    assert_eq!(rows.rows[2][..3], ["host-dir (baseline)", "90.0", "0.200"]);
    let text = t.render();
    assert!(text.contains("never ranked"), "{text}");
    assert!(
        text.contains("raw-partitions has the highest mean record guaranteed, untested"),
        "the baseline's higher mean does not count\n{text}"
    );
}

#[test]
fn a_renamed_verdict_key_fails_instead_of_showing_a_dash() {
    let out = tempfile::tempdir().unwrap();
    let (r, mut m) = results(out.path(), "raw-partitions,xfs", 1);
    let mut d = doc(30.0, 1.5, true);
    let v = d.verdict.as_object_mut().unwrap();
    let x = v.remove("record_mbit_guaranteed").unwrap();
    v.insert("record_mbit".into(), x);
    finish(&r, &mut m, "raw-partitions", 1, &d);
    finish(&r, &mut m, "xfs", 1, &doc(20.0, 1.8, true));
    let e = StudyTable::from_results(&r.root, &m)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("raw-partitions/dvr/r1/result.json") && e.contains("record_mbit"),
        "{e}"
    );
}

#[test]
fn a_study_in_real_time_shows_the_buffers_columns_and_not_the_hammering_ones() {
    let out = tempfile::tempdir().unwrap();
    let (r, mut m) = results(out.path(), "raw-partitions,ext4", 1);
    for (stack, peak, dropped) in [("raw-partitions", 12.5, 0.0), ("ext4", 100.0, 3.2)] {
        let mut d = doc(0.0, 0.0, dropped == 0.0);
        for k in [
            "record_mbit_guaranteed",
            "playback_preroll_s",
            "record_fairness_jain",
            "playback_fairness_jain",
            "record_completion_spread",
            "playback_completion_spread",
        ] {
            d.verdict[k] = json!(null);
        }
        d.verdict["record_buffer_peak_pct"] = json!(peak);
        d.verdict["overflow_mb"] = json!(dropped);
        d.verdict["overflow_events"] = json!(if dropped > 0.0 { 2 } else { 0 });
        d.verdict["underruns"] = json!(0);
        d.verdict["stall_s"] = json!(0.0);
        d.verdict["playback_startup_s"] = json!(0.4);
        d.verdict["playback_buffer_low_pct"] = json!(60.0);
        finish(&r, &mut m, stack, 1, &d);
    }
    let t = StudyTable::from_results(&r.root, &m).unwrap();
    let rows = t.tables[0]
        .1
        .rows_text(iotrial::present::verdict::Medium::Terminal);
    // The real-time figures, the fullest record buffer first (it ranks), then the monitors'.
    assert_eq!(rows.headings[1], "record buffer peak\n%");
    assert!(
        !rows.headings.iter().any(|h| h.contains("guaranteed")),
        "{:?}",
        rows.headings
    );
    assert_eq!(rows.rows[0][0], "raw-partitions", "one repeat: no ★");
    assert!(t
        .render()
        .contains("raw-partitions has the lowest mean record buffer peak, untested"));
    assert_eq!(rows.rows[1][2], "3.20");
    assert!(
        rows.rows[1].iter().any(|c| c == "FAIL"),
        "{:?}",
        rows.rows[1]
    );
}
