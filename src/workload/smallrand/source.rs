//! The operations of one smallrand thread on its own file, stage by stage as iozone's tests
//! run: initial write, rewrite, read, reread (sequential, record by record), then random read
//! and random write (as many records as the file holds, at random record offsets). Each stage
//! ends its phase; the next phase continues with the next stage.

use super::STAGES;
use crate::engine::buffer::AlignedBuf;
use crate::engine::rng::SplitMix64;
use crate::engine::{sources::fsops, Op, OpSource, SourceCtx};
use crate::workload::place::{self, Target};

/// One thread's file and where it is in its stages.
pub struct SmallRand {
    target: Target,
    records: u64,
    record: usize,
    buf: AlignedBuf,
    rng: SplitMix64,
    stage: usize,
    done: u64,
    ready: (Op, u64),
}

impl SmallRand {
    /// Opens the thread's file (`iozone.<index>`) or raw region.
    pub fn make(
        ctx: &SourceCtx,
        file_size: u64,
        record: u64,
    ) -> std::io::Result<Box<dyn OpSource>> {
        let target = place::open(ctx, &format!("iozone.{}", ctx.index), file_size)?;
        let mut buf = AlignedBuf::new(record as usize);
        buf.fill_random(ctx.seed);
        Ok(Box::new(SmallRand {
            target,
            records: file_size / record,
            record: record as usize,
            buf,
            rng: SplitMix64::new(ctx.seed ^ 0x5a17),
            stage: 0,
            done: 0,
            ready: (Op::Write, 0),
        }))
    }
}

impl OpSource for SmallRand {
    fn prepare(&mut self) -> Option<Op> {
        let &(_, op, random) = STAGES.get(self.stage)?;
        if self.done == self.records {
            self.stage += 1;
            self.done = 0;
            return None;
        }
        let n = if random {
            self.rng.below(self.records)
        } else {
            self.done
        };
        self.done += 1;
        self.ready = (op, n * self.record as u64);
        Some(op)
    }

    fn perform(&mut self) -> Result<u64, i32> {
        let (op, off) = self.ready;
        let at = self.target.base + off;
        match op {
            Op::Read => fsops::read_at(&self.target.fd, &mut self.buf, self.record, at),
            _ => fsops::write_at(&self.target.fd, &self.buf, self.record, at),
        }
    }

    fn offset(&self) -> u64 {
        self.ready.1
    }
}
