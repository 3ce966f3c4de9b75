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

/// An emulated side's server, counted at one moment: the replies it has sent, and those it
/// sent late from the request thread (its handling of the request, the store into its image
/// included, outlasted the model's time for it) with their lateness summed, ms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ServerLate {
    pub replies: u64,
    pub late: u64,
    pub late_ms: f64,
}

impl ServerLate {
    /// The counts in an emulated device server's statistics (`iotrial device serve --json`,
    /// a trial's `stack.emulated[]`); `None` when they are not there.
    pub fn of(stats: &serde_json::Value) -> Option<ServerLate> {
        let s = &stats["server"];
        let late = s["replies_inline"].as_u64()?;
        Some(ServerLate {
            replies: s["replies"].as_u64()?,
            late,
            late_ms: s["late_inline_us_mean"].as_f64()? * late as f64 / 1e3,
        })
    }

    /// What happened from `earlier` to this count.
    fn since(self, earlier: ServerLate) -> ServerLate {
        ServerLate {
            replies: self.replies.saturating_sub(earlier.replies),
            late: self.late.saturating_sub(earlier.late),
            late_ms: (self.late_ms - earlier.late_ms).max(0.0),
        }
    }
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
    /// On a side served by this process's emulator (the twin), its server's replies over the
    /// half and those it sent late: a late reply times the host as well as the model.
    pub server: Option<ServerLate>,
}

/// The laps of one validation, timed from its start.
pub struct Laps {
    t0: Instant,
    at: Option<(Instant, HostWatch, Option<ServerLate>)>,
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

    /// A half begins now, its side's server counted as `server` (`None`: not served here).
    pub fn begin(&mut self, server: Option<ServerLate>) {
        self.at = Some((Instant::now(), HostWatch::start(), server));
    }

    /// The half begun at the last [`Laps::begin`] has ended with these response times (one
    /// list per workload, named in `names`, in seconds), its side's server counted as
    /// `server`; returns its lap.
    pub fn end(
        &mut self,
        (side, round, half): (&'static str, usize, &'static str),
        names: &[&'static str],
        times: &[Vec<f64>],
        server: Option<ServerLate>,
    ) -> &Lap {
        let (began, mut watch, before) = self
            .at
            .take()
            .unwrap_or_else(|| (Instant::now(), HostWatch::start(), None));
        let server = match (before, server) {
            (Some(b), Some(e)) => Some(e.since(b)),
            _ => None,
        };
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
            server,
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
        laps.begin(None);
        let l = laps
            .end(
                ("twin", 2, "random reads"),
                &["a", "b"],
                &[vec![0.001, 0.003], vec![0.010]],
                None,
            )
            .clone();
        assert_eq!((l.side, l.round, l.half), ("twin", 2, "random reads"));
        let means: Vec<_> = l.means.iter().map(|m| (m.workload, m.mean_ms)).collect();
        assert_eq!(means.len(), 2);
        assert_eq!(means[0].0, "a");
        assert!((means[0].1 - 2.0).abs() < 1e-9 && (means[1].1 - 10.0).abs() < 1e-9);
        assert!(l.started_s >= 0.0 && l.wall_s >= 0.0);
        laps.begin(None);
        let second = laps.end(("device", 3, "pass"), &["c"], &[vec![0.5]], None);
        assert!(second.started_s >= l.started_s);
        assert_eq!(second.server, None);
        assert_eq!(laps.laps.len(), 2);
    }

    #[test]
    fn a_served_sides_lap_keeps_what_its_server_did_over_the_half() {
        let stats = |replies: u64, late: u64, mean_us: f64| {
            serde_json::json!({"server": {
                "replies": replies, "replies_inline": late, "late_inline_us_mean": mean_us,
            }})
        };
        let before = ServerLate::of(&stats(100, 4, 50.0)).unwrap();
        assert_eq!(before.late_ms, 0.2);
        let after = ServerLate::of(&stats(164, 10, 100.0)).unwrap();
        let mut laps = Laps::start();
        laps.begin(Some(before));
        let l = laps.end(
            ("twin", 1, "burst and pass"),
            &["w"],
            &[vec![0.2]],
            Some(after),
        );
        let s = l.server.unwrap();
        assert_eq!((s.replies, s.late), (64, 6));
        assert!((s.late_ms - 0.8).abs() < 1e-9, "{s:?}");
        assert_eq!(ServerLate::of(&serde_json::json!({"error": "gone"})), None);
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
            server: None,
        };
        let w = warning(&l);
        assert!(w.contains("240 ms/s"), "{w}");
        assert!(w.contains("round 3 of the device's burst and pass"), "{w}");
    }
}
