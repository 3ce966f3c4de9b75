//! The verdict table: one row per stack, one column per verdict figure, each the mean of the
//! stack's repeats with its 95% confidence interval; pass/fail against the target; the best
//! stack on the headline figure, and whether every other stack differs from it significantly.
//! Baseline stacks are shown, labelled, and left out of both.

use super::load::StackTrials;
use crate::analysis::compare::{self, Estimate, Welch};
use crate::workload::{Better, Figure, Rows};
use serde_json::Value as Json;

/// One verdict column: the key in result.json's `verdict`, its heading and unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub key: String,
    pub label: String,
    pub unit: String,
    pub better: Better,
}

impl From<Figure> for Column {
    fn from(f: Figure) -> Column {
        Column {
            key: f.key.into(),
            label: f.label.into(),
            unit: f.unit.into(),
            better: f.better,
        }
    }
}

/// Whether a stack met the workload's target over its repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The workload has no target (or no repeat said).
    None,
    Pass,
    Fail,
    /// Met in `met` of `of` repeats.
    Mixed {
        met: usize,
        of: usize,
    },
}

impl Target {
    /// Short text for tables.
    pub fn text(&self) -> String {
        match self {
            Target::None => "-".into(),
            Target::Pass => "pass".into(),
            Target::Fail => "FAIL".into(),
            Target::Mixed { met, of } => format!("met {met}/{of}"),
        }
    }

    /// CSS class in the HTML report.
    pub fn class(&self) -> &'static str {
        match self {
            Target::None => "",
            Target::Pass => "pass",
            Target::Fail | Target::Mixed { .. } => "fail",
        }
    }
}

/// One stack's row.
#[derive(Debug, Clone)]
pub struct StackRow {
    pub stack: String,
    pub repeats: usize,
    /// One per column: the repeats' values and their estimate.
    pub values: Vec<Vec<f64>>,
    pub estimates: Vec<Option<Estimate>>,
    pub target: Target,
    /// A baseline: never the best, not tested against it.
    pub baseline: bool,
    /// Welch's test of this stack against the best on the headline figure.
    pub vs_best: Option<Welch>,
}

/// The verdict table of one workload.
#[derive(Debug, Clone)]
pub struct VerdictTable {
    pub columns: Vec<Column>,
    pub rows: Vec<StackRow>,
    /// Index of the best row on the headline (first) column.
    pub best: Option<usize>,
}

/// The values of `key` in every repeat's verdict.
pub fn values(trials: &[&super::load::Trial], key: &str) -> Vec<f64> {
    trials
        .iter()
        .filter_map(|t| t.result["verdict"][key].as_f64())
        .collect()
}

fn target(trials: &[&super::load::Trial]) -> Target {
    let said: Vec<bool> = trials
        .iter()
        .filter_map(|t| t.result["verdict"]["meets_target"].as_bool())
        .collect();
    let met = said.iter().filter(|&&b| b).count();
    match (said.len(), met) {
        (0, _) => Target::None,
        (n, m) if m == n => Target::Pass,
        (_, 0) => Target::Fail,
        (n, m) => Target::Mixed { met: m, of: n },
    }
}

/// Columns for a workload without report sections: every numeric verdict key, higher better.
pub fn generic_columns(stacks: &[StackTrials<'_>]) -> Vec<Column> {
    let mut keys: Vec<String> = Vec::new();
    for s in stacks {
        for t in &s.trials {
            if let Some(o) = t.result["verdict"].as_object() {
                for (k, v) in o {
                    if (v.is_number() || v.is_null()) && !keys.contains(k) {
                        keys.push(k.clone());
                    }
                }
            }
        }
    }
    keys.into_iter()
        .map(|k| Column {
            label: k.clone(),
            key: k,
            unit: String::new(),
            better: Better::Higher,
        })
        .collect()
}

impl VerdictTable {
    /// Builds the table of `stacks` over `columns`.
    pub fn build(columns: Vec<Column>, stacks: &[StackTrials<'_>]) -> VerdictTable {
        let mut rows: Vec<StackRow> = stacks
            .iter()
            .map(|s| {
                let values: Vec<Vec<f64>> =
                    columns.iter().map(|c| values(&s.trials, &c.key)).collect();
                StackRow {
                    stack: s.stack.to_string(),
                    repeats: s.trials.len(),
                    estimates: values.iter().map(|v| Estimate::of(v)).collect(),
                    values,
                    target: target(&s.trials),
                    baseline: s.baseline,
                    vs_best: None,
                }
            })
            .collect();
        let best = columns.first().and_then(|c| best_index(&rows, 0, c.better));
        if let Some(b) = best {
            let reference = rows[b].values[0].clone();
            for (i, r) in rows.iter_mut().enumerate() {
                if i != b && !r.baseline {
                    r.vs_best = compare::welch(&r.values[0], &reference);
                }
            }
        }
        VerdictTable {
            columns,
            rows,
            best,
        }
    }

    /// Index of the best row in column `col` (never a baseline).
    pub fn best_in(&self, col: usize) -> Option<usize> {
        best_index(&self.rows, col, self.columns[col].better)
    }

    /// Whether any stack has more than one repeat.
    pub fn has_repeats(&self) -> bool {
        self.rows.iter().any(|r| r.repeats > 1)
    }

    /// Column headings with units.
    pub fn headings(&self) -> Vec<String> {
        let mut h = vec!["stack".to_string()];
        if self.has_repeats() {
            h.push("repeats".into());
        }
        for c in &self.columns {
            h.push(if c.unit.is_empty() {
                c.label.to_string()
            } else {
                format!("{} ({})", c.label, c.unit)
            });
        }
        h.push("target".into());
        if self.has_repeats() {
            h.push(format!("vs best ({})", compare::TEST_NAME));
        }
        h
    }

    /// The cells of row `i` as text (the stack name without the best mark; a baseline's
    /// followed by ` (baseline)`).
    pub fn cells(&self, i: usize) -> Vec<String> {
        let r = &self.rows[i];
        let mut v = vec![if r.baseline {
            format!("{} (baseline)", r.stack)
        } else {
            r.stack.clone()
        }];
        if self.has_repeats() {
            v.push(r.repeats.to_string());
        }
        for e in &r.estimates {
            v.push(estimate_text(e.as_ref()));
        }
        v.push(r.target.text());
        if self.has_repeats() {
            v.push(if Some(i) == self.best {
                "best".into()
            } else {
                welch_text(r.vs_best.as_ref())
            });
        }
        v
    }

    /// The table as rows of text, the best stack marked with a star.
    pub fn rows_text(&self) -> Rows {
        Rows {
            headings: self.headings(),
            rows: (0..self.rows.len())
                .map(|i| {
                    let mut c = self.cells(i);
                    if Some(i) == self.best {
                        c[0] = format!("★ {}", c[0]);
                    }
                    c
                })
                .collect(),
        }
    }

    /// One sentence on how the best stack was chosen and which test was used.
    pub fn method_note(&self) -> String {
        let head = self
            .columns
            .first()
            .map(|c| {
                let dir = match c.better {
                    Better::Higher => "highest",
                    Better::Lower => "lowest",
                };
                format!("★ marks the stack with the {dir} mean {}. ", c.label)
            })
            .unwrap_or_default();
        let stats = if self.has_repeats() {
            format!(
                "Figures are the mean over repeats ± the half-width of its 95% confidence interval (Student's t). A difference from the best stack is called significant only by {}; with fewer than two repeats no test is made.",
                compare::TEST_NAME
            )
        } else {
            "Each stack ran once, so no confidence interval or significance test is possible; differences may be noise.".to_string()
        };
        let baseline = if self.rows.iter().any(|r| r.baseline) {
            " Stacks marked (baseline) are shown for reference and never ranked: not marked best, not tested against the best."
        } else {
            ""
        };
        head + &stats + baseline
    }
}

fn best_index(rows: &[StackRow], col: usize, better: Better) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, r) in rows.iter().enumerate().filter(|(_, r)| !r.baseline) {
        let Some(m) = r.estimates[col].map(|e| e.mean) else {
            continue;
        };
        let wins = match (best, better) {
            (None, _) => true,
            (Some((_, b)), Better::Higher) => m > b,
            (Some((_, b)), Better::Lower) => m < b,
        };
        if wins {
            best = Some((i, m));
        }
    }
    best.map(|b| b.0)
}

/// A number with 3 significant digits or so, no exponent.
pub fn num(x: f64) -> String {
    let a = x.abs();
    let d = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    format!("{x:.d$}")
}

/// `mean ± ci` (or the mean alone for one value), `-` when there is none.
pub fn estimate_text(e: Option<&Estimate>) -> String {
    match e {
        None => "-".into(),
        Some(e) => match e.ci95 {
            Some(ci) => format!("{} ± {}", num(e.mean), num(ci)),
            None => num(e.mean),
        },
    }
}

/// `p = 0.003, significant` / `p = 0.41, not significant` / `-`.
pub fn welch_text(w: Option<&Welch>) -> String {
    match w {
        None => "-".into(),
        Some(w) => format!(
            "p {}, {}",
            if w.p < 0.001 {
                "< 0.001".to_string()
            } else {
                format!("= {:.3}", w.p)
            },
            if w.significant() {
                "significant"
            } else {
                "not significant"
            }
        ),
    }
}

/// A JSON value as short text for tables (strings unquoted).
pub fn json_text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Null => "-".into(),
        Json::Number(n) if n.is_f64() => n.as_f64().map(num).unwrap_or_default(),
        Json::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::load::Trial;
    use serde_json::json;

    fn trial(stack: &str, repeat: u32, mbit: f64, met: bool) -> Trial {
        Trial {
            stack: stack.into(),
            workload: "w".into(),
            repeat,
            dir: Default::default(),
            result: json!({"verdict": {"mbit": mbit, "meets_target": met}}),
        }
    }

    fn col() -> Vec<Column> {
        vec![Figure {
            key: "mbit",
            label: "guaranteed",
            unit: "Mbit/s",
            value: None,
            better: Better::Higher,
        }
        .into()]
    }

    #[test]
    fn best_stack_ci_and_test() {
        let a = [
            trial("a", 1, 20.1, true),
            trial("a", 2, 19.8, true),
            trial("a", 3, 20.5, true),
        ];
        let b = [
            trial("b", 1, 18.2, false),
            trial("b", 2, 19.0, false),
            trial("b", 3, 18.7, true),
        ];
        let stacks = vec![
            StackTrials {
                stack: "b",
                baseline: false,
                trials: b.iter().collect(),
            },
            StackTrials {
                stack: "a",
                baseline: false,
                trials: a.iter().collect(),
            },
        ];
        let t = VerdictTable::build(col(), &stacks);
        assert_eq!(t.best, Some(1));
        assert_eq!(t.rows[0].target, Target::Mixed { met: 1, of: 3 });
        assert_eq!(t.rows[1].target, Target::Pass);
        assert!(t.rows[0].vs_best.unwrap().significant());
        let rows = t.rows_text();
        assert_eq!(rows.rows[1][0], "★ a");
        // mean 20.133.., sd 0.351, t(0.975, 2) = 4.3027: half-width 0.872
        assert_eq!(rows.rows[1][2], "20.1 ± 0.872");
        assert!(rows.headings.last().unwrap().contains("Welch"));
        assert!(t.method_note().contains("Welch"));
    }

    #[test]
    fn single_repeat_has_no_test() {
        let a = [trial("a", 1, 20.0, true)];
        let stacks = vec![StackTrials {
            stack: "a",
            baseline: false,
            trials: a.iter().collect(),
        }];
        let t = VerdictTable::build(col(), &stacks);
        assert_eq!(t.rows_text().rows[0], vec!["★ a", "20.0", "pass"]);
        assert!(t.method_note().contains("no confidence interval"));
    }

    #[test]
    fn baseline_is_never_best() {
        let host = [trial("host", 1, 90.0, true), trial("host", 2, 91.0, true)];
        let a = [trial("a", 1, 20.0, true), trial("a", 2, 20.4, true)];
        let b = [trial("b", 1, 18.0, false), trial("b", 2, 18.6, false)];
        let stacks = vec![
            StackTrials {
                stack: "a",
                baseline: false,
                trials: a.iter().collect(),
            },
            StackTrials {
                stack: "b",
                baseline: false,
                trials: b.iter().collect(),
            },
            StackTrials {
                stack: "host",
                baseline: true,
                trials: host.iter().collect(),
            },
        ];
        let t = VerdictTable::build(col(), &stacks);
        assert_eq!(t.best, Some(0));
        assert_eq!(t.best_in(0), Some(0));
        assert!(t.rows[1].vs_best.is_some());
        assert!(t.rows[2].vs_best.is_none(), "a baseline is not tested");
        let rows = t.rows_text();
        assert_eq!(rows.rows[0][0], "★ a");
        assert_eq!(rows.rows[2][0], "host (baseline)");
        assert_eq!(rows.rows[2].last().unwrap(), "-");
        assert!(t.method_note().contains("never ranked"));
    }
}
