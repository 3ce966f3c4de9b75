//! The `psync` backend: one pread/pwrite at a time, the I/O done synchronously in `submit`,
//! over one file or several. The synchronous ops every backend shares (fsync, fdatasync and a
//! trim: a hole punched in a file, a discard of a block device's range) are here too.

use super::backend::{SyncIo, Synchronous};
use crate::engine::buffer::AlignedBuf;
use crate::engine::samples::sample::Op;
use std::os::fd::{AsFd, OwnedFd};

/// One target of a backend: its descriptor and whether it is a block device (a trim is then a
/// discard).
pub struct Target {
    pub fd: OwnedFd,
    pub block: bool,
}

impl Target {
    /// `fd`, its kind read once.
    pub fn new(fd: OwnedFd) -> Target {
        let block = rustix::fs::fstat(&fd)
            .map(|st| {
                rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::BlockDevice
            })
            .unwrap_or(false);
        Target { fd, block }
    }
}

/// Does a synchronous op (fsync, fdatasync, trim) on `t`: bytes (the trim's length), or the
/// errno. Other ops: EINVAL.
pub fn sync_op(t: &Target, op: Op, offset: u64, len: usize) -> Result<u64, i32> {
    let r = match op {
        Op::Fsync => rustix::fs::fsync(&t.fd).map(|_| 0),
        Op::Fdatasync => rustix::fs::fdatasync(&t.fd).map(|_| 0),
        Op::Trim if t.block => discard(&t.fd, offset, len as u64).map(|_| len as u64),
        Op::Trim => rustix::fs::fallocate(
            &t.fd,
            rustix::fs::FallocateFlags::PUNCH_HOLE | rustix::fs::FallocateFlags::KEEP_SIZE,
            offset,
            len as u64,
        )
        .map(|_| len as u64),
        _ => Err(rustix::io::Errno::INVAL),
    };
    r.map_err(|e| e.raw_os_error())
}

/// BLKDISCARD of `len` bytes at `offset` of block device `fd`.
fn discard(fd: impl AsFd, offset: u64, len: u64) -> rustix::io::Result<()> {
    const BLKDISCARD: libc::c_ulong = 0x1277;
    let range = [offset, len];
    // SAFETY: BLKDISCARD reads two u64s (start, length) from the pointer, valid for the call.
    let r = unsafe {
        libc::ioctl(
            std::os::fd::AsRawFd::as_raw_fd(&fd.as_fd()),
            BLKDISCARD,
            range.as_ptr(),
        )
    };
    if r < 0 {
        return Err(rustix::io::Errno::from_raw_os_error(
            std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO),
        ));
    }
    Ok(())
}

/// Synchronous positional I/O at queue depth 1 (as a backend: [`Synchronous`]).
pub struct Psync {
    targets: Vec<Target>,
}

impl Psync {
    /// Over several files (file k is `fds[k]`), as a backend.
    pub fn over(fds: Vec<OwnedFd>) -> Synchronous<Psync> {
        Synchronous::new(Psync {
            targets: fds.into_iter().map(Target::new).collect(),
        })
    }
}

impl SyncIo for Psync {
    fn io(
        &mut self,
        file: usize,
        op: Op,
        offset: u64,
        buf: &mut AlignedBuf,
        len: usize,
    ) -> Result<u64, i32> {
        let t = &self.targets[file];
        match op {
            Op::Read => rustix::io::pread(&t.fd, &mut buf.as_mut_slice()[..len], offset)
                .map(|n| n as u64)
                .map_err(|e| e.raw_os_error()),
            Op::Write => rustix::io::pwrite(&t.fd, &buf.as_slice()[..len], offset)
                .map(|n| n as u64)
                .map_err(|e| e.raw_os_error()),
            // Other file-system ops come from a stream's own source, never through a backend.
            _ => sync_op(t, op, offset, len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::backend::Backend;
    use super::*;

    #[test]
    fn trims_punch_holes_in_files_and_syncs_succeed() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, vec![7u8; 64 << 10]).unwrap();
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&p)
            .unwrap();
        let mut b = Psync::over(vec![f.into()]);
        let mut buf = AlignedBuf::new(4096);
        for op in [Op::Fsync, Op::Fdatasync] {
            b.submit(0, op, 0, &mut buf, 0);
            assert_eq!(b.wait().result, Ok(0));
        }
        b.submit_to(0, 0, Op::Trim, 4096, &mut buf, 8192);
        assert_eq!(b.wait().result, Ok(8192));
        let data = std::fs::read(&p).unwrap();
        assert_eq!(data.len(), 64 << 10, "the file keeps its size");
        assert!(data[4096..12288].iter().all(|&x| x == 0));
        assert!(data[..4096].iter().all(|&x| x == 7) && data[12288..].iter().all(|&x| x == 7));
    }
}
