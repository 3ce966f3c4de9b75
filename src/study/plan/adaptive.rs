//! The repeats a study adds after its own: once every stack has run the study's `repeats`,
//! each ranked stack whose 95% interval on its workload's ranked (headline) figure is wider
//! than the study's `interval` gets another repeat, round by round (round r runs repeat r of
//! every stack that needs one, in study order, before any stack's repeat r + 1), until every
//! interval is narrow enough or the stack has `max_repeats`. Baselines and stacks whose figures
//! cannot be true are not ranked, so they get no more. The decision is
//! [`crate::analysis::stopping::decide`] on the figures of the trials done so far.

use super::file::Study;
use crate::analysis::stopping::{decide, Decision};
use crate::report::load::Study as Results;
use crate::report::{model, ReportError};
use std::path::Path;

/// One stack's standing after a round.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    pub stack: String,
    pub workload: String,
    /// Its repeats done so far.
    pub repeats: usize,
    pub decision: Decision,
}

/// Every ranked stack and workload of `study` (resolved) with the decision on its next
/// repeat, from the finished trials in the results directory `root`, in study order.
pub fn standings(study: &Study, root: &Path) -> Result<Vec<Standing>, ReportError> {
    let rule = study.repeat_rule().stop_rule();
    let results = Results::load(root)?;
    let tables = model::verdict_tables(&results, crate::capacity::report_of)?;
    let mut out = Vec::new();
    for s in &study.stacks {
        for w in &study.workloads {
            let Some((_, t)) = tables.iter().find(|(name, _)| name == &w.name) else {
                continue;
            };
            let Some(row) = t.rows.iter().find(|r| r.stack == s.name) else {
                continue;
            };
            if row.unranked() {
                continue;
            }
            let values = row.values.first().cloned().unwrap_or_default();
            out.push(Standing {
                stack: s.name.clone(),
                workload: w.name.clone(),
                repeats: row.repeats,
                decision: decide(&rule, &values),
            });
        }
    }
    Ok(out)
}

/// What a standing says, for the study's progress lines: `ext4/dvr after 3 repeats: ±3.1%,
/// wider than ±2%: one more` / `...: ±0.8%, narrow enough` / `...: at max_repeats`.
pub fn describe(s: &Standing, interval: Option<f64>) -> String {
    let pct = |w: f64| format!("±{}%", crate::present::num(w * 100.0));
    let width = |w: Option<f64>| match w {
        Some(w) if w.is_finite() => pct(w),
        _ => "no interval yet".into(),
    };
    let what = match s.decision {
        Decision::BelowMinimum => "below the study's repeats: one more".to_string(),
        Decision::TooWide(w) => format!(
            "{}, wider than {}: one more",
            width(w),
            interval.map_or_else(
                || "asked".into(),
                |i| format!("±{}", crate::units::Percent::from_share(i).text())
            )
        ),
        Decision::Narrow(w) => format!("{}, narrow enough", width(Some(w))),
        Decision::AtMaximum => "at max_repeats".into(),
        Decision::Fixed => "the study adds no repeats".into(),
    };
    format!(
        "{}/{} after {} repeat{}: {what}",
        s.stack,
        s.workload,
        s.repeats,
        if s.repeats == 1 { "" } else { "s" }
    )
}
