//! The generator of docs/seeds.md's tables (bench/seeds): a tiny results directory made here (a
//! dvr study of seed 000's stacks, three repeats each, figures chosen so the groups are known)
//! is read into a summary and rendered, to check the extraction, the tables, the findings and
//! the conclusion; and the parts (the seed's ordering, unit conversions, the bootstrap, the
//! blocks) are checked on their own. tests/seed_page.rs checks the page itself.

#[allow(dead_code)]
#[path = "../bench/seeds/mod.rs"]
mod seeds;

use seeds::blocks;
use seeds::bootstrap::agreement;
use seeds::claims::{combine, conclusion, Outcome::*};
use seeds::compare::{Convert, Figure};
use serde_json::{json, Value as Json};
use std::cmp::Ordering::*;
use std::path::Path;

/// Writes `rel` under `root`.
fn put(root: &Path, rel: &str, doc: &Json) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, serde_json::to_string_pretty(doc).unwrap()).unwrap();
}

/// A dvr trial's result.json with record guarantee `mbit` and pre-roll `preroll`.
fn trial(stack: &str, repeat: u32, mbit: f64, preroll: f64, device: &str) -> Json {
    let window = 8.388608 / mbit * 1e3;
    let stream = |name: &str, role: &str, elapsed: f64, mean: f64, max: f64| {
        json!({"name": name, "role": role, "elapsed_s": elapsed,
               "lat_ms": {"mean": mean, "max": max},
               "window_peak_ms": if role == "record" { Json::from(window) } else { Json::Null }})
    };
    json!({
        "format_version": 2,
        "iotrial_version": "0.1.0",
        "workload": "dvr",
        "kind": "dvr",
        "params": {"samples": 64, "io_size": 1048576, "region_size": 377487360, "window": 5.0, "playback_ios": 2},
        "target": {"spec": device, "layout": "files", "direct_io": true, "backend": "psync"},
        "stack": {"name": stack, "emulated": [{"model_stats": {"flushes": 10 + repeat}}]},
        "time_scale": 1.0,
        "started_utc": "2026-11-29T03:24:04Z",
        "duration_s": 1.0,
        "warnings": [],
        "phases": [],
        "streams": [
            stream("record0", "record", 30.0, window * 0.9, window * 2.0),
            stream("playback0", "playback", 60.0, 400.0 + f64::from(repeat), 750.0),
        ],
        "verdict": {
            "record_mbit_guaranteed": mbit, "playback_preroll_s": preroll,
            "record_fairness_jain": 1.0, "playback_fairness_jain": 1.0,
            "record_completion_spread": 1.0, "playback_completion_spread": 1.0,
            "target_mbit": 19.4, "meets_target": mbit >= 19.4
        }
    })
}

/// Seed 000's stacks with three repeats each, and a baseline; `zfs` skipped.
const STACKS: &[(&str, [f64; 3])] = &[
    ("raw-partitions", [42.0, 42.2, 41.9]),
    ("ext4", [20.0, 20.3, 19.9]),
    ("ext4-noatime", [21.5, 21.7, 21.4]),
    ("ext4-writeback", [21.6, 21.4, 21.7]),
    ("ext4-commit1", [25.0, 25.3, 24.9]),
    ("xfs", [38.0, 37.6, 38.3]),
    ("host-dir", [60.0, 61.0, 59.0]),
];

fn results(root: &Path, study: &str) {
    let mut trials = Vec::new();
    for r in 1..=3u32 {
        for (stack, mbit) in STACKS {
            let device = if *stack == "host-dir" {
                "dir:/var/tmp"
            } else {
                "emu:hdd,drive=wd80emaz,size=4GiB"
            };
            let path = format!("trials/{stack}/dvr/r{r}");
            let preroll = 1.5 + f64::from(r) / 100.0;
            put(
                root,
                &format!("{path}/result.json"),
                &trial(stack, r, mbit[r as usize - 1], preroll, device),
            );
            trials.push(json!({"id": format!("{stack}/dvr/r{r}"), "stack": stack, "workload": "dvr", "kind": "dvr",
                "repeat": r, "status": "done", "path": path}));
        }
        trials.push(json!({"id": format!("zfs/dvr/r{r}"), "stack": "zfs", "workload": "dvr", "kind": "dvr",
            "repeat": r, "status": "skipped", "reason": "no zfs module in this kernel", "path": format!("trials/zfs/dvr/r{r}")}));
    }
    put(
        root,
        "manifest.json",
        &json!({
            "format": 1, "study": study, "study_hash": "0123456789abcdef0123",
            "options": {"quick": true, "only": [], "device": null, "repeats": 3},
            "created_utc": "2026-11-29T03:24:04Z", "updated_utc": "2026-11-29T03:41:00Z",
            "host": {"kernel": "6.1.0-test", "cpus": 2, "iotrial_version": "0.1.0"},
            "resolved": {"stacks": [{"name": "host-dir", "baseline": true}]},
            "trials": trials
        }),
    );
}

#[test]
fn a_results_directory_becomes_a_summary_and_the_seeds_tables() {
    let dir = tempfile::tempdir().unwrap();
    results(dir.path(), "dvr");
    let seed = seeds::by_study("dvr").unwrap();
    let s = seeds::extract::extract(dir.path(), seed).unwrap();
    assert_eq!(
        (
            s.seed.as_str(),
            s.study.as_str(),
            s.quick,
            s.kernel.as_str(),
            s.cpus
        ),
        ("000", "dvr", true, "6.1.0-test", 2)
    );
    assert_eq!(s.options, vec!["--repeats 3"]);
    assert_eq!(s.not_run.len(), 1, "one line per stack: {:?}", s.not_run);
    assert_eq!(s.not_run[0].reason, "no zfs module in this kernel");
    let w = &s.workloads[0];
    assert_eq!(w.columns, ["record_mbit_guaranteed", "playback_preroll_s"]);
    assert_eq!(w.params["io_size"], json!(1048576));
    let raw = w.stack("raw-partitions").unwrap();
    assert_eq!(raw.values[0], vec![42.0, 42.2, 41.9]);
    assert_eq!(raw.repeats, vec![1, 2, 3]);
    assert_eq!(raw.extra["read_mean_ms"], vec![401.0, 402.0, 403.0]);
    assert_eq!(raw.extra["time_ratio"], vec![2.0, 2.0, 2.0]);
    assert!(w.stack("host-dir").unwrap().baseline);
    // What is committed is read back the same.
    let text = s.to_text();
    let path = dir.path().join("000.json");
    std::fs::write(&path, &text).unwrap();
    assert_eq!(seeds::summary::Summary::read(&path).unwrap(), s);

    let made = seeds::render(seed, &s).unwrap();
    assert_eq!(made[0].0, "000");
    assert_eq!(made[1].0, "000 conclusion");
    let body = &made[0].2;
    assert!(body.contains("**Placeholder: a quick run**"), "{body}");
    assert!(
        body.contains("`iotrial study dvr --quick --repeats 3`"),
        "{body}"
    );
    assert!(
        body.contains("Not run: zfs (skipped: no zfs module in this kernel)"),
        "{body}"
    );
    // The seed's ~200 ms is 40 Mbit/s at 8 Mbit per I/O; iotrial's 42.03 at 8.39 Mbit per
    // I/O is 40.09 in those terms: a ratio of 1.00, and raw alone at the top.
    let raw_row = body
        .lines()
        .find(|l| l.starts_with("| raw partitions (`raw-partitions`)"))
        .unwrap();
    assert!(
        raw_row.contains("| 40 |") && raw_row.contains("| 40.1 |"),
        "{raw_row}"
    );
    assert!(
        raw_row.contains("★ alone") && raw_row.ends_with("| 1.00 |"),
        "{raw_row}"
    );
    let xfs_row = body
        .lines()
        .find(|l| l.starts_with("| xfs (`xfs`)"))
        .unwrap();
    assert!(
        xfs_row.contains("no figure: \"The record side looks quite good"),
        "{xfs_row}"
    );
    assert!(
        xfs_row.ends_with("| - |"),
        "no ratio without a figure: {xfs_row}"
    );
    let host = body
        .lines()
        .find(|l| l.starts_with("| not in the seed (`host-dir`)"))
        .unwrap();
    assert!(
        host.contains("(baseline)") && host.contains("| baseline |"),
        "{host}"
    );
    // Five rows have both a seed figure and iotrial's (xfs has no figure, host-dir no row).
    assert!(body.contains("Rank agreement over the 5 rows"), "{body}");
    assert!(body.contains("Spearman's ρ = 1.00, 95% interval"), "{body}");
    assert!(body.contains("reverse 0"), "{body}");
    // noatime and writeback tie here, where the seed has writeback ahead ("above 400 ms"
    // against noatime's "approaching 500 ms").
    assert!(
        body.contains("cannot separate 1 (ext4-writeback before ext4-noatime)"),
        "{body}"
    );
    assert!(
        body.contains("**holds**: raw-partitions before ext4: p"),
        "{body}"
    );
    assert!(
        body.contains("data=writeback before noatime alone — **not shown"),
        "{body}"
    );
    // The calibration row of a quick run is shown, not held.
    assert!(body.contains("| read, mean, ms |"), "{body}");
    assert_eq!(seeds::s000::calibrated(&s), None);
    let end = &made[1].2;
    assert!(
        end.starts_with("Main conclusion: **partly reproduced** (from the quick run of 2026-11-29"),
        "{end}"
    );
    // The page's blocks are replaced, and nothing else.
    let page = format!(
        "# Seeds\n\nhand-written\n{}\nold\n{}\nmore\n{}\nold\n{}\n",
        blocks::begin("000", "x"),
        blocks::end("000"),
        blocks::begin("000 conclusion", "x"),
        blocks::end("000 conclusion")
    );
    let new = blocks::replace(&page, &made).unwrap();
    assert!(new.starts_with("# Seeds\n\nhand-written\n") && new.contains("\nmore\n"));
    assert!(blocks::stale(&new, &made).unwrap().is_empty());
    assert_eq!(blocks::stale(&page, &made).unwrap().len(), 2);
}

#[test]
fn a_results_directory_of_another_study_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    results(dir.path(), "cameras");
    let e = seeds::extract::extract(dir.path(), seeds::by_study("dvr").unwrap()).unwrap_err();
    assert!(e.0.contains("of study 'cameras'"), "{e}");
}

#[test]
fn a_block_is_replaced_and_the_text_around_it_stays() {
    let page = "# Page\nhand\n<!-- seed 000: old -->\nold table\n<!-- end of seed 000 -->\nafter\n";
    let open = blocks::begin("000", "docs/seeds/000.json");
    let out = blocks::replace(page, &[("000".into(), open.clone(), "new table\n".into())]).unwrap();
    assert_eq!(
        out,
        format!("# Page\nhand\n{open}\nnew table\n<!-- end of seed 000 -->\nafter\n")
    );
    assert_eq!(
        blocks::read(&out, "000").unwrap(),
        format!("{open}\nnew table\n")
    );
    assert!(blocks::read(page, "001")
        .unwrap_err()
        .contains("no block 'seed 001'"));
    let twice = format!("{page}{page}");
    assert!(blocks::replace(&twice, &[("000".into(), open, String::new())]).is_err());
}

#[test]
fn separated_stacks_in_the_seeds_order_agree_with_a_narrow_interval() {
    let seed = [1.0, 2.0, 3.0, 4.0];
    let reps = vec![
        vec![10.0, 10.1, 9.9],
        vec![20.0, 20.2, 19.8],
        vec![30.0, 30.1, 29.9],
        vec![40.0, 40.3, 39.7],
    ];
    let a = agreement(&seed, &reps).unwrap();
    assert_eq!((a.rho, a.interval, a.undefined), (1.0, Some((1.0, 1.0)), 0));
    assert_eq!(
        a,
        agreement(&seed, &reps).unwrap(),
        "seeded: the same twice"
    );
}

#[test]
fn overlapping_repeats_widen_the_interval_and_one_repeat_gives_none() {
    let seed = [1.0, 2.0, 3.0, 4.0];
    let reps = vec![
        vec![10.0, 30.0, 20.0],
        vec![29.0, 11.0, 21.0],
        vec![12.0, 32.0, 19.0],
        vec![30.0, 13.0, 22.0],
    ];
    let a = agreement(&seed, &reps).unwrap();
    let (lo, hi) = a.interval.unwrap();
    assert!(lo < a.rho && a.rho <= hi && lo < 0.5, "{a:?}");
    let once = agreement(&seed, &[vec![1.0], vec![2.0], vec![3.0], vec![4.0]]).unwrap();
    assert_eq!((once.rho, once.interval), (1.0, None));
    assert!(agreement(&seed[..2], &reps[..2]).is_none());
}

#[test]
fn findings_combine_their_checks_and_make_the_conclusion() {
    assert_eq!(combine(&[Holds, Holds]), Holds);
    assert_eq!(combine(&[Holds, Tied]), Partly);
    assert_eq!(combine(&[Holds, Missing]), Partly);
    assert_eq!(combine(&[Tied, Missing]), Tied);
    assert_eq!(combine(&[Holds, Reversed]), Reversed);
    assert_eq!(combine(&[Missing, Missing]), Missing);
    assert_eq!(conclusion(&[Holds, Holds]), "reproduced");
    assert_eq!(conclusion(&[Holds, Tied]), "partly reproduced");
    assert_eq!(conclusion(&[Tied, Reversed]), "not reproduced");
    assert_eq!(conclusion(&[Missing]), "cannot be measured here");
    assert_eq!(conclusion(&[Missing, Partly]), "partly reproduced");
    // Ties and missing findings are no evidence against the seed.
    assert_eq!(conclusion(&[Tied, Missing]), "cannot be measured here");
    assert_eq!(conclusion(&[Reversed, Missing]), "not reproduced");
}

#[test]
fn the_seed_orders_by_its_numbers_ranges_and_words() {
    let n = 0.02;
    assert_eq!(Figure::Is(117.0).order(Figure::Is(118.0), n), None);
    assert_eq!(Figure::Is(97.0).order(Figure::Is(117.0), n), Some(Less));
    assert_eq!(
        Figure::Range(74.0, 78.0).order(Figure::Range(94.0, 96.0), n),
        Some(Less)
    );
    assert_eq!(
        Figure::Range(94.0, 96.0).order(Figure::Is(97.0), n),
        Some(Less)
    );
    assert_eq!(Figure::Range(94.0, 98.0).order(Figure::Is(97.0), n), None);
    assert_eq!(
        Figure::Above(400.0).order(Figure::Below(400.0), n),
        Some(Greater)
    );
    assert_eq!(Figure::Above(400.0).order(Figure::Is(401.0), n), None);
    assert_eq!(Figure::None.order(Figure::Is(1.0), n), None);
}

#[test]
fn units_convert_and_a_reciprocal_flips_the_words_side() {
    let c = Convert::Over(8000.0);
    assert_eq!(c.apply(Figure::Above(400.0)), Figure::Below(20.0));
    assert_eq!(c.apply(Figure::Is(650.0)).text(), "12.3");
    assert_eq!(
        c.apply(Figure::Is(250.0)).text(),
        "32",
        "the seed's worked check"
    );
    assert_eq!(
        Convert::Times(60.0).apply(Figure::Range(1.0, 2.0)),
        Figure::Range(60.0, 120.0)
    );
    assert_eq!(Convert::Complement.apply(Figure::Is(10.0)), Figure::Is(0.9));
    assert_eq!(Figure::Is(40.0).ratio_text(42.0), "1.05");
    assert_eq!(Figure::Below(20.0).ratio_text(21.0), "> 1.05");
    assert_eq!(Figure::Range(74.0, 78.0).ratio_text(7.8), "0.10-0.11");
}

#[test]
fn parameters_read_as_a_user_writes_them() {
    use seeds::header::param_text;
    assert_eq!(param_text("io_size", &Json::from(1048576)), "1 MiB");
    assert_eq!(param_text("region_size", &Json::from(377487360)), "360 MiB");
    assert_eq!(param_text("window", &Json::from(5.0)), "5 s");
    assert_eq!(param_text("samples", &Json::from(2048)), "2048");
    assert_eq!(param_text("record", &Json::from("4KiB")), "4KiB");
}
