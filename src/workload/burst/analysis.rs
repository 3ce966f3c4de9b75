//! burst's verdict: each burst's drain time (from the start of its updates until the sync that
//! follows them has put every update on the device), the victims' read latency (measured from
//! the intended issue time of each paced read, so a stalled read counts its whole wait) during
//! the bursts and between them, and the device's peak await and queue size over the burst and
//! sync phases: the highest of the diskstats monitor's intervals (iostat -x's per-second
//! figures), so a one-second spike inside a long phase shows.

use super::{BURST, GAP, SYNC};
use crate::analysis::stats::percentile;
use crate::engine::SampleSet;
use crate::params::Params;
use crate::present::Rows;
use crate::workload::{AnalysisError, Outcome, Seen};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// result.json's `verdict`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    /// Mean drain time of a burst, s (model time).
    pub drain_s: Option<f64>,
    pub drain_s_max: Option<f64>,
    /// Each burst's drain time, s.
    pub drains_s: Vec<f64>,
    /// Victims' read latency during the bursts (burst and sync phases), ms.
    pub victim_burst_p50_ms: Option<f64>,
    pub victim_burst_p99_ms: Option<f64>,
    pub victim_burst_max_ms: Option<f64>,
    /// The same between bursts (gap phases), ms.
    pub victim_idle_p50_ms: Option<f64>,
    pub victim_idle_p99_ms: Option<f64>,
    pub victim_idle_max_ms: Option<f64>,
    /// The device's highest interval await over the burst and sync phases (iostat's await, one
    /// figure per monitor interval), ms of model time (the host's await times the time
    /// scale); null without the diskstats monitor.
    pub peak_await_ms: Option<f64>,
    /// The device's highest interval queue size over the same phases (iostat's aqu-sz).
    pub peak_aqu_sz: Option<f64>,
    /// Operations of the updater during the bursts, and those that failed.
    pub update_ops: u64,
    pub errors: u64,
}

/// One stream's figures: result.json's `streams`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamFigures {
    pub name: String,
    pub role: String,
    pub ops: u64,
    pub errors: u64,
}

/// What analysis of a burst run gives.
pub struct BurstOutcome {
    pub verdict: Verdict,
    pub streams: Vec<StreamFigures>,
    pub warnings: Vec<String>,
}

/// p50, p99, max of `v` (ms), sorted in place.
fn spread(v: &mut [f64]) -> (Option<f64>, Option<f64>, Option<f64>) {
    if v.is_empty() {
        return (None, None, None);
    }
    v.sort_by(f64::total_cmp);
    (
        Some(percentile(v, 50.0)),
        Some(percentile(v, 99.0)),
        v.last().copied(),
    )
}

/// The verdict of a burst run.
pub fn analyze(
    _p: &Params,
    samples: &SampleSet,
    seen: &Seen,
) -> Result<BurstOutcome, AnalysisError> {
    let mut drains = Vec::new();
    let mut during = Vec::new();
    let mut idle = Vec::new();
    let mut streams: Vec<StreamFigures> = samples
        .streams
        .iter()
        .map(|s| StreamFigures {
            name: s.name.clone(),
            role: s.role.clone(),
            ops: 0,
            errors: 0,
        })
        .collect();
    let (mut update_ops, mut errors) = (0, 0);
    for (i, ph) in samples.phases.iter().enumerate() {
        let is_burst = ph.name.starts_with(BURST);
        if is_burst {
            let sync = format!("{SYNC}{}", &ph.name[BURST.len()..]);
            let end = samples
                .phases
                .iter()
                .find(|q| q.name == sync)
                .and_then(|q| q.end_s)
                .or(ph.end_s);
            if let Some(e) = end {
                drains.push(e - ph.start_s);
            }
        }
        if ph.kind != crate::engine::samples::set::STREAM_KIND {
            continue;
        }
        for (k, s) in samples.load_phase(i)?.iter().enumerate() {
            let f = &mut streams[k];
            f.ops += s.samples.len() as u64;
            let bad = s.samples.iter().filter(|x| x.errno != 0).count() as u64;
            f.errors += bad;
            errors += bad;
            if s.role == "updater" && is_burst {
                update_ops += s.samples.len() as u64;
            }
            if s.role == "victim" {
                let lat = s.ok().map(|x| (x.lag_ns + x.latency_ns) as f64 / 1e6);
                if is_burst {
                    during.extend(lat);
                } else if ph.name.starts_with(GAP) {
                    idle.extend(lat);
                }
            }
        }
    }
    let dev = seen.monitor.and_then(|m| m.data_device());
    let busy = |name: &str| name.starts_with(BURST) || name.starts_with(SYNC);
    let peak = |f: &dyn Fn(&crate::result::monitor::DevicePhase) -> f64| {
        dev.and_then(|d| {
            d.phases
                .iter()
                .filter(|q| q.phase.as_deref().is_some_and(busy))
                .map(f)
                .reduce(f64::max)
        })
    };
    let (bp50, bp99, bmax) = spread(&mut during);
    let (ip50, ip99, imax) = spread(&mut idle);
    let mut warnings = Vec::new();
    if errors > 0 {
        warnings.push(format!("{errors} operations failed"));
    }
    let verdict = Verdict {
        drain_s: (!drains.is_empty()).then(|| drains.iter().sum::<f64>() / drains.len() as f64),
        drain_s_max: drains.iter().copied().reduce(f64::max),
        drains_s: drains,
        victim_burst_p50_ms: bp50,
        victim_burst_p99_ms: bp99,
        victim_burst_max_ms: bmax,
        victim_idle_p50_ms: ip50,
        victim_idle_p99_ms: ip99,
        victim_idle_max_ms: imax,
        // A phase's peak is never below its mean; results written before the peaks existed
        // read them as 0, and give the phase's mean.
        peak_await_ms: peak(&|q| q.await_ms_peak.max(q.await_ms) * seen.time_scale),
        peak_aqu_sz: peak(&|q| q.aqu_sz_peak.max(q.means.aqu_sz)),
        update_ops,
        errors,
    };
    Ok(BurstOutcome {
        verdict,
        streams,
        warnings,
    })
}

fn ms(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.1}"))
}

impl Outcome for BurstOutcome {
    fn streams_json(&self) -> Vec<Json> {
        crate::workload::streams_json(&self.streams)
    }

    fn verdict_json(&self) -> Json {
        crate::workload::verdict_json(&self.verdict)
    }

    fn stream_rows(&self) -> Rows {
        Rows {
            headings: ["stream", "role", "ops", "errors"]
                .map(String::from)
                .to_vec(),
            rows: self
                .streams
                .iter()
                .map(|s| {
                    vec![
                        s.name.clone(),
                        s.role.clone(),
                        s.ops.to_string(),
                        s.errors.to_string(),
                    ]
                })
                .collect(),
        }
    }

    fn verdict_line(&self) -> String {
        let v = &self.verdict;
        format!(
            "drain {} s (worst {} s); victim reads during bursts p50 {} / p99 {} / max {} ms, between them p50 {} / p99 {} / max {} ms; device await in its worst monitor interval {} ms, queue {}",
            ms(v.drain_s),
            ms(v.drain_s_max),
            ms(v.victim_burst_p50_ms),
            ms(v.victim_burst_p99_ms),
            ms(v.victim_burst_max_ms),
            ms(v.victim_idle_p50_ms),
            ms(v.victim_idle_p99_ms),
            ms(v.victim_idle_max_ms),
            ms(v.peak_await_ms),
            ms(v.peak_aqu_sz),
        )
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::PhaseRecord;
    use crate::result::monitor::{DevicePhase, DeviceSummary, IostatFigures, MonitorSummary};
    use crate::workload::Workload;

    /// A phase of the data device: its mean await and aqu-sz and its highest interval's.
    fn phase(name: &str, mean: (f64, f64), peak: (f64, f64)) -> DevicePhase {
        DevicePhase {
            phase: Some(name.into()),
            outside: None,
            seconds: 10.0,
            means: IostatFigures {
                aqu_sz: mean.1,
                ..Default::default()
            },
            await_ms: mean.0,
            await_ms_peak: peak.0,
            aqu_sz_peak: peak.1,
            totals: Default::default(),
        }
    }

    fn verdict(phases: Vec<DevicePhase>, time_scale: f64) -> Verdict {
        let monitor = MonitorSummary {
            devices: vec![DeviceSummary {
                device: "loop3".into(),
                role: "data".into(),
                seconds: 40.0,
                means: Default::default(),
                await_ms: 0.0,
                await_ms_peak: 0.0,
                aqu_sz_peak: 0.0,
                util_pct_peak: 0.0,
                totals: Default::default(),
                phases,
            }],
            ..Default::default()
        };
        let names = ["create", "burst0", "sync0", "gap0"];
        let records = names
            .iter()
            .enumerate()
            .map(|(k, n)| PhaseRecord {
                start_s: k as f64,
                end_s: Some(k as f64 + 1.0),
                ..PhaseRecord::stream(n)
            })
            .collect();
        let samples = SampleSet::in_memory(Vec::new(), records);
        let seen = Seen {
            monitor: Some(&monitor),
            time_scale,
            ..Default::default()
        };
        let p = super::super::Burst.resolve(&[]).unwrap();
        analyze(&p, &samples, &seen).unwrap().verdict
    }

    #[test]
    fn the_peak_is_the_highest_interval_of_burst_and_sync_in_model_time() {
        let v = verdict(
            vec![
                phase("create", (500.0, 30.0), (900.0, 40.0)),
                phase("burst0", (20.0, 1.0), (300.0, 8.0)),
                phase("sync0", (50.0, 2.0), (120.0, 3.0)),
                phase("gap0", (1.0, 0.1), (1000.0, 50.0)),
            ],
            10.0,
        );
        // Not the highest phase mean (50 ms, 2), nor a phase outside burst and sync.
        assert_eq!(v.peak_await_ms, Some(3000.0), "300 ms on the host x 10");
        assert_eq!(v.peak_aqu_sz, Some(8.0), "a count: not scaled");
        assert_eq!(v.drains_s, vec![2.0]);
    }

    #[test]
    fn results_from_before_the_peaks_give_the_phase_mean() {
        let old = |name| phase(name, (20.0, 1.0), (0.0, 0.0));
        let v = verdict(vec![old("burst0"), old("sync0")], 2.0);
        assert_eq!((v.peak_await_ms, v.peak_aqu_sz), (Some(40.0), Some(1.0)));
        let none = analyze(
            &super::super::Burst.resolve(&[]).unwrap(),
            &SampleSet::in_memory(Vec::new(), Vec::new()),
            &Seen::default(),
        )
        .unwrap()
        .verdict;
        assert_eq!((none.peak_await_ms, none.peak_aqu_sz), (None, None));
    }
}
