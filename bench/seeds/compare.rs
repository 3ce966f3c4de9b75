//! One comparison table of a seed: per stack, the figure the seed publishes (with the words it
//! is read from, or "no figure" and its words where it gives none), iotrial's mean ± 95%
//! interval over the repeats, its rank range and top group on that figure (iotrial's own
//! groups: Welch, Holm, a noise threshold), and their ratio in one unit; then the rank
//! agreement over the rows where both sides have a number, with its bootstrap interval, and
//! the pairs of those rows the seed and iotrial order alike, reverse or tie.

use super::bootstrap;
use super::context::Context;
use iotrial::present::num;
use iotrial::present::verdict::{estimate_text, Standing};
use iotrial::present::Better;

/// A figure as the seed gives it, in the seed's own unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Figure {
    /// The seed gives words only.
    None,
    /// A number ("about 200 ms" included).
    Is(f64),
    /// Just above the number ("peaks above 400 ms").
    Above(f64),
    /// Just below it ("just under 400 ms").
    Below(f64),
    /// A range of runs ("74-78s").
    Range(f64, f64),
}

/// How the seed's unit becomes the unit compared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Convert {
    Same,
    /// Multiplied by this (minutes to seconds: 60).
    Times(f64),
    /// This over the figure (8 Mbit over a window in seconds: Mbit/s).
    Over(f64),
    /// One less the figure, a percentage (10% overhead: 0.90 of the rate).
    Complement,
}

impl Convert {
    pub fn apply(self, f: Figure) -> Figure {
        let c = |x: f64| match self {
            Convert::Same => x,
            Convert::Times(k) => k * x,
            Convert::Over(k) => k / x,
            Convert::Complement => 1.0 - x / 100.0,
        };
        let flips = matches!(self, Convert::Over(_) | Convert::Complement);
        match f {
            Figure::None => Figure::None,
            Figure::Is(x) => Figure::Is(c(x)),
            Figure::Above(x) if flips => Figure::Below(c(x)),
            Figure::Below(x) if flips => Figure::Above(c(x)),
            Figure::Above(x) => Figure::Above(c(x)),
            Figure::Below(x) => Figure::Below(c(x)),
            Figure::Range(a, b) => {
                let (x, y) = (c(a), c(b));
                Figure::Range(x.min(y), x.max(y))
            }
        }
    }
}

impl Figure {
    /// The number ranked: the figure, a hair to the side its words put it on, a range's middle.
    pub fn point(self) -> Option<f64> {
        let hair = |x: f64| x.abs() * 1e-9;
        match self {
            Figure::None => None,
            Figure::Is(x) => Some(x),
            Figure::Above(x) => Some(x + hair(x)),
            Figure::Below(x) => Some(x - hair(x)),
            Figure::Range(a, b) => Some((a + b) / 2.0),
        }
    }

    /// `650`, `> 400`, `< 400`, `74-78`, `12.3`, `-`: whole numbers as the seed writes them.
    pub fn text(self) -> String {
        let n = |x: f64| {
            if x.fract() == 0.0 && x.abs() >= 1.0 {
                format!("{x:.0}")
            } else {
                num(x)
            }
        };
        match self {
            Figure::None => "-".into(),
            Figure::Is(x) => n(x),
            Figure::Above(x) => format!("> {}", n(x)),
            Figure::Below(x) => format!("< {}", n(x)),
            Figure::Range(a, b) => format!("{}-{}", n(a), n(b)),
        }
    }

    /// `value` over the figure: `1.05`, `< 1.05`, `0.11-0.12`.
    pub fn ratio_text(self, value: f64) -> String {
        match self {
            Figure::None => "-".into(),
            Figure::Is(x) => format!("{:.2}", value / x),
            Figure::Above(x) => format!("< {:.2}", value / x),
            Figure::Below(x) => format!("> {:.2}", value / x),
            Figure::Range(a, b) => format!("{:.2}-{:.2}", value / b, value / a),
        }
    }

    /// Whether the seed puts `self` above, below or level with `other` (`None`: it cannot tell
    /// them apart): its numbers more than `noise` apart, its ranges apart, or its words on
    /// either side of one number.
    pub fn order(self, other: Figure, noise: f64) -> Option<std::cmp::Ordering> {
        use std::cmp::Ordering;
        let (a, b) = (self.point()?, other.point()?);
        let span = |f: Figure| match f {
            Figure::Range(lo, hi) => Some((lo, hi)),
            _ => None,
        };
        if let (Some((alo, ahi)), Some((blo, bhi))) = (span(self), span(other)) {
            return if ahi < blo {
                Some(Ordering::Less)
            } else if bhi < alo {
                Some(Ordering::Greater)
            } else {
                None
            };
        }
        let (sa, sb) = (span(self), span(other));
        if let Some((lo, hi)) = sa.or(sb) {
            // One range against one number: apart when the number lies outside the range.
            let x = if sa.is_some() { b } else { a };
            let inside = (lo..=hi).contains(&x);
            return (!inside).then(|| a.total_cmp(&b));
        }
        let big = a.abs().max(b.abs());
        if big > 0.0 && (a - b).abs() / big > noise {
            return Some(a.total_cmp(&b));
        }
        let side = |f: Figure| match f {
            Figure::Above(_) => 1,
            Figure::Below(_) => -1,
            _ => 0,
        };
        let same_number = match (self, other) {
            (Figure::Above(x) | Figure::Below(x), Figure::Above(y) | Figure::Below(y)) => x == y,
            _ => false,
        };
        (same_number && side(self) != side(other))
            .then(|| side(self).cmp(&side(other)))
            .filter(|o| *o != Ordering::Equal)
    }
}

/// One row the seed has.
#[derive(Debug, Clone)]
pub struct SeedRow {
    /// The seed's name for it; empty for a stack the seed does not have.
    pub label: String,
    /// iotrial's stack.
    pub stack: String,
    pub figure: Figure,
    /// The seed's words the figure is read from.
    pub words: &'static str,
}

impl SeedRow {
    /// The seed's row `label` for iotrial's stack `stack`.
    pub fn new(label: &str, stack: &str, figure: Figure, words: &'static str) -> SeedRow {
        SeedRow {
            label: label.into(),
            stack: stack.into(),
            figure,
            words,
        }
    }
}

/// One table: a figure of one workload, the seed's rows beside iotrial's stacks.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// What is compared, for the line over the table.
    pub title: String,
    pub workload: String,
    /// The verdict figure's key.
    pub column: &'static str,
    /// The seed's own unit (`ms`), and how it becomes the unit compared.
    pub seed_unit: &'static str,
    pub convert: Convert,
    /// The unit compared (`Mbit/s at 8 Mbit per I/O`).
    pub unit: String,
    /// iotrial's own unit, and the factor that takes it to the unit compared.
    pub iotrial_unit: String,
    pub factor: f64,
    pub rows: Vec<SeedRow>,
    /// Whether to list the study's other stacks (those the seed has no row for).
    pub others: bool,
    /// `Err(why)` when a ratio would set different amounts of work against each other.
    pub ratio: Result<(), String>,
    /// Units and conversions, in words.
    pub note: String,
}

/// One row of the table as shown, with what the agreement needs.
struct Shown {
    cells: Vec<String>,
    /// (seed's figure in the unit compared, iotrial's repeats in it, ranked row index)
    both: Option<(Figure, Vec<f64>, Option<usize>)>,
    label: String,
}

impl Comparison {
    /// The table and the lines under it, in Markdown.
    pub fn render(&self, ctx: &Context) -> String {
        let Some((table, col)) = ctx.column(&self.workload, self.column) else {
            return format!(
                "**{}**: workload {} has no {} in this run.\n",
                self.title, self.workload, self.column
            );
        };
        let spec = table.columns[col];
        let groups = table.groups(col);
        let ranked = groups.map_or(0, |g| g.ranked());
        let converted = self.factor != 1.0;
        let mut head = vec![
            "seed's row (iotrial's stack)".to_string(),
            format!("{}'s words", ctx.seed_name()),
            format!("{}, {}", ctx.seed_name(), self.unit),
            "repeats".into(),
            format!("iotrial, {} (mean ± 95% CI)", self.iotrial_unit),
        ];
        if converted {
            head.push(format!("iotrial, {}", self.unit));
        }
        head.extend([
            format!("rank of {ranked}"),
            "top group".into(),
            "iotrial / seed".into(),
        ]);
        let mut shown: Vec<Shown> = self
            .rows
            .iter()
            .map(|r| self.row(ctx, r, converted))
            .collect();
        if self.others {
            if let Some(w) = ctx.summary.workload(&self.workload) {
                for s in &w.stacks {
                    if !self.rows.iter().any(|r| r.stack == s.stack) {
                        let other = SeedRow {
                            label: String::new(),
                            stack: s.stack.clone(),
                            figure: Figure::None,
                            words: "",
                        };
                        shown.push(self.row(ctx, &other, converted));
                    }
                }
            }
        }
        let mut out = format!(
            "**{}** ({}, {}).\n\n",
            self.title,
            spec.label,
            better_text(spec.better)
        );
        out.push_str(&markdown_row(&head));
        out.push_str(&markdown_row(&vec!["---".to_string(); head.len()]));
        for s in &shown {
            out.push_str(&markdown_row(&s.cells));
        }
        out.push('\n');
        out.push_str(&format!(
            "Rank: the places iotrial's repeats allow among the {ranked} stacks of the study ranked on {} (1-3: first to third; the data cannot place it closer); top group: ★ alone at the top, ☆ sharing it.",
            spec.label
        ));
        if let Err(why) = &self.ratio {
            out.push_str(&format!(" No ratio: {why}."));
        }
        out.push(' ');
        out.push_str(&self.note);
        out.push_str("\n\n");
        out.push_str(&self.agreement_text(ctx, &shown, spec.better));
        out
    }

    fn row(&self, ctx: &Context, r: &SeedRow, converted: bool) -> Shown {
        let name = if r.label.is_empty() {
            format!("not in the seed (`{}`)", r.stack)
        } else {
            format!("{} (`{}`)", r.label, r.stack)
        };
        let compared = self.convert.apply(r.figure);
        let words = match (r.figure, r.label.is_empty()) {
            (_, true) => "-".to_string(),
            (Figure::None, false) => format!("no figure: \"{}\"", r.words),
            (f, false) => {
                let gap = if self.seed_unit.starts_with('%') {
                    ""
                } else {
                    " "
                };
                format!("{}{gap}{}: \"{}\"", f.text(), self.seed_unit, r.words)
            }
        };
        let mut cells = vec![name, words, compared.text()];
        let found = ctx.row(&self.workload, &r.stack);
        let Some((table, i, col)) =
            found.and_then(|(t, i)| Some((t, i, ctx.column(&self.workload, self.column)?.1)))
        else {
            let why = ctx.summary.why_not_run(&r.stack, &self.workload);
            cells.push("0".into());
            cells.push(format!("did not run ({why})"));
            let dashes = if converted { 4 } else { 3 };
            cells.extend(std::iter::repeat_n("-".to_string(), dashes));
            return Shown {
                cells,
                both: None,
                label: r.stack.clone(),
            };
        };
        let row = &table.rows[i];
        let values: Vec<f64> = row.values[col].iter().map(|v| v * self.factor).collect();
        let estimate = row.estimates[col];
        let ran = ctx
            .summary
            .workload(&self.workload)
            .and_then(|w| w.stack(&r.stack))
            .map_or(row.repeats, |s| s.repeats.len());
        cells.push(ran.to_string());
        let mut own = estimate_text(estimate.as_ref());
        if row.baseline {
            own.push_str(" (baseline)");
        } else if !row.impossible.is_empty() {
            own.push_str(" (above what its drives take: not ranked)");
        }
        cells.push(own);
        let compared_mean = estimate.map(|e| e.mean * self.factor);
        if converted {
            cells.push(compared_mean.map_or("-".into(), num));
        }
        let g = table.groups(col);
        let unranked = row.unranked();
        cells.push(match g {
            Some(g) if !unranked => g.rank_text(i),
            _ if row.baseline => "baseline".into(),
            _ => "not ranked".into(),
        });
        cells.push(match (g, table.standing(i, col)) {
            _ if unranked => "-".into(),
            (Some(g), _) if !g.tested => "untested".into(),
            (_, Standing::Best) => "★ alone".into(),
            (_, Standing::SharesBest) => "☆ shares it".into(),
            (Some(g), _) if g.top.contains(&i) => "all tie".into(),
            _ => "no".into(),
        });
        cells.push(match (&self.ratio, compared_mean) {
            (Ok(()), Some(m)) => compared.ratio_text(m),
            _ => "-".into(),
        });
        let both = (compared != Figure::None && !values.is_empty() && row.impossible.is_empty())
            .then(|| (compared, values, (!unranked).then_some(i)));
        Shown {
            cells,
            both,
            label: r.stack.clone(),
        }
    }

    fn agreement_text(&self, ctx: &Context, shown: &[Shown], better: Better) -> String {
        let both: Vec<&Shown> = shown.iter().filter(|s| s.both.is_some()).collect();
        let seed: Vec<f64> = both
            .iter()
            .filter_map(|s| s.both.as_ref()?.0.point())
            .collect();
        let reps: Vec<Vec<f64>> = both
            .iter()
            .filter_map(|s| Some(s.both.as_ref()?.1.clone()))
            .collect();
        let mut out = match bootstrap::agreement(&seed, &reps) {
            Some(a) => format!(
                "Rank agreement over the {} rows where both the seed and iotrial have a number: {}. {}",
                both.len(),
                a.text(),
                bootstrap::method()
            ),
            None => format!(
                "Rank agreement: none, {} where both the seed and iotrial have a number (it takes three, with spread).",
                plural(both.len(), "row")
            ),
        };
        out.push_str(&self.pairs_text(ctx, &both, better));
        out.push('\n');
        out
    }

    /// The pairs of rows both rank, as the seed and as iotrial order them.
    fn pairs_text(&self, ctx: &Context, both: &[&Shown], better: Better) -> String {
        let Some((table, col)) = ctx.column(&self.workload, self.column) else {
            return String::new();
        };
        let Some(g) = table.groups(col).filter(|g| g.tested) else {
            return String::new();
        };
        let ranked: Vec<(&Shown, Figure, usize)> = both
            .iter()
            .filter_map(|s| {
                let (f, _, i) = s.both.as_ref()?;
                Some((*s, *f, (*i)?))
            })
            .collect();
        let (mut agree, mut reversed, mut tied, mut seed_ties, mut total) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), 0);
        let noise = ctx.summary.noise;
        for (n, (a, fa, ia)) in ranked.iter().enumerate() {
            for (b, fb, ib) in &ranked[n + 1..] {
                total += 1;
                let seed = fa.order(*fb, noise).map(|o| match better {
                    Better::Higher => o == std::cmp::Ordering::Greater,
                    Better::Lower => o == std::cmp::Ordering::Less,
                });
                let ours = g
                    .pair(*ia, *ib)
                    .filter(|p| p.separated)
                    .map(|p| (p.a == *ia) == p.a_better);
                let (x, y) = (&a.label, &b.label);
                match (seed, ours) {
                    (Some(s), Some(o)) if s == o => agree.push(order_text(x, y, s)),
                    (Some(s), Some(_)) => reversed.push(order_text(x, y, s)),
                    (Some(s), None) => tied.push(order_text(x, y, s)),
                    (None, Some(o)) => seed_ties.push(order_text(x, y, o)),
                    (None, None) => {}
                }
            }
        }
        if total == 0 {
            return String::new();
        }
        let ordered = agree.len() + reversed.len() + tied.len();
        let list = |v: &[String]| {
            if v.is_empty() {
                String::new()
            } else {
                format!(" ({})", v.join("; "))
            }
        };
        let unordered = if total == ordered {
            String::new()
        } else {
            format!(
                " Of the {} the seed cannot order, iotrial orders {}{}.",
                plural(total - ordered, "pair"),
                seed_ties.len(),
                list(&seed_ties)
            )
        };
        format!(
            " Of the {} of ranked rows with both figures, the seed orders {ordered} (figures more than {}% apart, ranges apart, or words on either side of one number); iotrial's groups order {} of them the same way{}, reverse {}{}, and cannot separate {}{}.{unordered}",
            plural(total, "pair"),
            pct(noise),
            agree.len(),
            list(&agree),
            reversed.len(),
            list(&reversed),
            tied.len(),
            list(&tied),
        )
    }
}

/// `a above b` (by the figure's better side) or `b above a`.
fn order_text(a: &str, b: &str, a_better: bool) -> String {
    if a_better {
        format!("{a} before {b}")
    } else {
        format!("{b} before {a}")
    }
}

fn better_text(b: Better) -> &'static str {
    match b {
        Better::Higher => "higher is better",
        Better::Lower => "lower is better",
    }
}

/// `1 pair`, `3 pairs`.
pub fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// A share as a percentage without trailing zeros: 0.02 -> `2`, 0.025 -> `2.5`.
pub fn pct(share: f64) -> String {
    let t = num(share * 100.0);
    if t.contains('.') {
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        t
    }
}

/// One Markdown table row.
pub fn markdown_row(cells: &[String]) -> String {
    let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
    format!("| {} |\n", cells.join(" | "))
}
