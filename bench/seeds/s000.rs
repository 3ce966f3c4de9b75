//! Seed 000, "Hard Drives & DVRs: Filesystems" (`study dvr`): the record bitrate each stack
//! guarantees with a 5 s buffer and the playback pre-roll, beside the figures the seed's text
//! gives; the raw row against the seed's device-level figures (the twin's calibration); per
//! stack, the figures that explain a difference (access times, flushes, journal bytes).

use super::claims::{Check, Claim};
use super::compare::{markdown_row, pct, Comparison, Convert, Figure, SeedRow};
use super::context::Context;
use super::{Seed, Shown};
use iotrial::analysis::compare::Estimate;
use iotrial::present::num;
use iotrial::present::verdict::estimate_text;
use iotrial::result::Trial;
use serde_json::Value as Json;
use std::collections::BTreeMap;

pub const SEED: Seed = Seed {
    id: "000",
    study: "dvr",
    columns: |kind| match kind {
        "dvr" => &["record_mbit_guaranteed", "playback_preroll_s"],
        _ => &[],
    },
    params: &[
        "samples",
        "io_size",
        "region_size",
        "window",
        "playback_ios",
    ],
    extra,
    show,
};

/// The raw row's device-level figures in the seed, with its words: (name, figure, words).
pub const CALIBRATION: &[(&str, &str, f64, &str)] = &[
    (
        "window_peak_ms",
        "record window (peak 5 s average), ms",
        200.0,
        "the moving average access time over five seconds is very consistent at about 200 ms",
    ),
    (
        "read_mean_ms",
        "read, mean, ms",
        400.0,
        "the average read access time for 1 MB is about 400 ms",
    ),
    (
        "read_max_ms",
        "read, worst, ms",
        750.0,
        "the worst case is around 750 ms",
    ),
    (
        "time_ratio",
        "playback time / record time",
        2.0,
        "about 800s to do 2048 1 MB reads, while the record threads did their 2048 writes in about half that time",
    ),
];

/// How far the twin's raw row may be from the seed's device-level figures.
pub const CALIBRATION_TOLERANCE: f64 = 0.10;

/// Per repeat: the figures that explain a stack's record guarantee.
fn extra(trials: &[&Trial]) -> BTreeMap<String, Vec<f64>> {
    let mut out: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for t in trials {
        let r = &t.result;
        let role = |role: &str, f: &dyn Fn(&Json) -> Option<f64>| -> Vec<f64> {
            r.streams
                .iter()
                .filter(|s| s["role"] == role)
                .filter_map(f)
                .collect()
        };
        let max = |v: Vec<f64>| v.into_iter().reduce(f64::max);
        let avg = |v: Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        let played = max(role("playback", &|s| s["elapsed_s"].as_f64()));
        let recorded = max(role("record", &|s| s["elapsed_s"].as_f64()));
        let monitor = serde_json::to_value(&r.monitor).unwrap_or(Json::Null);
        let classes = monitor["io_classes"].as_array().filter(|c| !c.is_empty());
        let journal = classes.map(|c| {
            c.iter()
                .filter(|c| c["class"] == "journal" && c["phase"] == "run")
                .filter_map(|c| c["bytes"].as_f64())
                .fold(0.0, |a, b| a + b)
                / f64::from(1u32 << 20)
        });
        let figures = [
            (
                "window_peak_ms",
                max(role("record", &|s| s["window_peak_ms"].as_f64())),
            ),
            (
                "write_mean_ms",
                avg(role("record", &|s| s["lat_ms"]["mean"].as_f64())),
            ),
            (
                "write_max_ms",
                max(role("record", &|s| s["lat_ms"]["max"].as_f64())),
            ),
            (
                "read_mean_ms",
                avg(role("playback", &|s| s["lat_ms"]["mean"].as_f64())),
            ),
            (
                "read_max_ms",
                max(role("playback", &|s| s["lat_ms"]["max"].as_f64())),
            ),
            ("time_ratio", played.zip(recorded).map(|(p, w)| p / w)),
            (
                "flushes",
                r.stack["emulated"][0]["model_stats"]["flushes"].as_f64(),
            ),
            ("journal_mib", journal),
        ];
        for (k, v) in figures {
            if let Some(v) = v {
                out.entry(k.to_string()).or_default().push(v);
            }
        }
    }
    out
}

fn rows() -> Vec<SeedRow> {
    let row = SeedRow::new;
    vec![
        row("raw partitions", "raw-partitions", Figure::Is(200.0), "With 1 MB writes, the moving average access time over five seconds is very consistent at about 200 ms"),
        row("ext4, CentOS 7's defaults", "ext4", Figure::Is(650.0), "While the average access time is about 350 ms, the worst is about 650ms"),
        row("ext4 noatime", "ext4-noatime", Figure::Below(500.0), "Things look slightly better, but there are still peaks approaching 500 ms"),
        row("ext4 noatime, data=writeback", "ext4-writeback", Figure::Above(400.0), "The access times are much more linear, although there are a couple peaks above 400 ms"),
        row("ext4 noatime, data=writeback, commit=1", "ext4-commit1", Figure::Below(400.0), "with a peak access time of just under 400 ms, we can sustain a hair over 20 Mbits"),
        row("xfs", "xfs", Figure::None, "The record side looks quite good out of the box, equivalent to or perhaps slightly better than ext4"),
    ]
}

fn show(ctx: &Context) -> Shown {
    let w = ctx.summary.workload_of("dvr");
    let io = ctx
        .summary
        .workload(&w)
        .and_then(|w| w.param_f64("io_size"))
        .unwrap_or(1_048_576.0);
    let factor = 1e6 / io;
    let record = Comparison {
        title: "The record bitrate each stack guarantees with a 5 s buffer".into(),
        workload: w.clone(),
        column: "record_mbit_guaranteed",
        seed_unit: "ms",
        convert: Convert::Over(8000.0),
        unit: "Mbit/s at 8 Mbit per I/O".into(),
        iotrial_unit: format!("Mbit/s at {} Mbit per I/O", num(io * 8.0 / 1e6)),
        factor,
        rows: rows(),
        others: true,
        ratio: Ok(()),
        note: format!(
            "The seed's figure is the peak of a recorder's 5 s moving average of write access time, as its text gives it; its bitrate is one 1,000,000-byte I/O, 8 Mbit, over that window, as in its own check (\"a moving average access time of 250 ms ... 32 Mbit/s\", where it added 50 ms of tolerance to raw's ~200 ms: the table compares the ~200 ms, with no tolerance on either side). iotrial's record guarantee is its {} MiB I/O, {} Mbit, over its peak window; times {} (10^6 over the I/O's bytes) it is 8 Mbit over the same window, so the ratio is the seed's window over iotrial's. Mbit is 10^6 bits, MiB 2^20 bytes. The seed's \"approaching\", \"above\" and \"just under\" rank a hair to that side of the number.",
            num(io / 1048576.0).trim_end_matches(".00"),
            num(io * 8.0 / 1e6),
            num(factor),
        ),
    };
    let preroll_rows = vec![
        SeedRow {
            label: "raw partitions".into(),
            stack: "raw-partitions".into(),
            figure: Figure::Is(1.5),
            words: "So to plan for 2 MB reads, we should have at least 1.5s of pre-rolled media",
        },
        SeedRow {
            label: "ext4, CentOS 7's defaults".into(),
            stack: "ext4".into(),
            figure: Figure::None,
            words: "the occasional excursions to 1s and 1.3s also need to be handled",
        },
        SeedRow {
            label: "ext4 noatime".into(),
            stack: "ext4-noatime".into(),
            figure: Figure::None,
            words: "On the playback side we still have a peak access time of about 900 ms",
        },
        SeedRow {
            label: "ext4 noatime, data=writeback".into(),
            stack: "ext4-writeback".into(),
            figure: Figure::None,
            words: "The playback front now looks a bit more like the raw partition I/O pattern",
        },
        SeedRow {
            label: "ext4 noatime, data=writeback, commit=1".into(),
            stack: "ext4-commit1".into(),
            figure: Figure::None,
            words: "The playback side is largely unchanged",
        },
        SeedRow {
            label: "xfs".into(),
            stack: "xfs".into(),
            figure: Figure::None,
            words: "with good clustering around 350 ms and peaks constrained below 600 ms",
        },
    ];
    let preroll = Comparison {
        title: "The playback pre-roll each stack needs".into(),
        workload: w.clone(),
        column: "playback_preroll_s",
        seed_unit: "s",
        convert: Convert::Same,
        unit: "s".into(),
        iotrial_unit: "s".into(),
        factor: 1.0,
        rows: preroll_rows,
        others: false,
        ratio: Ok(()),
        note: "A pre-roll is the worst sum of two consecutive 1 MB reads (a 2 MB read in two fragments), as the seed reckons it from raw's worst read (\"around 750 ms\"); for the filesystems the seed gives single reads' peaks, not a pre-roll.".into(),
    };
    let mut body = record.render(ctx);
    body.push('\n');
    body.push_str(&preroll.render(ctx));
    body.push('\n');
    body.push_str(&calibration(ctx, &w));
    body.push('\n');
    body.push_str(&causes(ctx, &w));
    let check = |a: &str, b: &str| Check::Before {
        workload: w.clone(),
        column: "record_mbit_guaranteed",
        a: a.into(),
        b: b.into(),
    };
    let claims = vec![
        Claim {
            quote:
                "\"That nice constant access time we had for the partition-based record is gone\"",
            what: "raw partitions before every ext4".into(),
            checks: ["ext4", "ext4-noatime", "ext4-writeback", "ext4-commit1"]
                .iter()
                .map(|b| check("raw-partitions", b))
                .collect(),
        },
        Claim {
            quote: "\"Things look slightly better\"",
            what: "noatime before ext4's defaults".into(),
            checks: vec![check("ext4-noatime", "ext4")],
        },
        Claim {
            quote: "\"Things are looking a bit better on the record side with Writeback Mode\"",
            what: "data=writeback before noatime alone".into(),
            checks: vec![check("ext4-writeback", "ext4-noatime")],
        },
        Claim {
            quote: "\"It looks like we've managed to get rid of the 400 ms peaks\"",
            what: "commit=1 before data=writeback alone".into(),
            checks: vec![check("ext4-commit1", "ext4-writeback")],
        },
        Claim {
            quote: "\"equivalent to or perhaps slightly better than ext4\"",
            what: "xfs not after the tuned ext4".into(),
            checks: vec![Check::NotAfter {
                workload: w.clone(),
                column: "record_mbit_guaranteed",
                a: "xfs".into(),
                b: "ext4-commit1".into(),
            }],
        },
    ];
    Shown { body, claims }
}

/// The raw row beside the seed's device-level figures.
fn calibration(ctx: &Context, w: &str) -> String {
    let Some(raw) = ctx
        .summary
        .workload(w)
        .and_then(|w| w.stack("raw-partitions"))
    else {
        return "The raw-partitions stack did not run: no calibration row.\n".into();
    };
    let mut out = String::from("**The raw row: the twin's calibration.** The twin is fitted on these figures only; every filesystem row is a prediction.\n\n");
    out.push_str(&markdown_row(&[
        "figure".into(),
        "seed 000's words".into(),
        "seed 000".into(),
        "twin, raw-partitions (mean ± 95% CI)".into(),
        "twin / seed".into(),
        format!("within {}%", pct(CALIBRATION_TOLERANCE)),
    ]));
    out.push_str(&markdown_row(&vec!["---".to_string(); 6]));
    for (key, label, seed, words) in CALIBRATION {
        let e = raw.extra.get(*key).and_then(|v| Estimate::of(v));
        let (ratio, ok) = match e {
            Some(e) => {
                let r = e.mean / seed;
                (
                    format!("{r:.2}"),
                    if (r - 1.0).abs() <= CALIBRATION_TOLERANCE {
                        "yes"
                    } else {
                        "no"
                    },
                )
            }
            None => ("-".into(), "-"),
        };
        out.push_str(&markdown_row(&[
            label.to_string(),
            format!("\"{words}\""),
            num(*seed),
            estimate_text(e.as_ref()),
            ratio,
            ok.into(),
        ]));
    }
    out.push_str(&format!(
        "\nThe generator exits with an error when a full study's raw row is more than {}% from any of these; a quick run's is shown and not held to it.\n",
        pct(CALIBRATION_TOLERANCE)
    ));
    out
}

/// Whether the raw row of a full run is within the tolerance of every seed figure (`None`: not
/// a full run, or no raw row).
pub fn calibrated(summary: &super::summary::Summary) -> Option<bool> {
    if summary.quick {
        return None;
    }
    let raw = summary
        .workloads
        .iter()
        .find(|w| w.kind == "dvr")?
        .stack("raw-partitions")?;
    Some(CALIBRATION.iter().all(|(key, _, seed, _)| {
        raw.extra
            .get(*key)
            .and_then(|v| Estimate::of(v))
            .is_some_and(|e| (e.mean / seed - 1.0).abs() <= CALIBRATION_TOLERANCE)
    }))
}

/// Per stack, the figures that explain a difference, means over the repeats.
fn causes(ctx: &Context, w: &str) -> String {
    let Some(ws) = ctx.summary.workload(w) else {
        return String::new();
    };
    let cols = [
        ("window_peak_ms", "record window peak, ms"),
        ("write_mean_ms", "write mean, ms"),
        ("write_max_ms", "write worst, ms"),
        ("read_mean_ms", "read mean, ms"),
        ("read_max_ms", "read worst, ms"),
        ("time_ratio", "playback / record time"),
        ("flushes", "flushes the drive received"),
        ("journal_mib", "journal MiB (block trace)"),
    ];
    let mut out = String::from("**What the figures are made of**, per stack (mean over the repeats ± 95% CI; worst: the largest over a trial's streams; `-` where the trial did not record it).\n\n");
    let mut head = vec!["stack".to_string()];
    head.extend(cols.iter().map(|c| c.1.to_string()));
    out.push_str(&markdown_row(&head));
    out.push_str(&markdown_row(&vec!["---".to_string(); head.len()]));
    for s in &ws.stacks {
        let mut row = vec![s.stack.clone()];
        row.extend(
            cols.iter().map(|(k, _)| {
                estimate_text(s.extra.get(*k).and_then(|v| Estimate::of(v)).as_ref())
            }),
        );
        out.push_str(&markdown_row(&row));
    }
    out
}
