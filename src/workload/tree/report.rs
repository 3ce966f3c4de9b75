//! tree's part of the report, in seed 002's reading order: per stack, its phases (how long
//! each took, what the device's cleaning took after it) and the bytes each phase moved by
//! class; then every stack side by side (create, remove and cleaning times, metadata, journal
//! and data bytes, whether the emulated device kept up), and each stack on the SMR disk over
//! its twin on the conventional one.

use super::figures::{PhaseIo, Verdict, COLUMNS};
use crate::present::chart::{Block, Section, Table};
use crate::present::{num, num_opt, FigureSpec, KindReport, VerdictFigures};
use crate::result::{ResultError, StackTrials, Trial};

/// tree's part of the report.
pub struct TreeReport;

fn mb(b: u64) -> String {
    num(b as f64 / 1e6)
}

fn cleaning(s: Option<f64>) -> String {
    s.map_or_else(|| "unknown".into(), num)
}

/// The trial's phases: name, kind, seconds, and what an idle phase found.
fn phase_table(t: &Trial) -> Table {
    let rows = t
        .result
        .phases
        .iter()
        .map(|p| {
            let found = p.idle.as_ref().map_or(String::new(), |i| {
                let mut s = match i.cleaning_s {
                    Some(c) => format!("idle after {} s", num(c)),
                    None => i.note.clone().unwrap_or_default(),
                };
                if i.capped {
                    s.push_str(" (capped)");
                }
                s
            });
            vec![
                p.name.clone(),
                p.kind.clone(),
                num_opt(p.duration_s()),
                p.samples.to_string(),
                found,
            ]
        })
        .collect();
    Table {
        caption: "Phases, in the device model's time".into(),
        headings: ["phase", "kind", "seconds", "operations", "device"]
            .map(String::from)
            .to_vec(),
        rows,
    }
}

fn io_table(v: &Verdict) -> Table {
    let row = |p: &PhaseIo| {
        vec![
            p.phase.clone(),
            mb(p.metadata_write_bytes),
            mb(p.journal_write_bytes),
            mb(p.data_write_bytes),
            mb(p.metadata_read_bytes),
            mb(p.journal_read_bytes),
            mb(p.data_read_bytes),
        ]
    };
    Table {
        caption: format!(
            "Bytes by class per phase, MB (from the {})",
            v.io_classes_from.as_deref().unwrap_or("block trace")
        ),
        headings: [
            "phase",
            "metadata written",
            "journal written",
            "data written",
            "metadata read",
            "journal read",
            "data read",
        ]
        .map(String::from)
        .to_vec(),
        rows: v.io_by_class.iter().map(row).collect(),
    }
}

fn intro(v: &Verdict) -> String {
    let mut s = format!(
        "Created {} directories (fan-out {:?} per level, per thread) in {} s and removed the {} the walk found in {} s. Cleaning after the create: {} s; after the removal: {} s.",
        v.shape.dirs,
        v.shape.fan_out,
        num_opt(v.create_s),
        v.dirs_created,
        num_opt(v.remove_s),
        cleaning(v.cleaning_after_create_s),
        cleaning(v.cleaning_after_remove_s),
    );
    if let Some(c) = v.cleaning_after_mkfs_s {
        s.push_str(&format!(
            " Before the creation the device finished what mkfs left it doing, {} s of cleaning.",
            num(c)
        ));
    }
    if let Some(m) = &v.smr {
        s.push_str(&format!(
            " The SMR model wrote {} MB into its persistent cache, cleaned {} bands and rewrote {} MB doing so.",
            mb(m.cache_write_bytes),
            m.bands_cleaned,
            mb(m.cleaning_rewritten_bytes)
        ));
    }
    if v.host_bound {
        s.push_str(" Host-bound: the emulated device's replies were late by more than 1% of the modeled time; these times measure the host as much as the model.");
    }
    s
}

/// Bytes of one class written over every phase.
fn written(v: &Verdict, class: &str) -> u64 {
    v.io_by_class
        .iter()
        .filter_map(|p| v.written(&p.phase, class))
        .sum()
}

fn all_stacks(shown: &[(&str, Verdict)]) -> Table {
    let rows = shown
        .iter()
        .map(|(name, v)| {
            vec![
                name.to_string(),
                num_opt(v.create_s),
                num_opt(v.remove_s),
                cleaning(v.cleaning_after_create_s),
                cleaning(v.cleaning_after_remove_s),
                mb(written(v, "metadata")),
                mb(written(v, "journal")),
                mb(written(v, "data")),
                if v.host_bound { "late" } else { "" }.into(),
            ]
        })
        .collect();
    Table {
        caption: "Every stack: seconds of the model's time, MB written by class over all phases; `late` marks a stack whose emulated device fell behind its model".into(),
        headings: [
            "stack",
            "create s",
            "remove s",
            "cleaning after create s",
            "cleaning after remove s",
            "metadata MB",
            "journal MB",
            "data MB",
            "host-bound",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    }
}

/// Stacks named `<x>-smr` beside `<x>-cmr`: the SMR disk's times over the CMR disk's.
fn slowdown(shown: &[(&str, Verdict)]) -> Option<Table> {
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => num(a / b),
        _ => "-".into(),
    };
    let rows: Vec<Vec<String>> = shown
        .iter()
        .filter_map(|(name, smr)| {
            let base = name.strip_suffix("-smr")?;
            let (_, cmr) = shown.iter().find(|(n, _)| *n == format!("{base}-cmr"))?;
            let with_cleaning = |v: &Verdict| {
                Some(
                    v.create_s?
                        + v.remove_s?
                        + v.cleaning_after_create_s?
                        + v.cleaning_after_remove_s?,
                )
            };
            Some(vec![
                base.to_string(),
                ratio(smr.create_s, cmr.create_s),
                ratio(smr.remove_s, cmr.remove_s),
                ratio(with_cleaning(smr), with_cleaning(cmr)),
            ])
        })
        .collect();
    (!rows.is_empty()).then(|| Table {
        caption: "SMR over CMR: each stack's time on the SMR disk over its time on the same drive without shingles".into(),
        headings: ["stack", "create", "remove", "create + remove + cleaning"]
            .map(String::from)
            .to_vec(),
        rows,
    })
}

impl KindReport for TreeReport {
    fn columns(&self) -> &'static [FigureSpec] {
        COLUMNS
    }

    fn figures(&self, trial: &Trial) -> Result<VerdictFigures, ResultError> {
        crate::workload::figures_of(trial, Verdict::figures)
    }

    fn sections(&self, stacks: &[StackTrials<'_>]) -> Result<Vec<Section>, ResultError> {
        let mut out = Vec::new();
        let mut shown = Vec::new();
        for st in stacks {
            let t = st.trials[0];
            let v: Verdict = t.result.verdict_as().map_err(|e| t.error(e))?;
            let mut blocks = vec![Block::Table(phase_table(t))];
            if !v.io_by_class.is_empty() {
                blocks.push(Block::Table(io_table(&v)));
            }
            out.push(Section {
                title: format!("Stack {}", st.stack),
                intro: Some(intro(&v)),
                blocks,
            });
            shown.push((st.stack, v));
        }
        let mut blocks = vec![Block::Table(all_stacks(&shown))];
        blocks.extend(slowdown(&shown).map(Block::Table));
        out.push(Section {
            title: "All stacks: seed 002's questions".into(),
            intro: Some("Create, remove and cleaning time per stack and device, the bytes each wrote by class, and the SMR disk's slowdown over the conventional one.".into()),
            blocks,
        });
        Ok(out)
    }
}
