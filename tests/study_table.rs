//! The end-of-study comparison table: one row per stack, means over repeats, the best value
//! of each column marked by its direction, pass/fail, baselines labelled and never marked, and
//! stacks that did not run listed.

use iotrial::study::results::ResultsDir;
use iotrial::study::table::{Comparison, NotRun, TrialFigures};
use iotrial::study::{builtin, expand, Manifest, Options, Status};
use serde_json::json;

fn result(mbit: f64, preroll: f64, meets: bool) -> serde_json::Value {
    json!({"verdict": {
        "record_mbit_guaranteed": mbit,
        "playback_preroll_s": preroll,
        "record_fairness_jain": 0.99,
        "playback_fairness_jain": null,
        "record_completion_spread": 1.2,
        "playback_completion_spread": 1.5,
        "target_mbit": 19.4,
        "meets_target": meets,
    }})
}

fn fig(stack: &str, mbit: f64, preroll: f64, meets: bool) -> TrialFigures {
    TrialFigures::from_result(stack, "dvr", "dvr", &result(mbit, preroll, meets))
}

#[test]
fn figures_come_from_result_json() {
    let f = fig("ext4", 12.3, 1.3, false);
    assert_eq!(f.figures[0].key, "record_mbit_guaranteed");
    assert_eq!(f.figures[0].value, Some(12.3));
    assert_eq!(f.figures[3].value, None);
    assert_eq!(f.meets_target, Some(false));
}

#[test]
fn best_is_marked_by_direction_and_repeats_are_averaged() {
    let c = Comparison {
        stacks: vec!["raw".into(), "ext4".into(), "xfs".into()],
        baselines: vec![],
        results: vec![
            fig("raw", 32.0, 1.5, true),
            fig("raw", 30.0, 1.5, true),
            fig("ext4", 12.3, 1.3, false),
            fig("ext4", 20.0, 1.1, true),
        ],
        not_run: vec![NotRun {
            stack: "xfs".into(),
            trial: "xfs/dvr/r1".into(),
            status: Status::Skipped,
            reason: "needs root (mkfs, mount)".into(),
        }],
    };
    let (rows, repeats) = c.rows("dvr");
    assert_eq!(repeats, 2);
    assert_eq!(rows.headings[1], "record guaranteed\nMbit/s");
    assert_eq!(rows.headings.last().unwrap(), "target");
    assert_eq!(rows.rows.len(), 2, "xfs did not run");
    // Higher is better for bitrate, lower for pre-roll.
    assert_eq!(rows.rows[0][1], "31.0 *");
    assert_eq!(rows.rows[1][1], "16.1");
    assert_eq!(rows.rows[0][2], "1.50");
    assert_eq!(rows.rows[1][2], "1.20 *");
    // No mark when every stack has the same value; a column with no values is blank.
    assert_eq!(rows.rows[0][3], "0.990");
    assert_eq!(rows.rows[1][3], "0.990");
    assert_eq!(rows.rows[0][4], "-");
    assert_eq!(rows.rows[0][7], "pass");
    assert_eq!(rows.rows[1][7], "FAIL 1/2");
    let text = c.render();
    assert!(text.contains("means over 2 repeats"), "{text}");
    assert!(
        text.contains("skipped xfs: needs root (mkfs, mount)"),
        "{text}"
    );
}

#[test]
fn table_from_a_results_directory() {
    let out = tempfile::tempdir().unwrap();
    let r = ResultsDir::create(out.path(), "dvr").unwrap();
    let opts = Options {
        only: vec!["raw-partitions,xfs".into()],
        ..Options::default()
    };
    let exp = expand(&builtin::load("dvr").unwrap(), &opts).unwrap();
    let mut m = Manifest::create(&r, &exp).unwrap();
    let tmp = r.begin_trial("raw-partitions", "dvr", 1).unwrap();
    std::fs::write(tmp.join("result.json"), result(32.0, 1.5, true).to_string()).unwrap();
    r.commit_trial(&tmp, "raw-partitions", "dvr", 1).unwrap();
    m.update(&r.root, "raw-partitions/dvr/r1", Status::Done, None)
        .unwrap();
    m.update(
        &r.root,
        "xfs/dvr/r1",
        Status::Failed,
        Some("mkfs.xfs not found".into()),
    )
    .unwrap();
    let c = Comparison::from_results(&r.root, &m).unwrap();
    let text = c.render();
    assert!(
        text.contains("raw-partitions") && text.contains("32.0"),
        "{text}"
    );
    assert!(
        !text.contains("32.0 *"),
        "one stack: nothing to mark\n{text}"
    );
    assert!(text.contains("failed xfs: mkfs.xfs not found"), "{text}");
}

#[test]
fn baseline_with_the_best_values_is_labelled_not_starred() {
    let out = tempfile::tempdir().unwrap();
    let r = ResultsDir::create(out.path(), "dvr").unwrap();
    let opts = Options {
        only: vec!["raw-partitions,xfs,host-dir".into()],
        ..Options::default()
    };
    let exp = expand(&builtin::load("dvr").unwrap(), &opts).unwrap();
    let mut m = Manifest::create(&r, &exp).unwrap();
    // host-dir, the dvr study's baseline, has the best value in every column.
    for (stack, mbit, preroll) in [
        ("raw-partitions", 30.0, 1.5),
        ("xfs", 20.0, 1.8),
        ("host-dir", 90.0, 0.2),
    ] {
        let tmp = r.begin_trial(stack, "dvr", 1).unwrap();
        let doc = result(mbit, preroll, true).to_string();
        std::fs::write(tmp.join("result.json"), doc).unwrap();
        r.commit_trial(&tmp, stack, "dvr", 1).unwrap();
        m.update(&r.root, &format!("{stack}/dvr/r1"), Status::Done, None)
            .unwrap();
    }
    let c = Comparison::from_results(&r.root, &m).unwrap();
    assert_eq!(c.baselines, ["host-dir"]);
    let (rows, _) = c.rows("dvr");
    assert_eq!(rows.rows[0][..3], ["raw-partitions", "30.0 *", "1.50 *"]);
    assert_eq!(rows.rows[1][..3], ["xfs", "20.0", "1.80"]);
    assert_eq!(rows.rows[2][..3], ["host-dir (baseline)", "90.0", "0.200"]);
    assert!(c.render().contains("baselines are not ranked"));
}
