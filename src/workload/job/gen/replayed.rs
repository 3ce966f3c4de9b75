//! A clone replaying an iolog (`read_iolog`): its next request, drawn from the
//! [`crate::trace::replay::Replayer`] once and kept until it goes, what must happen before it
//! may go (its time, or what is in flight before a sync), and the request as an I/O of the
//! clone's files.

use super::generator::JobGen;
use crate::engine::Next;
use crate::engine::{Io, Op};
use crate::trace::replay::Step;
use crate::trace::TraceKind;

impl JobGen {
    /// A replay's next request, drawn once and kept until it goes; `None` once the log is done.
    pub(super) fn replay_peek(&mut self) -> Option<Step> {
        if self.replay_next.is_none() {
            self.replay_next = self.replay.as_mut()?.next_step();
        }
        self.replay_next
    }

    /// What a replay must do before its next request may go: wait for its time, or (a sync)
    /// for what is in flight; `None` when it may go now, or the log is done.
    pub(super) fn replay_wait(&mut self, now: u64, in_flight: usize) -> Option<Next> {
        let step = self.replay_peek()?;
        let t0 = *self.replay_t0.get_or_insert(now);
        if let Some(due) = step.due_ns {
            let at = t0 + (due as f64 * self.ns_per_s / 1e9) as u64;
            if now < at {
                return Some(Next::Wait(at));
            }
            self.replay_at = Some(at);
        }
        let sync = matches!(step.op.kind, TraceKind::Sync | TraceKind::Datasync);
        (sync && in_flight > 0).then_some(Next::Reap(0))
    }

    /// The replay's next request as an I/O of the job's files.
    pub(super) fn replayed(&mut self) -> Option<Io> {
        let step = self.replay_peek()?;
        self.replay_next = None;
        let o = step.op;
        let f = if self.c.job.replay.redirect.is_some() {
            0
        } else {
            (o.file as usize).min(self.files.len().saturating_sub(1))
        };
        let file = &self.files[f];
        let op = match o.kind {
            TraceKind::Read => Op::Read,
            TraceKind::Write => Op::Write,
            TraceKind::Trim => Op::Trim,
            TraceKind::Sync => Op::Fsync,
            TraceKind::Datasync => Op::Fdatasync,
        };
        let len = if op.is_data() || op == Op::Trim {
            o.len.min(u64::from(u32::MAX)) as u32
        } else {
            0
        };
        self.pass_ios += 1;
        Some(Io {
            file: f as u32,
            op,
            offset: file.base + file.start + o.offset,
            len,
            ..Io::default()
        })
    }
}
