//! Rankings side by side: in a study of several workloads, each stack's rank under each
//! workload's headline figure (1 = best, by the figure's own direction; baselines are not
//! ranked) and, for each pair of workloads, Spearman's rank correlation over the stacks ranked
//! by both, so whether a synthetic benchmark and the real pattern agree is one number (seed 003:
//! iozone ranked ext2 first, the Cacti burst ranked xfs first).

use super::chart::{Block, Section, Table};
use super::verdict::VerdictTable;
use super::{Better, Rows};

/// Each stack's rank per workload, and the pairwise agreement.
#[derive(Debug, Clone, PartialEq)]
pub struct Rankings {
    /// Workload names and the headline each ranks by (`label (unit)`).
    pub workloads: Vec<(String, String)>,
    /// Stack, then its rank under each workload (None: no figure there).
    pub ranks: Vec<(String, Vec<Option<f64>>)>,
    /// (workload a, workload b, Spearman's rho over the stacks both rank, how many).
    pub agreement: Vec<(String, String, Option<f64>, usize)>,
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
    let rank_cols: Vec<Vec<Option<f64>>> = scores
        .iter()
        .map(|col| {
            let have: Vec<(usize, f64)> = col
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.map(|v| (i, v)))
                .collect();
            let r = ranks_of(&have.iter().map(|x| x.1).collect::<Vec<_>>());
            let mut out = vec![None; col.len()];
            for ((i, _), rank) in have.iter().zip(r) {
                out[*i] = Some(rank);
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
    /// One row per stack: its rank under each workload, and whether the ranks are the same.
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
                row.extend(r.iter().map(|x| rank_text(*x)));
                let known: Vec<f64> = r.iter().flatten().copied().collect();
                let same = known.len() == r.len() && known.windows(2).all(|w| w[0] == w[1]);
                row.push(
                    if known.len() < r.len() {
                        "-"
                    } else if same {
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
                "Each stack's rank under each workload's headline figure (1 = best). {}",
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
}
