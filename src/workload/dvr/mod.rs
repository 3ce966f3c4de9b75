//! The `dvr` workload of seed 000: R record streams writing and P playback streams reading
//! fixed-size I/Os at random offsets of their own region, all at once, as fast as the stack
//! allows. Verdict: the bitrate each record stream can sustain with a W-second buffer, the
//! pre-roll a playback needs, and how fairly the streams were served. Its parameters
//! ([`params`]), its figures as result.json holds them ([`figures`]), the analysis that makes
//! them ([`analysis`]) and its part of the report ([`report`]) are submodules.

pub mod analysis;
pub mod capacity;
pub mod figures;
pub mod params;
pub mod phases;
pub mod report;

pub use analysis::{analyze, DvrOutcome};
pub use figures::{StreamFigures, Verdict, COLUMNS};

use super::{realtime, AnalysisError, CapacityKind, Outcome, Seen, Workload};
use crate::engine::realtime::Role;
use crate::engine::{Op, Pattern, Plan, SampleSet, Seal, Step, Stop, StreamIo, StreamPlan};
use crate::params::{ParamError, ParamSpec, Params};
use crate::present::KindReport;
use params::PARAMS;

/// The `dvr` workload.
pub struct Dvr;

/// Alignment O_DIRECT needs of sizes and offsets.
const DIRECT_ALIGN: u64 = 4096;

pub use phases::PHASE;

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
        if region != 0 && region < io {
            return Err(ParamError::invalid(
                "region_size",
                format!("must be 0 (an equal share) or at least io_size ({io} bytes)"),
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
        realtime::check(p, io)?;
        let streams = stream_names(rec, play)
            .into_iter()
            .enumerate()
            .map(|(i, (name, role, op))| {
                let rt = match op {
                    Op::Write => Role::Record,
                    _ => Role::Playback,
                };
                Ok(StreamPlan {
                    name,
                    role: role.to_string(),
                    op,
                    // Whole I/Os only, so the last one never runs past the region.
                    region_len: region - region % io,
                    io_size: io,
                    pattern: Pattern::Random,
                    pacing: realtime::pacing_of(p, rt, io, i)?,
                    samples: p.u64("samples") as usize,
                    io: StreamIo {
                        seal: Seal::for_io(io),
                        ..Default::default()
                    },
                    source: None,
                })
            })
            .collect::<Result<Vec<_>, ParamError>>()?;
        let mut plan = Plan::sampled(PHASE, streams, p.bool("direct"), p.u64("seed"));
        if realtime::is_realtime(p) {
            let streams = (0..plan.streams.len()).collect();
            if let Some(run) = plan.phases.iter_mut().find(|ph| ph.name == PHASE) {
                run.step = Step::Streams {
                    streams,
                    stop: Stop::Duration(p.f64("duration")),
                };
            }
        }
        Ok(plan)
    }

    fn analyze(
        &self,
        p: &Params,
        samples: &SampleSet,
        _: &Seen,
    ) -> Result<Box<dyn Outcome>, AnalysisError> {
        let phase = samples
            .phase_index(PHASE)
            .ok_or_else(|| AnalysisError::MissingPhase(PHASE.into()))?;
        let streams = samples.load_phase(phase)?;
        if streams.is_empty() {
            return Err(AnalysisError::Other("no streams to analyse".into()));
        }
        let plan = self
            .plan(p)
            .map_err(|e| AnalysisError::Other(format!("params: {e}")))?;
        let live = realtime::analysis::analyze(&plan, samples, phase, 1.0)?;
        Ok(Box::new(analyze(p, &streams, live)))
    }

    fn report(&self) -> &'static dyn KindReport {
        &report::DvrReport
    }

    fn capacity(&self) -> Option<&'static dyn CapacityKind> {
        Some(&capacity::CAPACITY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Sample, StreamSamples};

    fn serial(name: &str, role: &str, op: Op, bytes: u64, lat_ms: &[f64]) -> StreamSamples {
        let mut t = 0u64;
        let samples = lat_ms
            .iter()
            .map(|&l| {
                let lat = (l * 1e6) as u64;
                let s = Sample {
                    op,
                    offset: 0,
                    bytes,
                    issue_ns: t,
                    latency_ns: lat,
                    lag_ns: 0,
                    errno: 0,
                    phase: 0,
                    file: 0,
                    asked: 0,
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
        let out = analyze(&params(&[]), &[p0, r0, r1], None);
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
    fn every_column_is_the_verdict_field_of_its_key_and_the_parts_round_trip() {
        let r0 = serial("record0", "record", Op::Write, 1_000_000, &[250.0; 40]);
        let p0 = serial("playback0", "playback", Op::Read, 1_000_000, &[400.0; 4]);
        let out = analyze(&params(&[]), &[p0, r0], None);
        let figures = out.verdict.figures();
        crate::workload::outcome::assert_figures_round_trip::<Verdict, StreamFigures>(
            COLUMNS,
            &figures,
            &out,
            &out.verdict,
            &out.streams,
        );
    }

    #[test]
    fn a_run_in_real_time_has_its_buffers_as_verdict_and_they_round_trip() {
        // One recorder never written (its 5 s buffer overflows at 5 s) and one player whose
        // one read starts it and then runs dry after a second of playing.
        let p = params(&[
            ("pacing", "realtime"),
            ("recorders", "1"),
            ("players", "1"),
            ("bitrate", "8"),
            ("preroll", "0.5s"),
            ("duration", "10s"),
        ]);
        let read = serial("playback0", "playback", Op::Read, 1 << 20, &[10.0]);
        let rec = serial("record0", "record", Op::Write, 1 << 20, &[]);
        let phase = crate::engine::PhaseRecord {
            sampling_start_s: Some(0.0),
            end_s: Some(10.0),
            ..crate::engine::PhaseRecord::stream(PHASE)
        };
        let set = SampleSet::in_memory(vec![read, rec], vec![phase]);
        let out = Dvr.analyze(&p, &set, &Seen::default()).unwrap();
        let v: Verdict = serde_json::from_value(out.verdict_json()).unwrap();
        assert_eq!(v.meets_target, Some(false));
        assert_eq!(v.record_mbit_guaranteed, None, "no hammering figure");
        let f = v.realtime.first_failure.clone().unwrap();
        assert_eq!(f.stream, "playback0");
        assert!(f.what.starts_with("underrun"), "{f:?}");
        // 8 Mbit/s: the 5,000,000-byte buffer is full at the frame of 5.0 s.
        assert_eq!(v.realtime.record_buffer_peak_pct, Some(100.0));
        assert!(
            v.realtime.overflow_mb.unwrap() > 4.0 && v.realtime.overflow_events == Some(1),
            "{v:?}"
        );
        assert_eq!(v.realtime.underruns, Some(1));
        assert!(
            out.verdict_line().starts_with("FAILED: playback0 at 1."),
            "{}",
            out.verdict_line()
        );
        let streams: Vec<StreamFigures> = out
            .streams_json()
            .into_iter()
            .map(|s| serde_json::from_value(s).unwrap())
            .collect();
        let figures = v.figures();
        assert!(
            figures.values[6..].iter().all(Option::is_some),
            "{figures:?}"
        );
        crate::workload::outcome::assert_figures_round_trip::<Verdict, StreamFigures>(
            COLUMNS,
            &figures,
            out.as_ref(),
            &v,
            &streams,
        );
        assert_eq!(out.buffers().len(), 2);
    }

    #[test]
    fn ext4_spike_fails_the_target() {
        // seed 000 ext4 defaults: a 650 ms window peak -> 12.3 Mbit/s, below 19.4.
        let r = serial("record0", "record", Op::Write, 1_000_000, &[650.0; 20]);
        let out = analyze(&params(&[]), &[r], None);
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
        // Every block a record stream writes carries a CRC-32C verify header per 4 KiB.
        let seal = plan.streams[1].io.seal.unwrap();
        assert_eq!((seal.checksum.name(), seal.interval), ("crc32c", 4096));
        let odd = Dvr
            .plan(&params(&[("io_size", "1000"), ("direct", "false")]))
            .unwrap();
        assert_eq!(odd.streams[1].io.seal.unwrap().interval, 1000);
        assert_eq!(odd.check(), Ok(()));
    }

    #[test]
    fn a_seed_gives_the_offsets_it_always_gave() {
        use crate::engine::{self, EngineOptions, Placement};
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
        let opts = EngineOptions::buffered();
        let out = engine::run(&plan, &placements, opts, |_| {});
        let offsets: Vec<u64> = out.unwrap().streams[0]
            .samples
            .iter()
            .map(|s| s.offset / 4096)
            .collect();
        // Recorded when every stream's seed became a hash of the plan's seed and its index.
        assert_eq!(
            offsets,
            [166, 140, 154, 89, 46, 234, 230, 220, 38, 233, 111, 2]
        );
    }
}
