//! Figures that relate one trial to another, computed where both are: a trial judged against
//! the study's raw stack (stream's `raw_mb_s` and `raw_fraction`) is analysed again from its
//! samples once its reference is in the same results directory, so a merged study gives the
//! figures a run of the whole study on one machine gives, whichever shard ran the reference.

use super::manifest::{Manifest, Status};
use super::reference;
use crate::params::Params;
use crate::result::{self, monitor::MonitorSummary, ResultError, TrialResult};
use crate::study::Expansion;
use crate::workload::{AnalysisError, Seen};
use std::path::Path;

/// A trial's figures could not be derived again.
#[derive(Debug, thiserror::Error)]
pub enum RelateError {
    #[error(transparent)]
    Result(#[from] ResultError),
    #[error("trial {id}: {source}")]
    Analysis { id: String, source: AnalysisError },
    #[error("trial {id}: its parameters: {source}")]
    Param {
        id: String,
        source: crate::params::ParamError,
    },
}

/// Every done trial of `exp` in `root` that has a reference there gets its figures derived
/// again against it (result.json rewritten through a temporary file and a rename, so a file
/// linked from another results directory is left as it was); the ids of those trials.
pub fn relate(
    root: &Path,
    manifest: &Manifest,
    exp: &Expansion,
) -> Result<Vec<String>, RelateError> {
    let mut related = Vec::new();
    for t in &exp.trials {
        let Some(rec) = manifest.trial(&t.id).filter(|r| r.status == Status::Done) else {
            continue;
        };
        let Some(r) = reference::for_trial(&manifest.resolved, manifest, root, t) else {
            continue;
        };
        let w = t.workload_impl();
        let Some(params) = w.refer(&t.params, &r) else {
            continue;
        };
        let dir = root.join(&rec.path);
        let path = dir.join("result.json");
        let mut doc = result::read(&path)?;
        let samples = result::read_samples(&dir.join("samples.csv"), Some(&doc))?;
        let emulated = doc.stack["emulated"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        // A guest's trial was analysed with what the guest's monitors saw.
        let guest: Option<MonitorSummary> =
            serde_json::from_value(doc.stack["vm"]["guest_monitor"].clone()).ok();
        let analysed = |p: &Params| {
            let seen = Seen {
                monitor: Some(guest.as_ref().unwrap_or(&doc.monitor)),
                emulated: &emulated,
                time_scale: doc.time_scale,
            };
            w.analyze(p, &samples, &seen)
                .map_err(|source| RelateError::Analysis {
                    id: t.id.clone(),
                    source,
                })
        };
        let was = w
            .resolve(&Params::overrides_from_json(
                w.params(),
                &doc.params.clone().into(),
            ))
            .map_err(|source| RelateError::Param {
                id: t.id.clone(),
                source,
            })?;
        let (old, new) = (analysed(&was)?, analysed(&params)?);
        let note = reference::note(&r, t.stack.data_devices());
        doc.warnings = splice(&doc.warnings, &old.warnings(), &new.warnings(), note);
        doc.params = result::params_object(&params);
        doc.streams = new.streams_json();
        let host_cpu = doc.verdict.get(result::HOST_CPU_PCT).cloned();
        doc.verdict = new.verdict_json();
        if let Some(h) = host_cpu {
            doc.verdict[result::HOST_CPU_PCT] = h;
        }
        replace(&path, &doc)?;
        related.push(t.id.clone());
    }
    Ok(related)
}

/// `warnings` with the analysis's `old` ones replaced by `new` where they stood (at the end
/// when none did), any earlier reference note dropped, and `note` last: the order a run of
/// the whole study writes them in.
fn splice(warnings: &[String], old: &[String], new: &[String], note: String) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut left: Vec<&String> = old.iter().collect();
    let mut at = None;
    for w in warnings {
        if let Some(i) = left.iter().position(|o| *o == w) {
            left.remove(i);
            at.get_or_insert(out.len());
        } else if !w.starts_with(reference::NOTE_START) {
            out.push(w.clone());
        }
    }
    let at = at.unwrap_or(out.len());
    out.splice(at..at, new.iter().cloned());
    out.push(note);
    out
}

/// Writes `doc` to `path` through a temporary file and a rename.
fn replace(path: &Path, doc: &TrialResult) -> Result<(), ResultError> {
    let tmp = path.with_extension("json.tmp");
    result::write(&tmp, doc)?;
    std::fs::rename(&tmp, path).map_err(|e| ResultError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_analysis_warnings_are_replaced_in_place() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let warnings = s(&["built", "old a", "old b", "cleanup"]);
        let out = splice(
            &warnings,
            &s(&["old a", "old b"]),
            &s(&["new"]),
            "raw figures are relative to stack raw, ...".into(),
        );
        assert_eq!(
            out,
            s(&[
                "built",
                "new",
                "cleanup",
                "raw figures are relative to stack raw, ..."
            ])
        );
        // Spliced again (a merge of a merge), the result is the same.
        let again = splice(&out, &s(&["new"]), &s(&["new"]), out[3].clone());
        assert_eq!(again, out);
    }
}
