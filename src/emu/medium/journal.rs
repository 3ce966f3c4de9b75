//! The cut journal of an emulated device: while a power cut is planned, the server keeps,
//! for every write that may not be durable yet, what the image held before it (the server
//! writes a request's data to the image as it arrives), so that a cut can take back exactly
//! what the device would lose. A write leaves the journal once its model no longer names it
//! unsettled ([`crate::emu::DeviceModel::unsettled`]) and it was acknowledged; what it overwrote of
//! older writes still kept is then never restored. The journal so holds the writes of the
//! model's volatile cache and those in flight: bounded by the cache size and the queue.
//!
//! At the cut, each write kept is durable, lost (in the cache, or never started), or in
//! flight on the media (whole, absent or torn as [`InFlight`] says); the lost parts are
//! restored newest first, except where a later durable write covers them, and the
//! [`CutReport`] lists every write the cut changed. A device's journal and its power are its
//! [`CutState`], shared by its FUSE threads and its server.

use super::backing::Backing;
use super::cut::Power;
use super::cut::{kept, landed, split_loss, InFlight};
use super::model::{RequestId, Unsettled};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

/// Writes kept before the journal asks its model which are settled.
const PRUNE_ABOVE: usize = 32;

/// Bytes of the image a write overwrote, to be put back if the write is lost.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece {
    offset: u64,
    data: Vec<u8>,
}

/// One write the journal keeps.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The write's request id.
    pub write: RequestId,
    pub offset: u64,
    pub len: u64,
    /// Arrival and reply time on the server's clock, ns (the reply's `u64::MAX` while a model
    /// that decides completions later has not said).
    pub arrive_ns: u64,
    pub due_ns: u64,
    /// Arrival and completion on the model's timeline, ns (completion `u64::MAX` while not
    /// known).
    pub arrive_model_ns: u64,
    pub done_model_ns: u64,
    /// What the write overwrote and would have to be put back.
    restore: Vec<Piece>,
}

/// Completions a model decided after the request's arrival: (id, completion in model ns,
/// reply due on the server clock).
pub type Resolved = Vec<(RequestId, u64, u64)>;

impl Entry {
    /// A write of `len` bytes at `offset` that overwrote `old` (as many bytes); `due_ns` and
    /// `done_model_ns` `u64::MAX` while not known.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        write: RequestId,
        offset: u64,
        old: Vec<u8>,
        arrive_ns: u64,
        due_ns: u64,
        arrive_model_ns: u64,
        done_model_ns: u64,
    ) -> Entry {
        Entry {
            write,
            offset,
            len: old.len() as u64,
            arrive_ns,
            due_ns,
            arrive_model_ns,
            done_model_ns,
            restore: vec![Piece { offset, data: old }],
        }
    }

    fn held(&self) -> u64 {
        self.restore.iter().map(|p| p.data.len() as u64).sum()
    }

    /// Never restores `[a, b)`: a later write that is durable covers it.
    fn keep_out(&mut self, a: u64, b: u64) {
        if b <= self.offset || self.offset + self.len <= a {
            return;
        }
        let mut out = Vec::with_capacity(self.restore.len() + 1);
        for p in self.restore.drain(..) {
            let end = p.offset + p.data.len() as u64;
            if end <= a || b <= p.offset {
                out.push(p);
                continue;
            }
            if p.offset < a {
                out.push(Piece {
                    offset: p.offset,
                    data: p.data[..(a - p.offset) as usize].to_vec(),
                });
            }
            if b < end {
                out.push(Piece {
                    offset: b,
                    data: p.data[(b - p.offset) as usize..].to_vec(),
                });
            }
        }
        self.restore = out;
    }

    /// Puts back what the write overwrote in bytes `[a, b)` of it.
    fn restore_range(&self, a: u64, b: u64, image: &Backing) -> std::io::Result<u64> {
        let (start, stop) = (self.offset + a, self.offset + b);
        let mut put = 0;
        for p in &self.restore {
            let end = (p.offset + p.data.len() as u64).min(stop);
            if end <= start || stop <= p.offset {
                continue;
            }
            let skip = start.saturating_sub(p.offset);
            let upto = end - p.offset;
            image.write_all_at(&p.data[skip as usize..upto as usize], p.offset + skip)?;
            put += upto - skip;
        }
        Ok(put)
    }
}

/// What became of one write at a cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    /// In the volatile cache, or queued and not started: the media never got it.
    Lost,
    /// Being executed: reached the media whole.
    Whole,
    /// Being executed: none of it reached the media.
    Absent,
    /// Being executed: its first [`CutWrite::kept`] bytes reached the media.
    Torn,
    /// Split over several drives (an array's members): some parts reached the media and
    /// others, which their drives still held or were executing, did not; [`CutWrite::kept`]
    /// bytes of it in all.
    Part,
}

/// One write a cut took back, whole or in part, or found in flight.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CutWrite {
    /// The model's number of the write (the device's write requests from 0).
    pub write: u64,
    pub offset: u64,
    pub len: u64,
    /// When it arrived, CLOCK_MONOTONIC ns.
    pub arrive_mono_ns: u64,
    /// The host had its reply before the cut.
    pub acked: bool,
    /// The host had it acknowledged and then a cache flush acknowledged before the cut: data
    /// the drive said was durable.
    pub flushed: bool,
    pub fate: Fate,
    /// Bytes of it the media holds after the cut (from its start, except for a
    /// [`Fate::Part`]).
    pub kept: u64,
}

/// What a cut did to one device.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CutReport {
    /// The instant of the cut, CLOCK_MONOTONIC ns.
    pub cut_mono_ns: u64,
    /// The model's time at the cut, ns.
    pub model_ns: u64,
    /// Writes the journal still held at the cut (not known durable).
    pub journaled: u64,
    /// Every write the cut changed or found in flight, in arrival order.
    pub writes: Vec<CutWrite>,
    /// Writes the model named unsettled that came before the journal began: not taken back.
    pub before_journal: u64,
    /// Most bytes of old contents the journal held at once.
    pub peak_bytes: u64,
}

/// What a cut did to a write: its fate and the bytes of it the media lost, `[a, b)` from its
/// start.
type Loss = (Fate, Vec<(u64, u64)>);

/// The writes that may not be durable yet, with what they overwrote.
#[derive(Debug, Default)]
pub struct Journal {
    entries: VecDeque<Entry>,
    /// Cache flushes: (id, arrival, completion) on the model's timeline (completion
    /// `u64::MAX` while not known), for those that may cover a write kept.
    flushes: VecDeque<(RequestId, u64, u64)>,
    /// The first write journaled.
    first: Option<u64>,
    bytes: u64,
    peak_bytes: u64,
}

impl Journal {
    /// Writes kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes of old contents held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Keeps `e` (arrivals come in the order the model took them); then, with many kept,
    /// asks the model (`ask`: what it names unsettled at `now_model_ns`, and the completions
    /// it decided since) and drops the writes it made durable.
    pub fn write(
        &mut self,
        e: Entry,
        now_model_ns: u64,
        ask: impl FnOnce() -> (Vec<Unsettled>, Resolved),
    ) {
        self.first.get_or_insert(e.write);
        self.bytes += e.held();
        self.peak_bytes = self.peak_bytes.max(self.bytes);
        self.entries.push_back(e);
        if self.entries.len() > PRUNE_ABOVE {
            let (unsettled, resolved) = ask();
            self.resolve(&resolved);
            self.settle(now_model_ns, &unsettled);
        }
    }

    /// A cache flush, request `id`, that arrived and completes at these model times
    /// (completion `u64::MAX` while not known).
    pub fn flush(&mut self, id: RequestId, arrive_model_ns: u64, done_model_ns: u64) {
        self.flushes.push_back((id, arrive_model_ns, done_model_ns));
    }

    /// Completions decided after their arrival: of writes and flushes kept.
    pub fn resolve(&mut self, resolved: &[(RequestId, u64, u64)]) {
        for &(id, done, due) in resolved {
            if let Some(e) = self.entries.iter_mut().find(|e| e.write == id) {
                e.done_model_ns = done;
                e.due_ns = due;
            } else if let Some(f) = self.flushes.iter_mut().find(|f| f.0 == id) {
                f.2 = done;
            }
        }
    }

    /// A discard or other immediate change of `[offset, offset + len)`: durable at once, so
    /// no write kept is restored there.
    pub fn overwritten(&mut self, offset: u64, len: u64) {
        for e in &mut self.entries {
            let before = e.held();
            e.keep_out(offset, offset + len);
            self.bytes -= before - e.held();
        }
    }

    /// Drops the writes that are durable at `now_model_ns`: acknowledged and not `unsettled`.
    /// What each overwrote of older writes kept is never restored.
    pub fn settle(&mut self, now_model_ns: u64, unsettled: &[Unsettled]) {
        let mut open: Vec<u64> = unsettled.iter().map(|u| u.write).collect();
        open.sort_unstable();
        let mut i = 0;
        while i < self.entries.len() {
            let e = &self.entries[i];
            if e.done_model_ns > now_model_ns || open.binary_search(&e.write).is_ok() {
                i += 1;
                continue;
            }
            let (a, b) = (e.offset, e.offset + e.len);
            let gone = self.entries.remove(i).expect("in range");
            self.bytes -= gone.held();
            for older in self.entries.iter_mut().take(i) {
                let before = older.held();
                older.keep_out(a, b);
                self.bytes -= before - older.held();
            }
        }
        let oldest = self
            .entries
            .iter()
            .map(|e| e.done_model_ns)
            .min()
            .unwrap_or(u64::MAX);
        // A flush that arrived before every write kept was acknowledged covers none of them.
        while self.flushes.front().is_some_and(|f| f.1 < oldest) {
            self.flushes.pop_front();
        }
    }

    /// The cut: at `model_ns` on the model's timeline (`off_ns` on the server's clock, whose
    /// zero is `mono_base_ns`), with the model's `unsettled` writes then, the writes kept are
    /// judged and what the device loses is restored on `image`. Empties the journal.
    pub fn cut(
        &mut self,
        at: CutAt,
        unsettled: &[Unsettled],
        in_flight: InFlight,
        seed: u64,
        image: &Backing,
    ) -> std::io::Result<CutReport> {
        let entries: Vec<Entry> = std::mem::take(&mut self.entries).into();
        // The last flush acknowledged before the cut: writes acknowledged before it arrived
        // were said to be durable.
        let flushed_before = self
            .flushes
            .iter()
            .filter(|f| f.2 <= at.model_ns)
            .map(|f| f.1)
            .max();
        let before_journal = self.first.map_or(unsettled.len(), |first| {
            unsettled.iter().filter(|u| u.write < first).count()
        }) as u64;
        // Each write's fate and the bytes of it (`[a, b)` from its start) the media lost;
        // `None` for a durable write.
        let fate_of = |e: &Entry| -> Option<Loss> {
            if e.arrive_ns >= at.off_ns {
                // Arrived as the power went (another device of the circuit cut it): never
                // received.
                return Some((Fate::Lost, vec![(0, e.len)]));
            }
            let named: Vec<&Unsettled> = unsettled.iter().filter(|u| u.write == e.write).collect();
            if !named.is_empty() && named.iter().all(|u| u.part.is_some()) {
                let (lost, executing) = split_loss(e.len, e.write, &named, in_flight, seed);
                let gone: u64 = lost.iter().map(|(a, b)| b - a).sum();
                let fate = match gone {
                    0 => Fate::Whole,
                    g if g == e.len && executing => Fate::Absent,
                    g if g == e.len => Fate::Lost,
                    _ => Fate::Part,
                };
                return Some((fate, lost));
            }
            let on_media = match named.iter().find(|u| u.part.is_none()) {
                Some(u) => u.on_media,
                // Not named, not yet complete: a model that acknowledges on the media is
                // executing it.
                None if e.done_model_ns > at.model_ns => true,
                None => return None,
            };
            if !on_media {
                return Some((Fate::Lost, vec![(0, e.len)]));
            }
            let kept = kept(in_flight, e.len, seed, e.write).min(e.len);
            let fate = match kept {
                0 => Fate::Absent,
                k if k >= e.len => Fate::Whole,
                _ => Fate::Torn,
            };
            let lost = if kept < e.len {
                vec![(kept, e.len)]
            } else {
                Vec::new()
            };
            Some((fate, lost))
        };
        let fates: Vec<Option<Loss>> = entries.iter().map(fate_of).collect();
        let mut entries = entries;
        // What a durable write (or the parts of another that landed) covers stays.
        for k in 0..entries.len() {
            let lost: &[(u64, u64)] = fates[k].as_ref().map_or(&[], |f| &f.1);
            let (offset, len) = (entries[k].offset, entries[k].len);
            for (a, b) in landed(len, lost) {
                for older in entries.iter_mut().take(k) {
                    older.keep_out(offset + a, offset + b);
                }
            }
        }
        for (e, f) in entries.iter().zip(&fates).rev() {
            if let Some((_, lost)) = f {
                for &(a, b) in lost {
                    e.restore_range(a, b, image)?;
                }
            }
        }
        let writes = entries
            .iter()
            .zip(&fates)
            .filter_map(|(e, f)| {
                let (fate, lost) = f.as_ref()?;
                let fate = *fate;
                let kept = e.len - lost.iter().map(|(a, b)| b - a).sum::<u64>();
                let acked = e.due_ns <= at.off_ns;
                Some(CutWrite {
                    write: e.write,
                    offset: e.offset,
                    len: e.len,
                    arrive_mono_ns: at.mono_base_ns + e.arrive_ns,
                    acked,
                    flushed: acked && flushed_before.is_some_and(|f| e.done_model_ns <= f),
                    fate,
                    kept,
                })
            })
            .collect();
        let report = CutReport {
            cut_mono_ns: at.mono_base_ns + at.off_ns,
            model_ns: at.model_ns,
            journaled: entries.len() as u64,
            writes,
            before_journal,
            peak_bytes: self.peak_bytes,
        };
        *self = Journal::default();
        Ok(report)
    }
}

/// The instant of a cut on a device's clocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutAt {
    /// On the model's timeline, ns.
    pub model_ns: u64,
    /// On the server's clock, ns.
    pub off_ns: u64,
    /// The CLOCK_MONOTONIC instant of the server clock's zero.
    pub mono_base_ns: u64,
}

/// A device's power and, while a cut is planned, its journal; shared by its FUSE threads and
/// its server.
#[derive(Debug)]
pub struct CutState {
    pub power: Arc<Power>,
    /// The CLOCK_MONOTONIC instant of the server clock's zero.
    pub mono_base_ns: u64,
    /// `Some` while a cut is planned.
    pub journal: Mutex<Option<Journal>>,
    /// A used disk ([`super::stale`]): holes read as an earlier owner's data, no TRIM.
    pub stale: std::sync::atomic::AtomicBool,
}

impl CutState {
    /// A device whose server clock's zero is `mono_base_ns`, powered, with no cut planned.
    pub fn new(power: Arc<Power>, mono_base_ns: u64) -> CutState {
        CutState {
            power,
            mono_base_ns,
            journal: Mutex::new(None),
            stale: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Whether the device is a used disk.
    pub fn stale(&self) -> bool {
        self.stale.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The journal, locked.
    pub fn lock(&self) -> MutexGuard<'_, Option<Journal>> {
        self.journal.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
#[path = "journal_tests.rs"]
mod tests;
