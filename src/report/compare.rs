//! `iotrial compare A B`: the verdict figures of two results directories side by side, stack by
//! stack, with the change from A to B and whether it is significant by Welch's t-test. Each
//! directory's figures come from the same comparison the report shows.

use super::load::Study;
use super::model::{kind_report, verdict_table};
use super::ReportError;
use crate::analysis::compare::{self, Estimate};
use crate::present::verdict::{welch_text, VerdictTable};
use crate::present::{num, FigureSpec, KindLookup, Rows};
use std::path::Path;

/// One figure of one stack in both directories.
#[derive(Debug, Clone)]
pub struct Delta {
    pub workload: String,
    pub stack: String,
    pub figure: FigureSpec,
    pub a: Option<Estimate>,
    pub b: Option<Estimate>,
    pub test: Option<compare::Welch>,
}

impl Delta {
    /// B - A of the means.
    pub fn change(&self) -> Option<f64> {
        Some(self.b?.mean - self.a?.mean)
    }
}

/// The comparison of two results directories.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub deltas: Vec<Delta>,
    /// Stacks (as `workload/stack`) found in only one of the directories, and workloads whose
    /// kinds differ.
    pub unmatched: Vec<String>,
}

/// One workload's table in a directory.
fn table(study: &Study, w: &str, kinds: KindLookup) -> Result<VerdictTable, ReportError> {
    let kind = kind_report(study, w, kinds)?;
    Ok(verdict_table(kind, &study.stacks(w))?)
}

/// The deltas of every stack in both tables, figure by figure.
fn deltas(
    w: &str,
    ta: &VerdictTable,
    tb: &VerdictTable,
    unmatched: &mut Vec<String>,
) -> Vec<Delta> {
    let mut out = Vec::new();
    for x in &ta.rows {
        let Some(y) = tb.rows.iter().find(|y| y.stack == x.stack) else {
            unmatched.push(format!("{w}/{} (only in A)", x.stack));
            continue;
        };
        for (c, figure) in ta.columns.iter().enumerate() {
            let (va, vb) = (&x.values[c], &y.values[c]);
            if va.is_empty() && vb.is_empty() {
                continue;
            }
            out.push(Delta {
                workload: w.to_string(),
                stack: x.stack.clone(),
                figure: *figure,
                a: x.estimates[c],
                b: y.estimates[c],
                test: compare::welch(va, vb),
            });
        }
    }
    for y in tb
        .rows
        .iter()
        .filter(|y| !ta.rows.iter().any(|x| x.stack == y.stack))
    {
        unmatched.push(format!("{w}/{} (only in B)", y.stack));
    }
    out
}

/// Compares the results directories `a` (before) and `b` (after); `kinds` gives each
/// workload kind's figures.
pub fn compare_dirs(a: &Path, b: &Path, kinds: KindLookup) -> Result<Comparison, ReportError> {
    let (sa, sb) = (Study::load(a)?, Study::load(b)?);
    let mut deltas_all = Vec::new();
    let mut unmatched = Vec::new();
    for w in sa.workloads() {
        if !sb.workloads().contains(&w) {
            unmatched.push(format!("{w} (only in A)"));
            continue;
        }
        let (ka, kb) = (sa.kind(w)?, sb.kind(w)?);
        if ka != kb {
            unmatched.push(format!("{w} (kind {ka} in A, {kb} in B)"));
            continue;
        }
        let (ta, tb) = (table(&sa, w, kinds)?, table(&sb, w, kinds)?);
        deltas_all.extend(deltas(w, &ta, &tb, &mut unmatched));
    }
    for w in sb
        .workloads()
        .into_iter()
        .filter(|w| !sa.workloads().contains(w))
    {
        unmatched.push(format!("{w} (only in B)"));
    }
    Ok(Comparison {
        deltas: deltas_all,
        unmatched,
    })
}

fn signed(x: f64) -> String {
    if x > 0.0 {
        format!("+{}", num(x))
    } else {
        num(x)
    }
}

fn est(e: Option<&Estimate>) -> String {
    match e {
        None => "-".into(),
        Some(e) => match e.ci95 {
            Some(ci) => format!("{} ± {} (n={})", num(e.mean), num(ci), e.n),
            None => format!("{} (n=1)", num(e.mean)),
        },
    }
}

impl Comparison {
    /// One row per stack and figure: A, B, change, change in %, the test's verdict.
    pub fn rows(&self) -> Rows {
        let headings = [
            "workload",
            "stack",
            "figure",
            "A",
            "B",
            "B - A",
            "change",
            "significant?",
        ];
        let rows = self
            .deltas
            .iter()
            .map(|d| {
                let pct = match (d.change(), d.a) {
                    (Some(c), Some(a)) if a.mean != 0.0 => {
                        format!("{:+.1}%", c / a.mean.abs() * 100.0)
                    }
                    _ => "-".into(),
                };
                let sig = match d.test {
                    Some(w) => welch_text(Some(&w)),
                    None => "untested (needs 2+ repeats each)".into(),
                };
                vec![
                    d.workload.clone(),
                    d.stack.clone(),
                    d.figure.heading(),
                    est(d.a.as_ref()),
                    est(d.b.as_ref()),
                    d.change().map(signed).unwrap_or_else(|| "-".into()),
                    pct,
                    sig,
                ]
            })
            .collect();
        Rows {
            headings: headings.iter().map(|h| h.to_string()).collect(),
            rows,
        }
    }

    /// The sentence stating the test used.
    pub fn method_note(&self) -> String {
        format!(
            "A and B are means over repeats ± the half-width of the 95% confidence interval (Student's t). A change is called significant only by {}.",
            compare::TEST_NAME
        )
    }
}

/// The comparison as text: a terminal table (or Markdown), the test used, unmatched stacks.
pub fn render(c: &Comparison, markdown: bool) -> String {
    let rows = c.rows();
    let mut s = if markdown {
        super::markdown::table(&rows)
    } else {
        super::terminal::table(&rows) + "\n"
    };
    s.push_str(&format!("\n{}\n", c.method_note()));
    for u in &c.unmatched {
        s.push_str(&format!("not compared: {u}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::present::kind::example::{lookup, verdict};
    use crate::result::example;

    fn put(root: &Path, stack: &str, workload: &str, rep: u32, mbit: f64) {
        let d = root.join(format!("trials/{stack}/{workload}/r{rep}"));
        std::fs::create_dir_all(&d).unwrap();
        let mut doc = example::doc("test", verdict(mbit, 1.0, true));
        doc.workload = workload.into();
        crate::result::write(&d.join("result.json"), &doc).unwrap();
    }

    #[test]
    fn significant_change_is_called() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        for (i, v) in [20.1, 19.8, 20.5, 20.3, 19.9].into_iter().enumerate() {
            put(a.path(), "ext4", "dvr-buffered", i as u32 + 1, v);
        }
        for (i, v) in [18.2, 19.0, 18.7, 18.4].into_iter().enumerate() {
            put(b.path(), "ext4", "dvr-buffered", i as u32 + 1, v);
        }
        put(b.path(), "xfs", "dvr-buffered", 1, 30.0);
        let c = compare_dirs(a.path(), b.path(), lookup).unwrap();
        let rows = c.rows();
        let r = &rows.rows[0];
        assert_eq!(r[1], "ext4");
        assert_eq!(
            r[2], "guaranteed (Mbit/s)",
            "the figures of the results' kind"
        );
        assert_eq!(r[3], "20.1 ± 0.356 (n=5)");
        assert!(
            r[7].contains("significant") && !r[7].contains("not"),
            "{r:?}"
        );
        assert_eq!(c.unmatched, vec!["dvr-buffered/xfs (only in B)"]);
    }
}
