//! A capacity search's part of the report (kind `capacity`): per stack, the verdict in a
//! sentence, every probe in a table, and the buffers of the run at capacity and of the first
//! failing run over time; then every stack's probes on one chart, the fullest record buffer
//! against the varied value, which shows where each stack's margin runs out.

use super::figures::{Verdict, COLUMNS};
use crate::present::chart::{Block, Chart, Section, Series, Style, Table};
use crate::present::{num, num_opt, FigureSpec, KindReport, VerdictFigures};
use crate::result::{self, ResultError, StackTrials, Trial};
use crate::units::trim_float;
use crate::workload::realtime::{report as rt_report, BufferFigures};

/// A capacity search's part of the report.
pub struct CapacityReport;

fn verdict_of(t: &Trial) -> Result<Verdict, ResultError> {
    t.result.verdict_as().map_err(|e| t.error(e))
}

/// One probe's trial, read from its directory under the search's.
fn probe_trial(t: &Trial, dir: &str) -> Result<Trial, ResultError> {
    let d = t.dir.join(dir);
    Ok(Trial {
        stack: t.stack.clone(),
        workload: t.workload.clone(),
        repeat: t.repeat,
        result: result::read(&d.join("result.json"))?,
        dir: d,
    })
}

/// The buffers of one probe, under a heading.
fn probe_blocks(t: &Trial, dir: &str, heading: String) -> Vec<Block> {
    let p = match probe_trial(t, dir) {
        Ok(p) => p,
        Err(e) => {
            return vec![Block::Note {
                text: format!("{heading}: {e}"),
            }]
        }
    };
    let phase = p
        .result
        .phases
        .iter()
        .find(|ph| {
            ph.measured
                .as_ref()
                .is_some_and(|m| m.get("buffers").is_some())
        })
        .map(|ph| ph.name.clone())
        .unwrap_or_default();
    let buffers: Vec<(String, Option<BufferFigures>)> = p
        .result
        .streams
        .iter()
        .map(|s| {
            let name = s["name"].as_str().unwrap_or_default().to_string();
            (name, serde_json::from_value(s["buffer"].clone()).ok())
        })
        .collect();
    let mut blocks = vec![Block::Note { text: heading }];
    for mut b in rt_report::blocks(&p, &phase, &buffers) {
        match &mut b {
            Block::Chart(c) => c.title = format!("{} ({dir})", c.title),
            Block::Table(t) => t.caption = format!("{} ({dir})", t.caption),
            Block::Note { .. } => {}
        }
        blocks.push(b);
    }
    blocks
}

fn probes_table(v: &Verdict) -> Table {
    let headings = [
        v.vary.as_str(),
        "run",
        "result",
        "record buffer peak (%)",
        "overflow (MB)",
        "underruns",
        "stalled (s)",
        "first failure",
        "wall (s)",
    ];
    let rows = v
        .probes
        .iter()
        .map(|p| {
            vec![
                trim_float(p.value),
                p.run.to_string(),
                if p.passed { "pass" } else { "FAIL" }.into(),
                num_opt(p.record_buffer_peak_pct),
                num_opt(p.overflow_mb),
                p.underruns.map_or("-".into(), |u| u.to_string()),
                num_opt(p.stall_s),
                p.first_failure.as_ref().map_or("-".into(), |f| {
                    format!("{} at {:.1} s: {}", f.stream, f.at_s, f.what)
                }),
                num(p.wall_s),
            ]
        })
        .collect();
    Table {
        caption: "Every run of the search, in order (each a full run on a freshly built stack)"
            .into(),
        headings: headings.iter().map(|h| h.to_string()).collect(),
        rows,
    }
}

fn stack_section(st: &StackTrials<'_>) -> Result<Section, ResultError> {
    let t = st.trials[0];
    let v = verdict_of(t)?;
    let mut intro = format!(
        "{} on this stack, {} in real time{} for {} s each run: {}.",
        v.workload_kind,
        v.vary,
        v.bitrate_mbit
            .map(|b| format!(" at {} Mbit/s", trim_float(b)))
            .unwrap_or_default(),
        trim_float(v.duration_s),
        v.line()
    );
    if let Some(b) = &v.hammer_basis {
        intro.push_str(&format!(" The hammering run: {b}."));
    }
    let mut blocks = vec![Block::Table(probes_table(&v))];
    let last_pass = v
        .capacity
        .and_then(|c| v.probes.iter().rev().find(|p| p.value == c && p.passed));
    if let Some(p) = last_pass {
        let heading = format!("The run at capacity, {} = {}:", v.vary, trim_float(p.value));
        blocks.extend(probe_blocks(t, &p.dir, heading));
    }
    let first_fail = v
        .first_failing
        .and_then(|f| v.probes.iter().find(|p| p.value == f && !p.passed));
    if let Some(p) = first_fail {
        let heading = format!(
            "The first failing run, {} = {}:",
            v.vary,
            trim_float(p.value)
        );
        blocks.extend(probe_blocks(t, &p.dir, heading));
    }
    Ok(Section {
        title: format!("Stack {}", st.stack),
        intro: Some(intro),
        blocks,
    })
}

/// Every stack's probes: the fullest record buffer against the varied value.
fn margin_chart(stacks: &[StackTrials<'_>]) -> Result<Option<Chart>, ResultError> {
    let mut series = Vec::new();
    let mut vary = String::new();
    for (g, st) in stacks.iter().enumerate() {
        let v = verdict_of(st.trials[0])?;
        vary = v.vary.clone();
        let (xs, ys): (Vec<f64>, Vec<f64>) = v
            .probes
            .iter()
            .filter_map(|p| Some((p.value, p.record_buffer_peak_pct?)))
            .unzip();
        if !xs.is_empty() {
            series.push(Series::new(st.stack, Style::Marker, g, &xs, &ys, (3, 1)).0);
        }
    }
    Ok((!series.is_empty()).then(|| Chart {
        title: format!("The fullest record buffer against {vary}"),
        caption: "Each mark is one run of a stack's search: how full its fullest record buffer got. A stack that keeps up holds about one chunk; at 100% a buffer overflowed. Where a stack's marks leave the floor is where its margin runs out.".into(),
        x_label: vary,
        y_label: "record buffer peak (%)".into(),
        series,
        ..Chart::default()
    }))
}

impl KindReport for CapacityReport {
    fn columns(&self) -> &'static [FigureSpec] {
        COLUMNS
    }

    fn figures(&self, trial: &Trial) -> Result<VerdictFigures, ResultError> {
        Ok(verdict_of(trial)?.figures())
    }

    fn sections(&self, stacks: &[StackTrials<'_>]) -> Result<Vec<Section>, ResultError> {
        let mut out = stacks
            .iter()
            .map(stack_section)
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(c) = margin_chart(stacks)? {
            out.push(Section {
                title: "All stacks: margin".into(),
                intro: Some("The verdict table above gives each stack's capacity beside the hammering run's guarantee and the estimate it made.".into()),
                blocks: vec![Block::Chart(c)],
            });
        }
        Ok(out)
    }
}
