//! Small helpers for reading what a run wrote: the median of a bench's rounds, the results
//! directory a run made, the I/Os of a result.json's streams.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// The median of `v` (the upper one of an even count); `v` not empty.
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The one results directory a run made in `out`.
pub fn results_root(out: &Path) -> PathBuf {
    std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .expect("a results directory")
}

/// The operations of every stream of a result.json (`streams[].ios`).
pub fn total_ios(doc: &Value) -> f64 {
    doc["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["ios"].as_f64().unwrap())
        .sum()
}

/// The highest write rate (MB/s) one data device of a trial took in any one interval of its
/// diskstats series (`dir`: the trial's directory, `doc`: its result.json); 0 without the
/// series. A study's raw reference drawn from that series is never above it.
pub fn peak_device_write_mb_s(dir: &Path, doc: &Value) -> f64 {
    let data: Vec<&str> = doc["monitor"]["devices"]
        .as_array()
        .map(|d| {
            d.iter()
                .filter(|d| d["role"] == "data")
                .filter_map(|d| d["device"].as_str())
                .collect()
        })
        .unwrap_or_default();
    let Ok(text) = std::fs::read_to_string(dir.join("monitor/diskstats.csv")) else {
        return 0.0;
    };
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let (dev, w) = (col("device"), col("wkB_s"));
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|c| data.contains(&c[dev]))
        .map(|c| c[w].parse::<f64>().unwrap() * 1024.0 / 1e6)
        .fold(0.0, f64::max)
}
