//! The replay's source: the trace's reads, writes and syncs in order (trims are skipped), each
//! offset folded into the target (modulo its size, aligned down to 4 KiB, the request kept
//! inside it), due at its traced time after the first request in `original` pace (the
//! [`Replayer`] a fio job's `read_iolog` replays with too).

use crate::engine::buffer::AlignedBuf;
use crate::engine::{sources::fsops, Op, OpSource, SourceCtx};
use crate::trace::replay::{ReplayOptions, Replayer};
use crate::trace::{Trace, TraceKind};
use crate::workload::place::{self, Target};
use std::sync::Arc;

pub struct ReplaySource {
    replay: Replayer,
    target: Target,
    buf: AlignedBuf,
    ready: (Op, u64, usize, Option<u64>),
}

impl ReplaySource {
    pub fn make(
        ctx: &SourceCtx,
        trace: Arc<Trace>,
        len: u64,
        pace: bool,
    ) -> std::io::Result<Box<dyn OpSource>> {
        let target = place::open(ctx, "replay.dat", len)?;
        if ctx.placement.path.is_dir() {
            rustix::fs::ftruncate(&target.fd, len).map_err(std::io::Error::from)?;
        }
        let biggest = trace
            .ops
            .iter()
            .map(|o| o.len)
            .max()
            .unwrap_or(4096)
            .max(4096);
        let mut buf = AlignedBuf::new(biggest.min(target.len) as usize);
        buf.fill_random(ctx.seed);
        // Trims are skipped; the rest at its traced time, or as fast as possible.
        let opts = ReplayOptions {
            no_stall: !pace,
            skip: [false, false, true, false],
            ..ReplayOptions::default()
        };
        Ok(Box::new(ReplaySource {
            replay: Replayer::new(trace, opts),
            target,
            buf,
            ready: (Op::Read, 0, 0, None),
        }))
    }
}

impl OpSource for ReplaySource {
    fn prepare(&mut self) -> Option<Op> {
        let step = self.replay.next_step()?;
        let o = step.op;
        let op = match o.kind {
            TraceKind::Read => Op::Read,
            TraceKind::Write => Op::Write,
            _ => Op::Fsync,
        };
        let cap = self.target.len;
        let len = o.len.min(cap).min(self.buf.as_slice().len() as u64);
        let mut off = (o.offset % cap) & !4095;
        if off + len > cap {
            off = (cap - len) & !4095;
        }
        self.ready = (op, off, len as usize, step.due_ns);
        Some(op)
    }

    fn perform(&mut self) -> Result<u64, i32> {
        let (op, off, len, _) = self.ready;
        let at = self.target.base + off;
        match op {
            Op::Read => fsops::read_at(&self.target.fd, &mut self.buf, len, at),
            Op::Write => fsops::write_at(&self.target.fd, &self.buf, len, at),
            _ => fsops::fsync(&self.target.fd),
        }
    }

    fn offset(&self) -> u64 {
        self.ready.1
    }

    fn due_ns(&self) -> Option<u64> {
        self.ready.3
    }
}
