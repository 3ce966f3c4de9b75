//! The report as data, built once from a results directory and then written as HTML and as
//! Markdown: header facts, and per workload the verdict table, the workload's own sections,
//! each stack as built and every warning.

use super::load::{Study, Trial};
use super::sections::Section;
use super::verdicts::{generic_columns, json_text, Column, VerdictTable};
use super::ReportError;
use crate::workload;
use serde_json::Value as Json;

/// One stack as built, with the caveats its trials raised.
#[derive(Debug, Clone)]
pub struct BuiltStack {
    pub stack: String,
    /// `key: value` facts of the stack as built (result.json `target`, flattened).
    pub facts: Vec<(String, String)>,
    /// Warnings, each prefixed with its repeat when there are several.
    pub warnings: Vec<String>,
}

/// Everything the report shows about one workload.
#[derive(Debug, Clone)]
pub struct WorkloadReport {
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

/// Builds the report of `study`.
pub fn build(study: &Study) -> Result<Report, ReportError> {
    let mut workloads = Vec::new();
    for w in study.workloads() {
        let stacks = study.stacks(w);
        let contributor = workload::find(w).ok().and_then(|k| k.report_sections());
        let columns: Vec<Column> = match contributor {
            Some(c) => c.columns().into_iter().map(Column::from).collect(),
            None => generic_columns(&stacks),
        };
        let sections = match contributor {
            Some(c) => c.sections(&stacks)?,
            None => Vec::new(),
        };
        let built = stacks
            .iter()
            .map(|s| BuiltStack {
                stack: s.stack.to_string(),
                facts: flatten(as_built(&s.trials[0].result)),
                warnings: warnings(&s.trials),
            })
            .collect();
        workloads.push(WorkloadReport {
            workload: w.to_string(),
            table: VerdictTable::build(columns, &stacks),
            sections,
            built,
        });
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
            format!(
                "{} / {} / r{}: {}",
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
        for w in t.result["warnings"].as_array().into_iter().flatten() {
            let text = json_text(w);
            out.push(if many {
                format!("r{}: {text}", t.repeat)
            } else {
                text
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

/// The stack as built (result.json `stack`), or the plain `target` of a directory trial.
fn as_built(result: &serde_json::Value) -> &serde_json::Value {
    if result["stack"].is_object() {
        &result["stack"]
    } else {
        &result["target"]
    }
}

/// Distinct non-empty strings found at any of `paths` (dotted; numbers index arrays) in the
/// trials' result.json.
fn target_facts(study: &Study, paths: &[&str]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for t in &study.trials {
        for p in paths {
            let mut v = &t.result;
            for part in p.split('.') {
                v = match part.parse::<usize>() {
                    Ok(i) => &v[i],
                    Err(_) => &v[part],
                };
            }
            if v.is_null() {
                continue;
            }
            let s = match v.as_u64() {
                Some(n) if p.contains("size") => size_text(n),
                _ => json_text(v),
            };
            if !s.is_empty() && !seen.contains(&s) {
                seen.push(s);
            }
            break;
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
    let date = [&m["started_utc"], &m["created_utc"], &first["started_utc"]]
        .into_iter()
        .find_map(|v| v.as_str())
        .unwrap_or("")
        .to_string();
    let version = host["iotrial_version"]
        .as_str()
        .or(first["iotrial_version"].as_str())
        .unwrap_or("")
        .to_string();
    let rows = [
        ("study", study.name()),
        ("host", json_text(&host["hostname"])),
        ("kernel", json_text(&host["kernel"])),
        ("iotrial version", version),
        ("date", date),
        (
            "device",
            target_facts(
                study,
                &[
                    "stack.devices.0.model",
                    "stack.devices.0.spec",
                    "target.device.model",
                    "target.device_model",
                    "target.model",
                    "target.spec",
                ],
            ),
        ),
        (
            "device size",
            target_facts(
                study,
                &[
                    "stack.devices.0.size_bytes",
                    "target.device.size_bytes",
                    "target.device.size",
                    "target.size_bytes",
                    "target.size",
                ],
            ),
        ),
    ];
    rows.into_iter()
        .filter(|(_, v)| !v.is_empty() && v != "-")
        .map(|(k, v)| (k.to_string(), v))
        .collect()
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
