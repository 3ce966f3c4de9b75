//! fsck's part of the report: per workload, each stack's fill (fs_mark's figures) and check
//! (time, files/s, memory, CPU share, what it read); across a sweep of the file count, the
//! scaling section ([`super::scaling`]): the fit of check time against files per stack with
//! its extrapolation, and files/s per filesystem size.

use super::figures::{verdict_of, Verdict, COLUMNS};
use crate::present::chart::{Block, Section, Table};
use crate::present::{num_opt, FigureSpec, KindReport, VerdictFigures};
use crate::result::{ResultError, StackTrials, Trial};

/// fsck's part of the report.
pub struct FsckReport;

/// The per-stack table of one workload: fill and check, repeat by repeat.
fn table(stacks: &[StackTrials<'_>]) -> Result<Table, ResultError> {
    let mut rows = Vec::new();
    for s in stacks {
        for t in &s.trials {
            let v = verdict_of(t)?;
            let mib = v.fsck_read_bytes.map(|b| b as f64 / (1u64 << 20) as f64);
            rows.push(vec![
                format!("{} r{}", s.stack, t.repeat),
                v.files.to_string(),
                num_opt(v.fill_files_per_s),
                num_opt(v.create_us),
                num_opt(v.write_us),
                num_opt(v.fsync_us),
                num_opt(v.close_us),
                num_opt(v.fsck_s),
                num_opt(v.fsck_files_per_s),
                num_opt(v.fsck_peak_rss_mib),
                num_opt(v.fsck_rss_bytes_per_file),
                num_opt(v.fsck_cpu_share),
                v.fsck_bound.clone().unwrap_or_else(|| "-".into()),
                num_opt(mib),
                v.fsck_read_requests.map_or("-".into(), |n| n.to_string()),
                num_opt(v.fsck_read_request_kib),
                v.fsck_exit.map_or("signal".into(), |e| e.to_string()),
            ]);
        }
    }
    let headings = [
        "trial",
        "files",
        "fill files/s",
        "create µs",
        "write µs",
        "fsync µs",
        "close µs",
        "fsck s",
        "fsck files/s",
        "peak RSS MiB",
        "RSS B/file",
        "CPU share",
        "bound",
        "read MiB",
        "read requests",
        "mean read KiB",
        "exit",
    ];
    Ok(Table {
        caption: "Fill (fs_mark's figures: files/s and the mean time of each step) and check (the checker's wall time in model time, files over it, peak RSS from wait4, CPU time over wall time, and what it read from the stack's device during the check)".into(),
        headings: headings.map(String::from).to_vec(),
        rows,
    })
}

impl KindReport for FsckReport {
    fn columns(&self) -> &'static [FigureSpec] {
        COLUMNS
    }

    fn figures(&self, trial: &Trial) -> Result<VerdictFigures, ResultError> {
        crate::workload::figures_of(trial, Verdict::figures)
    }

    fn sections(&self, stacks: &[StackTrials<'_>]) -> Result<Vec<Section>, ResultError> {
        let mut blocks = vec![Block::Table(table(stacks)?)];
        for s in stacks {
            for t in &s.trials {
                if let Some(c) = verdict_of(t)?.fsck_command {
                    blocks.push(Block::Note {
                        text: format!("{} r{}: `{c}`", s.stack, t.repeat),
                    });
                }
            }
        }
        Ok(vec![Section {
            title: "Fill and check".into(),
            intro: Some(format!(
                "Each stack filled with files as fs_mark does, unmounted, caches dropped, then checked read-only by its filesystem's own checker. Times are the device model's; {}.",
                "a check with CPU time at least half its wall time is called CPU-bound"
            )),
            blocks,
        }])
    }

    fn sweep_sections(&self, stacks: &[StackTrials<'_>]) -> Result<Vec<Section>, ResultError> {
        super::scaling::sections(stacks)
    }
}
