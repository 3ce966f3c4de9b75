//! The one comparison of stacks on one workload, computed once as data: per stack and verdict
//! figure, the mean over repeats with its 95% confidence interval; pass/fail against the
//! target; and per column the rank groups the repeats make ([`crate::analysis::groups`]:
//! Welch's test of every pair, Holm's correction, a noise threshold). ★ goes to a stack only
//! when the data separate its headline (first) figure from every other stack's; stacks the
//! data cannot separate at the top share it (☆), and a study of single runs crowns nobody.
//! Baseline stacks are shown and labelled but never ranked or tested; so are stacks whose
//! figures are impossible (above what their drives can physically do), marked with the cause.
//! The terminal table, report.md and report.html all render this one table.

use super::Better;
use super::{num, FigureSpec, Rows, VerdictFigures};
use crate::analysis::compare::Estimate;
use crate::analysis::groups::{self, Groups, Pair, Rule};

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
    /// Why its figures are impossible, one per distinct cause over its repeats; such a row is
    /// marked and never ranked.
    pub impossible: Vec<String>,
    /// Why its figures stand above the study's reference though the stack can do them, one
    /// per distinct cause; such a row is marked and ranked.
    pub marked: Vec<String>,
    /// What to read its headline figure with (label, cause), each once over its repeats;
    /// such a row is marked and ranked.
    pub cautions: Vec<(&'static str, String)>,
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

/// How a row stands on one column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// The one best value, separated from every other.
    Best,
    /// One of the values the data cannot separate at the top.
    SharesBest,
    /// Neither.
    Other,
}

/// The comparison of one workload's stacks.
#[derive(Debug, Clone)]
pub struct VerdictTable {
    pub columns: Vec<FigureSpec>,
    pub rows: Vec<StackRow>,
    /// What separates two stacks.
    pub rule: Rule,
    /// Per column, the rank groups of the ranked rows (unranked rows have no values there).
    groups: Vec<Groups>,
}

impl VerdictTable {
    /// Compares `stacks` on `columns` (their order: the headline first) by the default
    /// [`Rule`].
    pub fn build(columns: &[FigureSpec], stacks: Vec<StackFigures>) -> VerdictTable {
        VerdictTable::build_with(columns, stacks, Rule::default())
    }

    /// Compares `stacks` on `columns` by `rule`.
    pub fn build_with(
        columns: &[FigureSpec],
        stacks: Vec<StackFigures>,
        rule: Rule,
    ) -> VerdictTable {
        let rows: Vec<StackRow> = stacks.into_iter().map(|s| row(columns, s)).collect();
        let groups = columns
            .iter()
            .enumerate()
            .map(|(c, spec)| {
                let values: Vec<Vec<f64>> = rows
                    .iter()
                    .map(|r| {
                        if r.unranked() {
                            Vec::new()
                        } else {
                            r.values[c].clone()
                        }
                    })
                    .collect();
                groups::rank(&values, spec.better == Better::Higher, &rule)
            })
            .collect();
        VerdictTable {
            columns: columns.to_vec(),
            rows,
            rule,
            groups,
        }
    }

    /// The rank groups of column `col`.
    pub fn groups(&self, col: usize) -> Option<&Groups> {
        self.groups.get(col)
    }

    /// How row `row` stands on column `col`.
    pub fn standing(&self, row: usize, col: usize) -> Standing {
        match self.groups.get(col) {
            Some(g) if g.sole == Some(row) => Standing::Best,
            Some(g) if g.shares_top(row) => Standing::SharesBest,
            _ => Standing::Other,
        }
    }

    /// Whether row `row` holds the one best value of column `col`, separated from every other.
    pub fn is_best(&self, row: usize, col: usize) -> bool {
        self.standing(row, col) == Standing::Best
    }

    /// Whether row `row` is the best stack: its headline figure separated from every other
    /// stack's (★).
    pub fn is_best_stack(&self, row: usize) -> bool {
        self.is_best(row, 0)
    }

    /// Whether row `row` is one of the stacks the data cannot separate at the top (☆).
    pub fn shares_top(&self, row: usize) -> bool {
        self.standing(row, 0) == Standing::SharesBest
    }

    /// Whether any stack has more than one repeat.
    pub fn has_repeats(&self) -> bool {
        self.rows.iter().any(|r| r.repeats > 1)
    }

    /// Whether the headline figure could be tested (some two ranked stacks have two repeats
    /// or more): the table then shows each stack's rank range and its test against the top.
    pub fn tested(&self) -> bool {
        self.groups.first().is_some_and(|g| g.tested)
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
        if self.tested() {
            h.push("rank".into());
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
        if self.tested() {
            h.push(match medium {
                // The method note names the test in full.
                Medium::Terminal => "vs top\n(Welch, Holm)".to_string(),
                _ => "vs top (Welch, Holm)".to_string(),
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
        } else if !r.cautions.is_empty() {
            let mut labels: Vec<&str> = r.cautions.iter().map(|c| c.0).collect();
            labels.dedup();
            format!("{} ({} ⚠)", r.stack, labels.join(", "))
        } else if r.hardware.is_some() {
            format!("{} (other hardware ⚠)", r.stack)
        } else {
            r.stack.clone()
        }];
        if self.has_repeats() {
            v.push(r.repeats.to_string());
        }
        let head = self.groups.first();
        if self.tested() {
            v.push(head.map_or("-".into(), |g| g.rank_text(i)));
        }
        v.extend(r.estimates.iter().zip(&self.columns).map(|(e, c)| match e {
            // A count without a unit (capacities, runs, files lost) that is whole: as
            // a whole number.
            Some(e) if c.unit.is_empty() && e.ci95.is_none() && e.mean.fract() == 0.0 => {
                format!("{:.0}", e.mean)
            }
            _ => estimate_text(e.as_ref()),
        }));
        if self.has_target() {
            v.push(r.target.text());
        }
        if let Some(g) = head.filter(|g| g.tested) {
            v.push(match g.best_mean {
                Some(top) if top == i => "top mean".into(),
                Some(top) if !r.unranked() => pair_text(g.pair(i, top), self.rule.noise),
                _ => "-".into(),
            });
        }
        v
    }

    /// Index of the first figure cell in [`VerdictTable::cells`].
    pub fn first_figure_cell(&self) -> usize {
        1 + usize::from(self.has_repeats()) + usize::from(self.tested())
    }

    /// The table as text: the best stack starred (★) or the stacks sharing the top marked
    /// (☆); a column's one best value marked `*`, values sharing its best `(*)`.
    pub fn rows_text(&self, medium: Medium) -> Rows {
        let lead = self.first_figure_cell();
        let rows = (0..self.rows.len())
            .map(|i| {
                let mut c = self.cells(i);
                if self.is_best_stack(i) {
                    c[0] = format!("★ {}", c[0]);
                } else if self.shares_top(i) {
                    c[0] = format!("☆ {}", c[0]);
                }
                for col in 0..self.columns.len() {
                    match self.standing(i, col) {
                        Standing::Best => c[lead + col].push_str(" *"),
                        Standing::SharesBest => c[lead + col].push_str(" (*)"),
                        Standing::Other => {}
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

    /// The names of rows `rows`, joined.
    fn names(&self, rows: &[usize]) -> String {
        rows.iter()
            .map(|&i| self.rows[i].stack.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// What the table says of the top: the one best stack, the stacks sharing the top, or why
    /// nobody is best.
    pub fn verdict_sentence(&self) -> String {
        let (Some(c), Some(g)) = (self.columns.first(), self.groups.first()) else {
            return String::new();
        };
        let ranked = g.ranked();
        let best = c.better.superlative();
        if ranked < 2 {
            return format!(
                "No stack is ranked: fewer than two ranked stacks have a {}.",
                c.label
            );
        }
        if !g.tested {
            let who = g
                .best_mean
                .map(|i| self.rows[i].stack.as_str())
                .unwrap_or("-");
            return format!(
                "No ★: every stack ran once, so no difference can be tested; {who} has the {best} mean {}, untested.",
                c.label
            );
        }
        match g.sole {
            Some(i) => format!(
                "★ {}: its {} is the {best}, and the data separate it from every other stack's.",
                self.rows[i].stack, c.label
            ),
            None if g.top.len() == ranked => format!(
                "No ★: the data cannot separate any of the stacks on {}; they tie.",
                c.label
            ),
            None if g.top.len() > 1 => format!(
                "No ★: ☆ {} share the top on {}; the data cannot separate them.",
                self.names(&g.top),
                c.label
            ),
            None => {
                let i = g.top[0];
                let near: Vec<usize> = g
                    .ranks
                    .iter()
                    .enumerate()
                    .filter(|&(j, r)| {
                        j != i && r.is_some() && !g.pair(i, j).is_some_and(|p| p.separated)
                    })
                    .map(|(j, _)| j)
                    .collect();
                format!(
                    "No ★: {} has the {best} {}, but the data cannot separate it from {}.",
                    self.rows[i].stack,
                    c.label,
                    self.names(&near)
                )
            }
        }
    }

    /// How the table was made: what ranks the stacks, what the figures are, which test is used.
    pub fn method_note(&self, medium: Medium) -> String {
        let mut note = self.verdict_sentence();
        if !note.is_empty() {
            note.push(' ');
        }
        let tested = self.groups.iter().any(|g| g.tested);
        if tested {
            let mark = match medium {
                Medium::Html => {
                    "a column's one best value is in bold, values sharing its best in bold italics"
                }
                _ => "* marks a column's one best value, (*) the values sharing its best",
            };
            let pairs = self
                .groups
                .first()
                .map_or(0, |g| g.pairs.iter().filter(|p| p.p.is_some()).count());
            note.push_str(&format!(
                "Figures are the mean over repeats ± the half-width of its 95% confidence interval (Student's t). Two stacks are told apart only when Welch's two-sided t-test, corrected by Holm's method over the pairs tested ({pairs} on the first column), gives p < {} and their means differ by more than {}% (the noise threshold); otherwise they tie. Rank: the places a stack can take (1-2: first or second); {mark}.",
                self.rule.alpha,
                num(self.rule.noise * 100.0),
            ));
        } else if self.has_repeats() {
            note.push_str("Figures are the mean over repeats ± the half-width of its 95% confidence interval (Student's t); no two ranked stacks have two repeats each, so nothing is tested and no value is marked best.");
        } else {
            note.push_str("With one run per stack no confidence interval can be computed and no value is marked best: differences may be noise.");
        }
        if self.rows.iter().any(|r| r.baseline) {
            note.push_str(
                " Stacks marked (baseline) are shown for reference and never ranked or tested.",
            );
        }
        for r in self.rows.iter().filter(|r| !r.impossible.is_empty()) {
            note.push_str(&format!(
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
            note.push_str(&format!(
                " ⚠ {} is ranked, its figures above what its drives took raw but within what they can do: {}.",
                r.stack,
                r.marked.join("; ")
            ));
        }
        for r in self.rows.iter().filter(|r| !r.cautions.is_empty()) {
            let causes: Vec<&str> = r.cautions.iter().map(|c| c.1.as_str()).collect();
            note.push_str(&format!(" ⚠ {}: {}.", r.stack, causes.join("; ")));
        }
        for r in self.rows.iter() {
            if let Some(h) = &r.hardware {
                note.push_str(&format!(
                    " ⚠ {} ran on other hardware than the stacks it is ranked against, so the comparison may measure the machines, not the stacks: {h}.",
                    r.stack
                ));
            }
        }
        note
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
    let mut cautions: Vec<(&'static str, String)> = Vec::new();
    for c in s.repeats.iter().filter_map(|r| r.caution.as_ref()) {
        if !cautions.contains(c) {
            cautions.push(c.clone());
        }
    }
    StackRow {
        impossible,
        marked,
        cautions,
        repeats: s.repeats.len(),
        estimates: values.iter().map(|v| Estimate::of(v)).collect(),
        values,
        target: Target::of(&s.repeats),
        baseline: s.baseline,
        stack: s.stack,
        hardware: None,
    }
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

/// A p-value as text: `p < 0.001`, `p = 0.041`.
pub fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".into()
    } else {
        format!("p = {p:.3}")
    }
}

/// A stack's test against the top mean: `p = 0.003, apart` / `p = 0.41, tied` / `within 2%,
/// tied` / `-` (no test possible).
pub fn pair_text(p: Option<&Pair>, noise: f64) -> String {
    let Some(p) = p else { return "-".into() };
    match p.p_holm {
        None => "-".into(),
        Some(_) if p.relative <= noise => format!("within {}%, tied", num(noise * 100.0)),
        Some(q) if p.separated => format!("{}, apart", p_text(q)),
        Some(q) => format!("{}, tied", p_text(q)),
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
                    caution: None,
                })
                .collect(),
        }
    }

    #[test]
    fn a_whole_count_of_one_run_prints_as_a_whole_number() {
        let row = |name: &str, cap: f64, est: f64| StackFigures {
            stack: name.into(),
            baseline: false,
            repeats: vec![VerdictFigures {
                values: vec![
                    Some(cap),
                    Some(cap),
                    Some(13.0),
                    Some(1.0),
                    Some(95.0),
                    Some(102.0),
                    Some(est),
                ],
                meets_target: None,
                impossible: None,
                marked: None,
                caution: None,
            }],
        };
        let t = VerdictTable::build(
            crate::capacity::figures::COLUMNS,
            vec![row("xfs", 8.0, 8.16), row("btrfs", 24.0, 24.7)],
        );
        let rows = t.rows_text(Medium::Markdown);
        let xfs = &rows.rows[0];
        // One run each: no repeats or rank column.
        assert_eq!(xfs[1..4], ["8", "8", "13"], "{xfs:?}");
        assert_eq!(xfs[4], "1", "{xfs:?}");
        assert_eq!(xfs[5], "95.0", "a rate keeps its precision: {xfs:?}");
        assert_eq!(xfs[7], "8.16", "an estimate is not a count: {xfs:?}");
    }

    #[test]
    fn separated_stacks_get_one_star_with_intervals_ranks_and_tests() {
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
        let rows = t.rows_text(Medium::Markdown);
        assert_eq!(
            rows.headings[..3],
            ["stack", "repeats", "rank"],
            "{:?}",
            rows.headings
        );
        assert_eq!(rows.rows[1][0], "★ a");
        assert_eq!(rows.rows[1][2], "1");
        assert_eq!(rows.rows[0][2], "2");
        // mean 20.133.., sd 0.351, t(0.975, 2) = 4.3027: half-width 0.872
        assert_eq!(rows.rows[1][3], "20.1 ± 0.872 *");
        assert_eq!(rows.rows[0][5], "met 1/3");
        assert_eq!(rows.rows[1][6], "top mean");
        assert!(rows.rows[0][6].ends_with(", apart"), "{:?}", rows.rows[0]);
        let note = t.method_note(Medium::Markdown);
        assert!(note.starts_with("★ a:"), "{note}");
        assert!(note.contains("Welch") && note.contains("Holm"), "{note}");
        assert_eq!(
            t.headings(Medium::Terminal)[3],
            "guaranteed\nMbit/s",
            "the unit on its own line on a terminal"
        );
    }

    #[test]
    fn stacks_the_data_cannot_separate_share_the_top() {
        let t = VerdictTable::build(
            COLUMNS,
            vec![
                stack(
                    "a",
                    false,
                    &[(20.0, 1.0, true), (22.0, 1.0, true), (19.0, 1.0, true)],
                ),
                stack(
                    "b",
                    false,
                    &[(21.0, 1.0, true), (19.5, 1.0, true), (20.8, 1.0, true)],
                ),
                stack(
                    "c",
                    false,
                    &[(10.0, 2.0, true), (10.2, 2.1, true), (9.9, 2.05, true)],
                ),
            ],
        );
        assert!(!t.is_best_stack(0) && !t.is_best_stack(1));
        assert!(t.shares_top(0) && t.shares_top(1) && !t.shares_top(2));
        let rows = t.rows_text(Medium::Terminal);
        assert_eq!(rows.rows[0][0], "☆ a");
        assert_eq!(rows.rows[1][0], "☆ b");
        assert_eq!(rows.rows[2][0], "c");
        assert_eq!(
            (rows.rows[0][2].as_str(), rows.rows[2][2].as_str()),
            ("1-2", "3")
        );
        assert!(rows.rows[0][3].ends_with(" (*)"), "{:?}", rows.rows[0]);
        assert!(rows.rows[0][4].ends_with(" (*)") && rows.rows[1][4].ends_with(" (*)"));
        let note = t.method_note(Medium::Terminal);
        assert!(
            note.contains("☆ a, b share the top") || note.contains("☆ b, a share the top"),
            "{note}"
        );
    }

    #[test]
    fn one_repeat_crowns_nobody() {
        let t = VerdictTable::build(
            COLUMNS,
            vec![
                stack("a", false, &[(20.0, 1.0, true)]),
                stack("b", false, &[(30.0, 2.0, true)]),
            ],
        );
        assert!(!t.is_best_stack(0) && !t.is_best_stack(1));
        assert!(!t.shares_top(0) && !t.shares_top(1));
        let rows = t.rows_text(Medium::Markdown);
        assert_eq!(rows.rows[1], vec!["b", "30.0", "2.00", "pass"]);
        let note = t.method_note(Medium::Markdown);
        assert!(
            note.contains("b has the highest mean guaranteed, untested"),
            "{note}"
        );
        assert!(
            note.contains("ran once") && note.contains("may be noise"),
            "{note}"
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
        assert!(note.contains("fewer than two ranked stacks"), "{note}");
    }

    #[test]
    fn equal_repeats_tie_and_a_near_difference_is_noise() {
        let t = VerdictTable::build(
            COLUMNS,
            vec![
                stack("a", false, &[(20.0, 1.0, true), (20.0, 1.0, true)]),
                stack("b", false, &[(20.0, 1.0, true), (20.0, 1.0, true)]),
            ],
        );
        assert!(!t.is_best_stack(0) && !t.is_best_stack(1));
        assert!(t.method_note(Medium::Terminal).contains("they tie"));
        // 1% apart with no spread: apart by the test, within the 2% noise threshold.
        let t = VerdictTable::build(
            COLUMNS,
            vec![
                stack("a", false, &[(20.2, 1.0, true), (20.2, 1.0, true)]),
                stack("b", false, &[(20.0, 1.0, true), (20.0, 1.0, true)]),
            ],
        );
        assert!(!t.is_best_stack(0));
        assert_eq!(t.cells(1).last().unwrap(), "within 2.00%, tied");
    }

    #[test]
    fn an_impossible_figure_is_marked_with_its_cause_and_never_best() {
        let mut guest = stack("md-guest", false, &[(455.0, 0.1, true), (456.0, 0.1, true)]);
        guest.repeats[0].impossible = Some("settled 455 MB/s is 1.55 of raw".into());
        let t = VerdictTable::build(
            COLUMNS,
            vec![
                stack("btrfs", false, &[(285.0, 1.0, true), (286.0, 1.01, true)]),
                guest,
                stack("xfs", false, &[(250.0, 1.2, true), (251.0, 1.21, true)]),
            ],
        );
        assert!(t.is_best_stack(0), "the highest possible figure is best");
        assert!(!t.is_best_stack(1) && !t.is_best(1, 1));
        let rows = t.rows_text(Medium::Terminal);
        assert_eq!(rows.rows[0][0], "★ btrfs");
        assert_eq!(rows.rows[1][0], "md-guest (above raw ⚠)");
        assert_eq!(rows.rows[1][2], "-", "no rank");
        let note = t.method_note(Medium::Terminal);
        assert!(
            note.contains("md-guest is not ranked") && note.contains("1.55 of raw"),
            "{note}"
        );
    }

    #[test]
    fn a_figure_the_drives_can_do_is_marked_and_still_ranked() {
        let mut at_raw = stack("btrfs", false, &[(326.0, 1.0, true), (327.0, 1.0, true)]);
        at_raw.repeats[0].marked = Some("at the drives' raw rate: 1.003 of raw".into());
        let t = VerdictTable::build(
            COLUMNS,
            vec![
                at_raw,
                stack("xfs-guest", false, &[(93.8, 1.2, true), (94.0, 1.2, true)]),
            ],
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
        let rows = t.rows_text(Medium::Terminal);
        assert_eq!(rows.rows[1][5], "FAIL");
        assert_eq!(rows.rows[2][0], "host (baseline)");
        assert_eq!(rows.rows[2][3], "90.5 ± 6.35");
        assert_eq!(rows.rows[2][2], "-", "a baseline has no rank");
        assert_eq!(
            rows.rows[2].last().unwrap(),
            "-",
            "a baseline is not tested"
        );
        assert_eq!(t.groups(0).unwrap().best_mean, Some(0));
        assert!(!t.is_best(2, 0) && !t.is_best(2, 1) && !t.shares_top(2));
        assert!(t.method_note(Medium::Terminal).contains("never ranked"));
    }
}
