//! A seed study's summary: the few figures of one results directory that the seed's tables in
//! docs/seeds.md are made of (per workload and stack, the values of the chosen verdict figures
//! over its repeats, and any per-repeat figures a seed adds), with the study's name, hash, dates
//! and what ran where. Committed as docs/seeds/NNN.json, so the page can be made again, and
//! checked, without the results directory. The comparison is rebuilt from it with iotrial's own
//! [`VerdictTable`], so its groups are those the study's report shows.

use iotrial::analysis::groups::Rule;
use iotrial::present::verdict::{StackFigures, VerdictTable};
use iotrial::present::{FigureSpec, VerdictFigures};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::Path;

/// One seed's summary: docs/seeds/NNN.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// `000` to `004`.
    pub seed: String,
    /// The study's name (`dvr`).
    pub study: String,
    /// The resolved study's hash (manifest.json `study_hash`).
    pub study_hash: String,
    /// Whether it ran `--quick`.
    pub quick: bool,
    /// `--only`, `--device` and `--repeats` as given, in words; empty when none was.
    pub options: Vec<String>,
    /// When the results directory was made and last written (UTC).
    pub created_utc: String,
    pub updated_utc: String,
    pub iotrial_version: String,
    pub kernel: String,
    pub cpus: u64,
    /// What separates two stacks (the study's rule).
    pub alpha: f64,
    pub noise: f64,
    pub workloads: Vec<WorkloadSummary>,
    /// Trials that did not finish: (stack, workload, status and reason).
    pub not_run: Vec<NotRun>,
}

/// One workload of the study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSummary {
    pub workload: String,
    pub kind: String,
    /// The parameters the seed's tables name, as the first trial resolved them.
    pub params: BTreeMap<String, Json>,
    /// The verdict figures kept (keys of the kind's columns).
    pub columns: Vec<String>,
    pub stacks: Vec<StackSummary>,
}

/// One stack's repeats of one workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StackSummary {
    pub stack: String,
    pub baseline: bool,
    /// The devices it ran on (the first trial's target) and their time scale.
    pub devices: String,
    pub time_scale: f64,
    /// The repeats that finished, in order.
    pub repeats: Vec<u32>,
    /// Per kept column: the values its repeats gave (a repeat without one left out), as the
    /// study's verdict table holds them.
    pub values: Vec<Vec<f64>>,
    /// Why its figures cannot be what the stack does (never ranked), one per cause.
    pub impossible: Vec<String>,
    /// Notes the verdict table carries (figures above raw, other hardware).
    pub notes: Vec<String>,
    /// Per-repeat figures a seed reads beside the verdict, by name.
    pub extra: BTreeMap<String, Vec<f64>>,
}

/// A trial the manifest lists as not done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotRun {
    pub stack: String,
    pub workload: String,
    pub status: String,
    pub reason: String,
}

/// A summary could not be read, written or used.
#[derive(Debug)]
pub struct SummaryError(pub String);

impl std::fmt::Display for SummaryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Summary {
    /// Reads docs/seeds/NNN.json.
    pub fn read(path: &Path) -> Result<Summary, SummaryError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| SummaryError(format!("{}: {e}", path.display())))?;
        serde_json::from_str(&text).map_err(|e| SummaryError(format!("{}: {e}", path.display())))
    }

    /// The summary as committed: pretty JSON with a final newline.
    pub fn to_text(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a summary serializes");
        s.push('\n');
        s
    }

    /// The workload named `name`.
    pub fn workload(&self, name: &str) -> Option<&WorkloadSummary> {
        self.workloads.iter().find(|w| w.workload == name)
    }

    /// The name of the study's first workload of kind `kind` (the kind's name when none is).
    pub fn workload_of(&self, kind: &str) -> String {
        self.workloads
            .iter()
            .find(|w| w.kind == kind)
            .map_or_else(|| kind.to_string(), |w| w.workload.clone())
    }

    /// The rule the study ranks by.
    pub fn rule(&self) -> Rule {
        Rule {
            alpha: self.alpha,
            noise: self.noise,
        }
    }

    /// Why `stack` has no figures in `workload`: the manifest's status and reason, or that the
    /// study has no such stack.
    pub fn why_not_run(&self, stack: &str, workload: &str) -> String {
        self.not_run
            .iter()
            .find(|n| n.stack == stack && n.workload == workload)
            .or_else(|| self.not_run.iter().find(|n| n.stack == stack))
            .map(|n| {
                if n.reason.is_empty() {
                    n.status.clone()
                } else {
                    format!("{}: {}", n.status, n.reason)
                }
            })
            .unwrap_or_else(|| "not in this run".into())
    }
}

impl WorkloadSummary {
    /// The stack named `name`.
    pub fn stack(&self, name: &str) -> Option<&StackSummary> {
        self.stacks.iter().find(|s| s.stack == name)
    }

    /// A parameter as a number, when it is one.
    pub fn param_f64(&self, key: &str) -> Option<f64> {
        self.params.get(key).and_then(Json::as_f64)
    }

    /// The comparison of the stacks on the kept columns, rebuilt with iotrial's own table
    /// under `rule`: the same groups, ranks and intervals the study's report has for them.
    pub fn table(&self, rule: Rule) -> Result<VerdictTable, SummaryError> {
        let kind = iotrial::workload::report_of(&self.kind).ok_or_else(|| {
            SummaryError(format!(
                "workload {}: kind '{}' is not one this iotrial knows",
                self.workload, self.kind
            ))
        })?;
        let specs: Vec<FigureSpec> = self
            .columns
            .iter()
            .map(|key| {
                kind.columns()
                    .iter()
                    .find(|c| c.key == key)
                    .copied()
                    .ok_or_else(|| {
                        SummaryError(format!(
                            "workload {}: '{key}' is not a verdict figure of kind {}",
                            self.workload, self.kind
                        ))
                    })
            })
            .collect::<Result<_, _>>()?;
        let stacks = self
            .stacks
            .iter()
            .map(|s| {
                let n = s.values.iter().map(Vec::len).max().unwrap_or(0).max(1);
                let repeats = (0..n)
                    .map(|r| VerdictFigures {
                        values: s.values.iter().map(|v| v.get(r).copied()).collect(),
                        impossible: (r == 0 && !s.impossible.is_empty())
                            .then(|| s.impossible.join("; ")),
                        ..Default::default()
                    })
                    .collect();
                StackFigures {
                    stack: s.stack.clone(),
                    baseline: s.baseline,
                    repeats,
                }
            })
            .collect();
        Ok(VerdictTable::build_with(&specs, stacks, rule))
    }
}
