//! Tests of the hard-disk model: seeks, rotation, zones, the drive cache, command queueing.

use super::*;
use crate::emu::mechanics::CYLINDERS;
use crate::engine::rng::SplitMix64;

fn req(kind: ReqKind, offset: u64, len: u64) -> Request {
    Request { kind, offset, len }
}

fn curve() -> SeekCurve {
    let p = HddParams::default();
    SeekCurve::fit(p.track_to_track, p.avg_seek, p.full_stroke).unwrap()
}

#[test]
fn seek_is_monotone_in_distance_and_bounded_by_full_stroke() {
    let c = curve();
    let mut last = 0.0;
    for i in 1..=10_000 {
        let t = c.time(i as f64 / 10_000.0);
        assert!(t >= last, "seek shrinks at {i}");
        assert!(t <= 0.017 + 1e-12);
        last = t;
    }
    assert!((c.time(1.0) - 0.017).abs() < 1e-9);
    assert!((c.time(1.0 / CYLINDERS) - 0.0008).abs() < 1e-9);
}

#[test]
fn seek_curve_mean_matches_average_seek_and_numeric_integral() {
    let c = curve();
    assert!((c.mean() - 0.0085).abs() < 1e-9, "mean {}", c.mean());
    assert!(
        (c.mean_over(1.0) - c.mean()).abs() < 2e-6,
        "{} vs {}",
        c.mean_over(1.0),
        c.mean()
    );
    assert!(c.knee() > 0.0 && c.knee() < 1.0);
}

#[test]
fn impossible_average_seek_is_rejected() {
    let e = SeekCurve::fit(0.0008, 0.0161, 0.017).unwrap_err();
    assert_eq!(e.param, "avg_seek");
    assert!(SeekCurve::fit(0.0008, 0.009, 0.0085).is_err());
}

#[test]
fn rotational_wait_is_within_one_revolution() {
    let m = Mechanics::new(&HddParams::default(), 64 << 30).unwrap();
    let mut r = SplitMix64::new(3);
    for _ in 0..10_000 {
        let w = m.rotation_ns(r.below(1 << 40) as f64, r.below(64 << 30));
        assert!((0.0..m.rev_ns()).contains(&w));
    }
}

#[test]
fn inner_zones_are_slower_than_outer() {
    let p = HddParams::default();
    let m = Mechanics::new(&p, p.capacity).unwrap();
    let rates: Vec<f64> = (0..16).map(|i| m.rate_at(i * (p.capacity / 16))).collect();
    assert!(rates.windows(2).all(|w| w[1] < w[0]));
    assert!((rates[0] * 1e9 - 250e6).abs() < 1.0);
    assert!((rates[15] * 1e9 - 120e6).abs() < 1.0);
    let e = expect(&p, 1 << 20).unwrap();
    assert!(e.seq_read_inner_mbs < e.seq_read_outer_mbs);
}

#[test]
fn requests_queue_behind_a_busy_disk() {
    let mut d = Hdd::new(&HddParams::default()).unwrap();
    let a = d.service(0, req(ReqKind::Read, 40 << 30, 4096));
    let b = d.service(10, req(ReqKind::Read, 1 << 30, 4096));
    assert!(b.done_ns > a.done_ns + 800_000);
}

/// Mean QD1 random 4 KiB read time of the model itself, requests spaced by up to `gap` ns
/// so none queues. (Read-ahead runs during the gaps; on a small disk long gaps would let it
/// cover a noticeable part of the disk, which the expectation, made for back-to-back
/// requests, leaves out.)
fn monte_carlo_random_read_ms(p: &HddParams, n: u64, gap: u64) -> f64 {
    let mut d = Hdd::new(p).unwrap();
    let mut r = SplitMix64::new(7);
    let (mut now, mut sum) = (0u64, 0u64);
    let blocks = p.capacity / 4096;
    for _ in 0..n {
        let done = d
            .service(now, req(ReqKind::Read, r.below(blocks) * 4096, 4096))
            .done_ns;
        sum += done - now;
        now = done + 1 + r.below(gap);
    }
    sum as f64 / n as f64 * 1e-6
}

#[test]
fn a_descending_walk_reads_from_what_passed_under_the_head() {
    // 4 KiB reads walking down 64 blocks, as a directory walk does when the blocks lie in
    // reverse order: after the first miss each block lies just below the last, which
    // passed under the head while it waited for that one (look-behind), so most reads
    // come from the buffer instead of waiting nearly a revolution each.
    let p = HddParams::default();
    let mut d = Hdd::new(&p).unwrap();
    let top = 10u64 << 30;
    let mut now = 0;
    for i in 0..64u64 {
        now = d
            .service(now, req(ReqKind::Read, top - i * 4096, 4096))
            .done_ns
            + 1;
    }
    let hits = d.stats()["read_cache_hits"].as_u64().unwrap();
    assert!(hits >= 32, "{hits} of 64 reads from the buffer");
    let rev_ns = 60e9 / p.rpm;
    assert!((now as f64) < 32.0 * rev_ns, "{now} ns for 64 reads");
}

#[test]
fn random_read_expectation_matches_monte_carlo() {
    let p = HddParams::default();
    let e = expect(&p, 1 << 20).unwrap();
    let mc = monte_carlo_random_read_ms(&p, 100_000, 10_000_000);
    assert!(
        (mc / e.random_read_ms - 1.0).abs() < 0.01,
        "model {mc} ms, expected {} ms",
        e.random_read_ms
    );
    let small = HddParams {
        capacity: 1 << 30,
        ..HddParams::default()
    };
    let e = expect(&small, 1 << 20).unwrap();
    let mc = monte_carlo_random_read_ms(&small, 50_000, 200_000);
    assert!(
        (mc / e.random_read_ms - 1.0).abs() < 0.015,
        "model {mc} ms, expected {} ms",
        e.random_read_ms
    );
}

/// QD1 sequential throughput (MB/s) of `n` back-to-back transfers from `start` (writes
/// end with a flush, so data still in the write-back buffer counts).
fn sequential_mbs(d: &mut dyn DeviceModel, kind: ReqKind, start: u64, io: u64, n: u64) -> f64 {
    let mut now = d.service(0, req(kind, start, io)).done_ns;
    let t0 = now;
    for i in 1..=n {
        now = d.service(now, req(kind, start + i * io, io)).done_ns;
    }
    if kind == ReqKind::Write {
        now = d.service(now, req(ReqKind::Flush, 0, 0)).done_ns;
    }
    (n * io) as f64 / (now - t0) as f64 * 1e3
}

#[test]
fn sequential_expectations_match_the_model() {
    for write_back in [true, false] {
        let p = HddParams {
            write_back,
            ..HddParams::default()
        };
        let e = expect(&p, 1 << 20).unwrap();
        let inner = p.capacity - p.capacity / 100;
        let r_out = sequential_mbs(&mut Hdd::new(&p).unwrap(), ReqKind::Read, 0, 1 << 20, 200);
        let r_in = sequential_mbs(
            &mut Hdd::new(&p).unwrap(),
            ReqKind::Read,
            inner,
            1 << 20,
            200,
        );
        let w = sequential_mbs(&mut Hdd::new(&p).unwrap(), ReqKind::Write, 0, 1 << 20, 400);
        assert!(
            (r_out / e.seq_read_outer_mbs - 1.0).abs() < 0.01,
            "{r_out} vs {e:?}"
        );
        assert!(
            (r_in / e.seq_read_inner_mbs - 1.0).abs() < 0.01,
            "{r_in} vs {e:?}"
        );
        assert!(
            (w / e.seq_write_mbs - 1.0).abs() < 0.02,
            "wb {write_back}: {w} vs {e:?}"
        );
    }
}

/// QD1 sequential writes of `io` bytes, each split in two pieces that reach the model
/// swapped, the second `skew` ns after the first (the loop device splits a 1 MiB request at
/// its segment limit and the server's threads race); ends with a flush. MB/s.
fn swapped_halves_mbs(p: &HddParams, io: u64, n: u64, skew: u64) -> (f64, Json) {
    let mut d = Hdd::new(p).unwrap();
    let half = io / 2;
    let mut now = 0;
    for i in 0..n {
        let o = i * io;
        let hi = d
            .service(now, req(ReqKind::Write, o + half, io - half))
            .done_ns;
        let lo = d.service(now + skew, req(ReqKind::Write, o, half)).done_ns;
        now = hi.max(lo);
    }
    now = d.service(now, req(ReqKind::Flush, 0, 0)).done_ns;
    ((n * io) as f64 / now as f64 * 1e3, d.stats())
}

#[test]
fn write_back_destages_swapped_pieces_in_lba_order() {
    let p = HddParams::default();
    let e = expect(&p, 1 << 20).unwrap();
    let (mbs, st) = swapped_halves_mbs(&p, 1 << 20, 400, 300_000);
    assert!(
        (mbs / e.seq_write_mbs - 1.0).abs() < 0.02,
        "{mbs} MB/s vs {e:?}, {st}"
    );
    assert!(st["destages_merged"].as_u64().unwrap() > 350, "{st}");
}

#[test]
fn a_destage_already_started_is_not_replanned() {
    // Upper half first on an idle disk: its destage starts as soon as it is in the
    // buffer, before the lower half arrives, so the lower half costs a seek back.
    let p = HddParams::default();
    let mut d = Hdd::new(&p).unwrap();
    let o = 10 << 30;
    let hi = d.service(0, req(ReqKind::Write, o + (512 << 10), 512 << 10));
    let lo = d.service(hi.done_ns + 1, req(ReqKind::Write, o, 512 << 10));
    assert!(lo.done_ns > hi.done_ns);
    assert_eq!(d.stats()["destages_merged"], 0);
    // Without write-back nothing is buffered, so nothing can be replanned either.
    let (mbs, st) = swapped_halves_mbs(
        &HddParams {
            write_back: false,
            ..p
        },
        1 << 20,
        50,
        300_000,
    );
    assert_eq!(st["destages_merged"], 0);
    assert!(mbs < 150.0, "{mbs}");
}

#[test]
fn a_read_between_pieces_stops_the_replanning() {
    let p = HddParams::default();
    let mut d = Hdd::new(&p).unwrap();
    // Fill the buffer so destages are planned far ahead.
    let mut now = 0;
    for i in 0..8u64 {
        now = d
            .service(now, req(ReqKind::Write, i << 20, 1 << 20))
            .done_ns;
    }
    let o = 8u64 << 20;
    d.service(now, req(ReqKind::Write, o + (512 << 10), 512 << 10));
    d.service(now + 10, req(ReqKind::Read, 40 << 30, 4096));
    d.service(now + 20, req(ReqKind::Write, o, 512 << 10));
    assert_eq!(d.stats()["destages_merged"], 0);
}

#[test]
fn random_write_expectation_matches_the_model() {
    for write_back in [true, false] {
        let p = HddParams {
            write_back,
            ..HddParams::default()
        };
        let e = expect(&p, 1 << 20).unwrap();
        let mut d = Hdd::new(&p).unwrap();
        let mut r = SplitMix64::new(11);
        let blocks = p.capacity / 4096;
        let mut now = 0;
        let n = 20_000;
        for _ in 0..1000 {
            now = d
                .service(now, req(ReqKind::Write, r.below(blocks) * 4096, 4096))
                .done_ns;
        }
        let t0 = now;
        for _ in 0..n {
            now = d
                .service(now, req(ReqKind::Write, r.below(blocks) * 4096, 4096))
                .done_ns;
        }
        let iops = n as f64 / (now - t0) as f64 * 1e9;
        assert!(
            (iops / e.random_write_iops - 1.0).abs() < 0.02,
            "wb {write_back}: {iops} vs {e:?}"
        );
    }
}

#[test]
fn requests_past_the_end_do_not_panic() {
    let p = HddParams::default();
    let mut hdd = Hdd::new(&p).unwrap();
    let mut smr = crate::emu::smr::new(&p, &Default::default()).unwrap();
    for d in [&mut hdd as &mut dyn DeviceModel, &mut smr] {
        for kind in [ReqKind::Read, ReqKind::Write] {
            let r = d.service(0, req(kind, p.capacity - 4096, 1 << 20));
            assert!(r.done_ns > 0);
            d.service(r.done_ns, req(kind, p.capacity + (1 << 30), 4096));
        }
    }
}

#[test]
fn write_back_is_background_work_until_destaged() {
    let mut d = Hdd::new(&HddParams::default()).unwrap();
    let ack = d.service(0, req(ReqKind::Write, 1 << 30, 64 << 10)).done_ns;
    let b = d.background(ack);
    assert!(b.pending && b.idle_at_ns > ack, "{b:?}");
    let later = d.background(b.idle_at_ns);
    assert_eq!(
        later,
        Background {
            pending: false,
            idle_at_ns: b.idle_at_ns,
            host_done_ns: ack,
            worked_ns: 0,
        }
    );
    let f = d
        .service(b.idle_at_ns + 1, req(ReqKind::Flush, 0, 0))
        .done_ns;
    assert!(!d.background(f).pending);
}

#[test]
fn flush_drains_the_write_back_buffer() {
    let mut d = Hdd::new(&HddParams::default()).unwrap();
    let w = d.service(0, req(ReqKind::Write, 10 << 30, 4096)).done_ns;
    assert!(w < 200_000, "write-back acknowledges from the buffer: {w}");
    let f = d.service(w, req(ReqKind::Flush, 0, 0)).done_ns;
    assert!(f > 1_000_000, "flush waits for the destage: {f}");
    let f2 = d.service(f, req(ReqKind::Flush, 0, 0)).done_ns;
    assert!(f2 - f < 200_000);
}

#[test]
fn read_ahead_serves_the_next_sequential_read() {
    let mut d = Hdd::new(&HddParams::default()).unwrap();
    let a = d.service(0, req(ReqKind::Read, 5 << 30, 65536)).done_ns;
    let b = d
        .service(a + 5_000_000, req(ReqKind::Read, (5 << 30) + 65536, 65536))
        .done_ns;
    assert!(b - (a + 5_000_000) < 300_000);
    assert!(d.stats()["read_cache_hits"] == 1);
}

/// Submits `r` as request `id` at `t`; its completion.
fn done(d: &mut Hdd, t: u64, id: u64, r: Request) -> u64 {
    d.submit(t, id, r).expect("known at once").done_ns
}

/// The ids of the writes `d` has not made durable at `t`, and those it is executing.
fn unsettled_at(d: &mut Hdd, t: u64) -> (Vec<u64>, Vec<u64>) {
    let u = d.unsettled(t);
    let all = u.iter().map(|u| u.write).collect();
    let busy = u.iter().filter(|u| u.on_media).map(|u| u.write).collect();
    (all, busy)
}

#[test]
fn acknowledged_writes_stay_unsettled_in_the_write_back_buffer_until_destaged() {
    let mut d = Hdd::new(&HddParams::default()).unwrap();
    let mut acked = 0;
    for i in 0..4u64 {
        // Far apart: each destage seeks.
        acked = done(&mut d, 0, i, req(ReqKind::Write, i * (8 << 30), 64 << 10));
    }
    // All four acknowledged from the buffer, long before the media holds them.
    assert!(acked < 2_000_000, "{acked}");
    let (all, busy) = unsettled_at(&mut d, acked);
    assert_eq!(all, [0, 1, 2, 3]);
    assert_eq!(busy, [0], "the first is being destaged");
    let idle = d.background(acked).idle_at_ns;
    assert_eq!(unsettled_at(&mut d, idle - 1).0, [3]);
    assert!(unsettled_at(&mut d, idle).0.is_empty());
    // A read in between is never unsettled.
    done(&mut d, idle, 4, req(ReqKind::Read, 0, 4096));
    let t = done(&mut d, idle + 1, 5, req(ReqKind::Write, 1 << 30, 4096));
    assert_eq!(unsettled_at(&mut d, t).0, [5]);
}

#[test]
fn a_honoured_flush_completes_with_nothing_unsettled_and_an_ignored_one_at_once() {
    for ignored in [false, true] {
        let p = HddParams {
            flush_ignored: ignored,
            ..HddParams::default()
        };
        let mut d = Hdd::new(&p).unwrap();
        for i in 0..4u64 {
            done(&mut d, 0, i, req(ReqKind::Write, i * (8 << 30), 64 << 10));
        }
        let f = done(&mut d, 0, 4, req(ReqKind::Flush, 0, 0));
        let (all, _) = unsettled_at(&mut d, f);
        if ignored {
            assert!(f < 2_000_000, "acknowledged at once: {f}");
            assert_eq!(all, [0, 1, 2, 3], "the lie: flushed, not durable");
        } else {
            assert!(f > 20_000_000, "waits for four destages: {f}");
            assert!(all.is_empty(), "{all:?}");
        }
    }
}

#[test]
fn a_write_through_drive_has_only_the_writes_it_executes_unsettled() {
    let p = HddParams {
        write_back: false,
        ..HddParams::default()
    };
    let mut d = Hdd::new(&p).unwrap();
    let first = done(&mut d, 0, 0, req(ReqKind::Write, 0, 1 << 20));
    let second = done(&mut d, 0, 1, req(ReqKind::Write, 8 << 30, 1 << 20));
    assert!(second > first);
    // Both arrived; the first is on the media, the second waits for it.
    assert_eq!(unsettled_at(&mut d, 1), (vec![0, 1], vec![0]));
    assert_eq!(unsettled_at(&mut d, first), (vec![1], vec![1]));
    assert!(unsettled_at(&mut d, second).0.is_empty());
}

#[test]
fn merged_destages_carry_both_writes_to_the_media() {
    let mut d = Hdd::new(&HddParams::default()).unwrap();
    // A destage keeps the mechanism busy, then two halves arrive in reverse LBA order.
    done(&mut d, 0, 0, req(ReqKind::Write, 8 << 30, 1 << 20));
    done(
        &mut d,
        10,
        1,
        req(ReqKind::Write, (1 << 30) + (64 << 10), 64 << 10),
    );
    let t = done(&mut d, 20, 2, req(ReqKind::Write, 1 << 30, 64 << 10));
    assert_eq!(d.stats()["destages_merged"], 1);
    let ends: Vec<u64> = d.media.iter().map(|m| m.end).collect();
    assert_eq!(ends[1], ends[2], "one run: {ends:?}");
    assert_eq!(unsettled_at(&mut d, t).0, [0, 1, 2]);
}

/// How many back-to-back 4 KiB writes at scattered offsets the buffer takes before a write
/// waits for a destage, on both queue orders.
fn writes_before_a_wait(p: &HddParams) -> Vec<usize> {
    let mut out = Vec::new();
    for rpo in [false, true] {
        let q = crate::emu::queued::QueueParams {
            rpo,
            age_limit: 0.5,
        };
        let mut d: Box<dyn DeviceModel> = if rpo {
            Box::new(crate::emu::queued::QueuedDisk::new(p, &q).unwrap())
        } else {
            Box::new(Hdd::new(p).unwrap())
        };
        let mut r = SplitMix64::new(3);
        let mut now = 0;
        let mut n = 0;
        loop {
            let o = r.below(p.capacity / 4096) * 4096;
            let done =
                crate::emu::model::service_alone(d.as_mut(), now, req(ReqKind::Write, o, 4096))
                    .done_ns;
            if done - now > 1_000_000 {
                break;
            }
            n += 1;
            now = done;
        }
        out.push(n);
    }
    out
}

#[test]
fn write_slots_bound_a_burst_of_small_writes() {
    let p = HddParams::default();
    assert_eq!(writes_before_a_wait(&p), vec![64, 64]);
    let more = HddParams {
        write_slots: 200,
        ..HddParams::default()
    };
    // A 4 KiB write is taken in 0.1 ms and a scattered destage lasts about 12 ms: a few of
    // the 200 are on the media before the buffer fills.
    for n in writes_before_a_wait(&more) {
        assert!((200..=206).contains(&n), "{n}");
    }
    // Bytes bound it when they run out first: 128 KiB hold 32 writes of 4 KiB.
    let bytes = HddParams {
        write_slots: 200,
        write_buffer: 128 << 10,
        ..HddParams::default()
    };
    assert_eq!(writes_before_a_wait(&bytes), vec![32, 32]);
}

#[test]
fn segments_set_how_many_scattered_reads_the_buffer_holds() {
    // Reads K places far apart, then the first again: a hit while K <= segments.
    let hits = |segments: u64, k: u64| {
        // Each segment holds more than the read and its read-ahead.
        let p = HddParams {
            segments,
            buffer: segments * (4 << 20),
            ..HddParams::default()
        };
        let mut d = Hdd::new(&p).unwrap();
        let mut now = 0;
        for i in 0..k {
            now = d
                .service(now, req(ReqKind::Read, i * (1 << 30), 4096))
                .done_ns
                + 50_000_000;
        }
        let before = d.stats()["read_cache_hits"].as_u64().unwrap();
        d.service(now, req(ReqKind::Read, 0, 4096));
        d.stats()["read_cache_hits"].as_u64().unwrap() > before
    };
    assert!(hits(16, 16) && !hits(16, 17));
    assert!(hits(4, 4) && !hits(4, 5));
    assert!(hits(40, 40), "40 of 40");
    assert!(!hits(40, 41), "41 of 40");
    let e = spec_error("hdd,segments=0");
    assert!(e.contains("segments"), "{e}");
}

fn spec_error(t: &str) -> String {
    crate::emu::ModelSpec::parse(t).unwrap_err().to_string()
}
