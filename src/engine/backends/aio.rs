//! The `libaio` backend: the kernel's native asynchronous I/O, through its own system calls
//! (io_setup, io_submit, io_getevents, io_destroy; no library), as fio's libaio engine
//! drives it: up to `iodepth` I/Os in flight on one stream, submissions queued and handed to
//! the kernel by io_submit each at once (fio's `iodepth_batch_submit=1`) or in batches,
//! completions reaped several at a time (up to the queue depth per io_getevents, at least
//! `iodepth_batch_complete_min`). A sync or a trim is done at once, as fio's engine does
//! them, its result handed back with the next completions. An I/O may carry an I/O priority
//! (IOCB_FLAG_IOPRIO).

use super::backend::{Backend, Completion};
use super::psync::{sync_op, Target};
use crate::engine::buffer::AlignedBuf;
use crate::engine::samples::sample::Op;
use std::os::fd::{AsRawFd, OwnedFd};

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
const IOCB_FLAG_IOPRIO: u32 = 1 << 1;

/// The kernel's `struct iocb` (linux/aio_abi.h, little-endian).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    data: u64,
    key: u32,
    rw_flags: i32,
    opcode: u16,
    reqprio: i16,
    fildes: u32,
    buf: u64,
    nbytes: u64,
    offset: i64,
    reserved2: u64,
    flags: u32,
    resfd: u32,
}

/// The kernel's `struct io_event`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

/// An AIO context of the kernel's.
type AioContext = libc::c_ulong;

fn io_setup(n: u32, ctx: &mut AioContext) -> std::io::Result<()> {
    // SAFETY: io_setup writes the new context into `ctx`.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_setup,
            n as libc::c_long,
            ctx as *mut AioContext,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// io_submit of `n` iocbs: how many the kernel took, or the errno.
fn io_submit(ctx: AioContext, iocbs: &[*mut Iocb]) -> Result<usize, i32> {
    // SAFETY: every pointer is to a live iocb the kernel copies during the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_submit,
            ctx,
            iocbs.len() as libc::c_long,
            iocbs.as_ptr(),
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO));
    }
    Ok(r as usize)
}

/// io_getevents of between `min` and `events.len()` events, waiting at most `timeout`.
fn io_getevents(
    ctx: AioContext,
    min: usize,
    events: &mut [IoEvent],
    timeout: Option<&libc::timespec>,
) -> Result<usize, i32> {
    let t = timeout.map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `events` has room for its length of events; `t` is null or a live timespec.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_getevents,
            ctx,
            min as libc::c_long,
            events.len() as libc::c_long,
            events.as_mut_ptr(),
            t,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO));
    }
    Ok(r as usize)
}

/// The kernel's native AIO at a queue depth of its own.
pub struct Aio {
    ctx: AioContext,
    targets: Vec<Target>,
    depth: usize,
    /// One iocb per slot (its `data` is the slot).
    iocbs: Vec<Iocb>,
    /// Slots queued for the next io_submit.
    queued: Vec<usize>,
    /// Submitted and not yet reaped.
    in_flight: usize,
    /// Events reaped and not yet handed out, and where the next one is.
    events: Vec<IoEvent>,
    ready: usize,
    next: usize,
    /// Results known without the kernel (a trim done at once, a refused submission).
    done_now: Vec<Completion>,
    /// The I/O priority of each slot's next I/O (0: none).
    prio: Vec<u16>,
    /// Submissions handed to the kernel together (fio's `iodepth_batch_submit`, 1 by
    /// default: each at once, as fio does).
    batch: usize,
    /// Completions a wait asks the kernel for at least (`iodepth_batch_complete_min`).
    complete_min: usize,
}

impl Aio {
    /// A context of `depth` entries over `fds` (file k of `submit_to` is `fds[k]`).
    pub fn open_all(fds: Vec<OwnedFd>, depth: usize) -> std::io::Result<Aio> {
        let depth = depth.max(1);
        let mut ctx: AioContext = 0;
        io_setup(depth as u32, &mut ctx)?;
        Ok(Aio {
            ctx,
            targets: fds.into_iter().map(Target::new).collect(),
            depth,
            iocbs: vec![Iocb::default(); depth],
            queued: Vec::with_capacity(depth),
            in_flight: 0,
            events: vec![IoEvent::default(); depth],
            ready: 0,
            next: 0,
            done_now: Vec::with_capacity(depth),
            prio: vec![0; depth],
            batch: 1,
            complete_min: 1,
        })
    }

    /// Hands every queued iocb to the kernel; those it refuses complete with its errno.
    fn submit_queued(&mut self) {
        while !self.queued.is_empty() {
            let mut batch = [std::ptr::null_mut::<Iocb>(); 64];
            let n = self.queued.len().min(batch.len());
            for (k, &slot) in self.queued[..n].iter().enumerate() {
                batch[k] = &mut self.iocbs[slot] as *mut Iocb;
            }
            match io_submit(self.ctx, &batch[..n]) {
                Ok(0) | Err(libc::EAGAIN) if self.in_flight > 0 => return,
                Ok(took) => {
                    self.in_flight += took;
                    self.queued.drain(..took);
                }
                Err(e) => {
                    // The first one failed: it completes with the errno; the rest wait.
                    let slot = self.queued.remove(0);
                    self.done_now.push(Completion {
                        slot,
                        result: Err(e),
                    });
                }
            }
        }
    }

    /// A completion already reaped or known, if any.
    fn take(&mut self) -> Option<Completion> {
        if let Some(c) = self.done_now.pop() {
            return Some(c);
        }
        if self.next < self.ready {
            let e = self.events[self.next];
            self.next += 1;
            self.in_flight -= 1;
            return Some(Completion {
                slot: e.data as usize,
                result: if e.res >= 0 {
                    Ok(e.res as u64)
                } else {
                    Err((-e.res) as i32)
                },
            });
        }
        None
    }

    /// Reaps at least `min` events (at most the queue depth), waiting at most `timeout`.
    fn reap(&mut self, min: usize, timeout: Option<&libc::timespec>) {
        self.submit_queued();
        if self.in_flight == 0 {
            return;
        }
        loop {
            match io_getevents(self.ctx, min.min(self.in_flight), &mut self.events, timeout) {
                Ok(n) => {
                    self.ready = n;
                    self.next = 0;
                    return;
                }
                Err(libc::EINTR) if timeout.is_none() => continue,
                Err(_) => return,
            }
        }
    }
}

impl Drop for Aio {
    fn drop(&mut self) {
        // Whatever is still in flight is cancelled with the context.
        // SAFETY: the context is this backend's own, destroyed once.
        unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
    }
}

impl Backend for Aio {
    fn queue_depth(&self) -> usize {
        self.depth
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
        let opcode = match op {
            Op::Read => IOCB_CMD_PREAD,
            Op::Write => IOCB_CMD_PWRITE,
            _ => {
                // A sync or a trim: done now, as fio's libaio engine does them, handed back
                // with the completions.
                let result = sync_op(&self.targets[file], op, offset, len);
                self.done_now.push(Completion { slot, result });
                return;
            }
        };
        let prio = self.prio[slot];
        self.iocbs[slot] = Iocb {
            data: slot as u64,
            opcode,
            fildes: self.targets[file].fd.as_raw_fd() as u32,
            buf: buf.as_mut_slice().as_mut_ptr() as u64,
            nbytes: len as u64,
            offset: offset as i64,
            reqprio: prio as i16,
            flags: if prio != 0 { IOCB_FLAG_IOPRIO } else { 0 },
            ..Iocb::default()
        };
        self.queued.push(slot);
        if self.queued.len() >= self.batch {
            self.submit_queued();
        }
    }

    fn flush(&mut self) {
        self.submit_queued();
    }

    fn batching(&mut self, submit: usize, complete_min: usize) {
        self.batch = submit.clamp(1, self.depth);
        self.complete_min = complete_min.clamp(1, self.depth);
    }

    fn set_prio(&mut self, slot: usize, prio: u16) -> bool {
        self.prio[slot] = prio;
        true
    }

    fn wait(&mut self) -> Completion {
        loop {
            if let Some(c) = self.take() {
                return c;
            }
            self.reap(self.complete_min, None);
            if self.in_flight == 0 && self.done_now.is_empty() && self.next >= self.ready {
                panic!("libaio: wait with nothing in flight");
            }
        }
    }

    fn wait_for(&mut self, ns: u64) -> Option<Completion> {
        if let Some(c) = self.take() {
            return Some(c);
        }
        let t = libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        };
        self.reap(1, Some(&t));
        self.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_writes_and_syncs_complete_on_their_slots() {
        use super::super::backend::testing::{file_of, reads_complete_on_their_slots};
        let (_d, p, f) = file_of(5, 16);
        let Ok(mut a) = Aio::open_all(vec![f.into()], 16) else {
            eprintln!("skipped: the kernel refused an AIO context here");
            return;
        };
        let mut bufs = reads_complete_on_their_slots(&mut a, 5);
        bufs[0].as_mut_slice().fill(9);
        a.submit(0, Op::Write, 0, &mut bufs[0], 4096);
        assert_eq!(a.wait().result, Ok(4096));
        a.submit(1, Op::Fdatasync, 0, &mut bufs[1], 0);
        assert_eq!(a.wait().result, Ok(0));
        a.submit(2, Op::Trim, 8192, &mut bufs[2], 4096);
        assert_eq!(
            a.wait(),
            Completion {
                slot: 2,
                result: Ok(4096)
            }
        );
        let data = std::fs::read(&p).unwrap();
        assert!(data[..4096].iter().all(|&x| x == 9));
        assert!(
            data[8192..12288].iter().all(|&x| x == 0),
            "the trim punched a hole"
        );
        assert!(a.wait_for(1_000_000).is_none(), "nothing left in flight");
    }
}
