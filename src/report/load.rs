//! Reading a results directory back: manifest.json for header facts, stack names and order
//! (when present; missing keys are tolerated) and every finished trial's result.json under
//! `trials/<stack>/<workload>/r<N>/` (read through [`crate::result`]), and which stacks are
//! baselines (the manifest's resolved study). Unfinished trials (`r<N>.partial`) are skipped.
//! A workload's kind is what its trials' result.json say, never its directory's name.

use super::ReportError;
use crate::result::{self, StackTrials, Trial};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A results directory as read back.
#[derive(Debug, Clone)]
pub struct Study {
    pub root: PathBuf,
    /// manifest.json, or `null` when absent.
    pub manifest: Json,
    /// Trials ordered by workload, then stack in manifest order (else by name), then repeat.
    pub trials: Vec<Trial>,
    /// Baseline stacks (shown but never ranked), from the manifest's resolved study.
    pub baselines: Vec<String>,
}

impl Study {
    /// Reads `root`. Fails when it holds no finished trial.
    pub fn load(root: &Path) -> Result<Study, ReportError> {
        let manifest_path = root.join("manifest.json");
        let manifest = if manifest_path.exists() {
            read_json(&manifest_path)?
        } else {
            Json::Null
        };
        let trials_dir = root.join("trials");
        let names = manifest_names(&manifest);
        let mut trials = Vec::new();
        for stack in sorted_dirs(&trials_dir)? {
            for workload in sorted_dirs(&stack)? {
                for rep in sorted_dirs(&workload)? {
                    let Some(repeat) = repeat_number(&rep) else {
                        continue;
                    };
                    let result_path = rep.join("result.json");
                    if !result_path.exists() {
                        continue;
                    }
                    let rel = rep.strip_prefix(root).unwrap_or(&rep).to_path_buf();
                    trials.push(Trial {
                        stack: names
                            .get(&rel)
                            .cloned()
                            .unwrap_or_else(|| file_name(&stack)),
                        workload: file_name(&workload),
                        repeat,
                        result: result::read(&result_path)?,
                        dir: rep,
                    });
                }
            }
        }
        if trials.is_empty() {
            return Err(ReportError::format(
                &trials_dir,
                "no finished trial (trials/<stack>/<workload>/r<N>/result.json)",
            ));
        }
        let order = stack_order(&manifest);
        let rank = |s: &str| order.get(s).copied().unwrap_or(usize::MAX);
        trials.sort_by(|a, b| {
            (
                a.workload.as_str(),
                rank(&a.stack),
                a.stack.as_str(),
                a.repeat,
            )
                .cmp(&(
                    b.workload.as_str(),
                    rank(&b.stack),
                    b.stack.as_str(),
                    b.repeat,
                ))
        });
        let baselines = manifest["resolved"]["stacks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s["baseline"].as_bool() == Some(true))
            .filter_map(|s| s["name"].as_str().map(str::to_string))
            .collect();
        Ok(Study {
            root: root.to_path_buf(),
            manifest,
            trials,
            baselines,
        })
    }

    /// What separates two stacks in this study's tables: the resolved study's `noise`, else
    /// the default.
    pub fn rule(&self) -> crate::analysis::groups::Rule {
        let mut rule = crate::analysis::groups::Rule::default();
        if let Some(noise) = self.manifest["resolved"]["noise"]
            .as_str()
            .and_then(|t| crate::units::Percent::parse(t).ok())
        {
            rule.noise = noise.share();
        }
        rule
    }

    /// Workloads in the study, in order.
    pub fn workloads(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        for t in &self.trials {
            if !v.contains(&t.workload.as_str()) {
                v.push(&t.workload);
            }
        }
        v
    }

    /// For one workload: each stack (in order) with its trials (repeats in order).
    pub fn stacks(&self, workload: &str) -> Vec<StackTrials<'_>> {
        let mut out: Vec<StackTrials> = Vec::new();
        for t in self.trials.iter().filter(|t| t.workload == workload) {
            match out.last_mut() {
                Some(s) if s.stack == t.stack => s.trials.push(t),
                _ => out.push(StackTrials {
                    stack: &t.stack,
                    baseline: self.baselines.contains(&t.stack),
                    trials: vec![t],
                }),
            }
        }
        out
    }

    /// Every trial of workload kind `kind`, whatever its workload: each stack (in order of
    /// first appearance) with its trials (in run order).
    pub fn kind_stacks(&self, kind: &str) -> Vec<StackTrials<'_>> {
        let mut out: Vec<StackTrials> = Vec::new();
        for t in self.trials.iter().filter(|t| t.result.kind == kind) {
            match out.iter_mut().find(|s| s.stack == t.stack) {
                Some(s) => s.trials.push(t),
                None => out.push(StackTrials {
                    stack: &t.stack,
                    baseline: self.baselines.contains(&t.stack),
                    trials: vec![t],
                }),
            }
        }
        out
    }

    /// The kind of workload `workload`: what its trials' result.json say (they must agree).
    pub fn kind(&self, workload: &str) -> Result<&str, ReportError> {
        let mut trials = self.trials.iter().filter(|t| t.workload == workload);
        let first = trials.next().ok_or_else(|| {
            ReportError::format(
                &self.root,
                format!("no finished trial of workload {workload}"),
            )
        })?;
        match trials.find(|t| t.result.kind != first.result.kind) {
            Some(t) => Err(t
                .error(format!(
                    "workload {workload} is of kind {}, but {} says {}",
                    t.result.kind,
                    first.file("result.json").display(),
                    first.result.kind
                ))
                .into()),
            None => Ok(&first.result.kind),
        }
    }

    /// The study's name from the manifest, else the directory's name.
    pub fn name(&self) -> String {
        self.manifest["study"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| file_name(&self.root))
    }
}

/// Reads a JSON file (the manifest).
fn read_json(path: &Path) -> Result<Json, ReportError> {
    let text = std::fs::read_to_string(path).map_err(|e| ReportError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| ReportError::format(path, e.to_string()))
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn repeat_number(p: &Path) -> Option<u32> {
    file_name(p).strip_prefix('r')?.parse().ok()
}

fn sorted_dirs(p: &Path) -> Result<Vec<PathBuf>, ReportError> {
    let rd = std::fs::read_dir(p).map_err(|e| ReportError::io(p, e))?;
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
        .map(|e| e.path())
        .collect();
    v.sort();
    Ok(v)
}

/// Stack names the manifest gives each trial's path (a name need not be a valid directory
/// name, so the manifest's name wins over the directory's).
fn manifest_names(manifest: &Json) -> BTreeMap<PathBuf, String> {
    let mut m = BTreeMap::new();
    for t in manifest["trials"].as_array().into_iter().flatten() {
        if let (Some(p), Some(s)) = (t["path"].as_str(), t["stack"].as_str()) {
            m.insert(
                Path::new(p).components().collect::<PathBuf>(),
                s.to_string(),
            );
        }
    }
    m
}

/// Position of each stack in the manifest's trial list (the study's order).
fn stack_order(manifest: &Json) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    if let Some(ts) = manifest["trials"].as_array() {
        for t in ts {
            if let Some(s) = t["stack"].as_str() {
                let n = m.len();
                m.entry(s.to_string()).or_insert(n);
            }
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn doc(kind: &str) -> String {
        serde_json::to_string(&crate::result::example::doc(kind, serde_json::json!({}))).unwrap()
    }

    #[test]
    fn kind_comes_from_the_results_not_the_directory() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        put(r, "trials/a/dvr-buffered/r1/result.json", &doc("dvr"));
        put(r, "trials/a/dvr/r1/result.json", &doc("other"));
        let s = Study::load(r).unwrap();
        assert_eq!(s.kind("dvr-buffered").unwrap(), "dvr");
        assert_eq!(s.kind("dvr").unwrap(), "other");
        put(r, "trials/b/dvr/r1/result.json", &doc("dvr"));
        let e = Study::load(r).unwrap().kind("dvr").unwrap_err().to_string();
        assert!(e.contains("workload dvr is of kind"), "{e}");
    }

    #[test]
    fn walks_trials_in_manifest_order_and_skips_partial() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        put(
            r,
            "manifest.json",
            r#"{"study":"s","trials":[{"stack":"xfs"},{"stack":"ext4"},
                {"stack":"a/b","path":"trials/a-b/dvr/r1"}],
                "resolved":{"stacks":[{"name":"ext4","baseline":true},{"name":"xfs"}]}}"#,
        );
        for rel in [
            "ext4/dvr/r1",
            "ext4/dvr/r2",
            "xfs/dvr/r1",
            "xfs/dvr/r2.partial",
            "a-b/dvr/r1",
        ] {
            put(r, &format!("trials/{rel}/result.json"), &doc("dvr"));
        }
        let s = Study::load(r).unwrap();
        let got: Vec<(&str, u32)> = s
            .trials
            .iter()
            .map(|t| (t.stack.as_str(), t.repeat))
            .collect();
        assert_eq!(got, vec![("xfs", 1), ("ext4", 1), ("ext4", 2), ("a/b", 1)]);
        let stacks = s.stacks("dvr");
        let baseline: Vec<(&str, bool)> = stacks.iter().map(|s| (s.stack, s.baseline)).collect();
        assert_eq!(baseline, [("xfs", false), ("ext4", true), ("a/b", false)]);
        assert_eq!(s.name(), "s");
    }

    #[test]
    fn empty_directory_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("trials")).unwrap();
        assert!(Study::load(d.path())
            .unwrap_err()
            .to_string()
            .contains("no finished trial"));
    }
}
