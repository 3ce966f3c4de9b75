//! The comparison table printed at the end of a study: for each workload, the verdict table
//! (the comparison the report shows, read back from the results directory: means, confidence
//! intervals, the best of each column by its direction, baselines labelled and never ranked,
//! pass/fail against the target) drawn for the terminal, and the stacks that did not run
//! listed with their reason.

use super::manifest::{Manifest, Status};
use crate::present::verdict::{Medium, VerdictTable};
use crate::present::Rows;
use crate::report::load::Study;
use crate::report::{model, terminal, ReportError};
use std::fmt::Write;
use std::path::Path;

/// A trial that produced no figures.
#[derive(Debug, Clone, PartialEq)]
pub struct NotRun {
    pub stack: String,
    pub trial: String,
    pub status: Status,
    pub reason: String,
}

/// Everything the table shows.
#[derive(Debug, Clone, Default)]
pub struct StudyTable {
    /// Stacks in study order.
    pub stacks: Vec<String>,
    /// Each workload's comparison, in study order.
    pub tables: Vec<(String, VerdictTable)>,
    /// Each workload's native-and-guest comparison, when a stack ran in a guest.
    pub guests: Vec<(String, Rows)>,
    pub not_run: Vec<NotRun>,
    /// `stack/workload: why`, for trials whose emulated device's replies were late beyond 1%
    /// of its service time (their figures are flagged).
    pub late: Vec<String>,
    /// The study's note: what its answer rests on or cannot say.
    pub note: Option<String>,
}

impl StudyTable {
    /// The comparison of every done trial in a results directory (read from its result.json
    /// files) and every trial that is not done.
    pub fn from_results(root: &Path, manifest: &Manifest) -> Result<StudyTable, ReportError> {
        let (tables, guests, late) = if manifest.trials.iter().any(|t| t.status == Status::Done) {
            let study = Study::load(root)?;
            (
                model::verdict_tables(&study, crate::capacity::report_of)?,
                guest_tables(&study)?,
                late_trials(&study),
            )
        } else {
            (Vec::new(), Vec::new(), Vec::new())
        };
        let not_run = manifest
            .trials
            .iter()
            .filter(|t| t.status != Status::Done)
            .map(|t| NotRun {
                stack: t.stack.clone(),
                trial: t.id.clone(),
                status: t.status,
                reason: t.reason.clone().unwrap_or_else(|| "not run".into()),
            })
            .collect();
        Ok(StudyTable {
            stacks: manifest
                .resolved
                .stacks
                .iter()
                .map(|s| s.name.clone())
                .collect(),
            tables,
            guests,
            not_run,
            late,
            note: manifest.resolved.note.clone(),
        })
    }

    /// The tables, how they were made, and the stacks that did not run, as terminal text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (w, table) in &self.tables {
            if self.tables.len() > 1 {
                let _ = writeln!(out, "workload {w}");
            }
            out.push_str(&terminal::table(&table.rows_text(Medium::Terminal)));
            out.push('\n');
            let _ = writeln!(out, "{}", table.method_note(Medium::Terminal));
            if let Some((_, g)) = self.guests.iter().find(|(gw, _)| gw == w) {
                let _ = writeln!(out, "\nnative and in a guest:");
                out.push_str(&terminal::table(g));
                out.push('\n');
            }
        }
        if let Some(r) = crate::present::rankings::rankings(&self.tables) {
            let _ = writeln!(out, "\nrankings side by side (1 = best):");
            out.push_str(&terminal::table(&r.rows()));
            out.push('\n');
            for line in r.agreement_lines() {
                let _ = writeln!(out, "{line}");
            }
        }
        for l in &self.late {
            let _ = writeln!(out, "flagged {l}");
        }
        if let Some(n) = &self.note {
            let _ = writeln!(out, "note: {n}");
        }
        out.push_str(&self.not_run_lines());
        out
    }

    /// Whether stack `stack` has figures for any workload.
    fn ran(&self, stack: &str) -> bool {
        self.tables
            .iter()
            .any(|(_, t)| t.rows.iter().any(|r| r.stack == stack))
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
            if all_same && !self.ran(stack) {
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
}

/// `stack/workload rN: why` for every trial whose emulated device's replies were late.
fn late_trials(study: &Study) -> Vec<String> {
    let mut out = Vec::new();
    for w in study.workloads() {
        for st in study.stacks(w) {
            for t in &st.trials {
                let devices = crate::result::emulated::EmulatedDevice::all_in(&t.result.stack);
                let late = &t.result.monitor.late_seconds;
                for why in devices.iter().filter_map(|d| d.warning_in(late)) {
                    out.push(format!("{}/{w} r{}: {why}", st.stack, t.repeat));
                }
            }
        }
    }
    out
}

/// Each workload's native-and-guest table ([`crate::present::guest`]), where it has one.
fn guest_tables(study: &Study) -> Result<Vec<(String, Rows)>, ReportError> {
    let mut out = Vec::new();
    for w in study.workloads() {
        let kind = model::kind_report(study, w, crate::capacity::report_of)?;
        if let Some(sec) = crate::present::guest::section(kind, &study.stacks(w))? {
            for b in sec.blocks {
                if let crate::present::chart::Block::Table(t) = b {
                    out.push((
                        w.to_string(),
                        Rows {
                            headings: t.headings,
                            rows: t.rows,
                        },
                    ));
                }
            }
        }
    }
    Ok(out)
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
