//! Downsampling of big series for charts: split the points into buckets of equal count and
//! keep each bucket's minimum and maximum, so spikes survive where a plain average would
//! hide them.

/// Indices of the points to keep so that at most `max_points` remain (at least 2). Points
/// are bucketed in order; each bucket keeps its minimum and maximum of `ys`, in their original
/// order. Every index is kept when there are no more than `max_points` values. NaN values are
/// never chosen as a bucket's minimum or maximum unless the whole bucket is NaN.
pub fn min_max_indices(ys: &[f64], max_points: usize) -> Vec<usize> {
    let n = ys.len();
    let max_points = max_points.max(2);
    if n <= max_points {
        return (0..n).collect();
    }
    let buckets = max_points / 2;
    let mut keep = Vec::with_capacity(buckets * 2);
    for b in 0..buckets {
        let (lo, hi) = (b * n / buckets, (b + 1) * n / buckets);
        if lo >= hi {
            continue;
        }
        let (mut imin, mut imax) = (lo, lo);
        for i in lo..hi {
            if ys[i] < ys[imin] || ys[imin].is_nan() {
                imin = i;
            }
            if ys[i] > ys[imax] || ys[imax].is_nan() {
                imax = i;
            }
        }
        keep.push(imin.min(imax));
        if imin != imax {
            keep.push(imin.max(imax));
        }
    }
    keep
}

/// Whether a series of `n` points is reduced at `max_points`.
pub fn is_reduced(n: usize, max_points: usize) -> bool {
    n > max_points.max(2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn small_series_is_kept_whole() {
        assert_eq!(min_max_indices(&[3.0, 1.0, 2.0], 10), vec![0, 1, 2]);
        assert!(min_max_indices(&[], 10).is_empty());
    }

    #[test]
    fn a_lone_spike_survives() {
        let mut ys = vec![200.0; 2048];
        ys[1337] = 650.0;
        ys[7] = 10.0;
        let keep = min_max_indices(&ys, 100);
        assert!(keep.len() <= 100);
        assert!(keep.contains(&1337) && keep.contains(&7));
    }

    proptest! {
        #[test]
        fn min_and_max_of_every_bucket_survive(
            ys in prop::collection::vec(-1e6f64..1e6, 0..3000),
            max_points in 2usize..400,
        ) {
            let keep = min_max_indices(&ys, max_points);
            prop_assert!(keep.len() <= max_points.max(2));
            prop_assert!(keep.windows(2).all(|w| w[0] < w[1]), "indices ascend");
            if ys.len() > max_points {
                let buckets = max_points / 2;
                for b in 0..buckets {
                    let (lo, hi) = (b * ys.len() / buckets, (b + 1) * ys.len() / buckets);
                    let kept: Vec<f64> = keep.iter().filter(|&&i| i >= lo && i < hi).map(|&i| ys[i]).collect();
                    let min = ys[lo..hi].iter().cloned().fold(f64::INFINITY, f64::min);
                    let max = ys[lo..hi].iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                    prop_assert!(kept.contains(&min), "bucket {b}: min {min} lost");
                    prop_assert!(kept.contains(&max), "bucket {b}: max {max} lost");
                }
            } else {
                prop_assert_eq!(keep.len(), ys.len());
            }
        }
    }
}
