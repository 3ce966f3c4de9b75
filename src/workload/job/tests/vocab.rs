//! Tests of the options fio's test jobs use, run through the engine as a trial runs them:
//! create_only, max_latency with exitall_on_error, thinktime_iotime, rate_ignore_thinktime,
//! percentage_random, bs_is_seq_rand, offset_align, filename_format and the replay options.

use super::*;
use crate::engine::Op;

#[test]
fn create_only_lays_out_and_does_no_io_named_as_filename_format_says() {
    let (s, d) = run_jobs(
        "[c]\nrw=read\nsize=64k\nnrfiles=2\nfilename_format=data.$jobnum.$filenum\ncreate_only=1\n",
    );
    assert!(s[0].samples.is_empty(), "no I/O");
    for k in 0..2 {
        let f = d.path().join(format!("00/data.0.{k}"));
        assert_eq!(std::fs::metadata(&f).unwrap().len(), 32 << 10, "{f:?}");
    }
}

#[test]
fn max_latency_ends_the_job_and_exitall_on_error_every_job() {
    let (out, _d) = run_analyzed(
        "[slow]\nrw=write\nsize=1m\nbs=4k\nfsync=1\nmax_latency=1ns\nexitall_on_error=1\n\
         [other]\nrw=read\nsize=1m\ntime_based\nruntime=30\n",
    );
    let why = out.streams[0].stopped.clone().unwrap();
    assert!(
        why.contains("max_latency") && why.contains("ETIMEDOUT"),
        "{why}"
    );
    assert_eq!(out.streams[0].errors, 1);
    assert!(
        out.verdict.runtime_s < 20.0,
        "the other job ended with it: {}",
        out.verdict.runtime_s
    );
}

#[test]
fn thinktime_by_io_time_and_a_rate_that_does_not_catch_up() {
    // A 20 ms pause after every 10 ms of I/O: over 300 ms, up to 10 of them; at least 3
    // however late the host lets them end.
    let (s, _d) = run_jobs(
        "[t]\nrw=read\nsize=1m\nbs=4k\ntime_based\nruntime=300ms\nthinktime=20ms\nthinktime_blocks=1000000\nthinktime_iotime=10ms\n",
    );
    let gaps = s[0]
        .samples
        .windows(2)
        .filter(|w| w[1].issue_ns - w[0].done_ns() >= 15_000_000)
        .count();
    assert!(gaps >= 3, "{gaps} pauses");
    // 1000 IOPS with a 50 ms pause after every 10 I/Os: catching up, the I/O after a pause
    // was meant 1 ms after the one before it (and goes late); with rate_ignore_thinktime the
    // schedule starts again after the pause.
    let text = "[r]\nrw=read\nsize=1m\nbs=4k\nrate_iops=1000\nnumber_ios=20\nthinktime=50ms\nthinktime_blocks=10\n";
    let meant_after_pause = |s: &[crate::engine::Sample]| {
        (s[10].issue_ns - s[10].lag_ns) as i64 - s[9].done_ns() as i64
    };
    let (s, _d) = run_jobs(text);
    assert!(meant_after_pause(&s[0].samples) < 2_000_000);
    assert!(
        s[0].samples[10].lag_ns >= 40_000_000,
        "late after the pause"
    );
    let (s, _d) = run_jobs(&format!("{text}rate_ignore_thinktime=1\n"));
    assert!(meant_after_pause(&s[0].samples) >= 49_000_000);
}

#[test]
fn percentage_random_bs_is_seq_rand_and_offset_align() {
    // Half of a random job's I/Os go on from the last one.
    let (s, _d) = run_jobs("[p]\nrw=randread\nsize=4m\nbs=4k\npercentage_random=50\n");
    let s = &s[0].samples;
    let runs = s
        .windows(2)
        .filter(|w| w[1].offset == w[0].offset + 4096)
        .count();
    assert!(
        (runs as f64 / s.len() as f64) > 0.3,
        "{runs} of {} went on from the last",
        s.len()
    );
    // bs=SEQ,RAND: a random job takes the second size for every direction.
    let (s, _d) = run_jobs("[b]\nrw=randread\nsize=1m\nbs=4k,16k\nbs_is_seq_rand=1\n");
    assert!(s[0].samples.iter().all(|x| x.bytes == 16384));
    // offset=10% of 1000 KiB is 100 KiB, aligned up to 64 KiB.
    let (s, _d) = run_jobs("[o]\nrw=read\nsize=1000k\noffset=10%\noffset_align=64k\nio_size=64k\n");
    assert_eq!(s[0].samples[0].offset, 128 << 10);
}

#[test]
fn a_replay_keeps_its_times_scaled_or_skips_them_and_kinds() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("t.log");
    std::fs::write(
        &log,
        "fio version 3 iolog\n0 a add\n0 b add\n0 a read 0 4096\n40000 b write 4096 4096\n80000 a trim 0 4096\n80000 a read 8192 4096\n",
    )
    .unwrap();
    let job = |extra: &str| format!("[r]\nread_iolog={}\n{extra}", log.display());
    // When each request was meant to go (its issue less its lateness), from the first.
    let meant = |s: &[crate::engine::Sample]| {
        let mut t: Vec<u64> = s.iter().map(|x| x.issue_ns - x.lag_ns).collect();
        t.sort();
        t.iter()
            .map(|x| (x - t[0] + 500_000) / 1_000_000)
            .collect::<Vec<u64>>()
    };
    let (s, _d) = run_jobs(&job(""));
    // Within a millisecond: the clock is read again as the request is handed to the kernel.
    let near = |got: Vec<u64>, want: [u64; 4]| {
        assert!(
            got.iter().zip(want).all(|(g, w)| g.abs_diff(w) <= 1),
            "{got:?} against {want:?}"
        )
    };
    near(meant(&s[0].samples), [0, 40, 80, 80]);
    let (s, _d) = run_jobs(&job("replay_time_scale=400\n"));
    near(meant(&s[0].samples), [0, 10, 20, 20]);
    let (s, _d) = run_jobs(&job("replay_no_stall=1\nreplay_skip=trim\n"));
    assert_eq!(s[0].samples.len(), 3);
    assert!(s[0]
        .samples
        .iter()
        .all(|x| x.op != Op::Trim && x.lag_ns == 0));
    // Every I/O into one file, offsets aligned down to 8 KiB.
    let (s, d2) = run_jobs(&job(
        "replay_redirect=/dev/one\nreplay_align=8k\nreplay_no_stall=1\n",
    ));
    let mut offsets: Vec<u64> = s[0].samples.iter().map(|x| x.offset).collect();
    offsets.sort();
    assert_eq!(offsets, [0, 0, 0, 8192]);
    assert!(d2.path().join("00/dev_one").exists());
}

#[test]
fn trimwrite_writes_each_trimmed_block_as_long_as_its_trim() {
    // fio's t0023 `bs_no_rm`: trims of 8k, each followed by a write of the same 8k.
    let (s, _d) = run_jobs(
        "[t]\nioengine=null\nrw=randtrimwrite\nfilesize=64k\nbs=4k,4k,8k\nnorandommap=1\n",
    );
    let s = &s[0].samples;
    assert!(!s.is_empty());
    for w in s.chunks(2) {
        assert_eq!((w[0].op, w[1].op), (Op::Trim, Op::Write));
        assert_eq!(
            (w[0].offset, w[0].bytes, w[1].bytes),
            (w[1].offset, 8192, 8192)
        );
    }
}
