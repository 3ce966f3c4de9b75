//! What a capacity search is asked (a study's `capacity = { vary = "recorders", ... }`, or
//! `iotrial capacity`'s flags): the parameter to vary, its range and resolution, and how many
//! runs confirm the edge; checked against the workload before anything runs, so a range that
//! cannot hold is refused with its reason.

use super::search::Domain;
use super::CapacityError;
use crate::params::{Kind, Params, Value};
use crate::workload::{realtime, CapacityKind, Workload};
use serde::{Deserialize, Serialize};

/// Runs at each side of the edge, by default.
pub const DEFAULT_CONFIRM: u32 = 2;
/// Most runs at each side of the edge.
pub const MAX_CONFIRM: u32 = 10;
/// The resolution of a bitrate search, by default, Mbit/s.
pub const DEFAULT_BITRATE_STEP: f64 = 0.1;

fn default_confirm() -> u32 {
    DEFAULT_CONFIRM
}

/// A capacity search's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapacitySpec {
    /// The parameter varied: a count of streams of the kind (`recorders`, `players`,
    /// `writers`, `readers`) or `bitrate`.
    pub vary: String,
    /// The lowest value tried (counts: 1; bitrate: its resolution).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// The highest value tried (counts: as many as the kind allows; bitrate: 10000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// Runs of each value at the edge (the passing one and the failing one).
    #[serde(default = "default_confirm")]
    pub confirm: u32,
    /// A bitrate search's resolution, Mbit/s (counts go by one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<f64>,
}

impl CapacitySpec {
    /// A search of `vary` with every default.
    pub fn of(vary: &str) -> CapacitySpec {
        CapacitySpec {
            vary: vary.to_string(),
            min: None,
            max: None,
            confirm: DEFAULT_CONFIRM,
            resolution: None,
        }
    }

    /// Whether `vary` is the bitrate (a real number) rather than a count of streams.
    pub fn is_bitrate(&self) -> bool {
        self.vary == "bitrate"
    }

    /// The unit of the varied parameter, for tables.
    pub fn unit(&self) -> &'static str {
        if self.is_bitrate() {
            "Mbit/s"
        } else {
            "streams"
        }
    }

    /// The kind's part of the search, or why `w` cannot be searched.
    pub fn kind_of(w: &dyn Workload) -> Result<&'static dyn CapacityKind, CapacityError> {
        w.capacity().ok_or_else(|| {
            CapacityError::Spec(format!(
                "workload kind {} has no streams that run in real time; capacity searches dvr and stream",
                w.name()
            ))
        })
    }

    /// `p` run in real time with the varied parameter at `value`.
    pub fn probe_params(&self, p: &Params, value: f64) -> Params {
        let mut q = p.clone();
        q.set("pacing", Value::Text(realtime::REALTIME.into()));
        let v = if self.is_bitrate() {
            Value::Float(value)
        } else {
            Value::Count(value.round() as u64)
        };
        q.set(&self.vary, v);
        q
    }

    /// The values the search may try, checked against `w` with parameters `p`: `vary` is one
    /// the kind varies, the range is ordered and within what the kind can run (its plan is made
    /// at both ends), and `confirm` is between 1 and 10.
    pub fn domain(&self, w: &dyn Workload, p: &Params) -> Result<Domain, CapacityError> {
        let kind = Self::kind_of(w)?;
        let bad = |m: String| Err(CapacityError::Spec(m));
        if !kind.varies().contains(&self.vary.as_str()) {
            return bad(format!(
                "vary: '{}' is not a parameter a {} capacity search varies; allowed: {}",
                self.vary,
                w.name(),
                kind.varies().join(", ")
            ));
        }
        if !(1..=MAX_CONFIRM).contains(&self.confirm) {
            return bad(format!(
                "confirm: {} runs at each side of the edge; allowed: 1 to {MAX_CONFIRM}",
                self.confirm
            ));
        }
        let spec = w.params().iter().find(|s| s.name == self.vary);
        let count = matches!(spec.map(|s| s.kind), Some(Kind::Count));
        // The workload's own parameters first (a bitrate of 0, a buffer smaller than an I/O),
        // in real time as every probe runs.
        let given = if count {
            p.u64(&self.vary) as f64
        } else {
            p.f64(&self.vary)
        };
        w.plan(&self.probe_params(p, given))
            .map_err(|e| CapacityError::Spec(e.to_string()))?;
        let step = match (count, self.resolution) {
            (true, None) | (true, Some(1.0)) => 1.0,
            (true, Some(r)) => {
                return bad(format!(
                "resolution: {r}: a count of streams goes by 1; resolution is for a bitrate search"
            ))
            }
            (false, None) => DEFAULT_BITRATE_STEP,
            (false, Some(r)) if r > 0.0 && r.is_finite() => r,
            (false, Some(r)) => {
                return bad(format!("resolution: {r} Mbit/s must be greater than 0"))
            }
        };
        let max = match self.max {
            Some(m) => m,
            None if count => self.most_streams(w, p),
            None => 10_000.0,
        };
        let min = match self.min {
            Some(m) => m,
            None if count => 1.0,
            None => self.lowest_bitrate(w, p, step, max),
        };
        if count && (min.fract() != 0.0 || max.fract() != 0.0) {
            return bad(format!(
                "min {min} and max {max} must be whole numbers of {}",
                self.vary
            ));
        }
        if !(min > 0.0 && min.is_finite() && max.is_finite()) {
            return bad(format!(
                "min: {min}: the search range must start above 0 {}",
                self.unit()
            ));
        }
        if min > max {
            return bad(format!(
                "the search range cannot hold: min {min} is above max {max}"
            ));
        }
        for (end, v) in [("min", min), ("max", max)] {
            w.plan(&self.probe_params(p, v)).map_err(|e| {
                CapacityError::Spec(format!(
                    "the search range cannot hold: at {end} = {v} {}: {e}",
                    self.vary
                ))
            })?;
        }
        w.plan(&kind.hammer(p)).map_err(|e| {
            CapacityError::Spec(format!(
                "the hammering run that estimates where to start cannot run: {e}"
            ))
        })?;
        Ok(Domain { min, max, step })
    }

    /// The lowest bitrate, in steps of `step` up to `max`, at which the kind can run (a
    /// buffer given in seconds must hold one I/O): where a bitrate search starts by default.
    fn lowest_bitrate(&self, w: &dyn Workload, p: &Params, step: f64, max: f64) -> f64 {
        let runs = |k: u64| w.plan(&self.probe_params(p, k as f64 * step)).is_ok();
        let (mut lo, mut hi) = (0u64, (max / step).floor().max(1.0) as u64);
        if runs(1) || !runs(hi) {
            return step;
        }
        // runs(lo) is false (or lo is 0), runs(hi) is true.
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if runs(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        hi as f64 * step
    }

    /// As many streams of `vary` as the kind takes beside its others (1024 streams in all).
    fn most_streams(&self, w: &dyn Workload, p: &Params) -> f64 {
        let others: u64 = w
            .params()
            .iter()
            .filter(|s| s.kind == Kind::Count && s.name != self.vary)
            .filter(|s| ["recorders", "players", "writers", "readers"].contains(&s.name))
            .map(|s| p.u64(s.name))
            .sum();
        1024u64.saturating_sub(others).max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{dvr::Dvr, find};

    fn dvr(over: &[(&str, &str)]) -> Params {
        let o: Vec<(String, String)> = over
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Dvr.resolve(&o).unwrap()
    }

    #[test]
    fn a_count_search_goes_by_one_up_to_what_the_kind_takes() {
        let d = CapacitySpec::of("recorders")
            .domain(&Dvr, &dvr(&[]))
            .unwrap();
        assert_eq!((d.min, d.max, d.step), (1.0, 1022.0, 1.0));
        // A 5 s buffer holds a 1 MiB I/O from 1.68 Mbit/s on.
        let b = CapacitySpec::of("bitrate").domain(&Dvr, &dvr(&[])).unwrap();
        assert_eq!(b.step, 0.1);
        assert!((b.min - 1.7).abs() < 1e-9, "{b:?}");
        let bytes = CapacitySpec::of("bitrate")
            .domain(&Dvr, &dvr(&[("buffer", "12MiB")]))
            .unwrap();
        assert_eq!(bytes.min, 0.1);
        let q = CapacitySpec::of("recorders").probe_params(&dvr(&[]), 20.0);
        assert_eq!(
            (q.u64("recorders"), q.text("pacing")),
            (20, "realtime".to_string())
        );
    }

    #[test]
    fn what_cannot_be_searched_is_refused_with_the_reason() {
        let p = dvr(&[]);
        let spec = |f: &dyn Fn(&mut CapacitySpec)| {
            let mut s = CapacitySpec::of("recorders");
            f(&mut s);
            s.domain(&Dvr, &p).unwrap_err().to_string()
        };
        assert!(
            spec(&|s| s.vary = "samples".into()).contains("allowed: recorders, players, bitrate")
        );
        assert!(spec(&|s| {
            s.min = Some(10.0);
            s.max = Some(4.0)
        })
        .contains("cannot hold: min 10 is above max 4"));
        assert!(spec(&|s| s.max = Some(2000.0)).contains("at max = 2000 recorders"));
        assert!(spec(&|s| s.min = Some(0.0)).contains("above 0"));
        assert!(spec(&|s| s.confirm = 0).contains("confirm"));
        assert!(spec(&|s| s.resolution = Some(0.5)).contains("goes by 1"));
        let e = CapacitySpec::of("recorders")
            .domain(
                find("tree").unwrap(),
                &find("tree").unwrap().resolve(&[]).unwrap(),
            )
            .unwrap_err();
        assert!(
            e.to_string().contains("no streams that run in real time"),
            "{e}"
        );
        // A bitrate of 0 is refused by the workload itself, at both ends.
        let zero = dvr(&[("bitrate", "0")]);
        let e = CapacitySpec::of("recorders")
            .domain(&Dvr, &zero)
            .unwrap_err();
        assert!(e.to_string().contains("bitrate"), "{e}");
    }
}
