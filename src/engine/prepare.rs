//! The plan's `prepare` phase for streams of plain block I/O: what the stack used to make
//! while it was being built, now done by the workload's plan, timed and watched like any other
//! phase. A stream's file (on a filesystem) is created and allocated with fallocate in plan
//! order (so files lie on disk in that order on a fresh filesystem), or created empty for a
//! stream that appends; a stream that reads gets its file or raw region filled with
//! pseudo-random data. Generated streams lay out their own ([`super::IoGen::prepare`]).

use super::buffer::AlignedBuf;
use super::{open_target, EngineError, Op, Pattern, Placement, StreamPlan};
use crate::verify::Checksum;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// An error of laying out `path` for stream `stream`.
fn failed(stream: &str, path: &Path, e: std::io::Error) -> EngineError {
    EngineError::Source {
        stream: stream.to_string(),
        path: path.to_path_buf(),
        source: e,
    }
}

/// Whether `path` is a block device (a raw region: nothing to create).
fn is_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

/// Lays out stream `s`'s place: on a filesystem its file made (allocated, or empty for an
/// appending writer), and for a reader the region filled with pseudo-random data.
pub fn lay_out(
    s: &StreamPlan,
    p: &Placement,
    direct: bool,
    stop: &AtomicBool,
) -> Result<(), EngineError> {
    let err = |e| failed(&s.name, &p.path, e);
    if !is_device(&p.path) {
        if s.pattern == Pattern::Append && s.op == Op::Write {
            create_empty(&p.path).map_err(err)?;
        } else {
            allocate(&p.path, p.len).map_err(err)?;
        }
    }
    if s.op == Op::Read {
        fill_random(&p.path, p.offset, p.len, direct, stop)?;
    }
    Ok(())
}

/// Creates the empty file `path`, for a stream that appends to it.
pub fn create_empty(path: &Path) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .create_new(true)
        .write(true)
        .open(path)
        .map(|_| ())
}

/// Creates the file `path` of `len` bytes, allocated with fallocate; false when the filesystem
/// cannot allocate ahead and the file is sparse.
pub fn allocate(path: &Path, len: u64) -> std::io::Result<bool> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)?;
    match rustix::fs::fallocate(&f, rustix::fs::FallocateFlags::empty(), 0, len) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::OPNOTSUPP) => {
            f.set_len(len)?;
            Ok(false)
        }
        Err(e) => Err(e.into()),
    }
}

/// Writes pseudo-random data over `len` bytes of `path` from `start`, then syncs it; `stop`
/// ends it (an interrupted run) within a chunk.
pub fn fill_random(
    path: &Path,
    start: u64,
    len: u64,
    direct: bool,
    stop: &AtomicBool,
) -> Result<(), EngineError> {
    fill(path, (start, len), direct, stop, None)
}

/// How a fill seals what it writes: fio's crc32c header every `interval` bytes, written by
/// stream `thread` with `seed` at time 0 (before anything the run writes), each naming its
/// offset in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FillSeal {
    pub interval: u32,
    pub thread: u16,
    pub seed: u64,
}

/// Writes pseudo-random data over `len` bytes of `path` from `start`, sealed as `seal` says
/// (`start` and the chunks are multiples of its interval), then syncs it.
pub fn fill_sealed(
    path: &Path,
    (start, len): (u64, u64),
    direct: bool,
    stop: &AtomicBool,
    seal: FillSeal,
) -> Result<(), EngineError> {
    fill(path, (start, len), direct, stop, Some(seal))
}

fn fill(
    path: &Path,
    (start, len): (u64, u64),
    direct: bool,
    stop: &AtomicBool,
    seal: Option<FillSeal>,
) -> Result<(), EngineError> {
    const CHUNK: u64 = 4 << 20;
    let err = |e| failed("prepare", path, e);
    let mut f = open_target(path, Op::Write, direct).map_err(err)?;
    let mut buf = AlignedBuf::new(CHUNK as usize);
    let mut off = 0;
    let mut seed = 0x5eed;
    while off < len {
        if stop.load(Ordering::Relaxed) {
            return Err(EngineError::Interrupted);
        }
        seed += 1;
        buf.fill_random(seed);
        let n = CHUNK.min(len - off) as usize;
        if let Some(k) = seal {
            let base = crate::verify::BlockHeader {
                rand_seed: k.seed,
                offset: start + off,
                thread: k.thread,
                ..Default::default()
            };
            let piece = &mut buf.as_mut_slice()[..n];
            crate::verify::seal_block(piece, k.interval as usize, &base, Checksum::Crc32c);
        }
        f.write_all_at(&buf.as_slice()[..n], start + off)
            .map_err(err)?;
        off += n as u64;
    }
    f.flush().ok();
    f.sync_all().map_err(err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Pacing;

    fn stream(op: Op, pattern: Pattern) -> StreamPlan {
        StreamPlan {
            name: "s".into(),
            role: "x".into(),
            op,
            region_len: 1 << 20,
            io_size: 4096,
            pattern,
            pacing: Pacing::Max,
            samples: 1,
            io: Default::default(),
            source: None,
        }
    }

    #[test]
    fn readers_get_data_writers_space_appenders_nothing() {
        let d = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let place = |n: &str| Placement {
            path: d.path().join(n),
            offset: 0,
            len: 1 << 20,
        };
        let (r, w, a) = (place("r"), place("w"), place("a"));
        lay_out(&stream(Op::Read, Pattern::Random), &r, false, &stop).unwrap();
        lay_out(&stream(Op::Write, Pattern::Random), &w, false, &stop).unwrap();
        lay_out(&stream(Op::Write, Pattern::Append), &a, false, &stop).unwrap();
        let data = std::fs::read(&r.path).unwrap();
        assert_eq!(data.len(), 1 << 20);
        assert!(
            data.iter().filter(|&&b| b == 0).count() < 20_000,
            "random data"
        );
        assert_eq!(std::fs::metadata(&w.path).unwrap().len(), 1 << 20);
        assert_eq!(std::fs::metadata(&a.path).unwrap().len(), 0);
        stop.store(true, Ordering::Relaxed);
        let e = lay_out(
            &stream(Op::Read, Pattern::Random),
            &place("x"),
            false,
            &stop,
        );
        assert!(matches!(e, Err(EngineError::Interrupted)));
    }
}
