//! Root integration tests of power cuts on an emulated disk: writes go to the served file as
//! the kernel's loop driver sends them, the power goes, and what the image holds afterwards is
//! checked write for write against the device server's own request log. The writes the cut
//! took back are exactly those a fresh model, replayed on the log's arrival times, still holds
//! in its write-back buffer at the instant of the cut; with write-through or after an honoured
//! flush, no acknowledged write is lost; a drive that ignores flushes loses flushed writes. On
//! an array whose disks each hold a share of a write, the cut takes back exactly the parts the
//! disks still held, part for part.
//! Each test skips with the reason when not root or without FUSE (a failure under `CI`), and
//! leaves no mount or image.

mod common;

use common::ready_to_emulate;
use iotrial::emu::array::{Array, ArrayParams};
use iotrial::emu::cut::{Circuit, InFlight};
use iotrial::emu::hdd::{Hdd, HddParams};
use iotrial::emu::journal::{CutReport, Fate};
use iotrial::emu::queued::{QueueParams, QueuedDisk};
use iotrial::emu::{fuse_mounts_at, DeviceModel, EmuServer, ReqKind, Request};
use std::collections::BTreeSet;
use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

const KIB: u64 = 1024;
const IO: u64 = 64 * KIB;

macro_rules! skip_unless_ready {
    ($name:expr) => {
        if !ready_to_emulate($name, &[]) {
            return;
        }
    };
}

/// A fresh disk of `p`: in arrival order, or reordering its queue (`rpo`), which decides
/// completions later.
fn disk(p: &HddParams, rpo: bool) -> Box<dyn DeviceModel> {
    if rpo {
        let q = QueueParams {
            rpo: true,
            age_limit: 0.5,
        };
        Box::new(QueuedDisk::new(p, &q).unwrap())
    } else {
        Box::new(Hdd::new(p).unwrap())
    }
}

/// A served disk of `p`, at scale 1, its cut planned and on a circuit of its own, logging
/// every request with times from its clock's zero.
fn serve(dir: &Path, p: &HddParams) -> (EmuServer, Arc<Circuit>, u64) {
    serve_model(dir, disk(p, false))
}

fn serve_model(dir: &Path, model: Box<dyn DeviceModel>) -> (EmuServer, Arc<Circuit>, u64) {
    let server =
        EmuServer::start(model, &dir.join("image"), &dir.join("fuse"), 1.0).expect("server starts");
    server.plan_cut();
    let member = server.member();
    let base = member.mono_base_ns;
    let circuit = Arc::new(Circuit::new(vec![member], None, None));
    server.wire(Arc::clone(&circuit));
    server.start_log(base);
    (server, circuit, base)
}

/// The bytes of write `i`: its number in every byte.
fn data(i: u64) -> Vec<u8> {
    vec![(i % 250 + 1) as u8; IO as usize]
}

/// One logged request: (arrival on the server's clock, ns; op; offset; bytes).
fn logged(path: &Path) -> Vec<(u64, String, u64, u64)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let t: f64 = f[0].parse().unwrap();
            (
                (t * 1e9).round() as u64,
                f[1].to_string(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
            )
        })
        .collect()
}

/// Writes `n` writes of 64 KiB at offsets far apart through the served file (each returns
/// once acknowledged), the k-th at `offset(k)`, waiting `pause` after the first half.
fn write_all(server: &EmuServer, n: u64, pause: std::time::Duration) {
    let f = OpenOptions::new()
        .write(true)
        .open(server.device_file())
        .unwrap();
    for i in 0..n {
        if i == n / 2 {
            std::thread::sleep(pause);
        }
        f.write_all_at(&data(i), offset(i)).unwrap();
    }
}

fn offset(i: u64) -> u64 {
    (i * 37 % 64) * (256 * KIB)
}

/// The cut now, and the log and image read back.
fn cut(
    server: EmuServer,
    circuit: &Circuit,
    dir: &Path,
    f: InFlight,
) -> (CutReport, Vec<(u64, String, u64, u64)>) {
    circuit.cut(iotrial::emu::mono_now_ns());
    let report = server.cut(f, 1).unwrap();
    server
        .stop_log(&dir.join("log.csv"), &dir.join("lateness.csv"))
        .unwrap();
    server.stop().unwrap();
    assert!(fuse_mounts_at(&dir.join("fuse")).unwrap().is_empty());
    (report, logged(&dir.join("log.csv")))
}

/// Checks the image write for write: a write the cut lost left what was there before it
/// (zeros: every offset is written once), every other one its data.
fn check_image(dir: &Path, log: &[(u64, String, u64, u64)], lost: &BTreeSet<u64>) {
    let image = std::fs::File::open(dir.join("image")).unwrap();
    let writes: Vec<_> = log.iter().filter(|r| r.1 == "write").collect();
    for (i, w) in writes.iter().enumerate() {
        let i = i as u64;
        assert_eq!(
            (w.2, w.3),
            (offset(i), IO),
            "the log holds the writes in order"
        );
        let mut got = vec![0u8; IO as usize];
        image.read_exact_at(&mut got, w.2).unwrap();
        if lost.contains(&i) {
            assert!(got.iter().all(|&b| b == 0), "write {i} was lost");
        } else {
            assert_eq!(got, data(i), "write {i} is on the media");
        }
    }
}

#[test]
fn a_cut_loses_exactly_the_writes_the_model_still_held() {
    skip_unless_ready!("a_cut_loses_exactly_the_writes_the_model_still_held");
    // A disk serving in arrival order, and one that reorders its queue and decides its
    // completions later.
    for rpo in [false, true] {
        cut_against_the_log(rpo);
    }
}

fn cut_against_the_log(rpo: bool) {
    let dir = tempfile::tempdir().unwrap();
    let p = HddParams::default();
    let (server, circuit, _) = serve_model(dir.path(), disk(&p, rpo));
    // A pause in the middle lets the drive destage the first writes.
    write_all(&server, 40, std::time::Duration::from_millis(40));
    let (report, log) = cut(server, &circuit, dir.path(), InFlight::Whole);
    // Replay the log on a fresh model: what it holds at the cut is what must be lost.
    let mut replay = disk(&p, rpo);
    // The log's rows are the requests in arrival order: row k is request k.
    for (k, (t, op, offset, len)) in log.iter().enumerate() {
        let kind = match op.as_str() {
            "write" => ReqKind::Write,
            "read" => ReqKind::Read,
            "flush" => ReqKind::Flush,
            _ => ReqKind::Discard,
        };
        let r = Request {
            kind,
            offset: *offset,
            len: *len,
        };
        replay.submit(*t, k as u64, r);
    }
    let held: BTreeSet<u64> = replay
        .unsettled(report.model_ns)
        .iter()
        .map(|u| u.write)
        .collect();
    let lost: BTreeSet<u64> = report.writes.iter().map(|w| w.write).collect();
    assert_eq!(lost, held, "rpo {rpo}: {report:?}");
    assert!(!lost.is_empty(), "the buffer held writes at the cut");
    assert!(lost.len() < 40, "the first writes were destaged: {lost:?}");
    assert!(report.writes.iter().all(|w| w.acked && !w.flushed));
    assert!(report
        .writes
        .iter()
        .all(|w| w.fate == Fate::Lost || w.fate == Fate::Whole));
    assert_eq!(report.before_journal, 0);
    // The one being destaged at the cut reached the media whole (InFlight::Whole).
    let gone: BTreeSet<u64> = report
        .writes
        .iter()
        .filter(|w| w.fate == Fate::Lost)
        .map(|w| w.write)
        .collect();
    assert!(lost.len() - gone.len() <= 1);
    check_image(dir.path(), &log, &gone);
}

/// An array of three disks of 48 KiB chunks: every 64 KiB write lands on two or three of
/// them, in shares that differ from write to write, so the disks' buffers drain unevenly.
fn array() -> Array {
    let a = ArrayParams {
        drives: 3,
        chunk: 48 * KIB,
        link_rate: 0.0,
    };
    Array::new(&HddParams::default(), &a).unwrap()
}

#[test]
fn a_cut_on_an_array_loses_exactly_the_parts_its_disks_still_held() {
    skip_unless_ready!("a_cut_on_an_array_loses_exactly_the_parts_its_disks_still_held");
    let dir = tempfile::tempdir().unwrap();
    let (server, circuit, _) = serve_model(dir.path(), Box::new(array()));
    write_all(&server, 40, std::time::Duration::from_millis(40));
    let (report, log) = cut(server, &circuit, dir.path(), InFlight::Whole);
    let mut replay = array();
    let mut writes = Vec::new();
    for (k, (t, op, offset, len)) in log.iter().enumerate() {
        assert_eq!(op, "write", "only writes were sent");
        let r = Request {
            kind: ReqKind::Write,
            offset: *offset,
            len: *len,
        };
        replay.submit(*t, k as u64, r);
        writes.push(*offset);
    }
    let held = replay.unsettled(report.model_ns);
    let ids: BTreeSet<u64> = held.iter().map(|u| u.write).collect();
    let lost: BTreeSet<u64> = report.writes.iter().map(|w| w.write).collect();
    assert_eq!(lost, ids, "{report:?}");
    assert!(
        !lost.is_empty(),
        "the disks' buffers held writes at the cut"
    );
    assert!(lost.len() < 40, "the first writes were destaged: {lost:?}");
    // Every byte of every write: zeros where a part waited in a disk's buffer (InFlight::Whole:
    // a part being written reached the media), the write's data everywhere else.
    let image = std::fs::File::open(dir.path().join("image")).unwrap();
    let mut split = 0;
    for (i, &at) in writes.iter().enumerate() {
        let i = i as u64;
        assert_eq!(at, offset(i));
        let gone: Vec<(u64, u64)> = held
            .iter()
            .filter(|u| u.write == i && !u.on_media)
            .map(|u| u.part.expect("an array names parts"))
            .collect();
        if !gone.is_empty() && gone.iter().map(|p| p.1).sum::<u64>() < IO {
            split += 1;
        }
        let mut got = vec![0u8; IO as usize];
        image.read_exact_at(&mut got, at).unwrap();
        for (b, byte) in got.iter().enumerate() {
            let b = b as u64;
            let in_lost = gone.iter().any(|&(from, n)| (from..from + n).contains(&b));
            let want = if in_lost { 0 } else { data(i)[0] };
            assert_eq!(*byte, want, "write {i} byte {b}: lost parts {gone:?}");
        }
        let w = report.writes.iter().find(|w| w.write == i);
        let kept = w.map_or(IO, |w| w.kept);
        assert_eq!(
            kept,
            IO - gone.iter().map(|p| p.1).sum::<u64>(),
            "write {i}"
        );
    }
    eprintln!(
        "{} writes lost parts, {split} of them in part only",
        lost.len()
    );
}

#[test]
fn nothing_acknowledged_is_lost_after_a_flush_or_on_a_write_through_drive() {
    skip_unless_ready!("nothing_acknowledged_is_lost_after_a_flush_or_on_a_write_through_drive");
    for write_back in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let p = HddParams {
            write_back,
            ..HddParams::default()
        };
        let (server, circuit, _) = serve(dir.path(), &p);
        write_all(&server, 16, std::time::Duration::ZERO);
        let f = OpenOptions::new()
            .write(true)
            .open(server.device_file())
            .unwrap();
        // fsync of the served file: the loop driver's cache flush.
        f.sync_all().unwrap();
        drop(f);
        let (report, log) = cut(server, &circuit, dir.path(), InFlight::Whole);
        assert!(
            report.writes.iter().all(|w| !w.acked),
            "write_back {write_back}: {report:?}"
        );
        assert_eq!(log.iter().filter(|r| r.1 == "flush").count(), 1);
        check_image(dir.path(), &log, &BTreeSet::new());
    }
}

#[test]
fn a_drive_that_ignores_flushes_loses_flushed_writes_and_says_so() {
    skip_unless_ready!("a_drive_that_ignores_flushes_loses_flushed_writes_and_says_so");
    let dir = tempfile::tempdir().unwrap();
    let p = HddParams {
        flush_ignored: true,
        ..HddParams::default()
    };
    let (server, circuit, _) = serve(dir.path(), &p);
    write_all(&server, 16, std::time::Duration::ZERO);
    let f = OpenOptions::new()
        .write(true)
        .open(server.device_file())
        .unwrap();
    f.sync_all().unwrap();
    drop(f);
    let (report, log) = cut(server, &circuit, dir.path(), InFlight::Whole);
    let flushed: BTreeSet<u64> = report
        .writes
        .iter()
        .filter(|w| w.flushed && w.fate == Fate::Lost)
        .map(|w| w.write)
        .collect();
    assert!(!flushed.is_empty(), "{report:?}");
    let lost: BTreeSet<u64> = report
        .writes
        .iter()
        .filter(|w| w.kept == 0)
        .map(|w| w.write)
        .collect();
    check_image(dir.path(), &log, &lost);
}

#[test]
fn requests_after_the_cut_fail_and_a_revived_device_serves_its_image() {
    skip_unless_ready!("requests_after_the_cut_fail_and_a_revived_device_serves_its_image");
    let dir = tempfile::tempdir().unwrap();
    let p = HddParams::default();
    let (server, circuit, _) = serve(dir.path(), &p);
    write_all(&server, 8, std::time::Duration::ZERO);
    circuit.cut(iotrial::emu::mono_now_ns());
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(server.device_file())
        .unwrap();
    let e = f.write_all_at(&data(99), 0).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(5), "{e}");
    let mut buf = vec![0u8; IO as usize];
    assert!(f.read_exact_at(&mut buf, 0).is_err());
    let report = server.cut(InFlight::None, 1).unwrap();
    let last = report.writes.last().expect("the buffer held writes");
    assert_eq!(last.write, 7);
    server.revive(Box::new(Hdd::new(&p).unwrap()));
    f.read_exact_at(&mut buf, offset(7)).unwrap();
    assert!(buf.iter().all(|&b| b == 0), "the lost write stays lost");
    f.write_all_at(&data(5), 0).unwrap();
    f.read_exact_at(&mut buf, 0).unwrap();
    assert_eq!(buf, data(5));
    drop(f);
    server.stop().unwrap();
}

#[test]
fn a_used_disk_reads_an_earlier_owners_data_where_nothing_was_written() {
    skip_unless_ready!("a_used_disk_reads_an_earlier_owners_data_where_nothing_was_written");
    let dir = tempfile::tempdir().unwrap();
    let (server, _, _) = serve(dir.path(), &HddParams::default());
    server.set_stale(true);
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(server.device_file())
        .unwrap();
    f.write_all_at(&data(1), 0).unwrap();
    let mut buf = vec![0u8; 2 * IO as usize];
    f.read_exact_at(&mut buf, 0).unwrap();
    assert_eq!(buf[..IO as usize], data(1));
    let h = iotrial::verify::inspect(&buf[IO as usize..IO as usize + 4096], None)
        .unwrap()
        .header;
    assert!(iotrial::emu::stale::is_stale(h.thread, h.rand_seed));
    assert_eq!(h.offset, IO);
    // No TRIM on a used hard disk.
    let e = rustix::fs::fallocate(
        &f,
        rustix::fs::FallocateFlags::PUNCH_HOLE | rustix::fs::FallocateFlags::KEEP_SIZE,
        0,
        4096,
    )
    .unwrap_err();
    assert_eq!(e, rustix::io::Errno::OPNOTSUPP);
    drop(f);
    server.stop().unwrap();
}
