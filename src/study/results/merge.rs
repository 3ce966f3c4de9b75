//! `iotrial merge`: results directories of one study (its shards, a trial run again, an earlier
//! merge) combined into one, as if the whole study had run in one place. The directories must
//! hold the same resolved study (the manifests' study hashes agree). Every trial of the study
//! is taken from the directory that finished it; one finished in two is a duplicate, one
//! finished in none is missing or failed, and each is named with the command that runs it
//! again. Figures relating trials are derived again once all are together ([`super::relate`]);
//! then the table and report.html / report.md are written as at the end of a study.

use super::manifest::{difference, Manifest, Source, Status};
use super::relate::{relate, RelateError};
use super::table::StudyTable;
use super::ResultsDir;
use crate::cause::{Cause, HasCause};
use crate::report::html::{write_report, ReportFiles};
use crate::study::{Options, StudyError, Trial};
use std::path::{Path, PathBuf};

/// What to merge, and where.
#[derive(Debug, Clone)]
pub struct MergeOptions {
    /// The merged results directory (new, empty, or an earlier merge of the same study).
    pub out: PathBuf,
    /// Results directories, or directories holding results directories (a launch's
    /// `shards/`), each taken with all it holds.
    pub dirs: Vec<PathBuf>,
    /// Write the merged directory even when trials are missing, failed or duplicated.
    pub allow_partial: bool,
}

/// What keeps a merge from being complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemKind {
    /// Finished in no directory, and failed in none.
    Missing,
    /// Failed, and finished in no directory.
    Failed,
    /// Finished in more than one directory (the first one given is taken).
    Duplicate,
}

/// One trial a merge could not take cleanly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub kind: ProblemKind,
    pub id: String,
    /// Where it was found and how it ended.
    pub detail: String,
    /// The command that runs it again (None for a duplicate).
    pub rerun: Option<String>,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let word = match self.kind {
            ProblemKind::Missing => "missing",
            ProblemKind::Failed => "failed",
            ProblemKind::Duplicate => "duplicate",
        };
        write!(f, "{word} {}: {}", self.id, self.detail)?;
        if let Some(c) = &self.rerun {
            write!(f, "\n    run it again: {c}")?;
        }
        Ok(())
    }
}

/// What a merge did.
#[derive(Debug)]
pub struct Merged {
    /// The merged results directory; None when nothing was written (a problem without
    /// `allow_partial`).
    pub root: Option<PathBuf>,
    pub problems: Vec<Problem>,
    /// Trials taken.
    pub taken: usize,
    /// Results directories read.
    pub sources: usize,
    /// Trials whose figures were derived again against their reference.
    pub related: Vec<String>,
    pub table: String,
    pub report: Option<ReportFiles>,
}

/// Results directories that cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error(transparent)]
    Study(#[from] StudyError),
    #[error("no results directory to merge")]
    NoDirs,
    #[error("{} and {} hold different studies ({}: study hash {} vs {}); merge only results directories of one study, run with the same study file and options", first.display(), other.display(), difference, short(first_hash), short(other_hash))]
    DifferentStudies {
        first: PathBuf,
        other: PathBuf,
        first_hash: String,
        other_hash: String,
        difference: String,
    },
    #[error("{}: {message}", path.display())]
    Out { path: PathBuf, message: String },
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Relate(#[from] RelateError),
    #[error(transparent)]
    Report(#[from] crate::report::ReportError),
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(12)]
}

impl HasCause for MergeError {
    fn why(&self) -> Cause {
        match self {
            MergeError::Study(e) => e.why(),
            MergeError::NoDirs | MergeError::DifferentStudies { .. } | MergeError::Out { .. } => {
                Cause::Input
            }
            MergeError::Io { .. } | MergeError::Relate(_) | MergeError::Report(_) => Cause::Run,
        }
    }
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> MergeError {
    let context = context.into();
    move |source| MergeError::Io { context, source }
}

/// One input directory and its manifest.
struct Input {
    path: PathBuf,
    manifest: Manifest,
}

/// How one trial of the study is found among the inputs.
enum Found {
    /// Finished in input `i` (and perhaps in others, listed).
    Done(usize, Vec<usize>),
    Failed(String),
    Skipped(String),
    Missing(String),
}

/// Looks for trial `t` in every input.
fn find(inputs: &[Input], t: &Trial) -> Found {
    let mut done = Vec::new();
    let (mut failed, mut skipped, mut seen) = (None, None, Vec::new());
    for (i, input) in inputs.iter().enumerate() {
        let Some(rec) = input.manifest.trial(&t.id) else {
            continue;
        };
        if input.path.join(&rec.path).join("result.json").is_file() {
            done.push(i);
            continue;
        }
        let status = serde_json::to_value(rec.status).unwrap_or_default();
        let reason = rec.reason.clone().unwrap_or_default();
        seen.push(match rec.status {
            Status::Done => format!(
                "recorded done in {}, but {} holds no result.json",
                input.path.display(),
                rec.path
            ),
            _ => format!(
                "{} in {}",
                status.as_str().unwrap_or("?"),
                input.path.display()
            ),
        });
        match rec.status {
            Status::Failed => {
                failed = Some(format!("failed in {}: {reason}", input.path.display()))
            }
            Status::Skipped => skipped = Some(reason),
            _ => {}
        }
    }
    if let Some((&first, rest)) = done.split_first() {
        return Found::Done(first, rest.to_vec());
    }
    if let Some(f) = failed {
        return Found::Failed(f);
    }
    if let Some(s) = skipped {
        return Found::Skipped(s);
    }
    Found::Missing(if seen.is_empty() {
        "no directory given runs it".to_string()
    } else {
        format!("not finished ({})", seen.join(", "))
    })
}

/// The command that runs trial `id` again beside the first input.
fn rerun(inputs: &[Input], id: &str) -> String {
    let first = std::path::absolute(&inputs[0].path).unwrap_or_else(|_| inputs[0].path.clone());
    let parent = first.parent().unwrap_or(Path::new("."));
    format!(
        "iotrial study {} --trial {id} --out {} (then merge again with its results directory)",
        first.join("study.toml").display(),
        parent.display()
    )
}

/// `dirs` with each directory that is no results directory but holds some (a launch's
/// `shards/`) replaced by those, in name order.
fn results_dirs(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in dirs {
        if !d.join("manifest.json").exists() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(d)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.join("manifest.json").is_file())
                .collect();
            if !inside.is_empty() {
                inside.sort();
                out.extend(inside);
                continue;
            }
        }
        out.push(d.clone());
    }
    out
}

/// Reads the inputs and checks they hold one study.
fn load(dirs: &[PathBuf]) -> Result<Vec<Input>, MergeError> {
    let inputs: Vec<Input> = results_dirs(dirs)
        .iter()
        .map(|d| {
            Ok(Input {
                path: d.clone(),
                manifest: Manifest::load(d)?,
            })
        })
        .collect::<Result<_, StudyError>>()?;
    let first = inputs.first().ok_or(MergeError::NoDirs)?;
    let hash = first.manifest.hash();
    for other in &inputs[1..] {
        let h = other.manifest.hash();
        if h != hash {
            return Err(MergeError::DifferentStudies {
                first: first.path.clone(),
                other: other.path.clone(),
                difference: difference(&first.manifest.resolved, &other.manifest.resolved)
                    .unwrap_or_else(|| "their resolved studies differ".into()),
                first_hash: hash,
                other_hash: h,
            });
        }
    }
    Ok(inputs)
}

/// Whether `out` may be written: absent, empty, or an earlier merge of the study `hash` that
/// is not one of the inputs.
fn check_out(out: &Path, hash: &str, dirs: &[PathBuf]) -> Result<(), MergeError> {
    let refuse = |message: String| MergeError::Out {
        path: out.to_path_buf(),
        message,
    };
    let Ok(mut entries) = std::fs::read_dir(out) else {
        return match out.exists() {
            true => Err(refuse("exists and is not a directory".into())),
            false => Ok(()),
        };
    };
    if entries.next().is_none() {
        return Ok(());
    }
    let canon = |p: &Path| p.canonicalize().ok();
    if dirs.iter().any(|d| canon(d) == canon(out)) {
        return Err(refuse(
            "is also one of the directories to merge; give a new directory".into(),
        ));
    }
    match Manifest::load(out) {
        Ok(m) if !m.merged_from.is_empty() && m.hash() == hash => Ok(()),
        _ => Err(refuse(
            "is not empty and not an earlier merge of this study; give a new directory".into(),
        )),
    }
}

/// Links (or, across filesystems, copies) every file under `from` into `to`.
fn link_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type()?.is_dir() {
            link_tree(&src, &dst)?;
        } else if std::fs::hard_link(&src, &dst).is_err() {
            std::fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

/// Merges `opts.dirs` into `opts.out`.
pub fn merge(opts: &MergeOptions) -> Result<Merged, MergeError> {
    let inputs = load(&opts.dirs)?;
    let first = &inputs[0].manifest;
    let hash = first.hash();
    let all = crate::study::expand(&first.resolved, &Options::default())?;
    let mut found = Vec::new();
    let mut problems = Vec::new();
    for t in &all.trials {
        let f = find(&inputs, t);
        let problem = |kind, detail: String, rerun| Problem {
            kind,
            id: t.id.clone(),
            detail,
            rerun,
        };
        match &f {
            Found::Done(i, others) if !others.is_empty() => {
                let also: Vec<String> = others
                    .iter()
                    .map(|o| inputs[*o].path.display().to_string())
                    .collect();
                problems.push(problem(
                    ProblemKind::Duplicate,
                    format!(
                        "finished in {} and in {}; the first is taken",
                        inputs[*i].path.display(),
                        also.join(", ")
                    ),
                    None,
                ));
            }
            Found::Failed(why) => problems.push(problem(
                ProblemKind::Failed,
                why.clone(),
                Some(rerun(&inputs, &t.id)),
            )),
            Found::Missing(why) => problems.push(problem(
                ProblemKind::Missing,
                why.clone(),
                Some(rerun(&inputs, &t.id)),
            )),
            _ => {}
        }
        found.push(f);
    }
    if !problems.is_empty() && !opts.allow_partial {
        return Ok(Merged {
            root: None,
            problems,
            taken: 0,
            sources: inputs.len(),
            related: Vec::new(),
            table: String::new(),
            report: None,
        });
    }
    check_out(&opts.out, &hash, &opts.dirs)?;
    let name = opts
        .out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "merged".into());
    let staging = opts
        .out
        .with_file_name(format!(".{name}.merging-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(io(format!("create {}", staging.display())))?;
    let results = ResultsDir::open(&staging);
    let mut exp = all.clone();
    exp.options = Options {
        shard: None,
        trials: Vec::new(),
        ..first.options.clone()
    };
    let mut m = Manifest::create(&results, &exp)?;
    let mut taken = vec![0usize; inputs.len()];
    for (t, f) in all.trials.iter().zip(&found) {
        let rec = m
            .trials
            .iter_mut()
            .find(|r| r.id == t.id)
            .expect("the manifest lists every trial");
        match f {
            Found::Done(i, _) => {
                let src_rec = inputs[*i].manifest.trial(&t.id).expect("found in it");
                let from = inputs[*i].path.join(&src_rec.path);
                link_tree(&from, &staging.join(&rec.path)).map_err(io(format!(
                    "take trial {} from {}",
                    t.id,
                    from.display()
                )))?;
                rec.status = Status::Done;
                rec.reason = None;
                rec.started_utc = src_rec.started_utc.clone();
                rec.finished_utc = src_rec.finished_utc.clone();
                rec.from = Some(inputs[*i].path.display().to_string());
                taken[*i] += 1;
            }
            Found::Failed(why) => {
                rec.status = Status::Failed;
                rec.reason = Some(why.clone());
            }
            Found::Skipped(why) => {
                rec.status = Status::Skipped;
                rec.reason = Some(why.clone());
            }
            Found::Missing(why) => {
                rec.status = Status::Pending;
                rec.reason = Some(format!("missing: {why}"));
            }
        }
    }
    // Repeats a whole-study run added while an interval was too wide are not trials of the
    // expansion: each done one is taken once, after the study's own.
    for (i, input) in inputs.iter().enumerate() {
        for src_rec in input.manifest.trials.iter() {
            if src_rec.status != Status::Done || m.trial(&src_rec.id).is_some() {
                continue;
            }
            let placed = m.trials.len();
            let Some(t) = crate::study::plan::expand::extra_trial(
                &first.resolved,
                &src_rec.stack,
                &src_rec.workload,
                src_rec.repeat,
                placed,
            )?
            else {
                continue;
            };
            if t.id != src_rec.id {
                continue;
            }
            let from = input.path.join(&src_rec.path);
            m.add(&t);
            let rec = m.trials.last_mut().expect("just added");
            link_tree(&from, &staging.join(&rec.path)).map_err(io(format!(
                "take trial {} from {}",
                t.id,
                from.display()
            )))?;
            rec.status = Status::Done;
            rec.started_utc = src_rec.started_utc.clone();
            rec.finished_utc = src_rec.finished_utc.clone();
            rec.from = Some(input.path.display().to_string());
            taken[i] += 1;
        }
    }
    m.merged_from = inputs
        .iter()
        .zip(&taken)
        .map(|(i, n)| Source {
            path: i.path.display().to_string(),
            part: i.manifest.options.part(),
            host: i.manifest.host.clone(),
            trials: *n,
        })
        .collect();
    m.save(&staging)?;
    let related = relate(&staging, &m, &all)?;
    let table = StudyTable::from_results(&staging, &m)
        .map(|c| c.render())
        .unwrap_or_else(|e| format!("(no table: {e})"));
    let any_done = m.trials.iter().any(|t| t.status == Status::Done);
    if any_done {
        write_report(&staging, crate::workload::report_of)?;
    }
    swap_in(&staging, &opts.out)?;
    let report = any_done.then(|| ReportFiles {
        html: opts.out.join("report.html"),
        markdown: opts.out.join("report.md"),
    });
    Ok(Merged {
        root: Some(opts.out.clone()),
        problems,
        taken: taken.iter().sum(),
        sources: inputs.len(),
        related,
        table,
        report,
    })
}

/// Puts the finished `staging` directory at `out`, replacing an earlier merge there.
fn swap_in(staging: &Path, out: &Path) -> Result<(), MergeError> {
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io(format!("create {}", parent.display())))?;
    }
    let old = staging.with_extension("old");
    if out.exists() {
        std::fs::rename(out, &old).map_err(io(format!("move {} aside", out.display())))?;
    }
    std::fs::rename(staging, out).map_err(io(format!("rename to {}", out.display())))?;
    if old.exists() {
        std::fs::remove_dir_all(&old).map_err(io(format!("remove {}", old.display())))?;
    }
    Ok(())
}
