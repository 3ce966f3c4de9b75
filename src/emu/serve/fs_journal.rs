//! The emulated device's requests while a power cut is planned: a write's old contents are read
//! from the image before its data goes there and the write is kept in the device's cut
//! [`Journal`]; flushes and discards are noted in it. Each such request holds the journal's
//! lock from the model's answer to the image's change, so the journal, the model and the image
//! see the writes in one order. Without a planned cut, requests take the ordinary path.

use super::fs::{errno_of, EmuFs};
use super::journal::Entry;
use super::model::ReqKind;
use super::order::Turn;
use super::replies::Begun;
use rustix::fs::FallocateFlags;

/// A request's id, reply time and completion as a model answered it (`u64::MAX` while a
/// model that decides later has not).
fn times(b: Begun) -> (u64, u64, u64) {
    match b {
        Begun::Due {
            id,
            due_ns,
            done_model_ns,
            ..
        } => (id, due_ns, done_model_ns),
        Begun::Deferred(id) => (id, u64::MAX, u64::MAX),
    }
}

impl EmuFs {
    /// On a used disk, puts the earlier owner's data where `buf` (read at `offset`) came
    /// from holes of the image.
    pub(super) fn fill_stale(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        if !self.cut_state().stale() {
            return Ok(());
        }
        for (a, b) in self.image().holes(offset, buf.len() as u64)? {
            let (from, to) = ((a - offset) as usize, (b - offset) as usize);
            super::stale::fill(&mut buf[from..to], a);
        }
        Ok(())
    }

    /// A write (or write-zeroes: `data` none) in its turn while a cut is planned: how its
    /// reply is timed and its errno; the turn back when no cut is planned.
    pub(super) fn journaled_write<'a>(
        &'a self,
        turn: Turn<'a>,
        offset: u64,
        data: Option<&[u8]>,
        len: u64,
    ) -> Result<(Begun, i32), Turn<'a>> {
        let mut guard = self.cut_state().lock();
        let Some(journal) = guard.as_mut() else {
            return Err(turn);
        };
        let (begun, arrive_ns, arrive_model) = self.begin_noted(turn, ReqKind::Write, offset, len);
        if let Begun::Due { errno, .. } = begun {
            if errno != 0 {
                return Ok((begun, errno));
            }
        }
        let mut old = vec![0u8; len as usize];
        let changed = self.timed(true, || {
            self.image()
                .read_exact_at(&mut old, offset)
                .and_then(|()| match data {
                    Some(d) => self.image().write_all_at(d, offset),
                    None => self.image().punch_hole(offset, len),
                })
        });
        if let Err(e) = changed {
            return Ok((begun, errno_of(&e)));
        }
        let (id, due, done) = times(begun);
        let e = Entry::new(id, offset, old, arrive_ns, due, arrive_model, done);
        journal.write(e, arrive_model, || self.ask_model(arrive_model));
        Ok((begun, 0))
    }

    /// A cache flush in its turn while a cut is planned; the turn back when none is.
    pub(super) fn journaled_flush<'a>(&'a self, turn: Turn<'a>) -> Result<Begun, Turn<'a>> {
        let mut guard = self.cut_state().lock();
        let Some(journal) = guard.as_mut() else {
            return Err(turn);
        };
        let (begun, _, arrive_model) = self.begin_noted(turn, ReqKind::Flush, 0, 0);
        let (id, _, done) = times(begun);
        if !matches!(begun, Begun::Due { errno, .. } if errno != 0) {
            journal.flush(id, arrive_model, done);
        }
        Ok(begun)
    }

    /// A discard or write-zeroes in its turn while a cut is planned: a discard is durable at
    /// once; a write-zeroes is a write like any other, its old contents kept. The turn back
    /// when no cut is planned (or the mode is neither).
    pub(super) fn journaled_fallocate<'a>(
        &'a self,
        turn: Turn<'a>,
        mode: FallocateFlags,
        offset: u64,
        len: u64,
    ) -> Result<(Begun, i32), Turn<'a>> {
        if mode.contains(FallocateFlags::ZERO_RANGE) {
            return self.journaled_write(turn, offset, None, len);
        }
        if !mode.contains(FallocateFlags::PUNCH_HOLE) {
            return Err(turn);
        }
        let mut guard = self.cut_state().lock();
        let Some(journal) = guard.as_mut() else {
            return Err(turn);
        };
        let (begun, _, _) = self.begin_noted(turn, ReqKind::Discard, offset, len);
        if let Begun::Due { errno, .. } = begun {
            if errno != 0 {
                return Ok((begun, errno));
            }
        }
        if let Err(e) = self.image().punch_hole(offset, len) {
            return Ok((begun, errno_of(&e)));
        }
        journal.overwritten(offset, len);
        Ok((begun, 0))
    }
}
