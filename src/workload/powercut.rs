//! The power cut any workload can take (`--set powercut=12s`, a study's `set`): the
//! [`crate::params::COMMON`] parameters read into a `powercut` action phase, put right after
//! the stream phase it cuts. A cut at a fixed time, after the N-th write, or at a time drawn
//! from the workload's seed and the trial's repeat, so K repeats give K different cuts.

use super::Workload;
use crate::engine::rng::SplitMix64;
use crate::engine::{Action, CutWhen, InFlight, Phase, Plan, PowerCut, Step};
use crate::params::{ParamError, Params};
use crate::units::parse_duration;

/// The name of the power-cut phase.
pub const PHASE: &str = "powercut";

/// When the cut comes, as the user wrote it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CutSpec {
    /// Seconds into the phase (device model time).
    At(f64),
    /// As the devices receive this many writes in the phase.
    After(u64),
    /// A time drawn between these seconds into the phase.
    Random(f64, f64),
}

/// Reads `powercut`'s value; `None` for empty (no cut).
pub fn parse(text: &str) -> Result<Option<CutSpec>, String> {
    let t = text.trim();
    if t.is_empty() || t == "none" {
        return Ok(None);
    }
    let secs = |x: &str| -> Result<f64, String> {
        let s = parse_duration(x.trim()).map_err(|e| e.0)?;
        match s.is_finite() && s >= 0.0 {
            true => Ok(s),
            false => Err(format!("'{x}' is not a time into the phase")),
        }
    };
    if let Some(n) = t.strip_prefix("after:") {
        let n: u64 = n
            .trim()
            .replace('_', "")
            .parse()
            .map_err(|_| format!("'{n}' is not a count of writes"))?;
        if n == 0 {
            return Err("after:N counts writes from 1".into());
        }
        return Ok(Some(CutSpec::After(n)));
    }
    if let Some(range) = t.strip_prefix("random:") {
        let (a, b) = range
            .split_once('-')
            .ok_or_else(|| format!("'{range}' is not FROM-TO (random:5s-30s)"))?;
        let (a, b) = (secs(a)?, secs(b)?);
        if b <= a {
            return Err(format!("random:{range}: TO must be later than FROM"));
        }
        return Ok(Some(CutSpec::Random(a, b)));
    }
    let at = secs(t.strip_prefix("at:").unwrap_or(t))
        .map_err(|e| format!("{e}; powercut takes TIME (12s), after:N or random:FROM-TO"))?;
    Ok(Some(CutSpec::At(at)))
}

/// Whether `params` ask for a power cut (a workload seals what it writes for the scan after
/// it). A value `powercut` does not take counts as asked: [`apply`] refuses it.
pub fn asked(params: &Params) -> bool {
    let text = params.given_text("powercut").unwrap_or_default();
    !matches!(parse(&text), Ok(None))
}

/// The plan of workload `w` with `params` for repeat `repeat` (1 for the first): its own
/// phases, and the power cut its parameters ask for.
pub fn plan_of(w: &dyn Workload, params: &Params, repeat: usize) -> Result<Plan, ParamError> {
    let mut plan = w.plan(params)?;
    apply(&mut plan, params, repeat)?;
    Ok(plan)
}

/// Puts the power-cut phase `params` ask for into `plan`, right after the stream phase it
/// cuts (`powercut_phase`, or the first stream phase that writes).
pub fn apply(plan: &mut Plan, params: &Params, repeat: usize) -> Result<(), ParamError> {
    let bad = |m: String| ParamError::invalid("powercut", m);
    let Some(spec) = parse(&params.given_text("powercut").unwrap_or_default()).map_err(bad)? else {
        return Ok(());
    };
    let wanted = params.given_text("powercut_phase").unwrap_or_default();
    let writes = |p: &Phase| match &p.step {
        Step::Streams { streams, .. } => streams.iter().any(|&i| {
            let s = &plan.streams[i];
            s.op == crate::engine::Op::Write || s.io.mix.is_some() || s.source.is_some()
        }),
        Step::Action(_) | Step::Prepare => false,
    };
    let at = if wanted.is_empty() {
        plan.phases.iter().position(writes).ok_or_else(|| {
            bad("the workload has no stream phase that writes, so nothing to cut".into())
        })?
    } else {
        plan.phases
            .iter()
            .position(|p| p.name == wanted)
            .filter(|&i| matches!(plan.phases[i].step, Step::Streams { .. }))
            .ok_or_else(|| {
                ParamError::invalid(
                    "powercut_phase",
                    format!(
                        "'{wanted}' is not a stream phase of the workload; its stream phases: {}",
                        plan.phases
                            .iter()
                            .filter(|p| matches!(p.step, Step::Streams { .. }))
                            .map(|p| p.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })?
    };
    let salt = (repeat as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let when = match spec {
        CutSpec::At(s) => CutWhen::At {
            ns: (s * 1e9) as u64,
        },
        CutSpec::After(n) => CutWhen::AfterWrites(n),
        CutSpec::Random(a, b) => {
            let u = SplitMix64::new(plan.seed ^ 0x0C07_C075 ^ salt).next_u64() as f64
                / (u64::MAX as f64 + 1.0);
            CutWhen::At {
                ns: ((a + (b - a) * u) * 1e9) as u64,
            }
        }
    };
    let torn = params
        .given_text("powercut_torn")
        .unwrap_or_else(|| "torn".into());
    let cut = PowerCut {
        when,
        in_flight: InFlight::parse(&torn).unwrap_or(InFlight::Torn),
        seed: plan.seed ^ salt,
    };
    let mut name = PHASE.to_string();
    let mut n = 1;
    while plan.phases.iter().any(|p| p.name == name) {
        n += 1;
        name = format!("{PHASE}{n}");
    }
    plan.phases.insert(
        at + 1,
        Phase {
            name,
            step: Step::Action(Action::PowerCut(cut)),
        },
    );
    plan.check().map_err(|e| bad(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::dvr::Dvr;

    fn params(over: &[(&str, &str)]) -> Params {
        let o: Vec<(String, String)> = over
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Dvr.resolve(&o).unwrap()
    }

    #[test]
    fn the_three_forms_read_and_bad_ones_say_what_is_allowed() {
        assert_eq!(parse(""), Ok(None));
        assert_eq!(parse("12s"), Ok(Some(CutSpec::At(12.0))));
        assert_eq!(parse("at:250ms"), Ok(Some(CutSpec::At(0.25))));
        assert_eq!(parse("after:1_000"), Ok(Some(CutSpec::After(1000))));
        assert_eq!(parse("random:5s-30s"), Ok(Some(CutSpec::Random(5.0, 30.0))));
        for (bad, needle) in [
            ("soon", "after:N or random"),
            ("after:0", "from 1"),
            ("after:x", "count of writes"),
            ("random:30s-5s", "later than"),
            ("random:5s", "FROM-TO"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(needle), "{bad}: {e}");
        }
    }

    #[test]
    fn the_cut_follows_the_phase_it_cuts_and_random_cuts_differ_by_repeat() {
        let p = params(&[("powercut", "random:2s-20s")]);
        let one = plan_of(&Dvr, &p, 1).unwrap();
        let names: Vec<&str> = one.own_phases().iter().map(|ph| ph.name.as_str()).collect();
        assert_eq!(names, [crate::workload::dvr::PHASE, PHASE]);
        let cut = one.phases.len() - 1;
        let at = |plan: &Plan| match plan.power_cut(cut).unwrap().when {
            CutWhen::At { ns } => ns,
            other => panic!("{other:?}"),
        };
        let ats: Vec<u64> = (1..=8)
            .map(|r| at(&plan_of(&Dvr, &p, r).unwrap()))
            .collect();
        assert!(ats
            .iter()
            .all(|&ns| (2_000_000_000..20_000_000_000).contains(&ns)));
        assert!(ats.windows(2).any(|w| w[0] != w[1]), "{ats:?}");
        assert_eq!(at(&plan_of(&Dvr, &p, 3).unwrap()), ats[2], "seeded");
        assert_eq!(one.power_cut(cut).unwrap().in_flight, InFlight::Torn);
        // No cut asked: the workload's own plan.
        let plain = plan_of(&Dvr, &params(&[]), 1).unwrap();
        assert_eq!(plain.own_phases().len(), 1);
        assert!(!plain.cuts_power());
    }

    #[test]
    fn a_cut_in_no_stream_phase_or_in_a_phase_that_writes_nothing_is_refused() {
        let e = plan_of(
            &Dvr,
            &params(&[("powercut", "1s"), ("powercut_phase", "nope")]),
            1,
        )
        .unwrap_err();
        assert!(e.to_string().contains("its stream phases: run"), "{e}");
        let e = plan_of(&Dvr, &params(&[("powercut", "1s"), ("recorders", "0")]), 1).unwrap_err();
        assert!(e.to_string().contains("writes"), "{e}");
    }
}
