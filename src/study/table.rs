//! The comparison table printed at the end of a study: for each workload, one row per stack,
//! the verdict's headline figures as columns (means over repeats), pass/fail against the
//! target, the best value of each column marked with `*` (when the stacks differ), baseline
//! stacks labelled and never marked best, and the stacks that did not run listed with their
//! reason.

use super::error::StudyError;
use super::manifest::{Manifest, Status};
use crate::report::terminal;
use crate::workload::{self, Better, Figure, Outcome, Rows};
use serde_json::Value as Json;
use std::fmt::Write;
use std::path::Path;

/// The figures of one finished trial.
#[derive(Debug, Clone, PartialEq)]
pub struct TrialFigures {
    pub stack: String,
    pub workload: String,
    pub figures: Vec<Figure>,
    pub meets_target: Option<bool>,
}

impl TrialFigures {
    /// From an analysis still in memory.
    pub fn from_outcome(stack: &str, workload: &str, outcome: &dyn Outcome) -> TrialFigures {
        TrialFigures {
            stack: stack.to_string(),
            workload: workload.to_string(),
            figures: outcome.figures(),
            meets_target: outcome.meets_target(),
        }
    }

    /// From a result.json of a trial of workload kind `kind`: the kind's figures, with values
    /// read from `verdict` by key.
    pub fn from_result(stack: &str, workload: &str, kind: &str, result: &Json) -> TrialFigures {
        let verdict = &result["verdict"];
        let figures = workload::find(kind)
            .map(|w| w.figure_specs())
            .unwrap_or_default()
            .into_iter()
            .map(|mut f| {
                f.value = verdict.get(f.key).and_then(Json::as_f64);
                f
            })
            .collect();
        TrialFigures {
            stack: stack.to_string(),
            workload: workload.to_string(),
            figures,
            meets_target: verdict.get("meets_target").and_then(Json::as_bool),
        }
    }
}

/// A trial that produced no figures.
#[derive(Debug, Clone, PartialEq)]
pub struct NotRun {
    pub stack: String,
    pub trial: String,
    pub status: Status,
    pub reason: String,
}

/// Everything the table shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Comparison {
    /// Stacks in study order.
    pub stacks: Vec<String>,
    /// Baseline stacks: shown, labelled, never marked best.
    pub baselines: Vec<String>,
    pub results: Vec<TrialFigures>,
    pub not_run: Vec<NotRun>,
}

impl Comparison {
    /// The figures of every done trial in a results directory (read from result.json) and
    /// every trial that is not done.
    pub fn from_results(root: &Path, manifest: &Manifest) -> Result<Comparison, StudyError> {
        let mut c = Comparison {
            stacks: manifest
                .resolved
                .stacks
                .iter()
                .map(|s| s.name.clone())
                .collect(),
            baselines: manifest
                .resolved
                .stacks
                .iter()
                .filter(|s| s.baseline)
                .map(|s| s.name.clone())
                .collect(),
            ..Comparison::default()
        };
        for t in &manifest.trials {
            if t.status == Status::Done {
                let path = root.join(&t.path).join("result.json");
                let text = std::fs::read_to_string(&path).map_err(|e| StudyError::io(&path, e))?;
                let doc: Json = serde_json::from_str(&text).map_err(|e| StudyError::Manifest {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
                c.results.push(TrialFigures::from_result(
                    &t.stack,
                    &t.workload,
                    &t.kind,
                    &doc,
                ));
            } else {
                c.not_run.push(NotRun {
                    stack: t.stack.clone(),
                    trial: t.id.clone(),
                    status: t.status,
                    reason: t.reason.clone().unwrap_or_else(|| "not run".into()),
                });
            }
        }
        Ok(c)
    }

    /// The tables and the list of stacks that did not run, as terminal text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let mut workloads: Vec<&str> = Vec::new();
        for r in &self.results {
            if !workloads.contains(&r.workload.as_str()) {
                workloads.push(&r.workload);
            }
        }
        for w in &workloads {
            let (rows, repeats) = self.rows(w);
            if workloads.len() > 1 {
                let _ = writeln!(out, "workload {w}");
            }
            out.push_str(&terminal::table(&rows));
            out.push('\n');
            let mean = if repeats > 1 {
                format!("; values are means over {repeats} repeats")
            } else {
                String::new()
            };
            let baseline = if self.baselines.iter().any(|b| self.ran(b, w)) {
                "; baselines are not ranked"
            } else {
                ""
            };
            let _ = writeln!(out, "* best in its column{baseline}{mean}");
        }
        out.push_str(&self.not_run_lines());
        out
    }

    /// Whether stack `stack` has figures for workload `w`.
    fn ran(&self, stack: &str, w: &str) -> bool {
        self.results
            .iter()
            .any(|r| r.stack == stack && r.workload == w)
    }

    /// One line per stack (or trial) that did not produce figures.
    fn not_run_lines(&self) -> String {
        let mut out = String::new();
        for stack in &self.stacks {
            let mine: Vec<&NotRun> = self.not_run.iter().filter(|n| &n.stack == stack).collect();
            let Some(first) = mine.first() else { continue };
            let all_same = mine
                .iter()
                .all(|n| n.status == first.status && n.reason == first.reason);
            let ran_some = self.results.iter().any(|r| &r.stack == stack);
            if all_same && !ran_some {
                let _ = writeln!(
                    out,
                    "{} {stack}: {}",
                    status_word(first.status),
                    first.reason
                );
            } else {
                for n in mine {
                    let _ = writeln!(out, "{} {}: {}", status_word(n.status), n.trial, n.reason);
                }
            }
        }
        out
    }

    /// The table of workload `w` and the most repeats any stack had.
    pub fn rows(&self, w: &str) -> (Rows, usize) {
        let mine: Vec<&TrialFigures> = self.results.iter().filter(|r| r.workload == w).collect();
        let specs: Vec<&Figure> = mine
            .first()
            .map(|r| r.figures.iter().collect())
            .unwrap_or_default();
        let stacks: Vec<&String> = self
            .stacks
            .iter()
            .filter(|s| mine.iter().any(|r| &r.stack == *s))
            .collect();
        let mut repeats = 1;
        // cells[stack][figure] = the mean as displayed
        let mut cells: Vec<Vec<Option<String>>> = Vec::new();
        let mut targets = Vec::new();
        for s in &stacks {
            let runs: Vec<&&TrialFigures> = mine.iter().filter(|r| &r.stack == *s).collect();
            repeats = repeats.max(runs.len());
            cells.push(
                specs
                    .iter()
                    .map(|f| {
                        let xs: Vec<f64> = runs
                            .iter()
                            .filter_map(|r| r.figures.iter().find(|g| g.key == f.key))
                            .filter_map(|g| g.value)
                            .collect();
                        (!xs.is_empty())
                            .then(|| fmt_value(xs.iter().sum::<f64>() / xs.len() as f64))
                    })
                    .collect(),
            );
            targets.push(target_cell(runs.iter().map(|r| r.meets_target)));
        }
        let mut headings = vec!["stack".to_string()];
        headings.extend(specs.iter().map(|f| format!("{}\n{}", f.label, f.unit)));
        let has_target = targets.iter().any(|t| t.is_some());
        if has_target {
            headings.push("target".into());
        }
        let ranked: Vec<bool> = stacks.iter().map(|s| !self.baselines.contains(s)).collect();
        let best: Vec<Option<f64>> = (0..specs.len())
            .map(|i| {
                let vals: Vec<f64> = cells
                    .iter()
                    .zip(&ranked)
                    .filter(|(_, r)| **r)
                    .filter_map(|(c, _)| c[i].as_deref()?.parse::<f64>().ok())
                    .collect();
                // Nothing to choose between: one value, or all the same.
                if vals.len() < 2 || vals.iter().all(|v| *v == vals[0]) {
                    return None;
                }
                let pick = match specs[i].better {
                    Better::Higher => f64::max,
                    Better::Lower => f64::min,
                };
                vals.into_iter().reduce(pick)
            })
            .collect();
        let rows = stacks
            .iter()
            .zip(&cells)
            .zip(&targets)
            .zip(&ranked)
            .map(|(((s, c), t), ranked)| {
                let mut row = vec![if *ranked {
                    s.to_string()
                } else {
                    format!("{s} (baseline)")
                }];
                for (i, v) in c.iter().enumerate() {
                    row.push(match v {
                        Some(text)
                            if *ranked
                                && best[i].is_some()
                                && text.parse::<f64>().ok() == best[i] =>
                        {
                            format!("{text} *")
                        }
                        Some(text) => text.clone(),
                        None => "-".into(),
                    });
                }
                if has_target {
                    row.push(t.clone().unwrap_or_else(|| "-".into()));
                }
                row
            })
            .collect();
        (Rows { headings, rows }, repeats)
    }
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Skipped => "skipped",
        Status::Failed => "failed",
        Status::Pending => "not run",
        Status::Running => "interrupted",
        Status::Done => "done",
    }
}

/// `pass`, `FAIL`, or `FAIL k/n` when only k of n repeats failed.
fn target_cell(meets: impl Iterator<Item = Option<bool>>) -> Option<String> {
    let known: Vec<bool> = meets.flatten().collect();
    if known.is_empty() {
        return None;
    }
    let fails = known.iter().filter(|m| !**m).count();
    Some(match fails {
        0 => "pass".into(),
        f if f == known.len() => "FAIL".into(),
        f => format!("FAIL {f}/{}", known.len()),
    })
}

/// A figure with precision that suits its size.
fn fmt_value(x: f64) -> String {
    let a = x.abs();
    if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}
