//! `iotrial launch slurm`: the study as an sbatch job array, one task per trial
//! (`--array=0-(n-1)%M`), each on a whole node (`--exclusive`) and told to stop before its time
//! limit (`--signal=B:TERM@grace`: the trial's ledger then releases what it made and the
//! trial is left to run again), and a merge job that runs after the array whatever its tasks'
//! ends (`--dependency=afterany`). `--resume` submits again only the trials no task finished,
//! and a new merge job.

use super::{io, ranges, LaunchDir, LaunchError, Launched, Submission};
use crate::study::plan::shard::SHARD_COUNT_VAR;
use crate::study::Expansion;
use crate::utc::utc_iso;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

/// Seconds before the time limit a task is sent SIGTERM, unless told otherwise.
pub const DEFAULT_GRACE_S: u64 = 300;

/// How to launch on Slurm.
#[derive(Debug, Clone)]
pub struct SlurmOptions {
    pub partition: Option<String>,
    /// At most this many tasks at once (`%M`).
    pub max_parallel: Option<usize>,
    /// Each task's time limit, as sbatch's `--time` takes it (`2:00:00`).
    pub time: Option<String>,
    /// Seconds before the time limit the task is told to stop.
    pub grace_s: u64,
    /// Run sbatch.
    pub submit: bool,
    /// The iotrial the tasks run (this one's path: the nodes must see it there).
    pub iotrial: PathBuf,
}

/// Text safe in a `#SBATCH` line and a shell word: no white space, quotes or shell
/// metacharacters.
fn plain(what: &str, text: &str) -> Result<String, LaunchError> {
    let bad = |c: char| c.is_whitespace() || "'\"\\$`;&|<>(){}*?!#".contains(c);
    if text.is_empty() || text.contains(bad) {
        return Err(LaunchError::Invalid(format!(
            "{what} '{text}' has white space or a shell character; choose a plainer one"
        )));
    }
    Ok(text.to_string())
}

fn path_text(what: &str, p: &Path) -> Result<String, LaunchError> {
    plain(what, &p.display().to_string())
}

/// The `#SBATCH` lines both jobs share.
fn common(o: &SlurmOptions) -> Result<Vec<String>, LaunchError> {
    let mut v = Vec::new();
    if let Some(p) = &o.partition {
        v.push(format!("#SBATCH --partition={}", plain("--partition", p)?));
    }
    Ok(v)
}

/// The array's script: task i runs shard i+1 of n (the trial at position i), resuming its own
/// results directory when it is run again.
pub fn trials_script(dir: &LaunchDir, o: &SlurmOptions) -> Result<String, LaunchError> {
    let n = dir.record.trials.len();
    let root = path_text("the launch directory", &dir.root)?;
    let bin = path_text("iotrial's path", &o.iotrial)?;
    let study = plain("the study's name", &dir.record.study)?;
    let mut s = vec![
        "#!/bin/bash".to_string(),
        format!(
            "# iotrial launch slurm: study {study}, {n} trials, one array task per trial: task i runs"
        ),
        "# the trial at position i of `iotrial study STUDY --list-trials` (shard i+1 of n).".into(),
        format!("#SBATCH --job-name=iotrial-{study}"),
        format!(
            "#SBATCH --array=0-{}{}",
            n.saturating_sub(1),
            o.max_parallel.map(|m| format!("%{m}")).unwrap_or_default()
        ),
        "#SBATCH --nodes=1".into(),
        "#SBATCH --exclusive".into(),
        format!("#SBATCH --signal=B:TERM@{}", o.grace_s),
        format!("#SBATCH --output={root}/logs/trial-%a-job%A.out"),
    ];
    if let Some(t) = &o.time {
        s.push(format!("#SBATCH --time={}", plain("--time", t)?));
    }
    s.extend(common(o)?);
    s.push(String::new());
    s.push(format!("export {SHARD_COUNT_VAR}={n}"));
    s.push(format!(
        "exec {bin} study {root}/study.toml --shard auto --resume --out {root}/shards"
    ));
    Ok(s.join("\n") + "\n")
}

/// The merge job's script.
pub fn merge_script(dir: &LaunchDir, o: &SlurmOptions) -> Result<String, LaunchError> {
    let root = path_text("the launch directory", &dir.root)?;
    let bin = path_text("iotrial's path", &o.iotrial)?;
    let study = plain("the study's name", &dir.record.study)?;
    let mut s = vec![
        "#!/bin/bash".to_string(),
        format!("# iotrial launch slurm: merges the trials of study {study} into {root}/merged"),
        "# (report.html, report.md); it names every trial that did not finish.".into(),
        format!("#SBATCH --job-name=iotrial-{study}-merge"),
        "#SBATCH --nodes=1".into(),
        format!("#SBATCH --output={root}/logs/merge-job%j.out"),
    ];
    s.extend(common(o)?);
    s.push(String::new());
    s.push(format!(
        "exec {bin} merge {root}/merged {root}/shards --allow-partial"
    ));
    Ok(s.join("\n") + "\n")
}

/// Runs `sbatch --parsable args...`; the job id.
fn sbatch(args: &[String]) -> Result<String, LaunchError> {
    let mut all = vec!["--parsable".to_string()];
    all.extend_from_slice(args);
    let text = super::engine("sbatch", &all)?;
    let id = text.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() {
        return Err(LaunchError::Engine {
            command: format!("sbatch {}", all.join(" ")),
            message: "printed no job id".into(),
        });
    }
    Ok(id)
}

/// The tasks of earlier submissions still pending or running (`123_4`, `123_[5-7%2]`).
fn queued(dir: &LaunchDir) -> Result<Vec<String>, LaunchError> {
    let ids: Vec<&str> = dir
        .record
        .submissions
        .iter()
        .flat_map(|s| std::iter::once(&s.trials_job).chain(s.merge_job.as_ref()))
        .map(String::as_str)
        .filter(|id| !id.is_empty())
        .collect();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let jobs = ids.join(",");
    let out = Command::new("squeue")
        .args(["--noheader", "--format=%i", &format!("--jobs={jobs}")])
        .output()
        .map_err(|e| LaunchError::Engine {
            command: "squeue".into(),
            message: e.to_string(),
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        // Jobs the controller has forgotten are done.
        if err.contains("Invalid job id") {
            return Ok(Vec::new());
        }
        return Err(LaunchError::Engine {
            command: format!("squeue --jobs={jobs}"),
            message: err.trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect())
}

/// Writes the scripts and submits (or prints) the array of `tasks` and the merge job.
fn submit(dir: &mut LaunchDir, tasks: &[usize], o: &SlurmOptions) -> Result<Launched, LaunchError> {
    let trials = dir.root.join("trials.sbatch");
    let merge = dir.root.join("merge.sbatch");
    std::fs::write(&trials, trials_script(dir, o)?).map_err(io("write trials.sbatch"))?;
    std::fs::write(&merge, merge_script(dir, o)?).map_err(io("write merge.sbatch"))?;
    let m = o.max_parallel.map(|m| format!("%{m}")).unwrap_or_default();
    let array = format!("{}{m}", ranges(tasks));
    let trials_args = vec![format!("--array={array}"), trials.display().to_string()];
    let merge_args = |after: Option<&str>| -> Vec<String> {
        let mut v: Vec<String> = after
            .map(|id| format!("--dependency=afterany:{id}"))
            .into_iter()
            .collect();
        v.push(merge.display().to_string());
        v
    };
    let mut commands = Vec::new();
    let mut submitted = None;
    if o.submit {
        let (trials_job, merge_job) = if tasks.is_empty() {
            (String::new(), sbatch(&merge_args(None))?)
        } else {
            let id = sbatch(&trials_args)?;
            let merge_id = sbatch(&merge_args(Some(&id)))?;
            (id, merge_id)
        };
        let s = Submission {
            trials_job,
            merge_job: Some(merge_job),
            tasks: array.clone(),
            submitted_utc: utc_iso(SystemTime::now()),
        };
        dir.record.submissions.push(s.clone());
        dir.save()?;
        submitted = Some(s);
    }
    if !tasks.is_empty() {
        commands.push(format!("sbatch {}", trials_args.join(" ")));
    }
    let after = (!tasks.is_empty()).then_some("<the array's job id>");
    commands.push(format!("sbatch {}", merge_args(after).join(" ")));
    Ok(Launched {
        dir: dir.root.clone(),
        files: vec![trials, merge],
        commands,
        submitted,
        report: dir.merged().join("report.html"),
        trials: tasks.len(),
    })
}

/// Writes a new launch of `exp` under `out` and submits it with `o.submit`.
pub fn launch(exp: &Expansion, out: &Path, o: &SlurmOptions) -> Result<Launched, LaunchError> {
    let mut dir = LaunchDir::create(out, exp, "slurm")?;
    let all: Vec<usize> = (0..dir.record.trials.len()).collect();
    submit(&mut dir, &all, o)
}

/// Submits again the trials of the launch in `root` that no task finished, and a merge job;
/// refused while an earlier submission still has tasks in the queue.
pub fn resume(exp: &Expansion, root: &Path, o: &SlurmOptions) -> Result<Launched, LaunchError> {
    let mut dir = LaunchDir::open(root, exp, "slurm")?;
    if o.submit {
        let q = queued(&dir)?;
        if !q.is_empty() {
            return Err(LaunchError::StillQueued(format!(
                "jobs of {} are still queued or running ({}); wait for them or scancel them, then resume",
                dir.root.display(),
                q.join(", ")
            )));
        }
    }
    let todo = dir.unfinished();
    submit(&mut dir, &todo, o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::{builtin, expand, Options};

    fn opts() -> SlurmOptions {
        SlurmOptions {
            partition: Some("disks".into()),
            max_parallel: Some(2),
            time: Some("1:00:00".into()),
            grace_s: 120,
            submit: false,
            iotrial: "/usr/local/bin/iotrial".into(),
        }
    }

    #[test]
    fn scripts_run_one_trial_per_task_and_merge_after() {
        let out = tempfile::tempdir().unwrap();
        let quick = Options {
            quick: true,
            ..Options::default()
        };
        let exp = expand(&builtin::load("dvr").unwrap(), &quick).unwrap();
        let l = launch(&exp, out.path(), &opts()).unwrap();
        // Seven stacks, each repeated three times.
        assert_eq!(l.trials, 21);
        let dir = LaunchDir::open(&l.dir, &exp, "slurm").unwrap();
        let t = trials_script(&dir, &opts()).unwrap();
        for line in [
            "#SBATCH --array=0-20%2",
            "#SBATCH --exclusive",
            "#SBATCH --signal=B:TERM@120",
            "#SBATCH --time=1:00:00",
            "#SBATCH --partition=disks",
            "export IOTRIAL_SHARD_COUNT=21",
        ] {
            assert!(t.lines().any(|l| l == line), "{line}: {t}");
        }
        assert!(t.contains("study.toml --shard auto --resume --out"), "{t}");
        let m = merge_script(&dir, &opts()).unwrap();
        assert!(m.contains("merge ") && m.contains("--allow-partial"), "{m}");
        assert_eq!(l.commands.len(), 2);
        assert!(l.commands[0].starts_with("sbatch --array=0-20%2 "));
        assert!(l.commands[1].contains("--dependency=afterany:"));
        assert!(l.dir.join("study.toml").exists() && l.dir.join("launch.json").exists());
        // Nothing ran: every trial is left to do.
        assert_eq!(dir.unfinished().len(), 21);
        let mut bad = opts();
        bad.partition = Some("a b".into());
        assert!(matches!(
            trials_script(&dir, &bad),
            Err(LaunchError::Invalid(_))
        ));
    }
}
