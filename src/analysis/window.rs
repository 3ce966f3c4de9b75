//! Moving windows over one stream's samples (the record guarantee) and sums of consecutive
//! samples (the playback pre-roll), exactly as DESIGN.md defines them.

/// One point of a moving-window series: the window ends when a sample completes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowPoint {
    /// Completion time of the sample that ends the window, ns since sampling began.
    pub end_ns: u64,
    /// Mean access time of the samples in the window, ns.
    pub mean_ns: f64,
    /// Samples in the window.
    pub count: usize,
}

/// Moving average of access time over a window of `window_ns`, one point per sample.
///
/// `samples` are `(issue_ns, latency_ns)` in issue order. The window ending at sample i holds
/// every sample j <= i whose completion lies in (done_i - W, done_i]. A window is *full* when
/// done_i - W is at or after the stream's first issue; only full windows are returned, so a
/// single slow I/O at the start cannot pose as a whole window. When the stream ran for less
/// than W, one window over all its samples is returned and `full` is false.
pub fn moving_average(samples: &[(u64, u64)], window_ns: u64) -> (Vec<WindowPoint>, bool) {
    if samples.is_empty() {
        return (Vec::new(), false);
    }
    let first_issue = samples[0].0;
    let mut out = Vec::new();
    let mut lo = 0usize;
    let mut sum: u128 = 0;
    for i in 0..samples.len() {
        let (issue, lat) = samples[i];
        let done = issue + lat;
        sum += lat as u128;
        while lo < i && samples[lo].0 + samples[lo].1 <= done.saturating_sub(window_ns) {
            sum -= samples[lo].1 as u128;
            lo += 1;
        }
        if done >= first_issue + window_ns {
            let count = i - lo + 1;
            out.push(WindowPoint {
                end_ns: done,
                mean_ns: sum as f64 / count as f64,
                count,
            });
        }
    }
    if out.is_empty() {
        let total: u128 = samples.iter().map(|s| s.1 as u128).sum();
        let last = samples[samples.len() - 1];
        out.push(WindowPoint {
            end_ns: last.0 + last.1,
            mean_ns: total as f64 / samples.len() as f64,
            count: samples.len(),
        });
        return (out, false);
    }
    (out, true)
}

/// Sums of every `k` consecutive latencies (the time to read k fragments back to back).
/// Empty when there are fewer than k values.
pub fn consecutive_sums(latencies_ns: &[u64], k: usize) -> Vec<u64> {
    if k == 0 || latencies_ns.len() < k {
        return Vec::new();
    }
    let mut sum: u64 = latencies_ns[..k].iter().sum();
    let mut out = Vec::with_capacity(latencies_ns.len() - k + 1);
    out.push(sum);
    for i in k..latencies_ns.len() {
        sum = sum + latencies_ns[i] - latencies_ns[i - k];
        out.push(sum);
    }
    out
}

/// Sustainable bitrate in Mbit/s (10^6 bit/s) for `io_bytes` per I/O at `access_s` per I/O.
pub fn mbit_per_s(io_bytes: u64, access_s: f64) -> f64 {
    io_bytes as f64 * 8.0 / access_s / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MS: u64 = 1_000_000;

    /// Back-to-back samples (QD1) with the given latencies in ms.
    fn serial(lat_ms: &[u64]) -> Vec<(u64, u64)> {
        let mut t = 0;
        lat_ms
            .iter()
            .map(|&l| {
                let s = (t, l * MS);
                t += l * MS;
                s
            })
            .collect()
    }

    #[test]
    fn seed_000_worked_numbers() {
        // 1,000,000-byte I/Os: 250 ms -> 32 Mbit/s, 400 ms -> 20, 650 ms -> 12.3.
        assert!((mbit_per_s(1_000_000, 0.250) - 32.0).abs() < 1e-9);
        assert!((mbit_per_s(1_000_000, 0.400) - 20.0).abs() < 1e-9);
        assert_eq!(format!("{:.1}", mbit_per_s(1_000_000, 0.650)), "12.3");
        // worst pair average 750 ms -> 1.5 s pre-roll
        let sums = consecutive_sums(&[400 * MS, 750 * MS, 750 * MS, 300 * MS], 2);
        assert_eq!(sums, vec![1150 * MS, 1500 * MS, 1050 * MS]);
        assert_eq!(*sums.iter().max().unwrap() as f64 / 1e9, 1.5);
    }

    #[test]
    fn window_hand_computed() {
        // 200 ms each for 5 s, then one 700 ms spike, then 200 ms again; W = 1 s.
        let mut lat = vec![200; 25];
        lat.push(700);
        lat.extend([200; 10]);
        let (pts, full) = moving_average(&serial(&lat), 1000 * MS);
        assert!(full);
        // First full window ends at 1000 ms with samples 0..5: mean 200.
        assert_eq!(pts[0].end_ns, 1000 * MS);
        assert_eq!(pts[0].mean_ns, 200.0 * MS as f64);
        // The window ending with the spike (done 5700 ms) holds completions in (4700, 5700]:
        // samples done at 4800, 5000 and the spike: (200+200+700)/3.
        let peak = pts.iter().map(|p| p.mean_ns).fold(0.0, f64::max);
        assert!((peak - 1100.0 / 3.0 * MS as f64).abs() < 1.0);
    }

    #[test]
    fn short_run_gives_one_partial_window() {
        let (pts, full) = moving_average(&serial(&[100, 300]), 5000 * MS);
        assert!(!full);
        assert_eq!(pts.len(), 1);
        assert_eq!(pts[0].mean_ns, 200.0 * MS as f64);
    }

    proptest! {
        #[test]
        fn window_mean_never_exceeds_largest_latency_in_it(
            lat in prop::collection::vec(1u64..2_000, 1..200),
            w in 1u64..3_000,
        ) {
            let s = serial(&lat);
            let (pts, _) = moving_average(&s, w * MS);
            for p in pts {
                let members = s.iter().filter(|(i, l)| i + l <= p.end_ns && i + l > p.end_ns.saturating_sub(w * MS)).map(|x| x.1);
                let max = members.clone().max().unwrap_or(u64::MAX);
                let min = members.min().unwrap_or(0);
                prop_assert!(p.mean_ns <= max as f64 + 1e-6);
                prop_assert!(p.mean_ns >= min as f64 - 1e-6);
            }
        }

        #[test]
        fn consecutive_sums_match_naive(lat in prop::collection::vec(0u64..1_000_000, 0..50), k in 1usize..5) {
            let fast = consecutive_sums(&lat, k);
            let naive: Vec<u64> = if lat.len() < k { vec![] } else { lat.windows(k).map(|w| w.iter().sum()).collect() };
            prop_assert_eq!(fast, naive);
        }
    }
}
