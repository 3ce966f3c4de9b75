//! `iotrial study`: a built-in study or a study file run over its stacks and repeats (resumable,
//! or only printed with `--dry-run`), whole or one part of it (`--shard K/N|auto`, `--trial`);
//! ends with the comparison table and report.html. `--list-trials` prints the trials' stable
//! ids instead.

use super::errors::{failed, refused_flag, usage, Interrupted};
use anyhow::Result;
use iotrial::cause::{Cause, HasCause};
use iotrial::stack::DeviceSpec;
use iotrial::study::plan::repeats::Percent;
use iotrial::study::{builtin, expand, plan::identity, run, Shard};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The arguments of `iotrial study`.
#[derive(clap::Args)]
pub struct StudyArgs {
    /// A built-in study name or a study file.
    study: String,
    /// Small sizes and sample counts (the study's [quick] section).
    #[arg(long)]
    quick: bool,
    /// Run only these stacks (repeat or separate with commas).
    #[arg(long)]
    only: Vec<String>,
    /// Run every stack on this device instead (e.g. emu:hdd, block:/dev/sdX, image:size=64GiB).
    #[arg(long)]
    device: Option<String>,
    /// Continue an interrupted study: the newest results directory of this study, or DIR.
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = "")]
    resume: Option<String>,
    /// Print every command and sysfs write it would do; run nothing.
    #[arg(long)]
    dry_run: bool,
    /// Directory the results directory is created in (default: the study's `out`, else results).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Allow destroying the signatures on this block device.
    #[arg(long, value_name = "DEVICE")]
    wipe: Vec<PathBuf>,
    /// Print the study's trials (position, shard of --shard's N, digest, id) and run nothing.
    #[arg(long)]
    list_trials: bool,
    /// Run only shard K of N (the trials at positions K-1, K-1+N, ... of the run order), or
    /// `auto`: K and N from SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT, or from
    /// JOB_COMPLETION_INDEX and IOTRIAL_SHARD_COUNT.
    #[arg(long, value_name = "K/N|auto", conflicts_with = "trial")]
    shard: Option<String>,
    /// Run only this trial (its id, as --list-trials prints it, or its digest); repeatable.
    #[arg(long, value_name = "ID")]
    trial: Vec<String>,
    /// Repeat every stack N times, round-robin (replaces the study's `repeats`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    repeats: Option<u32>,
    /// Let a stack get up to N repeats while its interval is too wide (the study's
    /// `max_repeats`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    max_repeats: Option<u32>,
    /// The relative half-width of a 95% interval that is narrow enough, e.g. 2% (the study's
    /// `interval`).
    #[arg(long, value_name = "P%", value_parser = parse_percent)]
    interval: Option<Percent>,
}

fn parse_percent(text: &str) -> Result<Percent, String> {
    Percent::parse(text)
}

/// Runs the study and prints its table and where its report is.
pub fn run(a: StudyArgs, stop: &Arc<AtomicBool>) -> Result<()> {
    let study = builtin::load(&a.study).map_err(failed)?;
    if let Some(d) = &a.device {
        // A device this host cannot build is the trials' to report: they are skipped.
        match DeviceSpec::parse(d) {
            Err(e) if e.why() == Cause::Input => return Err(refused_flag("--device", e)),
            _ => {}
        }
    }
    let shard = match &a.shard {
        None => None,
        Some(s) => Some(
            Shard::parse(s, &|v| std::env::var(v).ok())
                .map_err(|e| usage(format!("--shard {e}")))?,
        ),
    };
    let expand_opts = iotrial::study::Options {
        quick: a.quick,
        only: a.only,
        device: a.device,
        shard,
        trials: a.trial,
        repeats: a.repeats,
        max_repeats: a.max_repeats,
        interval: a.interval,
    };
    if a.list_trials {
        return list_trials(&study, &expand_opts);
    }
    let out_dir = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(study.out.clone().unwrap_or_else(|| "results".into())));
    let resume = match a.resume.as_deref() {
        None => None,
        Some("") => match run::latest_results(&out_dir, &study.name, &expand_opts) {
            Some(dir) => Some(dir),
            // A shard whose task never started (or whose directory was lost) starts afresh.
            None if expand_opts.selects() => {
                println!(
                    "--resume: no results directory of {} of study {} in {}; starting one",
                    expand_opts.part().unwrap_or_default(),
                    study.name,
                    out_dir.display()
                );
                None
            }
            None => {
                return Err(usage(format!(
                    "--resume: no results directory of study {} in {}",
                    study.name,
                    out_dir.display()
                )))
            }
        },
        Some(p) => Some(PathBuf::from(p)),
    };
    let dry_run = a.dry_run;
    let opts = run::RunOptions {
        expand: expand_opts,
        resume,
        out: a.out,
        dry_run,
        wipe: a.wipe,
        progress: std::io::IsTerminal::is_terminal(&std::io::stdout()),
    };
    let mut say = std::io::stdout();
    let r = run::run(&study, &opts, stop, &mut say).map_err(failed)?;
    if dry_run {
        return Ok(());
    }
    println!("\n{}", r.table);
    if let Some(rep) = &r.report {
        println!("report: {}", rep.html.display());
        println!("        {}", rep.markdown.display());
    }
    if let Some(root) = &r.root {
        println!("results: {}", root.display());
    }
    if r.interrupted {
        return Err(Interrupted.into());
    }
    if r.failed > 0 {
        anyhow::bail!("{} trial(s) failed; see the manifest", r.failed);
    }
    Ok(())
}

/// Prints every trial of the study (those of `--shard`/`--trial` when given): its position in
/// the run order, its shard when `--shard` names N, its digest and its id.
fn list_trials(study: &iotrial::study::Study, opts: &iotrial::study::Options) -> Result<()> {
    let exp = expand(study, opts).map_err(failed)?;
    let all = expand(&exp.study, &Default::default()).map_err(failed)?;
    println!(
        "# study {}: {} trials, hash {}",
        exp.study.name,
        all.trials.len(),
        identity::study_hash(&exp.study)
    );
    let n = opts.shard.map(|s| s.count);
    let width = all.trials.len().saturating_sub(1).to_string().len().max(3);
    match n {
        Some(n) => println!(
            "# {:>width$}  {:<8} {:<12}  id",
            "pos",
            format!("shard/{n}"),
            "digest"
        ),
        None => println!("# {:>width$}  {:<12}  id", "pos", "digest"),
    }
    for t in &exp.trials {
        match n {
            Some(n) => println!(
                "  {:>width$}  {:<8} {}  {}",
                t.position,
                t.position % n + 1,
                t.digest,
                t.id
            ),
            None => println!("  {:>width$}  {}  {}", t.position, t.digest, t.id),
        }
    }
    Ok(())
}
