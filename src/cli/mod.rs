//! The command line's parts: the subcommands (one file each, holding its clap arguments and
//! what it does), the stack flags they share, and the errors with their exit statuses.

pub mod analyze;
pub mod capture;
pub mod cleanup;
pub mod device;
pub mod docs;
pub mod errors;
pub mod launch;
pub mod list;
pub mod merge;
pub mod results;
pub mod single;
pub mod study;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The whole command line.
#[derive(Parser)]
#[command(
    name = "iotrial",
    version,
    about = "Run your application's disk workload on candidate storage stacks and see what each guarantees"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
// Parsed once per process: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
enum Command {
    /// Run one workload once on one target and write its results.
    Run(single::run::RunArgs),
    /// Search the most record streams (or playback streams, or the highest bitrate) one stack
    /// holds in real time with no overflow and no underrun.
    Capacity(single::capacity::CapacityArgs),
    /// Re-derive a workload's verdict from a samples.csv, without doing any I/O.
    Analyze(analyze::AnalyzeArgs),
    /// Run a study: workloads x stacks x repeats, a built-in one (`iotrial list studies`) or a
    /// study file; ends with a comparison table and report.html.
    Study(study::StudyArgs),
    /// Characterize a device.
    Device(device::DeviceArgs),
    /// Write the fio job that does what a job or dvr trial did (trial.fio beside each
    /// result.json under RESULT_DIR), to check its figures with fio on the same stack.
    ExportFio(results::ExportFioArgs),
    /// Record the block requests of a device while a command runs (or for a duration) as
    /// fio's iolog v3, which `iotrial run replay` and `fio --read_iolog` replay (root).
    Capture(capture::CaptureArgs),
    /// Release what a killed run left behind (loop devices, mounts, FUSE servers, images,
    /// scheduler changes), as listed in its ledger.
    Cleanup,
    /// Hand a study to a batch system, one trial per task plus a merge: an sbatch job array
    /// (slurm) or an Indexed Job (k8s).
    Launch(launch::LaunchArgs),
    /// Combine results directories of one study (shards, trials run again) into one, with its
    /// table and report; names every missing, failed or duplicated trial.
    Merge(merge::MergeArgs),
    /// Rebuild report.html and report.md of a results directory (no I/O on any stack).
    Report(results::ReportArgs),
    /// Compare the verdicts of two results directories: deltas and whether each is significant.
    Compare(results::CompareArgs),
    /// List what iotrial knows.
    List {
        #[arg(value_enum)]
        what: list::ListWhat,
        /// Print Markdown tables (as docs/ holds them, fio-options as docs/fio-options.md) instead of terminal ones.
        #[arg(long)]
        markdown: bool,
    },
    /// Print the shell completion script of bash, zsh or fish.
    Completions {
        #[arg(value_enum)]
        shell: docs::Shell,
    },
    /// Print the man page (roff) of iotrial, or of one of its subcommands.
    Man {
        /// A subcommand (`run`, `study`, ...): its own page.
        subcommand: Option<String>,
    },
    /// The guest agent of a VM trial: the first process of the guest iotrial boots (never
    /// run by hand).
    #[command(hide = true)]
    Guest,
}

/// Runs the subcommand the command line names.
pub fn dispatch(cli: Cli, stop: &Arc<AtomicBool>) -> Result<()> {
    match cli.command {
        Command::Run(a) => single::run::run(a, stop),
        Command::Capacity(a) => single::capacity::run(a, stop),
        Command::Analyze(a) => analyze::run(a),
        Command::Study(a) => study::run(a, stop),
        Command::Device(a) => device::run(a, stop),
        Command::ExportFio(a) => results::export_fio(a),
        Command::Capture(a) => capture::run(a, stop),
        Command::Cleanup => cleanup::run(),
        Command::Launch(a) => launch::run(a),
        Command::Merge(a) => merge::run(a),
        Command::Report(a) => results::report(a),
        Command::Compare(a) => results::compare(a),
        Command::List { what, markdown } => {
            docs::quiet_on_closed_pipe();
            list::run(what, markdown)
        }
        Command::Completions { shell } => docs::completions(shell),
        Command::Man { subcommand } => docs::man(subcommand),
        Command::Guest => iotrial::guest::main(),
    }
}
