//! replay's verdict: how long the replay took, its requests and bytes, per-request latency
//! percentiles, and in `original` pace how far behind its traced times it fell (each
//! request's lag from its due time).

use crate::analysis::stats::percentile;
use crate::engine::SampleSet;
use crate::params::Params;
use crate::present::chart::Section;
use crate::present::{Better, FigureSpec, KindReport, Rows, VerdictFigures};
use crate::result::{ResultError, StackTrials, Trial};
use crate::workload::{AnalysisError, Outcome};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// result.json's `verdict`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    /// From the first issue to the last completion, s (model time).
    pub total_s: Option<f64>,
    /// Reads and writes replayed, and syncs.
    pub ops: u64,
    pub syncs: u64,
    pub bytes: u64,
    pub errors: u64,
    pub lat_p50_ms: Option<f64>,
    pub lat_p99_ms: Option<f64>,
    pub lat_max_ms: Option<f64>,
    /// Original pace: the latest and the mean lateness of an issue behind its traced time, s.
    pub behind_max_s: Option<f64>,
    pub behind_mean_s: Option<f64>,
}

/// What analysis gives.
pub struct ReplayOutcome {
    pub verdict: Verdict,
    pub warnings: Vec<String>,
}

/// The verdict of a replay.
pub fn analyze(p: &Params, samples: &SampleSet) -> Result<ReplayOutcome, AnalysisError> {
    let all = samples.load()?;
    let s = all
        .first()
        .ok_or_else(|| AnalysisError::MissingRole("replay".into()))?;
    let data: Vec<_> = s.samples.iter().filter(|x| x.op.is_data()).collect();
    let mut lat: Vec<f64> = data
        .iter()
        .filter(|x| x.errno == 0)
        .map(|x| x.latency_ns as f64 / 1e6)
        .collect();
    lat.sort_by(f64::total_cmp);
    let first = s.samples.iter().map(|x| x.issue_ns).min();
    let last = s.samples.iter().map(|x| x.done_ns()).max();
    let errors = s.samples.iter().filter(|x| x.errno != 0).count() as u64;
    let original = p.text("pace") == "original";
    let lags: Vec<f64> = s.samples.iter().map(|x| x.lag_ns as f64 / 1e9).collect();
    let pct = |q| (!lat.is_empty()).then(|| percentile(&lat, q));
    let verdict = Verdict {
        total_s: first.zip(last).map(|(a, b)| (b - a) as f64 / 1e9),
        ops: data.len() as u64,
        syncs: (s.samples.len() - data.len()) as u64,
        bytes: data.iter().map(|x| x.bytes).sum(),
        errors,
        lat_p50_ms: pct(50.0),
        lat_p99_ms: pct(99.0),
        lat_max_ms: lat.last().copied(),
        behind_max_s: (original && !lags.is_empty())
            .then(|| lags.iter().copied().fold(0.0, f64::max)),
        behind_mean_s: (original && !lags.is_empty())
            .then(|| lags.iter().sum::<f64>() / lags.len() as f64),
    };
    let mut warnings = Vec::new();
    if errors > 0 {
        warnings.push(format!("{errors} requests failed"));
    }
    Ok(ReplayOutcome { verdict, warnings })
}

fn num(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}

impl Outcome for ReplayOutcome {
    fn streams_json(&self) -> Vec<Json> {
        Vec::new()
    }

    fn verdict_json(&self) -> Json {
        crate::workload::verdict_json(&self.verdict)
    }

    fn stream_rows(&self) -> Rows {
        let v = &self.verdict;
        Rows {
            headings: ["requests", "syncs", "bytes", "p50 ms", "p99 ms", "max ms"]
                .map(String::from)
                .to_vec(),
            rows: vec![vec![
                v.ops.to_string(),
                v.syncs.to_string(),
                v.bytes.to_string(),
                num(v.lat_p50_ms),
                num(v.lat_p99_ms),
                num(v.lat_max_ms),
            ]],
        }
    }

    fn verdict_line(&self) -> String {
        let v = &self.verdict;
        let mut line = format!(
            "replayed {} requests ({} bytes) in {} s",
            v.ops,
            v.bytes,
            num(v.total_s)
        );
        if let Some(b) = v.behind_max_s {
            line.push_str(&format!("; fell behind the trace by {b:.3} s at most"));
        }
        line
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// The verdict columns; the first ranks the stacks.
pub static COLUMNS: &[FigureSpec] = &[
    FigureSpec {
        key: "total_s",
        label: "replay time",
        unit: "s",
        better: Better::Lower,
    },
    FigureSpec {
        key: "lat_p99_ms",
        label: "p99 latency",
        unit: "ms",
        better: Better::Lower,
    },
    FigureSpec {
        key: "behind_max_s",
        label: "behind the trace",
        unit: "s",
        better: Better::Lower,
    },
];

/// The report part of `replay`.
pub struct ReplayReport;

impl KindReport for ReplayReport {
    fn columns(&self) -> &'static [FigureSpec] {
        COLUMNS
    }

    fn figures(&self, trial: &Trial) -> Result<VerdictFigures, ResultError> {
        crate::workload::figures_of(trial, |v: &Verdict| VerdictFigures {
            values: vec![v.total_s, v.lat_p99_ms, v.behind_max_s],
            meets_target: None,
            impossible: None,
            marked: None,
            caution: None,
        })
    }

    fn sections(&self, _stacks: &[StackTrials<'_>]) -> Result<Vec<Section>, ResultError> {
        Ok(Vec::new())
    }
}
