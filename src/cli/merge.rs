//! `iotrial merge OUT DIR...`: results directories of one study (its shards, trials run again,
//! an earlier merge) combined into OUT with its table and report, as if the whole study had
//! run in one place. Missing, failed and duplicated trials are named with the command that
//! runs each again; the exit status is 1 for them unless `--allow-partial`, 2 for directories
//! of different studies.

use super::errors::failed;
use anyhow::Result;
use iotrial::study::results::merge::{merge, MergeOptions};
use std::path::PathBuf;

/// The arguments of `iotrial merge`.
#[derive(clap::Args)]
pub struct MergeArgs {
    /// The merged results directory: new, empty, or an earlier merge of the same study.
    out: PathBuf,
    /// Results directories of the study (of `iotrial study --shard`, `--trial`, or a merge),
    /// or directories holding them (a launch's shards/).
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Write OUT even when trials are missing, failed or finished twice (exit status 0).
    #[arg(long)]
    allow_partial: bool,
}

/// Merges and prints the table, the problems and where the report is.
pub fn run(a: MergeArgs) -> Result<()> {
    let opts = MergeOptions {
        out: a.out,
        dirs: a.dirs,
        allow_partial: a.allow_partial,
    };
    let m = merge(&opts).map_err(failed)?;
    if m.root.is_some() {
        println!("{}", m.table);
    }
    for p in &m.problems {
        println!("{p}");
    }
    if !m.related.is_empty() {
        println!(
            "derived again against their reference: {}",
            m.related.join(", ")
        );
    }
    match &m.root {
        Some(root) => {
            if let Some(rep) = &m.report {
                println!("report: {}", rep.html.display());
                println!("        {}", rep.markdown.display());
            }
            println!(
                "results: {} ({} trials from {} directories)",
                root.display(),
                m.taken,
                m.sources
            );
            Ok(())
        }
        None => anyhow::bail!(
            "{} trial(s) missing, failed or finished twice; nothing written (--allow-partial writes what there is)",
            m.problems.len()
        ),
    }
}
