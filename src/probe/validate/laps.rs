//! Each half of a `device validate` round as it ran: which side, which round, when it began and
//! how long it took, the steal the hypervisor took from the host's CPUs meanwhile, and the
//! mean response time of each of its workloads. The figures judge a twin on each I/O's median
//! over the rounds, which leaves out what the host did to one round; the laps keep it in view:
//! a round whose means stand apart from the others', a drift over a long run on both sides,
//! and the host's steal beside them.

use crate::probe::character::host::HostWatch;
use crate::probe::character::stats::mean;
use serde::Serialize;
use std::time::Instant;

/// One workload's mean response time over one lap.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LapMean {
    pub workload: &'static str,
    pub mean_ms: f64,
}

/// One half of a round on one side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lap {
    /// `device`, `twin`, or `device at other offsets`.
    pub side: &'static str,
    /// The side's round, from 1.
    pub round: usize,
    /// `random reads`, or `burst and pass` (`pass`, read-only).
    pub half: &'static str,
    /// Seconds from the start of the first round to the start of this half (after the
    /// side's wait for a calm drive).
    pub started_s: f64,
    pub wall_s: f64,
    /// Steal over the half, ms per second of wall time summed over the CPUs; `None` without
    /// a readable /proc/stat.
    pub steal_ms_per_s: Option<f64>,
    /// Whether that steal was over the limit at which characterize calls a probe disturbed.
    pub disturbed: bool,
    pub means: Vec<LapMean>,
}

/// The laps of one validation, timed from its start.
pub struct Laps {
    t0: Instant,
    at: Option<(Instant, HostWatch)>,
    pub laps: Vec<Lap>,
}

impl Laps {
    pub fn start() -> Laps {
        Laps {
            t0: Instant::now(),
            at: None,
            laps: Vec::new(),
        }
    }

    /// A half begins now.
    pub fn begin(&mut self) {
        self.at = Some((Instant::now(), HostWatch::start()));
    }

    /// The half begun at the last [`Laps::begin`] has ended with these response times (one
    /// list per workload, named in `names`, in seconds); returns its lap.
    pub fn end(
        &mut self,
        (side, round, half): (&'static str, usize, &'static str),
        names: &[&'static str],
        times: &[Vec<f64>],
    ) -> &Lap {
        let (began, mut watch) = self
            .at
            .take()
            .unwrap_or_else(|| (Instant::now(), HostWatch::start()));
        let load = watch.lap(half).cloned();
        let means = names
            .iter()
            .zip(times)
            .map(|(&workload, t)| LapMean {
                workload,
                mean_ms: mean(t) * 1e3,
            })
            .collect();
        self.laps.push(Lap {
            side,
            round,
            half,
            started_s: began.duration_since(self.t0).as_secs_f64(),
            wall_s: began.elapsed().as_secs_f64(),
            steal_ms_per_s: load.as_ref().map(|l| l.steal_ms_per_s),
            disturbed: load.as_ref().is_some_and(|l| l.disturbed()),
            means,
        });
        self.laps.last().expect("just pushed")
    }
}

/// What a disturbed lap says, in words.
pub fn warning(l: &Lap) -> String {
    format!(
        "the hypervisor took {:.0} ms/s of the host's CPUs (steal) during round {} of the {}'s {}: \
         its times may measure the host (each I/O's median over the rounds leaves one such round out)",
        l.steal_ms_per_s.unwrap_or(0.0),
        l.round,
        l.side,
        l.half
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lap_keeps_each_workloads_mean_in_ms_and_its_place_in_the_run() {
        let mut laps = Laps::start();
        laps.begin();
        let l = laps
            .end(
                ("twin", 2, "random reads"),
                &["a", "b"],
                &[vec![0.001, 0.003], vec![0.010]],
            )
            .clone();
        assert_eq!((l.side, l.round, l.half), ("twin", 2, "random reads"));
        let means: Vec<_> = l.means.iter().map(|m| (m.workload, m.mean_ms)).collect();
        assert_eq!(means.len(), 2);
        assert_eq!(means[0].0, "a");
        assert!((means[0].1 - 2.0).abs() < 1e-9 && (means[1].1 - 10.0).abs() < 1e-9);
        assert!(l.started_s >= 0.0 && l.wall_s >= 0.0);
        laps.begin();
        let second = laps.end(("device", 3, "pass"), &["c"], &[vec![0.5]]);
        assert!(second.started_s >= l.started_s);
        assert_eq!(laps.laps.len(), 2);
    }

    #[test]
    fn a_disturbed_lap_names_its_round_side_and_half() {
        let l = Lap {
            side: "device",
            round: 3,
            half: "burst and pass",
            started_s: 10.0,
            wall_s: 2.0,
            steal_ms_per_s: Some(240.0),
            disturbed: true,
            means: vec![],
        };
        let w = warning(&l);
        assert!(w.contains("240 ms/s"), "{w}");
        assert!(w.contains("round 3 of the device's burst and pass"), "{w}");
    }
}
