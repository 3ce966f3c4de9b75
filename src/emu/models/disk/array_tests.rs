//! Tests of the `array` model: striping, overlap over the disks, the link, and what a power
//! cut would take back of a write split over them.

use super::*;

fn array(drives: u64, link: f64) -> Array {
    let p = HddParams {
        capacity: 64 << 30,
        ..HddParams::default()
    };
    let a = ArrayParams {
        drives,
        chunk: 128 << 10,
        link_rate: link,
    };
    Array::new(&p, &a).unwrap()
}

#[test]
fn chunks_go_round_robin_over_the_disks() {
    let a = array(4, 0.0);
    assert_eq!(a.place(0), (0, 0));
    assert_eq!(a.place(128 << 10), (1, 0));
    assert_eq!(a.place(4 * (128 << 10) + 5), (0, (128 << 10) + 5));
    assert_eq!(a.capacity(), 64 << 30);
}

#[test]
fn a_large_read_runs_on_every_disk_at_once() {
    // 1 MiB over 8 disks of 128 KiB chunks: each disk reads one chunk, so the read costs
    // about one disk's positioning and an eighth of the transfer.
    let mut one = array(1, 0.0);
    let mut eight = array(8, 0.0);
    let req = Request {
        kind: ReqKind::Read,
        offset: 10 << 30,
        len: 1 << 20,
    };
    let t1 = one.service(0, req).done_ns;
    let t8 = eight.service(0, req).done_ns;
    assert!(t8 < t1, "{t8} against {t1}");
    assert_eq!(eight.pieces, 8);
}

#[test]
fn random_reads_from_several_streams_overlap_on_different_disks() {
    // Eight 4 KiB reads on eight different disks arrive together: they finish in about the
    // time of one, where one disk serves them one after another.
    let mut a = array(8, 0.0);
    let mut d = array(1, 0.0);
    let mut worst = (0, 0);
    for i in 0..8u64 {
        let req = Request {
            kind: ReqKind::Read,
            offset: i * (128 << 10) + (i << 30) / 8 * 8,
            len: 4096,
        };
        worst.0 = worst.0.max(a.service(0, req).done_ns);
        worst.1 = worst.1.max(d.service(0, req).done_ns);
    }
    assert!(worst.0 * 3 < worst.1, "{worst:?}");
}

#[test]
fn the_link_caps_a_streaming_read() {
    let mut a = array(16, 100.0e6);
    let mut t = 0;
    for i in 0..64u64 {
        let req = Request {
            kind: ReqKind::Read,
            offset: i << 20,
            len: 1 << 20,
        };
        t = a.service(t, req).done_ns;
    }
    let mbs = 64.0 * (1 << 20) as f64 / (t as f64 * 1e-9) / 1e6;
    assert!(mbs <= 100.0 + 1e-6, "{mbs} MB/s over a 100 MB/s link");
    assert!(mbs > 90.0, "{mbs}");
}

#[test]
fn bad_striping_is_refused_by_name() {
    let p = HddParams::default();
    let bad = |a: ArrayParams| Array::new(&p, &a).err().unwrap().param;
    let ok = ArrayParams {
        drives: 4,
        chunk: 128 << 10,
        link_rate: 0.0,
    };
    assert_eq!(bad(ArrayParams { drives: 0, ..ok }), "drives");
    assert_eq!(bad(ArrayParams { chunk: 1000, ..ok }), "chunk");
    assert_eq!(
        bad(ArrayParams {
            link_rate: -1.0,
            ..ok
        }),
        "link_rate"
    );
}

/// An array of `drives` disks of `chunk`-byte chunks, each disk's write-back buffer on or
/// off.
fn striped(drives: u64, chunk: u64, write_back: bool) -> Array {
    let p = HddParams {
        capacity: 64 << 30,
        write_back,
        ..HddParams::default()
    };
    let a = ArrayParams {
        drives,
        chunk,
        link_rate: 0.0,
    };
    Array::new(&p, &a).unwrap()
}

fn write(offset: u64, len: u64) -> Request {
    Request {
        kind: ReqKind::Write,
        offset,
        len,
    }
}

/// What `a` names unsettled at `t`: (write, part, on the media), in order.
fn unsettled_at(a: &mut Array, t: u64) -> Vec<(u64, (u64, u64), bool)> {
    let mut u: Vec<_> = a
        .unsettled(t)
        .iter()
        .map(|u| (u.write, u.part.expect("an array names parts"), u.on_media))
        .collect();
    u.sort_unstable();
    u
}

#[test]
fn a_write_split_over_two_disks_is_unsettled_part_by_part() {
    const C: u64 = 64 << 10;
    let mut a = striped(2, C, true);
    // Write 0 keeps disk 1 busy far away; write 1 spans both disks: its first chunk goes to
    // disk 0 (idle, destaged at once), its second to disk 1 (behind write 0's destage).
    let far = 2 * C * 40_000 + C;
    assert_eq!(a.place(far).0, 1);
    let t0 = a.submit(0, 0, write(far, C)).unwrap().done_ns;
    let t1 = a.submit(t0, 1, write(0, 2 * C)).unwrap().done_ns;
    assert_eq!(
        unsettled_at(&mut a, t1),
        [(0, (0, C), true), (1, (0, C), true), (1, (C, C), false)],
        "both acknowledged from the buffers; disk 0 destages write 1's first chunk"
    );
    // Once disk 0 is idle, only the part disk 1 still holds is unsettled.
    let disk0_idle = a.disks[0].background(t1).idle_at_ns;
    let u = unsettled_at(&mut a, disk0_idle);
    assert!(
        u.iter().all(|&(w, part, _)| w == 0 || part == (C, C)),
        "{u:?}"
    );
    assert!(
        u.iter().any(|&(w, _, _)| w == 1),
        "disk 1 still holds it: {u:?}"
    );
    let idle = a.background(disk0_idle).idle_at_ns;
    assert!(unsettled_at(&mut a, idle).is_empty());
    // The durable pieces are forgotten.
    assert!(a.held.is_empty());
}

#[test]
fn a_piece_over_several_chunks_of_one_disk_names_each_chunk() {
    const C: u64 = 32 << 10;
    let mut a = striped(2, C, true);
    // 128 KiB over two disks: disk 0 gets chunks 0 and 2 as one piece, disk 1 chunks 1 and 3.
    let t = a.submit(0, 7, write(0, 4 * C)).unwrap().done_ns;
    assert_eq!(a.pieces, 2);
    let parts: Vec<(u64, u64)> = unsettled_at(&mut a, t).iter().map(|u| u.1).collect();
    assert_eq!(parts, [(0, C), (C, C), (2 * C, C), (3 * C, C)]);
}

#[test]
fn a_flush_or_write_through_leaves_no_part_unsettled() {
    let mut a = striped(4, 64 << 10, true);
    let mut t = 0;
    for i in 0..8u64 {
        t = a
            .submit(t, i, write(i * (3 << 30), 256 << 10))
            .unwrap()
            .done_ns;
    }
    assert!(!unsettled_at(&mut a, t).is_empty());
    let flush = Request {
        kind: ReqKind::Flush,
        offset: 0,
        len: 0,
    };
    let f = a.submit(t, 8, flush).unwrap().done_ns;
    assert!(unsettled_at(&mut a, f).is_empty());
    let mut through = striped(4, 64 << 10, false);
    let w = through.submit(0, 0, write(0, 1 << 20)).unwrap().done_ns;
    assert!(
        unsettled_at(&mut through, w).is_empty(),
        "durable when acknowledged"
    );
}

#[test]
fn pieces_no_disk_holds_any_more_are_forgotten_as_requests_come() {
    let mut a = striped(2, 64 << 10, true);
    let mut t = 0;
    for i in 0..(3 * PRUNE_FIRST as u64) {
        t = a.submit(t, i, write((i % 64) << 20, 4096)).unwrap().done_ns + 10_000_000;
    }
    assert!(a.held.len() <= PRUNE_FIRST + 1, "{}", a.held.len());
}

#[test]
fn a_range_cut_per_disk_at_once_matches_the_chunk_walk() {
    // Any range, on arrays of one to seven disks: the same piece on each disk, in the same
    // order, as walking it chunk by chunk.
    let mut rng = crate::engine::rng::SplitMix64::new(7);
    for drives in 1..8 {
        let a = array(drives, 0.0);
        for _ in 0..300 {
            let o = rng.below(a.capacity());
            let len = match rng.below(3) {
                0 => rng.below(64 << 10) + 1,
                1 => rng.below(4 << 20) + 1,
                _ => rng.below((a.capacity() - o).min(1 << 30)) + 1,
            };
            let end = (o + len).min(a.capacity());
            let walked: Vec<(usize, u64, u64)> = a
                .runs_by_chunk(o, end, o)
                .into_iter()
                .map(|r| (r.0, r.1, r.2))
                .collect();
            let cut: Vec<(usize, u64, u64)> = a
                .runs(o, end)
                .into_iter()
                .map(|r| (r.0, r.1, r.2))
                .collect();
            assert_eq!(cut, walked, "{drives} disks, [{o}, {end})");
        }
    }
    assert!(array(4, 0.0).runs(5, 5).is_empty());
}

#[test]
fn a_whole_volume_discard_is_one_piece_per_disk() {
    let mut a = array(36, 0.0);
    let all = a.capacity();
    let r = a.service(
        0,
        Request {
            kind: ReqKind::Discard,
            offset: 0,
            len: all,
        },
    );
    assert_eq!(r.errno, 0);
    assert_eq!(a.pieces, 36);
}
