//! The diskstats monitor: iostat -x for every block device of the stack. Each sample reads
//! /proc/diskstats once and writes one row per device to `monitor/diskstats.csv` with
//! iostat's figures, names and units, computed as sysstat computes them over the interval
//! since the previous sample (the first row is a delta over the first interval, never totals
//! since boot). The counter deltas are also summed per device and per phase for result.json,
//! beside the highest interval await and queue size of each phase (iostat's per-interval peak,
//! which a phase's mean hides).

use super::iostat::{parse, Counters, PhaseSums};
use crate::monitor::series::{CsvFile, PerPhase};
use crate::result::monitor::{DeviceSummary, IostatFigures};
use crate::stack::blockdevs::StackDevice;
use crate::timeline::Span;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// Header of diskstats.csv.
pub const HEADER: &str = "t_s,phase,device,r_s,w_s,d_s,f_s,rkB_s,wkB_s,rrqm_s,wrqm_s,r_await_ms,w_await_ms,aqu_sz,rareq_sz_kB,wareq_sz_kB,util_pct";

/// Reads /proc/diskstats.
pub fn read() -> std::io::Result<HashMap<String, Counters>> {
    Ok(parse(&std::fs::read_to_string("/proc/diskstats")?))
}

/// One watched device: its last counters and its sums.
struct Watched {
    dev: StackDevice,
    last: Option<Counters>,
    /// Summed deltas, seconds and peaks, per phase.
    phases: PerPhase<PhaseSums>,
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
        let mut names = std::collections::HashSet::new();
        let devices = devices
            .iter()
            // A device listed twice (under two roles) is read once.
            .filter(|d| names.insert(d.name.clone()))
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

    /// Takes a reading at `t_s` and writes one row per device. The interval's requests count in
    /// `phase` (the one it ended in); its peaks count in `also` too, the other phases it
    /// overlapped, so a sub-second phase's spike is not lost to the phase after it.
    pub fn sample(&mut self, t_s: f64, span: &Span, also: &[String]) -> std::io::Result<()> {
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
            let f = w.phases.get(span).add(&d, dt);
            for p in also {
                w.phases.get(&Span::Phase(p.clone())).raise_by(&d, &f);
            }
            w.util_peak = w.util_peak.max(f.util_pct);
            write_row(self.csv.start(t_s, span), &w.dev.name, &f);
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
        crate::monitor::series::field(device),
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
    let mut all = PhaseSums::default();
    let phases = w
        .phases
        .entries
        .iter()
        .map(|(p, s)| {
            all.merge(s);
            s.device_phase(Some(p))
        })
        .collect();
    let whole = all.device_phase(None);
    DeviceSummary {
        device: w.dev.name.clone(),
        role: w.dev.role.name().to_string(),
        seconds: whole.seconds,
        means: whole.means,
        await_ms: whole.await_ms,
        await_ms_peak: whole.await_ms_peak,
        aqu_sz_peak: whole.aqu_sz_peak,
        util_pct_peak: w.util_peak,
        totals: whole.totals,
        phases,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // A device listed twice is read once.
        let twice = dev.clone();
        let mut m = Diskstats::start(dir.path(), &[dev, gone, twice], 0.0).unwrap();
        m.sample(0.5, &Span::Phase("run".into()), &[]).unwrap();
        m.sample(1.0, &Span::Outside(crate::timeline::Outside::After), &[])
            .unwrap();
        let (s, warnings) = m.finish();
        assert_eq!(s[0].seconds, 1.0);
        assert_eq!(s[0].phases.len(), 2);
        let top = s[0]
            .phases
            .iter()
            .map(|p| p.aqu_sz_peak)
            .fold(0.0, f64::max);
        assert_eq!(s[0].aqu_sz_peak, top);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let text = std::fs::read_to_string(dir.path().join("diskstats.csv")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[1].split(',').count(), HEADER.split(',').count());
        assert!(lines[1].starts_with("0.500,run,"));
    }
}
