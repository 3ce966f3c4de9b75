//! Fairness between streams of one role: Jain's index over throughputs, and the spread of the
//! time each stream took to collect its samples.

/// Jain's fairness index (Σx)² / (n Σx²): 1 when all equal, 1/n when one stream has it all.
/// `None` for no streams; 1 when every throughput is zero.
pub fn jain(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if sq == 0.0 {
        return Some(1.0);
    }
    Some(sum * sum / (xs.len() as f64 * sq))
}

/// Slowest over fastest completion time (1 = all finished together). `None` when empty or
/// when some stream took no time.
pub fn spread(times: &[f64]) -> Option<f64> {
    let max = times.iter().cloned().fold(f64::NAN, f64::max);
    let min = times.iter().cloned().fold(f64::NAN, f64::min);
    if times.is_empty() || min <= 0.0 {
        None
    } else {
        Some(max / min)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hand_computed() {
        assert_eq!(jain(&[1.0, 1.0, 1.0, 1.0]), Some(1.0));
        assert_eq!(jain(&[1.0, 0.0, 0.0, 0.0]), Some(0.25));
        // (1+2)^2 / (2 * (1+4)) = 9/10
        assert!((jain(&[1.0, 2.0]).unwrap() - 0.9).abs() < 1e-12);
        assert_eq!(jain(&[]), None);
        // seed 000, ext4 defaults: playback 0 finished about twice as fast as playback 1
        assert_eq!(spread(&[400.0, 800.0]), Some(2.0));
        assert_eq!(spread(&[0.0, 1.0]), None);
    }

    proptest! {
        #[test]
        fn jain_is_between_one_over_n_and_one(xs in prop::collection::vec(0.0f64..1e9, 1..40)) {
            let j = jain(&xs).unwrap();
            let n = xs.len() as f64;
            prop_assert!(j <= 1.0 + 1e-12, "{j}");
            prop_assert!(j >= 1.0 / n - 1e-12, "{j} < 1/{n}");
        }
    }
}
