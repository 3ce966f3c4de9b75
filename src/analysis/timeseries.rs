//! Time series of each stream in each phase: I/Os completed, MB/s, mean and max access time per
//! interval (1 s unless the workload harvests at another interval), bucketed by completion time;
//! each phase's intervals start when its sampling began. A real-time stream's rows also carry
//! its buffer's occupancy (peak and end of each interval), the bytes it dropped and the time it
//! stalled, from the replay of its buffer ([`super::buffer`]). Read one stream at a time, so
//! memory follows the number of intervals, not of samples.

use super::buffer::BufferInterval;
use crate::engine::{Sample, SampleSet};
use std::collections::BTreeMap;

/// A real-time stream's buffer per interval of one phase, from the phase's sampling start.
#[derive(Debug, Clone, PartialEq)]
pub struct BufferSeries {
    /// Index of the stream in the set.
    pub stream: usize,
    /// Index of the phase.
    pub phase: u16,
    pub intervals: Vec<BufferInterval>,
}

/// One interval of one stream in one phase.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalRow {
    /// Start of the interval, seconds since the trial's time origin.
    pub start_s: f64,
    pub phase: String,
    pub stream: String,
    pub role: String,
    pub ios: u64,
    pub errors: u64,
    /// Megabytes (10^6 bytes) per second over the interval.
    pub mb_s: f64,
    pub lat_mean_ms: f64,
    pub lat_max_ms: f64,
    /// A real-time stream's buffer in the interval; `None` for other streams.
    pub buffer: Option<BufferInterval>,
}

/// What one interval accumulates.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bucket {
    pub ios: u64,
    pub errors: u64,
    pub bytes: u64,
    pub lat_sum_ns: u64,
    pub lat_max_ns: u64,
}

impl Bucket {
    pub fn add(&mut self, s: &Sample) {
        self.ios += 1;
        if s.errno != 0 {
            self.errors += 1;
        }
        self.bytes += s.bytes;
        self.lat_sum_ns += s.latency_ns;
        self.lat_max_ns = self.lat_max_ns.max(s.latency_ns);
    }
}

/// Every interval of stream `stream`, by (phase index, interval number since the phase's
/// sampling began), from each phase's first interval with a completion to its last, gaps
/// included.
pub fn buckets_of(
    set: &SampleSet,
    stream: usize,
    interval_s: f64,
) -> std::io::Result<BTreeMap<(u16, u64), Bucket>> {
    let width = (interval_s * 1e9).max(1.0);
    let zeros: Vec<u64> = set.phases.iter().map(|p| p.zero_ns()).collect();
    let mut m: BTreeMap<(u16, u64), Bucket> = BTreeMap::new();
    set.each(stream, &mut |s| {
        let zero = zeros.get(s.phase as usize).copied().unwrap_or(0);
        let k = (s.done_ns().saturating_sub(zero) as f64 / width) as u64;
        m.entry((s.phase, k)).or_default().add(s);
    })?;
    let mut spans: BTreeMap<u16, (u64, u64)> = BTreeMap::new();
    for &(p, k) in m.keys() {
        let e = spans.entry(p).or_insert((k, k));
        e.0 = e.0.min(k);
        e.1 = e.1.max(k);
    }
    for (p, (lo, hi)) in spans {
        for k in lo..=hi {
            m.entry((p, k)).or_default();
        }
    }
    Ok(m)
}

/// The time series of all streams, ordered by interval, then phase, then stream; the
/// intervals of `buffers` join their stream's rows (and add rows where the stream completed
/// no I/O).
pub fn per_interval(
    set: &SampleSet,
    interval_s: f64,
    buffers: &[BufferSeries],
) -> std::io::Result<Vec<IntervalRow>> {
    let mut rows = Vec::new();
    for (i, st) in set.streams.iter().enumerate() {
        let mut buckets = buckets_of(set, i, interval_s)?;
        let mine: Vec<&BufferSeries> = buffers.iter().filter(|b| b.stream == i).collect();
        for b in &mine {
            for k in 0..b.intervals.len() as u64 {
                buckets.entry((b.phase, k)).or_default();
            }
        }
        for ((p, k), b) in buckets {
            let buffer = mine
                .iter()
                .find(|s| s.phase == p)
                .and_then(|s| s.intervals.get(k as usize))
                .copied();
            let phase = set.phases.get(p as usize);
            rows.push(IntervalRow {
                start_s: phase.map_or(0.0, |ph| ph.zero_ns() as f64 / 1e9) + k as f64 * interval_s,
                phase: phase.map_or_else(|| p.to_string(), |ph| ph.name.clone()),
                stream: st.name.clone(),
                role: st.role.clone(),
                ios: b.ios,
                errors: b.errors,
                mb_s: b.bytes as f64 / 1e6 / interval_s,
                lat_mean_ms: if b.ios > 0 {
                    b.lat_sum_ns as f64 / b.ios as f64 / 1e6
                } else {
                    0.0
                },
                lat_max_ms: b.lat_max_ns as f64 / 1e6,
                buffer,
            });
        }
    }
    rows.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Op, PhaseRecord, StreamSamples};

    fn set(samples: Vec<Sample>) -> SampleSet {
        let st = StreamSamples {
            name: "record0".into(),
            role: "record".into(),
            op: Op::Write,
            samples,
        };
        let phases = vec![PhaseRecord::stream("a"), PhaseRecord::stream("b")];
        SampleSet::in_memory(vec![st], phases)
    }

    fn mk(issue_ms: u64, lat_ms: u64, phase: u16) -> Sample {
        Sample {
            bytes: 1_000_000,
            issue_ns: issue_ms * 1_000_000,
            latency_ns: lat_ms * 1_000_000,
            phase,
            ..Default::default()
        }
    }

    #[test]
    fn buckets_by_completion_interval_and_phase() {
        let s = set(vec![
            mk(0, 400, 0),
            mk(400, 500, 0),
            mk(900, 300, 0),
            mk(1200, 2000, 0),
        ]);
        let rows = per_interval(&s, 1.0, &[]).unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!((rows[0].ios, rows[0].mb_s), (2, 2.0));
        assert_eq!(rows[0].lat_mean_ms, 450.0);
        assert_eq!(rows[1].lat_max_ms, 300.0);
        assert_eq!(rows[2].ios, 0);
        assert_eq!(rows[3].lat_max_ms, 2000.0);
        assert!(rows.iter().all(|r| r.phase == "a"));
        let halves = per_interval(&s, 0.5, &[]).unwrap();
        assert_eq!(halves[0].mb_s, 2.0, "one MB in half a second");
    }

    #[test]
    fn each_phase_has_its_own_intervals_from_its_sampling_start() {
        let mut s = set(vec![mk(0, 100, 0), mk(5000, 100, 1), mk(7000, 100, 1)]);
        s.phases[1].sampling_start_s = Some(4.5);
        let rows = per_interval(&s, 1.0, &[]).unwrap();
        let got: Vec<(f64, &str, u64)> = rows
            .iter()
            .map(|r| (r.start_s, r.phase.as_str(), r.ios))
            .collect();
        assert_eq!(
            got,
            [(0.0, "a", 1), (4.5, "b", 1), (5.5, "b", 0), (6.5, "b", 1)]
        );
    }

    #[test]
    fn a_buffer_joins_its_streams_rows_and_fills_intervals_without_io() {
        let s = set(vec![mk(2500, 100, 0)]);
        let level = |end| BufferInterval {
            peak: end + 1,
            end,
            ..Default::default()
        };
        let series = BufferSeries {
            stream: 0,
            phase: 0,
            intervals: vec![level(10), level(20), level(30), level(40)],
        };
        let rows = per_interval(&s, 1.0, &[series]).unwrap();
        let got: Vec<(f64, u64, Option<u64>)> = rows
            .iter()
            .map(|r| (r.start_s, r.ios, r.buffer.map(|b| b.end)))
            .collect();
        assert_eq!(
            got,
            [
                (0.0, 0, Some(10)),
                (1.0, 0, Some(20)),
                (2.0, 1, Some(30)),
                (3.0, 0, Some(40))
            ]
        );
    }
}
