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
