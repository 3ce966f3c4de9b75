//! Where an emulated device keeps its data: sparse image files on the host, split into pieces
//! of [`PIECE`] bytes so the device can be larger than one file may be on the host's
//! filesystem (ext4 stops at 16 TiB; seed 004 checks 72 TB filesystems). The first piece is the
//! path given, the others `PATH.1`, `PATH.2`, ... Only what is written takes space, and a
//! write of zeros can be kept as a hole ([`Backing::write_or_punch`]), so a workload writing
//! zeros (seed 001's `dd` from /dev/zero) fills no memory. Reads, writes and hole punches that
//! cross a piece boundary are split there.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Bytes per backing file: 4 TiB, well within every host filesystem's file size limit.
pub const PIECE: u64 = 4 << 40;

/// The sparse files that hold one emulated device's data.
#[derive(Debug)]
pub struct Backing {
    files: Vec<File>,
    paths: Vec<PathBuf>,
    capacity: u64,
    piece: u64,
}

/// The path of piece `i` of the backing at `path`.
fn piece_path(path: &Path, i: usize) -> PathBuf {
    if i == 0 {
        path.to_path_buf()
    } else {
        PathBuf::from(format!("{}.{i}", path.display()))
    }
}

impl Backing {
    /// Opens (creating or resizing) the backing of a device of `capacity` bytes at `path`.
    pub fn open(path: &Path, capacity: u64) -> std::io::Result<Backing> {
        Backing::open_in_pieces(path, capacity, PIECE)
    }

    /// [`Backing::open`] with pieces of `piece` bytes (tests use small pieces).
    pub fn open_in_pieces(path: &Path, capacity: u64, piece: u64) -> std::io::Result<Backing> {
        assert!(piece > 0, "piece size");
        let n = capacity.div_ceil(piece).max(1) as usize;
        let mut files = Vec::with_capacity(n);
        let mut paths = Vec::with_capacity(n);
        for i in 0..n {
            let p = piece_path(path, i);
            let len = (capacity - (i as u64 * piece).min(capacity)).min(piece);
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&p)?;
            f.set_len(len)?;
            // No read-ahead on the image: requests arrive as the loop device splits them, and
            // a sequential stream otherwise lets one request fill the whole read-ahead window
            // synchronously, holding its reply past its due time.
            rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::Random)?;
            files.push(f);
            paths.push(p);
        }
        Ok(Backing {
            files,
            paths,
            capacity,
            piece,
        })
    }

    /// The device's size in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The files, in device order.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// 512-byte blocks the files take on the host.
    pub fn blocks(&self) -> u64 {
        self.files
            .iter()
            .map(|f| f.metadata().map(|m| m.blocks()).unwrap_or(0))
            .sum()
    }

    /// Calls `f(file, offset in file, start in the range, length)` for each piece of the range
    /// `[offset, offset + len)`, in order; stops at the first error.
    fn each_piece(
        &self,
        offset: u64,
        len: u64,
        mut f: impl FnMut(&File, u64, usize, usize) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        if offset
            .checked_add(len)
            .is_none_or(|end| end > self.capacity)
        {
            return Err(std::io::Error::from_raw_os_error(
                rustix::io::Errno::NOSPC.raw_os_error(),
            ));
        }
        let mut done = 0u64;
        while done < len {
            let at = offset + done;
            let file = &self.files[(at / self.piece) as usize];
            let within = at % self.piece;
            let n = (self.piece - within).min(len - done);
            f(file, within, done as usize, n as usize)?;
            done += n;
        }
        Ok(())
    }

    /// Reads `buf.len()` bytes at `offset`.
    pub fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        self.each_piece(offset, buf.len() as u64, |f, at, start, n| {
            f.read_exact_at(&mut buf[start..start + n], at)
        })
    }

    /// Writes all of `data` at `offset`.
    pub fn write_all_at(&self, data: &[u8], offset: u64) -> std::io::Result<()> {
        self.each_piece(offset, data.len() as u64, |f, at, start, n| {
            f.write_all_at(&data[start..start + n], at)
        })
    }

    /// Writes `data` at `offset`, or, when it is all zeros, frees the range instead (reads
    /// then give the same zeros); true when it did that. A filesystem that cannot punch holes
    /// gets the zeros written.
    pub fn write_or_punch(&self, data: &[u8], offset: u64) -> std::io::Result<bool> {
        if is_zero(data) {
            match self.punch_hole(offset, data.len() as u64) {
                Ok(()) => return Ok(true),
                Err(e) if e.raw_os_error() == Some(rustix::io::Errno::OPNOTSUPP.raw_os_error()) => {
                }
                Err(e) => return Err(e),
            }
        }
        self.write_all_at(data, offset).map(|()| false)
    }

    /// The parts of `[offset, offset + len)` never written (holes of the sparse files), as
    /// `(start, end)` device offsets in order.
    pub fn holes(&self, offset: u64, len: u64) -> std::io::Result<Vec<(u64, u64)>> {
        use rustix::fs::SeekFrom;
        let mut out: Vec<(u64, u64)> = Vec::new();
        self.each_piece(offset, len, |f, at, start, n| {
            let base = offset + start as u64 - at;
            let end = at + n as u64;
            let mut x = at;
            while x < end {
                let hole = match rustix::fs::seek(f, SeekFrom::Hole(x)) {
                    Ok(h) => h.min(end),
                    Err(_) => end,
                };
                if hole >= end {
                    break;
                }
                let data = match rustix::fs::seek(f, SeekFrom::Data(hole)) {
                    Ok(d) => d.min(end),
                    // ENXIO: no data after the hole.
                    Err(_) => end,
                };
                match out.last_mut() {
                    Some(l) if l.1 == base + hole => l.1 = base + data,
                    _ => out.push((base + hole, base + data)),
                }
                x = data;
            }
            Ok(())
        })?;
        Ok(out)
    }

    /// Frees `[offset, offset + len)` (reads then give zeros).
    pub fn punch_hole(&self, offset: u64, len: u64) -> std::io::Result<()> {
        use rustix::fs::FallocateFlags;
        let flags = FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE;
        self.each_piece(offset, len, |f, at, _, n| {
            rustix::fs::fallocate(f, flags, at, n as u64).map_err(std::io::Error::from)
        })
    }
}

/// Whether `data` is all zeros: 64 bytes at a time (which the compiler vectorizes), so
/// pseudo-random data is told apart at its first bytes.
pub fn is_zero(data: &[u8]) -> bool {
    let mut blocks = data.chunks_exact(64);
    blocks.all(|b| b.iter().fold(0u8, |a, &x| a | x) == 0)
        && blocks.remainder().iter().all(|&x| x == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeros_are_kept_as_holes_and_read_back_as_zeros() {
        let dir = tempfile::tempdir().unwrap();
        let b = Backing::open(&dir.path().join("image"), 16 << 20).unwrap();
        let data = vec![0x5Au8; 1 << 20];
        assert!(!b.write_or_punch(&data, 0).unwrap());
        assert!(!b.write_or_punch(&data, 4 << 20).unwrap());
        let before = b.blocks();
        assert!(before >= 2 * (1 << 20) / 512, "{before}");
        // Zeros over written data free it; zeros over a hole leave it one.
        assert!(b.write_or_punch(&vec![0u8; 1 << 20], 0).unwrap());
        assert!(b.write_or_punch(&vec![0u8; 1 << 20], 8 << 20).unwrap());
        assert!(b.blocks() <= before - (1 << 20) / 512, "{}", b.blocks());
        assert_eq!(b.holes(0, 1 << 20).unwrap(), vec![(0, 1 << 20)]);
        let mut back = vec![1u8; 1 << 20];
        b.read_exact_at(&mut back, 0).unwrap();
        assert!(back.iter().all(|&x| x == 0));
        // A write with one byte set anywhere is data, the last byte after the 64-byte blocks
        // included.
        let mut late = vec![0u8; 4096 + 3];
        *late.last_mut().unwrap() = 1;
        assert!(!is_zero(&late));
        assert!(!b.write_or_punch(&late, 4 << 20).unwrap());
        late[4096 + 2] = 0;
        late[100] = 7;
        assert!(!is_zero(&late));
        assert!(is_zero(&[]) && is_zero(&[0; 63]) && !is_zero(&[0, 0, 9]));
        b.read_exact_at(&mut back[..4099], 4 << 20).unwrap();
        assert_eq!(back[4098], 1);
        assert!(back[..4098].iter().all(|&x| x == 0));
    }

    #[test]
    fn is_sparse_sized_and_keeps_its_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("image");
        let b = Backing::open(&path, 64 << 20).unwrap();
        assert_eq!(b.paths().len(), 1);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 64 << 20);
        assert_eq!(b.blocks(), 0, "sparse");
        let mut buf = vec![1u8; 1 << 20];
        b.read_exact_at(&mut buf, 8 << 20).unwrap();
        assert!(buf.iter().all(|&x| x == 0));
        b.write_all_at(b"x", 5).unwrap();
        drop(b);
        let b = Backing::open(&path, 64 << 20).unwrap();
        let mut one = [0u8];
        b.read_exact_at(&mut one, 5).unwrap();
        assert_eq!(&one, b"x");
    }

    #[test]
    fn io_across_pieces_is_split_at_the_boundary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("image");
        // 10 KiB in pieces of 4 KiB: 4 + 4 + 2.
        let b = Backing::open_in_pieces(&path, 10 << 10, 4 << 10).unwrap();
        assert_eq!(b.paths().len(), 3);
        let lens: Vec<u64> = b
            .paths()
            .iter()
            .map(|p| std::fs::metadata(p).unwrap().len())
            .collect();
        assert_eq!(lens, vec![4096, 4096, 2048]);
        let data: Vec<u8> = (0..6000u32).map(|i| (i % 251) as u8).collect();
        b.write_all_at(&data, 3000).unwrap();
        let mut back = vec![0u8; 6000];
        b.read_exact_at(&mut back, 3000).unwrap();
        assert_eq!(back, data);
        // The bytes landed in the pieces they belong to.
        let mut first = vec![0u8; 1096];
        std::fs::File::open(&b.paths()[0])
            .unwrap()
            .read_exact_at(&mut first, 3000)
            .unwrap();
        assert_eq!(first, data[..1096]);
        b.punch_hole(4096, 4096).unwrap();
        b.read_exact_at(&mut back, 3000).unwrap();
        assert!(back[1096..5192].iter().all(|&x| x == 0));
        assert_eq!(back[..1096], data[..1096]);
        // Only the punched page is a hole: the writes touched every other one.
        assert_eq!(b.holes(0, 10 << 10).unwrap(), vec![(4096, 8192)]);
        assert_eq!(b.holes(5000, 1000).unwrap(), vec![(5000, 6000)]);
        // Past the end: no space.
        let err = b.write_all_at(b"x", 10 << 10).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(28));
    }

    #[test]
    fn a_72_terabyte_device_fits_in_sparse_pieces() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("image");
        let cap = 72_000_000_000_000u64;
        let b = Backing::open(&path, cap).unwrap();
        assert_eq!(b.paths().len(), cap.div_ceil(PIECE) as usize);
        let last = cap - 4096;
        b.write_all_at(&[7u8; 4096], last).unwrap();
        let mut back = [0u8; 4096];
        b.read_exact_at(&mut back, last).unwrap();
        assert!(back.iter().all(|&x| x == 7));
        assert!(b.blocks() < 1 << 12, "only what was written takes space");
    }
}
