//! `iotrial launch slurm|k8s STUDY`: writes the batch system's own job for a study, one trial
//! per task plus a job that merges them (an sbatch job array and a dependent merge job; a
//! Kubernetes Indexed Job and a merge Job), prints where everything goes, and with `--submit`
//! submits it. `launch slurm --resume` submits again only the trials no task finished.

use super::errors::{failed, usage};
use anyhow::Result;
use iotrial::launch::k8s::{self, K8sOptions};
use iotrial::launch::slurm::{self, SlurmOptions, DEFAULT_GRACE_S};
use iotrial::launch::{LaunchDir, Launched};
use iotrial::study::{builtin, expand, Options};
use std::path::PathBuf;

/// The arguments of `iotrial launch`.
#[derive(clap::Args)]
pub struct LaunchArgs {
    #[command(subcommand)]
    engine: Engine,
}

/// What every launcher takes: the study and where its launch directory goes.
#[derive(clap::Args)]
struct StudyChoice {
    /// A built-in study name or a study file.
    study: String,
    /// Small sizes and sample counts (the study's [quick] section).
    #[arg(long)]
    quick: bool,
    /// Only these stacks (repeat or separate with commas).
    #[arg(long)]
    only: Vec<String>,
    /// Every stack on this device instead.
    #[arg(long)]
    device: Option<String>,
    /// Directory the launch directory is created in (default: the study's `out`, else
    /// results); the nodes must see it at the same path.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Submit the job (sbatch; kubectl apply).
    #[arg(long)]
    submit: bool,
}

#[derive(clap::Subcommand)]
enum Engine {
    /// An sbatch job array, one task per trial, and a merge job after it.
    Slurm {
        #[command(flatten)]
        study: StudyChoice,
        /// The partition to run in.
        #[arg(long)]
        partition: Option<String>,
        /// At most this many trials at once (the array's %M).
        #[arg(long, value_name = "M")]
        max_parallel: Option<usize>,
        /// Each trial's time limit, as sbatch's --time takes it (e.g. 2:00:00).
        #[arg(long, value_name = "T")]
        time: Option<String>,
        /// Seconds before the time limit a trial is told to stop and release its stack.
        #[arg(long, default_value_t = DEFAULT_GRACE_S)]
        grace: u64,
        /// Submit again the trials of a launch that no task finished (the newest launch of
        /// this study, or DIR), and a new merge job.
        #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = "")]
        resume: Option<String>,
    },
    /// A Kubernetes Indexed Job, one trial per pod, and a merge Job.
    K8s {
        #[command(flatten)]
        study: StudyChoice,
        /// The container image: iotrial on its PATH and the tools the stacks need.
        #[arg(long, default_value = "iotrial:latest")]
        image: String,
        /// At most this many pods at once (the Job's parallelism; default: every trial).
        #[arg(long, value_name = "M")]
        max_parallel: Option<usize>,
        /// Retries of a trial whose pod failed (backoffLimitPerIndex).
        #[arg(long, default_value_t = 1)]
        retries: u32,
        /// The PersistentVolumeClaim the results go to.
        #[arg(long, default_value = "iotrial-results")]
        claim: String,
        /// Where the pods mount it.
        #[arg(long, default_value = "/results")]
        results_path: String,
        #[arg(long)]
        namespace: Option<String>,
    },
}

/// The whole study the choice names, and the directory launches go in.
fn study_of(c: &StudyChoice) -> Result<(iotrial::study::Expansion, PathBuf)> {
    let study = builtin::load(&c.study).map_err(failed)?;
    let opts = Options {
        quick: c.quick,
        only: c.only.clone(),
        device: c.device.clone(),
        ..Options::default()
    };
    let exp = expand(&study, &opts).map_err(failed)?;
    let out = c
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(study.out.clone().unwrap_or_else(|| "results".into())));
    Ok((exp, out))
}

fn print(l: &Launched, engine: &str) {
    println!("launch directory: {}", l.dir.display());
    for f in &l.files {
        println!("wrote {}", f.display());
    }
    match &l.submitted {
        Some(s) => {
            if l.trials > 0 {
                println!(
                    "submitted: trials job {} (tasks {}), {} trial(s)",
                    s.trials_job, s.tasks, l.trials
                );
            } else {
                println!("every trial has finished: nothing to run");
            }
            if let Some(m) = &s.merge_job {
                println!("submitted: merge job {m} (after the trials)");
            }
        }
        None => {
            println!("{} trial(s); to submit ({engine}):", l.trials);
            for c in &l.commands {
                println!("  {c}");
            }
        }
    }
    println!("report (once merged): {}", l.report.display());
}

/// Writes, and with --submit submits, the job.
pub fn run(a: LaunchArgs) -> Result<()> {
    let bin = std::env::current_exe()?;
    match a.engine {
        Engine::Slurm {
            study,
            partition,
            max_parallel,
            time,
            grace,
            resume,
        } => {
            if max_parallel == Some(0) {
                return Err(usage("--max-parallel must be at least 1"));
            }
            let (exp, out) = study_of(&study)?;
            let o = SlurmOptions {
                partition,
                max_parallel,
                time,
                grace_s: grace,
                submit: study.submit,
                iotrial: bin,
            };
            let l = match resume.as_deref() {
                None => slurm::launch(&exp, &out, &o),
                Some(d) => {
                    let dir = match d {
                        "" => {
                            LaunchDir::latest(&out, &exp.study.name, "slurm").ok_or_else(|| {
                                usage(format!(
                                    "--resume: no Slurm launch of study {} in {}",
                                    exp.study.name,
                                    out.display()
                                ))
                            })?
                        }
                        d => PathBuf::from(d),
                    };
                    slurm::resume(&exp, &dir, &o)
                }
            }
            .map_err(failed)?;
            print(&l, "sbatch");
        }
        Engine::K8s {
            study,
            image,
            max_parallel,
            retries,
            claim,
            results_path,
            namespace,
        } => {
            if max_parallel == Some(0) {
                return Err(usage("--max-parallel must be at least 1"));
            }
            let (exp, out) = study_of(&study)?;
            let o = K8sOptions {
                image,
                parallelism: max_parallel,
                retries,
                claim,
                results_path,
                namespace,
                submit: study.submit,
            };
            let l = k8s::launch(&exp, &out, &o).map_err(failed)?;
            print(&l, "kubectl");
        }
    }
    Ok(())
}
