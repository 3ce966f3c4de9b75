//! What a capacity search (`iotrial capacity`) needs of a kind whose streams run in real time
//! ([`CapacityKind`]), and the estimate its hammering run gives ([`Estimate`]).

use crate::params::Params;
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
        h.set("pacing", crate::params::Value::Text(super::MAX.into()));
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
