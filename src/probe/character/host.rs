//! What the host did while characterize timed a device, probe by probe, from /proc/stat: the
//! time the hypervisor gave this machine's CPUs to others (steal). A probe timed while the
//! hypervisor held the CPUs measures the host as much as the device: a reply late by the stall
//! reads as a slower device. So characterize keeps each probe's steal (`host` in `--json`)
//! and says which probes were disturbed, so that a twin found on a busy host is not taken for
//! the drive's. (iowait is no such sign: a CPU idle while the probe itself waits for the
//! device counts as iowait.)

use crate::monitor::counters::hostcpu::{self, Ticks};
use serde::Serialize;
use std::time::Instant;

/// Steal over a probe above this, ms per second summed over the CPUs (5% of two CPUs, the
/// limit over which `device validate` runs a pair of trials again), marks the probe disturbed.
pub const STEAL_LIMIT_MS_PER_S: f64 = 100.0;

/// The host over one probe.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostLoad {
    pub probe: String,
    /// The probe's wall time, seconds.
    pub wall_s: f64,
    /// Steal over it, ms per second of wall time summed over the CPUs.
    pub steal_ms_per_s: f64,
}

impl HostLoad {
    /// Whether the hypervisor took more of the CPUs than [`STEAL_LIMIT_MS_PER_S`].
    pub fn disturbed(&self) -> bool {
        self.steal_ms_per_s > STEAL_LIMIT_MS_PER_S
    }

    /// What a disturbed probe says, in words.
    pub fn warning(&self) -> String {
        format!(
            "the hypervisor took {:.0} ms/s of the host's CPUs (steal) while {} was timed, over \
             {STEAL_LIMIT_MS_PER_S:.0}: its figures may measure the host; characterize again \
             on a quiet host",
            self.steal_ms_per_s, self.probe
        )
    }
}

/// The host's figures between two readings of /proc/stat `dt` seconds apart.
pub fn load(probe: &str, before: &Ticks, now: &Ticks, dt: f64) -> HostLoad {
    let steal = if dt > 0.0 {
        hostcpu::rates(before, now, dt)[4]
    } else {
        0.0
    };
    HostLoad {
        probe: probe.to_string(),
        wall_s: dt,
        steal_ms_per_s: steal,
    }
}

/// Watches the host probe by probe: each [`HostWatch::lap`] ends the lap begun at the last
/// one (or at [`HostWatch::start`]). Without a readable /proc/stat it keeps nothing.
pub struct HostWatch {
    at: Option<(Ticks, Instant)>,
    pub laps: Vec<HostLoad>,
}

impl HostWatch {
    pub fn start() -> HostWatch {
        HostWatch {
            at: reading(),
            laps: Vec::new(),
        }
    }

    /// Ends the current lap, naming the probe it timed; returns its figures.
    pub fn lap(&mut self, probe: &str) -> Option<&HostLoad> {
        let now = reading()?;
        let before = self.at.replace(now)?;
        let dt = now.1.duration_since(before.1).as_secs_f64();
        self.laps.push(load(probe, &before.0, &now.0, dt));
        self.laps.last()
    }
}

impl HostWatch {
    /// [`HostWatch::lap`], saying through `say` when the probe was disturbed.
    pub fn end(&mut self, probe: &str, say: &mut super::Progress) {
        if let Some(l) = self.lap(probe).filter(|l| l.disturbed()) {
            say(&l.warning());
        }
    }
}

fn reading() -> Option<(Ticks, Instant)> {
    hostcpu::read().ok().map(|(t, _)| (t, Instant::now()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticks(steal: u64, iowait: u64) -> Ticks {
        Ticks {
            steal,
            iowait,
            ..Ticks::default()
        }
    }

    #[test]
    fn only_steal_counts_not_the_probes_own_waits() {
        // A probe waiting on the device leaves the CPUs in iowait: no sign of the host.
        let l = load("the reads", &ticks(0, 0), &ticks(1, 180), 1.0);
        assert_eq!(l.steal_ms_per_s, 10.0);
        assert!(!l.disturbed());
    }

    #[test]
    fn steal_over_the_limit_marks_the_probe_disturbed() {
        // 30 ticks of steal (300 ms) over 2 s: 150 ms/s.
        let l = load("the seek curve", &ticks(100, 0), &ticks(130, 50), 2.0);
        assert_eq!(l.steal_ms_per_s, 150.0);
        assert!(l.disturbed());
        assert!(l.warning().contains("150 ms/s"), "{}", l.warning());
        assert!(l.warning().contains("the seek curve"), "{}", l.warning());
        let quiet = load("the seek curve", &ticks(100, 0), &ticks(110, 0), 2.0);
        assert_eq!(quiet.steal_ms_per_s, 50.0);
        assert!(!quiet.disturbed());
    }

    #[test]
    fn a_counter_that_went_back_or_no_time_reads_as_none() {
        let l = load("x", &ticks(100, 9), &ticks(90, 9), 1.0);
        assert_eq!(l.steal_ms_per_s, 0.0);
        assert_eq!(
            load("x", &ticks(0, 0), &ticks(5, 5), 0.0).steal_ms_per_s,
            0.0
        );
    }

    #[test]
    fn laps_follow_one_another() {
        let mut w = HostWatch::start();
        if w.at.is_none() {
            // No /proc/stat: nothing is kept, and nothing claimed.
            assert!(w.lap("a").is_none());
            return;
        }
        assert!(w.lap("a").is_some());
        assert!(w.lap("b").is_some());
        let names: Vec<_> = w.laps.iter().map(|l| l.probe.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(w.laps.iter().all(|l| l.wall_s >= 0.0));
    }
}
