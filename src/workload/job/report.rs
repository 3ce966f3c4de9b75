//! job's part of the report: per stack, fio's headline figures per job group (IOPS, MB/s,
//! completion latency) read back from result.json, so a report over trials of tens of millions
//! of I/Os reads no samples.

use super::figures::{Verdict, COLUMNS, GROUP_HEADINGS};
use crate::present::chart::{Block, Section, Table};
use crate::present::{num_opt, FigureSpec, KindReport, VerdictFigures};
use crate::result::{ResultError, StackTrials, Trial};
use crate::workload::figures_of;

/// job's part of the report.
pub struct JobReport;

fn table(st: &StackTrials<'_>, v: &Verdict) -> Table {
    Table {
        caption: format!(
            "{}: every job of the first repeat, then fio's reporting groups when there are several (clat counted from the intended issue time for paced jobs)",
            st.stack
        ),
        headings: GROUP_HEADINGS.map(String::from).to_vec(),
        rows: super::analysis::job_and_group_rows(v),
    }
}

impl KindReport for JobReport {
    fn columns(&self) -> &'static [FigureSpec] {
        COLUMNS
    }

    fn figures(&self, trial: &Trial) -> Result<VerdictFigures, ResultError> {
        figures_of(trial, Verdict::figures)
    }

    fn sections(&self, stacks: &[StackTrials<'_>]) -> Result<Vec<Section>, ResultError> {
        stacks
            .iter()
            .map(|st| {
                let t = st.trials[0];
                let v: Verdict = t.result.verdict_as().map_err(|e| t.error(e))?;
                Ok(Section {
                    title: format!("{}: jobs", st.stack),
                    intro: Some(format!(
                        "All jobs: {} IOPS, {} MB/s, clat p99 {} us over {} s.",
                        num_opt(v.iops),
                        num_opt(v.mb_s),
                        num_opt(v.lat_p99_us),
                        crate::units::trim_float((v.runtime_s * 100.0).round() / 100.0)
                    )),
                    blocks: vec![Block::Table(table(st, &v))],
                })
            })
            .collect()
    }
}
