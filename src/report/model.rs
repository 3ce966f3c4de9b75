//! The report as data, built once from a results directory and then written as HTML and as
//! Markdown: header facts, and per workload the verdict table, the workload kind's own
//! sections, each stack as built and every warning. The kind of each workload is read from its
//! trials' result.json and looked up in the [`KindLookup`] the caller hands in.

use super::load::Study;
use super::ReportError;
use crate::analysis::groups::Rule;
use crate::present::chart::Section;
use crate::present::durability::DurabilityColumn;
use crate::present::num;
use crate::present::verdict::{StackFigures, VerdictTable};
use crate::present::{KindLookup, KindReport, MonitorColumn, VerdictFigures};
use crate::result::emulated::EmulatedDevice;
use crate::result::monitor::LateSeconds;
use crate::result::{ResultError, StackTrials, Trial};
use serde_json::Value as Json;

/// One stack as built, with the caveats its trials raised.
#[derive(Debug, Clone)]
pub struct BuiltStack {
    pub stack: String,
    /// One line per emulated device: how late its replies were against its service time.
    pub devices: Vec<String>,
    /// `key: value` facts of the stack as built (result.json `stack`, flattened).
    pub facts: Vec<(String, String)>,
    /// Warnings, each prefixed with its repeat when there are several.
    pub warnings: Vec<String>,
}

/// Everything the report shows about one workload.
#[derive(Debug, Clone)]
pub struct WorkloadReport {
    /// The workload's name in the study.
    pub workload: String,
    pub table: VerdictTable,
    pub sections: Vec<Section>,
    pub built: Vec<BuiltStack>,
}

/// The whole report.
#[derive(Debug, Clone)]
pub struct Report {
    pub study: String,
    /// Header facts in display order: (name, value).
    pub header: Vec<(String, String)>,
    pub workloads: Vec<WorkloadReport>,
    /// Trials the manifest lists as not done: `stack / workload / rN: status`.
    pub unfinished: Vec<String>,
}

/// The report part of workload `w`'s kind, as its result.json files name it.
pub fn kind_report(
    study: &Study,
    w: &str,
    kinds: KindLookup,
) -> Result<&'static dyn KindReport, ReportError> {
    let kind = study.kind(w)?;
    kinds(kind).ok_or_else(|| ReportError::format(&study.root, format!(
            "workload {w} is of kind '{kind}', which this iotrial does not know (a newer iotrial wrote it?)"
        )))
}

/// The monitor columns `kind` picks that some trial of `stacks` has a value for (results of
/// trials without monitors keep the verdict's columns alone).
fn monitor_columns(kind: &dyn KindReport, stacks: &[StackTrials<'_>]) -> Vec<MonitorColumn> {
    let trials = stacks.iter().flat_map(|s| s.trials.iter());
    kind.monitor_columns()
        .iter()
        .filter(|c| {
            trials
                .clone()
                .any(|t| (c.value)(&t.result.monitor).is_some())
        })
        .copied()
        .collect()
}

/// The figures of one trial: its verdict's, then the monitor figures of `extra`, then the
/// durability figures of `durable`.
fn trial_figures(
    kind: &dyn KindReport,
    (extra, durable): (&[MonitorColumn], &[DurabilityColumn]),
    t: &Trial,
) -> Result<VerdictFigures, ResultError> {
    let mut f = kind.figures(t)?;
    f.values
        .extend(extra.iter().map(|c| (c.value)(&t.result.monitor)));
    let d = t.result.durability.as_ref();
    f.values
        .extend(durable.iter().map(|c| d.and_then(|d| (c.value)(d))));
    Ok(f)
}

/// The comparison of `stacks` on `kind`'s verdict figures and the monitor figures it picks.
/// A group of the kind's columns no trial has a value of (a real-time run's figures in a
/// study of hammering runs, or the other way round) is left out: the first column left is the
/// headline.
pub fn verdict_table(
    kind: &dyn KindReport,
    stacks: &[StackTrials<'_>],
    rule: Rule,
) -> Result<VerdictTable, ResultError> {
    let extra = monitor_columns(kind, stacks);
    let durable = crate::present::durability::columns(stacks);
    let mut figures = stacks
        .iter()
        .map(|s| {
            Ok(StackFigures {
                stack: s.stack.to_string(),
                baseline: s.baseline,
                repeats: s
                    .trials
                    .iter()
                    .map(|t| trial_figures(kind, (&extra, &durable), t))
                    .collect::<Result<_, ResultError>>()?,
            })
        })
        .collect::<Result<Vec<_>, ResultError>>()?;
    let mut columns = kind.columns().to_vec();
    columns.extend(extra.iter().map(|c| c.spec));
    columns.extend(durable.iter().map(|c| c.spec));
    let valued = |c: usize| {
        figures
            .iter()
            .flat_map(|s| &s.repeats)
            .any(|r| r.values.get(c).is_some_and(Option::is_some))
    };
    let index = |key: &str| columns.iter().position(|c| c.key == key);
    let mut dropped = vec![false; columns.len()];
    for group in kind.column_groups() {
        let at: Vec<usize> = group.iter().filter_map(|k| index(k)).collect();
        if !at.iter().any(|&c| valued(c)) {
            at.iter().for_each(|&c| dropped[c] = true);
        }
    }
    if dropped.iter().any(|&d| d) && !dropped.iter().all(|&d| d) {
        let keep = |i: usize| !dropped[i];
        columns = columns
            .into_iter()
            .enumerate()
            .filter(|&(i, _)| keep(i))
            .map(|(_, c)| c)
            .collect();
        for r in figures.iter_mut().flat_map(|s| s.repeats.iter_mut()) {
            r.values = std::mem::take(&mut r.values)
                .into_iter()
                .enumerate()
                .filter(|&(i, _)| keep(i))
                .map(|(_, v)| v)
                .collect();
        }
    }
    let mut table = VerdictTable::build_with(&columns, figures, rule);
    super::hosts::flag(&mut table, stacks);
    Ok(table)
}

/// Every workload's verdict table, in study order.
pub fn verdict_tables(
    study: &Study,
    kinds: KindLookup,
) -> Result<Vec<(String, VerdictTable)>, ReportError> {
    study
        .workloads()
        .into_iter()
        .map(|w| {
            let kind = kind_report(study, w, kinds)?;
            Ok((
                w.to_string(),
                verdict_table(kind, &study.stacks(w), study.rule())?,
            ))
        })
        .collect()
}

/// Builds the report of `study`; `kinds` gives each workload kind's part.
pub fn build(study: &Study, kinds: KindLookup) -> Result<Report, ReportError> {
    let mut workloads = Vec::new();
    let mut kinds_seen: Vec<&str> = Vec::new();
    for w in study.workloads() {
        let stacks = study.stacks(w);
        let kind = kind_report(study, w, kinds)?;
        let built = stacks
            .iter()
            .map(|s| BuiltStack {
                stack: s.stack.to_string(),
                devices: EmulatedDevice::all_in(&s.trials[0].result.stack)
                    .iter()
                    .map(EmulatedDevice::describe)
                    .chain(
                        s.trials[0]
                            .result
                            .monitor
                            .late_seconds
                            .iter()
                            .filter_map(LateSeconds::describe),
                    )
                    .collect(),
                facts: flatten(&s.trials[0].result.stack),
                warnings: warnings(&s.trials),
            })
            .collect();
        let mut sections = Vec::new();
        // A kind's sections across all its workloads (a sweep) go with its first workload.
        let kind_name = study.kind(w)?;
        if !kinds_seen.contains(&kind_name) {
            kinds_seen.push(kind_name);
            sections.extend(kind.sweep_sections(&study.kind_stacks(kind_name))?);
        }
        sections.extend(kind.sections(&stacks)?);
        sections.extend(crate::present::durability::section(&stacks));
        sections.extend(crate::present::guest::section(kind, &stacks)?);
        sections.extend(super::monitor::section(&stacks));
        sections.extend(super::hosts::section(&stacks));
        workloads.push(WorkloadReport {
            workload: w.to_string(),
            table: verdict_table(kind, &stacks, study.rule())?,
            sections,
            built,
        });
    }
    let tables: Vec<(String, VerdictTable)> = workloads
        .iter()
        .map(|w| (w.workload.clone(), w.table.clone()))
        .collect();
    if let (Some(r), Some(last)) = (
        crate::present::rankings::rankings(&tables),
        workloads.last_mut(),
    ) {
        last.sections.insert(0, r.section());
    }
    Ok(Report {
        study: study.name(),
        header: header(study),
        workloads,
        unfinished: unfinished(&study.manifest),
    })
}

fn unfinished(manifest: &Json) -> Vec<String> {
    manifest["trials"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["status"].as_str().is_some_and(|s| s != "done"))
        .map(|t| {
            let why = t["reason"]
                .as_str()
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            format!(
                "{} / {} / r{}: {}{why}",
                json_text(&t["stack"]),
                json_text(&t["workload"]),
                json_text(&t["repeat"]),
                json_text(&t["status"])
            )
        })
        .collect()
}

fn warnings(trials: &[&Trial]) -> Vec<String> {
    let many = trials.len() > 1;
    let mut out = Vec::new();
    for t in trials {
        let lateness = EmulatedDevice::all_in(&t.result.stack)
            .iter()
            .filter_map(|d| d.warning_in(&t.result.monitor.late_seconds))
            .filter(|w| !t.result.warnings.contains(w))
            .collect::<Vec<_>>();
        for text in t.result.warnings.iter().chain(&lateness) {
            out.push(if many {
                format!("r{}: {text}", t.repeat)
            } else {
                text.clone()
            });
        }
    }
    out
}

/// `{"a": {"b": 1}, "c": [x, y]}` -> `a.b: 1`, `c: x, y`.
pub fn flatten(v: &Json) -> Vec<(String, String)> {
    fn go(prefix: &str, v: &Json, out: &mut Vec<(String, String)>) {
        match v {
            Json::Object(o) => {
                for (k, x) in o {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    go(&key, x, out);
                }
            }
            Json::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
                let parts: Vec<String> = a.iter().map(json_text).collect();
                out.push((prefix.to_string(), parts.join(" ")));
            }
            Json::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    go(&format!("{prefix}[{i}]"), x, out);
                }
            }
            other => out.push((prefix.to_string(), json_text(other))),
        }
    }
    let mut out = Vec::new();
    go("", v, &mut out);
    out
}

/// Distinct values `fact` gives over the study's trials, joined by `; `.
fn distinct(study: &Study, fact: impl Fn(&Trial) -> Option<String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for s in study.trials.iter().filter_map(fact) {
        if !s.is_empty() && !seen.contains(&s) {
            seen.push(s);
        }
    }
    seen.join("; ")
}

/// Bytes in binary units: `8.00 GiB`.
fn size_text(n: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut x = n as f64;
    let mut i = 0;
    while x >= 1024.0 && i + 1 < units.len() {
        x /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{n} B")
    } else {
        format!("{x:.2} {}", units[i])
    }
}

fn header(study: &Study) -> Vec<(String, String)> {
    let m = &study.manifest;
    let host = &m["host"];
    let first = &study.trials[0].result;
    let date = [&m["started_utc"], &m["created_utc"]]
        .into_iter()
        .find_map(|v| v.as_str())
        .unwrap_or(&first.started_utc)
        .to_string();
    let version = host["iotrial_version"]
        .as_str()
        .unwrap_or(&first.iotrial_version)
        .to_string();
    let rows = [
        ("study", study.name()),
        ("host", json_text(&host["hostname"])),
        ("kernel", json_text(&host["kernel"])),
        ("iotrial version", version),
        ("date", date),
        ("device", distinct(study, |t| t.result.device_name())),
        (
            "device size",
            distinct(study, |t| t.result.device_size().map(size_text)),
        ),
        ("note", json_text(&m["resolved"]["note"])),
    ];
    rows.into_iter()
        .filter(|(_, v)| !v.is_empty() && v != "-")
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// A JSON value as short text (strings unquoted, `-` for null).
fn json_text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Null => "-".into(),
        Json::Number(n) if n.is_f64() => n.as_f64().map(num).unwrap_or_default(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flatten_nested_target() {
        let f = flatten(&json!({"mkfs": {"cmd": ["mkfs.ext4", "-T", "largefile4"]},
                                "mount": {"options": "rw,noatime"}, "n": 3}));
        assert_eq!(
            f,
            vec![
                (
                    "mkfs.cmd".to_string(),
                    "mkfs.ext4 -T largefile4".to_string()
                ),
                ("mount.options".to_string(), "rw,noatime".to_string()),
                ("n".to_string(), "3".to_string()),
            ]
        );
    }
}
