//! The scan after a power cut: every region a block stream wrote, read back whole, each verify
//! interval told apart by what it holds (the stream's own data of one write, zeros, a damaged
//! header or checksum, another writer's data, or bytes with no header at all); and every file a
//! stream doing file operations made, checked the same way. What was *meant* to be there comes
//! from the samples, later ([`crate::durability`]): the scan only says what is there.

use crate::engine::buffer::AlignedBuf;
use crate::engine::{Op, Placement, Plan, Seal, WrittenFile};
use crate::verify::{inspect, Mismatch};
use serde::Serialize;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Bytes read at once.
const CHUNK: usize = 8 << 20;

/// What one verify interval holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// All zeros: never written, or discarded (and read back as zeros).
    Zeros,
    /// The stream's own data, for this place: written at this time (ns on the trial's clock,
    /// real time) with this `numberio`.
    Own { time_ns: u64, numberio: u16 },
    /// A header whose CRC, length or data checksum does not hold: half written.
    Damaged,
    /// A whole header of another writer, or of this one for another place: data that belongs
    /// elsewhere (another file's, another stream's).
    Other,
    /// Stale data nobody wrote here: bytes without a header that are not zeros, or the
    /// earlier owner's blocks of a used disk ([`crate::emu::stale`]).
    Stale,
}

/// What one I/O-sized block of a region holds: one kind throughout, or interval by interval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    All(Part),
    Mixed(Box<[Part]>),
}

impl Found {
    /// Calls `f` with each interval's part, `n` intervals in all.
    pub fn each(&self, n: usize, mut f: impl FnMut(Part)) {
        match self {
            Found::All(p) => (0..n).for_each(|_| f(*p)),
            Found::Mixed(parts) => parts.iter().for_each(|p| f(*p)),
        }
    }
}

/// One block stream's region as the scan found it.
#[derive(Debug, Clone)]
pub struct RegionScan {
    /// The stream's index in the plan.
    pub stream: usize,
    pub io_size: u64,
    /// Bytes each header covers.
    pub interval: u64,
    /// Where the region starts in its target (headers carry offsets in the target).
    pub base: u64,
    /// One per I/O block of the region, up to what could be read.
    pub blocks: Vec<Found>,
    /// The file's length after the cut (`files` layout).
    pub file_len: Option<u64>,
    /// Why it could not be read (a file gone: `missing`).
    pub error: Option<String>,
    pub missing: bool,
    /// The file's name, for a stream that writes several (a job's).
    pub file: Option<String>,
    /// The stream's samples say which writes went here: each block is judged against the
    /// last write acknowledged at it. Otherwise by its header alone.
    pub by_samples: bool,
}

/// One stream doing file operations: what its directory held after the cut.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TreeScan {
    pub stream: usize,
    pub files: u64,
    pub dirs: u64,
    /// Verify intervals of its files, by what they hold.
    pub own: u64,
    pub zeros: u64,
    pub damaged: u64,
    pub other: u64,
    pub stale: u64,
    /// Files the scan could not read.
    pub unreadable: u64,
}

/// Everything the scan found.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    pub regions: Vec<RegionScan>,
    pub trees: Vec<TreeScan>,
    /// Streams whose writes could not be judged, and why.
    pub unjudged: Vec<String>,
}

/// What a stream's blocks carry: its index as `thread`, its seed; `any`: a file several
/// streams write, where any writer's header for the place is the file's own data.
#[derive(Debug, Clone, Copy)]
struct Writer {
    thread: u16,
    seed: u64,
    any: bool,
}

/// Tells what `interval` (at `offset` in its target) holds for `w`.
fn part_of(interval: &[u8], offset: u64, w: Writer) -> Part {
    match inspect(interval, None) {
        Ok(s) => {
            let h = s.header;
            if crate::emu::stale::is_stale(h.thread, h.rand_seed) {
                return Part::Stale;
            }
            let writer = w.any || (h.thread == w.thread && h.rand_seed == w.seed);
            if writer && h.offset == offset {
                Part::Own {
                    time_ns: u64::from(h.time_sec) * 1_000_000_000 + u64::from(h.time_nsec),
                    numberio: h.numberio,
                }
            } else {
                Part::Other
            }
        }
        Err(Mismatch::NoHeader { zeros: true }) => Part::Zeros,
        Err(Mismatch::NoHeader { zeros: false }) => Part::Stale,
        Err(_) => Part::Damaged,
    }
}

/// The parts of one block read back, `interval` bytes each, the block at `offset`.
fn found(block: &[u8], offset: u64, interval: usize, w: Writer) -> Found {
    let parts: Vec<Part> = block
        .chunks(interval)
        .enumerate()
        .map(|(k, b)| part_of(b, offset + (k * interval) as u64, w))
        .collect();
    match parts.first() {
        Some(&p) if parts.iter().all(|&q| q == p) => Found::All(p),
        _ => Found::Mixed(parts.into_boxed_slice()),
    }
}

/// Whether stream `s` writes blocks of its own (not file operations).
fn writes_blocks(s: &crate::engine::StreamPlan) -> bool {
    s.source.is_none() && (s.op == Op::Write || s.io.mix.is_some_and(|r| r < 100))
}

/// Scans every region the plan's block streams write and every directory its file-operation
/// streams work in; `direct` reads with O_DIRECT. `stop` (Ctrl-C) ends it early.
pub fn scan(plan: &Plan, placements: &[Placement], direct: bool, stop: &AtomicBool) -> Scan {
    let mut out = Scan::default();
    for (i, (s, p)) in plan.streams.iter().zip(placements).enumerate() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let w = Writer {
            thread: i as u16,
            seed: crate::engine::stream_seed(plan.seed, i),
            any: false,
        };
        if let Some(src) = &s.source {
            match (&src.written, src.is_block()) {
                (Some(written), _) => match written(p) {
                    Ok(files) => {
                        for f in files {
                            let w = Writer { any: f.shared, ..w };
                            out.regions.push(scan_file(i, &f, direct, stop, w));
                        }
                    }
                    Err(why) => out.unjudged.push(format!("{}: {why}", s.name)),
                },
                // A generator whose writes the workload does not describe.
                (None, true) => out.unjudged.push(format!(
                    "{}: its writes carry no header the scan can judge",
                    s.name
                )),
                (None, false) => out.trees.push(scan_tree(i, &p.path, w)),
            }
            continue;
        }
        if !writes_blocks(s) {
            continue;
        }
        let interval =
            s.io.seal
                .or_else(|| Seal::for_io(s.io_size))
                .map_or(s.io_size, |x| u64::from(x.interval));
        out.regions
            .push(scan_region(i, s.io_size, interval, p, direct, stop, w));
    }
    out
}

/// What a stack whose filesystem did not mount holds of the plan's data: nothing. Every
/// region a block stream writes is missing (`why`), every file-operation stream's directory
/// empty.
pub fn nothing(plan: &Plan, placements: &[Placement], why: &str) -> Scan {
    let mut out = Scan::default();
    for ((i, s), p) in plan.streams.iter().enumerate().zip(placements) {
        if let Some(written) = s.source.as_ref().and_then(|src| src.written.as_ref()) {
            for f in written(p).unwrap_or_default() {
                out.regions.push(RegionScan {
                    stream: i,
                    io_size: f.block,
                    interval: f.interval,
                    base: 0,
                    blocks: Vec::new(),
                    file_len: None,
                    error: Some(why.to_string()),
                    missing: true,
                    file: file_name(&f.path),
                    by_samples: f.by_samples,
                });
            }
        } else if s.source.is_some() {
            out.trees.push(TreeScan {
                stream: i,
                ..TreeScan::default()
            });
        } else if writes_blocks(s) {
            out.regions.push(RegionScan {
                stream: i,
                io_size: s.io_size,
                interval: s.io.seal.map_or(s.io_size, |x| u64::from(x.interval)),
                base: 0,
                blocks: Vec::new(),
                file_len: None,
                error: Some(why.to_string()),
                missing: true,
                file: None,
                by_samples: true,
            });
        }
    }
    out
}

/// The name a region of several files goes by: its file's.
fn file_name(path: &Path) -> Option<String> {
    path.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// Scans file `f` of a generated stream (stream `stream`) as a region of blocks.
fn scan_file(
    stream: usize,
    f: &WrittenFile,
    direct: bool,
    stop: &AtomicBool,
    w: Writer,
) -> RegionScan {
    let place = Placement {
        path: f.path.clone(),
        offset: f.base,
        len: f.len,
    };
    let mut r = scan_region(stream, f.block, f.interval, &place, direct, stop, w);
    r.file = (!f.by_samples || f.shared)
        .then(|| file_name(&f.path))
        .flatten();
    r.by_samples = f.by_samples;
    r
}

fn scan_region(
    stream: usize,
    io: u64,
    interval: u64,
    p: &Placement,
    direct: bool,
    stop: &AtomicBool,
    w: Writer,
) -> RegionScan {
    let mut r = RegionScan {
        stream,
        io_size: io,
        interval,
        base: p.offset,
        blocks: Vec::new(),
        file_len: None,
        error: None,
        missing: false,
        file: None,
        by_samples: true,
    };
    let open = |direct: bool| {
        let mut o = std::fs::OpenOptions::new();
        o.read(true);
        if direct {
            o.custom_flags(rustix::fs::OFlags::DIRECT.bits() as i32);
        }
        o.open(&p.path)
    };
    let f = match open(direct).or_else(|_| open(false)) {
        Ok(f) => f,
        Err(e) => {
            r.missing = e.kind() == std::io::ErrorKind::NotFound;
            r.error = Some(format!("{}: {e}", p.path.display()));
            return r;
        }
    };
    let is_file = f.metadata().is_ok_and(|m| m.is_file());
    let mut end = p.offset + p.len;
    if is_file {
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        r.file_len = Some(len);
        end = end.min(len.max(p.offset));
    }
    let chunk = (CHUNK as u64 / io).max(1) * io;
    let mut buf = AlignedBuf::new(chunk as usize);
    let mut at = p.offset;
    while at + io <= end && !stop.load(Ordering::Relaxed) {
        let want = chunk.min((end - at) / io * io) as usize;
        let got = match read_full(&f, &mut buf.as_mut_slice()[..want], at) {
            Ok(n) => n,
            Err(e) => {
                r.error = Some(format!("read {} at {at}: {e}", p.path.display()));
                break;
            }
        };
        for (k, block) in buf.as_slice()[..got - got % io as usize]
            .chunks(io as usize)
            .enumerate()
        {
            let offset = at + k as u64 * io;
            r.blocks.push(found(block, offset, interval as usize, w));
        }
        if got < want {
            break;
        }
        at += want as u64;
    }
    r
}

/// Reads until `buf` is full or the end; the bytes read.
fn read_full(f: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match f.read_at(&mut buf[done..], at + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Walks a file-operation stream's directory: its files and directories, and every verify
/// interval of every file (a file's blocks carry its offsets in the file).
fn scan_tree(stream: usize, dir: &Path, w: Writer) -> TreeScan {
    let mut t = TreeScan {
        stream,
        ..TreeScan::default()
    };
    let mut todo: Vec<PathBuf> = vec![dir.to_path_buf()];
    let interval = Seal::INTERVAL as usize;
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                t.dirs += 1;
                todo.push(e.path());
                continue;
            }
            t.files += 1;
            let Ok(data) = std::fs::read(e.path()) else {
                t.unreadable += 1;
                continue;
            };
            for (k, piece) in data.chunks(interval).enumerate() {
                if piece.len() < crate::verify::Checksum::Crc32c.min_interval() {
                    break;
                }
                match part_of(piece, (k * interval) as u64, w) {
                    Part::Own { .. } => t.own += 1,
                    Part::Zeros => t.zeros += 1,
                    Part::Damaged => t.damaged += 1,
                    Part::Other => t.other += 1,
                    Part::Stale => t.stale += 1,
                }
            }
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::{seal_block, BlockHeader, Checksum};

    fn w() -> Writer {
        Writer {
            thread: 3,
            seed: 77,
            any: false,
        }
    }

    fn sealed(offset: u64, time: u32, thread: u16) -> Vec<u8> {
        let mut b = vec![0x5Au8; 16384];
        let h = BlockHeader {
            rand_seed: 77,
            offset,
            time_sec: time,
            thread,
            ..BlockHeader::default()
        };
        seal_block(&mut b, 4096, &h, Checksum::Crc32c);
        b
    }

    #[test]
    fn each_interval_is_told_apart() {
        let b = sealed(1 << 20, 5, 3);
        assert_eq!(
            found(&b, 1 << 20, 4096, w()),
            Found::All(Part::Own {
                time_ns: 5_000_000_000,
                numberio: 0
            })
        );
        // Read at another place: the data belongs elsewhere.
        assert_eq!(found(&b, 0, 4096, w()), Found::All(Part::Other));
        // Another stream's.
        assert_eq!(
            found(&sealed(0, 5, 4), 0, 4096, w()),
            Found::All(Part::Other)
        );
        let mut torn = sealed(0, 5, 3);
        torn[4096..8192].copy_from_slice(&sealed(4096, 2, 3)[..4096]);
        torn[8192..12288].fill(0);
        torn[12288 + 100] ^= 1;
        let Found::Mixed(parts) = found(&torn, 0, 4096, w()) else {
            panic!("mixed")
        };
        assert!(matches!(
            parts[0],
            Part::Own {
                time_ns: 5_000_000_000,
                ..
            }
        ));
        assert!(matches!(
            parts[1],
            Part::Own {
                time_ns: 2_000_000_000,
                ..
            }
        ));
        assert_eq!(parts[2..], [Part::Zeros, Part::Damaged]);
        assert_eq!(found(&[0xAB; 8192], 0, 4096, w()), Found::All(Part::Stale));
        let mut n = 0;
        Found::All(Part::Zeros).each(4, |_| n += 1);
        assert_eq!(n, 4);
    }

    #[test]
    fn a_region_file_shorter_than_written_and_a_missing_one_are_reported() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("f");
        let mut data = sealed(0, 1, 3);
        data.extend(sealed(16384, 1, 3));
        std::fs::write(&path, &data[..24576]).unwrap();
        let p = Placement {
            path: path.clone(),
            offset: 0,
            len: 65536,
        };
        let stop = AtomicBool::new(false);
        let r = scan_region(3, 8192, 4096, &p, false, &stop, w());
        assert_eq!(r.file_len, Some(24576));
        assert_eq!(r.blocks.len(), 3, "whole blocks up to the file's end");
        assert!(r.error.is_none());
        std::fs::remove_file(&path).unwrap();
        let r = scan_region(3, 8192, 4096, &p, false, &stop, w());
        assert!(r.missing && r.blocks.is_empty());
    }

    #[test]
    fn a_tree_is_walked_file_by_file() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("a")).unwrap();
        std::fs::write(d.path().join("a/f0"), sealed(0, 0, 3)).unwrap();
        std::fs::write(d.path().join("f1"), vec![0u8; 4096]).unwrap();
        let t = scan_tree(3, d.path(), w());
        assert_eq!((t.files, t.dirs, t.own, t.zeros), (2, 1, 4, 1));
    }
}
