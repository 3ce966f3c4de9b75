//! Seed 002, "Evolving ext4 for SMR drives" (`study smr-metadata`): the time ext4 takes to
//! create a tree of directories and to remove it, on a drive-managed SMR disk and on a CMR one,
//! and the cleaning the SMR disk owes after each, beside the talk's figures.

use super::claims::{Check, Claim};
use super::compare::{Comparison, Convert, Figure, SeedRow};
use super::context::Context;
use super::{no_extra, Seed, Shown};

pub const SEED: Seed = Seed {
    id: "002",
    study: "smr-metadata",
    columns: |kind| match kind {
        "tree" => &[
            "create_s",
            "remove_s",
            "cleaning_after_create_s",
            "cleaning_after_remove_s",
        ],
        _ => &[],
    },
    params: &["dirs", "depth", "threads", "remove_threads"],
    extra: no_extra,
    show,
};

/// The seed's tree.
const SEED_DIRS: f64 = 800_000.0;

use SeedRow as Row;

fn show(ctx: &Context) -> Shown {
    let w = ctx.summary.workload_of("tree");
    let dirs = ctx.summary.workload(&w).and_then(|w| w.param_f64("dirs"));
    let ratio = match dirs {
        Some(d) if d == SEED_DIRS => Ok(()),
        Some(d) => Err(format!(
            "iotrial made {d:.0} directories, the seed {SEED_DIRS:.0}: a time for a different amount of work"
        )),
        None => Err("the run does not say how many directories it made".into()),
    };
    let note = "The seed gives minutes; the table, seconds (times 60). The talk's ext4-lazy is not in mainline kernels, so its rows have no counterpart here. Times are the drive models' at the study's time scale.";
    let table = |title: &str, column: &'static str, rows: Vec<SeedRow>, others: bool| Comparison {
        title: title.into(),
        workload: w.clone(),
        column,
        seed_unit: "min",
        convert: Convert::Times(60.0),
        unit: "s".into(),
        iotrial_unit: "s".into(),
        factor: 1.0,
        rows,
        others,
        ratio: ratio.clone(),
        note: note.into(),
    };
    let create = table(
        "Creating the tree (8 threads)",
        "create_s",
        vec![
            Row::new("ext4 on SMR", "ext4-smr", Figure::Below(2.0), "The directory-creation benchmark shows a smaller gain for ext4-lazy (just under two minutes for ext4 versus just over one minute) on SMR"),
            Row::new("ext4 on CMR", "ext4-cmr", Figure::Is(4.0), "Ext4 took four minutes to complete"),
        ],
        true,
    );
    let remove = table(
        "Removing it (`rm -rf`)",
        "remove_s",
        vec![
            Row::new("ext4 on SMR", "ext4-smr", Figure::Is(55.0), "On SMR, the directory-removal benchmark took 55 minutes for ext4"),
            Row::new("ext4 on CMR", "ext4-cmr", Figure::Below(40.0), "To delete the directory tree created in the first test took nearly 40 minutes for ext4"),
        ],
        true,
    );
    let clean_create = table(
        "The SMR disk's cleaning after the create",
        "cleaning_after_create_s",
        vec![Row::new(
            "ext4 on SMR",
            "ext4-smr",
            Figure::Is(14.0),
            "the cleaning time, which is zero for ext4-lazy, but a whopping 14 minutes for ext4",
        )],
        false,
    );
    let clean_remove = table(
        "The SMR disk's cleaning after the removal",
        "cleaning_after_remove_s",
        vec![Row::new(
            "ext4 on SMR",
            "ext4-smr",
            Figure::Is(10.0),
            "Ext4 required ten minutes of cleaning, while ext4-lazy needed only 20 seconds",
        )],
        false,
    );
    let body = [create, remove, clean_create, clean_remove]
        .iter()
        .map(|c| c.render(ctx))
        .collect::<Vec<_>>()
        .join("\n");
    let on = |column: &'static str, a: &str, b: &str| Check::Before {
        workload: w.clone(),
        column,
        a: a.into(),
        b: b.into(),
    };
    let owed = |column: &'static str| Check::AboveZero {
        workload: w.clone(),
        column,
        stack: "ext4-smr".into(),
    };
    let claims = vec![
        Claim {
            quote: "\"just under two minutes for ext4 ... on SMR; Ext4 took four minutes [on CMR]\"",
            what: "ext4 creates the tree faster on SMR than on CMR".into(),
            checks: vec![on("create_s", "ext4-smr", "ext4-cmr")],
        },
        Claim {
            quote: "\"On SMR, the directory-removal benchmark took 55 minutes for ext4; [on CMR] nearly 40 minutes\"",
            what: "ext4 removes it more slowly on SMR than on CMR".into(),
            checks: vec![on("remove_s", "ext4-cmr", "ext4-smr")],
        },
        Claim {
            quote: "\"a whopping 14 minutes for ext4 ... Ext4 required ten minutes of cleaning\"",
            what: "the SMR disk owes cleaning after each phase".into(),
            checks: vec![owed("cleaning_after_create_s"), owed("cleaning_after_remove_s")],
        },
    ];
    Shown { body, claims }
}
