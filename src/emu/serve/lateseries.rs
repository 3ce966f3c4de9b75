//! How late the emulated device's replies went out, second by second: every reply is counted
//! in the second of the server's clock its reply was due in (replies, those sent by the request
//! thread itself and the latest of them, mean and worst lateness, those over 5 ms late, the
//! longest a reply took to write to the kernel, the service time the model gave the requests
//! due in it), from the moment the device is
//! served, so provisioning (mkfs, the layout) is in the series as well as the trial's phases.
//! Written when the request log stops, beside it, as `lateness-<device>.csv`, with times from
//! the trial's origin, so a late second can be set beside the same second of the host's CPU
//! (steal) and memory (reclaim stalls) in the monitor's series. Lock-free and allocation-free
//! per reply: the seconds are one array of atomic counters allocated with the device.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A reply this late (5 ms) is counted apart (`late_over_5ms`): more than a figure of
/// record allows.
pub const LATE_NOTED_NS: u64 = 5_000_000;

/// The lateness file's header.
pub const HEADER: &str = "t_s,replies,inline,late_us_mean,late_us_max,over_5ms,inline_late_us_max,send_us_max,serviced,service_us_mean";

/// Seconds kept (18 h 12 min); replies due later are counted as beyond the series.
const SECONDS: usize = 1 << 16;

/// One second's counters.
#[derive(Debug, Default)]
struct Second {
    replies: AtomicU64,
    inline: AtomicU64,
    late_ns_sum: AtomicU64,
    late_ns_max: AtomicU64,
    over: AtomicU64,
    /// The latest reply the request thread sent itself (the host took longer than the
    /// modeled service time to handle the request: its image I/O, say).
    inline_ns_max: AtomicU64,
    /// The longest write of a reply to the kernel (the timer thread sends none meanwhile).
    send_ns_max: AtomicU64,
    /// Requests the model gave a service time due in this second, and those times' sum.
    serviced: AtomicU64,
    service_ns_sum: AtomicU64,
}

/// Per-second lateness of one device's replies, seconds of the server's clock.
#[derive(Debug)]
pub struct LateSeries {
    seconds: Box<[Second]>,
    /// Replies due beyond the kept seconds.
    beyond: AtomicU64,
}

impl Default for LateSeries {
    fn default() -> Self {
        LateSeries {
            seconds: (0..SECONDS).map(|_| Second::default()).collect(),
            beyond: AtomicU64::new(0),
        }
    }
}

impl LateSeries {
    fn second(&self, due_ns: u64) -> Option<&Second> {
        self.seconds.get((due_ns / 1_000_000_000) as usize)
    }

    /// A reply due at `due_ns` (server clock) went out `late_ns` after it.
    pub fn replied(&self, due_ns: u64, late_ns: u64) {
        let Some(s) = self.second(due_ns) else {
            self.beyond.fetch_add(1, Relaxed);
            return;
        };
        s.replies.fetch_add(1, Relaxed);
        s.late_ns_sum.fetch_add(late_ns, Relaxed);
        s.late_ns_max.fetch_max(late_ns, Relaxed);
        if late_ns > LATE_NOTED_NS {
            s.over.fetch_add(1, Relaxed);
        }
    }

    /// The reply due at `due_ns` was sent by the request thread (already due once handled),
    /// `late_ns` after it.
    pub fn inline(&self, due_ns: u64, late_ns: u64) {
        if let Some(s) = self.second(due_ns) {
            s.inline.fetch_add(1, Relaxed);
            s.inline_ns_max.fetch_max(late_ns, Relaxed);
        }
    }

    /// The model gave a request due at `due_ns` `service_ns` of service (real time).
    pub fn serviced(&self, due_ns: u64, service_ns: u64) {
        if let Some(s) = self.second(due_ns) {
            s.serviced.fetch_add(1, Relaxed);
            s.service_ns_sum.fetch_add(service_ns, Relaxed);
        }
    }

    /// Writing the reply due at `due_ns` to the kernel took `ns`.
    pub fn sent(&self, due_ns: u64, ns: u64) {
        if let Some(s) = self.second(due_ns) {
            s.send_ns_max.fetch_max(ns, Relaxed);
        }
    }

    /// Replies due beyond the seconds kept.
    pub fn beyond(&self) -> u64 {
        self.beyond.load(Relaxed)
    }

    /// Writes the seconds up to the one `now_ns` (server clock) falls in as CSV:
    /// [`HEADER`], `t_s` the second's start in
    /// seconds from the CLOCK_MONOTONIC instant `origin_mono_ns` (negative before it), for a
    /// server clock whose zero is the CLOCK_MONOTONIC instant `clock_mono_ns`.
    pub fn write_csv(
        &self,
        path: &Path,
        now_ns: u64,
        clock_mono_ns: u64,
        origin_mono_ns: u64,
    ) -> std::io::Result<()> {
        let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
        writeln!(w, "{HEADER}")?;
        let last = (now_ns / 1_000_000_000) as usize;
        let zero_s = (clock_mono_ns as f64 - origin_mono_ns as f64) / 1e9;
        for (k, s) in self.seconds.iter().enumerate().take(last + 1) {
            let mean_us = |sum: &AtomicU64, n: u64| match n {
                0 => 0.0,
                n => sum.load(Relaxed) as f64 / 1e3 / n as f64,
            };
            let n = s.replies.load(Relaxed);
            let mean = mean_us(&s.late_ns_sum, n);
            let serviced = s.serviced.load(Relaxed);
            let service = mean_us(&s.service_ns_sum, serviced);
            writeln!(
                w,
                "{:.3},{n},{},{mean:.1},{:.1},{},{:.1},{:.1},{serviced},{service:.1}",
                zero_s + k as f64,
                s.inline.load(Relaxed),
                s.late_ns_max.load(Relaxed) as f64 / 1e3,
                s.over.load(Relaxed),
                s.inline_ns_max.load(Relaxed) as f64 / 1e3,
                s.send_ns_max.load(Relaxed) as f64 / 1e3
            )?;
        }
        w.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(s: &LateSeries, now_ns: u64, clock_mono: u64, origin: u64) -> Vec<String> {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("lateness.csv");
        s.write_csv(&p, now_ns, clock_mono, origin).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn replies_land_in_the_second_they_were_due_in() {
        let s = LateSeries::default();
        s.replied(100_000_000, 1_000);
        s.replied(900_000_000, 3_000);
        s.inline(900_000_000, 3_000);
        s.sent(900_000_000, 40_000);
        s.sent(100_000_000, 20_000);
        s.replied(2_100_000_000, 6_000_000);
        s.serviced(100_000_000, 2_000_000);
        s.serviced(900_000_000, 4_000_000);
        s.serviced(2_100_000_000, 8_000_000);
        // The server's clock started 2.5 s after the trial's origin.
        let r = rows(&s, 2_500_000_000, 10_000_000_000, 7_500_000_000);
        assert_eq!(r[0], HEADER);
        assert_eq!(
            &r[1..],
            [
                "2.500,2,1,2.0,3.0,0,3.0,40.0,2,3000.0",
                "3.500,0,0,0.0,0.0,0,0.0,0.0,0,0.0",
                "4.500,1,0,6000.0,6000.0,1,0.0,0.0,1,8000.0"
            ]
        );
        // Seconds before the origin (provisioning before the trial's clock) read negative.
        assert_eq!(
            rows(&s, 0, 7_000_000_000, 7_500_000_000)[1],
            "-0.500,2,1,2.0,3.0,0,3.0,40.0,2,3000.0"
        );
    }

    #[test]
    fn replies_beyond_the_kept_seconds_are_counted() {
        let s = LateSeries::default();
        s.replied(u64::MAX / 2, 10);
        assert_eq!(s.beyond(), 1);
    }
}
