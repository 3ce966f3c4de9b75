//! Rank groups across stacks: which stacks the repeats of one figure can tell apart. Every
//! pair of stacks is tested (Welch's two-sided t-test), the p-values are corrected for the
//! number of tests made (Holm's step-down method), and a pair is *separated* only when the
//! corrected p-value is below α and its means differ by more than a practical noise threshold
//! (a relative difference below which a difference is noise whatever the test says, as
//! criterion.rs's noise threshold). Each stack then gets a rank range: 1 + the stacks
//! separated above it, to the count less the stacks separated below it. The top group is the
//! stacks that can be first; a stack is the sole best only when it is separated from every
//! other. With fewer than two repeats no test can be made, and nobody is best.

use super::compare::{self, ALPHA};
use super::stats;

/// The relative difference of two means below which stacks are never separated, unless a
/// study names another (`noise`).
pub const DEFAULT_NOISE: f64 = 0.02;

/// What separates two stacks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// Family-wise significance level (Holm).
    pub alpha: f64,
    /// Relative difference of the means (to the larger in magnitude) at or below which a
    /// difference is noise.
    pub noise: f64,
}

impl Default for Rule {
    fn default() -> Rule {
        Rule {
            alpha: ALPHA,
            noise: DEFAULT_NOISE,
        }
    }
}

/// The test of one pair of stacks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pair {
    /// Indices into the stacks given, `a < b`.
    pub a: usize,
    pub b: usize,
    /// Welch's two-sided p-value (0 or 1 when both have no spread: the means differ or not);
    /// `None` when one has fewer than two values, so no test was made.
    pub p: Option<f64>,
    /// `p` after Holm's correction over every test made.
    pub p_holm: Option<f64>,
    /// |mean(a) - mean(b)| over the larger of |mean(a)|, |mean(b)|.
    pub relative: f64,
    /// Whether the data tell the two apart (`p_holm < α` and `relative > noise`).
    pub separated: bool,
    /// Whether `a` has the better mean.
    pub a_better: bool,
}

/// The groups one figure makes of a list of stacks.
#[derive(Debug, Clone, PartialEq)]
pub struct Groups {
    /// Per stack given: its rank range (1 = best), `None` when it has no value.
    pub ranks: Vec<Option<(usize, usize)>>,
    /// Every pair of stacks with values.
    pub pairs: Vec<Pair>,
    /// The stacks that can be first (rank range starting at 1), best mean first.
    pub top: Vec<usize>,
    /// The stack separated from every other, when there is one.
    pub sole: Option<usize>,
    /// The stack with the best mean (tested or not).
    pub best_mean: Option<usize>,
    /// Whether any test could be made (some pair has two or more values on each side).
    pub tested: bool,
}

impl Groups {
    /// The test of stacks `i` and `j`.
    pub fn pair(&self, i: usize, j: usize) -> Option<&Pair> {
        let (a, b) = if i < j { (i, j) } else { (j, i) };
        self.pairs.iter().find(|p| p.a == a && p.b == b)
    }

    /// How many stacks have a value.
    pub fn ranked(&self) -> usize {
        self.ranks.iter().filter(|r| r.is_some()).count()
    }

    /// Whether stack `i` is in the top group of a tested comparison that has no sole best,
    /// when that group leaves some stack out (where every stack ties, none is marked).
    pub fn shares_top(&self, i: usize) -> bool {
        self.tested
            && self.sole.is_none()
            && self.top.len() > 1
            && self.top.len() < self.ranked()
            && self.top.contains(&i)
    }

    /// Rank range of stack `i` as text: `1`, `2-4`, `-`.
    pub fn rank_text(&self, i: usize) -> String {
        match self.ranks.get(i).copied().flatten() {
            None => "-".into(),
            Some((lo, hi)) if lo == hi => lo.to_string(),
            Some((lo, hi)) => format!("{lo}-{hi}"),
        }
    }
}

/// Holm's step-down adjusted p-values of `p`, in the same order: the i-th smallest is
/// multiplied by (m - i), kept monotone, and capped at 1.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut out = vec![0.0; m];
    let mut running = 0.0f64;
    for (i, &k) in order.iter().enumerate() {
        running = running.max(((m - i) as f64 * p[k]).min(1.0));
        out[k] = running;
    }
    out
}

/// Welch's p-value of `a` against `b`; when neither has any spread, 0 if their means differ
/// and 1 if not (the data leave no doubt either way). `None` when one has fewer than two
/// values.
pub fn p_value(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    match compare::welch(a, b) {
        Some(w) => Some(w.p),
        None if stats::mean(a) != stats::mean(b) => Some(0.0),
        None => Some(1.0),
    }
}

/// Relative difference of two means: |a - b| over the larger magnitude (0 when both are 0).
pub fn relative(a: f64, b: f64) -> f64 {
    let big = a.abs().max(b.abs());
    if big == 0.0 {
        0.0
    } else {
        (a - b).abs() / big
    }
}

/// The groups `values` (per stack: its repeats' values of one figure; empty for a stack not
/// ranked or without the figure) make under `rule`, where `higher_better` says which way the
/// figure is better.
pub fn rank(values: &[Vec<f64>], higher_better: bool, rule: &Rule) -> Groups {
    let have: Vec<usize> = (0..values.len())
        .filter(|&i| !values[i].is_empty())
        .collect();
    let means: Vec<f64> = values.iter().map(|v| stats::mean(v)).collect();
    let better = |x: f64, y: f64| if higher_better { x > y } else { x < y };
    let mut pairs = Vec::new();
    for (n, &a) in have.iter().enumerate() {
        for &b in &have[n + 1..] {
            pairs.push(Pair {
                a,
                b,
                p: p_value(&values[a], &values[b]),
                p_holm: None,
                relative: relative(means[a], means[b]),
                separated: false,
                a_better: better(means[a], means[b]),
            });
        }
    }
    let made: Vec<usize> = (0..pairs.len()).filter(|&i| pairs[i].p.is_some()).collect();
    let adjusted = holm(&made.iter().filter_map(|&i| pairs[i].p).collect::<Vec<_>>());
    for (&i, q) in made.iter().zip(adjusted) {
        let p = &mut pairs[i];
        p.p_holm = Some(q);
        p.separated = q < rule.alpha && p.relative > rule.noise;
    }
    let k = have.len();
    let mut ranks = vec![None; values.len()];
    for &i in &have {
        let (mut above, mut below) = (0, 0);
        for p in pairs
            .iter()
            .filter(|p| p.separated && (p.a == i || p.b == i))
        {
            let i_better = (p.a == i) == p.a_better;
            if i_better {
                below += 1;
            } else {
                above += 1;
            }
        }
        ranks[i] = Some((1 + above, k - below));
    }
    let mut top: Vec<usize> = have
        .iter()
        .copied()
        .filter(|&i| ranks[i].is_some_and(|(lo, _)| lo == 1))
        .collect();
    top.sort_by(|&x, &y| {
        let o = means[x].total_cmp(&means[y]);
        if higher_better {
            o.reverse()
        } else {
            o
        }
    });
    let tested = pairs.iter().any(|p| p.p.is_some());
    let sole = match top.as_slice() {
        [one] if k > 1 && ranks[*one] == Some((1, 1)) => Some(*one),
        _ => None,
    };
    let best_mean = have
        .iter()
        .copied()
        .reduce(|x, y| if better(means[y], means[x]) { y } else { x });
    Groups {
        ranks,
        pairs,
        top,
        sole,
        best_mean,
        tested,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    #[test]
    fn holm_by_hand() {
        // m = 4: sorted 0.01, 0.02, 0.03, 0.5 -> 0.04, 0.06, 0.06 (kept monotone), 0.5.
        let q = holm(&[0.03, 0.01, 0.5, 0.02]);
        close(q[1], 0.04);
        close(q[3], 0.06);
        close(q[0], 0.06);
        close(q[2], 0.5);
        assert_eq!(holm(&[]), Vec::<f64>::new());
        close(holm(&[0.7, 0.9])[0], 1.0);
    }

    #[test]
    fn ten_comparisons_at_p_003_are_not_significant_after_holm() {
        let q = holm(&[0.03; 10]);
        assert!(q.iter().all(|&x| (x - 0.3).abs() < 1e-12), "{q:?}");
        assert!(q.iter().all(|&x| x >= ALPHA));
        // One alone at 0.03 would have been.
        assert!(holm(&[0.03])[0] < ALPHA);
    }

    #[test]
    fn clearly_separated_stacks_get_one_best() {
        let v = vec![
            vec![10.0, 10.2, 9.9, 10.1],
            vec![20.0, 20.3, 19.8, 20.1],
            vec![15.0, 15.2, 14.9, 15.1],
        ];
        let g = rank(&v, true, &Rule::default());
        assert_eq!(g.sole, Some(1));
        assert_eq!(g.top, vec![1]);
        assert_eq!(g.ranks, vec![Some((3, 3)), Some((1, 1)), Some((2, 2))]);
        assert_eq!(g.rank_text(1), "1");
        // Lower is better: the order turns over.
        let g = rank(&v, false, &Rule::default());
        assert_eq!(g.sole, Some(0));
        assert_eq!(g.rank_text(1), "3");
    }

    #[test]
    fn overlapping_stacks_share_the_top() {
        let v = vec![
            vec![20.0, 21.5, 19.0],
            vec![20.4, 19.2, 21.8],
            vec![10.0, 10.3, 9.8],
        ];
        let g = rank(&v, true, &Rule::default());
        assert_eq!(g.sole, None);
        assert_eq!(g.top, vec![1, 0], "best mean first");
        assert!(g.shares_top(0) && g.shares_top(1) && !g.shares_top(2));
        assert_eq!(g.rank_text(0), "1-2");
        assert_eq!(g.rank_text(2), "3");
        assert_eq!(g.best_mean, Some(1));
    }

    #[test]
    fn a_difference_below_the_noise_threshold_is_a_tie_however_tight() {
        let v = vec![vec![100.0, 100.01, 99.99], vec![101.0, 101.01, 100.99]];
        let g = rank(&v, true, &Rule::default());
        let p = g.pair(0, 1).unwrap();
        assert!(p.p_holm.unwrap() < 1e-6 && !p.separated, "{p:?}");
        assert_eq!(g.sole, None);
        let strict = Rule {
            noise: 0.005,
            ..Rule::default()
        };
        assert_eq!(rank(&v, true, &strict).sole, Some(1));
    }

    #[test]
    fn without_spread_equal_means_tie_and_different_ones_separate() {
        let v = vec![
            vec![12.0, 12.0, 12.0],
            vec![10.0, 10.0, 10.0],
            vec![12.0; 3],
        ];
        let g = rank(&v, true, &Rule::default());
        assert!(g.pair(0, 1).unwrap().separated);
        assert!(!g.pair(0, 2).unwrap().separated);
        assert_eq!(g.top, vec![0, 2]);
        assert_eq!(g.sole, None);
        assert!(g.shares_top(0) && g.shares_top(2) && !g.shares_top(1));
        // Where every stack ties, none is marked as sharing the top.
        let all = rank(&[vec![12.0; 3], vec![12.0; 3]], true, &Rule::default());
        assert_eq!(all.top.len(), 2);
        assert!(!all.shares_top(0) && !all.shares_top(1));
    }

    #[test]
    fn one_repeat_tests_nothing_and_crowns_nobody() {
        let v = vec![vec![10.0], vec![30.0], vec![20.0], vec![]];
        let g = rank(&v, true, &Rule::default());
        assert!(!g.tested);
        assert_eq!(g.sole, None);
        assert_eq!(g.best_mean, Some(1));
        assert_eq!(g.ranks[0], Some((1, 3)));
        assert_eq!(g.ranks[3], None);
        assert!(!g.shares_top(1), "untested: nobody shares a top either");
    }

    /// One draw of a normal distribution (Box-Muller).
    fn normal(rng: &mut impl Rng, mean: f64, sd: f64) -> f64 {
        let u1: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
        let u2: f64 = rng.random();
        mean + sd * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Studies of `k` stacks with `n` repeats each, all drawn from one distribution; how many
    /// of `studies` crown a single winner.
    fn crowned_among_identical(k: usize, n: usize, rule: &Rule, studies: usize) -> usize {
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed_0042);
        (0..studies)
            .filter(|_| {
                let v: Vec<Vec<f64>> = (0..k)
                    .map(|_| (0..n).map(|_| normal(&mut rng, 30.0, 3.0)).collect())
                    .collect();
                rank(&v, true, rule).sole.is_some()
            })
            .count()
    }

    #[test]
    fn identical_stacks_crown_a_single_winner_in_at_most_about_5_percent_of_studies() {
        // No noise threshold: the test and Holm's correction alone hold the error rate.
        let bare = Rule {
            noise: 0.0,
            ..Rule::default()
        };
        for (k, n) in [(2, 3), (3, 3), (6, 3), (6, 5), (4, 10)] {
            let crowned = crowned_among_identical(k, n, &bare, 2000);
            assert!(
                crowned <= 120,
                "{k} identical stacks x {n} repeats: a single winner in {crowned} of 2000 studies"
            );
        }
        // Two identical stacks: the only test is at α, so about 5% and no less than 2%
        // (the simulation is a real test of the rule, not of an empty one).
        let two = crowned_among_identical(2, 5, &bare, 2000);
        assert!((40..=140).contains(&two), "{two} of 2000");
    }

    #[test]
    fn a_real_difference_is_found_by_the_same_rule() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut found = 0;
        for _ in 0..200 {
            // 20% apart with a 3% spread, three repeats each.
            let v: Vec<Vec<f64>> = [36.0, 30.0, 30.0]
                .iter()
                .map(|&m| (0..3).map(|_| normal(&mut rng, m, 0.9)).collect())
                .collect();
            if rank(&v, true, &Rule::default()).sole == Some(0) {
                found += 1;
            }
        }
        assert!(found >= 180, "found the better stack in {found} of 200");
    }
}
