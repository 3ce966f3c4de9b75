//! The memory monitor: dirty and writeback page-cache figures from /proc/meminfo, one row
//! per sample in `monitor/memory.csv`, so buffered writers that fill the cache and then flush
//! it in bursts show as such.

use super::series::CsvFile;
use crate::result::monitor::MemorySummary;
use crate::timeline::Span;
use std::fmt::Write as _;
use std::path::Path;

/// Header of memory.csv.
pub const HEADER: &str = "t_s,phase,dirty_kB,writeback_kB,cached_kB,free_kB";

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
        let line = self.csv.start(t_s, span);
        let _ = write!(line, ",{},{},{},{}", r.dirty, r.writeback, r.cached, r.free);
        self.csv.end()?;
        self.csv.flush()
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
    }
}
