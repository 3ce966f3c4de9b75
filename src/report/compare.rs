//! `iotrial compare A B`: the verdict figures of two results directories side by side, stack by
//! stack, with the change from A to B and whether it is significant: Welch's t-test of each
//! stack and figure, Holm's correction over every test the comparison makes, and the noise
//! threshold below which a change is noise ([`crate::analysis::groups`]). Each directory's
//! figures come from the same comparison the report shows.

use super::load::Study;
use super::model::{kind_report, verdict_table};
use super::ReportError;
use crate::analysis::compare::Estimate;
use crate::analysis::groups::{self, Rule};
use crate::present::verdict::{p_text, VerdictTable};
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
    /// Welch's two-sided p-value of A against B (`None`: fewer than two repeats on a side).
    pub p: Option<f64>,
    /// `p` after Holm's correction over every test of the comparison.
    pub p_holm: Option<f64>,
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
    /// What makes a change significant.
    pub rule: Rule,
}

/// One workload's table in a directory.
fn table(study: &Study, w: &str, kinds: KindLookup) -> Result<VerdictTable, ReportError> {
    let kind = kind_report(study, w, kinds)?;
    Ok(verdict_table(kind, &study.stacks(w), study.rule())?)
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
                p: groups::p_value(va, vb),
                p_holm: None,
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
    let made: Vec<usize> = (0..deltas_all.len())
        .filter(|&i| deltas_all[i].p.is_some())
        .collect();
    let adjusted = groups::holm(
        &made
            .iter()
            .filter_map(|&i| deltas_all[i].p)
            .collect::<Vec<_>>(),
    );
    for (&i, q) in made.iter().zip(adjusted) {
        deltas_all[i].p_holm = Some(q);
    }
    Ok(Comparison {
        deltas: deltas_all,
        unmatched,
        rule: Rule::default(),
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

impl Delta {
    /// Whether the change is significant: Holm-corrected p below α and a relative change
    /// above the noise threshold.
    pub fn significant(&self, rule: &Rule) -> bool {
        match (self.p_holm, self.a, self.b) {
            (Some(q), Some(a), Some(b)) => {
                q < rule.alpha && groups::relative(a.mean, b.mean) > rule.noise
            }
            _ => false,
        }
    }

    /// The cell saying whether the change is significant.
    fn verdict(&self, rule: &Rule) -> String {
        let (Some(q), Some(a), Some(b)) = (self.p_holm, self.a, self.b) else {
            return "untested (needs 2+ repeats each)".into();
        };
        if groups::relative(a.mean, b.mean) <= rule.noise {
            return format!("within {}%: noise", num(rule.noise * 100.0));
        }
        let word = if self.significant(rule) {
            "significant"
        } else {
            "not significant"
        };
        format!("{} (Holm), {word}", p_text(q))
    }
}

impl Comparison {
    /// How many tests the comparison made (what Holm's correction is over).
    pub fn tests(&self) -> usize {
        self.deltas.iter().filter(|d| d.p.is_some()).count()
    }

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
                let sig = d.verdict(&self.rule);
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
            "A and B are means over repeats ± the half-width of the 95% confidence interval (Student's t). A change is called significant only when Welch's two-sided t-test, corrected by Holm's method over the {} tests this comparison makes (every stack and figure with two or more repeats on both sides), gives p < {} and the means differ by more than {}% (the noise threshold).",
            self.tests(),
            self.rule.alpha,
            num(self.rule.noise * 100.0)
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
        assert!(r[7].contains("Holm"), "{r:?}");
        assert_eq!(c.unmatched, vec!["dvr-buffered/xfs (only in B)"]);
    }

    #[test]
    fn holm_covers_every_stack_and_figure_tested() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        // Ten stacks, each 10% slower in B with a spread that makes one test alone p ~ 0.02.
        for s in 0..10 {
            let stack = format!("s{s}");
            for (i, v) in [20.0, 21.0, 22.0].into_iter().enumerate() {
                put(a.path(), &stack, "w", i as u32 + 1, v);
                put(b.path(), &stack, "w", i as u32 + 1, v - 2.6);
            }
        }
        let c = compare_dirs(a.path(), b.path(), lookup).unwrap();
        // mbit changes (p ~ 0.03 each); preroll does not (no spread, equal: p = 1).
        assert_eq!(c.tests(), 20);
        let mbit: Vec<&Delta> = c.deltas.iter().filter(|d| d.figure.key == "mbit").collect();
        assert!(
            mbit.iter().all(|d| d.p.unwrap() < 0.05),
            "each alone is below α"
        );
        assert!(
            mbit.iter().all(|d| !d.significant(&c.rule)),
            "none is after Holm over 20 tests"
        );
        assert!(c.method_note().contains("over the 20 tests"));
    }
}
