//! A trial's files, as written and read back: result.json as one versioned, typed document
//! ([`TrialResult`], documented in docs/result-format.md), samples.csv and timeseries.csv
//! ([`csv`]), and a finished trial as found in a results directory ([`found`]). Everything that
//! reads result.json (the study table, the report, `iotrial compare`, `iotrial analyze`) reads
//! it through [`read`]; the trial writes it through [`fn@write`].

pub mod csv;
pub mod emulated;
pub mod fingerprint;
pub mod found;
mod legacy;
pub mod monitor;

pub use found::{StackTrials, Trial};

use crate::engine::{PhaseRecord, SampleSet};
use crate::params::Params;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};
use std::path::Path;

/// The layout version of result.json this iotrial writes and reads. Older documents (version 1,
/// and those without `format_version`, written before it existed) are migrated when read.
pub const FORMAT_VERSION: u32 = 2;

/// The verdict figure every trial in a guest adds to its kind's: the host CPU its QEMU
/// process used while the trial ran, percent of one core. Left out when a kind reads its
/// verdict ([`TrialResult::verdict_as`]).
pub const HOST_CPU_PCT: &str = "host_cpu_pct";

/// A file of a results directory could not be read or written, or says something this
/// iotrial cannot read.
#[derive(Debug, thiserror::Error)]
pub enum ResultError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Format { path: String, message: String },
}

impl ResultError {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        ResultError::Io {
            path: path.display().to_string(),
            source,
        }
    }

    pub fn format(path: &Path, message: impl Into<String>) -> Self {
        ResultError::Format {
            path: path.display().to_string(),
            message: message.into(),
        }
    }
}

/// result.json: what a trial was (workload, parameters, target and stack as built), what it
/// found (per-stream figures and the verdict, whose fields are the workload kind's) and every
/// caveat. Keys are those of docs/result-format.md; an unknown key is an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrialResult {
    /// [`FORMAT_VERSION`].
    pub format_version: u32,
    /// The iotrial that ran the trial.
    pub iotrial_version: String,
    /// The workload's name in the study (its kind unless the study names it).
    pub workload: String,
    /// The workload kind (`dvr`): what `params`, `streams` and `verdict` hold.
    pub kind: String,
    /// Every parameter of the kind, resolved, in base units (bytes, seconds, counts).
    pub params: Map<String, Json>,
    /// Where the trial ran and how its I/O was done.
    pub target: TrialTarget,
    /// The stack as built: commands run, mkfs, mount options read back, scheduler, devices,
    /// emulated device statistics. Its fields depend on the device and layout.
    pub stack: Json,
    /// Times are the measured ones multiplied by this (emulated devices run faster than
    /// their model); 1 for real devices.
    pub time_scale: f64,
    /// When the trial started, `2026-11-22T02:15:42Z`.
    pub started_utc: String,
    /// Wall time of the whole trial (building the stack included), seconds.
    pub duration_s: f64,
    /// Caveats: from building the stack, from the analysis, from releasing the stack.
    pub warnings: Vec<String>,
    /// The workload's phases as they ran, in order (empty in documents from before phases).
    pub phases: Vec<PhaseRecord>,
    /// One object per stream, fields of the workload kind.
    pub streams: Vec<Json>,
    /// The verdict, fields of the workload kind.
    pub verdict: Json,
    /// What the monitors saw (absent in trials written before monitors existed).
    #[serde(default)]
    pub monitor: monitor::MonitorSummary,
    /// Where the trial ran: host, devices, tool versions, dirty-page settings (absent in
    /// trials written before fingerprints).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<fingerprint::Fingerprint>,
    /// The trial's identity in its study (absent from `iotrial run` before studies recorded
    /// it, and in older trials).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<TrialIdentity>,
    /// A power-cut trial's durability verdict ([`crate::durability`]); absent without a cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durability: Option<Json>,
}

/// result.json's `trial`: which trial of which study this is, the same on every machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrialIdentity {
    /// `<stack>/<workload>/r<N>`.
    pub id: String,
    /// The trial's digest (of its workload, parameters, stack and repeat).
    pub digest: String,
    /// The hash of the resolved study it belongs to.
    pub study_hash: String,
    /// Seconds from the end of the study's last trial that ran to this trial's start, in a
    /// study that pauses between trials (`pause`); absent otherwise, and for a study's first
    /// trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_before_s: Option<f64>,
}

/// Where a trial ran and how its I/O was done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrialTarget {
    /// The device specs, space-separated (`dir:/tmp/x`, `emu:hdd,size=4GiB`).
    pub spec: String,
    /// `files`, `partitions` or `regions`.
    pub layout: String,
    /// Whether the I/O bypassed the page cache (O_DIRECT).
    pub direct_io: bool,
    /// The engine backend (`psync`).
    pub backend: String,
    /// The CPUs the workload's stream threads ran on, kept off the emulated devices' timer
    /// CPUs; absent when they ran on every CPU the process may use (and in older trials).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload_cpus: Option<Vec<usize>>,
}

/// What `iotrial analyze --json` prints: the analysis part of result.json, with the same keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Analysis {
    pub format_version: u32,
    pub kind: String,
    pub params: Map<String, Json>,
    pub warnings: Vec<String>,
    pub streams: Vec<Json>,
    pub verdict: Json,
}

impl TrialResult {
    /// The document in `value`: the current format as it is, an older one migrated, a newer
    /// one refused. The error says what is wrong (the caller adds the path).
    pub fn from_json(mut value: Json) -> Result<TrialResult, String> {
        match value.get("format_version").map(Json::as_u64) {
            None | Some(Some(1)) => legacy::migrate(&mut value)?,
            Some(Some(v)) if v == u64::from(FORMAT_VERSION) => {}
            Some(_) => {
                return Err(format!(
                    "format_version {} is not one this iotrial reads (it reads 1 to {FORMAT_VERSION} and documents without format_version); a newer iotrial wrote it",
                    value["format_version"]
                ))
            }
        }
        serde_json::from_value(value).map_err(|e| e.to_string())
    }

    /// The verdict as the kind's type `T` (without [`HOST_CPU_PCT`], which is no kind's).
    pub fn verdict_as<T: DeserializeOwned>(&self) -> Result<T, String> {
        let mut v = self.verdict.clone();
        if let Some(m) = v.as_object_mut() {
            m.remove(HOST_CPU_PCT);
        }
        T::deserialize(&v).map_err(|e| format!("verdict: {e}"))
    }

    /// The host CPU of a trial that ran in a guest (see [`HOST_CPU_PCT`]).
    pub fn host_cpu_pct(&self) -> Option<f64> {
        self.verdict.get(HOST_CPU_PCT).and_then(Json::as_f64)
    }

    /// The streams as the kind's type `T`.
    pub fn streams_as<T: DeserializeOwned>(&self) -> Result<Vec<T>, String> {
        self.streams
            .iter()
            .enumerate()
            .map(|(i, s)| T::deserialize(s).map_err(|e| format!("streams[{i}]: {e}")))
            .collect()
    }

    /// The first device's model (emulated or real) or, failing that, its spec.
    pub fn device_name(&self) -> Option<String> {
        let d = &self.stack["devices"][0];
        d["model"]
            .as_str()
            .or(d["spec"].as_str())
            .or(d.as_str())
            .map(str::to_string)
    }

    /// The first device's size in bytes, when the stack was built on a block device.
    pub fn device_size(&self) -> Option<u64> {
        self.stack["devices"][0]["size_bytes"].as_u64()
    }
}

/// `params` of result.json: every parameter of `params` in base units.
pub fn params_object(params: &Params) -> Map<String, Json> {
    match params.to_json() {
        Json::Object(m) => m,
        _ => Map::new(),
    }
}

/// Reads and checks the result.json at `path` (see [`TrialResult::from_json`]).
pub fn read(path: &Path) -> Result<TrialResult, ResultError> {
    let text = std::fs::read_to_string(path).map_err(|e| ResultError::io(path, e))?;
    let value: Json =
        serde_json::from_str(&text).map_err(|e| ResultError::format(path, e.to_string()))?;
    if value.get("format_version").and_then(Json::as_u64) == Some(FORMAT_VERSION.into()) {
        // The current format straight from the text, so an error names its line and column.
        if let Ok(doc) = serde_json::from_str::<TrialResult>(&text) {
            return Ok(doc);
        }
    }
    TrialResult::from_json(value).map_err(|m| ResultError::format(path, m))
}

/// Reads the samples.csv at `path`, with the phases of `doc` (the trial's result.json) when it
/// has them: their sampling starts are exact, where samples.csv alone only gives each phase's
/// first issue.
pub fn read_samples(path: &Path, doc: Option<&TrialResult>) -> Result<SampleSet, ResultError> {
    let set = csv::read_samples(path)?;
    match doc {
        Some(d) if !d.phases.is_empty() => set
            .rephase(d.phases.clone())
            .map_err(|m| ResultError::format(path, m)),
        _ => Ok(set),
    }
}

/// Writes `doc` (result.json or any other serializable document) as pretty-printed JSON
/// followed by a newline.
pub fn write<T: Serialize>(path: &Path, doc: &T) -> Result<(), ResultError> {
    let mut text = serde_json::to_string_pretty(doc).expect("a result serializes");
    text.push('\n');
    std::fs::write(path, text).map_err(|e| ResultError::io(path, e))
}

#[cfg(test)]
pub(crate) mod example {
    //! A complete result.json, for tests of the readers.

    use super::*;
    use serde_json::json;

    /// A trial's document of kind `kind` with `verdict` as given (its other fields plausible).
    pub fn doc(kind: &str, verdict: Json) -> TrialResult {
        TrialResult {
            format_version: FORMAT_VERSION,
            iotrial_version: "0.1.0".into(),
            workload: kind.into(),
            kind: kind.into(),
            params: Map::new(),
            target: TrialTarget {
                spec: "dir:/tmp/x".into(),
                layout: "files".into(),
                direct_io: true,
                backend: "psync".into(),
                workload_cpus: None,
            },
            stack: json!({"name": "x", "layout": "files", "devices": ["dir:/tmp/x"]}),
            time_scale: 1.0,
            started_utc: "2026-11-22T02:15:42Z".into(),
            duration_s: 1.0,
            warnings: vec![],
            phases: vec![],
            streams: vec![],
            verdict,
            monitor: Default::default(),
            fingerprint: None,
            trial: None,
            durability: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trips_and_refuses_unknown_keys() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("result.json");
        let doc = example::doc("test", json!({"meets_target": true}));
        write(&p, &doc).unwrap();
        assert_eq!(read(&p).unwrap(), doc);
        let mut v = serde_json::to_value(&doc).unwrap();
        v["verdit"] = json!({});
        std::fs::write(&p, v.to_string()).unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(
            e.contains("result.json") && e.contains("unknown field `verdit`"),
            "{e}"
        );
    }

    #[test]
    fn newer_format_is_refused_by_name() {
        let mut v = serde_json::to_value(example::doc("test", json!({}))).unwrap();
        v["format_version"] = json!(FORMAT_VERSION + 1);
        let e = TrialResult::from_json(v).unwrap_err();
        assert!(e.contains("newer iotrial"), "{e}");
    }
}
