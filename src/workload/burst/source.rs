//! The two sources of `burst`. The updater creates the rrd files, then in each burst updates
//! every file as rrdtool does: open, read the header, read-modify-write one 4 KiB row per
//! archive at the archive's current position (which advances with every update), write the
//! header, close. A victim fills its own file, then reads 4 KiB at random offsets (paced by
//! the stream) until the updater has finished its burst; between bursts it reads until the
//! gap phase's duration ends.

use crate::engine::buffer::AlignedBuf;
use crate::engine::rng::SplitMix64;
use crate::engine::{sources::fsops, Op, OpSource, SourceCtx};
use crate::workload::place::{self, Target};
use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Bytes of a row, and of the header.
pub const ROW: u64 = 4096;

/// What the updater and the victims share: whether the updater has finished a burst (each
/// victim ends its part of the burst phase when it sees it).
#[derive(Debug, Default)]
pub struct Shared {
    pub burst_over: Vec<AtomicBool>,
}

/// The shape of the files.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub files: u64,
    pub file_size: u64,
    pub archives: u64,
    pub updates: u64,
}

impl Shape {
    /// Rows per archive.
    pub fn rows(&self) -> u64 {
        ((self.file_size - ROW) / ROW / self.archives).max(1)
    }
}

/// One step of the updater.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    Create,
    Fill,
    Open,
    Header,
    Row { archive: u64, write: bool },
    WriteHeader,
    Close,
}

/// The updater.
pub struct Updater {
    paths: Vec<CString>,
    shape: Shape,
    shared: Arc<Shared>,
    fill: AlignedBuf,
    row: AlignedBuf,
    fd: Option<OwnedFd>,
    /// 0: creating; b + 1: burst b.
    stage: u64,
    file: u64,
    update: u64,
    step: Step,
    /// The readied step, its offset and its file.
    ready: (Step, u64, usize),
}

impl Updater {
    pub fn make(
        ctx: &SourceCtx,
        shape: Shape,
        shared: Arc<Shared>,
    ) -> std::io::Result<Box<dyn OpSource>> {
        let dir = &ctx.placement.path;
        if !dir.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "burst needs a filesystem: its rrd files are files",
            ));
        }
        let paths = (0..shape.files)
            .map(|i| CString::new(dir.join(format!("{i:05}.rrd")).as_os_str().as_bytes()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(std::io::Error::other)?;
        let mut fill = AlignedBuf::new(shape.file_size as usize);
        fill.fill_random(ctx.seed);
        Ok(Box::new(Updater {
            paths,
            shape,
            shared,
            fill,
            row: AlignedBuf::new(ROW as usize),
            fd: None,
            stage: 0,
            file: 0,
            update: 0,
            step: Step::Create,
            ready: (Step::Create, 0, 0),
        }))
    }

    /// The step after `s` in the current stage; None at the end of a file.
    fn after(&self, s: Step) -> Option<Step> {
        let a = self.shape.archives;
        match s {
            Step::Create => Some(Step::Fill),
            Step::Fill | Step::Close => None,
            Step::Open => Some(Step::Header),
            Step::Header => Some(Step::Row {
                archive: 0,
                write: false,
            }),
            Step::Row {
                archive,
                write: false,
            } => Some(Step::Row {
                archive,
                write: true,
            }),
            Step::Row {
                archive,
                write: true,
            } if archive + 1 < a => Some(Step::Row {
                archive: archive + 1,
                write: false,
            }),
            Step::Row { .. } => Some(Step::WriteHeader),
            Step::WriteHeader => Some(Step::Close),
        }
    }

    /// Where archive `a`'s current row is, in the current update.
    fn row_at(&self, archive: u64) -> u64 {
        let n = (self.stage - 1) * self.shape.updates + self.update;
        ROW + (archive * self.shape.rows() + n % self.shape.rows()) * ROW
    }
}

impl OpSource for Updater {
    fn prepare(&mut self) -> Option<Op> {
        if self.file == self.shape.files {
            // The stage is over: the victims end their part of a burst phase.
            if self.stage > 0 {
                if let Some(f) = self.shared.burst_over.get((self.stage - 1) as usize) {
                    f.store(true, Ordering::Release);
                }
            }
            self.stage += 1;
            self.file = 0;
            self.update = 0;
            self.step = Step::Open;
            return None;
        }
        let s = self.step;
        let (op, off) = match s {
            Step::Create => (Op::Create, 0),
            Step::Fill => (Op::Write, 0),
            Step::Open => (Op::Open, 0),
            Step::Header => (Op::Read, 0),
            Step::Row { archive, write } => (
                if write { Op::Write } else { Op::Read },
                self.row_at(archive),
            ),
            Step::WriteHeader => (Op::Write, 0),
            Step::Close => (Op::Close, 0),
        };
        self.ready = (s, off, self.file as usize);
        match self.after(s) {
            Some(next) => self.step = next,
            None if s == Step::Close && self.update + 1 < self.shape.updates => {
                self.update += 1;
                self.step = Step::Open;
            }
            None => {
                self.file += 1;
                self.update = 0;
                self.step = if self.stage == 0 {
                    Step::Create
                } else {
                    Step::Open
                };
            }
        }
        Some(op)
    }

    fn perform(&mut self) -> Result<u64, i32> {
        let (s, off, file) = self.ready;
        let path = &self.paths[file];
        match s {
            Step::Create => {
                self.fd = Some(fsops::create(path, false)?);
                Ok(0)
            }
            Step::Open => {
                self.fd = Some(fsops::open_rw(path, false, false)?);
                Ok(0)
            }
            Step::Fill => {
                let fd = self.fd.take().ok_or(libc_ebadf())?;
                let n = fsops::write_all(&fd, &self.fill, self.shape.file_size as usize)?;
                fsops::close(fd)?;
                Ok(n)
            }
            Step::Close => fsops::close(self.fd.take().ok_or(libc_ebadf())?),
            Step::Header => fsops::read_at(
                self.fd.as_ref().ok_or(libc_ebadf())?,
                &mut self.row,
                ROW as usize,
                0,
            ),
            Step::Row { write: false, .. } => fsops::read_at(
                self.fd.as_ref().ok_or(libc_ebadf())?,
                &mut self.row,
                ROW as usize,
                off,
            ),
            Step::Row { write: true, .. } | Step::WriteHeader => {
                self.row.as_mut_slice()[0] ^= 1;
                fsops::write_at(
                    self.fd.as_ref().ok_or(libc_ebadf())?,
                    &self.row,
                    ROW as usize,
                    off,
                )
            }
        }
    }

    fn offset(&self) -> u64 {
        self.ready.1
    }
}

/// EBADF: an operation without its open file (a bug in the order of steps).
fn libc_ebadf() -> i32 {
    9
}

/// A victim.
pub struct Victim {
    target: Target,
    buf: AlignedBuf,
    rng: SplitMix64,
    shared: Arc<Shared>,
    filled: u64,
    burst: usize,
    ready: (Op, u64),
}

/// Bytes per write while a victim fills its file.
const FILL: u64 = 1 << 20;

impl Victim {
    pub fn make(
        ctx: &SourceCtx,
        len: u64,
        shared: Arc<Shared>,
    ) -> std::io::Result<Box<dyn OpSource>> {
        let target = place::open(ctx, "victim.db", len)?;
        let mut buf = AlignedBuf::new(FILL as usize);
        buf.fill_random(ctx.seed);
        Ok(Box::new(Victim {
            target,
            buf,
            rng: SplitMix64::new(ctx.seed ^ 0xdb),
            shared,
            filled: 0,
            burst: 0,
            ready: (Op::Write, 0),
        }))
    }
}

impl OpSource for Victim {
    fn prepare(&mut self) -> Option<Op> {
        let len = self.target.len - self.target.len % ROW;
        if self.filled < len {
            self.ready = (Op::Write, self.filled);
            self.filled += FILL.min(len - self.filled);
            return Some(Op::Write);
        }
        if self.filled == len {
            // The file is full: end the create phase.
            self.filled += 1;
            return None;
        }
        if let Some(f) = self.shared.burst_over.get(self.burst) {
            if f.load(Ordering::Acquire) {
                self.burst += 1;
                return None;
            }
        }
        self.ready = (Op::Read, self.rng.below(len / ROW) * ROW);
        Some(Op::Read)
    }

    fn perform(&mut self) -> Result<u64, i32> {
        let (op, off) = self.ready;
        let at = self.target.base + off;
        match op {
            Op::Write => {
                let n = (self.target.len - self.target.len % ROW - off).min(FILL) as usize;
                fsops::write_at(&self.target.fd, &self.buf, n, at)
            }
            _ => fsops::read_at(&self.target.fd, &mut self.buf, ROW as usize, at),
        }
    }

    fn offset(&self) -> u64 {
        self.ready.1
    }
}
