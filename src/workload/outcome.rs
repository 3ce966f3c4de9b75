//! What analysis of one trial produces ([`Outcome`]: result.json's `streams` and `verdict`, the
//! terminal's rows and verdict line), and the helpers every kind writes and reads them with.

use super::realtime::{self, RealtimeOutcome};
use crate::engine::SampleSet;
use crate::present::{Rows, VerdictFigures};
use crate::result::{ResultError, Trial};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value as Json;

/// What analysis of one trial produced.
pub trait Outcome: Send {
    /// result.json's `streams`: one object per stream, in layout order.
    fn streams_json(&self) -> Vec<Json>;
    /// result.json's `verdict`.
    fn verdict_json(&self) -> Json;
    /// One row per stream for the terminal.
    fn stream_rows(&self) -> Rows;
    /// The verdict in one sentence.
    fn verdict_line(&self) -> String;
    /// Caveats found while analysing (short run, errors, ...).
    fn warnings(&self) -> Vec<String>;

    /// Real-time streams: what the replay of their buffers found; `None` when the streams did
    /// not run in real time (and for kinds whose streams never do).
    fn live(&self) -> Option<&RealtimeOutcome> {
        None
    }

    /// Real-time streams: the stack's real-time verdict (what a capacity search judges a run
    /// by); `None` when the streams did not run in real time.
    fn realtime(&self) -> Option<realtime::Summary> {
        self.live().map(|l| l.summary.clone())
    }

    /// Real-time streams: each one's buffer per interval, for timeseries.csv.
    fn buffers(&self) -> Vec<crate::analysis::timeseries::BufferSeries> {
        self.live().map(|l| l.series.clone()).unwrap_or_default()
    }

    /// Writes the kind's own files into the trial's directory `dir` (fio's logs and json+ for
    /// a job trial), from `samples`; the files written.
    fn write_files(
        &self,
        _samples: &SampleSet,
        _dir: &std::path::Path,
    ) -> std::io::Result<Vec<std::path::PathBuf>> {
        Ok(Vec::new())
    }
}

/// result.json's `streams` from a kind's per-stream figures.
pub fn streams_json<T: Serialize>(streams: &[T]) -> Vec<Json> {
    streams
        .iter()
        .map(|f| serde_json::to_value(f).expect("stream figures serialize"))
        .collect()
}

/// result.json's `verdict` from a kind's verdict.
pub fn verdict_json<T: Serialize>(verdict: &T) -> Json {
    serde_json::to_value(verdict).expect("a verdict serializes")
}

/// A finished trial's verdict figures, read through its kind's verdict type `V`.
pub fn figures_of<V: DeserializeOwned>(
    trial: &Trial,
    figures: impl Fn(&V) -> VerdictFigures,
) -> Result<VerdictFigures, ResultError> {
    let v: V = trial.result.verdict_as().map_err(|e| trial.error(e))?;
    Ok(figures(&v))
}

/// Checks a kind's declarations against one of its outcomes: every column is the verdict field
/// of its key (absent or `null` where this outcome has no value: a real-time figure of a
/// hammering run),
/// and the verdict and the streams read back into the kind's types `V` and `S` as they were.
#[cfg(test)]
pub(crate) fn assert_figures_round_trip<V, S>(
    columns: &[crate::present::FigureSpec],
    figures: &VerdictFigures,
    outcome: &dyn Outcome,
    verdict: &V,
    streams: &[S],
) where
    V: DeserializeOwned + PartialEq + std::fmt::Debug,
    S: DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let json = outcome.verdict_json();
    assert_eq!(figures.values.len(), columns.len());
    for (c, v) in columns.iter().zip(&figures.values) {
        assert!(
            v.is_none() || json.get(c.key).is_some(),
            "verdict.{} is written",
            c.key
        );
        assert_eq!(json[c.key].as_f64(), *v, "verdict.{}", c.key);
    }
    assert_eq!(json["meets_target"].as_bool(), figures.meets_target);
    assert_eq!(&serde_json::from_value::<V>(json).unwrap(), verdict);
    let back: Vec<S> = outcome
        .streams_json()
        .into_iter()
        .map(|s| serde_json::from_value(s).unwrap())
        .collect();
    assert_eq!(back, streams);
}
