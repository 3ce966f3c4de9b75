//! The durability side of the comparison: a power-cut trial's result.json `durability`
//! (see [`crate::durability`]) read as optional columns after a workload's verdict, so each
//! stack's durability row stands beside its latency row (means and confidence intervals over
//! the cuts, as every column), and a section with the distributions over the cuts: how many
//! mounted, how many checked clean, the seconds lost from best to worst, how many cuts left
//! torn or foreign blocks, how many lost data a drive had said was flushed.

use super::chart::{Block, Section, Table};
use super::figure::{num, Better, FigureSpec};
use crate::result::StackTrials;
use serde_json::Value as Json;

/// One optional column read from a trial's `durability`.
#[derive(Debug, Clone, Copy)]
pub struct DurabilityColumn {
    /// `key` is the figure's path under result.json's `durability`.
    pub spec: FigureSpec,
    pub value: fn(&Json) -> Option<f64>,
}

fn field(d: &Json, key: &str) -> Option<f64> {
    d[key].as_f64()
}

fn blocks(d: &Json, keys: &[&str]) -> Option<f64> {
    keys.iter().map(|k| d["blocks"][k].as_f64()).sum()
}

/// The columns, headline first.
pub const COLUMNS: &[DurabilityColumn] = &[
    DurabilityColumn {
        spec: FigureSpec {
            key: "durability.seconds_lost_written",
            label: "recording lost",
            unit: "s",
            better: Better::Lower,
        },
        value: |d| field(d, "seconds_lost_written"),
    },
    DurabilityColumn {
        spec: FigureSpec {
            key: "durability.seconds_lost_fsynced",
            label: "fsynced lost",
            unit: "s",
            better: Better::Lower,
        },
        value: |d| field(d, "seconds_lost_fsynced"),
    },
    DurabilityColumn {
        spec: FigureSpec {
            key: "durability.blocks.lost",
            label: "blocks lost",
            unit: "4 KiB",
            better: Better::Lower,
        },
        value: |d| blocks(d, &["lost_older", "lost_zeros"]),
    },
    DurabilityColumn {
        spec: FigureSpec {
            key: "durability.blocks.torn",
            label: "torn",
            unit: "4 KiB",
            better: Better::Lower,
        },
        value: |d| blocks(d, &["torn"]),
    },
    DurabilityColumn {
        spec: FigureSpec {
            key: "durability.blocks.foreign",
            label: "foreign",
            unit: "4 KiB",
            better: Better::Lower,
        },
        value: |d| blocks(d, &["foreign", "stale"]),
    },
    DurabilityColumn {
        spec: FigureSpec {
            key: "durability.metadata_lost",
            label: "files lost",
            unit: "",
            better: Better::Lower,
        },
        value: |d| field(d, "metadata_lost"),
    },
    DurabilityColumn {
        spec: FigureSpec {
            key: "durability.replay_s",
            label: "recovery mount",
            unit: "s",
            better: Better::Lower,
        },
        value: |d| field(d, "replay_s"),
    },
    DurabilityColumn {
        spec: FigureSpec {
            key: "durability.checker_clean",
            label: "checker errors",
            unit: "share of cuts",
            better: Better::Lower,
        },
        value: |d| {
            d["checker_clean"]
                .as_bool()
                .map(|c| f64::from(u8::from(!c)))
        },
    },
];

/// The columns some trial of `stacks` has a value for (none without power cuts).
pub fn columns(stacks: &[StackTrials<'_>]) -> Vec<DurabilityColumn> {
    let docs: Vec<&Json> = stacks
        .iter()
        .flat_map(|s| s.trials.iter())
        .filter_map(|t| t.result.durability.as_ref())
        .collect();
    COLUMNS
        .iter()
        .filter(|c| docs.iter().any(|d| (c.value)(d).is_some()))
        .copied()
        .collect()
}

/// min / median / max of `xs`, as text.
fn spread(mut xs: Vec<f64>) -> String {
    if xs.is_empty() {
        return "-".into();
    }
    xs.sort_by(f64::total_cmp);
    let med = if xs.len() % 2 == 1 {
        xs[xs.len() / 2]
    } else {
        (xs[xs.len() / 2 - 1] + xs[xs.len() / 2]) / 2.0
    };
    format!("{} / {} / {}", num(xs[0]), num(med), num(xs[xs.len() - 1]))
}

/// `k/n`: cuts for which `f` holds.
fn tally(docs: &[&Json], f: impl Fn(&Json) -> bool) -> String {
    format!("{}/{}", docs.iter().filter(|d| f(d)).count(), docs.len())
}

/// The distributions over the cuts, one row per stack; `None` without power cuts.
pub fn section(stacks: &[StackTrials<'_>]) -> Option<Section> {
    let mut rows = Vec::new();
    for s in stacks {
        let docs: Vec<&Json> = s
            .trials
            .iter()
            .filter_map(|t| t.result.durability.as_ref())
            .collect();
        if docs.is_empty() {
            continue;
        }
        let values = |f: fn(&Json) -> Option<f64>| docs.iter().filter_map(|d| f(d)).collect();
        let any =
            |keys: &'static [&'static str]| move |d: &Json| blocks(d, keys).unwrap_or(0.0) > 0.0;
        rows.push(vec![
            s.stack.to_string(),
            docs.len().to_string(),
            tally(&docs, |d| d["mount_ok"].as_bool() != Some(false)),
            tally(&docs, |d| d["checker_clean"].as_bool() != Some(false)),
            spread(values(|d| field(d, "seconds_lost_written"))),
            spread(values(|d| field(d, "replay_s"))),
            tally(&docs, any(&["torn"])),
            tally(&docs, any(&["foreign", "stale"])),
            spread(values(|d| blocks(d, &["foreign", "stale"]))),
            tally(&docs, |d| {
                d["device"]["flushed_writes_lost"].as_u64().unwrap_or(0) > 0
            }),
        ]);
    }
    if rows.is_empty() {
        return None;
    }
    let headings = [
        "stack",
        "cuts",
        "mounted",
        "checker clean",
        "recording lost s (min / median / max)",
        "recovery mount s (min / median / max)",
        "cuts with torn blocks",
        "cuts with foreign blocks",
        "foreign blocks (min / median / max)",
        "cuts losing flushed writes",
    ];
    Some(Section {
        title: "Durability over the power cuts".into(),
        intro: Some(
            "Each repeat cuts the power of the stack's emulated drives once, during the recording; the stack is then mounted (journal replay), checked read-only and every 4 KiB block the workload wrote is verified against what was acknowledged before the cut. Foreign blocks hold data this file never had: another file's, or stale data from the disk.".into(),
        ),
        blocks: vec![Block::Table(Table {
            caption: "per stack, over its cuts".into(),
            headings: headings.iter().map(|h| h.to_string()).collect(),
            rows,
        })],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn columns_read_a_durability_document() {
        let d = json!({
            "seconds_lost_written": 1.5,
            "blocks": {"lost_older": 2, "lost_zeros": 3, "torn": 1, "foreign": 4, "stale": 5},
            "metadata_lost": 0,
            "replay_s": 0.25,
            "checker_clean": false,
        });
        let v: Vec<Option<f64>> = COLUMNS.iter().map(|c| (c.value)(&d)).collect();
        assert_eq!(
            v,
            [
                Some(1.5),
                None,
                Some(5.0),
                Some(1.0),
                Some(9.0),
                Some(0.0),
                Some(0.25),
                Some(1.0)
            ]
        );
        assert_eq!(spread(vec![3.0, 1.0, 2.0]), "1.00 / 2.00 / 3.00");
        assert_eq!(spread(vec![]), "-");
    }
}
