//! result.json: what a trial was (workload, parameters, target as built), what it found
//! (per-stream figures and the verdict) and every caveat, in one document.

use super::ReportError;
use crate::workload::Outcome;
use serde_json::{json, Value as Json};
use std::path::Path;

/// The pieces of one trial's result.json.
pub struct TrialDoc<'a> {
    pub workload: &'a str,
    pub params: Json,
    /// The target or stack as built.
    pub target: Json,
    pub warnings: Vec<String>,
    pub outcome: &'a dyn Outcome,
    pub started_utc: String,
    pub duration_s: f64,
}

impl TrialDoc<'_> {
    /// The whole document.
    pub fn to_json(&self) -> Json {
        let analysed = self.outcome.to_json();
        let mut warnings = self.warnings.clone();
        warnings.extend(self.outcome.warnings());
        json!({
            "iotrial_version": env!("CARGO_PKG_VERSION"),
            "workload": self.workload,
            "params": self.params,
            "target": self.target,
            "started_utc": self.started_utc,
            "duration_s": self.duration_s,
            "warnings": warnings,
            "streams": analysed["streams"],
            "verdict": analysed["verdict"],
        })
    }
}

/// Writes pretty-printed JSON followed by a newline.
pub fn write(path: &Path, doc: &Json) -> Result<(), ReportError> {
    let mut text = serde_json::to_string_pretty(doc).expect("JSON serializes");
    text.push('\n');
    std::fs::write(path, text).map_err(|e| ReportError::io(path, e))
}

/// Reads a JSON file.
pub fn read(path: &Path) -> Result<Json, ReportError> {
    let text = std::fs::read_to_string(path).map_err(|e| ReportError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| ReportError::Format {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}
