//! The search for the edge: over the values `min, min + step, ..., max` of the varied
//! parameter, starting from the estimate, find the highest value at which every run passes
//! and the lowest at which a run fails, each run again until it has `confirm` runs. From the
//! estimate it steps up while runs pass (or down while they fail) by a quarter of the value
//! at least one step, until a pass lies below a failure; then it bisects; then it repeats
//! the two values at the edge. A value that fails any of its runs is a failing value; when the
//! passing value at the edge fails a repeat, the edge moves down and the search goes on. Which
//! value passes or fails is the prober's business: this module only decides what to run.

use std::collections::BTreeMap;

/// The values a search may try.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Domain {
    pub min: f64,
    pub max: f64,
    /// The resolution: 1 for a count of streams.
    pub step: f64,
}

impl Domain {
    /// The highest index: values are `min + k * step` for k in 0..=top.
    fn top(&self) -> u64 {
        ((self.max - self.min) / self.step + 1e-9).floor().max(0.0) as u64
    }

    /// The value of index `k`, rounded to the step's precision.
    pub fn value(&self, k: u64) -> f64 {
        let v = self.min + k as f64 * self.step;
        (v / self.step).round() * self.step
    }

    /// The index nearest `v`, within the domain.
    fn index(&self, v: f64) -> u64 {
        (((v - self.min) / self.step).round().max(0.0) as u64).min(self.top())
    }
}

/// One run of one value, and whether it passed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Run {
    pub value: f64,
    /// 1 for the value's first run.
    pub run: u32,
    pub passed: bool,
}

/// Where the edge is.
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    /// The highest value whose every run passed; `None` when even `min` failed.
    pub capacity: Option<f64>,
    /// The lowest value a run of which failed; `None` when `max` passed.
    pub first_failing: Option<f64>,
    /// Every run, in order.
    pub runs: Vec<Run>,
    /// Whether both values at the edge have `confirm` runs (false when the search ran out of
    /// probes first).
    pub confirmed: bool,
}

impl Edge {
    /// Runs of `value`: (how many, how many failed).
    pub fn tally(&self, value: f64) -> (u32, u32) {
        let of = self.runs.iter().filter(|r| r.value == value);
        let n = of.clone().count() as u32;
        (n, of.filter(|r| !r.passed).count() as u32)
    }
}

/// The most runs a search makes before it gives up confirming (each run is a full trial).
pub const MAX_RUNS: usize = 40;

/// Passes and failures of each index tried.
#[derive(Default)]
struct Table(BTreeMap<u64, (u32, u32)>);

impl Table {
    fn record(&mut self, k: u64, passed: bool) {
        let e = self.0.entry(k).or_default();
        if passed {
            e.0 += 1;
        } else {
            e.1 += 1;
        }
    }

    fn runs(&self, k: u64) -> u32 {
        self.0.get(&k).map_or(0, |e| e.0 + e.1)
    }

    /// The lowest index that failed a run.
    fn hi(&self) -> Option<u64> {
        self.0.iter().find(|(_, e)| e.1 > 0).map(|(&k, _)| k)
    }

    /// The highest index below `hi` whose every run passed.
    fn lo(&self, hi: Option<u64>) -> Option<u64> {
        self.0
            .iter()
            .rev()
            .filter(|(&k, _)| hi.is_none_or(|h| k < h))
            .find(|(_, e)| e.1 == 0 && e.0 > 0)
            .map(|(&k, _)| k)
    }
}

/// A quarter of the value at index `k`, in steps, at least one.
fn stride(d: &Domain, k: u64) -> u64 {
    ((d.value(k).abs() * 0.25 / d.step).ceil() as u64).max(1)
}

/// Searches `d` from `estimate`, calling `probe(value, run)` for each run (true: it passed),
/// until both values at the edge have `confirm` runs.
pub fn search<E>(
    d: Domain,
    estimate: f64,
    confirm: u32,
    mut probe: impl FnMut(f64, u32) -> Result<bool, E>,
) -> Result<Edge, E> {
    let top = d.top();
    let confirm = confirm.max(1);
    let mut t = Table::default();
    let mut runs = Vec::new();
    let mut next = d.index(estimate);
    let confirmed = loop {
        if runs.len() >= MAX_RUNS {
            break false;
        }
        let run = t.runs(next) + 1;
        let value = d.value(next);
        let passed = probe(value, run)?;
        t.record(next, passed);
        runs.push(Run { value, run, passed });
        let hi = t.hi();
        let lo = t.lo(hi);
        next = match (lo, hi) {
            (None, None) => unreachable!("a value was just run"),
            (Some(l), None) if l == top => {
                if t.runs(l) >= confirm {
                    break true;
                }
                l
            }
            (Some(l), None) => (l + stride(&d, l)).min(top),
            (None, Some(0)) => {
                if t.runs(0) >= confirm {
                    break true;
                }
                0
            }
            (None, Some(h)) => h.saturating_sub(stride(&d, h)),
            (Some(l), Some(h)) if h - l > 1 => l + (h - l) / 2,
            (Some(l), Some(h)) => {
                if t.runs(l) < confirm {
                    l
                } else if t.runs(h) < confirm {
                    h
                } else {
                    break true;
                }
            }
        };
    };
    let hi = t.hi();
    Ok(Edge {
        capacity: t.lo(hi).map(|k| d.value(k)),
        first_failing: hi.map(|k| d.value(k)),
        runs,
        confirmed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    fn counts(max: f64) -> Domain {
        Domain {
            min: 1.0,
            max,
            step: 1.0,
        }
    }

    /// A stack that holds `edge` streams: every run at or below passes.
    fn holds(edge: f64) -> impl FnMut(f64, u32) -> Result<bool, Infallible> {
        move |v, _| Ok(v <= edge)
    }

    #[test]
    fn it_brackets_the_edge_from_an_estimate_below_and_confirms_both_sides() {
        let e = search(counts(64.0), 14.0, 2, holds(20.0)).unwrap();
        assert_eq!((e.capacity, e.first_failing), (Some(20.0), Some(21.0)));
        assert!(e.confirmed);
        assert_eq!(e.tally(20.0), (2, 0));
        assert_eq!(e.tally(21.0), (2, 2));
        let tried: Vec<f64> = e.runs.iter().map(|r| r.value).collect();
        assert_eq!(
            tried[..3],
            [14.0, 18.0, 23.0],
            "up by a quarter while it passes"
        );
        assert!(e.runs.len() <= 9, "{tried:?}");
    }

    #[test]
    fn it_comes_down_from_an_estimate_above() {
        let e = search(counts(64.0), 40.0, 2, holds(12.0)).unwrap();
        assert_eq!((e.capacity, e.first_failing), (Some(12.0), Some(13.0)));
        assert_eq!(e.runs[0].value, 40.0);
        assert!(e.confirmed);
    }

    #[test]
    fn a_repeat_that_fails_moves_the_edge_down() {
        // 10 passes once and then fails: it is a failing value; 9 always passes.
        let mut tens = 0;
        let flaky = |v: f64, _: u32| -> Result<bool, Infallible> {
            if v == 10.0 {
                tens += 1;
                return Ok(tens == 1);
            }
            Ok(v <= 9.0)
        };
        let e = search(counts(64.0), 10.0, 2, flaky).unwrap();
        assert_eq!((e.capacity, e.first_failing), (Some(9.0), Some(10.0)));
        assert_eq!(e.tally(10.0), (2, 1), "failed one of its two runs");
        assert_eq!(e.tally(9.0).1, 0);
        assert!(e.confirmed);
    }

    #[test]
    fn the_ends_of_the_range_are_said() {
        let all = search(counts(8.0), 6.0, 2, holds(100.0)).unwrap();
        assert_eq!((all.capacity, all.first_failing), (Some(8.0), None));
        assert_eq!(all.tally(8.0), (2, 0));
        let none = search(counts(8.0), 3.0, 2, holds(0.0)).unwrap();
        assert_eq!((none.capacity, none.first_failing), (None, Some(1.0)));
        assert_eq!(none.tally(1.0), (2, 2));
    }

    #[test]
    fn a_bitrate_is_searched_to_its_resolution() {
        let d = Domain {
            min: 1.0,
            max: 100.0,
            step: 0.5,
        };
        let e = search(d, 30.0, 1, holds(37.3)).unwrap();
        assert_eq!((e.capacity, e.first_failing), (Some(37.0), Some(37.5)));
    }

    #[test]
    fn errors_of_the_prober_end_the_search() {
        let r = search(counts(10.0), 5.0, 2, |_, _| Err::<bool, _>("no stack"));
        assert_eq!(r, Err("no stack"));
    }
}
