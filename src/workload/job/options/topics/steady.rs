//! fio's options that end a job by what it measures: steady state (`steadystate`/`ss`,
//! `steadystate_duration`/`ss_dur`, `steadystate_ramp_time`/`ss_ramp`,
//! `steadystate_check_interval`) and the latency target (`latency_target`, `latency_window`,
//! `latency_percentile`, `latency_run`).

use crate::workload::job::options::values::Arg;
use crate::workload::job::options::{honoured, Opt};
use crate::workload::job::spec::{JobSpec, LatencyTarget, Steady, SteadyMetric};

fn steady_of(j: &mut JobSpec) -> &mut Steady {
    j.steady.get_or_insert(Steady {
        metric: SteadyMetric::Iops,
        slope: false,
        limit: 0.0,
        percent: false,
        dur: 0.0,
        ramp: 0.0,
        interval: 1.0,
    })
}

fn latency_of(j: &mut JobSpec) -> &mut LatencyTarget {
    j.latency.get_or_insert(LatencyTarget {
        target: 0.0,
        window: 0.0,
        percentile: 100.0,
        run: false,
    })
}

fn steadystate(j: &mut JobSpec, a: &Arg) -> Result<(), String> {
    let v = a.need()?;
    let (kind, limit) = v
        .split_once(':')
        .ok_or_else(|| format!("{}={v}: give the metric and its limit (iops:10%)", a.key))?;
    let (metric, slope) = match kind.trim() {
        "iops" => (SteadyMetric::Iops, false),
        "iops_slope" => (SteadyMetric::Iops, true),
        "bw" => (SteadyMetric::Bw, false),
        "bw_slope" => (SteadyMetric::Bw, true),
        "lat" => (SteadyMetric::Lat, false),
        "lat_slope" => (SteadyMetric::Lat, true),
        o => {
            return Err(format!(
                "{}={v}: '{o}' is not iops, iops_slope, bw, bw_slope, lat or lat_slope",
                a.key
            ))
        }
    };
    let (num, percent) = match limit.trim().strip_suffix('%') {
        Some(p) => (p, true),
        None => (limit.trim(), false),
    };
    let limit: f64 = num
        .parse()
        .map_err(|_| format!("{}={v}: '{num}' is not a number", a.key))?;
    let s = steady_of(j);
    s.metric = metric;
    s.slope = slope;
    s.limit = limit;
    s.percent = percent;
    Ok(())
}

/// The options of this module.
pub static OPTIONS: &[Opt] = &[
    honoured(&["steadystate", "ss"], steadystate),
    opt!(["steadystate_duration", "ss_dur"], |j, a| steady_of(j)
        .dur =
        a.seconds(1.0)?),
    opt!(["steadystate_ramp_time", "ss_ramp"], |j, a| steady_of(j)
        .ramp =
        a.seconds(1.0)?),
    opt!(["steadystate_check_interval"], |j, a| {
        let s = a.seconds(1.0)?;
        if s <= 0.0 {
            return Err(format!("{}: must be greater than 0", a.key));
        }
        steady_of(j).interval = s;
    })
    .unlisted(),
    opt!(["latency_target"], |j, a| latency_of(j).target =
        a.seconds(1e-6)?),
    opt!(["latency_window"], |j, a| latency_of(j).window =
        a.seconds(1e-6)?),
    opt!(["latency_percentile"], |j, a| {
        let p = a.float()?;
        if !(0.0..=100.0).contains(&p) {
            return Err(format!("{}={p}: a percentage, 0 to 100", a.key));
        }
        latency_of(j).percentile = p;
    }),
    opt!(["latency_run"], |j, a| latency_of(j).run = a.flag()?),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::job::options::apply;

    #[test]
    fn steady_state_and_latency_targets_as_fio_words_them() {
        let mut j = JobSpec::new("j");
        for (k, v) in [
            ("ss", "bw_slope:1%"),
            ("ss_dur", "10s"),
            ("ss_ramp", "5s"),
            ("latency_target", "500000"),
            ("latency_window", "5000000"),
            ("latency_percentile", "99.9"),
        ] {
            apply(&mut j, k, Some(v)).unwrap();
        }
        let s = j.steady.clone().unwrap();
        assert_eq!(
            (s.metric, s.slope, s.limit, s.percent, s.dur, s.ramp),
            (SteadyMetric::Bw, true, 1.0, true, 10.0, 5.0)
        );
        let l = j.latency.clone().unwrap();
        assert!((l.target - 0.5).abs() < 1e-9 && (l.window - 5.0).abs() < 1e-9);
        assert!(apply(&mut j, "steadystate", Some("cpu:5%")).is_err());
    }
}
