//! tree's figures as result.json holds them: the [`Verdict`] (phase times and rates, cleaning
//! times, I/O by class per phase, the SMR model's own figures) and the verdict's columns
//! declared once ([`COLUMNS`]). Times are seconds of the device model's time.

use super::shape::Shape;
use crate::present::{Better, FigureSpec, VerdictFigures};
use serde::{Deserialize, Serialize};

/// Bytes a phase moved by class, from the block trace or the device's own request log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseIo {
    pub phase: String,
    pub metadata_write_bytes: u64,
    pub journal_write_bytes: u64,
    pub data_write_bytes: u64,
    pub metadata_read_bytes: u64,
    pub journal_read_bytes: u64,
    pub data_read_bytes: u64,
}

/// What an emulated SMR disk's model did over the trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmrFigures {
    /// Bytes written into the persistent cache (non-sequential writes).
    pub cache_write_bytes: u64,
    /// The cache's size and its highest occupancy.
    pub cache_bytes: u64,
    pub cache_peak_bytes: u64,
    pub bands_cleaned: u64,
    /// Band bytes rewritten by cleaning (read-modify-write of whole bands).
    pub cleaning_rewritten_bytes: u64,
    /// The model's cleaning time in all, foreground (cache full) and background, seconds.
    pub cleaning_s: f64,
    pub cleaning_foreground_s: f64,
}

/// The stack's verdict for tree: result.json's `verdict`. Each figure of [`COLUMNS`] is the
/// field named by its key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    /// Seconds the create phase took, and directories made per second.
    pub create_s: Option<f64>,
    pub create_dirs_per_s: Option<f64>,
    /// Seconds from the creation's start until the sync after it returned: the tree on the
    /// disk. A tree whose metadata fits in the page cache is made there, the device only
    /// reading some of it, so the creation alone times the host; its sync writes the journal
    /// (docs/workloads.md: on ext4 the larger share of this time, on xfs the smaller). Null
    /// without the sync phase.
    #[serde(default)]
    pub create_synced_s: Option<f64>,
    /// Directories the remove phase's walk found (each listed and removed, as `rm -rf`).
    pub dirs_created: u64,
    /// Seconds the remove phase took, and directories removed per second.
    pub remove_s: Option<f64>,
    pub remove_dirs_per_s: Option<f64>,
    /// Seconds the device needed to finish its background work after each phase; null when
    /// the device cannot tell (a real disk, a directory target). After mkfs: what the disk
    /// still had to do when the filesystem was mounted (null too with `settle` false).
    #[serde(default)]
    pub cleaning_after_mkfs_s: Option<f64>,
    pub cleaning_after_create_s: Option<f64>,
    pub cleaning_after_remove_s: Option<f64>,
    #[serde(default)]
    pub cleaning_after_fileserver_s: Option<f64>,
    /// Operations per second of the file-server phase; null without it.
    pub fileserver_ops_s: Option<f64>,
    /// Operations that failed, in all phases.
    pub errors: u64,
    /// Each creating thread's tree.
    pub shape: Shape,
    /// Bytes by class per phase, in phase order; empty when neither the block trace nor the
    /// device's own log ran.
    pub io_by_class: Vec<PhaseIo>,
    /// Where the classes came from: `trace`, `device log` or null.
    pub io_classes_from: Option<String>,
    /// The emulated SMR disk's own figures; null on other devices.
    pub smr: Option<SmrFigures>,
    /// The emulated device's replies were late by more than 1% of the modeled service time:
    /// the figures measure the host as much as the model.
    pub host_bound: bool,
    /// How late the emulated devices' replies were, % of their mean modeled service time (the
    /// latest device's); above 1 the trial is `host_bound`. Null on real devices.
    #[serde(default)]
    pub host_late_pct: Option<f64>,
}

/// tree's verdict figures, declared once: the key in [`Verdict`], label, unit, direction.
/// The first, the create time, ranks the stacks.
pub static COLUMNS: &[FigureSpec] = &[
    FigureSpec {
        key: "create_s",
        label: "create",
        unit: "s",
        better: Better::Lower,
    },
    FigureSpec {
        key: "create_synced_s",
        label: "create + sync",
        unit: "s",
        better: Better::Lower,
    },
    FigureSpec {
        key: "remove_s",
        label: "remove",
        unit: "s",
        better: Better::Lower,
    },
    FigureSpec {
        key: "cleaning_after_create_s",
        label: "cleaning after create",
        unit: "s",
        better: Better::Lower,
    },
    FigureSpec {
        key: "cleaning_after_remove_s",
        label: "cleaning after remove",
        unit: "s",
        better: Better::Lower,
    },
    FigureSpec {
        key: "create_dirs_per_s",
        label: "create rate",
        unit: "dirs/s",
        better: Better::Higher,
    },
    FigureSpec {
        key: "remove_dirs_per_s",
        label: "remove rate",
        unit: "dirs/s",
        better: Better::Higher,
    },
    FigureSpec {
        key: "fileserver_ops_s",
        label: "file server",
        unit: "ops/s",
        better: Better::Higher,
    },
    FigureSpec {
        key: "host_late_pct",
        label: "replies late (>1: host-bound)",
        unit: "% of service",
        better: Better::Lower,
    },
];

impl Verdict {
    /// The values of [`COLUMNS`], in order; tree has no target.
    pub fn figures(&self) -> VerdictFigures {
        VerdictFigures {
            values: vec![
                self.create_s,
                self.create_synced_s,
                self.remove_s,
                self.cleaning_after_create_s,
                self.cleaning_after_remove_s,
                self.create_dirs_per_s,
                self.remove_dirs_per_s,
                self.fileserver_ops_s,
                self.host_late_pct,
            ],
            meets_target: None,
            impossible: None,
            marked: None,
            caution: None,
        }
    }

    /// Bytes of `class` (`metadata`, `journal`, `data`) written in `phase`.
    pub fn written(&self, phase: &str, class: &str) -> Option<u64> {
        let p = self.io_by_class.iter().find(|p| p.phase == phase)?;
        match class {
            "metadata" => Some(p.metadata_write_bytes),
            "journal" => Some(p.journal_write_bytes),
            "data" => Some(p.data_write_bytes),
            _ => None,
        }
    }
}
