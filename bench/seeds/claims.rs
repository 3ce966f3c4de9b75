//! A seed's findings, each checked against iotrial's groups: a finding names pairs of stacks
//! in the order the seed found them ("SMR created faster than CMR"), and holds only where
//! iotrial's repeats separate each pair the same way (Welch, Holm, the noise threshold: the
//! groups of the study's own report). Where they cannot, the finding is not shown; where they
//! separate it the other way, it is reversed. The main conclusion of a seed follows from its
//! findings, so no sentence of order is written where the groups do not carry it.

use super::context::Context;
use iotrial::analysis::groups::{holm, p_value, relative};
use iotrial::analysis::stats::mean;
use iotrial::present::rankings::rankings;
use iotrial::present::verdict::{p_text, pair_text};
use iotrial::present::Better;

/// One thing a finding says, checkable on iotrial's figures.
#[derive(Debug, Clone)]
pub enum Check {
    /// `a` before `b` on figure `column` of `workload` (by the figure's better side).
    Before {
        workload: String,
        column: &'static str,
        a: String,
        b: String,
    },
    /// `a` before `b`, or the two tied ("equivalent to or perhaps slightly better").
    NotAfter {
        workload: String,
        column: &'static str,
        a: String,
        b: String,
    },
    /// `a` and `b` tied ("no performance difference").
    Level {
        workload: String,
        column: &'static str,
        a: String,
        b: String,
    },
    /// `stack` alone at the top.
    Top {
        workload: String,
        column: &'static str,
        stack: String,
    },
    /// `stack`'s 95% interval on `column` lies above 0 (cleaning owed).
    AboveZero {
        workload: String,
        column: &'static str,
        stack: String,
    },
    /// The rankings of two workloads' headline figures disagree (Spearman's rho below 0.7
    /// over the stacks both rank).
    Disagree { a: String, b: String },
    /// `stack`'s figure is better in workload `to` than in workload `from` (Welch, Holm over
    /// the finding's checks of this kind, the noise threshold).
    Better {
        column: &'static str,
        stack: String,
        from: String,
        to: String,
    },
}

/// How a check, or a finding, came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Holds,
    /// Some of it holds, the rest is tied or cannot be measured.
    Partly,
    /// The data cannot separate what the seed separated.
    Tied,
    Reversed,
    /// A stack it needs did not run.
    Missing,
}

impl Outcome {
    fn text(self) -> &'static str {
        match self {
            Outcome::Holds => "holds",
            Outcome::Partly => "holds in part",
            Outcome::Tied => "not shown: the data cannot separate it",
            Outcome::Reversed => "reversed",
            Outcome::Missing => "cannot be measured here",
        }
    }
}

/// A finding of the seed.
#[derive(Debug, Clone)]
pub struct Claim {
    /// The seed's words, in quotation marks (or the table it is read from).
    pub quote: &'static str,
    /// What it says, in iotrial's stacks, short.
    pub what: String,
    pub checks: Vec<Check>,
}

/// A finding as checked.
pub struct Checked {
    pub outcome: Outcome,
    /// One clause per check.
    pub parts: Vec<String>,
}

impl Claim {
    /// Checks every part against `ctx`'s tables.
    pub fn check(&self, ctx: &Context) -> Checked {
        let mut outcomes = Vec::new();
        let mut parts = Vec::new();
        // Holm over this finding's comparisons across workloads.
        let across: Vec<Option<f64>> = self
            .checks
            .iter()
            .map(|c| match c {
                Check::Better {
                    column,
                    stack,
                    from,
                    to,
                } => {
                    let (x, y) = (
                        values(ctx, from, column, stack)?,
                        values(ctx, to, column, stack)?,
                    );
                    p_value(&x, &y)
                }
                _ => None,
            })
            .collect();
        let made: Vec<f64> = across.iter().flatten().copied().collect();
        let mut adjusted = holm(&made).into_iter();
        let across: Vec<Option<f64>> = across
            .iter()
            .map(|p| p.and_then(|_| adjusted.next()))
            .collect();
        // Name the workload of a pair when the finding's pairs span several.
        let mut places: Vec<&str> = Vec::new();
        for c in &self.checks {
            if let Check::Before { workload, .. }
            | Check::NotAfter { workload, .. }
            | Check::Level { workload, .. } = c
            {
                if !places.contains(&workload.as_str()) {
                    places.push(workload);
                }
            }
        }
        for (c, q) in self.checks.iter().zip(across) {
            let (o, text) = check(ctx, c, q, places.len() > 1);
            outcomes.push(o);
            parts.push(format!("{text} ({})", o_short(o)));
        }
        Checked {
            outcome: combine(&outcomes),
            parts,
        }
    }
}

fn o_short(o: Outcome) -> &'static str {
    match o {
        Outcome::Holds => "holds",
        Outcome::Partly => "in part",
        Outcome::Tied => "tied",
        Outcome::Reversed => "reversed",
        Outcome::Missing => "not measured",
    }
}

/// A finding's outcome from its checks'.
pub fn combine(o: &[Outcome]) -> Outcome {
    let count = |x: Outcome| o.iter().filter(|&&y| y == x).count();
    let measured = o.len() - count(Outcome::Missing);
    if measured == 0 {
        Outcome::Missing
    } else if count(Outcome::Reversed) > 0 {
        Outcome::Reversed
    } else if count(Outcome::Holds) == o.len() {
        Outcome::Holds
    } else if count(Outcome::Holds) + count(Outcome::Partly) > 0 {
        Outcome::Partly
    } else {
        Outcome::Tied
    }
}

/// Stack `stack`'s values of `column` in workload `w`.
fn values(ctx: &Context, w: &str, column: &str, stack: &str) -> Option<Vec<f64>> {
    let (t, col) = ctx.column(w, column)?;
    let (_, i) = ctx.row(w, stack)?;
    let v = t.rows[i].values[col].clone();
    (!v.is_empty()).then_some(v)
}

/// The outcome of one check, and the clause that says it; `q` is a cross-workload check's
/// Holm-corrected p-value; `at` names a pair's workload.
fn check(ctx: &Context, c: &Check, q: Option<f64>, at: bool) -> (Outcome, String) {
    let noise = ctx.summary.noise;
    let missing = |what: String| (Outcome::Missing, what);
    match c {
        Check::Before {
            workload,
            column,
            a,
            b,
        }
        | Check::NotAfter {
            workload,
            column,
            a,
            b,
        }
        | Check::Level {
            workload,
            column,
            a,
            b,
        } => {
            let mut said = match c {
                Check::Before { .. } => format!("{a} before {b}"),
                Check::NotAfter { .. } => format!("{a} not after {b}"),
                _ => format!("{a} level with {b}"),
            };
            if at {
                said.push_str(&format!(" at {workload}"));
            }
            let (Some((t, col)), Some((_, i)), Some((_, j))) = (
                ctx.column(workload, column),
                ctx.row(workload, a),
                ctx.row(workload, b),
            ) else {
                let gone = if ctx.row(workload, a).is_none() { a } else { b };
                return missing(format!("{said}: {gone} {}", not_run(ctx, gone, workload)));
            };
            let Some(p) = t
                .groups(col)
                .and_then(|g| g.pair(i, j))
                .filter(|p| p.p_holm.is_some())
            else {
                return (Outcome::Tied, format!("{said}: untested"));
            };
            let a_first = (p.a == i) == p.a_better;
            let text = format!("{said}: {}", pair_text(Some(p), noise));
            let o = match c {
                Check::Before { .. } if p.separated && a_first => Outcome::Holds,
                Check::Before { .. } if p.separated => Outcome::Reversed,
                Check::Before { .. } => Outcome::Tied,
                Check::NotAfter { .. } if p.separated && !a_first => Outcome::Reversed,
                Check::NotAfter { .. } => Outcome::Holds,
                _ if p.separated => Outcome::Reversed,
                _ => Outcome::Holds,
            };
            (o, text)
        }
        Check::Top {
            workload,
            column,
            stack,
        } => {
            let (Some((t, col)), Some((_, i))) =
                (ctx.column(workload, column), ctx.row(workload, stack))
            else {
                return missing(format!("{stack} first: {}", not_run(ctx, stack, workload)));
            };
            let Some(g) = t.groups(col).filter(|g| g.tested) else {
                return (Outcome::Tied, format!("{stack} first: untested"));
            };
            // The others of a group, by name when there are a few.
            let names = |v: &[usize]| {
                let others: Vec<&str> = v
                    .iter()
                    .filter(|&&k| k != i)
                    .map(|&k| t.rows[k].stack.as_str())
                    .collect();
                if others.len() > 5 {
                    format!("{} other stacks", others.len())
                } else {
                    others.join(", ")
                }
            };
            if g.sole == Some(i) {
                (Outcome::Holds, format!("{stack} alone at the top"))
            } else if g.top.contains(&i) {
                (
                    Outcome::Tied,
                    format!("{stack} shares the top with {}", names(&g.top)),
                )
            } else {
                (
                    Outcome::Reversed,
                    format!(
                        "{stack} ranks {}, the top being {}",
                        g.rank_text(i),
                        names(&g.top)
                    ),
                )
            }
        }
        Check::AboveZero {
            workload,
            column,
            stack,
        } => {
            let Some((t, col)) = ctx.column(workload, column) else {
                return missing(format!("{stack}: no {column}"));
            };
            let Some(e) = ctx
                .row(workload, stack)
                .and_then(|(_, i)| t.rows[i].estimates[col])
            else {
                return missing(format!(
                    "{stack} owes {column}: {}",
                    not_run(ctx, stack, workload)
                ));
            };
            let half = e.ci95.unwrap_or(f64::INFINITY);
            let text = format!(
                "{stack}'s {} {} ± {}",
                t.columns[col].label,
                iotrial::present::num(e.mean),
                e.ci95.map_or("?".into(), iotrial::present::num)
            );
            let o = if e.mean - half > 0.0 {
                Outcome::Holds
            } else if e.mean > 0.0 {
                Outcome::Tied
            } else {
                Outcome::Reversed
            };
            (o, text)
        }
        Check::Disagree { a, b } => {
            let (Some(ta), Some(tb)) = (ctx.table(a), ctx.table(b)) else {
                return missing(format!("{a} against {b}: a workload did not run"));
            };
            let r = rankings(&[(a.clone(), ta.clone()), (b.clone(), tb.clone())]);
            match r.and_then(|r| r.agreement.into_iter().next()) {
                Some((_, _, Some(rho), n)) => {
                    let text = format!("{a} against {b}: Spearman's ρ = {rho:.2} over {n} stacks");
                    let o = if rho < 0.7 {
                        Outcome::Holds
                    } else {
                        Outcome::Reversed
                    };
                    (o, text)
                }
                _ => missing(format!(
                    "{a} against {b}: fewer than three stacks ranked by both"
                )),
            }
        }
        Check::Better {
            column,
            stack,
            from,
            to,
        } => {
            let said = format!("{stack} better at {to} than at {from}");
            let (Some(x), Some(y)) = (
                values(ctx, from, column, stack),
                values(ctx, to, column, stack),
            ) else {
                return missing(format!("{said}: {}", not_run(ctx, stack, to)));
            };
            let Some(q) = q else {
                return (Outcome::Tied, format!("{said}: untested"));
            };
            let higher = ctx
                .column(to, column)
                .map(|(t, c)| t.columns[c].better == Better::Higher)
                .unwrap_or(true);
            let (mx, my) = (mean(&x), mean(&y));
            let apart = q < ctx.summary.alpha && relative(mx, my) > noise;
            let to_better = if higher { my > mx } else { my < mx };
            let text = format!(
                "{said}: {} to {} ({}, Holm)",
                iotrial::present::num(mx),
                iotrial::present::num(my),
                p_text(q)
            );
            let o = match (apart, to_better) {
                (true, true) => Outcome::Holds,
                (true, false) => Outcome::Reversed,
                _ => Outcome::Tied,
            };
            (o, text)
        }
    }
}

fn not_run(ctx: &Context, stack: &str, workload: &str) -> String {
    format!("did not run ({})", ctx.summary.why_not_run(stack, workload))
}

/// The findings as a Markdown list, with how they came out.
pub fn render(ctx: &Context, claims: &[Claim]) -> (String, Vec<Outcome>) {
    let mut out = format!(
        "**The seed's findings, checked against iotrial's groups.** A finding holds when iotrial's repeats separate every pair it names in the seed's order (Welch's test, Holm's correction, more than {}% apart: the study's own rule).\n\n",
        super::compare::pct(ctx.summary.noise)
    );
    let mut outcomes = Vec::new();
    for c in claims {
        let checked = c.check(ctx);
        out.push_str(&format!(
            "- {}: {} — **{}**: {}.\n",
            c.quote,
            c.what,
            checked.outcome.text(),
            checked.parts.join("; ")
        ));
        outcomes.push(checked.outcome);
    }
    (out, outcomes)
}

/// The seed's main conclusion from its findings' outcomes: `reproduced`, `partly reproduced`,
/// `not reproduced` (a finding the data order the other way, none that holds) or `cannot be
/// measured here` (nothing holds and nothing is reversed: the findings are missing here or
/// the data cannot separate what they compare, which is not evidence against them).
pub fn conclusion(outcomes: &[Outcome]) -> &'static str {
    let all = |x: Outcome| outcomes.iter().all(|&o| o == x);
    let any = |x: Outcome| outcomes.contains(&x);
    if all(Outcome::Holds) && !outcomes.is_empty() {
        "reproduced"
    } else if any(Outcome::Holds) || any(Outcome::Partly) {
        "partly reproduced"
    } else if any(Outcome::Reversed) {
        "not reproduced"
    } else {
        "cannot be measured here"
    }
}

/// The findings' names by outcome, for the conclusion's "why".
pub fn why(claims: &[Claim], outcomes: &[Outcome]) -> String {
    let mut parts = Vec::new();
    for (o, label) in [
        (Outcome::Holds, "Holds"),
        (Outcome::Partly, "Holds in part"),
        (Outcome::Tied, "The data cannot separate"),
        (Outcome::Reversed, "Reversed"),
        (Outcome::Missing, "Cannot be measured here"),
    ] {
        let names: Vec<&str> = claims
            .iter()
            .zip(outcomes)
            .filter(|(_, &x)| x == o)
            .map(|(c, _)| c.what.as_str())
            .collect();
        if !names.is_empty() {
            parts.push(format!("{label}: {}", names.join("; ")));
        }
    }
    parts.join(". ")
}
