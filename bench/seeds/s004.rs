//! Seed 004, "Linux File System -- Analyzing the Fsck Test Results" (`study fsck-scaling`):
//! the files per second e2fsck and xfs_repair check on the twins of the seed's 38 TB and 72 TB
//! volumes at each file count the study fills, beside the seed's Table 1.

use super::claims::{Check, Claim};
use super::compare::{markdown_row, Comparison, Convert, Figure, SeedRow};
use super::context::Context;
use super::{no_extra, Seed, Shown};
use iotrial::present::verdict::estimate_text;

pub const SEED: Seed = Seed {
    id: "004",
    study: "fsck-scaling",
    columns: |kind| match kind {
        "fsck" => &["fsck_files_per_s", "fsck_s"],
        _ => &[],
    },
    params: &["files", "dirs", "file_size"],
    extra: no_extra,
    show,
};

/// Table 1 of the seed, per (checker's stack prefix, volume): files/s at 10.2 M, 51 M and
/// 105 M files, and the words of its row.
const TABLE_1: &[(&str, &str, [f64; 3], &str)] = &[
    ("xfs", "38", [77_862.6, 191_729.3, 147_887.3], "Table 1, 38 TB, xfs_repair: 131 s (77,862.6 files/s) at 10.2 M files; 266 (191,729.3) at 51 M; 710 (147,887.3) at 105 M"),
    ("xfs", "72", [63_354.0, 95_505.6, 64_456.7], "Table 1, 72 TB, xfs_repair: 161 s (63,354.0 files/s) at 10.2 M files; 534 (95,505.6) at 51 M; 1,629 (64,456.7) at 105 M"),
    ("ext4", "38", [21_702.1, 37_555.2, 31_138.8], "Table 1, 38 TB, e2fsck: 470 s (21,702.1 files/s) at 10.2 M files; 1,358 (37,555.2) at 51 M; 3,372 (31,138.8) at 105 M"),
    ("ext4", "72", [10_493.8, 28_161.2, 32_884.4], "Table 1, 72 TB, e2fsck: 972 s (10,493.8 files/s) at 10.2 M files; 1,811 (28,161.2) at 51 M; 3,193 (32,884.4) at 105 M"),
];

/// The study's stack of `fs` on the `size` TB (or GiB) volume.
fn stack(ctx: &Context, fs: &str, size: &str) -> String {
    ctx.summary
        .workloads
        .iter()
        .flat_map(|w| &w.stacks)
        .map(|s| s.stack.as_str())
        .find(|s| s.starts_with(&format!("{fs}-")) && s[fs.len()..].contains(size))
        .map_or_else(|| format!("{fs}-{size}"), str::to_string)
}

fn show(ctx: &Context) -> Shown {
    // The fsck workloads, by file count.
    let mut counts: Vec<(f64, String)> = ctx
        .summary
        .workloads
        .iter()
        .filter(|w| w.kind == "fsck")
        .filter_map(|w| Some((w.param_f64("files")?, w.workload.clone())))
        .collect();
    counts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let Some((largest, top)) = counts.last().cloned() else {
        return Shown {
            body: "No fsck workload ran.\n".into(),
            claims: Vec::new(),
        };
    };
    let label = |fs: &str, size: &str| {
        let checker = if fs == "xfs" { "xfs_repair" } else { "e2fsck" };
        format!("{size} TB, {checker}")
    };
    let rows = TABLE_1
        .iter()
        .map(|(fs, size, rates, words)| SeedRow {
            label: label(fs, size),
            stack: stack(ctx, fs, size),
            figure: Figure::Is(rates[0]),
            words,
        })
        .collect();
    let compared = Comparison {
        title: format!(
            "Files checked per second at iotrial's largest count ({largest:.0} files) beside the seed's smallest (10.2 M)"
        ),
        workload: top.clone(),
        column: "fsck_files_per_s",
        seed_unit: "files/s",
        convert: Convert::Same,
        unit: "files/s".into(),
        iotrial_unit: "files/s".into(),
        factor: 1.0,
        rows,
        others: false,
        ratio: Ok(()),
        note: format!(
            "The seed filled 10.2 to 105 million files (415 million on its 72 TB xfs, which swapped); the study fills {}, so the ratio sets a rate at {largest:.0} files beside the seed's at 10.2 M, {:.0} times as many. The seed's Table 3 repeats its 10.2 M line and gives the 38 TB ext4 31,138.8 files/s there, Table 1 21,702.1 (470 s for 10.2 M files): the table reads Table 1.",
            counts.iter().map(|(n, _)| format!("{n:.0}")).collect::<Vec<_>>().join(", "),
            10.2e6 / largest
        ),
    };
    let mut body = compared.render(ctx);
    body.push('\n');
    body.push_str(&sweep(ctx, &counts));
    let volumes = |fs: &str| (stack(ctx, fs, "38"), stack(ctx, fs, "72"));
    let (x38, x72) = volumes("xfs");
    let (e38, e72) = volumes("ext4");
    let at_every = |a: &str, b: &str| -> Vec<Check> {
        counts
            .iter()
            .map(|(_, w)| Check::Before {
                workload: w.clone(),
                column: "fsck_files_per_s",
                a: a.into(),
                b: b.into(),
            })
            .collect()
    };
    let grows = |s: &str| Check::Better {
        column: "fsck_files_per_s",
        stack: s.into(),
        from: counts[0].1.clone(),
        to: top.clone(),
    };
    let mut faster = at_every(&x38, &e38);
    faster.extend(at_every(&x72, &e72));
    let claims = vec![
        Claim {
            quote: "\"The fsck for ext4 is slower than for xfs\"",
            what: "xfs_repair checks more files/s than e2fsck on both volumes, at every count".into(),
            checks: faster,
        },
        Claim {
            quote: "\"Large file systems mean more locations that spread across, which means more seeks to read them all\"",
            what: "xfs_repair checks fewer files/s on the 72 TB volume than on the 38 TB one, at every count (Table 2: all three of the seed's)".into(),
            checks: at_every(&x38, &x72),
        },
        Claim {
            quote: "Table 1: 972 s against 470 s at 10.2 M files, 1,811 against 1,358 at 51 M (at 105 M, 3,193 against 3,372: the larger faster)",
            what: "e2fsck checks fewer files/s on the 72 TB volume, at every count".into(),
            checks: at_every(&e38, &e72),
        },
        Claim {
            quote: "\"as the number of files increased, the rate of files processed during the fsck for xfs generally improved\"",
            what: "every checker's files/s grows from the smallest count to the largest, on both volumes".into(),
            checks: vec![grows(&e38), grows(&e72), grows(&x38), grows(&x72)],
        },
    ];
    Shown { body, claims }
}

/// Files/s of every stack at every count, with its rank range at that count.
fn sweep(ctx: &Context, counts: &[(f64, String)]) -> String {
    let mut out = String::from("**Every count** (files/s, mean ± 95% CI, and the rank range among the stacks at that count).\n\n");
    let mut head = vec!["stack".to_string()];
    head.extend(counts.iter().map(|(n, _)| format!("{n:.0} files")));
    out.push_str(&markdown_row(&head));
    out.push_str(&markdown_row(&vec!["---".to_string(); head.len()]));
    let mut stacks: Vec<String> = Vec::new();
    for w in ctx.summary.workloads.iter().filter(|w| w.kind == "fsck") {
        for s in &w.stacks {
            if !stacks.contains(&s.stack) {
                stacks.push(s.stack.clone());
            }
        }
    }
    for s in &stacks {
        let mut row = vec![s.clone()];
        for (_, w) in counts {
            row.push(match (ctx.column(w, "fsck_files_per_s"), ctx.row(w, s)) {
                (Some((t, col)), Some((_, i))) => {
                    let rank = t
                        .groups(col)
                        .filter(|_| !t.rows[i].unranked())
                        .map_or("-".into(), |g| g.rank_text(i));
                    format!(
                        "{} (rank {rank})",
                        estimate_text(t.rows[i].estimates[col].as_ref())
                    )
                }
                _ => "did not run".into(),
            });
        }
        out.push_str(&markdown_row(&row));
    }
    out
}
