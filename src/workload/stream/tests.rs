//! Tests of stream's plan, analysis and verdict on hand-made samples.

use super::*;
use crate::engine::{PhaseRecord, Sample, StreamSamples};
use crate::workload::Seen;
use serde_json::json;

fn params(over: &[(&str, &str)]) -> Params {
    let o: Vec<(String, String)> = over
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Stream.resolve(&o).unwrap()
}

/// A writer that completes one 1 MB write every `1 / per_s[k]` seconds during second k of the
/// streaming phase, which starts sampling at `zero_s`.
fn writer(name: &str, zero_s: f64, per_s: &[u64]) -> StreamSamples {
    let zero = (zero_s * 1e9) as u64;
    let mut samples = Vec::new();
    let mut offset = 0;
    for (k, &n) in per_s.iter().enumerate() {
        for j in 0..n {
            let done = zero + k as u64 * 1_000_000_000 + (j + 1) * 1_000_000_000 / (n + 1);
            samples.push(Sample {
                offset,
                bytes: 1_000_000,
                issue_ns: done - 1_000,
                latency_ns: 1_000,
                ..Default::default()
            });
            offset += 1_000_000;
        }
    }
    StreamSamples {
        name: name.into(),
        role: "writer".into(),
        op: Op::Write,
        samples,
    }
}

/// The phases of a trial whose streaming phase samples from `zero_s` to `end_s`, then syncs
/// until `sync_end_s`.
fn phases(zero_s: f64, end_s: f64, sync_end_s: f64) -> Vec<PhaseRecord> {
    vec![
        PhaseRecord {
            start_s: zero_s - 0.001,
            end_s: Some(end_s),
            sampling_start_s: Some(zero_s),
            ..PhaseRecord::stream(PHASE)
        },
        PhaseRecord {
            kind: "sync".into(),
            start_s: end_s,
            end_s: Some(sync_end_s),
            ..PhaseRecord::stream(SYNC_PHASE)
        },
    ]
}

/// Two seconds of page cache (1000 MB/s per writer), then 100 MB/s per writer.
fn buffered(seconds: usize) -> Vec<u64> {
    let mut v = vec![1000, 1000];
    v.resize(seconds, 100);
    v
}

#[test]
fn the_plan_streams_then_syncs() {
    let plan = Stream.plan(&params(&[])).unwrap();
    assert_eq!(plan.check(), Ok(()));
    assert_eq!(plan.streams.len(), 8);
    assert_eq!(plan.streams[7].name, "writer7");
    assert!(plan
        .streams
        .iter()
        .all(|s| s.pattern == Pattern::Append && s.region_len == 0));
    assert!(!plan.direct);
    let kinds: Vec<&str> = plan.phases.iter().map(|p| p.step.kind()).collect();
    assert_eq!(kinds, ["stream", "sync"]);
    assert!(matches!(
        plan.phases[0].step,
        Step::Streams { stop: Stop::Duration(d), .. } if d == 60.0
    ));
    let p = params(&[("bytes", "1GiB"), ("end_sync", "false"), ("readers", "2")]);
    let plan = Stream.plan(&p).unwrap();
    assert_eq!(plan.phases.len(), 1);
    assert!(
        matches!(plan.phases[0].step, Step::Streams { stop: Stop::Bytes(b), .. } if b == 1 << 30)
    );
    assert_eq!(
        (plan.streams[8].name.as_str(), plan.streams[8].op),
        ("reader0", Op::Read)
    );
    assert_eq!(plan.streams[8].pattern, Pattern::Sequential);
    assert_eq!(
        plan.stores_at_most, None,
        "a reader's file is the stack's to size"
    );
}

#[test]
fn writers_of_zeros_write_nothing_else() {
    let plan = Stream.plan(&params(&[("data", "zero")])).unwrap();
    assert!(plan
        .streams
        .iter()
        .all(|s| s.io.zeros && s.io.seal.is_none()));
    assert!(plan.writes_only_zeros());
    // The default: seeded bytes, sealed.
    let plan = Stream.plan(&params(&[])).unwrap();
    assert!(plan
        .streams
        .iter()
        .all(|s| !s.io.zeros && s.io.seal.is_some()));
    assert!(!plan.writes_only_zeros());
    // A reader's file is filled with seeded bytes before the run: the plan writes more than
    // zeros, and the reader verifies what it reads as before.
    let plan = Stream
        .plan(&params(&[("data", "zero"), ("readers", "1")]))
        .unwrap();
    let reader = plan.streams.last().unwrap();
    assert_eq!(reader.op, Op::Read);
    assert!(!reader.io.zeros && reader.io.seal.is_some());
    assert!(!plan.writes_only_zeros());
    let ones = [("data".to_string(), "ones".to_string())];
    assert!(Stream.resolve(&ones).is_err(), "zero or random only");
}

#[test]
fn writers_stopping_at_a_byte_count_bound_what_they_store() {
    let p = params(&[("bytes", "64MiB"), ("writers", "6"), ("io_size", "1MiB")]);
    let plan = Stream.plan(&p).unwrap();
    assert_eq!(plan.stores_at_most, Some(6 * (65 << 20)));
    assert_eq!(
        Stream.plan(&params(&[])).unwrap().stores_at_most,
        None,
        "a duration"
    );
}

#[test]
fn impossible_parameters_are_refused() {
    for (k, v, needle) in [
        ("writers", "0", "writers"),
        ("io_size", "1000", "io_size"),
        ("file_size", "4KiB", "file_size"),
        ("interval", "1ms", "interval"),
        ("duration", "500ms", "duration"),
        ("settle_window", "1s", "settle_window"),
    ] {
        let mut over = vec![(k, v)];
        if k == "io_size" {
            over.push(("direct", "true"));
        }
        let e = Stream.plan(&params(&over)).unwrap_err().to_string();
        assert!(e.contains(needle), "{k}={v}: {e}");
    }
}

#[test]
fn seed_001_verdict_settles_after_the_page_cache_and_counts_the_sync() {
    // Two writers for 20 s: 2000 MB/s for 2 s, then 200 MB/s; the streaming phase samples from
    // 0.5 s and ends at 20.5 s; the sync takes 4 s more.
    let w = |n| writer(n, 0.5, &buffered(20));
    let set = SampleSet::in_memory(vec![w("writer0"), w("writer1")], phases(0.5, 20.5, 24.5));
    let out = analyze(&params(&[("writers", "2")]), &set, &Seen::default(), None).unwrap();
    let v = &out.verdict;
    assert!(v.settled);
    assert_eq!(
        v.intervals, 19,
        "the last second ends after the last completion"
    );
    assert_eq!(v.settle_s, Some(2.0));
    assert!((v.settled_mb_s.unwrap() - 200.0).abs() < 1e-9);
    assert_eq!(v.burstiness, Some(0.0));
    assert_eq!(v.stream_fairness_jain, Some(1.0));
    let bytes = 2.0 * (2.0 * 1000.0 + 18.0 * 100.0);
    assert!((v.total_mb_s.unwrap() - bytes / 24.0).abs() < 1e-6, "{v:?}");
    assert_eq!(v.sync_s, Some(4.0));
    assert_eq!((v.raw_mb_s, v.raw_fraction), (None, None));
    assert!(out.streams.iter().all(|s| !s.wrapped && s.ios == 3800));
    assert_eq!(out.streams[0].settled_mb_s, Some(100.0));
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    assert!(
        out.verdict_line()
            .starts_with("settled at 200 MB/s after 2.00 s; 317 MB/s with the final sync"),
        "{}",
        out.verdict_line()
    );
}

#[test]
fn a_rising_aggregate_never_settles_and_reports_its_mean() {
    let rising: Vec<u64> = (1..=12).map(|k| 10 * k).collect();
    let set = SampleSet::in_memory(
        vec![writer("writer0", 0.0, &rising)],
        phases(0.0, 12.0, 12.0),
    );
    let out = analyze(
        &params(&[("writers", "1"), ("settle_window", "4s")]),
        &set,
        &Seen::default(),
        None,
    )
    .unwrap();
    let v = &out.verdict;
    assert!(!v.settled && v.settled_mb_s.is_none() && v.settle_s.is_none());
    let mean = (1..12).map(|k| 10.0 * k as f64).sum::<f64>() / 11.0;
    assert!((v.mean_mb_s.unwrap() - mean).abs() < 1e-9, "{v:?}");
    assert!(
        out.warnings[0].contains("never settled"),
        "{:?}",
        out.warnings
    );
    assert!(out.verdict_line().starts_with("never settled (mean"));
}

#[test]
fn raw_fraction_is_the_settled_level_over_the_raw_capability() {
    let set = SampleSet::in_memory(
        vec![writer("writer0", 0.0, &[50; 12])],
        phases(0.0, 12.0, 13.0),
    );
    let p = params(&[("writers", "1"), ("raw_mb_s", "200")]);
    let v = analyze(&p, &set, &Seen::default(), None).unwrap().verdict;
    assert!((v.raw_fraction.unwrap() - 0.25).abs() < 1e-9);
    assert!(v.impossible.is_none() && v.figures().impossible.is_none());
    // Settling above what the drives can take raw is impossible: marked, with its cause.
    let q = params(&[("writers", "1"), ("raw_mb_s", "40")]);
    let out = analyze(&q, &set, &Seen::default(), None).unwrap();
    let why = out.verdict.impossible.clone().unwrap();
    assert!(why.contains("1.25 of the 40.0 MB/s"), "{why}");
    assert_eq!(
        out.verdict.figures().impossible.as_deref(),
        Some(why.as_str())
    );
    assert!(out.warnings.iter().any(|w| w.contains("not ranked")));
    assert!(out.verdict_line().contains("IMPOSSIBLE"));
    assert_eq!(out.verdict.figures().marked, None);
    // A figure above raw by less than two standard errors of its own mean is the drives' raw
    // rate: marked and ranked, not called impossible.
    let wavy: Vec<u64> = (0..24).map(|k| if k % 2 == 0 { 48 } else { 52 }).collect();
    let set = SampleSet::in_memory(vec![writer("writer0", 0.0, &wavy)], phases(0.0, 24.0, 25.0));
    let at = |raw: &str| {
        let q = params(&[("writers", "1"), ("raw_mb_s", raw)]);
        analyze(&q, &set, &Seen::default(), None).unwrap()
    };
    let near = at("49.5");
    let why = near.verdict.impossible.clone().unwrap();
    assert!(why.starts_with(super::figures::AT_RAW), "{why}");
    assert!(
        near.verdict_line().contains("AT RAW"),
        "{}",
        near.verdict_line()
    );
    let f = near.verdict.figures();
    assert_eq!(
        (f.impossible, f.marked.as_deref()),
        (None, Some(why.as_str()))
    );
    assert!(near.warnings.iter().any(|w| w.contains("is ranked")));
    // Results written by earlier versions put what the ranking then made of the cause after
    // it; the table shows the cause alone, never "not ranked" on a ranked row.
    for old in [
        ", and not ranked above stacks measured below them",
        ", so it is ranked, and marked",
    ] {
        let mut v = near.verdict.clone();
        v.impossible = Some(format!("{why}{old}"));
        assert_eq!(v.figures().marked.as_deref(), Some(why.as_str()), "{old}");
    }
    let far = at("45");
    let why = far.verdict.impossible.clone().unwrap();
    assert!(why.contains("page cache, not the drives"), "{why}");
    assert!(far.verdict_line().contains("IMPOSSIBLE"));
    // Above the raw trial's drives but within what their model streams at: the raw trial
    // fell short, and the cause says so; above the model it is the page cache again.
    let with_media = |media: &str| {
        let q = params(&[("writers", "1"), ("raw_mb_s", "45"), ("media_mb_s", media)]);
        analyze(&q, &set, &Seen::default(), None).unwrap()
    };
    let within = with_media("55");
    let why = within.verdict.impossible.clone().unwrap();
    assert!(why.starts_with(super::figures::WITHIN_MODEL), "{why}");
    assert!(why.contains("within the 55.0 MB/s"), "{why}");
    assert!(within.verdict_line().contains("ABOVE THE RAW TRIAL"));
    assert!(within.warnings.iter().any(|w| w.contains("is ranked")));
    let f = within.verdict.figures();
    assert_eq!(
        (f.impossible, f.marked.as_deref()),
        (None, Some(why.as_str()))
    );
    let mut old = within.verdict.clone();
    old.impossible = Some(format!(
        "{why}, yet it is not ranked against stacks judged by that trial"
    ));
    assert_eq!(old.figures().marked.as_deref(), Some(why.as_str()));
    let over = with_media("49");
    let why = over.verdict.impossible.clone().unwrap();
    assert!(
        why.contains("page cache, not the drives") && why.contains("above the 49.0 MB/s"),
        "{why}"
    );
    assert!(over.verdict_line().contains("IMPOSSIBLE"));
    // A study's raw stack settled at 660 MB/s; a RAID10 over the same drives can use half.
    let reference = Reference {
        stack: "raw".into(),
        kind: "stream".into(),
        verdict: json!({"settled_mb_s": 660.0, "settled": true, "settle_s": 3.0, "mean_mb_s": 650.0,
            "total_mb_s": 600.0, "sync_s": 1.0, "burstiness": 0.1, "stream_fairness_jain": 1.0,
            "raw_mb_s": null, "raw_fraction": null, "intervals": 60}),
        share: 0.5,
        device_writes: Default::default(),
        phase_starts: [(PHASE.to_string(), 0.0)].into(),
        data_devices: 3.0,
        media_mb_s: None,
    };
    let q = Stream.refer(&params(&[]), &reference).unwrap();
    assert_eq!(q.f64("raw_mb_s"), 330.0);
    assert_eq!(q.f64("media_mb_s"), 0.0, "not known");
    let modeled = Reference {
        media_mb_s: Some(345.0),
        ..reference.clone()
    };
    let q = Stream.refer(&params(&[]), &modeled).unwrap();
    assert_eq!(q.f64("media_mb_s"), 345.0);
    let given = Stream
        .refer(&params(&[("media_mb_s", "300")]), &modeled)
        .unwrap();
    assert_eq!(given.f64("media_mb_s"), 300.0, "the user's figure stands");
    // Eight writers on six drives: a drive with one writer took 115 MB/s once the writers had
    // settled (the reference settled after 3 s), more than a sixth of the total, so the
    // RAID10's three drives' worth is 345 MB/s, not half of the total.
    let rows = |mb_s: f64| -> Vec<crate::workload::WriteInterval> {
        (1..=10)
            .map(|t| crate::workload::WriteInterval {
                phase: Some(PHASE.into()),
                end_s: t as f64,
                seconds: 1.0,
                mb: if t <= 3 { 1.0 } else { mb_s },
            })
            .collect()
    };
    let uneven = Reference {
        device_writes: [
            ("loop0".to_string(), rows(100.0)),
            ("loop2".to_string(), rows(115.0)),
        ]
        .into(),
        ..reference.clone()
    };
    let q = Stream.refer(&params(&[]), &uneven).unwrap();
    assert!(
        (q.f64("raw_mb_s") - 345.0).abs() < 1e-9,
        "{}",
        q.f64("raw_mb_s")
    );
    // A slower best drive never lowers the share of the total.
    let slow = Reference {
        device_writes: [("loop0".to_string(), rows(90.0))].into(),
        ..reference.clone()
    };
    assert_eq!(
        Stream.refer(&params(&[]), &slow).unwrap().f64("raw_mb_s"),
        330.0
    );
    assert!(
        Stream.refer(&p, &reference).is_none(),
        "an explicit raw_mb_s stays"
    );
    let dvr = Reference {
        kind: "dvr".into(),
        ..reference
    };
    assert!(Stream.refer(&params(&[]), &dvr).is_none());
}

#[test]
fn without_phase_times_total_is_unknown_and_said() {
    let set = SampleSet::in_memory(
        vec![writer("writer0", 0.0, &[50; 12])],
        vec![PhaseRecord::stream(PHASE)],
    );
    let out = analyze(&params(&[("writers", "1")]), &set, &Seen::default(), None).unwrap();
    assert_eq!(out.verdict.total_mb_s, None);
    assert!(
        out.warnings.iter().any(|w| w.contains("final sync")),
        "{:?}",
        out.warnings
    );
    let no_sync = analyze(
        &params(&[("writers", "1"), ("end_sync", "false")]),
        &set,
        &Seen::default(),
        None,
    )
    .unwrap();
    assert!(no_sync.verdict.total_mb_s.is_some());
}

#[test]
fn every_column_is_the_verdict_field_of_its_key_and_the_parts_round_trip() {
    let set = SampleSet::in_memory(
        vec![writer("writer0", 0.0, &[50; 12])],
        phases(0.0, 12.0, 13.0),
    );
    let monitor = monitored(25.0, 5.0);
    let seen = Seen {
        monitor: Some(&monitor),
        ..Default::default()
    };
    let out = analyze(
        &params(&[("writers", "1"), ("raw_mb_s", "100")]),
        &set,
        &seen,
        None,
    )
    .unwrap();
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
fn a_stream_that_reaches_the_end_of_its_file_is_said_to_wrap() {
    let mut w = writer("writer0", 0.0, &[50; 12]);
    w.samples[100].offset = 0;
    let set = SampleSet::in_memory(vec![w], phases(0.0, 12.0, 13.0));
    let out = analyze(&params(&[("writers", "1")]), &set, &Seen::default(), None).unwrap();
    assert!(out.streams[0].wrapped);
    assert!(
        out.warnings.iter().any(|x| x.contains("started over")),
        "{:?}",
        out.warnings
    );
}

/// What the threads monitor saw of a trial: `streaming` and `sync` % of a core in its phases.
fn monitored(streaming: f64, sync: f64) -> crate::result::monitor::MonitorSummary {
    use crate::result::monitor::{MonitorSummary, OwnCpu, PhaseCpu, ThreadSummary};
    let phase = |name: &str, pct: f64| PhaseCpu {
        phase: Some(name.into()),
        outside: None,
        seconds: 6.0,
        kernel_cpu_pct_mean: pct,
        own_cpu_pct_mean: 3.0,
    };
    MonitorSummary {
        threads: Some(ThreadSummary {
            kernel_cpu_pct_mean: 40.0,
            kernel_cpu_pct_peak: 90.0,
            own_cpu_pct_mean: OwnCpu::default(),
            groups: vec![],
            phases: vec![
                phase(super::PHASE, streaming),
                phase(super::SYNC_PHASE, sync),
            ],
            host: None,
        }),
        ..Default::default()
    }
}

#[test]
fn kernel_cpu_comes_from_the_monitors_during_the_streaming_phase() {
    let set = SampleSet::in_memory(
        vec![writer("writer0", 0.0, &[50; 12])],
        phases(0.0, 12.0, 13.0),
    );
    let monitor = monitored(66.0, 12.0);
    let seen = Seen {
        monitor: Some(&monitor),
        ..Default::default()
    };
    let v = analyze(&params(&[("writers", "1")]), &set, &seen, None)
        .unwrap()
        .verdict;
    assert_eq!(
        v.kernel_cpu_pct,
        Some(66.0),
        "the streaming phase's, not the sync's"
    );
    let none = analyze(&params(&[("writers", "1")]), &set, &Seen::default(), None).unwrap();
    assert_eq!(none.verdict.kernel_cpu_pct, None);
}

/// What diskstats saw of data devices busy `utils` % of the streaming phase, and a log device
/// idle through it; the sync phase kept them all busy.
fn devices_busy(utils: &[f64]) -> crate::result::monitor::MonitorSummary {
    use crate::result::monitor::{DevicePhase, DeviceSummary, DiskTotals, IostatFigures};
    let means = |util_pct: f64| IostatFigures {
        util_pct,
        ..Default::default()
    };
    let phase = |name: &str, util: f64| DevicePhase {
        phase: Some(name.into()),
        outside: None,
        seconds: 12.0,
        means: means(util),
        await_ms: 0.0,
        await_ms_peak: 0.0,
        aqu_sz_peak: 0.0,
        totals: DiskTotals::default(),
    };
    let device = |i: usize, role: &str, util: f64| DeviceSummary {
        device: format!("loop{i}"),
        role: role.into(),
        seconds: 13.0,
        means: means(util),
        await_ms: 0.0,
        await_ms_peak: 0.0,
        aqu_sz_peak: 0.0,
        util_pct_peak: 100.0,
        totals: DiskTotals::default(),
        phases: vec![phase(super::PHASE, util), phase(super::SYNC_PHASE, 100.0)],
    };
    let mut devices: Vec<DeviceSummary> = (utils.iter().enumerate())
        .map(|(i, &u)| device(i, "data", u))
        .collect();
    devices.push(device(utils.len(), "log", 0.0));
    crate::result::monitor::MonitorSummary {
        interval_s: 1.0,
        devices,
        ..Default::default()
    }
}

/// The warnings of one writer's 12 s at full speed on devices busy `utils` % of it.
fn warnings_on(utils: &[f64]) -> Vec<String> {
    let set = SampleSet::in_memory(
        vec![writer("writer0", 0.0, &[50; 12])],
        phases(0.0, 12.0, 13.0),
    );
    let monitor = devices_busy(utils);
    let seen = Seen {
        monitor: Some(&monitor),
        ..Default::default()
    };
    analyze(&params(&[("writers", "1")]), &set, &seen, None)
        .unwrap()
        .warnings
}

#[test]
fn a_stream_whose_devices_sat_idle_says_they_did_not_set_its_rate() {
    // Six drives behind eight buffered writers held by their CPU (a study's raw trial).
    let idle = warnings_on(&[36.8, 38.7, 15.7, 15.3, 15.2, 15.6]);
    let said: Vec<&String> = (idle.iter())
        .filter(|w| w.contains("not what set this rate"))
        .collect();
    assert_eq!(said.len(), 1, "{idle:?}");
    assert!(
        said[0].contains("busy at most 38.7% of the streaming"),
        "{}",
        said[0]
    );
    assert!(said[0].contains("loop2 15.7%"), "{}", said[0]);
    assert!(
        !said[0].contains("loop6"),
        "the log device is not the data's: {}",
        said[0]
    );
    // A drive a stream keeps busy set the rate, whatever the sync phase and the log did; so
    // did the busiest of six a btrfs raid10 loaded unevenly.
    for utils in [&[93.0][..], &[51.2, 65.1, 46.7, 90.5, 25.0, 25.1]] {
        let busy = warnings_on(utils);
        assert!(
            !busy.iter().any(|w| w.contains("not what set this rate")),
            "{busy:?}"
        );
    }
    // Without diskstats nothing is said either way.
    let set = SampleSet::in_memory(
        vec![writer("writer0", 0.0, &[50; 12])],
        phases(0.0, 12.0, 13.0),
    );
    let none = analyze(&params(&[("writers", "1")]), &set, &Seen::default(), None).unwrap();
    assert!(!none.warnings.iter().any(|w| w.contains("set this rate")));
}
