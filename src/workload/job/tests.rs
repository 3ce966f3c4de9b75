//! Tests of the job workload: plans from fio's vocabulary, job groups, and fio's headline
//! figures from known samples.

use super::*;
use crate::engine::{
    BackendKind, Op, Pacing, Pattern, PhaseRecord, Sample, Step, Stop, StreamSamples,
};

fn params(over: &[(&str, &str)]) -> Params {
    let o: Vec<(String, String)> = over
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Job.resolve(&o).unwrap()
}

#[test]
fn fio_vocabulary_becomes_streams() {
    let plan = Job
        .plan(&params(&[
            ("name", "rr"),
            ("rw", "randread"),
            ("numjobs", "2"),
            ("iodepth", "32"),
            ("ioengine", "io_uring"),
            ("offset", "1MiB"),
            ("offset_increment", "4MiB"),
            ("size", "8MiB"),
            ("rate_iops", "100"),
            ("runtime", "2s"),
            ("ramp_time", "1s"),
        ]))
        .unwrap();
    assert_eq!(plan.streams.len(), 2);
    let s = &plan.streams[1];
    assert_eq!((s.name.as_str(), s.role.as_str()), ("rr.1", "rr"));
    assert_eq!(
        (s.op, s.pattern, s.pacing.clone()),
        (Op::Read, Pattern::Random, Pacing::Rate(100.0))
    );
    assert_eq!(s.io.depth, 32);
    assert_eq!(s.io.backend, Some(BackendKind::IoUring));
    assert_eq!(s.io.skip, 5 << 20);
    assert_eq!(s.region_len, 13 << 20);
    assert_eq!(
        s.io.bytes,
        8 << 20,
        "size still bounds a job that is not time_based"
    );
    let names: Vec<&str> = plan.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, [RAMP_PHASE, PHASE]);
    assert_eq!(plan.seed, 137);
    assert_eq!(plan.check(), Ok(()));
}

#[test]
fn job_file_sections_run_together_over_the_globals_above_them() {
    let p = params(&[
        ("bs", "8KiB"),
        (
            "groups",
            "[global]\nrw=randwrite\n[a]\nnumjobs=2\n[global]\nrw=read\n[b]\nbs=1m\n",
        ),
    ]);
    let plan = Job.plan(&p).unwrap();
    let names: Vec<&str> = plan.streams.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a.0", "a.1", "b.0"]);
    assert_eq!(
        (plan.streams[0].io_size, plan.streams[2].io_size),
        (8192, 1 << 20)
    );
    assert_eq!(
        (plan.streams[0].op, plan.streams[2].op),
        (Op::Write, Op::Read),
        "a [global] applies to the jobs after it"
    );
    assert_eq!(
        plan.phases[0].step,
        Step::Streams {
            streams: vec![0, 1, 2],
            stop: Stop::OpsEnd
        }
    );
    let e = Job
        .plan(&params(&[("groups", "[a]\nruntime=1\n[b]\nruntime=2\n")]))
        .unwrap_err();
    assert!(e.to_string().contains("runtime"), "{e}");
    let e = Job
        .plan(&params(&[("groups", "[a]\nbogus=1\n")]))
        .unwrap_err();
    assert!(e.to_string().contains("bogus"), "{e}");
}

#[test]
fn options_set_after_a_job_file_apply_over_its_own() {
    let p = params(&[
        (
            "groups",
            "[global]\nruntime=900\ntime_based\n[a]\nrw=randread\n",
        ),
        ("runtime", "2s"),
        ("name", "ignored"),
    ]);
    let j = &jobs(&p).unwrap()[0];
    assert_eq!((j.runtime, j.name.as_str()), (2.0, "ignored"));
    // Without a job file, fio options the workload has no parameter for go to every job.
    let p = params(&[("rw", "randread"), ("percentile_list", "50:99")]);
    assert_eq!(p.text("options"), "percentile_list=50:99");
    assert_eq!(jobs(&p).unwrap()[0].percentiles, [50.0, 99.0]);
}

#[test]
fn impossible_jobs_are_refused() {
    for (over, needle) in [
        (vec![("iodepth", "8")], "io_uring"),
        (vec![("direct", "true"), ("bs", "1000")], "multiple of 4096"),
        (vec![("time_based", "true")], "runtime"),
        (vec![("rate", "1MiB"), ("rate_iops", "5")], "not both"),
        (vec![("size", "1KiB")], "at least bs"),
    ] {
        let e = Job.plan(&params(&over)).unwrap_err().to_string();
        assert!(e.contains(needle), "{over:?}: {e}");
    }
    let e = Job.resolve(&[("rw".into(), "trim".into())]).unwrap_err();
    assert!(e.to_string().contains("randrw"), "{e}");
    let e = Job
        .plan(&params(&[("groups", "[t]\nrw=trim\n")]))
        .unwrap_err();
    assert!(e.to_string().contains("trim"), "{e}");
}

fn stream(name: &str, op: Op, lat_us: &[u64]) -> StreamSamples {
    let mut t = 0;
    let samples = lat_us
        .iter()
        .map(|&l| {
            let s = Sample {
                bytes: 4096,
                issue_ns: t,
                latency_ns: l * 1000,
                phase: 1,
                ..Default::default()
            };
            t += l * 1000;
            s
        })
        .collect();
    StreamSamples {
        name: name.into(),
        role: "j".into(),
        op,
        samples,
    }
}

#[test]
fn headline_figures_as_fio_reports_them() {
    // Two jobs, each 1000 reads of 100 us back to back: 0.1 s, 10k IOPS each, 20k in all.
    let p = params(&[("name", "j"), ("numjobs", "2")]);
    let set = SampleSet::in_memory(
        vec![
            stream("j.0", Op::Read, &[100; 1000]),
            stream("j.1", Op::Read, &[100; 1000]),
        ],
        vec![PhaseRecord::stream(RAMP_PHASE), PhaseRecord::stream(PHASE)],
    );
    let out = analyze(&jobs(&p).unwrap(), &set).unwrap();
    let v = &out.verdict;
    assert!((v.iops.unwrap() - 20_000.0).abs() < 1e-6, "{v:?}");
    assert!((v.mb_s.unwrap() - 20_000.0 * 4096.0 / 1e6).abs() < 1e-6);
    assert!((v.lat_mean_us.unwrap() - 100.0).abs() < 1e-9);
    assert!((v.lat_p999_us.unwrap() - 100.0).abs() < 0.1);
    assert_eq!(v.groups[0].numjobs, 2);
    assert!((out.streams[1].iops - 10_000.0).abs() < 1e-6);
    crate::workload::assert_figures_round_trip::<Verdict, StreamFigures>(
        COLUMNS,
        &v.figures(),
        &out,
        v,
        &out.streams,
    );
    assert!(
        out.verdict_line().starts_with("all jobs: IOPS=20000"),
        "{}",
        out.verdict_line()
    );
}

#[test]
fn a_mixed_job_reads_writes_and_fsyncs_as_told() {
    use crate::engine::{self, EngineOptions, Placement};
    let p = params(&[
        ("rw", "randrw"),
        ("rwmixread", "70"),
        ("fsync", "4"),
        ("bs", "4KiB"),
        ("size", "4MiB"),
        ("ioengine", "io_uring"),
        ("iodepth", "4"),
    ]);
    let plan = Job.plan(&p).unwrap();
    assert_eq!(plan.streams[0].io.mix, Some(70));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.0");
    std::fs::File::create(&path)
        .unwrap()
        .set_len(4 << 20)
        .unwrap();
    let placements = [Placement {
        path,
        offset: 0,
        len: 4 << 20,
    }];
    let opts = EngineOptions {
        direct: false,
        backend: BackendKind::Psync,
        time_scale: 1.0,
    };
    let out = engine::run(&plan, &placements, opts, |_| {}).unwrap();
    let s = &out.streams[0].samples;
    let count = |op| s.iter().filter(|x| x.op == op).count();
    let (r, w, f) = (count(Op::Read), count(Op::Write), count(Op::Fsync));
    assert_eq!(r + w, 1024, "size / bs");
    assert!((600..840).contains(&r), "about 70% reads: {r}");
    assert_eq!(f, w / 4, "an fsync after every 4 writes");
    assert!(s.iter().all(|x| x.errno == 0));
}
