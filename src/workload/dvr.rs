//! The `dvr` workload of seed 000: R record streams writing and P playback streams reading
//! fixed-size I/Os at random offsets of their own region, all at once, as fast as the stack
//! allows. Verdict: the bitrate each record stream can sustain with a W-second buffer, the
//! pre-roll a playback needs, and how fairly the streams were served.

use super::{AnalysisError, Better, Figure, Outcome, Rows, Workload};
use crate::analysis::{fairness, stats, window};
use crate::engine::{Op, Pacing, Pattern, Plan, StreamPlan, StreamSamples};
use crate::params::{Kind, ParamError, ParamSpec, Params};
use serde_json::{json, Value as Json};

/// The `dvr` workload.
pub struct Dvr;

static PARAMS: &[ParamSpec] = &[
    ParamSpec::new("recorders", Kind::Count, "8", "record streams (writers)"),
    ParamSpec::new("players", Kind::Count, "2", "playback streams (readers)"),
    ParamSpec::new("io_size", Kind::Size, "1MiB", "bytes per I/O"),
    ParamSpec::new("samples", Kind::Count, "2048", "timed I/Os collected per stream (N of the sampling protocol)"),
    ParamSpec::new("window", Kind::Duration, "5s", "record buffer: the moving window the record guarantee is computed over"),
    ParamSpec::new("playback_ios", Kind::Count, "2", "I/Os per playback read (a 2 MB read of two 1 MB fragments is 2)"),
    ParamSpec::new("region_size", Kind::Size, "256MiB", "bytes of disk per stream (seed 000 used 800 GB; the default fits a temp directory: 10 x 256MiB = 2.5GiB)"),
    ParamSpec::new("target_mbit", Kind::Float, "19.4", "bitrate each record stream must sustain, Mbit/s (ATSC MPTS = 19.4)"),
    ParamSpec::new("direct", Kind::Bool, "true", "O_DIRECT I/O (false: buffered, through the page cache)"),
    ParamSpec::new("seed", Kind::Count, "1", "seed of the random offsets (the same seed gives every stack the same offsets)"),
];

/// Alignment O_DIRECT needs of sizes and offsets.
const DIRECT_ALIGN: u64 = 4096;

/// Stream names in layout order: the first half of the players, every recorder, the rest of
/// the players (seed 000: playback0, record0..7, playback1 — reads at both ends of the disk).
pub fn stream_names(recorders: u64, players: u64) -> Vec<(String, &'static str, Op)> {
    let front = players.div_ceil(2);
    let mut v = Vec::new();
    for i in 0..front {
        v.push((format!("playback{i}"), "playback", Op::Read));
    }
    for i in 0..recorders {
        v.push((format!("record{i}"), "record", Op::Write));
    }
    for i in front..players {
        v.push((format!("playback{i}"), "playback", Op::Read));
    }
    v
}

impl Workload for Dvr {
    fn name(&self) -> &'static str {
        "dvr"
    }

    fn about(&self) -> &'static str {
        "DVR: record streams write and playback streams read random fixed-size I/Os in their own disk region (seed 000)"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn plan(&self, p: &Params) -> Result<Plan, ParamError> {
        let (rec, play) = (p.u64("recorders"), p.u64("players"));
        let io = p.u64("io_size");
        let region = p.u64("region_size");
        if rec + play == 0 {
            return Err(ParamError::invalid(
                "recorders",
                "recorders + players must be at least 1",
            ));
        }
        if rec + play > 1024 {
            return Err(ParamError::invalid(
                "recorders",
                "recorders + players must be at most 1024",
            ));
        }
        if io == 0 {
            return Err(ParamError::invalid("io_size", "must be greater than 0"));
        }
        if p.bool("direct") && io % DIRECT_ALIGN != 0 {
            return Err(ParamError::invalid(
                "io_size",
                format!("{io} is not a multiple of {DIRECT_ALIGN}, which O_DIRECT needs (or set direct=false)"),
            ));
        }
        if region < io {
            return Err(ParamError::invalid(
                "region_size",
                format!("must be at least io_size ({io} bytes)"),
            ));
        }
        if p.u64("samples") == 0 || p.u64("samples") > 100_000_000 {
            return Err(ParamError::invalid(
                "samples",
                "must be between 1 and 100000000",
            ));
        }
        if p.f64("window") <= 0.0 {
            return Err(ParamError::invalid("window", "must be greater than 0"));
        }
        if p.u64("playback_ios") == 0 {
            return Err(ParamError::invalid("playback_ios", "must be at least 1"));
        }
        if p.f64("target_mbit") < 0.0 {
            return Err(ParamError::invalid("target_mbit", "must be 0 or more"));
        }
        let streams = stream_names(rec, play)
            .into_iter()
            .map(|(name, role, op)| StreamPlan {
                name,
                role: role.to_string(),
                op,
                // Whole I/Os only, so the last one never runs past the region.
                region_len: region - region % io,
                io_size: io,
                pattern: Pattern::Random,
                pacing: Pacing::Max,
                samples: p.u64("samples") as usize,
            })
            .collect();
        Ok(Plan {
            streams,
            direct: p.bool("direct"),
            seed: p.u64("seed"),
        })
    }

    fn figure_specs(&self) -> Vec<Figure> {
        figures_of(&Verdict {
            record_mbit_guaranteed: None,
            playback_preroll_s: None,
            record_fairness_jain: None,
            playback_fairness_jain: None,
            record_completion_spread: None,
            playback_completion_spread: None,
            target_mbit: 0.0,
            meets_target: None,
        })
    }

    fn analyze(
        &self,
        p: &Params,
        streams: &[StreamSamples],
    ) -> Result<Box<dyn Outcome>, AnalysisError> {
        if streams.is_empty() {
            return Err(AnalysisError::Other("no streams to analyse".into()));
        }
        Ok(Box::new(analyze(p, streams)))
    }

    fn report_sections(&self) -> Option<&'static dyn crate::report::sections::ReportSections> {
        Some(&super::dvr_report::DvrReport)
    }
}

/// Figures of one stream.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamFigures {
    pub name: String,
    pub role: String,
    pub op: Op,
    pub samples: usize,
    pub errors: usize,
    pub elapsed_s: f64,
    pub mbit_s: f64,
    pub lat_ms: stats::LatencySummary,
    /// Record streams: the peak of the moving-window average, ms.
    pub window_peak_ms: Option<f64>,
    /// Record streams: bitrate sustainable with the buffer, Mbit/s.
    pub mbit_guaranteed: Option<f64>,
    /// Playback streams: worst sum of `playback_ios` consecutive reads, s.
    pub preroll_s: Option<f64>,
}

/// The stack's verdict for dvr.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub record_mbit_guaranteed: Option<f64>,
    pub playback_preroll_s: Option<f64>,
    pub record_fairness_jain: Option<f64>,
    pub playback_fairness_jain: Option<f64>,
    pub record_completion_spread: Option<f64>,
    pub playback_completion_spread: Option<f64>,
    pub target_mbit: f64,
    pub meets_target: Option<bool>,
}

/// Everything dvr's analysis found.
#[derive(Debug, Clone, PartialEq)]
pub struct DvrOutcome {
    pub window_s: f64,
    pub streams: Vec<StreamFigures>,
    pub verdict: Verdict,
    pub warnings: Vec<String>,
}

fn stream_figures(p: &Params, st: &StreamSamples, warnings: &mut Vec<String>) -> StreamFigures {
    let ok: Vec<_> = st.ok().copied().collect();
    let errors = st.samples.len() - ok.len();
    if errors > 0 {
        warnings.push(format!(
            "{}: {errors} of {} I/Os failed",
            st.name,
            st.samples.len()
        ));
    }
    let lat_ms: Vec<f64> = ok.iter().map(|s| s.latency_ns as f64 / 1e6).collect();
    let elapsed_s = st.elapsed_s();
    let bytes: u64 = ok.iter().map(|s| s.bytes).sum();
    let io_bytes = ok.iter().map(|s| s.bytes).max().unwrap_or(0);
    let mbit_s = if elapsed_s > 0.0 {
        bytes as f64 * 8.0 / elapsed_s / 1e6
    } else {
        0.0
    };
    let (mut window_peak_ms, mut mbit_guaranteed, mut preroll_s) = (None, None, None);
    if st.role == "record" && !ok.is_empty() {
        let pts: Vec<(u64, u64)> = ok.iter().map(|s| (s.issue_ns, s.latency_ns)).collect();
        let w = (p.f64("window") * 1e9) as u64;
        let (series, full) = window::moving_average(&pts, w);
        if !full {
            warnings.push(format!(
                "{}: sampled for {:.2} s, less than the {} s window; its guarantee uses one window over the whole run",
                st.name, elapsed_s, p.f64("window")
            ));
        }
        let peak_ns = series.iter().map(|x| x.mean_ns).fold(0.0, f64::max);
        window_peak_ms = Some(peak_ns / 1e6);
        mbit_guaranteed = (peak_ns > 0.0).then(|| window::mbit_per_s(io_bytes, peak_ns / 1e9));
    }
    if st.role == "playback" {
        let k = p.u64("playback_ios") as usize;
        let lats: Vec<u64> = ok.iter().map(|s| s.latency_ns).collect();
        let worst = window::consecutive_sums(&lats, k).into_iter().max();
        if worst.is_none() {
            warnings.push(format!(
                "{}: fewer than {k} successful reads, no pre-roll",
                st.name
            ));
        }
        preroll_s = worst.map(|ns| ns as f64 / 1e9);
    }
    StreamFigures {
        name: st.name.clone(),
        role: st.role.clone(),
        op: st.op,
        samples: st.samples.len(),
        errors,
        elapsed_s,
        mbit_s,
        lat_ms: stats::summarize(&lat_ms).unwrap_or_default(),
        window_peak_ms,
        mbit_guaranteed,
        preroll_s,
    }
}

fn role_fairness(figs: &[StreamFigures], role: &str) -> (Option<f64>, Option<f64>) {
    let r: Vec<&StreamFigures> = figs.iter().filter(|f| f.role == role).collect();
    let thr: Vec<f64> = r.iter().map(|f| f.mbit_s).collect();
    let t: Vec<f64> = r.iter().map(|f| f.elapsed_s).collect();
    (fairness::jain(&thr), fairness::spread(&t))
}

/// dvr's analysis of a run's samples.
pub fn analyze(p: &Params, streams: &[StreamSamples]) -> DvrOutcome {
    let mut warnings = Vec::new();
    let figs: Vec<StreamFigures> = streams
        .iter()
        .map(|s| stream_figures(p, s, &mut warnings))
        .collect();
    let rec_min = figs
        .iter()
        .filter_map(|f| f.mbit_guaranteed)
        .reduce(f64::min);
    let has_rec = figs.iter().any(|f| f.role == "record");
    let preroll_max = figs.iter().filter_map(|f| f.preroll_s).reduce(f64::max);
    let (rj, rs) = role_fairness(&figs, "record");
    let (pj, ps) = role_fairness(&figs, "playback");
    let target = p.f64("target_mbit");
    let meets = if has_rec {
        Some(rec_min.is_some_and(|m| m >= target))
    } else {
        None
    };
    DvrOutcome {
        window_s: p.f64("window"),
        streams: figs,
        verdict: Verdict {
            record_mbit_guaranteed: rec_min,
            playback_preroll_s: preroll_max,
            record_fairness_jain: rj,
            playback_fairness_jain: pj,
            record_completion_spread: rs,
            playback_completion_spread: ps,
            target_mbit: target,
            meets_target: meets,
        },
        warnings,
    }
}

fn opt(x: Option<f64>, decimals: usize) -> String {
    x.map(|v| format!("{v:.decimals$}"))
        .unwrap_or_else(|| "-".into())
}

impl Outcome for DvrOutcome {
    fn to_json(&self) -> Json {
        let streams: Vec<Json> = self
            .streams
            .iter()
            .map(|f| {
                let mut o = json!({
                    "name": f.name, "role": f.role, "op": f.op.as_str(),
                    "samples": f.samples, "errors": f.errors,
                    "elapsed_s": f.elapsed_s, "mbit_s": f.mbit_s, "lat_ms": f.lat_ms,
                });
                if f.role == "record" {
                    o["window_peak_ms"] = json!(f.window_peak_ms);
                    o["mbit_guaranteed"] = json!(f.mbit_guaranteed);
                }
                if f.role == "playback" {
                    o["preroll_s"] = json!(f.preroll_s);
                }
                o
            })
            .collect();
        let v = &self.verdict;
        json!({
            "streams": streams,
            "verdict": {
                "record_mbit_guaranteed": v.record_mbit_guaranteed,
                "playback_preroll_s": v.playback_preroll_s,
                "record_fairness_jain": v.record_fairness_jain,
                "playback_fairness_jain": v.playback_fairness_jain,
                "record_completion_spread": v.record_completion_spread,
                "playback_completion_spread": v.playback_completion_spread,
                "target_mbit": v.target_mbit,
                "meets_target": v.meets_target,
            }
        })
    }

    fn stream_rows(&self) -> Rows {
        let headings = [
            "stream",
            "samples",
            "errors",
            "time s",
            "Mbit/s",
            "mean ms",
            "p50 ms",
            "p99 ms",
            "max ms",
            "window peak ms",
            "guaranteed Mbit/s",
            "pre-roll s",
        ];
        let rows = self
            .streams
            .iter()
            .map(|f| {
                vec![
                    f.name.clone(),
                    f.samples.to_string(),
                    f.errors.to_string(),
                    format!("{:.1}", f.elapsed_s),
                    format!("{:.1}", f.mbit_s),
                    format!("{:.1}", f.lat_ms.mean),
                    format!("{:.1}", f.lat_ms.p50),
                    format!("{:.1}", f.lat_ms.p99),
                    format!("{:.1}", f.lat_ms.max),
                    opt(f.window_peak_ms, 1),
                    opt(f.mbit_guaranteed, 1),
                    opt(f.preroll_s, 2),
                ]
            })
            .collect();
        Rows {
            headings: headings.iter().map(|s| s.to_string()).collect(),
            rows,
        }
    }

    fn verdict_line(&self) -> String {
        let v = &self.verdict;
        let mut parts = Vec::new();
        if let Some(m) = v.record_mbit_guaranteed {
            let met = if v.meets_target == Some(true) {
                "met"
            } else {
                "NOT met"
            };
            parts.push(format!(
                "records guaranteed {m:.1} Mbit/s with a {} s buffer (target {}: {met})",
                crate::units::trim_float(self.window_s),
                crate::units::trim_float(v.target_mbit)
            ));
        }
        if let Some(p) = v.playback_preroll_s {
            parts.push(format!("playback needs {p:.1} s pre-roll"));
        }
        if parts.is_empty() {
            return "no verdict: no successful I/O".into();
        }
        parts.join("; ")
    }

    fn figures(&self) -> Vec<Figure> {
        figures_of(&self.verdict)
    }

    fn meets_target(&self) -> Option<bool> {
        self.verdict.meets_target
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// The headline figures of a verdict, in table order.
fn figures_of(v: &Verdict) -> Vec<Figure> {
    vec![
        Figure {
            key: "record_mbit_guaranteed",
            label: "record guaranteed",
            unit: "Mbit/s",
            value: v.record_mbit_guaranteed,
            better: Better::Higher,
        },
        Figure {
            key: "playback_preroll_s",
            label: "playback pre-roll",
            unit: "s",
            value: v.playback_preroll_s,
            better: Better::Lower,
        },
        Figure {
            key: "record_fairness_jain",
            label: "record fairness",
            unit: "Jain",
            value: v.record_fairness_jain,
            better: Better::Higher,
        },
        Figure {
            key: "playback_fairness_jain",
            label: "playback fairness",
            unit: "Jain",
            value: v.playback_fairness_jain,
            better: Better::Higher,
        },
        Figure {
            key: "record_completion_spread",
            label: "record spread",
            unit: "max/min",
            value: v.record_completion_spread,
            better: Better::Lower,
        },
        Figure {
            key: "playback_completion_spread",
            label: "playback spread",
            unit: "max/min",
            value: v.playback_completion_spread,
            better: Better::Lower,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Sample;
    use std::sync::Arc;

    fn serial(name: &str, role: &str, op: Op, bytes: u64, lat_ms: &[f64]) -> StreamSamples {
        let mut t = 0u64;
        let samples = lat_ms
            .iter()
            .map(|&l| {
                let lat = (l * 1e6) as u64;
                let s = Sample {
                    offset: 0,
                    bytes,
                    issue_ns: t,
                    latency_ns: lat,
                    lag_ns: 0,
                    errno: 0,
                };
                t += lat;
                s
            })
            .collect();
        StreamSamples {
            name: name.into(),
            role: role.into(),
            op,
            samples,
        }
    }

    fn params(over: &[(&str, &str)]) -> Params {
        let o: Vec<(String, String)> = over
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Dvr.resolve(&o).unwrap()
    }

    #[test]
    fn layout_order_is_seed_order() {
        let names: Vec<String> = stream_names(8, 2).into_iter().map(|x| x.0).collect();
        assert_eq!(names.first().unwrap(), "playback0");
        assert_eq!(names[1], "record0");
        assert_eq!(names[8], "record7");
        assert_eq!(names.last().unwrap(), "playback1");
    }

    #[test]
    fn seed_000_verdict() {
        // Records: constant 250 ms (-> 32 Mbit/s with 1,000,000-byte I/Os) and one at 400 ms
        // (-> 20 Mbit/s); the stack guarantee is the minimum, 20.
        let r0 = serial("record0", "record", Op::Write, 1_000_000, &[250.0; 40]);
        let r1 = serial("record1", "record", Op::Write, 1_000_000, &[400.0; 40]);
        // Playback: worst consecutive pair averages 750 ms -> 1.5 s pre-roll.
        let p0 = serial(
            "playback0",
            "playback",
            Op::Read,
            1_000_000,
            &[400.0, 700.0, 800.0, 300.0],
        );
        let out = analyze(&params(&[]), &[p0, r0, r1]);
        assert!((out.streams[1].mbit_guaranteed.unwrap() - 32.0).abs() < 1e-6);
        assert!((out.verdict.record_mbit_guaranteed.unwrap() - 20.0).abs() < 1e-6);
        assert!((out.verdict.playback_preroll_s.unwrap() - 1.5).abs() < 1e-9);
        assert_eq!(out.verdict.meets_target, Some(true));
        // Throughputs 32 and 20 Mbit/s: Jain = 52^2 / (2 * (1024 + 400)).
        let j = 52.0f64 * 52.0 / (2.0 * (1024.0 + 400.0));
        assert!((out.verdict.record_fairness_jain.unwrap() - j).abs() < 1e-9);
        // 40 x 400 ms = 16 s vs 40 x 250 ms = 10 s.
        assert!((out.verdict.record_completion_spread.unwrap() - 1.6).abs() < 1e-9);
        assert!(out
            .verdict_line()
            .starts_with("records guaranteed 20.0 Mbit/s with a 5 s buffer (target 19.4: met)"));
    }

    #[test]
    fn ext4_spike_fails_the_target() {
        // seed 000 ext4 defaults: a 650 ms window peak -> 12.3 Mbit/s, below 19.4.
        let r = serial("record0", "record", Op::Write, 1_000_000, &[650.0; 20]);
        let out = analyze(&params(&[]), &[r]);
        assert_eq!(
            format!("{:.1}", out.verdict.record_mbit_guaranteed.unwrap()),
            "12.3"
        );
        assert_eq!(out.verdict.meets_target, Some(false));
        assert_eq!(out.verdict.playback_preroll_s, None);
    }

    #[test]
    fn impossible_parameters_are_refused() {
        for (k, v, needle) in [
            ("io_size", "0", "io_size"),
            ("io_size", "1000", "multiple of 4096"),
            ("region_size", "4KiB", "region_size"),
            ("samples", "0", "samples"),
        ] {
            let e = Dvr.plan(&params(&[(k, v)])).unwrap_err().to_string();
            assert!(e.contains(needle), "{k}={v}: {e}");
        }
        assert!(Dvr
            .plan(&params(&[("io_size", "1000"), ("direct", "false")]))
            .is_ok());
    }

    #[test]
    fn the_plan_carries_direct_and_the_seed() {
        let plan = Dvr
            .plan(&params(&[("direct", "false"), ("seed", "9")]))
            .unwrap();
        assert_eq!((plan.direct, plan.seed), (false, 9));
        assert!(Dvr.plan(&params(&[])).unwrap().direct);
    }

    #[test]
    fn a_seed_gives_the_offsets_it_always_gave() {
        use crate::engine::{self, BackendKind, EngineOptions, Placement, Protocol};
        // One record stream, so only its first I/O comes before sampling begins.
        let p = params(&[
            ("recorders", "1"),
            ("players", "0"),
            ("samples", "12"),
            ("io_size", "4KiB"),
            ("region_size", "1MiB"),
            ("seed", "7"),
        ]);
        let plan = Dvr.plan(&p).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("record0");
        std::fs::File::create(&path)
            .unwrap()
            .set_len(1 << 20)
            .unwrap();
        let placements = [Placement {
            path,
            offset: 0,
            len: 1 << 20,
        }];
        let opts = EngineOptions {
            direct: false,
            backend: BackendKind::Psync,
            time_limit: None,
        };
        let out = engine::run(&plan, &placements, opts, Arc::new(Protocol::new(1)), |_| {});
        let offsets: Vec<u64> = out.unwrap().streams[0]
            .samples
            .iter()
            .map(|s| s.offset / 4096)
            .collect();
        // Recorded when the trial still read `seed` from the parameters itself.
        assert_eq!(
            offsets,
            [4, 230, 149, 115, 63, 119, 83, 34, 105, 26, 245, 235]
        );
    }
}
