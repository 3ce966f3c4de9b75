//! Tests of the job workload: plans from fio's vocabulary, job groups, and fio's headline
//! figures from known samples.

use super::*;
use crate::engine::{BackendKind, Op, Pattern, PhaseRecord, Sample, Step, Stop, StreamSamples};

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
    assert_eq!((s.op, s.pattern), (Op::Read, Pattern::Random));
    assert!(
        s.source.as_ref().is_some_and(|x| x.is_block()),
        "a generated stream"
    );
    assert_eq!(s.io.depth, 32);
    assert_eq!(s.io.backend, Some(BackendKind::IoUring));
    assert_eq!(s.region_len, 13 << 20, "offset + increment + size");
    assert_eq!(s.io.share, None, "files of its own");
    let names: Vec<&str> = plan.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["prepare", RAMP_PHASE, PHASE]);
    assert_eq!(plan.seed, 137);
    assert_eq!(plan.check(), Ok(()));
}

#[test]
fn jobs_naming_one_file_share_it() {
    let p = params(&[(
        "groups",
        "[global]\nfilename=data\nsize=4m\n[w]\nrw=randwrite\nnumjobs=2\n[r]\nrw=randread\nsize=8m\n[own]\nfilename=other\n",
    )]);
    let plan = Job.plan(&p).unwrap();
    let shares: Vec<Option<usize>> = plan.streams.iter().map(|s| s.io.share).collect();
    assert_eq!(shares, [None, Some(0), Some(0), None]);
    assert_eq!(
        plan.streams[0].region_len,
        8 << 20,
        "as far as any job reaches"
    );
}

#[test]
fn job_file_sections_run_together_over_the_globals_above_them() {
    let p = params(&[
        ("bs", "8KiB"),
        (
            "groups",
            "[global]\nrw=randwrite\n[a]\nnumjobs=2\n[global]\nrw=read\n[b]\nbs=1m\n[b]\nruntime=1\n",
        ),
    ]);
    let plan = Job.plan(&p).unwrap();
    let names: Vec<&str> = plan.streams.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["a.0", "a.1", "b.0", "b#2.0"],
        "a second job of a name is told apart"
    );
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
        plan.phases[1].step,
        Step::Streams {
            streams: vec![0, 1, 2, 3],
            stop: Stop::OpsEnd
        }
    );
    let e = Job
        .plan(&params(&[(
            "groups",
            "[a]\nramp_time=1\n[b]\nramp_time=2\n",
        )]))
        .unwrap_err();
    assert!(e.to_string().contains("ramp"), "{e}");
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
        (
            vec![("ioengine", "io_uring"), ("hipri", "1")],
            "poll queues",
        ),
        (vec![("direct", "true"), ("bs", "1000")], "multiple of 512"),
        (vec![("time_based", "true")], "runtime"),
        (vec![("size", "1KiB")], "at least bs"),
    ] {
        let e = Job.plan(&params(&over)).unwrap_err().to_string();
        assert!(e.contains(needle), "{over:?}: {e}");
    }
    let e = Job.resolve(&[("rw".into(), "trim".into())]).unwrap_err();
    assert!(e.to_string().contains("randrw"), "{e}");
    // A synchronous engine asked for a deep queue runs one I/O at a time, as fio's do.
    let p = params(&[("iodepth", "8")]);
    assert_eq!(Job.plan(&p).unwrap().streams[0].io.depth, 1);
    assert!(super::plan::notes(&jobs(&p).unwrap()[0])[0].contains("one I/O at a time"));
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
    crate::workload::outcome::assert_figures_round_trip::<Verdict, StreamFigures>(
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

/// Runs the jobs of `groups` (job-file text) in a temporary directory through the engine:
/// the plan's prepare phase, then its other stream phases; every sample of each stream.
fn run_jobs(groups: &str) -> (Vec<crate::engine::StreamSamples>, tempfile::TempDir) {
    let (set, dir) = run_set(groups);
    (set.load().unwrap(), dir)
}

/// As [`run_jobs`], the figures the trial reports of them.
fn run_analyzed(groups: &str) -> (super::analysis::JobOutcome, tempfile::TempDir) {
    let (set, dir) = run_set(groups);
    let out = analyze(&jobs(&params(&[("groups", groups)])).unwrap(), &set).unwrap();
    (out, dir)
}

/// As [`run_jobs`], the samples kept as the trial keeps them (each phase's record holding
/// what the streams' generators found).
fn run_set(groups: &str) -> (SampleSet, tempfile::TempDir) {
    use crate::engine::{Engine, EngineOptions, Keep, Placement};
    let plan = Job.plan(&params(&[("groups", groups)])).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut placements: Vec<Placement> = Vec::new();
    for (i, s) in plan.streams.iter().enumerate() {
        let p = match s.io.share {
            Some(o) => placements[o].clone(),
            None => {
                let path = dir.path().join(format!("{i:02}"));
                std::fs::create_dir(&path).unwrap();
                Placement {
                    path,
                    offset: 0,
                    len: s.region_len,
                }
            }
        };
        placements.push(p);
    }
    let opts = EngineOptions::buffered();
    let mut e = Engine::new(
        &plan,
        &placements,
        opts,
        std::time::Instant::now(),
        Keep::Memory,
    )
    .unwrap();
    let mut records = vec![PhaseRecord::stream("prepare")];
    e.prepare(&std::sync::atomic::AtomicBool::new(false))
        .unwrap();
    for i in 1..plan.phases.len() {
        let out = e.run_phase(i, |_| {}).unwrap();
        let mut r = PhaseRecord::stream(&plan.phases[i].name);
        let found: serde_json::Map<String, serde_json::Value> = out.reports.into_iter().collect();
        r.measured = (!found.is_empty()).then(|| serde_json::json!({ "streams": found }));
        records.push(r);
    }
    (e.finish(records).unwrap(), dir)
}

#[test]
fn a_mixed_job_reads_writes_and_fsyncs_as_told() {
    let (s, _d) = run_jobs(
        "[m]\nrw=randrw\nrwmixread=70\nfsync=4\nbs=4k\nsize=4m\nioengine=io_uring\niodepth=4\n",
    );
    let s = &s[0].samples;
    let count = |op| s.iter().filter(|x| x.op == op).count();
    let (r, w, f) = (count(Op::Read), count(Op::Write), count(Op::Fsync));
    assert_eq!(
        r + w,
        1024,
        "size / bs: the random map takes each block once"
    );
    assert!((600..840).contains(&r), "about 70% reads: {r}");
    assert_eq!(f, w / 4, "an fsync after every 4 writes");
    assert!(s.iter().all(|x| x.errno == 0));
    let mut offsets: Vec<u64> = s
        .iter()
        .filter(|x| x.op.is_data())
        .map(|x| x.offset)
        .collect();
    offsets.sort_unstable();
    offsets.dedup();
    assert_eq!(offsets.len(), 1024, "every block once");
}

#[test]
fn offsets_sizes_and_passes_as_fio_makes_them() {
    // Backwards reads (fio's backwards-read.fio), in 4 KiB steps from the end.
    let (s, _d) = run_jobs("[b]\nrw=read:-8k\nbs=4k\nsize=64k\n");
    let offs: Vec<u64> = s[0].samples.iter().map(|x| x.offset).take(4).collect();
    assert_eq!(offs, [0, 65536 - 8192, 65536 - 12288, 65536 - 16384]);
    assert_eq!(s[0].samples.len(), 16, "size / bs I/Os");
    // A bssplit: sizes by weight; loops: passes; number_ios: a count.
    let (s, _d) = run_jobs(
        "[x]\nrw=randwrite\nbssplit=4k/50:16k/50\nsize=4m\nloops=3\n[n]\nrw=read\nsize=1m\nnumber_ios=10\n",
    );
    let bytes: u64 = s[0].samples.iter().map(|x| x.bytes).sum();
    assert_eq!(bytes, 3 * (4 << 20), "three passes of size bytes");
    // Half drawn at 4k; a 16k one meeting a block its pass already did is cut there, as fio
    // cuts it, so the 4k share is above a half and every I/O is whole 4k blocks up to 16k.
    let small = s[0].samples.iter().filter(|x| x.bytes == 4096).count() as f64;
    let share = small / s[0].samples.len() as f64;
    assert!(
        (0.4..0.75).contains(&share),
        "about half the I/Os 4k: {share}"
    );
    assert!(s[0]
        .samples
        .iter()
        .all(|x| x.bytes % 4096 == 0 && (4096..=16384).contains(&x.bytes)));
    let whole = s[0].samples.iter().filter(|x| x.bytes == 16384).count() as f64;
    assert!(
        whole / s[0].samples.len() as f64 > 0.2,
        "most 16k ones stay whole"
    );
    assert_eq!(s[1].samples.len(), 10);
}

#[test]
fn rates_and_start_delays_pace_a_job() {
    // 50 I/Os at 1000 IOPS take about 49 ms, after a 50 ms start delay.
    let (s, _d) = run_jobs("[p]\nrw=read\nsize=200k\nbs=4k\nrate_iops=1000\nstartdelay=50ms\n");
    let s = &s[0].samples;
    assert_eq!(s.len(), 50);
    // On a schedule from the end of its start delay (50 ms after the engine's clock began at
    // the latest): the k-th I/O goes no earlier than k ms after that.
    for (k, x) in s.iter().enumerate() {
        assert!(
            x.issue_ns >= 50_000_000 + k as u64 * 1_000_000,
            "I/O {k} at {} ns",
            x.issue_ns
        );
    }
}

#[test]
fn stonewalls_run_segments_in_turn_and_groups_follow_fio() {
    let text = "[a]\nrw=read\nsize=64k\n[b]\nnew_group\nrw=read\nsize=64k\n[c]\nstonewall\nrw=write\nsize=64k\n[d]\nrw=read\nsize=64k\n";
    let plan = Job.plan(&params(&[("groups", text)])).unwrap();
    let phases: Vec<(&str, Vec<usize>)> = plan
        .phases
        .iter()
        .filter_map(|p| match &p.step {
            Step::Streams { streams, .. } => Some((p.name.as_str(), streams.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(phases, [("run1", vec![0, 1]), ("run2", vec![2, 3])]);
    let js = jobs(&params(&[("groups", text)])).unwrap();
    assert_eq!(
        super::plan::run_groups(&js),
        [0, 1, 2, 2],
        "new_group and stonewall start groups"
    );
    let (s, _d) = run_jobs(text);
    assert!(s.iter().all(|x| x.samples.len() == 16));
    let e = Job
        .plan(&params(&[("groups", "[a]\nwait_for=b\n[b]\n")]))
        .unwrap_err();
    assert!(
        e.to_string().contains("wait_for=b names no job before it"),
        "{e}"
    );
}

#[test]
fn a_job_waiting_for_another_starts_when_it_ends() {
    // In one segment: the readers start only once the writer is done (fio's waitfor.fio).
    let (s, _d) = run_jobs(
        "[writer]\nrw=write\nsize=256k\nbs=4k\n[reader]\nwait_for=writer\nrw=read\nsize=64k\nnumjobs=2\n",
    );
    let writer_done = s[0].samples.iter().map(|x| x.done_ns()).max().unwrap();
    for r in &s[1..] {
        assert_eq!(r.samples.len(), 16);
        assert!(
            r.samples[0].issue_ns >= writer_done,
            "a reader began before the writer ended"
        );
    }
}

#[test]
fn every_block_engine_runs_a_job_as_fio_would() {
    for e in [
        "psync", "sync", "vsync", "pvsync", "pvsync2", "libaio", "io_uring", "posixaio", "mmap",
        "null",
    ] {
        let (s, _d) = run_jobs(&format!(
            "[j]\nioengine={e}\niodepth=8\nrw=randrw\nbs=4k\nsize=256k\nfsync=8\n"
        ));
        let s = &s[0].samples;
        let data = s.iter().filter(|x| x.op.is_data()).count();
        assert_eq!(data, 64, "{e}: size / bs I/Os");
        assert!(
            s.iter().all(|x| x.errno == 0),
            "{e}: {:?}",
            s.iter().find(|x| x.errno != 0)
        );
        assert!(s.iter().any(|x| x.op == Op::Fsync), "{e}: fsyncs");
    }
    // falloc allocates with its writes and punches holes with its trims; ftruncate truncates.
    let (s, d) = run_jobs("[f]\nioengine=falloc\nrw=randwrite\nbs=64k\nsize=1m\nfallocate=none\n");
    assert_eq!(s[0].samples.len(), 16);
    let file = std::fs::read_dir(d.path().join("00"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(
        file.metadata().unwrap().len(),
        1 << 20,
        "allocated by the writes"
    );
    let (s, _d) = run_jobs("[t]\nioengine=ftruncate\nrw=write\nbs=4k\nsize=64k\n");
    assert!(s[0]
        .samples
        .iter()
        .all(|x| x.errno == 0 && x.op == Op::Write));
}

#[test]
fn the_null_engine_makes_no_file_and_needs_no_room() {
    // fio's diskless engine: 100 GiB of random reads with nothing laid out on the target.
    let groups = "[n]\nioengine=null\nrw=randread\nsize=100g\nnumber_ios=64\nnorandommap\n";
    let plan = Job.plan(&params(&[("groups", groups)])).unwrap();
    assert_eq!(plan.streams[0].region_len, 0, "no room asked of the stack");
    let (s, d) = run_jobs(groups);
    assert_eq!(s[0].samples.len(), 64);
    assert!(s[0].samples.iter().all(|x| x.errno == 0));
    let made = std::fs::read_dir(d.path().join("00")).unwrap().count();
    assert_eq!(made, 0, "no file laid out");
}

#[test]
fn the_file_engines_time_each_operation_on_each_file() {
    let (s, d) = run_jobs(
        "[c]\nioengine=filecreate\ncreate_on_open=1\nnrfiles=10\nfilesize=4k\n[s]\nioengine=filestat\nnrfiles=10\nfilesize=4k\n[u]\nioengine=filedelete\nnrfiles=10\nfilesize=4k\n[m]\nioengine=dircreate\nnrfiles=5\n[r]\nioengine=dirdelete\nnrfiles=5\n",
    );
    let ops: Vec<(Op, usize)> = s
        .iter()
        .map(|x| (x.samples[0].op, x.samples.len()))
        .collect();
    assert_eq!(
        ops,
        [
            (Op::Create, 10),
            (Op::Stat, 10),
            (Op::Unlink, 10),
            (Op::Mkdir, 5),
            (Op::Rmdir, 5)
        ]
    );
    assert!(s.iter().all(|x| x.samples.iter().all(|y| y.errno == 0)));
    let left = |dir: &str| std::fs::read_dir(d.path().join(dir)).unwrap().count();
    assert_eq!(
        (left("00"), left("02"), left("03"), left("04")),
        (10, 0, 5, 0)
    );
}

#[test]
fn verify_reads_back_what_a_job_wrote() {
    // After the pass, and every 16 writes: every interval checked, none damaged.
    for extra in ["", "verify_backlog=16\n"] {
        let text = format!("[v]\nrw=randwrite\nbs=4k\nsize=1m\nverify=crc32c\n{extra}");
        let (set, _d) = run_set(&text);
        let out = analyze(&jobs(&params(&[("groups", &text)])).unwrap(), &set).unwrap();
        let v = out.streams[0].verify.clone().expect("a verify report");
        assert_eq!((v.checked, v.mismatches), (256, 0), "{extra}");
        assert_eq!(out.verdict.verify_mismatches, Some(0));
        assert_eq!(out.streams[0].write_ios, 256);
        assert_eq!(out.streams[0].read_ios, 256, "each block read back once");
    }
}

#[test]
fn verify_names_a_block_damaged_between_its_write_and_its_check() {
    // A writer seals 1 MiB; another job then writes plain data over 4 KiB at 64 KiB; a third
    // reads the file back and checks every header (fio's surface-scan, with a fault put in).
    let text = "[global]\nfilename=data\nbs=4k\nsize=1m\n\
        [write]\nrw=write\nverify=md5\ndo_verify=0\n\
        [damage]\nstonewall\nrw=write\noffset=64k\nsize=4k\n\
        [check]\nstonewall\nrw=read\nverify=md5\n";
    let (out, _d) = run_analyzed(text);
    let v = out.streams[2].verify.clone().expect("the checker's report");
    assert_eq!((v.checked, v.mismatches), (256, 1));
    assert_eq!(v.first[0].offset, 65536, "named by its offset");
    assert!(
        v.first[0].what.contains("no verify header"),
        "{:?}",
        v.first[0]
    );
    assert!(v.first[0].file.ends_with("data"));
    assert_eq!(out.verdict.verify_mismatches, Some(1));
    let w = out.warnings.join("\n");
    assert!(w.contains("check.0: verify found 1 of 256 intervals not as written (md5); the first at offset 65536"), "{w}");
    // verify_fatal ends the checker at its first mismatch.
    let fatal = text.replace("[check]\nstonewall", "[check]\nstonewall\nverify_fatal=1");
    let (set, _d) = run_set(&fatal);
    let out = analyze(&jobs(&params(&[("groups", &fatal)])).unwrap(), &set).unwrap();
    assert!(out.streams[2].read_ios < 256, "{}", out.streams[2].read_ios);
}

#[test]
fn exitall_errors_and_thinktime_as_fio_runs_them() {
    // exitall with exit_what=all: when the short job ends, the long one ends, and the job of
    // the next segment never runs (fio's exitwhat.fio).
    let (s, _d) = run_jobs(
        "[short]\nrw=read\nsize=64k\nexitall\nexit_what=all\n[long]\nrw=randread\nsize=1m\ntime_based\nruntime=60\n[never]\nstonewall\nrw=read\nsize=64k\n",
    );
    assert_eq!(s[0].samples.len(), 16);
    let short_end = s[0].samples.iter().map(|x| x.done_ns()).max().unwrap();
    assert!(
        s[1].samples
            .iter()
            .all(|x| x.issue_ns <= short_end + 1_000_000_000),
        "the long job ended with the short one"
    );
    assert!(s[2].samples.is_empty(), "the next segment never ran");
    // fio ends a job at its first I/O error unless continue_on_error covers it.
    let text = "[e]\nioengine=ftruncate\nrw=read\nsize=64k\n";
    let (out, _d) = run_analyzed(text);
    assert_eq!(out.streams[0].ios, 1);
    let why = out.streams[0].stopped.clone().unwrap();
    assert!(
        why.contains("first I/O error: read 4096 at offset 0 (EINVAL)"),
        "{why}"
    );
    let (s, _d) = run_jobs("[e]\nioengine=ftruncate\nrw=read\nsize=64k\ncontinue_on_error=read\n");
    assert_eq!(s[0].samples.len(), 16);
    // thinktime: a 10 ms pause after every 5 I/Os.
    let (s, _d) = run_jobs("[t]\nrw=read\nsize=80k\nthinktime=10ms\nthinktime_blocks=5\n");
    let s = &s[0].samples;
    assert_eq!(s.len(), 20);
    assert!(
        s[19].issue_ns - s[0].issue_ns >= 30_000_000,
        "three pauses between four runs of five"
    );
}

#[test]
fn a_flow_keeps_its_jobs_in_proportion() {
    // Both jobs have 1024 reads to do. While both run, `three` does three for each of
    // `one`'s; when `three` ends, `one` finishes alone instead of waiting for it.
    let (s, _d) =
        run_jobs("[global]\nrw=randread\nsize=4m\nflow_id=1\n[one]\nflow=1\n[three]\nflow=3\n");
    assert_eq!(s[0].samples.len(), 1024, "one ran to its end");
    assert_eq!(s[1].samples.len(), 1024, "three ran to its end");
    let three_ended = s[1].samples.iter().map(|x| x.issue_ns).max().unwrap();
    let before = s[0]
        .samples
        .iter()
        .filter(|x| x.issue_ns <= three_ended)
        .count() as f64;
    assert!(
        (2.5..3.5).contains(&(1024.0 / before)),
        "1:3 as their flows while both ran: {before} of one's reads against 1024"
    );
    // A flow's job behind a stonewall does not hold back the jobs before it.
    let (s, _d) = run_jobs(
        "[global]\nrw=randread\nsize=64k\nflow_id=1\n[a]\nflow=1\n[b]\nstonewall\nflow=1\n",
    );
    assert_eq!((s[0].samples.len(), s[1].samples.len()), (16, 16));
}

#[test]
fn io_priorities_per_io_and_per_job() {
    let text = "[p]\nioengine=libaio\niodepth=4\nrw=randread\nsize=1m\nprioclass=2\nprio=7\ncmdprio_percentage=50\ncmdprio_class=1\ncmdprio=0\n";
    let (out, _d) = run_analyzed(text);
    let by = out.streams[0].prio_ios.clone().expect("I/Os by priority");
    let (plain, rt) = (by["0"], by[&(1u64 << 13).to_string()]);
    assert_eq!(plain + rt, 256);
    assert!(
        (96..160).contains(&rt),
        "about half with the RT class: {rt}"
    );
    assert!(
        out.streams[0].stopped.is_none(),
        "the kernel took the job's priority"
    );
    let e = Job
        .plan(&params(&[("groups", "[p]\ncmdprio_percentage=10\n")]))
        .unwrap_err();
    assert!(e.to_string().contains("libaio or io_uring"), "{e}");
}

#[test]
fn zone_modes_as_fio_emulates_them() {
    // strided: 64 KiB done in each zone, then 192 KiB skipped.
    let (s, _d) =
        run_jobs("[s]\nrw=read\nbs=16k\nsize=1m\nzonemode=strided\nzonesize=64k\nzoneskip=192k\n");
    let offs: Vec<u64> = s[0].samples.iter().map(|x| x.offset).collect();
    assert_eq!(&offs[..6], &[0, 16384, 32768, 49152, 262144, 278528]);
    assert_eq!(offs.len(), 16, "four zones of 64 KiB in 1 MiB");
    // zbd: a sequential writer fills zone after zone at their write pointers, then ends.
    let (s, _d) = run_jobs("[w]\nrw=write\nbs=16k\nsize=1m\nzonemode=zbd\nzonesize=256k\n");
    let offs: Vec<u64> = s[0].samples.iter().map(|x| x.offset).collect();
    assert_eq!(offs, (0..64).map(|k| k * 16384).collect::<Vec<_>>());
    // A time-based random writer keeps at most 2 zones open and resets full ones (trims).
    let (s, _d) = run_jobs(
        "[r]\nrw=randwrite\nbs=16k\nsize=1m\nzonemode=zbd\nzonesize=256k\nmax_open_zones=2\ntime_based\nruntime=200ms\n",
    );
    let s = &s[0].samples;
    let trims = s.iter().filter(|x| x.op == Op::Trim).count();
    assert!(
        trims > 0 && s.iter().all(|x| x.errno == 0),
        "{trims} resets"
    );
    for x in s.iter().filter(|x| x.op == Op::Trim) {
        assert_eq!(
            (x.offset % (256 << 10), x.bytes),
            (0, 256 << 10),
            "a whole zone"
        );
    }
    // Reads stay below the write pointers: none on fresh zones (as fio on emulated zones).
    let (s, _d) = run_jobs("[rd]\nrw=read\nbs=16k\nsize=1m\nzonemode=zbd\nzonesize=256k\n");
    assert!(s[0].samples.is_empty());
}

#[test]
fn steady_state_and_latency_targets_end_a_job() {
    // A steady read: well within 90% of its mean per 100 ms over a second, long before 30 s.
    let text = "[s]\nrw=read\nsize=1m\ntime_based\nruntime=30s\nss=iops:90%\nss_dur=1s\nss_ramp=0\nsteadystate_check_interval=100ms\n";
    let (out, _d) = run_analyzed(text);
    let ss = out.streams[0].steadystate.clone().expect("steady state");
    assert!(ss.attained, "{ss:?}");
    let at = ss.at_s.unwrap();
    assert!((1.0..20.0).contains(&at), "after a full ss_dur: {at}");
    assert!(out.streams[0].runtime_s < 25.0);
    // A target any depth meets: the search doubles up to iodepth, runs a window there, ends.
    let text = "[l]\nioengine=libaio\niodepth=8\nrw=randread\nsize=1m\ntime_based\nruntime=30s\nlatency_target=2s\nlatency_window=50ms\n";
    let (out, _d) = run_analyzed(text);
    let l = out.streams[0].latency_target.clone().expect("searched");
    assert_eq!((l.qd, l.met), (8, true));
    assert!(out.streams[0].runtime_s < 25.0);
    // One no I/O meets: the job ends, saying so.
    let text = "[n]\nrw=randread\nsize=1m\ntime_based\nruntime=30s\nlatency_target=1ns\nlatency_window=50ms\n";
    let (out, _d) = run_analyzed(text);
    assert!(!out.streams[0].latency_target.clone().unwrap().met);
    let why = out.streams[0].stopped.clone().unwrap();
    assert!(why.contains("latency target"), "{why}");
}

#[test]
fn under_a_cut_a_shared_file_is_read_back_by_the_first_job_that_writes_it() {
    let text = "[global]\nfilename=shared\nsize=1m\n[reader]\nrw=randread\n[writer]\nrw=randwrite\n[other]\nrw=write\n";
    let plan = Job
        .plan(&params(&[("groups", text), ("powercut", "1s")]))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let place = crate::engine::Placement {
        path: dir.path().to_path_buf(),
        offset: 0,
        len: 1 << 20,
    };
    let written: Vec<Vec<crate::engine::WrittenFile>> = plan
        .streams
        .iter()
        .map(|s| (s.source.as_ref().unwrap().written.as_ref().unwrap())(&place).unwrap())
        .collect();
    assert!(
        written[0].is_empty(),
        "the reader lays it out, reads nothing back"
    );
    assert_eq!(written[1].len(), 1);
    let f = &written[1][0];
    assert_eq!(f.path, dir.path().join("shared"));
    assert!(f.shared && !f.by_samples, "{f:?}");
    assert!(written[2].is_empty(), "read back once");
    // Without a cut nothing is sealed or described.
    let plain = Job.plan(&params(&[("groups", text)])).unwrap();
    assert!(plain.streams[1].source.as_ref().unwrap().written.is_none());
}

mod vocab;
