//! `iotrial study`: a built-in study or a study file run over its stacks and repeats (resumable,
//! or only printed with `--dry-run`); ends with the comparison table and report.html.

use super::errors::{failed, refused_flag, usage, Interrupted};
use anyhow::Result;
use iotrial::cause::{Cause, HasCause};
use iotrial::stack::DeviceSpec;
use iotrial::study::{builtin, run};
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
    let out_dir = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(study.out.clone().unwrap_or_else(|| "results".into())));
    let resume = match a.resume.as_deref() {
        None => None,
        Some("") => Some(run::latest_results(&out_dir, &study.name).ok_or_else(|| {
            usage(format!(
                "--resume: no results directory of study {} in {}",
                study.name,
                out_dir.display()
            ))
        })?),
        Some(p) => Some(PathBuf::from(p)),
    };
    let dry_run = a.dry_run;
    let opts = run::RunOptions {
        expand: iotrial::study::Options {
            quick: a.quick,
            only: a.only,
            device: a.device,
        },
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
