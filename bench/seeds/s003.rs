//! Seed 003, "Filesystems & Schedulers with CompactFlash" (`study cf-cacti`): the time the
//! card takes to absorb Cacti's burst of .rrd updates, by filesystem and by scheduler, and the
//! iozone-like random writers' throughput, beside the seed's figures; whether the benchmark
//! ranks the stacks as the real pattern does.

use super::claims::{Check, Claim};
use super::compare::{Comparison, Convert, Figure, SeedRow};
use super::context::Context;
use super::{no_extra, Seed, Shown};

pub const SEED: Seed = Seed {
    id: "003",
    study: "cf-cacti",
    columns: |kind| match kind {
        "burst" => &["drain_s"],
        "smallrand" => &["random_write_kB_s"],
        _ => &[],
    },
    params: &[
        "files",
        "file_size",
        "bursts",
        "period",
        "threads",
        "record",
    ],
    extra: no_extra,
    show,
};

/// The seed's Cacti: about a thousand .rrd files.
const SEED_FILES: f64 = 1000.0;

use SeedRow as Row;

fn show(ctx: &Context) -> Shown {
    let (burst, smallrand) = (
        ctx.summary.workload_of("burst"),
        ctx.summary.workload_of("smallrand"),
    );
    let files = ctx
        .summary
        .workload(&burst)
        .and_then(|w| w.param_f64("files"));
    let ratio = match files {
        Some(f) if f == SEED_FILES => Ok(()),
        Some(f) => Err(format!(
            "iotrial's burst updates {f:.0} files, the seed's Cacti about {SEED_FILES:.0}: a time for a different amount of work"
        )),
        None => Err("the run does not say how many files its burst updates".into()),
    };
    let drain = |title: &str, rows: Vec<SeedRow>, note: &str| Comparison {
        title: title.into(),
        workload: burst.clone(),
        column: "drain_s",
        seed_unit: "s",
        convert: Convert::Same,
        unit: "s".into(),
        iotrial_unit: "s".into(),
        factor: 1.0,
        rows,
        others: false,
        ratio: ratio.clone(),
        note: note.into(),
    };
    let common = "The seed's time is Cacti's whole update of its .rrd files as it timed it; iotrial's drain is the models' seconds from a burst's start until every update is on the card, the mean over the bursts of a trial. cfq is not in multi-queue kernels: bfq, its successor, stands in for it; the seed's deadline is mq-deadline here, its noop none.";
    let by_fs = drain(
        "Cacti's burst on each filesystem, under cfq (here bfq)",
        vec![
            Row::new("ext2", "ext2-bfq", Figure::Is(117.0), "ext2: 117s"),
            Row::new("ext3", "ext3-bfq", Figure::Is(118.0), "ext3: 118s"),
            Row::new("ext4", "ext4-bfq", Figure::Is(123.0), "ext4: 123s"),
            Row::new(
                "ext4 without journal",
                "ext4nj-bfq",
                Figure::Is(131.0),
                "ext4nj: 131s",
            ),
            Row::new("jfs", "jfs-bfq", Figure::Is(130.0), "jfs: 130s"),
            Row::new("xfs", "xfs-bfq", Figure::Is(97.0), "xfs: 97s"),
        ],
        &format!("{common} The seed's \"xfslazy: 117s\" has no stack in the study."),
    );
    let by_scheduler = drain(
        "xfs under each scheduler, and the SATA disk",
        vec![
            Row::new("xfs, cfq (here bfq)", "xfs-bfq", Figure::Range(94.0, 96.0), "xfs/cfq: 94-96s"),
            Row::new("xfs, deadline", "xfs-deadline", Figure::Range(74.0, 78.0), "xfs/deadline: 74-78s"),
            Row::new("xfs, noop (here none)", "xfs-none", Figure::Range(103.0, 130.0), "xfs/noop: 103-130s"),
            Row::new("", "xfs-kyber", Figure::None, ""),
            Row::new("SATA disk, jfs, deadline", "sata-jfs-deadline", Figure::Range(32.0, 45.0), "For comparison a SATA drive with jfs and deadline scheduling does the task in 32-45s"),
            Row::new("", "sata-xfs-deadline", Figure::None, ""),
        ],
        &format!("{common} The SATA disk is the `sata2-2tb` twin (seed 001's drive; the seed says nothing else of its own), a baseline: another device, never ranked against the card."),
    );
    let random = Comparison {
        title: "The iozone-like random writers (4 threads, 4 KiB, O_DIRECT)".into(),
        workload: smallrand.clone(),
        column: "random_write_kB_s",
        seed_unit: "MB/s",
        convert: Convert::Times(1024.0),
        unit: "kB/s (1024 bytes)".into(),
        iotrial_unit: "kB/s (1024 bytes)".into(),
        factor: 1.0,
        rows: vec![Row::new("ext2, cfq (here bfq)", "ext2-bfq", Figure::Below(1.0), "The same config (cfq & ext2) that was giving me random write at nearly 1MB/s")],
        others: false,
        ratio: Ok(()),
        note: "iozone and iotrial count kB of 1024 bytes; the seed's \"1MB/s\" is read as 1024 of them. The seed's other benchmark figures are in a spreadsheet its text does not hold.".into(),
    };
    let body = [by_fs, by_scheduler, random]
        .iter()
        .map(|c| c.render(ctx))
        .collect::<Vec<_>>()
        .join("\n");
    let before = |w: &str, column: &'static str, a: &str, b: &str| Check::Before {
        workload: w.into(),
        column,
        a: a.into(),
        b: b.into(),
    };
    let claims = vec![
        Claim {
            quote: "\"xfs/deadline: 74-78s\"",
            what: "xfs with mq-deadline drains the burst fastest of all the card's stacks".into(),
            checks: vec![Check::Top {
                workload: burst.clone(),
                column: "drain_s",
                stack: "xfs-deadline".into(),
            }],
        },
        Claim {
            quote: "\"in the real world it was convincingly beaten by straight xfs\"",
            what: "xfs before ext2, ext3, ext4 and ext4 without journal under bfq".into(),
            checks: ["ext2-bfq", "ext3-bfq", "ext4-bfq", "ext4nj-bfq"]
                .iter()
                .map(|b| before(&burst, "drain_s", "xfs-bfq", b))
                .collect(),
        },
        Claim {
            quote: "\"xfs/noop: 103-130s\"",
            what: "none (noop) last of xfs's schedulers, after mq-deadline and bfq".into(),
            checks: vec![
                before(&burst, "drain_s", "xfs-deadline", "xfs-none"),
                before(&burst, "drain_s", "xfs-bfq", "xfs-none"),
            ],
        },
        Claim {
            quote: "\"While the lower overheads of ext2 had won in the benchmarks\"",
            what: "ext2 first of the filesystems under bfq on the random writers".into(),
            checks: ["ext3-bfq", "ext4-bfq", "ext4nj-bfq", "xfs-bfq"]
                .iter()
                .map(|b| before(&smallrand, "random_write_kB_s", "ext2-bfq", b))
                .collect(),
        },
        Claim {
            quote: "\"the benchmarks didn't match reality at all well\"",
            what: "the random writers and the burst rank the card's stacks differently".into(),
            checks: vec![Check::Disagree {
                a: smallrand.clone(),
                b: burst.clone(),
            }],
        },
    ];
    Shown { body, claims }
}
