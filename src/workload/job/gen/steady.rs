//! Two ways a fio job ends by what it measures: steady state (`steadystate`, `ss_dur`,
//! `ss_ramp`, `steadystate_check_interval`): once the job's IOPS, bandwidth or mean latency per
//! interval, over its last `ss_dur`, stay within the limit (their largest deviation from their
//! mean, or the slope of their fitted line), the job ends; and a latency target
//! (`latency_target`, `latency_window`, `latency_percentile`, `latency_run`): the queue depth is
//! searched from 1 up to `iodepth`, doubling while a window's I/Os meet the target (that share
//! of them within it) and halving towards the last good depth when they do not, until the depth
//! settles; then one more window runs at it, and the job ends (or runs on with `latency_run`).

use super::super::spec::{LatencyTarget, Steady, SteadyMetric};
use std::collections::VecDeque;

/// Steady-state detection over one clone's completions.
#[derive(Debug, Clone)]
pub struct SteadyState {
    spec: Steady,
    /// The interval being summed: its start, I/Os, bytes and latency sum.
    start: Option<u64>,
    ios: u64,
    bytes: u64,
    lat_sum: u128,
    /// The values of the last `dur` worth of intervals.
    values: VecDeque<f64>,
    /// When it was reached, ns, and the figure that said so.
    pub attained: Option<(u64, f64)>,
    /// The last figure computed.
    pub last: Option<f64>,
}

impl SteadyState {
    pub fn new(spec: Steady) -> SteadyState {
        SteadyState {
            spec,
            start: None,
            ios: 0,
            bytes: 0,
            lat_sum: 0,
            values: VecDeque::new(),
            attained: None,
            last: None,
        }
    }

    /// A completion at `now` of `bytes` after `lat` ns; `job_start` when the job began; `ns_s`
    /// engine ns per second of the job's time. True once steady state is reached.
    pub fn add(&mut self, now: u64, bytes: u64, lat: u64, job_start: u64, ns_s: f64) -> bool {
        if self.attained.is_some() {
            return true;
        }
        let iv = ((self.spec.interval * ns_s) as u64).max(1);
        loop {
            let start = *self.start.get_or_insert(now);
            if now < start + iv {
                break;
            }
            let secs = self.spec.interval;
            let v = match self.spec.metric {
                SteadyMetric::Iops => self.ios as f64 / secs,
                SteadyMetric::Bw => self.bytes as f64 / secs,
                SteadyMetric::Lat if self.ios > 0 => self.lat_sum as f64 / self.ios as f64,
                SteadyMetric::Lat => 0.0,
            };
            self.values.push_back(v);
            let keep = (self.spec.dur / self.spec.interval).round().max(2.0) as usize;
            while self.values.len() > keep {
                self.values.pop_front();
            }
            self.ios = 0;
            self.bytes = 0;
            self.lat_sum = 0;
            self.start = Some(start + iv);
            let past_ramp =
                now.saturating_sub(job_start) as f64 >= (self.spec.ramp + self.spec.dur) * ns_s;
            if past_ramp && self.values.len() >= keep && self.check() {
                self.attained = Some((now, self.last.unwrap_or(0.0)));
                return true;
            }
        }
        self.ios += 1;
        self.bytes += bytes;
        self.lat_sum += u128::from(lat);
        false
    }

    /// Whether the values over the window meet the criterion.
    fn check(&mut self) -> bool {
        let n = self.values.len() as f64;
        let mean = self.values.iter().sum::<f64>() / n;
        let figure = if self.spec.slope {
            // Least-squares slope per interval.
            let xm = (n - 1.0) / 2.0;
            let (mut num, mut den) = (0.0, 0.0);
            for (i, v) in self.values.iter().enumerate() {
                num += (i as f64 - xm) * (v - mean);
                den += (i as f64 - xm) * (i as f64 - xm);
            }
            (num / den.max(1e-12)).abs()
        } else {
            self.values
                .iter()
                .map(|v| (v - mean).abs())
                .fold(0.0, f64::max)
        };
        let figure = if self.spec.percent && mean > 0.0 {
            figure / mean * 100.0
        } else {
            figure
        };
        self.last = Some(figure);
        figure <= self.spec.limit
    }
}

/// The latency-target search of one clone.
#[derive(Debug, Clone)]
pub struct LatencySearch {
    spec: LatencyTarget,
    max: u64,
    pub qd: u64,
    low: u64,
    high: u64,
    stable: u32,
    window_start: Option<u64>,
    ios: u64,
    failed: u64,
    /// The last window runs at the depth found.
    end_run: bool,
    /// The search is over (the job ends, unless `latency_run`).
    pub done: bool,
    /// No depth meets the target, not even 1.
    pub impossible: bool,
}

impl LatencySearch {
    pub fn new(spec: LatencyTarget, iodepth: u64) -> LatencySearch {
        LatencySearch {
            spec,
            max: iodepth.max(1),
            qd: 1,
            low: 1,
            high: iodepth.max(1),
            stable: 0,
            window_start: None,
            ios: 0,
            failed: 0,
            end_run: false,
            done: false,
            impossible: false,
        }
    }

    fn new_window(&mut self, now: u64) {
        self.window_start = Some(now);
        self.ios = 0;
        self.failed = 0;
    }

    /// A step down after a failure; false when there is no depth below.
    fn failed_step(&mut self, now: u64) -> bool {
        if self.qd == 1 {
            return false;
        }
        self.high = self.qd;
        if self.qd == self.low {
            self.low = self.low.saturating_sub(1).max(1);
        }
        self.qd = ((self.qd + self.low) / 2).max(1);
        self.stable = 0;
        self.new_window(now);
        true
    }

    fn success_step(&mut self, now: u64) {
        let before = self.qd;
        self.low = self.qd;
        if self.qd + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        self.qd = if self.high != self.max {
            (self.qd + self.high) / 2
        } else {
            self.qd * 2
        }
        .clamp(1, self.max);
        if !self.spec.run && self.qd == before {
            if self.end_run {
                self.done = true;
            } else {
                self.end_run = true;
            }
        }
        self.new_window(now);
    }

    /// A completion at `now` after `lat` ns (engine time; `ns_s` ns per second of the job's).
    pub fn add(&mut self, now: u64, lat: u64, ns_s: f64) {
        if self.done || self.impossible {
            return;
        }
        let start = *self.window_start.get_or_insert(now);
        self.ios += 1;
        if lat > (self.spec.target * ns_s) as u64 {
            if self.spec.percentile >= 100.0 {
                if !self.failed_step(now) {
                    self.impossible = true;
                }
                return;
            }
            self.failed += 1;
        }
        if now - start < (self.spec.window * ns_s) as u64 {
            return;
        }
        let ok = (self.ios - self.failed) as f64 / self.ios.max(1) as f64 * 100.0;
        if ok >= self.spec.percentile {
            self.success_step(now);
        } else if !self.failed_step(now) {
            self.impossible = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_rate_is_steady_and_a_climbing_one_is_not() {
        let spec = Steady {
            metric: SteadyMetric::Iops,
            slope: false,
            limit: 10.0,
            percent: true,
            dur: 5.0,
            ramp: 1.0,
            interval: 1.0,
        };
        let ns = 1e9;
        let mut flat = SteadyState::new(spec.clone());
        let mut at = None;
        for k in 0..20_000u64 {
            // 1000 I/Os a second.
            if flat.add(k * 1_000_000, 4096, 100, 0, ns) {
                at = Some(k);
                break;
            }
        }
        let at = at.expect("steady");
        assert!((6000..7100).contains(&at), "after ramp + dur: {at}");
        let mut climbing = SteadyState::new(spec);
        for sec in 0..15u64 {
            // 30% more I/Os each second than the one before.
            let n = (500.0 * 1.3f64.powi(sec as i32)) as u64;
            for k in 0..n {
                let t = sec * 1_000_000_000 + k * 1_000_000_000 / n;
                assert!(!climbing.add(t, 4096, 100, 0, ns));
            }
        }
    }

    #[test]
    fn the_search_settles_on_the_deepest_queue_meeting_the_target() {
        // Latency = 100 us x queue depth; target 1 ms: depth 10 is the most that meets it.
        let spec = LatencyTarget {
            target: 0.001,
            window: 0.01,
            percentile: 100.0,
            run: false,
        };
        let mut s = LatencySearch::new(spec, 32);
        let mut now = 0;
        for _ in 0..100_000 {
            if s.done {
                break;
            }
            now += 50_000;
            s.add(now, 100_000 * s.qd, 1e9);
        }
        assert!(s.done && !s.impossible);
        assert!((8..=10).contains(&s.qd), "{}", s.qd);
    }
}
