//! From a results directory to a seed's summary: the study read back with iotrial's own
//! loader ([`Study`]) and verdict tables ([`verdict_tables`]), the seed's figures kept per
//! stack and repeat, with what ran where. The summary's tables are then checked to give the
//! same groups as the study's own report, so rendering from the summary alone is faithful.

use super::summary::{NotRun, StackSummary, Summary, SummaryError, WorkloadSummary};
use super::Seed;
use iotrial::report::load::Study;
use iotrial::report::model::verdict_tables;
use serde_json::Value as Json;
use std::path::Path;

fn err(e: impl std::fmt::Display) -> SummaryError {
    SummaryError(e.to_string())
}

/// The summary of `seed` from results directory `root`.
pub fn extract(root: &Path, seed: &Seed) -> Result<Summary, SummaryError> {
    let study = Study::load(root).map_err(err)?;
    if study.name() != seed.study {
        return Err(SummaryError(format!(
            "{}: a results directory of study '{}', where seed {} is made from study '{}'",
            root.display(),
            study.name(),
            seed.id,
            seed.study
        )));
    }
    let tables = verdict_tables(&study, iotrial::workload::report_of).map_err(err)?;
    let rule = study.rule();
    let mut workloads = Vec::new();
    for (w, table) in &tables {
        let kind = study.kind(w).map_err(err)?.to_string();
        let keep: Vec<(String, usize)> = (seed.columns)(&kind)
            .iter()
            .filter_map(|k| {
                let at = table.columns.iter().position(|c| c.key == *k)?;
                Some((k.to_string(), at))
            })
            .collect();
        if keep.is_empty() {
            continue;
        }
        let stacks = study.stacks(w);
        let first = &stacks[0].trials[0].result;
        let params = seed
            .params
            .iter()
            .filter_map(|k| Some((k.to_string(), first.params.get(*k)?.clone())))
            .collect();
        let summaries = table
            .rows
            .iter()
            .zip(&stacks)
            .map(|(row, st)| {
                let t0 = &st.trials[0].result;
                let mut notes: Vec<String> = row.marked.clone();
                notes.extend(row.cautions.iter().map(|(l, why)| format!("{l}: {why}")));
                notes.extend(row.hardware.iter().map(|h| format!("other hardware: {h}")));
                StackSummary {
                    stack: row.stack.clone(),
                    baseline: row.baseline,
                    devices: t0.target.spec.clone(),
                    time_scale: t0.time_scale,
                    repeats: st.trials.iter().map(|t| t.repeat).collect(),
                    values: keep.iter().map(|(_, c)| row.values[*c].clone()).collect(),
                    impossible: row.impossible.clone(),
                    notes,
                    extra: (seed.extra)(&st.trials),
                }
            })
            .collect();
        workloads.push(WorkloadSummary {
            workload: w.clone(),
            kind,
            params,
            columns: keep.iter().map(|(k, _)| k.clone()).collect(),
            stacks: summaries,
        });
    }
    let m = &study.manifest;
    let text = |v: &Json| v.as_str().unwrap_or_default().to_string();
    let summary = Summary {
        seed: seed.id.to_string(),
        study: study.name(),
        study_hash: text(&m["study_hash"]),
        quick: m["options"]["quick"].as_bool().unwrap_or(false),
        options: options(&m["options"]),
        created_utc: text(&m["created_utc"]),
        updated_utc: text(&m["updated_utc"]),
        iotrial_version: text(&m["host"]["iotrial_version"]),
        kernel: text(&m["host"]["kernel"]),
        cpus: m["host"]["cpus"].as_u64().unwrap_or(0),
        alpha: rule.alpha,
        noise: rule.noise,
        workloads,
        not_run: not_run(m),
    };
    // Rendering reads the committed text: check the groups from that, not from memory.
    let read: Summary = serde_json::from_str(&summary.to_text()).map_err(err)?;
    for ws in &read.workloads {
        let (w, table) = tables
            .iter()
            .find(|(w, _)| *w == ws.workload)
            .expect("a kept workload is one of the study's");
        let rebuilt = ws.table(read.rule())?;
        for (k, key) in ws.columns.iter().enumerate() {
            let at = table.columns.iter().position(|c| c.key == key);
            if at.is_none_or(|at| rebuilt.groups(k) != table.groups(at)) {
                return Err(SummaryError(format!(
                    "workload {w}, {key}: the summary's groups differ from the study's report's"
                )));
            }
        }
    }
    Ok(read)
}

/// The options a study ran with that change what it measured, in words.
fn options(o: &Json) -> Vec<String> {
    let mut v = Vec::new();
    let only: Vec<&str> = o["only"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .collect();
    if !only.is_empty() {
        v.push(format!("--only {}", only.join(",")));
    }
    for (key, flag) in [
        ("device", "--device"),
        ("repeats", "--repeats"),
        ("max_repeats", "--max-repeats"),
        ("interval", "--interval"),
    ] {
        match &o[key] {
            Json::Null => {}
            Json::String(s) => v.push(format!("{flag} {s}")),
            x => v.push(format!("{flag} {x}")),
        }
    }
    if let Some(s) = o["shard"].as_str() {
        v.push(format!("--shard {s}"));
    }
    v
}

/// The manifest's trials that are not done.
fn not_run(m: &Json) -> Vec<NotRun> {
    m["trials"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["status"].as_str().is_some_and(|s| s != "done"))
        .map(|t| NotRun {
            stack: t["stack"].as_str().unwrap_or_default().into(),
            workload: t["workload"].as_str().unwrap_or_default().into(),
            status: t["status"].as_str().unwrap_or_default().into(),
            reason: t["reason"].as_str().unwrap_or_default().into(),
        })
        .fold(Vec::new(), |mut v: Vec<NotRun>, n| {
            // One line per stack and workload, not per repeat.
            if !v
                .iter()
                .any(|x| x.stack == n.stack && x.workload == n.workload)
            {
                v.push(n);
            }
            v
        })
}
