//! `iotrial run`: one workload (or a fio job file) once on one stack described by flags; writes a
//! results directory and prints the streams' table and the verdict.

use super::stack_args::{parse_sets, MonitorArgs, OneStack, StackArgs};
use crate::cli::errors::{failed, usage};
use anyhow::{Context, Result};
use iotrial::report::terminal;
use iotrial::stack::ledger::Ledger;
use iotrial::study::plan::expand;
use iotrial::study::results::ResultsDir;
use iotrial::study::{Manifest, Status};
use iotrial::trial;
use iotrial::workload::{self, Outcome};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The arguments of `iotrial run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// Workload kind (see `iotrial list workloads`), or fio:PATH for a fio job file run as
    /// the `job` workload.
    workload: String,
    /// Where to run: dir:PATH, image:[PATH][,size=SIZE], block:/dev/X. Default: a fresh
    /// temporary directory. Repeat for a filesystem over several devices (btrfs).
    #[arg(long)]
    target: Vec<String>,
    #[command(flatten)]
    stack: StackArgs,
    /// Set a workload parameter, e.g. --set samples=2048 --set region_size=8GiB.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Directory the results directory is created in.
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// Print result.json on stdout instead of the table.
    #[arg(long)]
    json: bool,
    /// Also write fio's json+ output (fio.json) beside result.json: a job trial (fio:FILE or
    /// `job`) only.
    #[arg(long)]
    fio_json: bool,
    #[command(flatten)]
    monitor: MonitorArgs,
}

/// Runs the trial and writes its results directory.
pub fn run(a: RunArgs, stop: &Arc<AtomicBool>) -> Result<()> {
    let (w, mut overrides) = match a.workload.strip_prefix(iotrial::fio::PREFIX) {
        Some(path) => {
            let file = iotrial::fio::parse_file(Path::new(path)).map_err(failed)?;
            for n in &file.notes {
                eprintln!("note: {n}");
            }
            (workload::find("job").map_err(usage)?, file.overrides)
        }
        None => (workload::find(&a.workload).map_err(usage)?, Vec::new()),
    };
    overrides.extend(parse_sets(&a.set)?);
    if a.fio_json {
        if w.name() != "job" {
            return Err(usage(format!(
                "--fio-json writes fio's json+ output of a job trial (fio:FILE or job); {} is not one",
                a.workload
            )));
        }
        overrides.push(("fio_json".into(), "true".into()));
    }
    let params = w.resolve(&overrides).map_err(usage)?;
    let one = OneStack::from_args(&a.target, &a.stack, &a.monitor)?;
    let (stack, devices) = (&one.stack, &one.devices);
    // Refuse impossible parameters before anything is created on disk.
    let plan = workload::powercut::plan_of(w, &params, 1).map_err(usage)?;
    if plan.cuts_power() && stack.vm.guest().is_none() {
        if let Some(why) = iotrial::stack::powercut::refusal(stack, devices) {
            return Err(usage(why));
        }
    }
    let mut ledger = Ledger::new().context("create the resource ledger")?;
    let setup = one.setup(w.name());
    let mut output = trial::run(w, &params, &setup, &mut ledger, stop, !a.json).map_err(failed)?;
    let out = &a.out;
    let results = ResultsDir::create(out, w.name())
        .with_context(|| format!("create results directory in {}", out.display()))?;
    // The run as a one-trial study: study.toml and the manifest every results directory has.
    let exp = expand::single_run(w.name(), &params, stack.clone(), &one.single())?;
    let mut manifest = Manifest::create(&results, &exp)?;
    output.doc.trial = Some(iotrial::result::TrialIdentity {
        id: exp.trials[0].id.clone(),
        digest: exp.trials[0].digest.clone(),
        study_hash: manifest.hash(),
        idle_before_s: None,
    });
    let tmp = results.begin_trial(&stack.name, w.name(), 1)?;
    trial::write(&tmp, &output)?;
    let dir = results.commit_trial(&tmp, &stack.name, w.name(), 1)?;
    manifest.update(&results.root, &exp.trials[0].id, Status::Done, None)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&output.doc)?);
    } else {
        print_outcome(output.outcome.as_ref(), &output.doc.warnings);
        if let Some(s) = output
            .doc
            .durability
            .as_ref()
            .and_then(|d| d["summary"].as_str())
        {
            println!("power cut: {s}");
        }
        println!("results: {}", dir.display());
    }
    Ok(())
}

/// The streams' table, the warnings and the verdict line of an outcome.
pub fn print_outcome(outcome: &dyn Outcome, warnings: &[String]) {
    println!("{}", terminal::table(&outcome.stream_rows()));
    for w in warnings {
        println!("warning: {w}");
    }
    println!("{}", outcome.verdict_line());
}
