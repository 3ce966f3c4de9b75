//! Tests of the disk that reorders its queue: the nearest command first, aging, the buffer's
//! destages merged, flushes, completions reported only once known, and fifo as the control.

use super::*;
use crate::emu::closed_loop::{hammer, Hammer};

const MIB: u64 = 1 << 20;

fn disk(rpo: bool, age_ms: f64) -> QueuedDisk {
    let p = HddParams::default();
    let q = QueueParams {
        rpo,
        age_limit: age_ms * 1e-3,
    };
    QueuedDisk::new(&p, &q).unwrap()
}

fn req(kind: ReqKind, offset: u64, len: u64) -> Request {
    Request { kind, offset, len }
}

/// Submits every request at `t`, then advances until each is reported: (id, done) in report
/// order.
fn run_all(d: &mut QueuedDisk, t: u64, reqs: &[Request]) -> Vec<(RequestId, u64)> {
    let mut got = Vec::new();
    for (i, r) in reqs.iter().enumerate() {
        if let Some(resp) = d.submit(t, i as u64, *r) {
            got.push((i as u64, resp.done_ns));
        }
    }
    let mut now = t;
    while got.len() < reqs.len() {
        d.advance(now, &mut |id, r| got.push((id, r.done_ns)));
        match d.next_event_ns() {
            Some(n) => now = n.max(now),
            None => break,
        }
    }
    assert_eq!(got.len(), reqs.len(), "every request reported: {got:?}");
    got
}

#[test]
fn the_nearest_read_goes_first_whatever_came_first() {
    // The head is at 0 after a first read; a far read arrives before a near one.
    let mut d = disk(true, 5_000.0);
    let cap = d.capacity();
    let got = run_all(
        &mut d,
        0,
        &[
            req(ReqKind::Read, 0, 4096),
            req(ReqKind::Read, cap - MIB, 4096),
            req(ReqKind::Read, 64 * MIB, 4096),
        ],
    );
    let done = |id| got.iter().find(|g| g.0 == id).unwrap().1;
    assert!(
        done(2) < done(1),
        "near read served before the far one: {got:?}"
    );
    // In arrival order the far one goes first.
    let mut f = disk(false, 5_000.0);
    let got = run_all(
        &mut f,
        0,
        &[
            req(ReqKind::Read, 0, 4096),
            req(ReqKind::Read, cap - MIB, 4096),
            req(ReqKind::Read, 64 * MIB, 4096),
        ],
    );
    let done = |id| got.iter().find(|g| g.0 == id).unwrap().1;
    assert!(done(1) < done(2), "fifo: {got:?}");
}

#[test]
fn a_read_is_reported_only_once_the_head_starts_it() {
    let mut d = disk(true, 5_000.0);
    // The head is free: the read starts at once, so its completion is known at once.
    let first = d
        .submit(0, 1, req(ReqKind::Read, 0, 4096))
        .expect("known at once");
    let seen = [(1, first.done_ns)];
    // A second read arriving while the head is busy is not known until the first ends.
    assert!(d
        .submit(10, 2, req(ReqKind::Read, 512 * MIB, 4096))
        .is_none());
    let mut later = Vec::new();
    d.advance(10, &mut |id, _| later.push(id));
    assert!(later.is_empty());
    let next = d.next_event_ns().expect("the model owes a completion");
    assert_eq!(next, seen[0].1, "asked again when the first read ends");
    d.advance(next, &mut |id, _| later.push(id));
    assert_eq!(later, [2]);
}

#[test]
fn aging_bounds_how_long_a_far_read_waits() {
    // Writers keep the head busy near the middle; one reader at the edge. Without aging the
    // edge read would wait for every nearer destage.
    for age in [60.0, 100.0, 200.0] {
        let mut d = disk(true, age);
        let cap = d.capacity();
        let mut t = 0;
        let mut worst = 0u64;
        let mut rng = crate::engine::rng::SplitMix64::new(9);
        for round in 0..200u64 {
            // Six writes in the middle, then a read at the far edge.
            let mut reqs: Vec<Request> = (0..6)
                .map(|_| req(ReqKind::Write, cap / 2 + rng.below(256) * MIB, MIB))
                .collect();
            reqs.push(req(ReqKind::Read, cap - MIB - rng.below(64) * MIB, MIB));
            let base = round * 1000;
            let mut got = Vec::new();
            for (i, r) in reqs.iter().enumerate() {
                if let Some(x) = d.submit(t, base + i as u64, *r) {
                    got.push((base + i as u64, x.done_ns));
                }
            }
            let mut now = t;
            while !got.iter().any(|g| g.0 == base + 6) {
                d.advance(now, &mut |id, r| got.push((id, r.done_ns)));
                now = d.next_event_ns().map_or(now, |n| n.max(now));
            }
            let read_done = got.iter().find(|g| g.0 == base + 6).unwrap().1;
            worst = worst.max(read_done - t);
            t = read_done;
        }
        let age_ns = (age * 1e6) as u64;
        // A read waits at most the age limit plus the destage in progress and its own access.
        assert!(
            worst <= age_ns + 120_000_000,
            "age {age} ms: worst {worst} ns"
        );
        assert!(d.st.aged > 0, "aging decided some picks");
    }
}

#[test]
fn contiguous_buffered_writes_destage_as_one_run() {
    let mut d = disk(true, 500.0);
    // Two halves of a 1 MiB write, the second half arriving first.
    let got = run_all(
        &mut d,
        0,
        &[
            req(ReqKind::Write, 100 * MIB + 512 * 1024, 512 * 1024),
            req(ReqKind::Write, 100 * MIB, 512 * 1024),
        ],
    );
    assert_eq!(got.len(), 2, "acknowledged from the buffer");
    let b = d.background(0);
    assert!(b.pending);
    let _ = d.background(u64::MAX / 2);
    assert_eq!(d.st.destages, 1, "one media write for both halves");
    assert_eq!(d.st.disk.destages_merged, 1);
}

#[test]
fn a_flush_completes_once_every_buffered_write_is_on_the_media() {
    let mut d = disk(true, 500.0);
    let mut t = 0;
    for i in 0..4u64 {
        let r = d.submit(t, i, req(ReqKind::Write, i * 1000 * MIB, MIB));
        assert!(r.is_some(), "buffered at once");
        t += 1000;
    }
    let got = run_all(&mut d, t, &[req(ReqKind::Flush, 0, 0)]);
    // Four 1 MiB destages across the disk: tens of milliseconds at least.
    assert!(got[0].1 - t > 4 * 5_000_000, "{got:?}");
    let b = d.background(got[0].1);
    assert!(!b.pending, "nothing left in the buffer after the flush");
}

#[test]
fn a_full_buffer_holds_writes_back_until_a_destage_makes_room() {
    let p = HddParams {
        write_buffer: 2 * MIB,
        ..HddParams::default()
    };
    let q = QueueParams {
        rpo: true,
        age_limit: 0.5,
    };
    let mut d = QueuedDisk::new(&p, &q).unwrap();
    let reqs: Vec<Request> = (0..4)
        .map(|i| req(ReqKind::Write, i * 3000 * MIB, MIB))
        .collect();
    let got = run_all(&mut d, 0, &reqs);
    let done = |id| got.iter().find(|g| g.0 == id).unwrap().1;
    // Two fit: acknowledged once their data crossed the interface (~2 ms each).
    let host = d.host_ns(MIB);
    assert_eq!((done(0), done(1)), (host, 2 * host), "{got:?}");
    // The others wait for destages: the fourth for one 3000 MiB away, a seek at least.
    assert!(done(2) > done(1) + 1_000_000, "{got:?}");
    assert!(done(3) > done(2) + 5_000_000, "{got:?}");
    assert_eq!(d.st.disk.write_waits, 2);
}

#[test]
fn seed_000s_hammer_starves_edge_reads_only_up_to_the_age_limit() {
    let h = Hammer {
        samples: 256,
        ..Hammer::seed_000()
    };
    let fifo = hammer(&mut disk(false, 700.0), &h);
    let rpo = hammer(&mut disk(true, 700.0), &h);
    // Reordering spreads the reads: the worst far above the mean, bounded by the limit.
    assert!(rpo.read_worst_ms > 1.5 * rpo.read_mean_ms, "{rpo:?}");
    assert!(rpo.read_worst_ms < 700.0 + 120.0, "{rpo:?}");
    assert!(fifo.read_worst_ms < 1.5 * fifo.read_mean_ms, "{fifo:?}");
}

#[test]
fn writes_waiting_for_room_age_like_reads() {
    // Two readers read at random in the first 512 MiB, each issuing its next read the moment
    // its last completes, so one of them always has a read queued near the head; the buffered
    // writes are at the far end and the buffer is full. Without aging the waiting write, the
    // head would never leave the readers: it gets in within the age limit.
    let p = HddParams {
        write_buffer: MIB,
        ..HddParams::default()
    };
    let q = QueueParams {
        rpo: true,
        age_limit: 0.2,
    };
    let mut d = QueuedDisk::new(&p, &q).unwrap();
    let cap = d.capacity();
    let mut rng = crate::engine::rng::SplitMix64::new(5);
    // Per reader: when it issues next (None while its read is in the drive).
    let mut next = [Some(0u64), Some(0u64)];
    let (mut id, mut write_done) = (0u64, None);
    let mut t = 0;
    while write_done.is_none() && t < 5_000_000_000 {
        let issue = (0..2)
            .filter_map(|r| next[r].map(|x| (r, x)))
            .min_by_key(|x| x.1);
        t = match (issue, d.next_event_ns()) {
            (Some((_, x)), Some(e)) if e < x => e,
            (None, Some(e)) => e,
            (None, None) => panic!("nothing owed and every reader waiting"),
            (Some((r, x)), _) => {
                let offset = rng.below(64) * 8 * MIB + r as u64 * 4 * MIB;
                next[r] = None;
                // ids: reader in the low bit.
                if let Some(done) =
                    d.submit(x, (id << 1) | r as u64, req(ReqKind::Read, offset, 4096))
                {
                    next[r] = Some(done.done_ns);
                }
                id += 1;
                if id == 8 {
                    // The head is busy with reads: one far write fills the buffer, the next
                    // waits for room.
                    assert!(d
                        .submit(x, 1 << 40, req(ReqKind::Write, cap - 4 * MIB, MIB))
                        .is_some());
                    assert!(d
                        .submit(x, (1 << 40) + 2, req(ReqKind::Write, cap - 8 * MIB, MIB))
                        .is_none());
                }
                x
            }
        };
        d.advance(t, &mut |i, x| {
            if i == (1 << 40) + 2 {
                write_done = Some(x.done_ns);
            } else if i < 1 << 40 {
                next[(i & 1) as usize] = Some(x.done_ns);
            }
        });
    }
    let done = write_done.expect("the waiting write got in");
    assert!(done < 300_000_000, "waited {done} ns");
}

/// The ids `d` names unsettled at `t`, sorted, and those it executes.
fn unsettled_at(d: &mut QueuedDisk, t: u64) -> (Vec<u64>, Vec<u64>) {
    let u = d.unsettled(t);
    let mut all: Vec<u64> = u.iter().map(|u| u.write).collect();
    let mut busy: Vec<u64> = u.iter().filter(|u| u.on_media).map(|u| u.write).collect();
    all.sort_unstable();
    busy.sort_unstable();
    (all, busy)
}

#[test]
fn buffered_writes_stay_unsettled_until_their_destage_ends_whatever_its_order() {
    for ignored in [false, true] {
        let mut d = disk(true, 5_000.0);
        d.flush_ignored = ignored;
        let cap = d.capacity();
        // Far from the parked head: no destage ends before the last acknowledgement.
        let writes: Vec<Request> = [cap / 3, cap / 2, cap / 4, cap - MIB]
            .iter()
            .map(|&o| req(ReqKind::Write, o, 64 * 1024))
            .collect();
        let acked = run_all(&mut d, 0, &writes);
        let last_ack = acked.iter().map(|a| a.1).max().unwrap();
        let (all, busy) = unsettled_at(&mut d, last_ack);
        assert_eq!(
            all,
            [0, 1, 2, 3],
            "acknowledged from the buffer, not on the media"
        );
        assert_eq!(busy.len(), 1, "one destage at a time: {busy:?}");
        let flush = d.submit(last_ack, 9, req(ReqKind::Flush, 0, 0));
        let f = match flush {
            Some(r) => r.done_ns,
            None => run_all_from(&mut d, last_ack, 9),
        };
        let (left, _) = unsettled_at(&mut d, f);
        if ignored {
            assert!(!left.is_empty(), "the lie: flushed at {f}, not durable");
        } else {
            assert!(
                left.is_empty(),
                "an honoured flush ends with the buffer on the media"
            );
        }
        // Left alone, the drive destages everything.
        let mut t = f;
        loop {
            let b = d.background(t);
            if !b.pending {
                break;
            }
            t = b.idle_at_ns.max(t + 1);
        }
        assert!(unsettled_at(&mut d, t).0.is_empty());
    }
}

/// Advances `d` from `t` until request `id` is reported; its completion.
fn run_all_from(d: &mut QueuedDisk, t: u64, id: RequestId) -> u64 {
    let mut now = t;
    loop {
        let mut got = None;
        d.advance(now, &mut |i, r| {
            if i == id {
                got = Some(r.done_ns);
            }
        });
        if let Some(g) = got {
            return g;
        }
        now = d.next_event_ns().expect("owes it").max(now);
    }
}
