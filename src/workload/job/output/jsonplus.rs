//! A job trial as fio's `--output-format=json+` would give it (`fio.json` beside result.json),
//! so the tools of fio's ecosystem read iotrial's runs (fio_jsonplus_clat2csv, fio-plot): a
//! `jobs` entry per job clone (per reporting group with `group_reporting`), each with its
//! `read`, `write` and `trim` figures (bytes, IOPS, bandwidth, runtime, completion latency with
//! fio's percentiles and its histogram `bins`, whose counts add up to `total_ios`), its syncs,
//! its group and its options. iotrial times each I/O from its issue to its completion, so
//! `clat_ns` and `lat_ns` hold that latency; it does not time submission alone, and `slat_ns`
//! is written empty (`N` 0), as fio writes it for engines that do not measure it.

use super::hist::Lat;
use super::logs::ddir;
use crate::engine::{Op, Sample};
use serde_json::{json, Map, Value as Json};

/// One data direction's figures.
#[derive(Clone, Default)]
pub struct DirStats {
    pub lat: Lat,
    pub bytes: u64,
    /// Completions per 500 ms window (fio's bandwidth and IOPS samples), and their bytes.
    windows: Vec<(u64, u64)>,
}

/// What one `jobs` entry is made of.
#[derive(Clone, Default)]
pub struct Entry {
    pub dirs: [DirStats; 3],
    pub syncs: Lat,
    pub first_ns: u64,
    pub last_ns: u64,
    seen: bool,
}

const WINDOW_NS: u64 = 500_000_000;

impl Entry {
    /// Adds one sample (times since the same origin for every sample of the entry).
    pub fn add(&mut self, s: &Sample) {
        if !self.seen || s.issue_ns < self.first_ns {
            self.first_ns = s.issue_ns;
        }
        self.seen = true;
        self.last_ns = self.last_ns.max(s.done_ns());
        if s.errno != 0 {
            return;
        }
        let lat = s.latency_ns + s.lag_ns;
        if matches!(s.op, Op::Fsync | Op::Fdatasync) {
            self.syncs.add(lat);
            return;
        }
        let Some(d) = ddir(s.op) else { return };
        let dir = &mut self.dirs[d as usize];
        dir.lat.add(lat);
        dir.bytes += s.bytes;
        let w = (s.done_ns() / WINDOW_NS) as usize;
        if dir.windows.len() <= w {
            dir.windows.resize(w + 1, (0, 0));
        }
        dir.windows[w].0 += 1;
        dir.windows[w].1 += s.bytes;
    }

    /// Adds every sample of `o` (a group's entry from its clones').
    pub fn merge(&mut self, o: &Entry) {
        if !o.seen {
            return;
        }
        if !self.seen || o.first_ns < self.first_ns {
            self.first_ns = o.first_ns;
        }
        self.seen = true;
        self.last_ns = self.last_ns.max(o.last_ns);
        for (a, b) in self.dirs.iter_mut().zip(&o.dirs) {
            a.lat.merge(&b.lat);
            a.bytes += b.bytes;
            if a.windows.len() < b.windows.len() {
                a.windows.resize(b.windows.len(), (0, 0));
            }
            for (x, y) in a.windows.iter_mut().zip(&b.windows) {
                x.0 += y.0;
                x.1 += y.1;
            }
        }
        self.syncs.merge(&o.syncs);
    }

    fn runtime_ms(&self) -> u64 {
        self.last_ns.saturating_sub(self.first_ns) / 1_000_000
    }
}

/// min, max, mean, stddev of `xs`.
fn spread(xs: &[f64]) -> (f64, f64, f64, f64) {
    if xs.is_empty() {
        return (0.0, 0.0, 0.0, 0.0);
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = if xs.len() > 1 {
        xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (min, max, mean, var.sqrt())
}

fn summary(l: &Lat) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("min".into(), json!(if l.n == 0 { 0 } else { l.min }));
    m.insert("max".into(), json!(l.max));
    m.insert("mean".into(), json!(l.mean()));
    m.insert("stddev".into(), json!(l.stddev()));
    m.insert("N".into(), json!(l.n));
    m
}

/// One direction as fio writes it.
fn direction(d: &DirStats, runtime_ms: u64, percentiles: &[f64]) -> Json {
    let secs = runtime_ms as f64 / 1e3;
    let per_s = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
    let mut clat = summary(&d.lat);
    if d.lat.n > 0 {
        let pct: Map<String, Json> = percentiles
            .iter()
            .map(|&p| (format!("{p:.6}"), json!(d.lat.percentile(p))))
            .collect();
        clat.insert("percentile".into(), Json::Object(pct));
        let bins: Map<String, Json> = d
            .lat
            .counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (super::hist::value(i).to_string(), json!(c)))
            .collect();
        clat.insert("bins".into(), Json::Object(bins));
    }
    let span = WINDOW_NS as f64 / 1e9;
    let full = d.windows.len().saturating_sub(1);
    let bw: Vec<f64> = d.windows[..full]
        .iter()
        .map(|w| w.1 as f64 / 1024.0 / span)
        .collect();
    let iops: Vec<f64> = d.windows[..full]
        .iter()
        .map(|w| w.0 as f64 / span)
        .collect();
    let (bmin, bmax, bmean, bdev) = spread(&bw);
    let (imin, imax, imean, idev) = spread(&iops);
    json!({
        "io_bytes": d.bytes,
        "io_kbytes": d.bytes / 1024,
        "bw_bytes": per_s(d.bytes as f64) as u64,
        "bw": (per_s(d.bytes as f64) / 1024.0) as u64,
        "iops": per_s(d.lat.n as f64),
        "runtime": runtime_ms,
        "total_ios": d.lat.n,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
        "clat_ns": Json::Object(clat),
        "lat_ns": Json::Object(summary(&d.lat)),
        "bw_min": bmin as u64,
        "bw_max": bmax as u64,
        "bw_agg": if d.lat.n > 0 { 100.0 } else { 0.0 },
        "bw_mean": bmean,
        "bw_dev": bdev,
        "bw_samples": bw.len(),
        "iops_min": imin as u64,
        "iops_max": imax as u64,
        "iops_mean": imean,
        "iops_stddev": idev,
        "iops_samples": iops.len(),
    })
}

/// One `jobs` entry.
pub fn job(
    name: &str,
    group: usize,
    options: &Map<String, Json>,
    e: &Entry,
    percentiles: &[f64],
) -> Json {
    let rt = e.runtime_ms();
    json!({
        "jobname": name,
        "groupid": group,
        "error": 0,
        "eta": 0,
        "elapsed": rt.div_ceil(1000),
        "job options": options,
        "read": direction(&e.dirs[0], rt, percentiles),
        "write": direction(&e.dirs[1], rt, percentiles),
        "trim": direction(&e.dirs[2], rt, percentiles),
        "sync": {"total_ios": e.syncs.n, "lat_ns": summary(&e.syncs)},
        "job_runtime": rt,
    })
}

/// The whole document around `jobs`, stamped `unix_s`.
pub fn document(jobs: Vec<Json>, unix_s: u64) -> Json {
    json!({
        "fio version": format!("iotrial-{} (fio 3.33's json+)", env!("CARGO_PKG_VERSION")),
        "timestamp": unix_s,
        "timestamp_ms": unix_s * 1000,
        "time": crate::utc::utc_iso(std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix_s)),
        "global options": {},
        "jobs": jobs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_add_up_to_the_ios_and_directions_apart() {
        let mut e = Entry::default();
        for k in 0..1000u64 {
            e.add(&Sample {
                op: if k % 4 == 0 { Op::Write } else { Op::Read },
                bytes: 4096,
                issue_ns: k * 1_000_000,
                latency_ns: 50_000 + k * 10,
                ..Sample::default()
            });
        }
        e.add(&Sample {
            op: Op::Fsync,
            issue_ns: 5,
            latency_ns: 1000,
            ..Sample::default()
        });
        let j = job("j", 0, &Map::new(), &e, &[50.0, 99.0]);
        for (d, n) in [("read", 750u64), ("write", 250)] {
            assert_eq!(j[d]["total_ios"], n);
            let bins: u64 = j[d]["clat_ns"]["bins"]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_u64().unwrap())
                .sum();
            assert_eq!(bins, n, "{d}");
            assert_eq!(j[d]["io_bytes"], n * 4096);
        }
        assert!(
            j["trim"]["clat_ns"].get("bins").is_none(),
            "no bins without I/O"
        );
        assert_eq!(j["sync"]["total_ios"], 1);
        assert!(j["read"]["clat_ns"]["percentile"]
            .get("99.000000")
            .is_some());
        assert!(
            (j["read"]["iops"].as_f64().unwrap() - 750.0 / 0.999).abs() < 5.0,
            "{}",
            j["read"]["iops"]
        );
    }
}
