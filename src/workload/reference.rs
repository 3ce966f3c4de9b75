//! The trial of the same study a trial's figures can be relative to ([`Reference`]): the same
//! workload on the study's raw baseline stack, with what each of its drives wrote.

use serde_json::Value as Json;
use std::collections::BTreeMap;

/// Another trial of the same study a trial's figures can be relative to: the same workload on
/// the study's raw baseline stack (the drives written straight, without a filesystem).
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// The reference stack's name.
    pub stack: String,
    /// The workload kind of the reference trial.
    pub kind: String,
    /// Its verdict, as in its result.json.
    pub verdict: Json,
    /// The share of the reference stack's sequential bandwidth this trial's stack can use
    /// (a RAID10 over the same drives writes everything twice: one half).
    pub share: f64,
    /// What each of the reference trial's data devices wrote, interval by interval (its
    /// diskstats monitor): what one drive did raw, which an uneven raw load (eight writers on
    /// six drives) hides in the stack's total. Empty without the monitor.
    pub device_writes: BTreeMap<String, Vec<WriteInterval>>,
    /// When each phase of the reference trial began sampling (else began), seconds from its
    /// origin.
    pub phase_starts: BTreeMap<String, f64>,
    /// How many devices' worth of write bandwidth this trial's stack's data can use.
    pub data_devices: f64,
    /// What this trial's stack's data devices stream at by their models, MB/s: the slowest
    /// one's sequential write rate at its outer edge times [`Reference::data_devices`]; None
    /// unless every device is emulated.
    pub media_mb_s: Option<f64>,
}

/// One interval of a device's diskstats series.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteInterval {
    /// The phase the interval ended in.
    pub phase: Option<String>,
    /// When it ended, seconds from the trial's origin, and how long it was.
    pub end_s: f64,
    pub seconds: f64,
    /// Bytes written in it, 10^6.
    pub mb: f64,
}

/// Intervals shorter than this in all say too little of a device's rate to bound a stack by.
const MIN_RATE_S: f64 = 1.0;

impl Reference {
    /// The highest write rate (MB/s) one data device of the reference trial kept over the
    /// intervals of `phase` that began at least `after_s` seconds after the phase's start.
    pub fn best_device_mb_s(&self, phase: &str, after_s: f64) -> Option<f64> {
        let from = self.phase_starts.get(phase)? + after_s;
        let rate = |rows: &Vec<WriteInterval>| {
            let inside = rows.iter().filter(|r| {
                r.phase.as_deref() == Some(phase) && r.end_s - r.seconds >= from - 1e-3
            });
            let (mb, s) = inside.fold((0.0, 0.0), |(mb, s), r| (mb + r.mb, s + r.seconds));
            (s >= MIN_RATE_S).then(|| mb / s)
        };
        self.device_writes
            .values()
            .filter_map(rate)
            .reduce(f64::max)
    }
}
