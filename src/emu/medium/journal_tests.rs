//! Tests of the cut journal: what a cut takes back, and what it must leave.

use super::*;
use crate::emu::cut::SECTOR;

/// An image and a journal over it, written as the server writes: old contents read, new
/// data written, the write journaled.
struct Rig {
    _dir: tempfile::TempDir,
    image: Backing,
    journal: Journal,
    writes: u64,
}

impl Rig {
    fn new() -> Rig {
        let dir = tempfile::tempdir().unwrap();
        let image = Backing::open(&dir.path().join("img"), 1 << 20).unwrap();
        image.write_all_at(&[0xEE; 1 << 20], 0).unwrap();
        Rig {
            _dir: dir,
            image,
            journal: Journal::default(),
            writes: 0,
        }
    }

    /// Write number `self.writes` of `len` bytes of `byte` at `offset`, arriving at `t` and
    /// acknowledged at `done` (both clocks the same here).
    fn write(&mut self, offset: u64, len: u64, byte: u8, t: u64, done: u64) -> u64 {
        let mut old = vec![0u8; len as usize];
        self.image.read_exact_at(&mut old, offset).unwrap();
        self.image
            .write_all_at(&vec![byte; len as usize], offset)
            .unwrap();
        let w = self.writes;
        self.writes += 1;
        let e = Entry::new(w, offset, old, t, done, t, done);
        self.journal.write(e, t, || (Vec::new(), Vec::new()));
        w
    }

    fn bytes(&self, offset: u64, len: u64) -> Vec<u8> {
        let mut b = vec![0u8; len as usize];
        self.image.read_exact_at(&mut b, offset).unwrap();
        b
    }

    fn cut(&mut self, at: u64, unsettled: &[Unsettled], f: InFlight) -> CutReport {
        let at = CutAt {
            model_ns: at,
            off_ns: at,
            mono_base_ns: 1_000,
        };
        self.journal.cut(at, unsettled, f, 9, &self.image).unwrap()
    }
}

fn u(write: u64, on_media: bool) -> Unsettled {
    Unsettled::whole(write, on_media)
}

#[test]
fn a_cut_takes_back_exactly_the_unsettled_writes() {
    let mut r = Rig::new();
    r.write(0, 8192, 1, 10, 11);
    r.write(8192, 8192, 2, 20, 21);
    r.write(16384, 8192, 3, 30, 200);
    // Write 1 waits in the cache; write 2 is on the media and not acknowledged.
    let rep = r.cut(100, &[u(1, false), u(2, true)], InFlight::None);
    assert_eq!(r.bytes(0, 8192), vec![1; 8192], "durable");
    assert_eq!(r.bytes(8192, 16384), vec![0xEE; 16384], "taken back");
    let fates: Vec<(u64, Fate, bool)> = rep
        .writes
        .iter()
        .map(|w| (w.write, w.fate, w.acked))
        .collect();
    assert_eq!(fates, [(1, Fate::Lost, true), (2, Fate::Absent, false)]);
    assert_eq!(rep.writes[0].arrive_mono_ns, 1_020);
    assert_eq!(rep.cut_mono_ns, 1_100);
    assert_eq!(rep.journaled, 3);
    assert!(r.journal.is_empty() && r.journal.bytes() == 0);
}

#[test]
fn a_later_durable_write_stays_over_an_earlier_lost_one() {
    let mut r = Rig::new();
    r.write(0, 16384, 1, 10, 11);
    r.write(4096, 4096, 2, 20, 21);
    r.write(8192, 4096, 3, 30, 31);
    // The first and the last are lost; the second reached the media first.
    let rep = r.cut(100, &[u(0, false), u(2, false)], InFlight::Whole);
    assert_eq!(r.bytes(0, 4096), vec![0xEE; 4096]);
    assert_eq!(r.bytes(4096, 4096), vec![2; 4096]);
    assert_eq!(r.bytes(8192, 8192), vec![0xEE; 8192]);
    assert_eq!(rep.writes.len(), 2);
}

#[test]
fn two_lost_writes_over_each_other_leave_what_was_there_before_both() {
    let mut r = Rig::new();
    r.write(0, 8192, 1, 10, 11);
    r.write(0, 8192, 2, 20, 21);
    r.cut(100, &[u(0, false), u(1, false)], InFlight::Whole);
    assert_eq!(r.bytes(0, 8192), vec![0xEE; 8192]);
}

#[test]
fn a_torn_write_keeps_its_first_sectors() {
    let mut r = Rig::new();
    let len = 16 * SECTOR;
    r.write(0, len, 7, 10, 500);
    let rep = r.cut(100, &[u(0, true)], InFlight::Torn);
    let w = &rep.writes[0];
    assert_eq!(w.fate, Fate::Torn);
    assert!(w.kept > 0 && w.kept < len && w.kept % SECTOR == 0);
    assert_eq!(w.kept, crate::emu::cut::kept(InFlight::Torn, len, 9, 0));
    assert_eq!(r.bytes(0, w.kept), vec![7; w.kept as usize]);
    assert_eq!(
        r.bytes(w.kept, len - w.kept),
        vec![0xEE; (len - w.kept) as usize]
    );
}

#[test]
fn settled_writes_leave_the_journal_so_it_holds_only_the_cache() {
    let mut r = Rig::new();
    for i in 0..200u64 {
        let t = i * 10;
        let mut old = vec![0u8; 4096];
        r.image.read_exact_at(&mut old, (i % 64) * 4096).unwrap();
        let e = Entry::new(i, (i % 64) * 4096, old, t, t + 1, t, t + 1);
        // The model keeps the last four writes in its cache.
        let open = move || {
            let u = (i.saturating_sub(3)..=i).map(|w| u(w, false)).collect();
            (u, Vec::new())
        };
        r.journal.write(e, t + 1, open);
    }
    assert!(r.journal.len() <= PRUNE_ABOVE + 1, "{}", r.journal.len());
    assert!(r.journal.bytes() <= (PRUNE_ABOVE as u64 + 1) * 4096);
}

#[test]
fn a_write_overwritten_by_a_settled_one_is_restored_only_outside_it() {
    let mut r = Rig::new();
    r.write(0, 8192, 1, 10, 11);
    r.write(4096, 4096, 2, 20, 21);
    // Write 1 is durable and leaves; write 0 stays unsettled.
    r.journal.settle(30, &[u(0, false)]);
    assert_eq!(r.journal.len(), 1);
    r.cut(40, &[u(0, false)], InFlight::Whole);
    assert_eq!(r.bytes(0, 4096), vec![0xEE; 4096]);
    assert_eq!(r.bytes(4096, 4096), vec![2; 4096]);
}

#[test]
fn a_lost_write_a_flush_had_covered_is_marked_flushed() {
    let mut r = Rig::new();
    r.write(0, 4096, 1, 10, 11);
    // A flush arrives after the write was acknowledged and is acknowledged at once (a drive
    // that lies); a write after the flush is not covered by it.
    r.journal.flush(100, 12, 13);
    r.write(4096, 4096, 2, 20, 21);
    let rep = r.cut(100, &[u(0, false), u(1, false)], InFlight::Whole);
    let flushed: Vec<bool> = rep.writes.iter().map(|w| w.flushed).collect();
    assert_eq!(flushed, [true, false]);
}

#[test]
fn a_discard_is_durable_at_once() {
    let mut r = Rig::new();
    r.write(0, 8192, 1, 10, 11);
    r.image.punch_hole(0, 4096).unwrap();
    r.journal.overwritten(0, 4096);
    r.cut(100, &[u(0, false)], InFlight::Whole);
    assert_eq!(r.bytes(0, 4096), vec![0; 4096], "discarded");
    assert_eq!(r.bytes(4096, 4096), vec![0xEE; 4096], "restored");
}

#[test]
fn unsettled_writes_from_before_the_journal_are_counted() {
    let mut r = Rig::new();
    r.writes = 5;
    r.write(0, 4096, 1, 10, 11);
    let rep = r.cut(100, &[u(3, false), u(5, false)], InFlight::Whole);
    assert_eq!(rep.before_journal, 1);
}

#[test]
fn a_split_write_loses_only_the_parts_its_drives_still_held() {
    let mut r = Rig::new();
    r.write(0, 4 * 8192, 5, 10, 11);
    // Parts 0 and 2 are durable; part 1 waited in a cache; part 3 was being written.
    let part = |from: u64, on_media: bool| Unsettled {
        write: 0,
        on_media,
        part: Some((from * 8192, 8192)),
    };
    let rep = r.cut(100, &[part(1, false), part(3, true)], InFlight::None);
    assert_eq!(r.bytes(0, 8192), vec![5; 8192]);
    assert_eq!(r.bytes(8192, 8192), vec![0xEE; 8192]);
    assert_eq!(r.bytes(16384, 8192), vec![5; 8192]);
    assert_eq!(r.bytes(24576, 8192), vec![0xEE; 8192]);
    let w = &rep.writes[0];
    assert_eq!((w.fate, w.kept, w.acked), (Fate::Part, 16384, true));
    // Every part held: lost whole.
    let mut r = Rig::new();
    r.write(0, 2 * 8192, 6, 10, 11);
    let rep = r.cut(100, &[part(0, false), part(1, false)], InFlight::Whole);
    assert_eq!(r.bytes(0, 16384), vec![0xEE; 16384]);
    assert_eq!((rep.writes[0].fate, rep.writes[0].kept), (Fate::Lost, 0));
}

#[test]
fn a_durable_part_of_a_split_write_stays_over_an_older_lost_write() {
    let mut r = Rig::new();
    r.write(0, 16384, 1, 10, 11);
    r.write(0, 16384, 2, 20, 21);
    // The older write is lost; the newer one's first half is durable, its second held.
    let second = Unsettled {
        write: 1,
        on_media: false,
        part: Some((8192, 8192)),
    };
    r.cut(100, &[u(0, false), second], InFlight::Whole);
    assert_eq!(r.bytes(0, 8192), vec![2; 8192]);
    assert_eq!(r.bytes(8192, 8192), vec![0xEE; 8192]);
}
