//! The host's CPU as a whole, from /proc/stat's `cpu` line, beside the per-thread figures of
//! [`super::threads`]: user, system, iowait, interrupt and steal time. Steal is the time a
//! hypervisor gave this virtual machine's CPUs to others; no thread of the host sees it happen,
//! it simply stops (the device server's real-time timer included), so a late reply or a slow
//! I/O in a second with steal has its cause here. One row per sample in `monitor/cpu.csv`, in
//! ms per second of wall time summed over the CPUs (an interval under 0.25 s is folded into
//! the next row); result.json gets the means and the interval with the most steal.

use crate::monitor::series::CsvFile;
use crate::result::monitor::HostCpuSummary;
use crate::timeline::Span;
use std::fmt::Write as _;
use std::path::Path;

/// Header of cpu.csv.
pub const HEADER: &str =
    "t_s,phase,cpus,user_ms_per_s,system_ms_per_s,iowait_ms_per_s,irq_ms_per_s,steal_ms_per_s";

/// Milliseconds per clock tick of /proc/stat (USER_HZ, 100 on Linux).
const TICK_MS: f64 = 10.0;

/// An interval shorter than this (a phase boundary's reading soon after the last) is folded
/// into the next row: at 10 ms a tick, a few ms would read as seconds per second.
const MIN_ROW_S: f64 = 0.25;

/// Steal in one interval above this (ms per second, summed over the CPUs) is counted
/// (`steal_intervals_over_100ms`): a stall long beside a fast device's service time.
pub const STEAL_NOTED_MS_PER_S: f64 = 100.0;

/// Steal above this share of the host's CPU time over the monitored time is worth a warning.
pub const STEAL_WARN_SHARE: f64 = 0.05;

/// The ticks of /proc/stat's `cpu` line, all CPUs together.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Ticks {
    pub user: u64,
    pub system: u64,
    pub iowait: u64,
    pub irq: u64,
    pub steal: u64,
}

/// The `cpu` line's ticks (user and nice together, irq and softirq together) and the number
/// of CPUs (`cpuN` lines) of a /proc/stat text.
pub fn parse(text: &str) -> Option<(Ticks, u32)> {
    let mut ticks = None;
    let mut cpus = 0;
    for line in text.lines() {
        let mut f = line.split_whitespace();
        match f.next() {
            Some("cpu") => {
                let v: Vec<u64> = f.map(|x| x.parse().unwrap_or(0)).collect();
                let at = |i: usize| v.get(i).copied().unwrap_or(0);
                ticks = Some(Ticks {
                    user: at(0) + at(1),
                    system: at(2),
                    iowait: at(4),
                    irq: at(5) + at(6),
                    steal: at(7),
                });
            }
            Some(name) if name.starts_with("cpu") => cpus += 1,
            _ => {}
        }
    }
    Some((ticks?, cpus.max(1)))
}

/// ms per second of `now - before` over `dt` seconds, each figure in [`Ticks`]' order.
pub fn rates(before: &Ticks, now: &Ticks, dt: f64) -> [f64; 5] {
    let per_s = |a: u64, b: u64| b.saturating_sub(a) as f64 * TICK_MS / dt;
    [
        per_s(before.user, now.user),
        per_s(before.system, now.system),
        per_s(before.iowait, now.iowait),
        per_s(before.irq, now.irq),
        per_s(before.steal, now.steal),
    ]
}

/// The host CPU monitor of one trial.
pub struct HostCpu {
    csv: CsvFile,
    cpus: u32,
    first: Ticks,
    last: Ticks,
    first_t: f64,
    last_t: f64,
    steal_peak: f64,
    steal_peak_at: f64,
    steal_warn_intervals: u64,
}

/// The host's ticks now and its number of CPUs, from /proc/stat.
pub fn read() -> std::io::Result<(Ticks, u32)> {
    let text = std::fs::read_to_string("/proc/stat")?;
    parse(&text).ok_or_else(|| std::io::Error::other("/proc/stat has no cpu line"))
}

impl HostCpu {
    /// Creates cpu.csv in `dir` and takes the first reading at `t_s`.
    pub fn start(dir: &Path, t_s: f64) -> std::io::Result<HostCpu> {
        let (ticks, cpus) = read()?;
        let csv = CsvFile::create(&dir.join("cpu.csv"), HEADER)?;
        Ok(HostCpu {
            csv,
            cpus,
            first: ticks,
            last: ticks,
            first_t: t_s,
            last_t: t_s,
            steal_peak: 0.0,
            steal_peak_at: t_s,
            steal_warn_intervals: 0,
        })
    }

    /// Takes a reading at `t_s` and writes the interval's row.
    pub fn sample(&mut self, t_s: f64, span: &Span) -> std::io::Result<()> {
        let dt = t_s - self.last_t;
        if dt < MIN_ROW_S {
            return Ok(());
        }
        let (now, _) = read()?;
        let r = rates(&self.last, &now, dt);
        self.last = now;
        self.last_t = t_s;
        if r[4] > self.steal_peak {
            self.steal_peak = r[4];
            self.steal_peak_at = t_s;
        }
        if r[4] > STEAL_NOTED_MS_PER_S {
            self.steal_warn_intervals += 1;
        }
        let line = self.csv.start(t_s, span);
        let _ = write!(
            line,
            ",{},{:.0},{:.0},{:.0},{:.0},{:.0}",
            self.cpus, r[0], r[1], r[2], r[3], r[4]
        );
        self.csv.end()?;
        self.csv.flush()
    }

    /// Means over the monitored time and the interval with the most steal.
    pub fn finish(mut self) -> HostCpuSummary {
        let _ = self.csv.flush();
        let dt = self.last_t - self.first_t;
        let mean = if dt > 0.0 {
            rates(&self.first, &self.last, dt)
        } else {
            [0.0; 5]
        };
        HostCpuSummary {
            cpus: self.cpus,
            busy_ms_per_s_mean: mean[0] + mean[1] + mean[3],
            iowait_ms_per_s_mean: mean[2],
            steal_ms_per_s_mean: mean[4],
            steal_ms_per_s_peak: self.steal_peak,
            steal_peak_at_s: self.steal_peak_at,
            steal_intervals_over_100ms: self.steal_warn_intervals,
        }
    }
}

/// The warning a trial carries when the hypervisor took more than [`STEAL_WARN_SHARE`] of the
/// host's CPU time, if it did.
pub fn steal_warning(s: &HostCpuSummary) -> Option<String> {
    let share = s.steal_ms_per_s_mean / (f64::from(s.cpus.max(1)) * 1000.0);
    (share > STEAL_WARN_SHARE).then(|| {
        format!(
            "the hypervisor held this host's CPUs for {:.1}% of their time (steal), at worst \
             {:.0} ms in the second ending at {:.1} s (monitor/cpu.csv): every thread stopped \
             then, the device server's included, so the trial's timings carry those stalls",
            share * 100.0,
            s.steal_ms_per_s_peak,
            s.steal_peak_at_s
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  100 5 50 1000 20 3 2 40 0 0\n\
                        cpu0 50 2 25 500 10 1 1 20 0 0\n\
                        cpu1 50 3 25 500 10 2 1 20 0 0\n\
                        intr 12345\nctxt 999\n";

    #[test]
    fn the_cpu_line_and_the_cpus_are_read() {
        let (t, cpus) = parse(STAT).unwrap();
        assert_eq!(cpus, 2);
        assert_eq!(
            t,
            Ticks {
                user: 105,
                system: 50,
                iowait: 20,
                irq: 5,
                steal: 40
            }
        );
        assert!(parse("intr 1\n").is_none());
    }

    #[test]
    fn rates_are_ms_per_second_of_wall_time() {
        let a = parse(STAT).unwrap().0;
        let b = Ticks {
            steal: a.steal + 15,
            user: a.user + 50,
            ..a
        };
        // 15 ticks of steal (150 ms) in half a second: 300 ms per second over the CPUs.
        let r = rates(&a, &b, 0.5);
        assert_eq!(r, [1000.0, 0.0, 0.0, 0.0, 300.0]);
    }

    #[test]
    fn this_host_is_sampled_and_a_stall_is_told() {
        let d = tempfile::tempdir().unwrap();
        let mut m = HostCpu::start(d.path(), 0.0).unwrap();
        // A boundary's reading 10 ms after the start is folded into the next row.
        m.sample(0.01, &Span::Phase("prepare".into())).unwrap();
        m.sample(1.0, &Span::Phase("run".into())).unwrap();
        let s = m.finish();
        assert!(s.cpus >= 1);
        let text = std::fs::read_to_string(d.path().join("cpu.csv")).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.lines().nth(1).unwrap().starts_with("1.000,run,"));
        // Two CPUs: 2000 ms per second in all, so 5% is 100 ms per second on average.
        let calm = HostCpuSummary {
            cpus: 2,
            steal_ms_per_s_mean: 40.0,
            steal_ms_per_s_peak: 740.0,
            ..s
        };
        assert!(steal_warning(&calm).is_none());
        let stalled = HostCpuSummary {
            cpus: 2,
            steal_ms_per_s_mean: 150.0,
            steal_ms_per_s_peak: 360.0,
            steal_peak_at_s: 12.0,
            ..s
        };
        let w = steal_warning(&stalled).unwrap();
        assert!(
            w.contains("7.5%") && w.contains("360 ms") && w.contains("12.0 s"),
            "{w}"
        );
    }
}
