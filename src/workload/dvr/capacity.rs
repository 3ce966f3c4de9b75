//! What a capacity search needs of dvr: it varies the recorders, the players or the bitrate;
//! its hammering run is seed 000's (every stream as fast as the stack allows); and the search
//! starts where that run's guarantee points: R recorders each guaranteed G Mbit/s carry R x G
//! Mbit/s of recording, so about R x G / bitrate recorders at `bitrate`. What the hammering
//! run moved, every stream's throughput together, bounds what any capacity may ask.

use super::figures::Verdict;
use crate::params::Params;
use crate::workload::realtime::capacity::RealtimeCapacity;
use crate::workload::Estimate;
use serde_json::Value as Json;

/// dvr's part of a capacity search.
pub static CAPACITY: RealtimeCapacity<Verdict> = RealtimeCapacity {
    varies: &["recorders", "players", "bitrate"],
    estimate,
    sustained,
};

/// Where a search of `vary` over `p` starts, from the verdict `v` of the hammering run (run
/// with `hammered`): the record guarantee (or the pre-roll, for players) it points to.
fn estimate(v: &Verdict, p: &Params, hammered: &Params, vary: &str) -> Option<Estimate> {
    let bitrate = p.f64("bitrate");
    let rec = hammered.u64("recorders") as f64;
    match vary {
        "recorders" | "bitrate" => {
            let g = v.record_mbit_guaranteed?;
            let (value, basis) = if vary == "recorders" {
                (
                    rec * g / bitrate,
                    format!("{rec} recorders hammering were each guaranteed {g:.1} Mbit/s: {rec} x {g:.1} / {bitrate}"),
                )
            } else {
                let now = p.u64("recorders").max(1) as f64;
                (
                    rec * g / now,
                    format!("{rec} recorders hammering were each guaranteed {g:.1} Mbit/s: {rec} x {g:.1} / {now} recorders"),
                )
            };
            Some(Estimate {
                value,
                guarantee_mbit: g,
                basis,
            })
        }
        "players" => {
            // A player whose two worst consecutive reads take preroll_s is guaranteed its
            // read's bits over that time.
            let pre = v.playback_preroll_s.filter(|&s| s > 0.0)?;
            let bits = (hammered.u64("io_size") * hammered.u64("playback_ios")) as f64 * 8.0;
            let g = bits / pre / 1e6;
            let players = hammered.u64("players") as f64;
            Some(Estimate {
                value: players * g / bitrate,
                guarantee_mbit: g,
                basis: format!("{players} players hammering needed {pre:.2} s of pre-roll for {} reads: {g:.1} Mbit/s each, {players} x {g:.1} / {bitrate}", hammered.u64("playback_ios")),
            })
        }
        _ => None,
    }
}

/// What every stream of the hammering run moved together, MB/s: the sum of their rates.
fn sustained(_: &Json, streams: &[Json]) -> Option<f64> {
    let rates: Option<Vec<f64>> = streams.iter().map(|s| s["mbit_s"].as_f64()).collect();
    rates
        .filter(|r| !r.is_empty())
        .map(|r| r.iter().sum::<f64>() / 8.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{CapacityKind, Workload};
    use serde_json::json;

    #[test]
    fn the_estimate_is_what_the_hammering_guarantee_carries() {
        let p = super::super::Dvr
            .resolve(&[("pacing".into(), "realtime".into())])
            .unwrap();
        let h = CAPACITY.hammer(&p);
        assert_eq!(h.text("pacing"), "max");
        let verdict = json!({
            "record_mbit_guaranteed": 33.5, "playback_preroll_s": 1.0,
            "record_fairness_jain": null, "playback_fairness_jain": null,
            "record_completion_spread": null, "playback_completion_spread": null,
            "target_mbit": 19.4, "meets_target": true
        });
        let e = CAPACITY.estimate(&p, &h, "recorders", &verdict).unwrap();
        assert!((e.value - 8.0 * 33.5 / 19.4).abs() < 1e-9, "{e:?}");
        assert_eq!(e.guarantee_mbit, 33.5);
        let b = CAPACITY.estimate(&p, &h, "bitrate", &verdict).unwrap();
        assert!((b.value - 33.5).abs() < 1e-9);
        // Two 1 MiB reads in 1 s: 16.8 Mbit/s a player, two of them at 19.4.
        let pl = CAPACITY.estimate(&p, &h, "players", &verdict).unwrap();
        assert!((pl.guarantee_mbit - 2.0 * 8.388608).abs() < 1e-9);
        assert!(CAPACITY.estimate(&p, &h, "samples", &verdict).is_none());
    }
}
