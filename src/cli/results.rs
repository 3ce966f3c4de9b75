//! The subcommands that read results directories and do no I/O on any stack: `report` (rebuild
//! report.html and report.md), `compare` (verdict deltas between two studies) and `export-fio`
//! (the fio job beside each trial).

use super::errors::{failed, usage};
use anyhow::Result;
use iotrial::report;
use std::path::PathBuf;

/// The arguments of `iotrial report`.
#[derive(clap::Args)]
pub struct ReportArgs {
    /// A results directory (holds trials/ and manifest.json).
    dir: PathBuf,
}

/// The arguments of `iotrial compare`.
#[derive(clap::Args)]
pub struct CompareArgs {
    /// Results directory before the change.
    a: PathBuf,
    /// Results directory after the change.
    b: PathBuf,
    /// Print a Markdown table instead of the terminal table.
    #[arg(long)]
    markdown: bool,
}

/// The arguments of `iotrial export-fio`.
#[derive(clap::Args)]
pub struct ExportFioArgs {
    /// A results directory, or one trial's directory.
    dir: PathBuf,
}

/// Rebuilds the report of a results directory and prints the files' paths.
pub fn report(a: ReportArgs) -> Result<()> {
    let files = report::html::write_report(&a.dir, iotrial::capacity::report_of).map_err(usage)?;
    println!("{}\n{}", files.html.display(), files.markdown.display());
    Ok(())
}

/// Prints the verdict deltas between two results directories.
pub fn compare(a: CompareArgs) -> Result<()> {
    let c =
        report::compare::compare_dirs(&a.a, &a.b, iotrial::capacity::report_of).map_err(usage)?;
    print!("{}", report::compare::render(&c, a.markdown));
    Ok(())
}

/// Writes trial.fio beside each result.json and prints the files written.
pub fn export_fio(a: ExportFioArgs) -> Result<()> {
    for f in iotrial::fio::export_trial(&a.dir).map_err(failed)? {
        println!("wrote {}", f.display());
    }
    Ok(())
}
