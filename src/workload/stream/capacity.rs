//! What a capacity search needs of stream: it varies the writers (cameras), the readers or the
//! bitrate; its hammering run is seed 001's (every writer streaming as fast as the stack takes
//! it, for the same duration); and the search starts where that run's sustained aggregate
//! points: A MB/s carry A x 8 / bitrate streams at `bitrate`; and no capacity may ask more
//! than those A MB/s.

use super::figures::Verdict;
use crate::params::Params;
use crate::workload::realtime::capacity::RealtimeCapacity;
use crate::workload::Estimate;
use serde_json::Value as Json;

/// stream's part of a capacity search.
pub static CAPACITY: RealtimeCapacity<Verdict> = RealtimeCapacity {
    varies: &["writers", "readers", "bitrate"],
    estimate,
    sustained,
};

/// Where a search of `vary` over `p` starts, from the verdict `v` of the hammering run (run
/// with `hammered`): the streams its sustained aggregate carries at `bitrate`.
fn estimate(v: &Verdict, p: &Params, hammered: &Params, vary: &str) -> Option<Estimate> {
    let mbit = v.sustained()? * 8.0;
    let streams = (hammered.u64("writers") + hammered.u64("readers")).max(1) as f64;
    let bitrate = p.f64("bitrate");
    let basis = |what: String| {
        format!(
            "{streams} streams as fast as they could sustained {:.1} MB/s together: {what}",
            mbit / 8.0
        )
    };
    let (value, how) = match vary {
        "writers" => (
            mbit / bitrate - p.u64("readers") as f64,
            format!("{mbit:.0} / {bitrate} less {} readers", p.u64("readers")),
        ),
        "readers" => (
            mbit / bitrate - p.u64("writers") as f64,
            format!("{mbit:.0} / {bitrate} less {} writers", p.u64("writers")),
        ),
        "bitrate" => {
            let now = (p.u64("writers") + p.u64("readers")).max(1) as f64;
            (mbit / now, format!("{mbit:.0} / {now} streams"))
        }
        _ => return None,
    };
    Some(Estimate {
        value,
        guarantee_mbit: mbit / streams,
        basis: basis(how),
    })
}

/// What the hammering run sustained, MB/s, as its verdict says.
fn sustained(verdict: &Json, _: &[Json]) -> Option<f64> {
    serde_json::from_value::<Verdict>(verdict.clone())
        .ok()?
        .sustained()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{CapacityKind, Workload};
    use serde_json::json;

    #[test]
    fn the_estimate_is_what_the_hammering_aggregate_carries() {
        let p = super::super::Stream
            .resolve(&[("pacing".into(), "realtime".into())])
            .unwrap();
        let h = CAPACITY.hammer(&p);
        assert_eq!(h.text("pacing"), "max");
        let verdict = json!({
            "settled_mb_s": 300.0, "settled": true, "settle_s": 5.0, "mean_mb_s": 290.0,
            "total_mb_s": 280.0, "sync_s": 1.0, "burstiness": 0.1,
            "stream_fairness_jain": 1.0, "raw_mb_s": null, "raw_fraction": null,
            "intervals": 60
        });
        // 300 MB/s = 2400 Mbit/s: 24 cameras at 100 Mbit/s.
        let e = CAPACITY.estimate(&p, &h, "writers", &verdict).unwrap();
        assert!((e.value - 24.0).abs() < 1e-9, "{e:?}");
        assert!(
            (e.guarantee_mbit - 300.0).abs() < 1e-9,
            "8 writers: 300 Mbit/s each"
        );
        let b = CAPACITY.estimate(&p, &h, "bitrate", &verdict).unwrap();
        assert!((b.value - 300.0).abs() < 1e-9);
    }
}
