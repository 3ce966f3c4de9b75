//! Rankings side by side: in a study of several workloads, each stack's rank under each
//! workload's headline figure (1 = best, by the figure's own direction; baselines are not
//! ranked): the range of places its repeats allow ([`crate::analysis::groups`]; `1-3` where
//! the data cannot separate it from two others), or its place by mean alone where nothing could
//! be tested; and, for each pair of workloads, Spearman's rank correlation of the means over
//! the stacks ranked by both, so whether a synthetic benchmark and the real pattern agree is
//! one number (seed 003: iozone ranked ext2 first, the Cacti burst ranked xfs first). The same
//! module compares two runs of one workload (a quick study against the full one): whether the
//! quick one's top group holds the full one's best stack, and which pairs both runs order
//! apart and in opposite orders.

use super::chart::{Block, Section, Table};
use super::verdict::VerdictTable;
use super::{Better, Rows};

/// Each stack's rank per workload, and the pairwise agreement.
#[derive(Debug, Clone, PartialEq)]
pub struct Rankings {
    /// Workload names and the headline each ranks by (`label (unit)`).
    pub workloads: Vec<(String, String)>,
    /// Stack, then its rank under each workload (None: no figure there).
    pub ranks: Vec<(String, Vec<Option<Rank>>)>,
    /// (workload a, workload b, Spearman's rho over the stacks both rank, how many).
    pub agreement: Vec<(String, String, Option<f64>, usize)>,
}

/// A stack's rank under one workload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rank {
    /// Its place by mean (ties share their mean place).
    pub by_mean: f64,
    /// The places its repeats allow, when the workload's stacks could be tested.
    pub range: Option<(usize, usize)>,
}

impl Rank {
    fn text(&self) -> String {
        match self.range {
            Some((lo, hi)) if lo == hi => lo.to_string(),
            Some((lo, hi)) => format!("{lo}-{hi}"),
            None => rank_text(Some(self.by_mean)),
        }
    }
}

/// Ranks (1 = first) of `values` with ties sharing their mean rank.
fn ranks_of(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let mean = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = mean;
        }
        i = j + 1;
    }
    ranks
}

/// Spearman's rank correlation of two equally long lists (the Pearson correlation of their
/// ranks); None for fewer than 3 pairs or a list without spread.
pub fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 3 {
        return None;
    }
    let (ra, rb) = (ranks_of(a), ranks_of(b));
    let n = ra.len() as f64;
    let (ma, mb) = (ra.iter().sum::<f64>() / n, rb.iter().sum::<f64>() / n);
    let cov: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = ra.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = rb.iter().map(|y| (y - mb).powi(2)).sum();
    (va > 0.0 && vb > 0.0).then(|| cov / (va * vb).sqrt())
}

/// The rankings of `tables` (workload, its verdict table), when there are two or more.
pub fn rankings(tables: &[(String, VerdictTable)]) -> Option<Rankings> {
    if tables.len() < 2 {
        return None;
    }
    let mut stacks: Vec<String> = Vec::new();
    for (_, t) in tables {
        for r in t.rows.iter().filter(|r| !r.unranked()) {
            if !stacks.contains(&r.stack) {
                stacks.push(r.stack.clone());
            }
        }
    }
    // Per workload, each stack's headline mean, as "lower is better" scores.
    let scores: Vec<Vec<Option<f64>>> = tables
        .iter()
        .map(|(_, t)| {
            let sign = match t.columns.first().map(|c| c.better) {
                Some(Better::Higher) => -1.0,
                _ => 1.0,
            };
            stacks
                .iter()
                .map(|s| {
                    let r = t.rows.iter().find(|r| &r.stack == s && !r.unranked())?;
                    r.estimates.first()?.as_ref().map(|e| sign * e.mean)
                })
                .collect()
        })
        .collect();
    let rank_cols: Vec<Vec<Option<Rank>>> = scores
        .iter()
        .zip(tables)
        .map(|(col, (_, t))| {
            let have: Vec<(usize, f64)> = col
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.map(|v| (i, v)))
                .collect();
            let r = ranks_of(&have.iter().map(|x| x.1).collect::<Vec<_>>());
            let mut out = vec![None; col.len()];
            for ((i, _), rank) in have.iter().zip(r) {
                let range = t.groups(0).filter(|g| g.tested).and_then(|g| {
                    let row = t.rows.iter().position(|r| r.stack == stacks[*i])?;
                    g.ranks[row]
                });
                out[*i] = Some(Rank {
                    by_mean: rank,
                    range,
                });
            }
            out
        })
        .collect();
    let mut agreement = Vec::new();
    for a in 0..tables.len() {
        for b in a + 1..tables.len() {
            let pairs: Vec<(f64, f64)> = scores[a]
                .iter()
                .zip(&scores[b])
                .filter_map(|(x, y)| Some(((*x)?, (*y)?)))
                .collect();
            let (xa, xb): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
            agreement.push((
                tables[a].0.clone(),
                tables[b].0.clone(),
                spearman(&xa, &xb),
                pairs.len(),
            ));
        }
    }
    Some(Rankings {
        workloads: tables
            .iter()
            .map(|(w, t)| {
                (
                    w.clone(),
                    t.columns.first().map(|c| c.heading()).unwrap_or_default(),
                )
            })
            .collect(),
        ranks: stacks
            .into_iter()
            .enumerate()
            .map(|(i, s)| (s, rank_cols.iter().map(|c| c[i]).collect()))
            .collect(),
        agreement,
    })
}

fn rank_text(r: Option<f64>) -> String {
    match r {
        Some(x) if x.fract() == 0.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.1}"),
        None => "-".into(),
    }
}

impl Rankings {
    /// One row per stack: its rank under each workload, and whether the ranks can be the
    /// same (the ranges overlap; by mean where nothing was tested).
    pub fn rows(&self) -> Rows {
        let mut headings = vec!["stack".to_string()];
        headings.extend(
            self.workloads
                .iter()
                .map(|(w, h)| format!("rank by {w} ({h})")),
        );
        headings.push("same rank".into());
        let rows = self
            .ranks
            .iter()
            .map(|(s, r)| {
                let mut row = vec![s.clone()];
                row.extend(r.iter().map(|x| x.map_or("-".into(), |x| x.text())));
                let known: Vec<Rank> = r.iter().flatten().copied().collect();
                let span = |x: &Rank| {
                    x.range
                        .map_or((x.by_mean, x.by_mean), |(lo, hi)| (lo as f64, hi as f64))
                };
                let lo = known.iter().map(|x| span(x).0).fold(f64::MIN, f64::max);
                let hi = known.iter().map(|x| span(x).1).fold(f64::MAX, f64::min);
                row.push(
                    if known.len() < r.len() {
                        "-"
                    } else if lo <= hi {
                        "yes"
                    } else {
                        "no"
                    }
                    .into(),
                );
                row
            })
            .collect();
        Rows { headings, rows }
    }

    /// One sentence per pair of workloads: their rank correlation and what it says.
    pub fn agreement_lines(&self) -> Vec<String> {
        self.agreement
            .iter()
            .map(|(a, b, rho, n)| match rho {
                Some(r) => {
                    let says = if *r >= 0.7 {
                        "they agree"
                    } else if *r > 0.3 {
                        "they agree weakly"
                    } else if *r > -0.3 {
                        "they do not agree"
                    } else {
                        "they rank the stacks in opposite orders"
                    };
                    format!("{a} vs {b}: Spearman's rank correlation {r:.2} over {n} stacks: {says}")
                }
                None => format!("{a} vs {b}: no rank correlation (fewer than 3 stacks ranked by both, or no spread)"),
            })
            .collect()
    }

    /// The same as a report section.
    pub fn section(&self) -> Section {
        let r = self.rows();
        Section {
            title: "Rankings side by side".into(),
            intro: Some(format!(
                "Each stack's rank under each workload's headline figure (1 = best): the places its repeats allow (1-2 where the data cannot separate it from another), by mean alone where nothing could be tested. Same rank: whether one place is allowed under every workload. {}",
                self.agreement_lines().join(". ")
            )),
            blocks: vec![Block::Table(Table {
                caption: self.agreement_lines().join("; "),
                headings: r.headings,
                rows: r.rows,
            })],
        }
    }
}

/// How two runs of one workload on the same stacks agree (a quick study against the full
/// one): the top groups, and every pair of stacks both runs could test.
#[derive(Debug, Clone, PartialEq)]
pub struct RunAgreement {
    /// The reference run's top group (one stack when it has a sole best).
    pub reference_top: Vec<String>,
    /// Whether the reference run has a sole best.
    pub reference_sole: bool,
    /// The other run's top group.
    pub top: Vec<String>,
    /// Whether the other run's top group holds the reference's best stack (its sole best, or
    /// one of its top group when it has none).
    pub holds_best: bool,
    /// Pairs both runs order apart, the same way: (better, worse).
    pub agreed: Vec<(String, String)>,
    /// Pairs both runs order apart, in opposite orders: (better in the reference, worse).
    pub reversed: Vec<(String, String)>,
    /// Pairs one run orders apart and the other ties: (better, worse, the run that orders
    /// them: "reference" or "other").
    pub one_sided: Vec<(String, String, &'static str)>,
    /// Pairs neither run can order.
    pub tied: usize,
    /// Spearman's rho of the two runs' headline means over the stacks both rank.
    pub rho: Option<f64>,
}

impl RunAgreement {
    /// Whether the other run answers what the reference answers: its top group holds the
    /// reference's best and no pair both order apart is reversed.
    pub fn answers(&self) -> bool {
        self.holds_best && self.reversed.is_empty()
    }
}

/// The separated pairs of `t`'s headline as (better, worse) stack names, and its top group.
fn ordered(t: &VerdictTable) -> (Vec<(String, String)>, Vec<String>, bool) {
    let Some(g) = t.groups(0) else {
        return (Vec::new(), Vec::new(), false);
    };
    let name = |i: usize| t.rows[i].stack.clone();
    let pairs = g
        .pairs
        .iter()
        .filter(|p| p.separated)
        .map(|p| {
            if p.a_better {
                (name(p.a), name(p.b))
            } else {
                (name(p.b), name(p.a))
            }
        })
        .collect();
    let top = if g.tested {
        g.top.iter().map(|&i| name(i)).collect()
    } else {
        Vec::new()
    };
    (pairs, top, g.sole.is_some())
}

/// How `other` agrees with `reference` on their headline figure, over the stacks both rank.
pub fn run_agreement(reference: &VerdictTable, other: &VerdictTable) -> RunAgreement {
    let (ref_pairs, reference_top, reference_sole) = ordered(reference);
    let (pairs, top, _) = ordered(other);
    let ranked = |t: &VerdictTable| -> Vec<String> {
        t.rows
            .iter()
            .filter(|r| !r.unranked() && r.estimates.first().is_some_and(Option::is_some))
            .map(|r| r.stack.clone())
            .collect()
    };
    let both: Vec<String> = ranked(reference)
        .into_iter()
        .filter(|s| ranked(other).contains(s))
        .collect();
    let has = |v: &[(String, String)], a: &str, b: &str| v.iter().any(|(x, y)| x == a && y == b);
    let (mut agreed, mut reversed, mut one_sided, mut tied) = (vec![], vec![], vec![], 0);
    for (n, a) in both.iter().enumerate() {
        for b in &both[n + 1..] {
            let r = if has(&ref_pairs, a, b) {
                Some((a, b))
            } else if has(&ref_pairs, b, a) {
                Some((b, a))
            } else {
                None
            };
            let o = if has(&pairs, a, b) {
                Some((a, b))
            } else if has(&pairs, b, a) {
                Some((b, a))
            } else {
                None
            };
            match (r, o) {
                (Some(r), Some(o)) if r == o => agreed.push((r.0.clone(), r.1.clone())),
                (Some(r), Some(_)) => reversed.push((r.0.clone(), r.1.clone())),
                (Some(r), None) => one_sided.push((r.0.clone(), r.1.clone(), "reference")),
                (None, Some(o)) => one_sided.push((o.0.clone(), o.1.clone(), "other")),
                (None, None) => tied += 1,
            }
        }
    }
    let holds_best = if reference_sole {
        top.contains(&reference_top[0])
    } else {
        reference_top.iter().any(|s| top.contains(s))
    };
    let mean = |t: &VerdictTable, s: &str| {
        t.rows
            .iter()
            .find(|r| r.stack == s)
            .and_then(|r| r.estimates.first().copied().flatten())
            .map(|e| e.mean)
    };
    let (xa, xb): (Vec<f64>, Vec<f64>) = both
        .iter()
        .filter_map(|s| Some((mean(reference, s)?, mean(other, s)?)))
        .unzip();
    RunAgreement {
        reference_top,
        reference_sole,
        top,
        holds_best,
        agreed,
        reversed,
        one_sided,
        tied,
        rho: spearman(&xa, &xb),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_of_same_and_opposite_orders() {
        let a = [1.0, 2.0, 3.0, 4.0];
        assert!((spearman(&a, &[10.0, 20.0, 30.0, 40.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((spearman(&a, &[4.0, 3.0, 2.0, 1.0]).unwrap() + 1.0).abs() < 1e-12);
        assert_eq!(spearman(&a[..2], &a[..2]), None);
        assert_eq!(ranks_of(&[5.0, 1.0, 5.0]), vec![2.5, 1.0, 2.5]);
    }

    fn table(stacks: &[(&str, [f64; 3])]) -> VerdictTable {
        use crate::present::kind::example::COLUMNS;
        use crate::present::verdict::StackFigures;
        use crate::present::VerdictFigures;
        VerdictTable::build(
            &COLUMNS[..1],
            stacks
                .iter()
                .map(|(name, v)| StackFigures {
                    stack: name.to_string(),
                    baseline: false,
                    repeats: v
                        .iter()
                        .map(|&x| VerdictFigures {
                            values: vec![Some(x)],
                            ..Default::default()
                        })
                        .collect(),
                })
                .collect(),
        )
    }

    #[test]
    fn a_run_agrees_when_its_top_holds_the_best_and_nothing_apart_is_reversed() {
        let full = table(&[
            ("raw", [42.0, 42.2, 41.9]),
            ("xfs", [38.0, 37.5, 38.4]),
            ("ext4", [21.0, 22.0, 21.5]),
        ]);
        let quick = table(&[
            ("raw", [45.0, 44.0, 46.5]),
            ("xfs", [44.5, 43.0, 45.0]),
            ("ext4", [30.0, 31.0, 30.5]),
        ]);
        let a = run_agreement(&full, &quick);
        assert_eq!(a.reference_top, vec!["raw"]);
        assert!(a.reference_sole);
        assert!(a.top.contains(&"raw".to_string()) && a.top.len() == 2);
        assert!(a.holds_best && a.answers(), "{a:?}");
        assert!(a.agreed.contains(&("raw".into(), "ext4".into())));
        assert!(a
            .one_sided
            .contains(&("raw".into(), "xfs".into(), "reference")));
        let reversed = table(&[
            ("raw", [30.0, 30.5, 29.5]),
            ("xfs", [44.5, 43.0, 45.0]),
            ("ext4", [20.0, 21.0, 20.5]),
        ]);
        let b = run_agreement(&full, &reversed);
        assert!(!b.holds_best && !b.answers());
        assert_eq!(b.reversed, vec![("raw".to_string(), "xfs".to_string())]);
    }
}
