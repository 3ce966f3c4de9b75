//! fio's synchronous engines besides psync, each one I/O at a time done in `submit` over one
//! or several files: `sync` (lseek when the position moves, then read or write), `vsync`
//! (the same with readv/writev), `pvsync` (preadv/pwritev), `pvsync2` (preadv2/pwritev2, with
//! RWF_HIPRI for `hipri`), `falloc` (a write allocates its range with fallocate, a read
//! allocates it keeping the size, a trim punches a hole) and `ftruncate` (a write truncates
//! the file to its offset; other directions fail with EINVAL), as fio's engines do. Syncs and
//! trims of the I/O engines are the shared ones ([`super::psync::sync_op`]).

use super::backend::{SyncIo, Synchronous};
use super::psync::{sync_op, Target};
use crate::engine::buffer::AlignedBuf;
use crate::engine::samples::sample::Op;
use rustix::fs::FallocateFlags;
use std::os::fd::OwnedFd;

/// Which synchronous engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Sync,
    Vsync,
    Pvsync,
    /// preadv2/pwritev2 with these RWF flags.
    Pvsync2(u32),
    Falloc,
    Ftruncate,
}

/// RWF_HIPRI: a polled I/O where the device has poll queues.
pub const RWF_HIPRI: u32 = 0x1;

/// One synchronous engine at queue depth 1 (as a backend: [`Synchronous`]).
pub struct SyncVar {
    variant: Variant,
    targets: Vec<Target>,
    /// Where each file's position is (sync, vsync): an lseek only when it moves.
    pos: Vec<Option<u64>>,
}

impl SyncVar {
    pub fn over(variant: Variant, fds: Vec<OwnedFd>) -> Synchronous<SyncVar> {
        Synchronous::new(SyncVar {
            variant,
            pos: vec![None; fds.len()],
            targets: fds.into_iter().map(Target::new).collect(),
        })
    }

    fn data(
        &mut self,
        file: usize,
        op: Op,
        offset: u64,
        buf: &mut AlignedBuf,
        len: usize,
    ) -> Result<u64, i32> {
        use std::io::{IoSlice, IoSliceMut};
        let fd = &self.targets[file].fd;
        let errno = |e: rustix::io::Errno| e.raw_os_error();
        let write = op == Op::Write;
        let r = match self.variant {
            Variant::Sync | Variant::Vsync => {
                if self.pos[file] != Some(offset) {
                    rustix::fs::seek(fd, rustix::fs::SeekFrom::Start(offset)).map_err(errno)?;
                }
                let r = match (self.variant, write) {
                    (Variant::Sync, false) => rustix::io::read(fd, &mut buf.as_mut_slice()[..len]),
                    (Variant::Sync, true) => rustix::io::write(fd, &buf.as_slice()[..len]),
                    (_, false) => rustix::io::readv(
                        fd,
                        &mut [IoSliceMut::new(&mut buf.as_mut_slice()[..len])],
                    ),
                    (_, true) => rustix::io::writev(fd, &[IoSlice::new(&buf.as_slice()[..len])]),
                };
                self.pos[file] = r.as_ref().ok().map(|&n| offset + n as u64);
                r
            }
            Variant::Pvsync => match write {
                false => rustix::io::preadv(
                    fd,
                    &mut [IoSliceMut::new(&mut buf.as_mut_slice()[..len])],
                    offset,
                ),
                true => rustix::io::pwritev(fd, &[IoSlice::new(&buf.as_slice()[..len])], offset),
            },
            Variant::Pvsync2(flags) => {
                let f = rustix::io::ReadWriteFlags::from_bits_retain(flags);
                match write {
                    false => rustix::io::preadv2(
                        fd,
                        &mut [IoSliceMut::new(&mut buf.as_mut_slice()[..len])],
                        offset,
                        f,
                    ),
                    true => {
                        rustix::io::pwritev2(fd, &[IoSlice::new(&buf.as_slice()[..len])], offset, f)
                    }
                }
            }
            Variant::Falloc => {
                let flags = match op {
                    Op::Read => FallocateFlags::KEEP_SIZE,
                    _ => FallocateFlags::empty(),
                };
                rustix::fs::fallocate(fd, flags, offset, len as u64).map(|_| len)
            }
            Variant::Ftruncate => match op {
                Op::Write => rustix::fs::ftruncate(fd, offset).map(|_| len),
                _ => Err(rustix::io::Errno::INVAL),
            },
        };
        r.map(|n| n as u64).map_err(errno)
    }
}

impl SyncIo for SyncVar {
    fn io(
        &mut self,
        file: usize,
        op: Op,
        offset: u64,
        buf: &mut AlignedBuf,
        len: usize,
    ) -> Result<u64, i32> {
        match op {
            Op::Read | Op::Write => self.data(file, op, offset, buf, len),
            Op::Trim if self.variant == Variant::Ftruncate => Err(libc::EINVAL),
            _ => sync_op(&self.targets[file], op, offset, len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::backend::Backend;
    use super::*;

    fn file(len: usize) -> (tempfile::TempDir, std::path::PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, (0..len).map(|i| (i % 251) as u8).collect::<Vec<u8>>()).unwrap();
        (d, p)
    }

    fn open(p: &std::path::Path) -> OwnedFd {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(p)
            .unwrap()
            .into()
    }

    #[test]
    fn every_variant_reads_what_is_there_and_writes_where_told() {
        let (_d, p) = file(64 << 10);
        let want = std::fs::read(&p).unwrap();
        for v in [
            Variant::Sync,
            Variant::Vsync,
            Variant::Pvsync,
            Variant::Pvsync2(0),
        ] {
            let mut b = SyncVar::over(v, vec![open(&p)]);
            let mut buf = AlignedBuf::new(4096);
            for off in [8192u64, 0, 4096] {
                b.submit(0, Op::Read, off, &mut buf, 4096);
                assert_eq!(b.wait().result, Ok(4096), "{v:?}");
                assert_eq!(
                    &buf.as_slice()[..4096],
                    &want[off as usize..off as usize + 4096],
                    "{v:?} at {off}"
                );
            }
        }
        let mut b = SyncVar::over(Variant::Sync, vec![open(&p)]);
        let mut buf = AlignedBuf::new(4096);
        buf.as_mut_slice().fill(0xEE);
        b.submit(0, Op::Write, 12288, &mut buf, 4096);
        assert_eq!(b.wait().result, Ok(4096));
        assert!(std::fs::read(&p).unwrap()[12288..16384]
            .iter()
            .all(|&x| x == 0xEE));
    }

    #[test]
    fn falloc_and_ftruncate_do_what_fio_s_engines_do() {
        let (_d, p) = file(0);
        let mut b = SyncVar::over(Variant::Falloc, vec![open(&p)]);
        let mut buf = AlignedBuf::new(4096);
        b.submit(0, Op::Write, 0, &mut buf, 64 << 10);
        assert_eq!(b.wait().result, Ok(64 << 10));
        assert_eq!(
            std::fs::metadata(&p).unwrap().len(),
            64 << 10,
            "allocated and sized"
        );
        b.submit(0, Op::Read, 64 << 10, &mut buf, 4096);
        assert_eq!(b.wait().result, Ok(4096));
        assert_eq!(
            std::fs::metadata(&p).unwrap().len(),
            64 << 10,
            "a read keeps the size"
        );
        let mut t = SyncVar::over(Variant::Ftruncate, vec![open(&p)]);
        t.submit(0, Op::Write, 4096, &mut buf, 4096);
        assert_eq!(t.wait().result, Ok(4096));
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 4096);
        t.submit(0, Op::Read, 0, &mut buf, 4096);
        assert_eq!(t.wait().result, Err(libc::EINVAL));
    }
}
