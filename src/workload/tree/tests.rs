//! tree's plan and analysis on made-up samples.

use super::*;
use crate::engine::{IdleRecord, PhaseRecord, Sample, StreamSamples};
use crate::result::monitor::{IoClassRow, MonitorSummary};
use serde_json::json;

fn params(sets: &[(&str, &str)]) -> Params {
    let o: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Tree.resolve(&o).unwrap()
}

fn kinds(plan: &Plan) -> Vec<&'static str> {
    plan.phases.iter().map(|p| p.step.kind()).collect()
}

#[test]
fn phases_come_in_seed_002_s_order() {
    let p = Tree.plan(&params(&[("dirs", "20000")])).unwrap();
    assert_eq!(p.check(), Ok(()));
    let mut want = vec![
        "prepare",
        "idle",
        "stream",
        "sync",
        "drop_caches",
        "idle",
        "stream",
        "sync",
        "idle",
    ];
    if !rustix::process::geteuid().is_root() {
        want.remove(4);
    }
    assert_eq!(kinds(&p), want);
    assert_eq!(p.phases[1].name, IDLE_MKFS);
    // `settle=false`: the creation starts at once.
    let at_once = Tree
        .plan(&params(&[("dirs", "20000"), ("settle", "false")]))
        .unwrap();
    want.remove(1);
    assert_eq!(kinds(&at_once), want);
    assert_eq!(p.streams.len(), 8 + 1);
    assert!(p.streams.iter().all(|s| s.source.is_some()));
    let f = Tree
        .plan(&params(&[
            ("dirs", "100"),
            ("threads", "2"),
            ("fileserver_duration", "5s"),
        ]))
        .unwrap();
    let names: Vec<&str> = f.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names[names.len() - 3..],
        [FILESERVER, SYNC_FILESERVER, IDLE_FILESERVER]
    );
    assert_eq!(f.streams.len(), 2 + 1 + 2);
    let Step::Action(Action::Idle(limits)) = f.phases.last().unwrap().step else {
        panic!("the last phase is idle");
    };
    assert_eq!(limits, IdleLimits::DEFAULT);
}

#[test]
fn impossible_parameters_are_refused_by_name() {
    for (sets, key) in [
        (vec![("dirs", "50")], "dirs"),
        (vec![("depth", "0")], "dirs"),
        (vec![("threads", "0")], "threads"),
        (vec![("remove_threads", "9")], "remove_threads"),
        (
            vec![("fileserver_duration", "1s"), ("fileserver_files", "2")],
            "fileserver_files",
        ),
    ] {
        let e = Tree.plan(&params(&sets)).unwrap_err();
        assert!(e.to_string().contains(key), "{sets:?}: {e}");
    }
}

fn sample(op: Op, phase: u16, issue_ns: u64) -> Sample {
    Sample {
        op,
        issue_ns,
        latency_ns: 1000,
        phase,
        ..Default::default()
    }
}

fn record(name: &str, kind: &str, start_s: f64, end_s: f64) -> PhaseRecord {
    PhaseRecord {
        kind: kind.into(),
        start_s,
        end_s: Some(end_s),
        ..PhaseRecord::stream(name)
    }
}

fn idle(cleaning_s: Option<f64>) -> Option<IdleRecord> {
    Some(IdleRecord {
        cleaning_s,
        how: "device".into(),
        capped: false,
        device_idle_s: cleaning_s,
        bands_cleaned: Some(3),
        fast_forward_s: None,
        busy_s: None,
        note: None,
    })
}

#[test]
fn the_verdict_has_times_rates_cleaning_and_classes() {
    let p = params(&[("dirs", "4"), ("threads", "1"), ("depth", "2")]);
    let mut phases = vec![
        record(IDLE_MKFS, "idle", 0.0, 0.0),
        record(CREATE, "stream", 0.0, 2.0),
        record(SYNC_CREATE, "sync", 2.0, 3.0),
        record(IDLE_CREATE, "idle", 3.0, 10.0),
        record(REMOVE, "stream", 10.0, 18.0),
        record(SYNC_REMOVE, "sync", 18.0, 19.0),
        record(IDLE_REMOVE, "idle", 19.0, 20.0),
    ];
    // The disk cleaned for 4 s after mkfs, before the creation began.
    phases[0].idle = idle(Some(4.0));
    phases[3].idle = idle(Some(7.0));
    phases[6].idle = idle(Some(0.5));
    // The devices' background work so far at the end of each action phase: 2 s before the
    // create's sync ended (cleaning during the create), 9 s by the end of its idle phase.
    for (i, s) in [(2, 2.0), (3, 9.0), (5, 9.0), (6, 9.5)] {
        phases[i].background_s = Some(s);
    }
    let create = StreamSamples {
        name: "create0".into(),
        role: "create".into(),
        op: Op::Mkdir,
        samples: (0..4).map(|i| sample(Op::Mkdir, 1, i)).collect(),
    };
    let mut removed: Vec<Sample> = (0..5).map(|i| sample(Op::Readdir, 4, 10 + i)).collect();
    removed.extend((0..4).map(|i| sample(Op::Rmdir, 4, 20 + i)));
    let remove = StreamSamples {
        name: "remove0".into(),
        role: "remove".into(),
        op: Op::Rmdir,
        samples: removed,
    };
    let set = SampleSet::in_memory(vec![create, remove], phases);
    let monitor = MonitorSummary {
        io_classes: vec![IoClassRow {
            phase: Some(CREATE.into()),
            outside: None,
            class: "journal".into(),
            direction: "write".into(),
            requests: 2,
            bytes: 8192,
            latency_ms_mean: None,
        }],
        ..Default::default()
    };
    let emulated = [json!({"model": "smr", "scale": 10.0,
        "model_stats": {"cached_write_bytes": 4096, "bands_cleaned": 3, "cleaning_rewritten_bytes": 96},
        "server": {"late_us_mean": 1.0, "late_us_max": 2.0, "service_us_mean": {"all": 50.0}}})];
    let seen = Seen {
        monitor: Some(&monitor),
        emulated: &emulated,
        ..Default::default()
    };
    let out = analyze(&p, &set, &seen).unwrap();
    let v = &out.verdict;
    assert_eq!(v.create_s, Some(2.0));
    assert_eq!(v.create_dirs_per_s, Some(2.0));
    assert_eq!(
        v.create_synced_s,
        Some(3.0),
        "the create's 2 s and its sync's 1 s"
    );
    assert_eq!(v.dirs_created, 4);
    assert_eq!(v.remove_s, Some(8.0));
    assert_eq!(v.remove_dirs_per_s, Some(0.5));
    assert_eq!(v.cleaning_after_mkfs_s, Some(4.0));
    assert_eq!(v.cleaning_after_create_s, Some(7.0));
    assert_eq!(v.cleaning_after_remove_s, Some(0.5));
    assert_eq!(v.written(CREATE, "journal"), Some(8192));
    assert_eq!(
        v.io_classes_from.as_deref(),
        Some("device log"),
        "no trace ran"
    );
    let smr = v.smr.as_ref().unwrap();
    assert_eq!((smr.bands_cleaned, smr.cleaning_rewritten_bytes), (3, 96));
    assert!(v.host_bound, "1 us late of 50 us is 2%");
    assert_eq!(v.host_late_pct, Some(2.0));
    assert!(out.warnings.iter().any(|w| w.contains("host-bound")));
    let back: Verdict = serde_json::from_value(out.verdict_json()).unwrap();
    assert_eq!(&back, v);
    assert_eq!(v.figures().values.len(), COLUMNS.len());
}

#[test]
fn a_creation_whose_sync_did_not_run_has_no_time_on_the_disk() {
    let p = params(&[("dirs", "4"), ("threads", "1"), ("depth", "2")]);
    let create = StreamSamples {
        name: "create0".into(),
        role: "create".into(),
        op: Op::Mkdir,
        samples: (0..4).map(|i| sample(Op::Mkdir, 0, i)).collect(),
    };
    let set = SampleSet::in_memory(vec![create], vec![record(CREATE, "stream", 0.0, 2.0)]);
    let v = analyze(&p, &set, &Seen::default()).unwrap().verdict;
    assert_eq!((v.create_s, v.create_synced_s), (Some(2.0), None));
}
