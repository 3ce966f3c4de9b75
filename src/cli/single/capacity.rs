//! `iotrial capacity`: how many record streams (or playback streams, or how high a bitrate) one
//! stack holds in real time with no overflow and no underrun: a hammering run to estimate, then
//! one full run per value tried, each on a freshly built stack, the edge repeated; writes a
//! results directory (every run's files under the search's `probes/`) and its report.

use super::stack_args::{parse_sets, MonitorArgs, OneStack, StackArgs};
use crate::cli::errors::{failed, usage};
use anyhow::{Context, Result};
use iotrial::capacity::{self, CapacitySpec};
use iotrial::report::html::write_report;
use iotrial::stack::ledger::Ledger;
use iotrial::study::plan::expand;
use iotrial::study::results::ResultsDir;
use iotrial::study::{Manifest, Status};
use iotrial::workload;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The arguments of `iotrial capacity`.
#[derive(clap::Args)]
pub struct CapacityArgs {
    /// Workload kind whose streams run in real time: dvr or stream.
    workload: String,
    /// Where to run: dir:PATH, image:[PATH][,size=SIZE], block:/dev/X, emu:MODEL. Default: a
    /// fresh temporary directory.
    #[arg(long)]
    target: Vec<String>,
    #[command(flatten)]
    stack: StackArgs,
    /// Set a workload parameter, e.g. --set bitrate=19.4 --set buffer=5s --set duration=60s.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// The parameter to search: recorders, players or bitrate (dvr); writers, readers or
    /// bitrate (stream). Default: the record streams.
    #[arg(long)]
    vary: Option<String>,
    /// The lowest value tried (default: 1, or the resolution of a bitrate).
    #[arg(long)]
    min: Option<f64>,
    /// The highest value tried (default: as many streams as the kind takes, or 10000 Mbit/s).
    #[arg(long)]
    max: Option<f64>,
    /// Runs of each value at the edge: the passing one and the failing one.
    #[arg(long, default_value_t = capacity::spec::DEFAULT_CONFIRM)]
    confirm: u32,
    /// A bitrate search's resolution, Mbit/s (default 0.1).
    #[arg(long)]
    resolution: Option<f64>,
    /// Directory the results directory is created in.
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// Print the search's result.json on stdout instead of the verdict line.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    monitor: MonitorArgs,
}

/// Runs the search and writes its results directory and report.
pub fn run(a: CapacityArgs, stop: &Arc<AtomicBool>) -> Result<()> {
    let w = workload::find(&a.workload).map_err(usage)?;
    let kind = CapacitySpec::kind_of(w).map_err(usage)?;
    let params = w.resolve(&parse_sets(&a.set)?).map_err(usage)?;
    let spec = CapacitySpec {
        vary: a.vary.unwrap_or_else(|| kind.varies()[0].to_string()),
        min: a.min,
        max: a.max,
        confirm: a.confirm,
        resolution: a.resolution,
    };
    // Refuse what cannot be searched before anything is built.
    spec.domain(w, &params).map_err(failed)?;
    let one = OneStack::from_args(&a.target, &a.stack, &a.monitor)?;
    let stack = &one.stack;
    let name = format!("{}-capacity", w.name());
    let results = ResultsDir::create(&a.out, &name)
        .with_context(|| format!("create results directory in {}", a.out.display()))?;
    let exp = expand::single_capacity(
        w.name(),
        &params,
        stack.clone(),
        &one.single(),
        spec.clone(),
    )?;
    let mut manifest = Manifest::create(&results, &exp)?;
    let id = exp.trials[0].id.clone();
    manifest.update(&results.root, &id, Status::Running, None)?;
    let setup = one.setup(w.name());
    let tmp = results.begin_trial(&stack.name, w.name(), 1)?;
    let search = capacity::run::Search {
        workload: w,
        params: &params,
        spec: &spec,
        setup: &setup,
        dir: &tmp,
        progress: !a.json && std::io::IsTerminal::is_terminal(&std::io::stdout()),
    };
    let mut ledger = Ledger::new().context("create the resource ledger")?;
    let quiet = a.json;
    let found = capacity::run::run(&search, &mut ledger, stop, &mut |line| {
        if !quiet {
            println!("{line}");
        }
    });
    let found = match found {
        Ok(f) => f,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            manifest.update(&results.root, &id, Status::Failed, Some(e.to_string()))?;
            return Err(failed(e));
        }
    };
    let mut found = found;
    found.doc.trial = Some(iotrial::result::TrialIdentity {
        id: id.clone(),
        digest: exp.trials[0].digest.clone(),
        study_hash: manifest.hash(),
        idle_before_s: None,
    });
    iotrial::result::write(&tmp.join("result.json"), &found.doc)?;
    let dir = results.commit_trial(&tmp, &stack.name, w.name(), 1)?;
    manifest.update(&results.root, &id, Status::Done, None)?;
    let report = write_report(&results.root, capacity::report_of).ok();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&found.doc)?);
        return Ok(());
    }
    for warning in &found.doc.warnings {
        println!("warning: {warning}");
    }
    println!("{}", found.verdict.line());
    println!("results: {}", dir.display());
    if let Some(r) = report {
        println!("report: {}", r.html.display());
    }
    Ok(())
}
