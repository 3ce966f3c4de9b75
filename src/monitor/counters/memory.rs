//! The memory monitor: dirty and writeback page-cache figures from /proc/meminfo, one row
//! per sample in `monitor/memory.csv`, so buffered writers that fill the cache and then flush
//! it in bursts show as such; and, where the kernel keeps pressure stall information, the time
//! some task on the host was stalled waiting for memory (/proc/pressure/memory, `some`:
//! reclaim, compaction, refaults), in ms per second of wall time: a thread stalled there does
//! not run, so a late I/O or a late emulated-device reply in such a second has its cause here.

use crate::monitor::series::CsvFile;
use crate::result::monitor::MemorySummary;
use crate::timeline::Span;
use std::fmt::Write as _;
use std::path::Path;

/// Header of memory.csv.
pub const HEADER: &str = "t_s,phase,dirty_kB,writeback_kB,cached_kB,free_kB,stall_ms_per_s";

/// Pressure stall information of memory: µs some task was stalled on memory since boot.
const PRESSURE: &str = "/proc/pressure/memory";

/// The `some` line's `total=` (µs) of a /proc/pressure/* text.
pub fn stall_total_us(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    line.split_whitespace()
        .find_map(|f| f.strip_prefix("total="))?
        .parse()
        .ok()
}

fn read_stall_us() -> Option<u64> {
    stall_total_us(&std::fs::read_to_string(PRESSURE).ok()?)
}

/// The figures of one reading, kB.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Reading {
    pub dirty: u64,
    pub writeback: u64,
    pub cached: u64,
    pub free: u64,
}

/// The figures of a /proc/meminfo text.
pub fn parse(text: &str) -> Reading {
    let mut r = Reading::default();
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let (Some(key), Some(v)) = (f.next(), f.next()) else {
            continue;
        };
        let v: u64 = v.parse().unwrap_or(0);
        match key {
            "Dirty:" => r.dirty = v,
            "Writeback:" => r.writeback = v,
            "Cached:" => r.cached = v,
            "MemFree:" => r.free = v,
            _ => {}
        }
    }
    r
}

/// The memory monitor of one trial.
pub struct Memory {
    csv: CsvFile,
    samples: u64,
    sum: Reading,
    peak: Reading,
    free_min: Option<u64>,
    /// The last reading's time and stall total (µs), when the kernel has the figure.
    stall_last: Option<(f64, u64)>,
    stall_first_us: Option<u64>,
    stall_peak_ms_per_s: f64,
}

impl Memory {
    /// Creates memory.csv in `dir` and writes the first reading, at `t_s`.
    pub fn start(dir: &Path, t_s: f64, span: &Span) -> std::io::Result<Memory> {
        let csv = CsvFile::create(&dir.join("memory.csv"), HEADER)?;
        let mut m = Memory {
            csv,
            samples: 0,
            sum: Reading::default(),
            peak: Reading::default(),
            free_min: None,
            stall_last: None,
            stall_first_us: None,
            stall_peak_ms_per_s: 0.0,
        };
        m.sample(t_s, span)?;
        Ok(m)
    }

    /// Reads /proc/meminfo and writes a row at `t_s`.
    pub fn sample(&mut self, t_s: f64, span: &Span) -> std::io::Result<()> {
        let r = parse(&std::fs::read_to_string("/proc/meminfo")?);
        self.samples += 1;
        self.sum.dirty += r.dirty;
        self.sum.writeback += r.writeback;
        self.peak.dirty = self.peak.dirty.max(r.dirty);
        self.peak.writeback = self.peak.writeback.max(r.writeback);
        self.free_min = Some(self.free_min.map_or(r.free, |m| m.min(r.free)));
        let stall = self.stall_rate(t_s, read_stall_us());
        let line = self.csv.start(t_s, span);
        let _ = write!(
            line,
            ",{},{},{},{},",
            r.dirty, r.writeback, r.cached, r.free
        );
        if let Some(ms) = stall {
            let _ = write!(line, "{ms:.1}");
        }
        self.csv.end()?;
        self.csv.flush()
    }

    /// The memory stall since the last reading, ms per second, from the total `now_us` read at
    /// `t_s`; `None` for the first reading or without the figure.
    fn stall_rate(&mut self, t_s: f64, now_us: Option<u64>) -> Option<f64> {
        let now_us = now_us?;
        self.stall_first_us.get_or_insert(now_us);
        let last = self.stall_last.replace((t_s, now_us));
        let (t0, us0) = last?;
        let dt = t_s - t0;
        let rate = (dt > 0.0).then(|| now_us.saturating_sub(us0) as f64 / 1e3 / dt)?;
        self.stall_peak_ms_per_s = self.stall_peak_ms_per_s.max(rate);
        Some(rate)
    }

    /// Means over the samples, peaks, and the least free memory.
    pub fn finish(mut self) -> MemorySummary {
        let _ = self.csv.flush();
        let n = self.samples.max(1) as f64;
        MemorySummary {
            dirty_kB_mean: self.sum.dirty as f64 / n,
            dirty_kB_peak: self.peak.dirty as f64,
            writeback_kB_mean: self.sum.writeback as f64 / n,
            writeback_kB_peak: self.peak.writeback as f64,
            free_kB_min: self.free_min.unwrap_or(0) as f64,
            stall_ms: self
                .stall_first_us
                .zip(self.stall_last)
                .map(|(first, (_, last))| last.saturating_sub(first) as f64 / 1e3),
            stall_ms_per_s_peak: self.stall_first_us.map(|_| self.stall_peak_ms_per_s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_is_read() {
        let r = parse(
            "MemTotal: 100 kB\nMemFree:  40 kB\nCached: 30 kB\nDirty: 7 kB\nWriteback: 2 kB\n",
        );
        assert_eq!(
            r,
            Reading {
                dirty: 7,
                writeback: 2,
                cached: 30,
                free: 40
            }
        );
        let d = tempfile::tempdir().unwrap();
        let before = Span::Outside(crate::timeline::Outside::Before);
        let mut m = Memory::start(d.path(), 0.0, &before).unwrap();
        m.sample(1.0, &Span::Phase("run".into())).unwrap();
        let s = m.finish();
        assert!(s.free_kB_min > 0.0);
        let text = std::fs::read_to_string(d.path().join("memory.csv")).unwrap();
        assert_eq!(text.lines().count(), 3);
        assert!(text.lines().nth(2).unwrap().starts_with("1.000,run,"));
        // A kernel with pressure stall information gives the stall from the second row on.
        let fields = |n: usize| text.lines().nth(n).unwrap().split(',').count();
        assert_eq!(fields(1), 7);
        assert_eq!(fields(2), 7);
    }

    #[test]
    fn memory_stall_is_a_rate_between_readings() {
        let psi = "some avg10=0.00 avg60=0.00 avg300=0.00 total=30482635\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=15891482\n";
        assert_eq!(stall_total_us(psi), Some(30_482_635));
        assert_eq!(stall_total_us("nothing"), None);
        let d = tempfile::tempdir().unwrap();
        let before = Span::Outside(crate::timeline::Outside::Before);
        let mut m = Memory::start(d.path(), 0.0, &before).unwrap();
        // Readings of this test's own: 10 s of total, then 40 ms stalled over 2 s.
        m.stall_last = None;
        m.stall_first_us = None;
        assert_eq!(m.stall_rate(1.0, Some(10_000_000)), None);
        assert_eq!(m.stall_rate(3.0, Some(10_040_000)), Some(20.0));
        assert_eq!(m.stall_rate(4.0, Some(10_045_000)), Some(5.0));
        assert_eq!(m.stall_rate(5.0, None), None, "no figure, no rate");
        let s = m.finish();
        assert_eq!(s.stall_ms, Some(45.0));
        assert_eq!(s.stall_ms_per_s_peak, Some(20.0));
    }
}
