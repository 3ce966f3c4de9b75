//! Running a capacity search on one stack: the hammering run first (its verdict says where to
//! start), then each probe a full trial in real time on a freshly built stack, as the search
//! asks ([`super::search`]); every run's files go under the search's directory
//! (`probes/hammer/`, `probes/<vary>-<value>-r<run>/`), and the search's own result.json (kind
//! `capacity`) carries the run at capacity's stack, phases and monitors beside the verdict.

use super::figures::{ProbeFigures, Verdict};
use super::search::{self, Edge};
use super::spec::CapacitySpec;
use super::{CapacityError, KIND};
use crate::params::Params;
use crate::result::{self, TrialResult};
use crate::stack::ledger::Ledger;
use crate::trial::{self, Setup, TrialOutput};
use crate::utc::utc_iso;
use crate::workload::Workload;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

/// One capacity search on one stack.
pub struct Search<'a> {
    pub workload: &'static dyn Workload,
    /// The workload's parameters; the probes run them in real time with `vary` set.
    pub params: &'a Params,
    pub spec: &'a CapacitySpec,
    pub setup: &'a Setup<'a>,
    /// The directory the search writes (its probes go under `probes/`).
    pub dir: &'a Path,
    /// Draw each run's progress bar.
    pub progress: bool,
}

/// What a search found: its result.json and the verdict in it.
pub struct Found {
    pub doc: TrialResult,
    pub verdict: Verdict,
}

/// The directory of a probe, relative to the search's.
fn probe_dir(vary: &str, value: f64, run: u32) -> String {
    let v = crate::units::trim_float((value * 1000.0).round() / 1000.0);
    format!("probes/{vary}-{v}-r{run}")
}

/// Runs one trial and writes it to `dir`/`rel`; the trial's output and its wall time.
fn one(
    s: &Search,
    params: &Params,
    rel: &str,
    ledger: &mut Ledger,
    stop: &Arc<AtomicBool>,
) -> Result<(TrialOutput, f64), CapacityError> {
    let t = Instant::now();
    let out = trial::run(s.workload, params, s.setup, ledger, stop, s.progress)?;
    let dir = s.dir.join(rel);
    std::fs::create_dir_all(&dir).map_err(|e| result::ResultError::io(&dir, e))?;
    trial::write(&dir, &out)?;
    Ok((out, t.elapsed().as_secs_f64()))
}

/// Runs the search `s`, telling `say` one line per run.
pub fn run(
    s: &Search,
    ledger: &mut Ledger,
    stop: &Arc<AtomicBool>,
    say: &mut dyn FnMut(String),
) -> Result<Found, CapacityError> {
    let started = SystemTime::now();
    let t0 = Instant::now();
    let domain = s.spec.domain(s.workload, s.params)?;
    let kind = CapacitySpec::kind_of(s.workload)?;
    let base = s.spec.probe_params(
        s.params,
        if s.spec.is_bitrate() {
            s.params.f64("bitrate")
        } else {
            s.params.u64(&s.spec.vary) as f64
        },
    );
    let hammered = kind.hammer(s.params);
    let (hammer, wall) = one(s, &hammered, "probes/hammer", ledger, stop)?;
    let estimate = kind.estimate(&base, &hammered, &s.spec.vary, &hammer.doc.verdict);
    say(format!(
        "hammering ({:.0} s): {}; {}",
        wall,
        hammer.outcome.verdict_line(),
        match &estimate {
            Some(e) => format!("estimate {:.2} {} ({})", e.value, s.spec.vary, e.basis),
            None => format!("no estimate: starting at min {}", domain.min),
        }
    ));
    let mut probes: Vec<ProbeFigures> = Vec::new();
    // Each caveat once, with the runs it came from.
    let mut caveats: Vec<(String, Vec<String>)> = Vec::new();
    let mut note = |from: &str, ws: &[String]| {
        for w in ws {
            match caveats.iter_mut().find(|(t, _)| t == w) {
                Some((_, runs)) => runs.push(from.to_string()),
                None => caveats.push((w.clone(), vec![from.to_string()])),
            }
        }
    };
    note("probes/hammer", &hammer.doc.warnings);
    let start = estimate.as_ref().map_or(domain.min, |e| e.value.floor());
    let edge: Edge = search::search(domain, start, s.spec.confirm, |value, run| {
        let rel = probe_dir(&s.spec.vary, value, run);
        let params = s.spec.probe_params(s.params, value);
        let (out, wall) = one(s, &params, &rel, ledger, stop)?;
        let summary = out.outcome.realtime().ok_or_else(|| {
            CapacityError::Spec(format!("{}: the probe did not run in real time", rel))
        })?;
        let p = ProbeFigures::of(value, run, rel, &summary, wall);
        say(format!(
            "{} = {} run {run} ({wall:.0} s): {}",
            s.spec.vary,
            crate::units::trim_float(value),
            out.outcome.verdict_line()
        ));
        note(&p.dir, &out.doc.warnings);
        probes.push(p);
        Ok::<bool, CapacityError>(summary.passed)
    })?;
    let first_failing_run = |v: f64| probes.iter().find(|p| p.value == v && !p.passed);
    let failure = edge
        .first_failing
        .and_then(first_failing_run)
        .and_then(|p| p.first_failure.clone());
    let (cap_runs, _) = edge.capacity.map_or((0, 0), |c| edge.tally(c));
    let (fail_runs, fail_failed) = edge.first_failing.map_or((0, 0), |f| edge.tally(f));
    let confirmed = edge.confirmed
        && edge.capacity.is_none_or(|_| cap_runs >= s.spec.confirm)
        && edge
            .first_failing
            .is_none_or(|_| fail_runs >= s.spec.confirm && fail_failed == fail_runs);
    let verdict = Verdict {
        workload_kind: s.workload.name().to_string(),
        vary: s.spec.vary.clone(),
        unit: s.spec.unit().to_string(),
        min: domain.min,
        max: domain.max,
        resolution: domain.step,
        confirm: s.spec.confirm,
        bitrate_mbit: (!s.spec.is_bitrate()).then(|| s.params.f64("bitrate")),
        duration_s: s.params.f64("duration"),
        capacity: edge.capacity,
        capacity_runs: cap_runs,
        first_failing: edge.first_failing,
        first_failing_runs: fail_runs,
        first_failing_failed: fail_failed,
        failure,
        confirmed,
        hammer_guarantee_mbit: estimate.as_ref().map(|e| e.guarantee_mbit),
        hammer_estimate: estimate.as_ref().map(|e| e.value),
        hammer_basis: estimate.as_ref().map(|e| e.basis.clone()),
        capacity_over_estimate: match (edge.capacity, &estimate) {
            (Some(c), Some(e)) if e.value > 0.0 => Some(c / e.value),
            _ => None,
        },
        probes,
    };
    // The stack, phases and monitors shown are the last passing run at capacity's (the
    // hammering run's when nothing passed).
    let shown = edge
        .capacity
        .and_then(|c| {
            verdict
                .probes
                .iter()
                .rev()
                .find(|p| p.value == c && p.passed)
        })
        .map(|p| result::read(&s.dir.join(&p.dir).join("result.json")))
        .transpose()?
        .unwrap_or_else(|| hammer.doc.clone());
    let mut warnings: Vec<String> = caveats
        .into_iter()
        .map(|(w, runs)| format!("{}: {w}", runs.join(", ")))
        .collect();
    if !verdict.confirmed {
        warnings.push(format!("the edge is not confirmed: {}", verdict.line()));
    }
    let doc = TrialResult {
        kind: KIND.to_string(),
        params: result::params_object(&base),
        started_utc: utc_iso(started),
        duration_s: t0.elapsed().as_secs_f64(),
        warnings,
        verdict: serde_json::to_value(&verdict).expect("a verdict serializes"),
        ..shown
    };
    Ok(Found { doc, verdict })
}
