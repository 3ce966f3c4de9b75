//! The diskstats monitor: iostat -x for every block device of the stack. Each sample reads
//! /proc/diskstats once and writes one row per device to `monitor/diskstats.csv` with
//! iostat's figures, names and units, computed as sysstat computes them over the interval
//! since the previous sample (the first row is a delta over the first interval, never totals
//! since boot). The counter deltas are also summed per device and per phase for result.json.

use super::series::{CsvFile, PerPhase};
use crate::result::monitor::{DevicePhase, DeviceSummary, DiskTotals, IostatFigures};
use crate::stack::blockdevs::StackDevice;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// Header of diskstats.csv.
pub const HEADER: &str = "t_s,phase,device,r_s,w_s,d_s,f_s,rkB_s,wkB_s,rrqm_s,wrqm_s,r_await_ms,w_await_ms,aqu_sz,rareq_sz_kB,wareq_sz_kB,util_pct";

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

/// Reads /proc/diskstats.
pub fn read() -> std::io::Result<HashMap<String, Counters>> {
    Ok(parse(&std::fs::read_to_string("/proc/diskstats")?))
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

/// One watched device: its last counters and its sums.
struct Watched {
    dev: StackDevice,
    last: Option<Counters>,
    /// Summed deltas and seconds, per phase.
    phases: PerPhase<(Counters, f64)>,
    util_peak: f64,
    vanished: bool,
}

/// The diskstats monitor of one trial.
pub struct Diskstats {
    csv: CsvFile,
    devices: Vec<Watched>,
    last_t: f64,
    pub warnings: Vec<String>,
}

impl Diskstats {
    /// Starts watching `devices`: creates diskstats.csv in `dir` and takes the first reading
    /// at `t_s`.
    pub fn start(dir: &Path, devices: &[StackDevice], t_s: f64) -> std::io::Result<Diskstats> {
        let csv = CsvFile::create(&dir.join("diskstats.csv"), HEADER)?;
        let now = read()?;
        let mut warnings = Vec::new();
        let devices = devices
            .iter()
            .map(|d| {
                let last = now.get(&d.name).copied();
                if last.is_none() {
                    warnings.push(format!(
                        "monitor diskstats: {} is not in /proc/diskstats",
                        d.name
                    ));
                }
                Watched {
                    dev: d.clone(),
                    vanished: last.is_none(),
                    last,
                    phases: PerPhase::default(),
                    util_peak: 0.0,
                }
            })
            .collect();
        Ok(Diskstats {
            csv,
            devices,
            last_t: t_s,
            warnings,
        })
    }

    /// Takes a reading at `t_s` and writes one row per device.
    pub fn sample(&mut self, t_s: f64, phase: Option<&str>) -> std::io::Result<()> {
        let now = read()?;
        let dt = t_s - self.last_t;
        self.last_t = t_s;
        for w in &mut self.devices {
            let Some(cur) = now.get(&w.dev.name).copied() else {
                if !std::mem::replace(&mut w.vanished, true) {
                    self.warnings.push(format!(
                        "monitor diskstats: {} vanished from /proc/diskstats at {t_s:.1} s",
                        w.dev.name
                    ));
                }
                continue;
            };
            let Some(prev) = w.last.replace(cur) else {
                continue;
            };
            let d = cur.since(&prev);
            let f = figures(&d, dt);
            w.util_peak = w.util_peak.max(f.util_pct);
            let (sum, secs) = w.phases.get(phase);
            sum.add(&d);
            *secs += dt;
            write_row(self.csv.start(t_s, phase), &w.dev.name, &f);
            self.csv.end()?;
        }
        self.csv.flush()
    }

    /// The summary of every device.
    pub fn finish(mut self) -> (Vec<DeviceSummary>, Vec<String>) {
        let _ = self.csv.flush();
        let devices = self.devices.iter().map(summary).collect();
        (devices, self.warnings)
    }
}

fn write_row(line: &mut String, device: &str, f: &IostatFigures) {
    let _ = write!(
        line,
        ",{},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2}",
        super::series::field(device),
        f.r_s,
        f.w_s,
        f.d_s,
        f.f_s,
        f.rkB_s,
        f.wkB_s,
        f.rrqm_s,
        f.wrqm_s,
        f.r_await_ms,
        f.w_await_ms,
        f.aqu_sz,
        f.rareq_sz_kB,
        f.wareq_sz_kB,
        f.util_pct
    );
}

fn summary(w: &Watched) -> DeviceSummary {
    let mut all = Counters::default();
    let mut seconds = 0.0;
    let phases = w
        .phases
        .entries
        .iter()
        .map(|(p, (d, s))| {
            all.add(d);
            seconds += s;
            DevicePhase {
                phase: p.clone(),
                seconds: *s,
                means: figures(d, *s),
                await_ms: await_ms(d),
                totals: totals(d),
            }
        })
        .collect();
    DeviceSummary {
        device: w.dev.name.clone(),
        role: w.dev.role.name().to_string(),
        seconds,
        means: figures(&all, seconds),
        await_ms: await_ms(&all),
        util_pct_peak: w.util_peak,
        totals: totals(&all),
        phases,
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

    #[test]
    fn rows_and_summary_come_from_the_real_file() {
        let dir = tempfile::tempdir().unwrap();
        let now = read().unwrap();
        let Some(name) = now.keys().next().cloned() else {
            return;
        };
        let dev = StackDevice {
            name,
            path: "/dev/x".into(),
            role: crate::stack::blockdevs::DeviceRole::Data,
            emulated: None,
        };
        let gone = StackDevice {
            name: "no-such-disk".into(),
            ..dev.clone()
        };
        let mut m = Diskstats::start(dir.path(), &[dev, gone], 0.0).unwrap();
        m.sample(0.5, Some("run")).unwrap();
        m.sample(1.0, None).unwrap();
        let (s, warnings) = m.finish();
        assert_eq!(s[0].seconds, 1.0);
        assert_eq!(s[0].phases.len(), 2);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let text = std::fs::read_to_string(dir.path().join("diskstats.csv")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[1].split(',').count(), HEADER.split(',').count());
        assert!(lines[1].starts_with("0.500,run,"));
    }
}
