//! Per-second time series of each stream: I/Os completed, MB/s, mean and max access time,
//! bucketed by completion time since sampling began.

use crate::engine::StreamSamples;

/// One second of one stream.
#[derive(Debug, Clone, PartialEq)]
pub struct SecondRow {
    pub second: u64,
    pub stream: String,
    pub role: String,
    pub ios: u64,
    pub errors: u64,
    /// Megabytes (10^6 bytes) per second.
    pub mb_s: f64,
    pub lat_mean_ms: f64,
    pub lat_max_ms: f64,
}

/// The time series of all streams, ordered by second then stream.
pub fn per_second(streams: &[StreamSamples]) -> Vec<SecondRow> {
    let mut rows = Vec::new();
    for st in streams {
        let last = st.samples.iter().map(|s| s.done_ns() / 1_000_000_000).max();
        let Some(last) = last else { continue };
        let n = last as usize + 1;
        let mut ios = vec![0u64; n];
        let mut errs = vec![0u64; n];
        let mut bytes = vec![0u64; n];
        let mut lat_sum = vec![0u64; n];
        let mut lat_max = vec![0u64; n];
        for s in &st.samples {
            let b = (s.done_ns() / 1_000_000_000) as usize;
            ios[b] += 1;
            if s.errno != 0 {
                errs[b] += 1;
            }
            bytes[b] += s.bytes;
            lat_sum[b] += s.latency_ns;
            lat_max[b] = lat_max[b].max(s.latency_ns);
        }
        for b in 0..n {
            rows.push(SecondRow {
                second: b as u64,
                stream: st.name.clone(),
                role: st.role.clone(),
                ios: ios[b],
                errors: errs[b],
                mb_s: bytes[b] as f64 / 1e6,
                lat_mean_ms: if ios[b] > 0 {
                    lat_sum[b] as f64 / ios[b] as f64 / 1e6
                } else {
                    0.0
                },
                lat_max_ms: lat_max[b] as f64 / 1e6,
            });
        }
    }
    rows.sort_by_key(|r| r.second);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Op, Sample};

    #[test]
    fn buckets_by_completion_second() {
        let mk = |issue_ms: u64, lat_ms: u64| Sample {
            offset: 0,
            bytes: 1_000_000,
            issue_ns: issue_ms * 1_000_000,
            latency_ns: lat_ms * 1_000_000,
            lag_ns: 0,
            errno: 0,
        };
        let st = StreamSamples {
            name: "record0".into(),
            role: "record".into(),
            op: Op::Write,
            samples: vec![mk(0, 400), mk(400, 500), mk(900, 300), mk(1200, 2000)],
        };
        let rows = per_second(&[st]);
        assert_eq!(rows.len(), 4);
        assert_eq!((rows[0].ios, rows[0].mb_s), (2, 2.0));
        assert_eq!(rows[0].lat_mean_ms, 450.0);
        assert_eq!(rows[1].lat_max_ms, 300.0);
        assert_eq!(rows[2].ios, 0);
        assert_eq!(rows[3].lat_max_ms, 2000.0);
    }
}
