//! File-system operations for [`super::source::OpSource`]s, one system call each (or the
//! fewest that do the operation), returning what a sample records: bytes moved, or the errno.
//! Paths are `CStr`s the source built before the timed call, so nothing here allocates.

use crate::engine::buffer::AlignedBuf;
use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{Mode, OFlags, CWD};
use std::ffi::CStr;

/// What a file-system operation gives a sample: bytes moved, or the errno.
pub type OpResult = Result<u64, i32>;

fn errno(e: rustix::io::Errno) -> i32 {
    e.raw_os_error()
}

/// `mkdir(path, 0755)`.
pub fn mkdir(path: &CStr) -> OpResult {
    rustix::fs::mkdirat(CWD, path, Mode::from_raw_mode(0o755))
        .map(|_| 0)
        .map_err(errno)
}

/// `rmdir(path)`.
pub fn rmdir(path: &CStr) -> OpResult {
    rustix::fs::unlinkat(CWD, path, rustix::fs::AtFlags::REMOVEDIR)
        .map(|_| 0)
        .map_err(errno)
}

/// `unlink(path)`.
pub fn unlink(path: &CStr) -> OpResult {
    rustix::fs::unlinkat(CWD, path, rustix::fs::AtFlags::empty())
        .map(|_| 0)
        .map_err(errno)
}

/// `stat(path)`: the file's size as the bytes.
pub fn stat(path: &CStr) -> OpResult {
    rustix::fs::statat(CWD, path, rustix::fs::AtFlags::empty())
        .map(|st| st.st_size as u64)
        .map_err(errno)
}

/// Creates (or truncates) `path` for writing, O_DIRECT when `direct`.
pub fn create(path: &CStr, direct: bool) -> Result<OwnedFd, i32> {
    let mut flags = OFlags::CREATE | OFlags::WRONLY | OFlags::TRUNC | OFlags::CLOEXEC;
    if direct {
        flags |= OFlags::DIRECT;
    }
    rustix::fs::openat(CWD, path, flags, Mode::from_raw_mode(0o644)).map_err(errno)
}

/// Opens `path` for reading and writing, creating it when it does not exist (fio's
/// `filecreate` engine: O_CREAT | O_RDWR, mode 0600).
pub fn open_create(path: &CStr) -> Result<OwnedFd, i32> {
    let flags = OFlags::CREATE | OFlags::RDWR | OFlags::CLOEXEC;
    rustix::fs::openat(CWD, path, flags, Mode::from_raw_mode(0o600)).map_err(errno)
}

/// Opens `path` for reading and writing (appending when `append`), O_DIRECT when `direct`.
pub fn open_rw(path: &CStr, append: bool, direct: bool) -> Result<OwnedFd, i32> {
    let mut flags = OFlags::RDWR | OFlags::CLOEXEC;
    if append {
        flags |= OFlags::APPEND;
    }
    if direct {
        flags |= OFlags::DIRECT;
    }
    rustix::fs::openat(CWD, path, flags, Mode::empty()).map_err(errno)
}

/// Opens `path` for reading, O_DIRECT when `direct`.
pub fn open_read(path: &CStr, direct: bool) -> Result<OwnedFd, i32> {
    let mut flags = OFlags::RDONLY | OFlags::CLOEXEC;
    if direct {
        flags |= OFlags::DIRECT;
    }
    rustix::fs::openat(CWD, path, flags, Mode::empty()).map_err(errno)
}

/// Writes the first `len` bytes of `buf` at the file's position (`len` at most the buffer's
/// length), repeating short writes.
pub fn write_all(fd: impl AsFd, buf: &AlignedBuf, len: usize) -> OpResult {
    let data = &buf.as_slice()[..len];
    let mut done = 0;
    while done < len {
        match rustix::io::write(&fd, &data[done..]) {
            Ok(0) => return Err(rustix::io::Errno::IO.raw_os_error()),
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(errno(e)),
        }
    }
    Ok(len as u64)
}

/// Seals the first `len` bytes of `buf` as the data stream `stream` (whose seed is `seed`)
/// writes at the start of its file number `file`: fio's verify header every
/// [`crate::engine::Seal::INTERVAL`] bytes, with the offset in the file, the stream as `thread`, the
/// seed, and the file's number as `numberio` (modulo 65536), so a scan after a power cut tells
/// the file's own blocks from another file's. A last piece too short for a header is left as
/// it is.
pub fn seal_file(buf: &mut AlignedBuf, len: usize, stream: usize, seed: u64, file: u64) {
    let sum = crate::verify::Checksum::Crc32c;
    let interval = crate::engine::Seal::INTERVAL as usize;
    let data = &mut buf.as_mut_slice()[..len];
    for (k, piece) in data.chunks_mut(interval).enumerate() {
        if piece.len() < sum.min_interval() {
            break;
        }
        let h = crate::verify::BlockHeader {
            len: 0,
            rand_seed: seed,
            offset: (k * interval) as u64,
            time_sec: 0,
            time_nsec: 0,
            thread: stream as u16,
            numberio: file as u16,
        };
        crate::verify::seal(piece, &h, sum);
    }
}

/// `pwrite` of the first `len` bytes of `buf` at `offset`.
pub fn write_at(fd: impl AsFd, buf: &AlignedBuf, len: usize, offset: u64) -> OpResult {
    rustix::io::pwrite(&fd, &buf.as_slice()[..len], offset)
        .map(|n| n as u64)
        .map_err(errno)
}

/// `pread` of `len` bytes at `offset` into `buf`.
pub fn read_at(fd: impl AsFd, buf: &mut AlignedBuf, len: usize, offset: u64) -> OpResult {
    rustix::io::pread(&fd, &mut buf.as_mut_slice()[..len], offset)
        .map(|n| n as u64)
        .map_err(errno)
}

/// Reads the file from its position to its end in pieces of the buffer's length: the bytes
/// read.
pub fn read_all(fd: impl AsFd, buf: &mut AlignedBuf) -> OpResult {
    let mut total = 0u64;
    loop {
        match rustix::io::read(&fd, buf.as_mut_slice()) {
            Ok(0) => return Ok(total),
            Ok(n) => total += n as u64,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(errno(e)),
        }
    }
}

/// `fsync(fd)`.
pub fn fsync(fd: impl AsFd) -> OpResult {
    rustix::fs::fsync(fd).map(|_| 0).map_err(errno)
}

/// Closes `fd` (an error of close itself is not reported by the kernel in a usable way).
pub fn close(fd: OwnedFd) -> OpResult {
    drop(fd);
    Ok(0)
}

/// Lists the directory `path`: the number of entries, `.` and `..` left out.
pub fn readdir_count(path: &CStr) -> OpResult {
    let fd = open_read(path, false)?;
    let dir = rustix::fs::Dir::read_from(&fd).map_err(errno)?;
    let mut n = 0u64;
    for e in dir {
        let e = e.map_err(errno)?;
        let name = e.file_name().to_bytes();
        if name != b"." && name != b".." {
            n += 1;
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    fn c(p: &std::path::Path) -> CString {
        CString::new(p.as_os_str().as_bytes()).unwrap()
    }

    #[test]
    fn a_file_goes_through_its_life() {
        let d = tempfile::tempdir().unwrap();
        let dir = c(&d.path().join("a"));
        assert_eq!(mkdir(&dir), Ok(0));
        assert_eq!(mkdir(&dir), Err(libc::EEXIST));
        let file = c(&d.path().join("a/f"));
        let fd = create(&file, false).unwrap();
        let mut buf = AlignedBuf::new(4096);
        buf.fill_random(7);
        seal_file(&mut buf, 3000, 2, 9, 70_000);
        let h = crate::verify::inspect(&buf.as_slice()[..3000], None)
            .unwrap()
            .header;
        assert_eq!(
            (h.thread, h.rand_seed, h.numberio, h.offset),
            (2, 9, 4464, 0)
        );
        assert_eq!(write_all(&fd, &buf, 3000), Ok(3000));
        assert_eq!(fsync(&fd), Ok(0));
        assert_eq!(close(fd), Ok(0));
        assert_eq!(stat(&file), Ok(3000));
        let fd = open_read(&file, false).unwrap();
        assert_eq!(read_all(&fd, &mut buf), Ok(3000));
        assert_eq!(readdir_count(&dir), Ok(1));
        assert_eq!(rmdir(&dir), Err(libc::ENOTEMPTY));
        assert_eq!(unlink(&file), Ok(0));
        assert_eq!(rmdir(&dir), Ok(0));
        assert_eq!(stat(&file), Err(libc::ENOENT));
    }
}
