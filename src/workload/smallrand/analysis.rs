//! smallrand's verdict: per phase, each thread's KB/s (KiB moved over the time from its first
//! issue to its last completion in the phase, as an iozone child times itself), summed over
//! the threads as iozone's throughput mode reports "Children see throughput".

use super::{IOZONE_NAMES, STAGES};
use crate::engine::SampleSet;
use crate::params::Params;
use crate::present::Rows;
use crate::workload::{AnalysisError, Outcome};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// The verdict: result.json's `verdict`, KB/s (1024 bytes) summed over the threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[allow(non_snake_case)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    pub write_kB_s: Option<f64>,
    pub rewrite_kB_s: Option<f64>,
    pub read_kB_s: Option<f64>,
    pub reread_kB_s: Option<f64>,
    pub random_read_kB_s: Option<f64>,
    pub random_write_kB_s: Option<f64>,
    /// Operations that failed, over every phase.
    pub errors: u64,
}

impl Verdict {
    /// The six figures in [`STAGES`] order.
    pub fn figures(&self) -> [Option<f64>; 6] {
        [
            self.write_kB_s,
            self.rewrite_kB_s,
            self.read_kB_s,
            self.reread_kB_s,
            self.random_read_kB_s,
            self.random_write_kB_s,
        ]
    }
}

/// One thread's KB/s per phase: result.json's `streams`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadFigures {
    pub name: String,
    /// KB/s per phase in [`STAGES`] order (null for a phase it did not run).
    #[serde(rename = "kB_s")]
    pub kb_s: Vec<Option<f64>>,
}

/// What analysis of a smallrand run gives.
pub struct SmallRandOutcome {
    pub verdict: Verdict,
    pub threads: Vec<ThreadFigures>,
    pub warnings: Vec<String>,
}

/// KB/s of each stream in phase `phase`, and the errors there.
fn phase_rates(
    samples: &SampleSet,
    phase: usize,
) -> Result<(Vec<Option<f64>>, u64), AnalysisError> {
    let mut errors = 0;
    let rates = samples
        .load_phase(phase)?
        .iter()
        .map(|s| {
            errors += s.samples.iter().filter(|x| x.errno != 0).count() as u64;
            let first = s.samples.iter().map(|x| x.issue_ns).min()?;
            let last = s.samples.iter().map(|x| x.done_ns()).max()?;
            let bytes: u64 = s.ok().map(|x| x.bytes).sum();
            (last > first).then(|| bytes as f64 / 1024.0 / ((last - first) as f64 / 1e9))
        })
        .collect();
    Ok((rates, errors))
}

/// The verdict of a smallrand run.
pub fn analyze(_p: &Params, samples: &SampleSet) -> Result<SmallRandOutcome, AnalysisError> {
    let mut sums = [None; 6];
    let mut threads: Vec<ThreadFigures> = Vec::new();
    let mut errors = 0;
    let mut warnings = Vec::new();
    for (k, (name, _, _)) in STAGES.iter().enumerate() {
        let Some(ix) = samples.phase_index(name) else {
            warnings.push(format!("phase {name} did not run"));
            continue;
        };
        let (rates, e) = phase_rates(samples, ix)?;
        errors += e;
        threads.resize_with(rates.len().max(threads.len()), || ThreadFigures {
            name: String::new(),
            kb_s: vec![None; 6],
        });
        for (t, r) in threads.iter_mut().zip(&rates) {
            t.kb_s[k] = *r;
        }
        sums[k] = rates.iter().flatten().copied().reduce(|a, b| a + b);
    }
    for (t, s) in threads.iter_mut().zip(&samples.streams) {
        t.name = s.name.clone();
    }
    if errors > 0 {
        warnings.push(format!("{errors} operations failed"));
    }
    let [w, rw, r, rr, rnd_r, rnd_w] = sums;
    Ok(SmallRandOutcome {
        verdict: Verdict {
            write_kB_s: w,
            rewrite_kB_s: rw,
            read_kB_s: r,
            reread_kB_s: rr,
            random_read_kB_s: rnd_r,
            random_write_kB_s: rnd_w,
            errors,
        },
        threads,
        warnings,
    })
}

fn kbs(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.0}"))
}

impl Outcome for SmallRandOutcome {
    fn streams_json(&self) -> Vec<Json> {
        crate::workload::streams_json(&self.threads)
    }

    fn verdict_json(&self) -> Json {
        crate::workload::verdict_json(&self.verdict)
    }

    fn stream_rows(&self) -> Rows {
        let mut headings = vec!["thread".to_string()];
        headings.extend(IOZONE_NAMES.iter().map(|n| format!("{n} (kB/s)")));
        let rows = self
            .threads
            .iter()
            .map(|t| {
                let mut row = vec![t.name.clone()];
                row.extend(t.kb_s.iter().map(|x| kbs(*x)));
                row
            })
            .collect();
        Rows { headings, rows }
    }

    fn verdict_line(&self) -> String {
        let parts: Vec<String> = IOZONE_NAMES
            .iter()
            .zip(self.verdict.figures())
            .map(|(n, v)| format!("{n} {} kB/s", kbs(v)))
            .collect();
        format!("children see throughput: {}", parts.join(", "))
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}
