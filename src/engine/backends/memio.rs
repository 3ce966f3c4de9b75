//! Two of fio's engines that move no data through read and write calls: `mmap` (each file
//! mapped shared, a read copies from the mapping, a write copies into it, a sync is an
//! msync; a regular file is grown with ftruncate when a write reaches past its end, as fio's
//! engine does) and `null` (every I/O completes at once, moving nothing: the engine's own cost).

use super::backend::{SyncIo, Synchronous};
use super::psync::{sync_op, Target};
use crate::engine::buffer::AlignedBuf;
use crate::engine::samples::sample::Op;
use std::os::fd::OwnedFd;

/// Completes every I/O at once with its length: nothing reaches a device.
pub struct NullIo;

impl NullIo {
    pub fn backend() -> Synchronous<NullIo> {
        Synchronous::new(NullIo)
    }
}

impl SyncIo for NullIo {
    fn io(
        &mut self,
        _file: usize,
        _op: Op,
        _offset: u64,
        _buf: &mut AlignedBuf,
        len: usize,
    ) -> Result<u64, i32> {
        Ok(len as u64)
    }
}

/// One file's shared mapping.
struct Mapping {
    ptr: *mut u8,
    len: usize,
}

/// I/O through shared mappings of the files.
pub struct MmapIo {
    targets: Vec<Target>,
    maps: Vec<Option<Mapping>>,
}

// SAFETY: the mappings belong to this backend alone and live as long as it does.
unsafe impl Send for MmapIo {}

/// Bytes of `t`: a regular file's size, a block device's capacity.
fn size_of(t: &Target) -> std::io::Result<u64> {
    if t.block {
        const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
        let mut n: u64 = 0;
        // SAFETY: BLKGETSIZE64 writes a u64 through the pointer.
        let r =
            unsafe { libc::ioctl(std::os::fd::AsRawFd::as_raw_fd(&t.fd), BLKGETSIZE64, &mut n) };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        return Ok(n);
    }
    Ok(rustix::fs::fstat(&t.fd)?.st_size as u64)
}

impl MmapIo {
    pub fn over(fds: Vec<OwnedFd>) -> Synchronous<MmapIo> {
        Synchronous::new(MmapIo {
            maps: fds.iter().map(|_| None).collect(),
            targets: fds.into_iter().map(Target::new).collect(),
        })
    }

    /// The mapping of `file` covering `end` bytes (grown, and a regular file extended for a
    /// write, when it does not yet).
    fn map(&mut self, file: usize, end: u64, write: bool) -> Result<&Mapping, i32> {
        let covered = self.maps[file]
            .as_ref()
            .is_some_and(|m| m.len as u64 >= end);
        if !covered {
            let t = &self.targets[file];
            let mut size = size_of(t).map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
            if size < end {
                if !write || t.block {
                    return Err(libc::EINVAL);
                }
                rustix::fs::ftruncate(&t.fd, end).map_err(|e| e.raw_os_error())?;
                size = end;
            }
            if let Some(old) = self.maps[file].take() {
                // SAFETY: unmapping a mapping this backend made.
                unsafe { libc::munmap(old.ptr.cast(), old.len) };
            }
            // SAFETY: a fresh shared mapping of the file's first `size` bytes.
            let ptr = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    size as usize,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    std::os::fd::AsRawFd::as_raw_fd(&t.fd),
                    0,
                )
            };
            if ptr == libc::MAP_FAILED {
                return Err(std::io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::ENOMEM));
            }
            self.maps[file] = Some(Mapping {
                ptr: ptr.cast(),
                len: size as usize,
            });
        }
        Ok(self.maps[file].as_ref().expect("mapped"))
    }

    fn copy(
        &mut self,
        file: usize,
        op: Op,
        offset: u64,
        buf: &mut AlignedBuf,
        len: usize,
    ) -> Result<u64, i32> {
        let write = op == Op::Write;
        let m = self.map(file, offset + len as u64, write)?;
        // SAFETY: [offset, offset + len) lies within the mapping, which `map` made cover it.
        let region = unsafe { std::slice::from_raw_parts_mut(m.ptr.add(offset as usize), len) };
        if write {
            region.copy_from_slice(&buf.as_slice()[..len]);
        } else {
            buf.as_mut_slice()[..len].copy_from_slice(region);
        }
        Ok(len as u64)
    }
}

impl Drop for MmapIo {
    fn drop(&mut self) {
        for m in self.maps.iter_mut().filter_map(Option::take) {
            // SAFETY: unmapping a mapping this backend made, once.
            unsafe { libc::munmap(m.ptr.cast(), m.len) };
        }
    }
}

impl SyncIo for MmapIo {
    fn io(
        &mut self,
        file: usize,
        op: Op,
        offset: u64,
        buf: &mut AlignedBuf,
        len: usize,
    ) -> Result<u64, i32> {
        match op {
            Op::Read | Op::Write => self.copy(file, op, offset, buf, len),
            Op::Fsync | Op::Fdatasync => match &self.maps[file] {
                // SAFETY: msync of a mapping this backend made.
                Some(m) => match unsafe { libc::msync(m.ptr.cast(), m.len, libc::MS_SYNC) } {
                    0 => Ok(0),
                    _ => Err(std::io::Error::last_os_error()
                        .raw_os_error()
                        .unwrap_or(libc::EIO)),
                },
                None => Ok(0),
            },
            _ => sync_op(&self.targets[file], op, offset, len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::backend::Backend;
    use super::*;

    #[test]
    fn mmap_reads_writes_grows_and_syncs() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, vec![3u8; 8192]).unwrap();
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&p)
            .unwrap();
        let mut b = MmapIo::over(vec![f.into()]);
        let mut buf = AlignedBuf::new(4096);
        b.submit(0, Op::Read, 4096, &mut buf, 4096);
        assert_eq!(b.wait().result, Ok(4096));
        assert!(buf.as_slice().iter().all(|&x| x == 3));
        buf.as_mut_slice().fill(7);
        b.submit(0, Op::Write, 16384, &mut buf, 4096);
        assert_eq!(
            b.wait().result,
            Ok(4096),
            "a write past the end grows the file"
        );
        b.submit(0, Op::Fsync, 0, &mut buf, 0);
        assert_eq!(b.wait().result, Ok(0));
        drop(b);
        let data = std::fs::read(&p).unwrap();
        assert_eq!(data.len(), 20480);
        assert!(data[16384..].iter().all(|&x| x == 7));
        let mut n = NullIo::backend();
        n.submit(0, Op::Write, 1 << 40, &mut buf, 4096);
        assert_eq!(n.wait().result, Ok(4096));
    }
}
