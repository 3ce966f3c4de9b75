//! Running a capacity search on one stack: the hammering run first (its verdict says where to
//! start), then each probe a full trial in real time on a freshly built stack, as the search
//! asks ([`super::search`]); every run's files go under the search's directory
//! (`probes/hammer/`, `probes/<vary>-<value>-r<run>/`), and the search's own result.json (kind
//! `capacity`) carries the run at capacity's stack, phases and monitors beside the verdict. A
//! capacity whose streams ask more than the hammering run sustained is answered with what the
//! stack sustains instead ([`bound`]).

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

/// The answer a search gives, held to what the stack sustained.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// The capacity, or the highest value whose streams ask no more than the stack sustained.
    pub answer: Option<f64>,
    /// Why the capacity is only an upper bound, when it is.
    pub why: Option<String>,
}

/// Holds `capacity` (the highest value every run of which passed) to `sustained` (MB/s, what
/// the hammering run moved): when the streams at `capacity` ask more (`demand`), the runs
/// ended before the buffers and the page cache filled, so `capacity` is an upper bound and the
/// answer is the highest value of `domain` whose streams ask no more than `sustained`.
pub fn bound(
    capacity: Option<f64>,
    domain: search::Domain,
    sustained: Option<f64>,
    demand: &dyn Fn(f64) -> Option<f64>,
    vary: &str,
) -> Bound {
    let (Some(c), Some(m)) = (capacity, sustained) else {
        return Bound {
            answer: capacity,
            why: None,
        };
    };
    let Some(d) = demand(c).filter(|&d| d > m) else {
        return Bound {
            answer: capacity,
            why: None,
        };
    };
    let mut answer = None;
    let mut k = 0;
    loop {
        let v = domain.value(k);
        if v > c || demand(v).is_none_or(|x| x > m) {
            break;
        }
        answer = Some(v);
        k += 1;
    }
    let t = |x: f64| crate::units::trim_float((x * 1000.0).round() / 1000.0);
    // Whole MB/s, or one decimal where whole numbers would read as equal.
    let digits = usize::from(format!("{d:.0}") == format!("{m:.0}"));
    let (d, m) = (format!("{d:.digits$}"), format!("{m:.digits$}"));
    let said = match answer {
        Some(a) => format!("{} is what {m} MB/s carries", t(a)),
        None => format!("even {} asks more than {m} MB/s", t(domain.min)),
    };
    Bound {
        answer,
        why: Some(format!(
            "{vary} = {} passed its runs, but its streams ask {d} MB/s, more than the {m} MB/s the hammering run sustained: a run that short ends before its buffers and the page cache fill, so {} is an upper bound; {said}",
            t(c),
            t(c)
        )),
    }
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
    let sustained = kind.sustained_mb_s(&hammer.doc.verdict, &hammer.doc.streams);
    let demand = |v: f64| kind.demand_mb_s(&s.spec.probe_params(s.params, v));
    let bound = bound(edge.capacity, domain, sustained, &demand, &s.spec.vary);
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
        sustained_mb_s: sustained,
        capacity_demand_mb_s: edge.capacity.and_then(demand),
        answer: bound.answer,
        upper_bound: bound.why,
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
    if let Some(b) = &verdict.upper_bound {
        warnings.push(format!("the capacity is an upper bound: {b}"));
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

#[cfg(test)]
mod tests {
    use super::*;

    const STREAMS: search::Domain = search::Domain {
        min: 1.0,
        max: 128.0,
        step: 1.0,
    };

    /// 100 Mbit/s cameras: 12.5 MB/s each.
    fn cameras(v: f64) -> Option<f64> {
        Some(v * 12.5)
    }

    #[test]
    fn a_capacity_above_what_the_stack_sustained_is_an_upper_bound() {
        // The README's record: 12 cameras passed 10 s runs on a drive that sustained 96 MB/s.
        let b = bound(Some(12.0), STREAMS, Some(96.0), &cameras, "writers");
        assert_eq!(
            b.answer,
            Some(7.0),
            "7 x 12.5 = 87.5 MB/s fits, 8 x 12.5 = 100 does not"
        );
        let why = b.why.unwrap();
        assert!(why.contains("150 MB/s") && why.contains("96 MB/s"), "{why}");
        assert!(
            why.contains("12 is an upper bound") && why.contains("7 is what"),
            "{why}"
        );
        // Rates that round to the same whole number keep a decimal, so they read apart.
        let why = bound(Some(4.0), STREAMS, Some(49.6), &cameras, "writers")
            .why
            .unwrap();
        assert!(
            why.contains("ask 50.0 MB/s, more than the 49.6 MB/s"),
            "{why}"
        );
    }

    #[test]
    fn a_capacity_within_what_the_stack_sustained_stands() {
        let b = bound(Some(7.0), STREAMS, Some(96.0), &cameras, "writers");
        assert_eq!(
            b,
            Bound {
                answer: Some(7.0),
                why: None
            }
        );
        // Nothing to hold it to: it stands.
        let b = bound(Some(12.0), STREAMS, None, &cameras, "writers");
        assert_eq!(b.answer, Some(12.0));
        let b = bound(None, STREAMS, Some(96.0), &cameras, "writers");
        assert_eq!(b.answer, None);
        // Even the least asks too much.
        let b = bound(Some(3.0), STREAMS, Some(10.0), &cameras, "writers");
        assert_eq!(b.answer, None);
        assert!(b.why.unwrap().contains("even 1 asks more"));
    }
}
