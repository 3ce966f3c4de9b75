//! The `files` layout: one file per stream inside a fresh subdirectory of the target
//! directory, created in stream order with fallocate (so they lie on disk in that order on a
//! fresh filesystem), or empty for streams that append (the filesystem allocates as they
//! write); read streams' files filled with random data. A stream without a region size gets an
//! equal share of the free space. Everything it made is removed when the layout is dropped.

use super::ledger::Ledger;
use super::resource::Resource;
use super::StackError;
use crate::engine::buffer::AlignedBuf;
use crate::engine::{open_target, Op, Pattern, Placement, Plan};
use crate::mountinfo;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Files made for one trial; removed on drop.
#[derive(Debug)]
pub struct FileLayout {
    dir: PathBuf,
    pub placements: Vec<Placement>,
    /// Whether O_DIRECT works on these files.
    pub direct_ok: bool,
    /// The filesystem type of the directory, as the kernel names it (`ext4`, `tmpfs`).
    pub fs_type: String,
    pub warnings: Vec<String>,
}

impl FileLayout {
    /// The directory holding the files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for FileLayout {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Bytes free to an unprivileged writer on the filesystem holding `path`.
pub fn free_bytes(path: &Path) -> std::io::Result<u64> {
    let s = rustix::fs::statvfs(path).map_err(std::io::Error::from)?;
    Ok(s.f_bavail * s.f_frsize)
}

/// The filesystem type holding `path` (`ext4`, `tmpfs`), or `unknown`.
fn fs_type_of(path: &Path) -> String {
    mountinfo::mount_of(path).map_or_else(|| "unknown".into(), |m| m.fs_type)
}

/// A fresh, empty subdirectory of `parent` for one trial's files, in the ledger before it
/// exists (so a killed run's files are removed by its device server or `iotrial cleanup`).
fn stream_dir(parent: &Path, spec: &str, ledger: &mut Ledger) -> Result<PathBuf, StackError> {
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    loop {
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let dir = parent.join(format!("iotrial-{}-{n}", std::process::id()));
        if dir.exists() {
            continue;
        }
        ledger
            .record(Resource::TempDir { path: dir.clone() })
            .map_err(|e| StackError::io("write the ledger", e))?;
        return match std::fs::create_dir(&dir) {
            Ok(()) => Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => Err(StackError::Target {
                spec: spec.to_string(),
                message: format!("{} is not writable ({e})", parent.display()),
            }),
        };
    }
}

/// Creates the files of `plan` in a new subdirectory of `parent`. `stop` is polled while
/// filling read files so Ctrl-C is honoured within a second.
pub fn create(
    parent: &Path,
    plan: &Plan,
    ledger: &mut Ledger,
    stop: &AtomicBool,
) -> Result<FileLayout, StackError> {
    let spec = format!("dir:{}", parent.display());
    let meta = std::fs::metadata(parent).map_err(|e| StackError::Target {
        spec: spec.clone(),
        message: format!(
            "{} does not exist or cannot be read ({e})",
            parent.display()
        ),
    })?;
    if !meta.is_dir() {
        return Err(StackError::Target {
            spec,
            message: format!("{} is not a directory", parent.display()),
        });
    }
    let dir = stream_dir(parent, &spec, ledger)?;
    let mut layout = FileLayout {
        dir: dir.clone(),
        placements: Vec::new(),
        direct_ok: plan.direct,
        fs_type: fs_type_of(&dir),
        warnings: Vec::new(),
    };
    let free =
        free_bytes(&dir).map_err(|e| StackError::io(format!("statvfs {}", dir.display()), e))?;
    let lens = region_lengths(plan, free).map_err(|needed| StackError::NoSpace {
        path: parent.display().to_string(),
        needed,
        free,
    })?;
    let mut sparse = false;
    for (i, (s, &len)) in plan.streams.iter().zip(&lens).enumerate() {
        if s.source.is_some() {
            // A stream doing its own operations gets an empty directory of its own.
            let path = dir.join(format!("{i:02}-{}", s.name));
            std::fs::create_dir(&path)
                .map_err(|e| StackError::io(format!("mkdir {}", path.display()), e))?;
            layout.placements.push(Placement {
                path,
                offset: 0,
                len,
            });
            continue;
        }
        let path = dir.join(format!("{i:02}-{}.dat", s.name));
        if s.pattern == Pattern::Append && s.op == Op::Write {
            create_empty(&path)?;
        } else {
            sparse |= !allocate(&path, len)?;
        }
        layout.placements.push(Placement {
            path,
            offset: 0,
            len,
        });
    }
    if sparse {
        layout.warnings.push(format!(
            "{} does not support fallocate; files are sparse and blocks are allocated during the run",
            layout.fs_type
        ));
    }
    if plan.direct && !direct_works_in(&dir)? {
        layout.direct_ok = false;
        layout.warnings.push(format!(
            "{} refuses O_DIRECT; falling back to buffered I/O (access times include the page cache)",
            layout.fs_type
        ));
    }
    for (s, p) in plan.streams.iter().zip(&layout.placements) {
        if s.op == Op::Read && s.source.is_none() {
            fill_random(&p.path, 0, p.len, layout.direct_ok, stop)?;
        }
    }
    Ok(layout)
}

/// Each stream's region: its own size, or for those without one, an equal share of what `free`
/// bytes leave after the others (whole I/Os). 1% + 64 MiB of `free` is kept as headroom for the
/// filesystem's own metadata. Err(bytes needed) when they do not fit.
/// A stream doing its own operations takes its `region_len` (what it will write, 0 when it
/// does not say) and no share.
pub fn region_lengths(plan: &Plan, free: u64) -> Result<Vec<u64>, u64> {
    let fixed: u64 = plan.streams.iter().map(|s| s.region_len).sum();
    let shares = |s: &&crate::engine::StreamPlan| s.region_len == 0 && s.source.is_none();
    let sharing = plan.streams.iter().filter(shares).count() as u64;
    let headroom = |n: u64| n / 100 + (64 << 20);
    if fixed + headroom(fixed) > free {
        return Err(fixed + headroom(fixed));
    }
    let share = free
        .saturating_sub(fixed + headroom(free))
        .checked_div(sharing)
        .unwrap_or(0);
    plan.streams
        .iter()
        .map(|s| match s.region_len {
            0 if s.source.is_some() => Ok(0),
            0 if share < s.io_size => Err(fixed + headroom(free) + sharing * s.io_size),
            0 => Ok(share - share % s.io_size),
            n => Ok(n),
        })
        .collect()
}

/// Creates the empty file `path`, for a stream that appends to it.
fn create_empty(path: &Path) -> Result<(), StackError> {
    std::fs::OpenOptions::new()
        .create_new(true)
        .write(true)
        .open(path)
        .map(|_| ())
        .map_err(|e| StackError::io(format!("create {}", path.display()), e))
}

/// Creates the file `path` of `len` bytes, allocated with fallocate; false when the filesystem
/// cannot allocate ahead and the file is sparse.
fn allocate(path: &Path, len: u64) -> Result<bool, StackError> {
    let f = std::fs::OpenOptions::new()
        .create_new(true)
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| StackError::io(format!("create {}", path.display()), e))?;
    match rustix::fs::fallocate(&f, rustix::fs::FallocateFlags::empty(), 0, len) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::OPNOTSUPP) => {
            f.set_len(len)
                .map_err(|e| StackError::io(format!("size {}", path.display()), e))?;
            Ok(false)
        }
        Err(e) => Err(StackError::io(
            format!("fallocate {}", path.display()),
            e.into(),
        )),
    }
}

/// Whether an aligned O_DIRECT read of `path` succeeds.
/// Whether O_DIRECT reads work in `dir`, tried on a 4 KiB file made there and removed.
fn direct_works_in(dir: &Path) -> Result<bool, StackError> {
    let probe = dir.join(".direct-probe");
    allocate(&probe, 4096)?;
    let ok = direct_works(&probe);
    let _ = std::fs::remove_file(&probe);
    Ok(ok)
}

fn direct_works(path: &Path) -> bool {
    let Ok(f) = open_target(path, Op::Read, true) else {
        return false;
    };
    let mut b = AlignedBuf::new(4096);
    f.read_at(b.as_mut_slice(), 0).is_ok()
}

/// Writes random data over `len` bytes of `path` from `start`, then syncs it.
pub fn fill_random(
    path: &Path,
    start: u64,
    len: u64,
    direct: bool,
    stop: &AtomicBool,
) -> Result<(), StackError> {
    const CHUNK: u64 = 4 << 20;
    let mut f = open_target(path, Op::Write, direct)
        .map_err(|e| StackError::io(format!("open {}", path.display()), e))?;
    let mut buf = AlignedBuf::new(CHUNK as usize);
    let mut off = 0;
    let mut seed = 0x5eed;
    while off < len {
        if stop.load(Ordering::Relaxed) {
            return Err(StackError::Interrupted);
        }
        seed += 1;
        buf.fill_random(seed);
        let n = CHUNK.min(len - off) as usize;
        f.write_all_at(&buf.as_slice()[..n], start + off)
            .map_err(|e| StackError::io(format!("fill {}", path.display()), e))?;
        off += n as u64;
    }
    f.flush().ok();
    f.sync_all()
        .map_err(|e| StackError::io(format!("sync {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cause::{Cause, HasCause};
    use crate::engine::{Pacing, Pattern, StreamPlan};

    fn plan(region: u64) -> Plan {
        let s = |name: &str, op| StreamPlan {
            name: name.into(),
            role: "x".into(),
            op,
            region_len: region,
            io_size: 4096,
            pattern: Pattern::Random,
            pacing: Pacing::Max,
            samples: 1,
            io: Default::default(),
            source: None,
        };
        let streams = vec![s("playback0", Op::Read), s("record0", Op::Write)];
        Plan::sampled("run", streams, true, 1)
    }

    #[test]
    fn creates_fills_and_removes() {
        let tmp = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let made;
        {
            let l = create(tmp.path(), &plan(1 << 20), &mut Ledger::detached(), &stop).unwrap();
            made = l.dir.clone();
            assert_eq!(l.placements.len(), 2);
            assert!(l.placements[0]
                .path
                .to_string_lossy()
                .contains("00-playback0"));
            let data = std::fs::read(&l.placements[0].path).unwrap();
            assert_eq!(data.len(), 1 << 20);
            assert!(
                data.iter().filter(|&&b| b == 0).count() < 20_000,
                "read file holds random data"
            );
            assert_eq!(
                std::fs::metadata(&l.placements[1].path).unwrap().len(),
                1 << 20
            );
        }
        assert!(!made.exists(), "layout removed on drop");
    }

    #[test]
    fn streams_without_a_size_share_the_free_space_and_appenders_start_empty() {
        let mut p = plan(1 << 20);
        p.streams[1].region_len = 0;
        p.streams[1].pattern = Pattern::Append;
        let free = 1 << 30;
        let lens = region_lengths(&p, free).unwrap();
        let share = free - (1 << 20) - (free / 100 + (64 << 20));
        assert_eq!(lens, [1 << 20, share - share % 4096]);
        assert!(region_lengths(&p, 65 << 20).is_err());
        let tmp = tempfile::tempdir().unwrap();
        let l = create(
            tmp.path(),
            &p,
            &mut Ledger::detached(),
            &AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!(std::fs::metadata(&l.placements[1].path).unwrap().len(), 0);
        assert!(l.placements[1].len > 0);
    }

    #[test]
    fn filesystem_type_comes_from_mountinfo() {
        assert_eq!(fs_type_of(Path::new("/proc/self")), "proc");
        assert_eq!(fs_type_of(Path::new("/no/such/path")), "unknown");
    }

    #[test]
    fn refuses_what_does_not_fit() {
        let tmp = tempfile::tempdir().unwrap();
        let e = create(
            tmp.path(),
            &plan(1 << 60),
            &mut Ledger::detached(),
            &AtomicBool::new(false),
        )
        .unwrap_err();
        assert!(e.to_string().contains("region_size"), "{e}");
        assert_eq!(
            std::fs::read_dir(tmp.path()).unwrap().count(),
            0,
            "nothing left on disk"
        );
        let e = create(
            &tmp.path().join("nope"),
            &plan(4096),
            &mut Ledger::detached(),
            &AtomicBool::new(false),
        )
        .unwrap_err();
        assert!(
            e.why() == Cause::Input && e.to_string().contains("does not exist"),
            "{e}"
        );
    }
}
