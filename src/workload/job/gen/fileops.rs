//! fio's file engines as a stream's own operations: each "I/O" is one operation on one of
//! the clone's `nrfiles` files or directories, timed alone, as fio's `filecreate` (open with
//! O_CREAT), `filestat` (stat), `filedelete` (unlink), `dircreate` (mkdir), `dirstat` (stat of a
//! directory) and `dirdelete` (rmdir) time them. Files to stat or remove are made in the plan's
//! `prepare` phase (with `filesize` bytes each), as fio makes them while it sets the job up;
//! `filecreate` makes them then too unless `create_on_open` leaves the creating to the run. A
//! pass goes over every file once; passes repeat for `loops`, or until `runtime` with
//! `time_based`; `number_ios` ends the job early.

use super::super::spec::{Engine, JobSpec};
use super::place::{self, FilePlan};
use crate::engine::sources::fsops;
use crate::engine::{Op, OpSource, PrepareCtx, SourceCtx};
use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One clone of a job of a file engine.
pub struct FileOps {
    job: Arc<JobSpec>,
    paths: Vec<PathBuf>,
    cpaths: Vec<CString>,
    /// The next file, and passes done.
    next: usize,
    passes: u64,
    ops: u64,
    /// The readied operation's file.
    at: usize,
    /// A file `filecreate` opened, closed (untimed) before the next operation.
    open: Option<OwnedFd>,
    deadline: Option<Instant>,
    scale: f64,
}

impl FileOps {
    /// Clone `clone` of `job` in the place the stack gave it.
    pub fn new(
        job: Arc<JobSpec>,
        clone: u64,
        files: &FilePlan,
        ctx: &SourceCtx,
    ) -> std::io::Result<FileOps> {
        let dir = &ctx.placement.path;
        if !dir.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "job {}: ioengine={} works on files; give the stack a filesystem (--fs or a dir: target)",
                    job.name,
                    job.ioengine.name()
                ),
            ));
        }
        let names = if job.filename.is_some() {
            files.names.clone()
        } else {
            (0..job.nrfiles)
                .map(|k| format!("{}.{clone}.{k}", place::flat_name(&job.name)))
                .collect()
        };
        let paths: Vec<PathBuf> = names.iter().map(|n| dir.join(n)).collect();
        let cpaths = paths
            .iter()
            .map(|p| CString::new(p.as_os_str().as_bytes()).expect("a path without NUL"))
            .collect();
        Ok(FileOps {
            job,
            paths,
            cpaths,
            next: 0,
            passes: 0,
            ops: 0,
            at: 0,
            open: None,
            deadline: None,
            scale: ctx.time_scale,
        })
    }

    /// The operation each "I/O" is.
    fn op(&self) -> Op {
        match self.job.ioengine {
            Engine::FileCreate => Op::Create,
            Engine::FileDelete => Op::Unlink,
            Engine::DirCreate => Op::Mkdir,
            Engine::DirDelete => Op::Rmdir,
            _ => Op::Stat,
        }
    }

    /// Whether the files must exist before the run.
    fn made_first(&self) -> bool {
        match self.job.ioengine {
            Engine::FileCreate => !self.job.create_on_open,
            Engine::DirCreate => false,
            _ => true,
        }
    }
}

impl OpSource for FileOps {
    fn lay_out(&mut self, _ctx: &PrepareCtx) -> std::io::Result<()> {
        if !self.made_first() {
            return Ok(());
        }
        let dirs = matches!(self.job.ioengine, Engine::DirStat | Engine::DirDelete);
        let size = self.job.filesize.map_or(0, |f| f.0) as usize;
        for p in &self.paths {
            if dirs {
                std::fs::create_dir_all(p)?;
            } else {
                std::fs::write(p, vec![0u8; size])?;
            }
        }
        Ok(())
    }

    fn prepare(&mut self) -> Option<Op> {
        // The file `filecreate` opened is closed outside the timed call.
        self.open = None;
        let j = &self.job;
        let started = *self.deadline.get_or_insert_with(|| {
            let d = if j.runtime > 0.0 {
                Duration::from_secs_f64(j.runtime / self.scale.max(1e-9))
            } else {
                Duration::from_secs(u64::MAX / 4)
            };
            Instant::now() + d
        });
        if Instant::now() >= started || (j.number_ios > 0 && self.ops >= j.number_ios) {
            return None;
        }
        if self.next >= self.paths.len() {
            self.passes += 1;
            if !(j.time_based || self.passes < j.loops) {
                return None;
            }
            self.next = 0;
        }
        self.at = self.next;
        self.next += 1;
        self.ops += 1;
        Some(self.op())
    }

    fn perform(&mut self) -> Result<u64, i32> {
        let p = &self.cpaths[self.at];
        match self.op() {
            Op::Create => {
                let fd = fsops::open_create(p)?;
                self.open = Some(fd);
                Ok(0)
            }
            Op::Unlink => fsops::unlink(p),
            Op::Mkdir => fsops::mkdir(p),
            Op::Rmdir => fsops::rmdir(p),
            _ => fsops::stat(p).map(|_| 0),
        }
    }
}
