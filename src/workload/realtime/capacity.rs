//! What a capacity search (`iotrial capacity`) needs of a kind whose streams run in real time
//! ([`CapacityKind`]), the estimate its hammering run gives ([`Estimate`]), and the part every
//! such kind shares ([`RealtimeCapacity`]): what it varies, what its streams ask of the stack,
//! and its verdict read back before the kind's own estimate.

use crate::params::Params;
use serde::de::DeserializeOwned;
use serde_json::Value as Json;

/// What a capacity search (`iotrial capacity`) needs of a kind whose streams can run in real
/// time: what it may vary, the hammering run that estimates where to start, and the estimate.
pub trait CapacityKind: Sync {
    /// The parameters a search may vary: stream counts (whole numbers) and `bitrate`.
    fn varies(&self) -> &'static [&'static str];

    /// The parameters of the hammering run whose verdict estimates the capacity of a search
    /// over `p`: `p` with `pacing = max`.
    fn hammer(&self, p: &Params) -> Params {
        let mut h = p.clone();
        h.set(
            "pacing",
            crate::params::Value::Text(super::pacing::MAX.into()),
        );
        h
    }

    /// Where a search of `vary` over `p` starts, from the hammering run's `verdict` (run with
    /// the parameters `hammered`); `None` when the verdict has no figure to go by.
    fn estimate(
        &self,
        p: &Params,
        hammered: &Params,
        vary: &str,
        verdict: &Json,
    ) -> Option<Estimate>;

    /// What every stream of a run with parameters `p` asks of the stack together, MB/s (10^6
    /// bytes a second): the streams times their bitrate.
    fn demand_mb_s(&self, p: &Params) -> Option<f64>;

    /// What the hammering run moved through the stack, every stream together, MB/s, from
    /// its result.json's `verdict` and `streams`.
    fn sustained_mb_s(&self, verdict: &Json, streams: &[Json]) -> Option<f64>;
}

/// A capacity the hammering run suggests, and what it rests on.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// The value of the varied parameter.
    pub value: f64,
    /// The bitrate each stream of the hammering run was guaranteed (or sustained), Mbit/s.
    pub guarantee_mbit: f64,
    /// How the estimate was made, in words.
    pub basis: String,
}

/// A real-time kind's part of a capacity search: its record streams' parameter, its playback
/// streams' parameter and `bitrate` are what a search varies, and every stream asks `bitrate`
/// of the stack; the kind gives its estimate from its verdict `V` and what its hammering run
/// sustained.
pub struct RealtimeCapacity<V> {
    /// The record streams' count parameter, the playback streams', then `bitrate`.
    pub varies: &'static [&'static str; 3],
    /// The kind's estimate from the hammering run's verdict: (verdict, parameters of the
    /// search, parameters of the hammering run, the parameter varied).
    pub estimate: fn(&V, &Params, &Params, &str) -> Option<Estimate>,
    /// What the hammering run moved, every stream together, MB/s, from its result.json's
    /// `verdict` and `streams`.
    pub sustained: fn(&Json, &[Json]) -> Option<f64>,
}

impl<V: DeserializeOwned> CapacityKind for RealtimeCapacity<V> {
    fn varies(&self) -> &'static [&'static str] {
        self.varies
    }

    fn estimate(
        &self,
        p: &Params,
        hammered: &Params,
        vary: &str,
        verdict: &Json,
    ) -> Option<Estimate> {
        let v: V = serde_json::from_value(verdict.clone()).ok()?;
        (self.estimate)(&v, p, hammered, vary)
    }

    fn demand_mb_s(&self, p: &Params) -> Option<f64> {
        let streams = (p.u64(self.varies[0]) + p.u64(self.varies[1])) as f64;
        Some(streams * p.f64("bitrate") / 8.0)
    }

    fn sustained_mb_s(&self, verdict: &Json, streams: &[Json]) -> Option<f64> {
        (self.sustained)(verdict, streams)
    }
}
