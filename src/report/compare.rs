//! `iotrial compare A B`: the verdict figures of two results directories side by side, stack by
//! stack, with the change from A to B and whether it is significant by Welch's t-test.

use super::load::Study;
use super::verdicts::{generic_columns, num, values, welch_text, Column};
use super::ReportError;
use crate::analysis::compare::{self, Estimate};
use crate::workload::{self, Rows};
use std::path::Path;

/// One figure of one stack in both directories.
#[derive(Debug, Clone)]
pub struct Delta {
    pub workload: String,
    pub stack: String,
    pub column: Column,
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
    /// Stacks (as `workload/stack`) found in only one of the directories.
    pub unmatched: Vec<String>,
}

/// Compares the results directories `a` (before) and `b` (after).
pub fn compare_dirs(a: &Path, b: &Path) -> Result<Comparison, ReportError> {
    let (sa, sb) = (Study::load(a)?, Study::load(b)?);
    let mut deltas = Vec::new();
    let mut unmatched = Vec::new();
    for w in sa.workloads() {
        let (ka, kb) = (sa.stacks(w), sb.stacks(w));
        let columns: Vec<Column> = match workload::find(w).ok().and_then(|k| k.report_sections()) {
            Some(c) => c.columns().into_iter().map(Column::from).collect(),
            None => generic_columns(&ka),
        };
        for x in &ka {
            let Some(y) = kb.iter().find(|y| y.stack == x.stack) else {
                unmatched.push(format!("{w}/{} (only in A)", x.stack));
                continue;
            };
            for c in &columns {
                let (va, vb) = (values(&x.trials, &c.key), values(&y.trials, &c.key));
                if va.is_empty() && vb.is_empty() {
                    continue;
                }
                deltas.push(Delta {
                    workload: w.to_string(),
                    stack: x.stack.to_string(),
                    column: c.clone(),
                    a: Estimate::of(&va),
                    b: Estimate::of(&vb),
                    test: compare::welch(&va, &vb),
                });
            }
        }
        for y in kb.iter().filter(|y| !ka.iter().any(|x| x.stack == y.stack)) {
            unmatched.push(format!("{w}/{} (only in B)", y.stack));
        }
    }
    for w in sb
        .workloads()
        .into_iter()
        .filter(|w| !sa.workloads().contains(w))
    {
        unmatched.push(format!("{w} (only in B)"));
    }
    Ok(Comparison { deltas, unmatched })
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
                let unit = if d.column.unit.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", d.column.unit)
                };
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
                    format!("{}{unit}", d.column.label),
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

    fn put(root: &Path, stack: &str, rep: u32, mbit: f64) {
        let d = root.join(format!("trials/{stack}/dvr/r{rep}"));
        std::fs::create_dir_all(&d).unwrap();
        let doc =
            serde_json::json!({"verdict": {"record_mbit_guaranteed": mbit, "meets_target": true}});
        std::fs::write(d.join("result.json"), doc.to_string()).unwrap();
    }

    #[test]
    fn significant_change_is_called() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        for (i, v) in [20.1, 19.8, 20.5, 20.3, 19.9].into_iter().enumerate() {
            put(a.path(), "ext4", i as u32 + 1, v);
        }
        for (i, v) in [18.2, 19.0, 18.7, 18.4].into_iter().enumerate() {
            put(b.path(), "ext4", i as u32 + 1, v);
        }
        put(b.path(), "xfs", 1, 30.0);
        let c = compare_dirs(a.path(), b.path()).unwrap();
        let rows = c.rows();
        let r = &rows.rows[0];
        assert_eq!(r[1], "ext4");
        assert!(r[2].starts_with("record guaranteed (Mbit/s)"));
        assert_eq!(r[3], "20.1 ± 0.356 (n=5)");
        assert!(
            r[7].contains("significant") && !r[7].contains("not"),
            "{r:?}"
        );
        assert_eq!(c.unmatched, vec!["dvr/xfs (only in B)"]);
    }
}
