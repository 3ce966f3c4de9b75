//! manifest.json of a results directory: the study as resolved, the options it ran with, the
//! host, and every trial with its status. It is rewritten atomically (temporary file + rename)
//! whenever a trial changes state, and it is what `--resume` reads to run only what is missing.

use super::{host_json, ResultsDir};
use crate::study::error::StudyError;
use crate::study::plan::expand::{expand, Expansion, Options, Trial};
use crate::study::plan::file::Study;
use crate::utc::utc_iso;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Version of the manifest's layout.
pub const FORMAT: u32 = 1;

/// Where a trial stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pending,
    Running,
    Done,
    Failed,
    Skipped,
}

/// One trial in the manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// `<stack>/<workload>/r<N>`.
    pub id: String,
    pub stack: String,
    pub workload: String,
    pub kind: String,
    pub repeat: usize,
    pub status: Status,
    /// Why it failed or was skipped.
    pub reason: Option<String>,
    /// [`crate::study::plan::identity::trial_digest`] (empty in manifests written before digests).
    #[serde(default)]
    pub digest: String,
    /// The trial's directory, relative to the results directory.
    pub path: String,
    pub started_utc: Option<String>,
    pub finished_utc: Option<String>,
    /// In a merged results directory: the results directory the trial was taken from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

/// The whole manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    /// The study's name.
    pub study: String,
    pub options: Options,
    pub created_utc: String,
    pub updated_utc: String,
    /// Host, kernel and tool versions ([`host_json`]).
    pub host: Json,
    /// [`crate::study::plan::identity::study_hash`] of `resolved` (empty in manifests written before it;
    /// [`Manifest::hash`] computes it then).
    #[serde(default)]
    pub study_hash: String,
    /// The study as resolved (the same as study.toml).
    pub resolved: Study,
    /// The trials of the study this results directory holds: all of them, or those of its
    /// shard (`options.shard`) or `--trial` (`options.trials`).
    pub trials: Vec<TrialRecord>,
    /// A merged results directory's sources (`iotrial merge`), in the order given; empty
    /// otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<Source>,
}

/// One results directory a merged one was made of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// Its path, as given to `iotrial merge`.
    pub path: String,
    /// The part of the study it ran (`shard 2/3`, `trial ext4/dvr/r1`), or None for all.
    pub part: Option<String>,
    /// Its manifest's host.
    pub host: Json,
    /// The trials taken from it.
    pub trials: usize,
}

/// What is left to do in a results directory.
#[derive(Debug, Clone)]
pub struct Resume {
    pub manifest: Manifest,
    /// Trials not done, in run order.
    pub todo: Vec<Trial>,
}

/// The path of a results directory's manifest.
pub fn manifest_path(root: &Path) -> PathBuf {
    root.join("manifest.json")
}

/// A trial's directory relative to the results directory.
fn rel_path(t: &Trial) -> String {
    format!("trials/{}/{}/r{}", t.stack.name, t.workload, t.repeat)
}

/// Whether a finished trial's files are in place.
fn trial_complete(root: &Path, rec: &TrialRecord) -> bool {
    root.join(&rec.path).join("result.json").is_file()
}

/// Writes `bytes` to `path` through a temporary file and a rename.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StudyError> {
    let tmp = path.with_extension("tmp");
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| StudyError::io(path, e))
}

impl Manifest {
    /// A manifest with every trial of `exp` pending.
    pub fn new(exp: &Expansion) -> Manifest {
        let now = utc_iso(SystemTime::now());
        let mut m = Manifest {
            format: FORMAT,
            study: exp.study.name.clone(),
            options: exp.options.clone(),
            created_utc: now.clone(),
            updated_utc: now,
            host: host_json(),
            study_hash: crate::study::plan::identity::study_hash(&exp.study),
            resolved: exp.study.clone(),
            trials: Vec::new(),
            merged_from: Vec::new(),
        };
        for t in &exp.trials {
            m.add(t);
        }
        m
    }

    /// Starts a study in `results`: writes study.toml and manifest.json.
    pub fn create(results: &ResultsDir, exp: &Expansion) -> Result<Manifest, StudyError> {
        let mut m = Manifest::new(exp);
        let toml_path = results.root.join("study.toml");
        let text = format!(
            "# The study as run: every default written out. Run it again with\n# iotrial study {}\n{}",
            toml_path.display(),
            exp.study.to_toml()
        );
        write_atomic(&toml_path, text.as_bytes())?;
        m.save(&results.root)?;
        Ok(m)
    }

    /// Reads `<root>/manifest.json`.
    pub fn load(root: &Path) -> Result<Manifest, StudyError> {
        let path = manifest_path(root);
        let text = std::fs::read_to_string(&path).map_err(|e| StudyError::io(&path, e))?;
        let m: Manifest = serde_json::from_str(&text).map_err(|e| StudyError::Manifest {
            path: path.clone(),
            message: e.to_string(),
        })?;
        if m.format != FORMAT {
            return Err(StudyError::Manifest {
                path,
                message: format!(
                    "format {} is not the one this iotrial reads ({FORMAT})",
                    m.format
                ),
            });
        }
        Ok(m)
    }

    /// Writes `<root>/manifest.json` atomically.
    pub fn save(&mut self, root: &Path) -> Result<(), StudyError> {
        self.updated_utc = utc_iso(SystemTime::now());
        let mut text = serde_json::to_string_pretty(self).expect("a manifest serializes");
        text.push('\n');
        write_atomic(&manifest_path(root), text.as_bytes())
    }

    /// The expansion the manifest's study gives (to resume without the study file): the
    /// trials of its shard or `--trial` selection when it has one.
    pub fn expansion(&self) -> Result<Expansion, StudyError> {
        let select = Options {
            shard: self.options.shard,
            trials: self.options.trials.clone(),
            ..Options::default()
        };
        let mut exp = expand(&self.resolved, &select)?;
        exp.options = self.options.clone();
        Ok(exp)
    }

    /// The study's hash: the one recorded, else computed from `resolved`.
    pub fn hash(&self) -> String {
        if self.study_hash.is_empty() {
            crate::study::plan::identity::study_hash(&self.resolved)
        } else {
            self.study_hash.clone()
        }
    }

    /// Records trial `t` (a repeat the study adds), pending, after the others; a trial
    /// already recorded is left as it is.
    pub fn add(&mut self, t: &Trial) {
        if self.trial(&t.id).is_some() {
            return;
        }
        self.trials.push(TrialRecord {
            id: t.id.clone(),
            stack: t.stack.name.clone(),
            workload: t.workload.clone(),
            kind: t.kind.clone(),
            repeat: t.repeat,
            status: Status::Pending,
            reason: None,
            digest: t.digest.clone(),
            path: rel_path(t),
            started_utc: None,
            finished_utc: None,
            from: None,
        });
    }

    /// Whether trial `id`'s files are in the results directory `root`.
    pub fn complete(&self, root: &Path, id: &str) -> bool {
        self.trial(id).is_some_and(|r| trial_complete(root, r))
    }

    /// The record of trial `id`.
    pub fn trial(&self, id: &str) -> Option<&TrialRecord> {
        self.trials.iter().find(|t| t.id == id)
    }

    /// Sets a trial's status (and `reason`); `running` stamps the start, `done`, `failed` and
    /// `skipped` the finish, `pending` clears both. Call [`Manifest::save`] to record it.
    pub fn set_status(
        &mut self,
        id: &str,
        status: Status,
        reason: Option<String>,
    ) -> Result<(), StudyError> {
        let rec = self
            .trials
            .iter_mut()
            .find(|t| t.id == id)
            .ok_or_else(|| StudyError::UnknownTrial(id.to_string()))?;
        let now = utc_iso(SystemTime::now());
        match status {
            Status::Pending => {
                rec.started_utc = None;
                rec.finished_utc = None;
            }
            Status::Running => {
                rec.started_utc = Some(now);
                rec.finished_utc = None;
            }
            Status::Done | Status::Failed | Status::Skipped => rec.finished_utc = Some(now),
        }
        rec.status = status;
        rec.reason = reason;
        Ok(())
    }

    /// [`Manifest::set_status`], then [`Manifest::save`].
    pub fn update(
        &mut self,
        root: &Path,
        id: &str,
        status: Status,
        reason: Option<String>,
    ) -> Result<(), StudyError> {
        self.set_status(id, status, reason)?;
        self.save(root)
    }

    /// Counts of trials by status: (done, failed, skipped, other).
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        let n = |s: Status| self.trials.iter().filter(|t| t.status == s).count();
        let (d, f, s) = (n(Status::Done), n(Status::Failed), n(Status::Skipped));
        (d, f, s, self.trials.len() - d - f - s)
    }
}

/// The first way `now` differs from `then`, in words.
pub(crate) fn difference(then: &Study, now: &Study) -> Option<String> {
    let names = |s: &Study| -> Vec<String> { s.stacks.iter().map(|x| x.name.clone()).collect() };
    if then.name != now.name {
        return Some(format!("study '{}', not '{}'", then.name, now.name));
    }
    if then.repeats != now.repeats {
        return Some(format!(
            "repeats {} then, {} now",
            then.repeats, now.repeats
        ));
    }
    if names(then) != names(now) {
        return Some(format!(
            "stacks [{}] then, [{}] now",
            names(then).join(", "),
            names(now).join(", ")
        ));
    }
    if then.workloads.len() != now.workloads.len() {
        return Some("the workloads differ".into());
    }
    for (a, b) in then.workloads.iter().zip(&now.workloads) {
        if a.name != b.name || a.kind != b.kind {
            return Some(format!("workload '{}' then, '{}' now", a.name, b.name));
        }
        if let Some((k, v)) = a.set.pairs().iter().find(|(k, v)| b.set.get(k) != Some(v)) {
            let now_v = b.set.get(k).unwrap_or("(unset)");
            return Some(format!(
                "workload '{}' parameter {k} = {v} then, {now_v} now (was --quick given the same way?)",
                a.name
            ));
        }
    }
    if let Some((a, b)) = then.stacks.iter().zip(&now.stacks).find(|(a, b)| a != b) {
        if a.devices != b.devices {
            return Some(format!(
                "stack '{}' devices [{}] then, [{}] now",
                a.name,
                a.devices.join(", "),
                b.devices.join(", ")
            ));
        }
        return Some(format!("stack '{}' is described differently", a.name));
    }
    (then != now).then(|| "the study's settings differ".to_string())
}

/// Removes every `.partial` trial directory under `<root>/trials`.
fn discard_partials(root: &Path) -> Result<(), StudyError> {
    let trials = root.join("trials");
    let Ok(stacks) = std::fs::read_dir(&trials) else {
        return Ok(());
    };
    for stack in stacks.flatten() {
        let Ok(workloads) = std::fs::read_dir(stack.path()) else {
            continue;
        };
        for w in workloads.flatten() {
            let Ok(entries) = std::fs::read_dir(w.path()) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "partial") && p.is_dir() {
                    std::fs::remove_dir_all(&p).map_err(|err| StudyError::io(&p, err))?;
                }
            }
        }
    }
    Ok(())
}

/// Prepares the results directory `root` to continue `exp`: checks that it holds the same
/// study, discards partial trial directories, counts a trial done exactly when its final
/// directory holds result.json (a trial finished just before an interruption counts even if
/// the manifest did not record it), marks the rest pending, and saves the manifest.
pub fn resume(root: &Path, exp: &Expansion) -> Result<Resume, StudyError> {
    let mut manifest = Manifest::load(root)?;
    if let Some(d) = difference(&manifest.resolved, &exp.study) {
        return Err(StudyError::Mismatch {
            path: root.to_path_buf(),
            difference: d,
        });
    }
    let (then, now) = (manifest.options.part(), exp.options.part());
    if then != now {
        let said = |p: Option<String>| p.unwrap_or_else(|| "the whole study".into());
        return Err(StudyError::Mismatch {
            path: root.to_path_buf(),
            difference: format!("{} then, {} now", said(then), said(now)),
        });
    }
    discard_partials(root)?;
    let mut todo = Vec::new();
    for t in &exp.trials {
        let Some(rec) = manifest.trials.iter_mut().find(|r| r.id == t.id) else {
            return Err(StudyError::Manifest {
                path: manifest_path(root),
                message: format!("trial {} is missing", t.id),
            });
        };
        if trial_complete(root, rec) {
            if rec.status != Status::Done {
                rec.status = Status::Done;
                rec.reason = None;
                rec.finished_utc
                    .get_or_insert_with(|| utc_iso(SystemTime::now()));
            }
        } else {
            rec.status = Status::Pending;
            rec.reason = None;
            rec.started_utc = None;
            rec.finished_utc = None;
            todo.push(t.clone());
        }
    }
    manifest.save(root)?;
    Ok(Resume { manifest, todo })
}
