//! A job clone's files and how they are laid out, as fio lays them out: on a filesystem, the
//! job's files in the directory the stack gave it (`filename`'s names, shared by every job
//! naming them, or `jobname.clone.file` for `nrfiles` files of the clone's own); on a raw
//! layout, the region the stack gave it, as one file; a job replaying an iolog uses the files
//! the log names, as big as it reaches in them. Before the job starts (the plan's `prepare`
//! phase) the clone that owns a file lays it out: created, allocated as `fallocate` says, and
//! for a job that reads (or `overwrite`) written whole and synced (a job that checks what it
//! reads keeps a file already big enough); then read once with `pre_read`.

use super::super::spec::{Amount, Fallocate, JobSpec, SyncMode};
use crate::engine::rng::SplitMix64;
use crate::engine::{FillSeal, Placement, PrepareCtx};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// One file of a clone.
#[derive(Debug, Clone, PartialEq)]
pub struct JobFile {
    pub path: PathBuf,
    /// Added to every offset: where the file's bytes start on the device (raw), else 0.
    pub base: u64,
    /// The clone's I/O goes to [start, start + len) of the file.
    pub start: u64,
    pub len: u64,
    /// Bytes the file is laid out to (a raw region's length on a raw layout).
    pub size: u64,
    /// The stack gave a raw device region, not a file.
    pub raw: bool,
}

/// What the plan decided about a clone's files.
#[derive(Debug, Clone, PartialEq)]
pub struct FilePlan {
    /// The clone lays its files out (the first clone naming a shared file, or a clone with
    /// files of its own).
    pub owner: bool,
    /// File names in the job's directory.
    pub names: Vec<String>,
    /// Bytes each file is laid out to, when the plan knows it (the most any job sharing it
    /// reaches), else 0 (a share of the target: known once placed).
    pub sizes: Vec<u64>,
    /// Some job using the files reads them: they are written whole before the jobs start.
    pub fill: bool,
}

/// A name for a file of fio's `filename` inside the job's directory: fio's name with its
/// directories flattened (`/dev/sda` is `dev_sda`).
pub fn flat_name(name: &str) -> String {
    let n: String = name
        .trim_start_matches('/')
        .chars()
        .map(|c| {
            if c == '/' || c.is_whitespace() {
                '_'
            } else {
                c
            }
        })
        .collect();
    if n.is_empty() || n == "." || n == ".." {
        "file".into()
    } else {
        n
    }
}

/// The iolog clone `clone` replays (`read_iolog`), if the job replays one.
pub fn replay_log(j: &JobSpec, clone: u64) -> Option<&crate::trace::Trace> {
    let logs = &j.replay.logs;
    (!logs.is_empty()).then(|| logs[clone as usize % logs.len()].1.as_ref())
}

/// The clone's file names: `filename`'s, those its iolog names (or `replay_redirect`), or
/// fio's `jobname.clone.file` (`filename_format`'s when given).
pub fn names(j: &JobSpec, clone: u64) -> Vec<String> {
    if let Some(r) = &j.replay.redirect {
        return vec![flat_name(r)];
    }
    if let Some(t) = replay_log(j, clone) {
        return t.files.iter().map(|f| flat_name(f)).collect();
    }
    match &j.filename {
        Some(f) => f
            .split(':')
            .filter(|s| !s.is_empty())
            .map(flat_name)
            .collect(),
        None => (0..j.nrfiles)
            .map(|k| match &j.filename_format {
                Some(f) => flat_name(
                    &f.replace("$jobname", &j.name)
                        .replace("$jobnum", &clone.to_string())
                        .replace("$filenum", &k.to_string())
                        .replace("$clientuid", "0"),
                ),
                None => format!("{}.{clone}.{k}", flat_name(&j.name)),
            })
            .collect(),
    }
}

/// Bytes a replayed file is laid out to: as far as the log reaches in it, in whole 4 KiB.
fn replay_size(t: &crate::trace::Trace, j: &JobSpec) -> u64 {
    let reach = match &j.replay.redirect {
        Some(_) => t.extent(),
        None => (0..t.files.len() as u32)
            .map(|f| t.extent_of(f))
            .max()
            .unwrap_or(0),
    };
    let scale = j.replay.options.scale.max(1);
    (reach / scale).div_ceil(4096).max(1) * 4096
}

/// Bytes of each file of the clone: `filesize` (a range drawn per file, seeded), else `size`
/// spread over the files; `whole` is the place's length (for `size=N%`), `zone` fio's
/// `zonesize`.
pub fn file_sizes(j: &JobSpec, clone: u64, n: usize, whole: u64, zone: u64) -> Vec<u64> {
    if let Some(t) = replay_log(j, clone) {
        return vec![replay_size(t, j); n];
    }
    let mut r = SplitMix64::new(j.randseed ^ clone.wrapping_mul(0x9E37_79B9));
    (0..n)
        .map(|_| match j.filesize {
            Some((lo, hi)) if hi > lo => lo + r.below(hi - lo + 1),
            Some((lo, _)) => lo,
            None => j.size.of(whole, zone) / n.max(1) as u64,
        })
        .collect()
}

/// Where clone `clone`'s I/O starts in each file: a percentage `offset` aligned up to
/// `offset_align` (else the smallest block size), as fio aligns it.
pub fn start_of(j: &JobSpec, clone: u64, whole: u64, zone: u64) -> u64 {
    if replay_log(j, clone).is_some() {
        // A replay's offsets are the log's own.
        return 0;
    }
    let mut offset = j.offset.of(whole, zone);
    if matches!(j.offset, Amount::Percent(_)) {
        let align = match j.offset_align {
            0 => j.bs.read.min().min(j.bs.write.min()),
            a => a,
        }
        .max(1);
        offset = offset.div_ceil(align) * align;
    }
    offset + clone * j.offset_increment.of(whole, zone)
}

/// Bytes of a file the clone's I/O reaches: its start plus its share of `size`.
pub fn extent(j: &JobSpec, clone: u64, whole: u64, zone: u64) -> u64 {
    if let Some(t) = replay_log(j, clone) {
        return replay_size(t, j);
    }
    let n = names(j, clone).len().max(1) as u64;
    let per = match (j.filesize, j.size) {
        (Some((_, hi)), _) => hi,
        (None, Amount::Percent(_)) => 0,
        (None, s) => s.of(whole, zone) / n,
    };
    start_of(j, clone, whole, zone) + per
}

/// The clone's files on `placement`.
pub fn files(
    j: &JobSpec,
    clone: u64,
    plan: &FilePlan,
    placement: &Placement,
) -> std::io::Result<Vec<JobFile>> {
    use std::os::unix::fs::FileTypeExt;
    let raw = std::fs::metadata(&placement.path).is_ok_and(|m| m.file_type().is_block_device());
    let whole = placement.len;
    let start = start_of(j, clone, whole, j.zones.size);
    if raw {
        if plan.names.len() > 1 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "job {}: {} files on a raw device region; give the stack a filesystem (--fs) for a job of several files",
                    j.name,
                    plan.names.len()
                ),
            ));
        }
        let size = file_sizes(j, clone, 1, whole, j.zones.size)[0];
        let len = size.min(whole.saturating_sub(start));
        return Ok(vec![JobFile {
            path: placement.path.clone(),
            base: placement.offset,
            start,
            len,
            size: whole,
            raw: true,
        }]);
    }
    let sizes = file_sizes(j, clone, plan.names.len(), whole, j.zones.size);
    Ok(plan
        .names
        .iter()
        .zip(sizes)
        .enumerate()
        .map(|(k, (name, per))| {
            let laid = plan.sizes.get(k).copied().unwrap_or(0);
            let size = laid.max(start + per);
            JobFile {
                path: placement.path.join(name),
                base: 0,
                start,
                len: per.min(size.saturating_sub(start)),
                size,
                raw: false,
            }
        })
        .collect())
}

/// How the layout of a file seals it when a power cut is planned (the job's verify, its own
/// or the one [`super::super::cut`] implies): headers every interval, written as stream
/// `thread` with `seed`; `None` without a cut.
pub fn fill_seal(j: &JobSpec, thread: usize, seed: u64) -> Option<FillSeal> {
    let v = j.verify.as_ref().filter(|_| j.cut)?;
    let interval = match v.interval {
        0 => j.bs.write.min(),
        n => n,
    };
    Some(FillSeal {
        interval: u32::try_from(interval).ok()?,
        thread: thread as u16,
        seed,
    })
}

/// fio's layout of `f` before the job starts; what it fills is sealed as `seal` says (a power
/// cut is planned).
pub fn lay_out(
    j: &JobSpec,
    f: &JobFile,
    fill: bool,
    seal: Option<FillSeal>,
    ctx: &PrepareCtx,
) -> std::io::Result<()> {
    if f.raw {
        if fill {
            fill_whole(&f.path, (f.base, f.size), seal, ctx.stop)?;
        }
        return Ok(());
    }
    // A job that checks what it reads keeps a file big enough, as fio keeps any: laying it
    // out again would replace what it is to check.
    let checks = j.verify_only || j.verify.as_ref().is_some_and(|v| v.check && !j.rw.writes());
    if checks && std::fs::metadata(&f.path).is_ok_and(|m| m.len() >= f.size) {
        return Ok(());
    }
    let new_layout = fill || j.overwrite;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(new_layout)
        .write(true)
        .open(&f.path)?;
    if !j.fill_device {
        allocate(&file, j.fallocate, f.size)?;
    }
    if new_layout && !j.fill_device {
        file.set_len(f.size)?;
        drop(file);
        // Written whole and synced (fio's `create_fsync`, on by default).
        fill_whole(&f.path, (0, f.size), seal, ctx.stop)?;
    }
    Ok(())
}

/// Allocates `size` bytes of `file` as fio's `fallocate` says.
fn allocate(file: &std::fs::File, how: Fallocate, size: u64) -> std::io::Result<()> {
    use rustix::fs::FallocateFlags;
    let r = match how {
        Fallocate::None => Ok(()),
        Fallocate::Native | Fallocate::Posix => {
            rustix::fs::fallocate(file, FallocateFlags::empty(), 0, size)
        }
        Fallocate::Keep => rustix::fs::fallocate(file, FallocateFlags::KEEP_SIZE, 0, size),
        Fallocate::Truncate => return file.set_len(size),
    };
    match r {
        // A filesystem that cannot allocate ahead gets a sparse file, as fio leaves it.
        Err(rustix::io::Errno::OPNOTSUPP) if how != Fallocate::Keep => file.set_len(size),
        Err(rustix::io::Errno::OPNOTSUPP) => Ok(()),
        other => other.map_err(Into::into),
    }
}

/// Writes `len` bytes of pseudo-random data at `start` of `path` (buffered, as fio lays files
/// out), sealed as `seal` says, and syncs it.
fn fill_whole(
    path: &Path,
    (start, len): (u64, u64),
    seal: Option<FillSeal>,
    stop: &AtomicBool,
) -> std::io::Result<()> {
    let filled = match seal {
        Some(k) => crate::engine::prepare::fill_sealed(path, (start, len), false, stop, k),
        None => crate::engine::prepare::fill_random(path, start, len, false, stop),
    };
    filled.map_err(|e| match e {
        crate::engine::EngineError::Source { source, .. } => source,
        crate::engine::EngineError::Interrupted => {
            std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted")
        }
        other => std::io::Error::other(other.to_string()),
    })
}

/// Reads `f`'s I/O region once (fio's `pre_read`), so a buffered job starts from the cache.
pub fn pre_read(f: &JobFile, stop: &AtomicBool) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(&f.path)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut off = 0;
    while off < f.len {
        if stop.load(Ordering::Relaxed) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "interrupted",
            ));
        }
        let n = (f.len - off).min(buf.len() as u64) as usize;
        let got = file.read_at(&mut buf[..n], f.base + f.start + off)?;
        if got == 0 {
            break;
        }
        off += got as u64;
    }
    Ok(())
}

/// Opens `f` for the job's I/O: O_DIRECT when asked and allowed, O_SYNC or O_DSYNC as
/// `sync` says.
pub fn open(j: &JobSpec, f: &JobFile, direct: bool) -> std::io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    let mut flags = OFlags::RDWR | OFlags::CLOEXEC;
    if !f.raw {
        flags |= OFlags::CREATE;
    }
    if direct {
        flags |= OFlags::DIRECT;
    }
    match j.sync {
        SyncMode::Sync => flags |= OFlags::SYNC,
        SyncMode::Dsync => flags |= OFlags::DSYNC,
        SyncMode::None => {}
    }
    let fd = rustix::fs::open(&f.path, flags, Mode::from_raw_mode(0o644))?;
    if let Some(hint) = j.write_hint {
        set_write_hint(&fd, hint)?;
    }
    Ok(fd)
}

/// Sets the kernel's write-lifetime hint of `fd`'s inode (fcntl F_SET_RW_HINT, fio's
/// `write_hint`).
fn set_write_hint(fd: &OwnedFd, hint: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    /// F_LINUX_SPECIFIC_BASE + 12.
    const F_SET_RW_HINT: libc::c_int = 1036;
    let h: u64 = hint;
    // SAFETY: fcntl on an open descriptor with a pointer to a u64 that outlives the call.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), F_SET_RW_HINT, &h as *const u64) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Drops the file's cached pages (fio's `invalidate`), and gives the kernel the access
/// pattern (`fadvise_hint`).
pub fn advise(j: &JobSpec, f: &JobFile, fd: &OwnedFd, invalidate: bool) {
    use rustix::fs::Advice;
    let len = std::num::NonZeroU64::new(f.len);
    if invalidate {
        let _ = rustix::fs::fadvise(fd, f.base + f.start, len, Advice::DontNeed);
    }
    if j.fadvise {
        let advice = if j.rw.random {
            Advice::Random
        } else {
            Advice::Sequential
        };
        let _ = rustix::fs::fadvise(fd, f.base + f.start, len, advice);
    }
}
