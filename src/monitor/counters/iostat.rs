//! iostat -x's arithmetic: the counters of a /proc/diskstats line, the figures of a delta over
//! an interval as sysstat computes them, and the sums of a phase's intervals (summed deltas,
//! and the highest interval await and queue size, which a phase's mean hides).

use crate::result::monitor::{DevicePhase, DiskTotals, IostatFigures};
use crate::timeline::Span;
use std::collections::HashMap;

/// The counters of one line of /proc/diskstats (Documentation/admin-guide/iostats.rst), in
/// its order: reads completed, merged, sectors, ms; writes the same; I/Os in flight; ms doing
/// I/O; weighted ms; discards completed, merged, sectors, ms; flushes completed, ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters(pub [u64; 17]);

const RD_IOS: usize = 0;
const RD_MERGES: usize = 1;
const RD_SECT: usize = 2;
const RD_TICKS: usize = 3;
const WR_IOS: usize = 4;
const WR_MERGES: usize = 5;
const WR_SECT: usize = 6;
const WR_TICKS: usize = 7;
const IN_FLIGHT: usize = 8;
const IO_TICKS: usize = 9;
const RQ_TICKS: usize = 10;
const DC_IOS: usize = 11;
const DC_SECT: usize = 13;
const FL_IOS: usize = 15;

impl Counters {
    /// `self - earlier`, counter by counter (a counter that went backwards, as when a device
    /// is detached and attached again, counts from zero); in flight is the current value.
    pub fn since(&self, earlier: &Counters) -> Counters {
        let mut d = Counters::default();
        for i in 0..17 {
            d.0[i] = if self.0[i] >= earlier.0[i] {
                self.0[i] - earlier.0[i]
            } else {
                self.0[i]
            };
        }
        d.0[IN_FLIGHT] = self.0[IN_FLIGHT];
        d
    }

    /// Adds the deltas of `other`.
    pub fn add(&mut self, other: &Counters) {
        for i in 0..17 {
            self.0[i] += other.0[i];
        }
    }
}

/// Every line of a /proc/diskstats text, by device name.
pub fn parse(text: &str) -> HashMap<String, Counters> {
    let mut out = HashMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 14 {
            continue;
        }
        let mut c = Counters::default();
        for (i, v) in f[3..].iter().take(17).enumerate() {
            c.0[i] = v.parse().unwrap_or(0);
        }
        out.insert(f[2].to_string(), c);
    }
    out
}

fn per(n: u64, d: u64) -> f64 {
    if d == 0 {
        0.0
    } else {
        n as f64 / d as f64
    }
}

/// iostat -x's figures of a delta over `seconds`, as sysstat computes them.
pub fn figures(d: &Counters, seconds: f64) -> IostatFigures {
    let c = &d.0;
    let rate = |n: u64| {
        if seconds > 0.0 {
            n as f64 / seconds
        } else {
            0.0
        }
    };
    let ms = seconds * 1000.0;
    IostatFigures {
        r_s: rate(c[RD_IOS]),
        w_s: rate(c[WR_IOS]),
        d_s: rate(c[DC_IOS]),
        f_s: rate(c[FL_IOS]),
        rkB_s: rate(c[RD_SECT]) / 2.0,
        wkB_s: rate(c[WR_SECT]) / 2.0,
        rrqm_s: rate(c[RD_MERGES]),
        wrqm_s: rate(c[WR_MERGES]),
        r_await_ms: per(c[RD_TICKS], c[RD_IOS]),
        w_await_ms: per(c[WR_TICKS], c[WR_IOS]),
        aqu_sz: if ms > 0.0 {
            c[RQ_TICKS] as f64 / ms
        } else {
            0.0
        },
        rareq_sz_kB: per(c[RD_SECT], c[RD_IOS]) / 2.0,
        wareq_sz_kB: per(c[WR_SECT], c[WR_IOS]) / 2.0,
        util_pct: if ms > 0.0 {
            (c[IO_TICKS] as f64 / ms * 100.0).min(100.0)
        } else {
            0.0
        },
    }
}

/// Mean time per read or write request, ms.
pub fn await_ms(d: &Counters) -> f64 {
    per(d.0[RD_TICKS] + d.0[WR_TICKS], d.0[RD_IOS] + d.0[WR_IOS])
}

/// Requests and kilobytes of a delta.
pub fn totals(d: &Counters) -> DiskTotals {
    let c = &d.0;
    DiskTotals {
        read_requests: c[RD_IOS],
        write_requests: c[WR_IOS],
        discard_requests: c[DC_IOS],
        flush_requests: c[FL_IOS],
        read_kB: c[RD_SECT] as f64 / 2.0,
        written_kB: c[WR_SECT] as f64 / 2.0,
        discarded_kB: c[DC_SECT] as f64 / 2.0,
    }
}

/// What the intervals of one phase add up to on one device.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhaseSums {
    /// Summed counter deltas.
    pub delta: Counters,
    pub seconds: f64,
    /// Highest await of an interval that completed requests; `None` while none did.
    pub await_ms_peak: Option<f64>,
    /// Highest aqu-sz of any interval.
    pub aqu_sz_peak: f64,
}

impl PhaseSums {
    /// Adds one interval: the counter deltas `d` over `dt` seconds. Returns the interval's
    /// figures.
    pub fn add(&mut self, d: &Counters, dt: f64) -> IostatFigures {
        let f = figures(d, dt);
        self.delta.add(d);
        self.seconds += dt;
        self.raise_by(d, &f);
        f
    }

    /// Raises the peaks by an interval that also overlapped this phase (its requests count in
    /// the phase it ended in): `d` and `f` as [`PhaseSums::add`] took and returned them.
    pub fn raise_by(&mut self, d: &Counters, f: &IostatFigures) {
        let busy = d.0[RD_IOS] + d.0[WR_IOS] > 0;
        self.raise(busy.then(|| await_ms(d)), f.aqu_sz);
    }

    /// Adds the sums of `other` (another phase of the same device).
    pub fn merge(&mut self, other: &PhaseSums) {
        self.delta.add(&other.delta);
        self.seconds += other.seconds;
        self.raise(other.await_ms_peak, other.aqu_sz_peak);
    }

    fn raise(&mut self, await_ms: Option<f64>, aqu_sz: f64) {
        self.await_ms_peak = match (self.await_ms_peak, await_ms) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.aqu_sz_peak = self.aqu_sz_peak.max(aqu_sz);
    }

    /// The phase as result.json holds it.
    pub fn device_phase(&self, span: Option<&Span>) -> DevicePhase {
        DevicePhase {
            phase: span.and_then(Span::phase).map(str::to_string),
            outside: span.and_then(Span::outside),
            seconds: self.seconds,
            means: figures(&self.delta, self.seconds),
            await_ms: await_ms(&self.delta),
            await_ms_peak: self.await_ms_peak.unwrap_or(0.0),
            aqu_sz_peak: self.aqu_sz_peak,
            totals: totals(&self.delta),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "   7       3 loop3 100 10 800 50 200 20 4096 400 1 300 450 5 0 80 2 7 3\n 254 0 vda 1 2 3 4 5 6 7 8 0 9 10\n";
    const AFTER: &str =
        "   7       3 loop3 150 12 1200 150 1200 20 16384 2400 3 800 2550 5 0 80 2 17 13\n";

    #[test]
    fn figures_are_iostats() {
        let (b, a) = (parse(BEFORE), parse(AFTER));
        assert_eq!(
            b["vda"].0[..11],
            [1, 2, 3, 4, 5, 6, 7, 8, 0, 9, 10],
            "old kernels' 11 fields"
        );
        let d = a["loop3"].since(&b["loop3"]);
        let f = figures(&d, 2.0);
        assert_eq!((f.r_s, f.w_s, f.f_s), (25.0, 500.0, 5.0));
        assert_eq!((f.rkB_s, f.wkB_s), (100.0, 3072.0));
        assert_eq!((f.rrqm_s, f.wrqm_s), (1.0, 0.0));
        assert_eq!((f.r_await_ms, f.w_await_ms), (2.0, 2.0));
        assert_eq!((f.rareq_sz_kB, f.wareq_sz_kB), (4.0, 6.144));
        assert_eq!(f.aqu_sz, 1.05);
        assert_eq!(f.util_pct, 25.0);
        assert_eq!(await_ms(&d), 2.0);
        let t = totals(&d);
        assert_eq!(
            (t.write_requests, t.written_kB, t.flush_requests),
            (1000, 6144.0, 10)
        );
        // A counter that went backwards (device re-attached) counts from zero.
        assert_eq!(b["loop3"].since(&a["loop3"]).0[0], 100);
        assert_eq!(figures(&d, 0.0).r_s, 0.0);
    }

    /// A delta of `writes` write requests that took `ticks_ms` together, with `rq_ticks_ms`
    /// of weighted time in queue.
    fn writes(writes: u64, ticks_ms: u64, rq_ticks_ms: u64) -> Counters {
        let mut d = Counters::default();
        d.0[WR_IOS] = writes;
        d.0[WR_TICKS] = ticks_ms;
        d.0[RQ_TICKS] = rq_ticks_ms;
        d
    }

    #[test]
    fn a_phase_keeps_its_highest_interval_not_its_mean() {
        let mut s = PhaseSums::default();
        // Many quick writes, then one second in which a single write waited 500 ms with a
        // deep queue, then an idle second (no requests: no await, queue 0).
        let f = s.add(&writes(100, 100, 100), 1.0);
        assert_eq!((f.w_await_ms, f.aqu_sz), (1.0, 0.1));
        s.add(&writes(1, 500, 900), 1.0);
        s.add(&writes(0, 0, 0), 1.0);
        let p = s.device_phase(Some(&Span::Phase("burst0".into())));
        assert!((p.await_ms - 600.0 / 101.0).abs() < 1e-9, "{}", p.await_ms);
        assert!((p.means.aqu_sz - 1000.0 / 3000.0).abs() < 1e-9);
        assert_eq!((p.await_ms_peak, p.aqu_sz_peak), (500.0, 0.9));
        assert_eq!(p.seconds, 3.0);
        assert_eq!(p.totals.write_requests, 101);

        // A phase without requests has no await peak; it reads as 0 and lowers nothing.
        let mut idle = PhaseSums::default();
        idle.add(&writes(0, 0, 0), 1.0);
        assert_eq!(idle.await_ms_peak, None);
        assert_eq!(idle.device_phase(None).await_ms_peak, 0.0);
        let mut whole = idle;
        whole.merge(&s);
        assert_eq!((whole.await_ms_peak, whole.aqu_sz_peak), (Some(500.0), 0.9));
        assert_eq!(whole.seconds, 4.0);

        // An interval that ended in the next phase but overlapped this one raises this one's
        // peaks without moving its requests or its time.
        let mut burst = PhaseSums::default();
        burst.add(&writes(10, 20, 20), 1.0);
        let spike = writes(3, 900, 1000);
        let f = figures(&spike, 1.0);
        burst.raise_by(&spike, &f);
        assert_eq!((burst.await_ms_peak, burst.aqu_sz_peak), (Some(300.0), 1.0));
        assert_eq!((burst.seconds, burst.delta.0[WR_IOS]), (1.0, 10));
    }
}
