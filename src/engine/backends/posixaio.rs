//! The `posixaio` backend: POSIX asynchronous I/O as the C library provides it (glibc serves
//! it with its own threads doing pread and pwrite), as fio's posixaio engine drives it: up to
//! the queue depth of `aio_read`/`aio_write`/`aio_fsync` requests in flight, a wait suspended
//! in `aio_suspend` until one completes, its result from `aio_error`/`aio_return`.

use super::backend::{Backend, Completion};
use super::psync::{sync_op, Target};
use crate::engine::buffer::AlignedBuf;
use crate::engine::samples::sample::Op;
use std::os::fd::{AsRawFd, OwnedFd};

/// POSIX AIO at a queue depth of its own.
pub struct PosixAio {
    targets: Vec<Target>,
    /// One control block per slot, made once (never grown), so their addresses stay put
    /// while in flight.
    cbs: Vec<libc::aiocb>,
    busy: Vec<bool>,
    /// Results known without the library (a trim).
    done_now: Vec<Completion>,
}

// SAFETY: the control blocks belong to this backend alone; the library's threads only touch
// them between the submission and the completion this backend waits for.
unsafe impl Send for PosixAio {}

impl PosixAio {
    pub fn over(fds: Vec<OwnedFd>, depth: usize) -> PosixAio {
        let depth = depth.max(1);
        PosixAio {
            targets: fds.into_iter().map(Target::new).collect(),
            // SAFETY: an all-zero aiocb is a valid, unused control block.
            cbs: (0..depth).map(|_| unsafe { std::mem::zeroed() }).collect(),
            busy: vec![false; depth],
            done_now: Vec::new(),
        }
    }

    /// A completed slot's result, if one has completed.
    fn finished(&mut self) -> Option<Completion> {
        if let Some(c) = self.done_now.pop() {
            return Some(c);
        }
        for slot in 0..self.cbs.len() {
            if !self.busy[slot] {
                continue;
            }
            let cb: *mut libc::aiocb = &mut self.cbs[slot];
            // SAFETY: a control block of a request in flight.
            let e = unsafe { libc::aio_error(cb) };
            if e == libc::EINPROGRESS {
                continue;
            }
            self.busy[slot] = false;
            // SAFETY: the request has completed; its return value is read once.
            let r = unsafe { libc::aio_return(cb) };
            let result = if e != 0 {
                Err(e)
            } else if r < 0 {
                Err(libc::EIO)
            } else {
                Ok(r as u64)
            };
            return Some(Completion { slot, result });
        }
        None
    }

    /// Suspends until a request completes or `timeout` passes.
    fn suspend(&mut self, timeout: Option<&libc::timespec>) {
        let list: Vec<*const libc::aiocb> = self
            .cbs
            .iter()
            .zip(&self.busy)
            .filter(|(_, &b)| b)
            .map(|(cb, _)| cb as *const libc::aiocb)
            .collect();
        if list.is_empty() {
            return;
        }
        let t = timeout.map_or(std::ptr::null(), |t| t as *const libc::timespec);
        // SAFETY: every pointer is to a control block in flight; `t` is null or live.
        unsafe { libc::aio_suspend(list.as_ptr(), list.len() as i32, t) };
    }
}

impl Drop for PosixAio {
    fn drop(&mut self) {
        // The library must be done with every control block before they are freed.
        while self.busy.iter().any(|&b| b) {
            self.suspend(None);
            let _ = self.finished();
        }
    }
}

impl Backend for PosixAio {
    fn queue_depth(&self) -> usize {
        self.cbs.len()
    }

    fn submit_to(
        &mut self,
        file: usize,
        slot: usize,
        op: Op,
        offset: u64,
        buf: &mut AlignedBuf,
        len: usize,
    ) {
        let t = &self.targets[file];
        if !matches!(op, Op::Read | Op::Write | Op::Fsync | Op::Fdatasync) {
            let result = sync_op(t, op, offset, len);
            self.done_now.push(Completion { slot, result });
            return;
        }
        let cb = &mut self.cbs[slot];
        // SAFETY: a zeroed control block is then filled in for this request.
        *cb = unsafe { std::mem::zeroed() };
        cb.aio_fildes = t.fd.as_raw_fd();
        cb.aio_buf = buf.as_mut_slice().as_mut_ptr().cast();
        cb.aio_nbytes = len;
        cb.aio_offset = offset as libc::off_t;
        let p: *mut libc::aiocb = cb;
        // SAFETY: the control block and the buffer stay put until the request completes.
        let r = unsafe {
            match op {
                Op::Read => libc::aio_read(p),
                Op::Write => libc::aio_write(p),
                Op::Fsync => libc::aio_fsync(libc::O_SYNC, p),
                _ => libc::aio_fsync(libc::O_DSYNC, p),
            }
        };
        if r != 0 {
            let e = std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
            self.done_now.push(Completion {
                slot,
                result: Err(e),
            });
            return;
        }
        self.busy[slot] = true;
    }

    fn wait(&mut self) -> Completion {
        loop {
            if let Some(c) = self.finished() {
                return c;
            }
            assert!(
                self.busy.iter().any(|&b| b),
                "posixaio: wait with nothing in flight"
            );
            self.suspend(None);
        }
    }

    fn wait_for(&mut self, ns: u64) -> Option<Completion> {
        if let Some(c) = self.finished() {
            return Some(c);
        }
        let t = libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        };
        self.suspend(Some(&t));
        self.finished()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_in_flight_complete_on_their_slots() {
        use super::super::backend::testing::{file_of, reads_complete_on_their_slots};
        let (_d, _p, f) = file_of(4, 8);
        let mut a = PosixAio::over(vec![f.into()], 8);
        let mut bufs = reads_complete_on_their_slots(&mut a, 4);
        a.submit(0, Op::Fsync, 0, &mut bufs[0], 0);
        assert_eq!(a.wait().result, Ok(0));
    }
}
