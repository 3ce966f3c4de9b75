//! The one comparison of stacks on one workload, computed once as data: per stack and verdict
//! figure, the mean over repeats with its 95% confidence interval; pass/fail against the
//! target; the best stack in each column by the figure's direction; and Welch's test of every
//! other stack against the best on the headline (first) figure. Baseline stacks are shown and
//! labelled but never ranked or tested; so are stacks whose figures are impossible (above what
//! their drives can physically do), marked with the cause. The terminal table, report.md and
//! report.html all render this one table.

use super::Better;
use super::{num, FigureSpec, Rows, VerdictFigures};
use crate::analysis::compare::{self, Estimate, Welch};

/// One stack's verdict figures over its repeats: the comparison's input.
#[derive(Debug, Clone, PartialEq)]
pub struct StackFigures {
    pub stack: String,
    /// Shown for reference, never ranked.
    pub baseline: bool,
    pub repeats: Vec<VerdictFigures>,
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
    /// The tally of the repeats' `meets_target`.
    pub fn of(repeats: &[VerdictFigures]) -> Target {
        let said: Vec<bool> = repeats.iter().filter_map(|r| r.meets_target).collect();
        let met = said.iter().filter(|&&b| b).count();
        match (said.len(), met) {
            (0, _) => Target::None,
            (n, m) if m == n => Target::Pass,
            (_, 0) => Target::Fail,
            (n, m) => Target::Mixed { met: m, of: n },
        }
    }

    /// The cell text: `pass`, `FAIL`, `met 1/3`, `-`.
    pub fn text(&self) -> String {
        match self {
            Target::None => "-".into(),
            Target::Pass => "pass".into(),
            Target::Fail => "FAIL".into(),
            Target::Mixed { met, of } => format!("met {met}/{of}"),
        }
    }

    /// CSS class in report.html.
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
    pub baseline: bool,
    pub repeats: usize,
    /// One per column: the repeats' values.
    pub values: Vec<Vec<f64>>,
    /// One per column: mean and confidence interval of `values`.
    pub estimates: Vec<Option<Estimate>>,
    pub target: Target,
    /// Welch's test of this stack against the best on the headline figure.
    pub vs_best: Option<Welch>,
    /// Why its figures are impossible, one per distinct cause over its repeats; such a row is
    /// marked and never ranked.
    pub impossible: Vec<String>,
    /// Why its figures stand above the study's reference though the stack can do them, one
    /// per distinct cause; such a row is marked and ranked.
    pub marked: Vec<String>,
    /// How the machine it ran on differs from the one the first ranked stack ran on (kernel,
    /// CPU, device hardware), when it does: the comparison may measure the machines.
    pub hardware: Option<String>,
}

impl StackRow {
    /// Shown, never ranked or tested: a baseline, or figures that cannot be true.
    pub fn unranked(&self) -> bool {
        self.baseline || !self.impossible.is_empty()
    }
}

/// Where a table is shown: text tables mark the best of a column with `*`, report.html in bold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Medium {
    Terminal,
    Markdown,
    Html,
}

/// The comparison of one workload's stacks.
#[derive(Debug, Clone)]
pub struct VerdictTable {
    pub columns: Vec<FigureSpec>,
    pub rows: Vec<StackRow>,
    /// Per column, the rows holding its best value (empty when fewer than two ranked stacks
    /// have a value, or they are all equal).
    best: Vec<Vec<usize>>,
}

impl VerdictTable {
    /// Compares `stacks` on `columns` (their order: the headline first).
    pub fn build(columns: &[FigureSpec], stacks: Vec<StackFigures>) -> VerdictTable {
        let mut rows: Vec<StackRow> = stacks.into_iter().map(|s| row(columns, s)).collect();
        let best: Vec<Vec<usize>> = columns
            .iter()
            .enumerate()
            .map(|(c, spec)| best_rows(&rows, c, spec.better))
            .collect();
        if let Some(&reference) = best.first().and_then(|b| b.first()) {
            let against = rows[reference].values[0].clone();
            for (i, r) in rows.iter_mut().enumerate() {
                if i != reference && !r.unranked() {
                    r.vs_best = compare::welch(&r.values[0], &against);
                }
            }
        }
        VerdictTable {
            columns: columns.to_vec(),
            rows,
            best,
        }
    }

    /// Whether row `row` holds the best value of column `col`.
    pub fn is_best(&self, row: usize, col: usize) -> bool {
        self.best.get(col).is_some_and(|b| b.contains(&row))
    }

    /// Whether row `row` is the best stack (best on the headline figure).
    pub fn is_best_stack(&self, row: usize) -> bool {
        self.is_best(row, 0)
    }

    /// Whether any stack has more than one repeat.
    pub fn has_repeats(&self) -> bool {
        self.rows.iter().any(|r| r.repeats > 1)
    }

    /// Whether any stack was judged against a target.
    pub fn has_target(&self) -> bool {
        self.rows.iter().any(|r| r.target != Target::None)
    }

    /// Column headings; on the terminal the unit goes on a second line and the test is named
    /// short.
    pub fn headings(&self, medium: Medium) -> Vec<String> {
        let mut h = vec!["stack".to_string()];
        if self.has_repeats() {
            h.push("repeats".into());
        }
        for c in &self.columns {
            h.push(match medium {
                Medium::Terminal if !c.unit.is_empty() => format!("{}\n{}", c.label, c.unit),
                _ => c.heading(),
            });
        }
        if self.has_target() {
            h.push("target".into());
        }
        if self.has_repeats() {
            h.push(match medium {
                // The method note names the test in full.
                Medium::Terminal => "vs best\n(Welch)".to_string(),
                _ => format!("vs best ({})", compare::TEST_NAME),
            });
        }
        h
    }

    /// The plain text of row `i`'s cells, in heading order: a baseline's name followed by
    /// ` (baseline)`, no marks.
    pub fn cells(&self, i: usize) -> Vec<String> {
        let r = &self.rows[i];
        let mut v = vec![if r.baseline {
            format!("{} (baseline)", r.stack)
        } else if !r.impossible.is_empty() || !r.marked.is_empty() {
            format!("{} (above raw ⚠)", r.stack)
        } else if r.hardware.is_some() {
            format!("{} (other hardware ⚠)", r.stack)
        } else {
            r.stack.clone()
        }];
        if self.has_repeats() {
            v.push(r.repeats.to_string());
        }
        v.extend(r.estimates.iter().map(|e| estimate_text(e.as_ref())));
        if self.has_target() {
            v.push(r.target.text());
        }
        if self.has_repeats() {
            v.push(if self.is_best_stack(i) {
                "best".into()
            } else {
                welch_text(r.vs_best.as_ref())
            });
        }
        v
    }

    /// Index of the first figure cell in [`VerdictTable::cells`].
    pub fn first_figure_cell(&self) -> usize {
        if self.has_repeats() {
            2
        } else {
            1
        }
    }

    /// The table as text: the best stack starred (★), the best value of each column marked `*`.
    pub fn rows_text(&self, medium: Medium) -> Rows {
        let lead = self.first_figure_cell();
        let rows = (0..self.rows.len())
            .map(|i| {
                let mut c = self.cells(i);
                if self.is_best_stack(i) {
                    c[0] = format!("★ {}", c[0]);
                }
                for col in 0..self.columns.len() {
                    if self.is_best(i, col) {
                        c[lead + col].push_str(" *");
                    }
                }
                c
            })
            .collect();
        Rows {
            headings: self.headings(medium),
            rows,
        }
    }

    /// How the table was made: what ranks the stacks, what the figures are, which test is used.
    pub fn method_note(&self, medium: Medium) -> String {
        let mark = match medium {
            Medium::Html => "the best value of each column is in bold",
            _ => "* marks the best value of each column",
        };
        let head = match self.columns.first() {
            Some(c) if !self.best[0].is_empty() => format!(
                "★ marks the stack with the {} mean {}; {mark}. ",
                c.better.superlative(),
                c.label
            ),
            Some(c) => format!(
                "No stack is ranked: fewer than two ranked stacks have a {}, or they all have the same. ",
                c.label
            ),
            None => String::new(),
        };
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
        let mut impossible = String::new();
        for r in self.rows.iter().filter(|r| !r.impossible.is_empty()) {
            impossible.push_str(&format!(
                " ⚠ {} is not ranked, its figures are above what its drives took raw: {}.",
                r.stack,
                r.impossible.join("; ")
            ));
        }
        for r in self
            .rows
            .iter()
            .filter(|r| r.impossible.is_empty() && !r.marked.is_empty())
        {
            impossible.push_str(&format!(
                " ⚠ {} is ranked, its figures above what its drives took raw but within what they can do: {}.",
                r.stack,
                r.marked.join("; ")
            ));
        }
        let mut hardware = String::new();
        for r in self.rows.iter() {
            if let Some(h) = &r.hardware {
                hardware.push_str(&format!(
                    " ⚠ {} ran on other hardware than the stacks it is ranked against, so the comparison may measure the machines, not the stacks: {h}.",
                    r.stack
                ));
            }
        }
        head + &stats + baseline + &impossible + &hardware
    }
}

/// Each cause once, in the order first given.
fn distinct<'a>(causes: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for why in causes {
        if !v.contains(why) {
            v.push(why.clone());
        }
    }
    v
}

fn row(columns: &[FigureSpec], s: StackFigures) -> StackRow {
    let values: Vec<Vec<f64>> = (0..columns.len())
        .map(|c| {
            s.repeats
                .iter()
                .filter_map(|r| r.values.get(c).copied().flatten())
                .collect()
        })
        .collect();
    let impossible = distinct(s.repeats.iter().filter_map(|r| r.impossible.as_ref()));
    let marked = distinct(s.repeats.iter().filter_map(|r| r.marked.as_ref()));
    StackRow {
        impossible,
        marked,
        repeats: s.repeats.len(),
        estimates: values.iter().map(|v| Estimate::of(v)).collect(),
        values,
        target: Target::of(&s.repeats),
        baseline: s.baseline,
        stack: s.stack,
        vs_best: None,
        hardware: None,
    }
}

/// The ranked rows holding the best mean of column `col`; none when fewer than two ranked
/// rows have a value or all have the same.
fn best_rows(rows: &[StackRow], col: usize, better: Better) -> Vec<usize> {
    let means: Vec<(usize, f64)> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.unranked())
        .filter_map(|(i, r)| r.estimates[col].map(|e| (i, e.mean)))
        .collect();
    if means.len() < 2 || means.iter().all(|(_, m)| *m == means[0].1) {
        return Vec::new();
    }
    let pick = match better {
        Better::Higher => f64::max,
        Better::Lower => f64::min,
    };
    let top = means
        .iter()
        .map(|(_, m)| *m)
        .reduce(pick)
        .unwrap_or(f64::NAN);
    means
        .into_iter()
        .filter(|(_, m)| *m == top)
        .map(|(i, _)| i)
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::present::kind::example::COLUMNS;

    fn stack(name: &str, baseline: bool, runs: &[(f64, f64, bool)]) -> StackFigures {
        StackFigures {
            stack: name.into(),
            baseline,
            repeats: runs
                .iter()
                .map(|&(m, p, met)| VerdictFigures {
                    values: vec![Some(m), Some(p)],
                    meets_target: Some(met),
                    impossible: None,
                    marked: None,
                })
                .collect(),
        }
    }

    #[test]
    fn best_stack_ci_and_test() {
        let t = VerdictTable::build(
            COLUMNS,
            vec![
                stack(
                    "b",
                    false,
                    &[(18.2, 1.0, false), (19.0, 1.1, false), (18.7, 1.0, true)],
                ),
                stack(
                    "a",
                    false,
                    &[(20.1, 1.5, true), (19.8, 1.4, true), (20.5, 1.6, true)],
                ),
            ],
        );
        assert!(t.is_best_stack(1) && !t.is_best_stack(0));
        assert!(t.is_best(0, 1), "lower pre-roll is better");
        assert_eq!(t.rows[0].target, Target::Mixed { met: 1, of: 3 });
        assert_eq!(t.rows[1].target, Target::Pass);
        assert!(t.rows[0].vs_best.unwrap().significant());
        let rows = t.rows_text(Medium::Markdown);
        assert_eq!(rows.rows[1][0], "★ a");
        // mean 20.133.., sd 0.351, t(0.975, 2) = 4.3027: half-width 0.872
        assert_eq!(rows.rows[1][2], "20.1 ± 0.872 *");
        assert_eq!(rows.rows[0][4], "met 1/3");
        assert!(rows.headings.last().unwrap().contains("Welch"));
        assert!(t.method_note(Medium::Markdown).contains("Welch"));
        assert_eq!(
            t.headings(Medium::Terminal)[2],
            "guaranteed\nMbit/s",
            "the unit on its own line on a terminal"
        );
    }

    #[test]
    fn one_stack_is_not_ranked() {
        let t = VerdictTable::build(COLUMNS, vec![stack("a", false, &[(20.0, 1.0, true)])]);
        assert_eq!(
            t.rows_text(Medium::Markdown).rows[0],
            vec!["a", "20.0", "1.00", "pass"]
        );
        let note = t.method_note(Medium::Markdown);
        assert!(note.contains("No stack is ranked"), "{note}");
        assert!(note.contains("no confidence interval"), "{note}");
    }

    #[test]
    fn equal_values_are_not_marked_and_ties_are_both_marked() {
        let t = VerdictTable::build(
            COLUMNS,
            vec![
                stack("a", false, &[(20.0, 1.0, true)]),
                stack("b", false, &[(20.0, 1.0, true)]),
            ],
        );
        assert!(!t.is_best_stack(0) && !t.is_best_stack(1));
        let t = VerdictTable::build(
            COLUMNS,
            vec![
                stack("a", false, &[(20.0, 1.0, true)]),
                stack("b", false, &[(20.0, 2.0, true)]),
                stack("c", false, &[(10.0, 1.0, true)]),
            ],
        );
        assert!(t.is_best_stack(0) && t.is_best_stack(1) && !t.is_best_stack(2));
        assert!(t.is_best(0, 1) && t.is_best(2, 1) && !t.is_best(1, 1));
    }

    #[test]
    fn an_impossible_figure_is_marked_with_its_cause_and_never_best() {
        let mut guest = stack("md-guest", false, &[(455.0, 0.1, true)]);
        guest.repeats[0].impossible = Some("settled 455 MB/s is 1.55 of raw".into());
        let t = VerdictTable::build(
            COLUMNS,
            vec![
                stack("btrfs", false, &[(285.0, 1.0, true)]),
                guest,
                stack("xfs", false, &[(250.0, 1.2, true)]),
            ],
        );
        assert!(t.is_best_stack(0), "the highest possible figure is best");
        assert!(!t.is_best_stack(1) && !t.is_best(1, 1));
        let rows = t.rows_text(Medium::Terminal);
        assert_eq!(rows.rows[0][0], "★ btrfs");
        assert_eq!(rows.rows[1][0], "md-guest (above raw ⚠)");
        let note = t.method_note(Medium::Terminal);
        assert!(
            note.contains("md-guest is not ranked") && note.contains("1.55 of raw"),
            "{note}"
        );
    }

    #[test]
    fn a_figure_the_drives_can_do_is_marked_and_still_ranked() {
        let mut at_raw = stack("btrfs", false, &[(326.0, 1.0, true)]);
        at_raw.repeats[0].marked = Some("at the drives' raw rate: 1.003 of raw".into());
        let t = VerdictTable::build(
            COLUMNS,
            vec![at_raw, stack("xfs-guest", false, &[(93.8, 1.2, true)])],
        );
        assert!(t.is_best_stack(0) && !t.is_best_stack(1));
        let rows = t.rows_text(Medium::Terminal);
        assert_eq!(rows.rows[0][0], "★ btrfs (above raw ⚠)");
        let note = t.method_note(Medium::Terminal);
        assert!(
            note.contains("btrfs is ranked") && note.contains("1.003 of raw"),
            "{note}"
        );
        assert!(!note.contains("not ranked"), "{note}");
    }

    #[test]
    fn baseline_is_never_best() {
        let t = VerdictTable::build(
            COLUMNS,
            vec![
                stack("a", false, &[(20.0, 1.0, true), (20.4, 1.1, true)]),
                stack("b", false, &[(18.0, 1.2, false), (18.6, 1.3, false)]),
                stack("host", true, &[(90.0, 0.1, true), (91.0, 0.1, true)]),
            ],
        );
        assert!(t.is_best_stack(0));
        assert!(
            t.is_best(0, 1),
            "the baseline's lower pre-roll does not count"
        );
        assert!(t.rows[1].vs_best.is_some());
        assert!(t.rows[2].vs_best.is_none(), "a baseline is not tested");
        let rows = t.rows_text(Medium::Terminal);
        assert_eq!(rows.rows[0][0], "★ a");
        assert_eq!(rows.rows[1][4], "FAIL");
        assert_eq!(rows.rows[2][0], "host (baseline)");
        assert_eq!(rows.rows[2][2], "90.5 ± 6.35");
        assert_eq!(rows.rows[2].last().unwrap(), "-");
        assert!(t.method_note(Medium::Terminal).contains("never ranked"));
    }
}
