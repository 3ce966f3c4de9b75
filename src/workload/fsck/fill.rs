//! The fill: fs_mark's loop as an op source. Each fill thread works in its own empty directory
//! (the stack places it), makes its `dirs` subdirectories one level deep, then for each of its
//! files, placed in the subdirectories in turn: create, write `file_size` bytes, fsync (with the
//! `fsync` policy), close. Every step is one timed operation, as fs_mark times them. The first
//! thread checks, before anything is made, that the filesystem has the inodes and the space
//! for the whole fill, and fails at once with the numbers and the option that fixes it.

use crate::engine::buffer::AlignedBuf;
use crate::engine::rng::SplitMix64;
use crate::engine::sources::fsops;
use crate::engine::sources::source::{OpSource, SourceCtx};
use crate::engine::Op;
use crate::params::{ParamError, Params};
use rustix::fd::OwnedFd;
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The sync policy of `p`, checked.
pub fn sync_policy(p: &Params) -> Result<SyncPolicy, ParamError> {
    let s = p.text("sync");
    SyncPolicy::parse(&s).ok_or_else(|| {
        ParamError::invalid(
            "sync",
            format!("'{s}' is not a policy; allowed: {}", SyncPolicy::NAMES),
        )
    })
}

/// When the fill makes its files durable (fs_mark's `-S`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncPolicy {
    /// Never (`-S 0`); the sync phase after the fill writes everything out.
    None,
    /// fsync before each close (`-S 1`, fs_mark's default).
    Fsync,
    /// One sync of the filesystem after the last file, counted in the fill.
    End,
}

impl SyncPolicy {
    /// Every policy's name, as the `sync` parameter takes it.
    pub const NAMES: &'static str = "none, fsync, end";

    pub fn parse(s: &str) -> Option<SyncPolicy> {
        match s {
            "none" => Some(SyncPolicy::None),
            "fsync" => Some(SyncPolicy::Fsync),
            "end" => Some(SyncPolicy::End),
            _ => None,
        }
    }

    /// fs_mark's `-S` for the same policy (`end` has none of its own: `-S 0` and a sync).
    pub fn fs_mark_s(self) -> u32 {
        match self {
            SyncPolicy::Fsync => 1,
            SyncPolicy::None | SyncPolicy::End => 0,
        }
    }
}

/// What one fill thread does.
#[derive(Debug, Clone, PartialEq)]
pub struct FillSpec {
    /// This thread's files.
    pub files: u64,
    /// Files of the whole fill (the first thread checks room for them all).
    pub total_files: u64,
    /// Directories of the whole fill.
    pub total_dirs: u64,
    pub dirs: u64,
    pub file_size: u64,
    pub sync: SyncPolicy,
}

/// The step readied by `prepare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Mkdir,
    Create,
    Write,
    Fsync,
    Close,
}

/// One fill thread's source.
pub struct Fill {
    root: PathBuf,
    spec: FillSpec,
    data: AlignedBuf,
    seed: u64,
    /// The fill thread's index: the `thread` of its verify headers.
    stream: usize,
    dirs_made: u64,
    /// Files begun (created or failed to create).
    begun: u64,
    step: Option<Step>,
    /// The readied operation's path, built untimed.
    path: CString,
    fd: Option<OwnedFd>,
}

/// Bytes a file of `size` takes at least: whole 4 KiB blocks.
fn blocks_of(size: u64) -> u64 {
    size.div_ceil(4096) * 4096
}

/// Checks that the filesystem holding `dir` has the inodes and the space `spec`'s whole fill
/// needs; the error gives the numbers and the option that fixes it.
pub fn check_room(dir: &Path, spec: &FillSpec) -> io::Result<()> {
    let st = rustix::fs::statvfs(dir)?;
    let inodes = spec.total_files + spec.total_dirs;
    // A filesystem with no fixed inode count (btrfs) reports none.
    if st.f_files > 0 && st.f_favail < inodes {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
            "the fill needs {inodes} inodes ({} files and {} directories) but the filesystem at {} has {} free; make it with more inodes (ext4: mkfs -N {} or a smaller -i; xfs: a larger -i maxpct=), or set fewer files",
            spec.total_files,
            spec.total_dirs,
            dir.display(),
            st.f_favail,
            inodes + inodes / 10,
        )));
    }
    let need = spec.total_files * blocks_of(spec.file_size);
    let free = st.f_bavail * st.f_frsize;
    if free < need {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
            "the fill needs {need} bytes ({} files of {} bytes in whole 4 KiB blocks) but the filesystem at {} has {free} free; use a larger device (size=) or fewer or smaller files",
            spec.total_files,
            spec.file_size,
            dir.display(),
        )));
    }
    Ok(())
}

impl Fill {
    /// The source of fill thread `ctx.index`, in the directory the stack placed it in.
    pub fn make(ctx: &SourceCtx, spec: &FillSpec) -> io::Result<Fill> {
        let root = ctx.placement.path.clone();
        if ctx.index == 0 {
            check_room(&root, spec)?;
        }
        Ok(Fill {
            root,
            data: {
                let mut b = AlignedBuf::new(spec.file_size.max(1) as usize);
                b.fill_random(ctx.seed);
                b
            },
            spec: spec.clone(),
            seed: ctx.seed,
            stream: ctx.index,
            dirs_made: 0,
            begun: 0,
            step: None,
            path: CString::default(),
            fd: None,
        })
    }

    fn dir(&self, i: u64) -> PathBuf {
        self.root.join(format!("d{i:05}"))
    }

    /// File `i`'s path: in directory `i mod dirs`, named by its number and a random part.
    fn file(&self, i: u64) -> PathBuf {
        let r = SplitMix64::new(self.seed ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).next_u64();
        self.dir(i % self.spec.dirs.max(1))
            .join(format!("{i:010x}{:012x}", r & 0xFFFF_FFFF_FFFF))
    }

    /// The step after `done`.
    fn after(&self, done: Option<Step>) -> Option<Step> {
        let fsync = self.spec.sync == SyncPolicy::Fsync;
        match done {
            None | Some(Step::Mkdir) if self.dirs_made < self.spec.dirs => Some(Step::Mkdir),
            None | Some(Step::Mkdir) | Some(Step::Close) => {
                (self.begun < self.spec.files).then_some(Step::Create)
            }
            Some(Step::Create) if self.fd.is_none() => self.after(Some(Step::Close)),
            Some(Step::Create) if self.spec.file_size > 0 => Some(Step::Write),
            Some(Step::Create) | Some(Step::Write) if fsync => Some(Step::Fsync),
            Some(Step::Create) | Some(Step::Write) | Some(Step::Fsync) => Some(Step::Close),
        }
    }
}

impl OpSource for Fill {
    fn prepare(&mut self) -> Option<Op> {
        let step = self.after(self.step)?;
        let path = match step {
            Step::Mkdir => Some(self.dir(self.dirs_made)),
            Step::Create => Some(self.file(self.begun)),
            _ => None,
        };
        if let Some(p) = path {
            self.path = CString::new(p.as_os_str().as_bytes()).expect("no NUL in a path");
        }
        if step == Step::Write {
            // The file's own verify headers, untimed.
            let len = self.spec.file_size as usize;
            fsops::seal_file(&mut self.data, len, self.stream, self.seed, self.begun - 1);
        }
        self.step = Some(step);
        Some(match step {
            Step::Mkdir => Op::Mkdir,
            Step::Create => Op::Create,
            Step::Write => Op::Write,
            Step::Fsync => Op::Fsync,
            Step::Close => Op::Close,
        })
    }

    fn perform(&mut self) -> Result<u64, i32> {
        match self.step.expect("prepared") {
            Step::Mkdir => {
                self.dirs_made += 1;
                fsops::mkdir(&self.path)
            }
            Step::Create => {
                self.begun += 1;
                self.fd = Some(fsops::create(&self.path, false)?);
                Ok(0)
            }
            Step::Write => {
                let fd = self.fd.as_ref().expect("created");
                fsops::write_all(fd, &self.data, self.spec.file_size as usize)
            }
            Step::Fsync => fsops::fsync(self.fd.as_ref().expect("created")),
            Step::Close => fsops::close(self.fd.take().expect("created")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_read_as_fs_mark_names_them() {
        assert_eq!(SyncPolicy::parse("fsync"), Some(SyncPolicy::Fsync));
        assert_eq!(SyncPolicy::parse("end").map(SyncPolicy::fs_mark_s), Some(0));
        assert_eq!(SyncPolicy::Fsync.fs_mark_s(), 1);
        assert_eq!(SyncPolicy::parse("always"), None);
    }

    #[test]
    fn room_is_checked_with_the_numbers_and_the_fix() {
        let d = tempfile::tempdir().unwrap();
        let spec = FillSpec {
            files: u64::MAX / 8192,
            total_files: u64::MAX / 8192,
            total_dirs: 1,
            dirs: 1,
            file_size: 0,
            sync: SyncPolicy::None,
        };
        let e = check_room(d.path(), &spec).unwrap_err().to_string();
        assert!(e.contains("inodes") && e.contains("mkfs -N"), "{e}");
        let big = FillSpec {
            files: 1,
            total_files: 1,
            file_size: u64::MAX / 2,
            ..spec
        };
        let e = check_room(d.path(), &big).unwrap_err().to_string();
        assert!(e.contains("bytes") && e.contains("larger device"), "{e}");
    }
}
