//! The `io_uring` backend: up to `iodepth` I/Os in flight on one stream, submitted in batches
//! (the queued submissions go to the kernel with the next wait, in the same system call), with
//! the target registered as a fixed file and the stream's slot buffers registered once, so the
//! kernel maps neither per I/O. With many in flight a wait asks for an eighth of them, within
//! a bound of [`WAIT_BOUND_US`] on how long the first completion then waits in the ring. Where the kernel refuses a registration the backend carries on
//! without it and says so ([`Uring::open`]'s warnings).

use super::backend::{Backend, Completion};
use super::psync::{sync_op, Target};
use crate::engine::buffer::AlignedBuf;
use crate::engine::samples::sample::Op;
use io_uring::{opcode, squeue, types, IoUring};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

/// io_uring at a queue depth of its own.
pub struct Uring {
    ring: IoUring,
    /// The targets (file k of `submit_to`), with their kinds for a trim.
    targets: Vec<Target>,
    depth: usize,
    /// The targets are registered files 0, 1, ...
    fixed_file: bool,
    /// The slot buffers are registered, buffer index = slot.
    fixed_bufs: bool,
    /// Submissions queued and not yet handed to the kernel.
    queued: u32,
    /// Made disabled, for the stream's thread to enable as its single issuer.
    disabled: bool,
    /// I/Os submitted and not yet reaped.
    in_flight: usize,
    /// Whether the kernel bounds a wait for several completions (`min_wait_usec`, 6.12).
    min_timeout: bool,
    /// Results of ops done synchronously (a block device's discard), by slot, returned by the
    /// no-op submitted in their place.
    done_now: Vec<Option<Result<u64, i32>>>,
    /// The length of a trim in flight on a slot (fallocate's result is 0).
    trim_len: Vec<Option<u64>>,
    /// The I/O priority of each slot's reads and writes (0: the thread's).
    prio: Vec<u16>,
}

/// With many I/Os in flight, a wait asks for this share of them (at least one), so the kernel
/// wakes the stream once per few completions instead of once per completion: on a device whose
/// reads the kernel's workers serve (zram), a wake-up per completion cost the workers enough to
/// leave fio 10-15% ahead at QD32.
const WAIT_SHARE: usize = 8;
/// Longest a completion may wait in the ring for the others a wait asks for, µs: the most a
/// sample's completion time can be late by (the kernel then returns with what it has).
pub const WAIT_BOUND_US: u32 = 10;

impl Uring {
    /// A ring of `depth` entries over `fds` (file k of `submit_to` is `fds[k]`), the targets
    /// registered as fixed files when the kernel allows; the warnings say what it refused.
    pub fn open_all(fds: Vec<OwnedFd>, depth: usize) -> io::Result<(Uring, Vec<String>)> {
        let depth = depth.max(1);
        let entries = (depth as u32).next_power_of_two();
        // One issuer whose completions are reaped only when it waits (no interrupting task
        // work), enabled by the stream's own thread in `start`; older kernels get less.
        let (ring, disabled) = match IoUring::builder()
            .setup_r_disabled()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(entries)
        {
            Ok(r) => (r, true),
            Err(_) => (
                IoUring::builder()
                    .setup_coop_taskrun()
                    .build(entries)
                    .or_else(|_| IoUring::new(entries))?,
                false,
            ),
        };
        let min_timeout = ring.params().is_feature_min_timeout();
        let mut warnings = Vec::new();
        let raw: Vec<i32> = fds.iter().map(|f| f.as_raw_fd()).collect();
        let fixed_file = match ring.submitter().register_files(&raw) {
            Ok(()) => true,
            Err(e) => {
                warnings.push(format!(
                    "io_uring: the kernel refused to register the target as a fixed file ({e}); each I/O names its descriptor"
                ));
                false
            }
        };
        Ok((
            Uring {
                ring,
                targets: fds.into_iter().map(Target::new).collect(),
                depth,
                fixed_file,
                fixed_bufs: false,
                queued: 0,
                disabled,
                in_flight: 0,
                min_timeout,
                done_now: vec![None; depth],
                trim_len: vec![None; depth],
                prio: vec![0; depth],
            },
            warnings,
        ))
    }

    fn entry(
        &self,
        file: usize,
        slot: usize,
        op: Op,
        offset: u64,
        buf: &mut AlignedBuf,
        len: usize,
    ) -> squeue::Entry {
        let ptr = buf.as_mut_slice().as_mut_ptr();
        let (len32, idx) = (len as u32, slot as u16);
        let prio = self.prio[slot];
        macro_rules! on {
            ($fd:expr) => {
                match (op, self.fixed_bufs) {
                    (Op::Read, true) => opcode::ReadFixed::new($fd, ptr, len32, idx)
                        .offset(offset)
                        .ioprio(prio)
                        .build(),
                    (Op::Read, false) => opcode::Read::new($fd, ptr, len32)
                        .offset(offset)
                        .ioprio(prio)
                        .build(),
                    (Op::Write, true) => opcode::WriteFixed::new($fd, ptr, len32, idx)
                        .offset(offset)
                        .ioprio(prio)
                        .build(),
                    (Op::Write, false) => opcode::Write::new($fd, ptr, len32)
                        .offset(offset)
                        .ioprio(prio)
                        .build(),
                    (Op::Fsync, _) => opcode::Fsync::new($fd).build(),
                    (Op::Fdatasync, _) => opcode::Fsync::new($fd)
                        .flags(types::FsyncFlags::DATASYNC)
                        .build(),
                    (Op::Trim, _) => opcode::Fallocate::new($fd, len as u64)
                        .offset(offset)
                        .mode(libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE)
                        .build(),
                    // Other file-system ops come from a stream's own source, never through a
                    // backend: a no-op that completes at once.
                    _ => opcode::Nop::new().build(),
                }
            };
        }
        let e = if self.fixed_file {
            on!(types::Fixed(file as u32))
        } else {
            on!(types::Fd(self.targets[file].fd.as_raw_fd()))
        };
        e.user_data(slot as u64)
    }

    /// Takes one completion the kernel has posted, if any.
    fn reap(&mut self) -> Option<Completion> {
        let cqe = self.ring.completion().next()?;
        self.in_flight = self.in_flight.saturating_sub(1);
        let r = cqe.result();
        let slot = cqe.user_data() as usize;
        let trim = self.trim_len.get_mut(slot).and_then(Option::take);
        let result = match self.done_now.get_mut(slot).and_then(Option::take) {
            Some(done) => done,
            None if r < 0 => Err(-r),
            // fallocate returns 0: a trim's bytes are its length.
            None => Ok(trim.unwrap_or(r as u64)),
        };
        Some(Completion { slot, result })
    }

    /// Hands the queued submissions to the kernel and waits for a completion: for a share of
    /// those in flight when the kernel bounds how long the first one then waits
    /// ([`WAIT_BOUND_US`]), else for one.
    fn enter_for_some(&mut self) -> io::Result<()> {
        let want = (self.in_flight / WAIT_SHARE).max(1);
        if want == 1 || !self.min_timeout {
            return self.enter(1);
        }
        let args = types::SubmitArgs::new().min_wait_usec(WAIT_BOUND_US);
        let r = self.ring.submitter().submit_with_args(want, &args);
        if r.is_ok()
            || r.as_ref()
                .is_err_and(|e| e.raw_os_error() == Some(libc::ETIME))
        {
            // ETIME: the submissions went in; the wait ended before `want` completed.
            self.queued = 0;
        }
        r.map(|_| ())
    }

    /// Hands the queued submissions to the kernel and waits for `want` completions.
    fn enter(&mut self, want: usize) -> io::Result<()> {
        let r = self.ring.submit_and_wait(want);
        if r.is_ok() {
            self.queued = 0;
        }
        r.map(|_| ())
    }
}

impl Backend for Uring {
    fn queue_depth(&self) -> usize {
        self.depth
    }

    fn start(&mut self) {
        if std::mem::take(&mut self.disabled) {
            // Cannot fail for a ring this process made disabled; if it did, every I/O would
            // fail and say so in its sample.
            let _ = self.ring.submitter().register_enable_rings();
        }
    }

    fn set_prio(&mut self, slot: usize, prio: u16) -> bool {
        self.prio[slot] = prio;
        true
    }

    fn register(&mut self, bufs: &[AlignedBuf]) -> Option<String> {
        let iovecs: Vec<libc::iovec> = bufs
            .iter()
            .map(|b| libc::iovec {
                iov_base: b.as_slice().as_ptr() as *mut libc::c_void,
                iov_len: b.as_slice().len(),
            })
            .collect();
        // SAFETY: the buffers outlive every I/O on them: the stream drains its slots and drops
        // the backend (which closes the ring) before its buffers.
        match unsafe { self.ring.submitter().register_buffers(&iovecs) } {
            Ok(()) => {
                self.fixed_bufs = true;
                None
            }
            Err(e) => Some(format!(
                "io_uring: the kernel refused to register the I/O buffers ({e}; RLIMIT_MEMLOCK?); each I/O maps its buffer"
            )),
        }
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
        let e = if op == Op::Trim && self.targets[file].block {
            // A discard has no io_uring opcode: done now, its result handed back by a no-op.
            self.done_now[slot] = Some(sync_op(&self.targets[file], op, offset, len));
            opcode::Nop::new().build().user_data(slot as u64)
        } else {
            if op == Op::Trim {
                self.trim_len[slot] = Some(len as u64);
            }
            self.entry(file, slot, op, offset, buf, len)
        };
        loop {
            // SAFETY: the buffer stays valid and untouched until this slot's completion.
            if unsafe { self.ring.submission().push(&e) }.is_ok() {
                self.queued += 1;
                self.in_flight += 1;
                return;
            }
            // The submission queue is full: hand it over first.
            let _ = self.ring.submit();
            self.queued = 0;
        }
    }

    fn wait(&mut self) -> Completion {
        loop {
            if let Some(c) = self.reap() {
                return c;
            }
            match self.enter_for_some() {
                Ok(()) => {}
                // Interrupted, or the bounded wait ended with fewer than it asked for.
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::ETIME)) => {}
                Err(e) => panic!("io_uring_enter failed: {e}"),
            }
        }
    }

    fn wait_for(&mut self, ns: u64) -> Option<Completion> {
        if let Some(c) = self.reap() {
            return Some(c);
        }
        let ts = types::Timespec::new()
            .sec(ns / 1_000_000_000)
            .nsec((ns % 1_000_000_000) as u32);
        let args = types::SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(1, &args) {
            Ok(_) => self.queued = 0,
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => self.queued = 0,
            Err(_) => {}
        }
        self.reap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A started ring of `depth` over a temporary file of `depth` 4 KiB blocks of `byte`, with
    /// one registered buffer per slot; `None` (and why) where io_uring is not available.
    fn ring_over_file(
        byte: u8,
        depth: usize,
    ) -> Option<(tempfile::TempDir, Uring, Vec<AlignedBuf>)> {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t");
        std::fs::write(&p, vec![byte; depth * 4096]).unwrap();
        let f = std::fs::File::open(&p).unwrap();
        let Ok((mut u, _)) = Uring::open_all(vec![f.into()], depth) else {
            eprintln!("skipped: io_uring is not available here");
            return None;
        };
        let bufs: Vec<AlignedBuf> = (0..depth).map(|_| AlignedBuf::new(4096)).collect();
        let _ = u.register(&bufs);
        u.start();
        Some((d, u, bufs))
    }

    #[test]
    fn many_in_flight_complete_on_their_slots() {
        let Some((_d, mut u, mut bufs)) = ring_over_file(7, 8) else {
            return;
        };
        for (slot, b) in bufs.iter_mut().enumerate() {
            u.submit(slot, Op::Read, slot as u64 * 4096, b, 4096);
        }
        let mut seen = [false; 8];
        for _ in 0..8 {
            let c = u.wait();
            assert_eq!(c.result, Ok(4096));
            seen[c.slot] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert!(bufs.iter().all(|b| b.as_slice().iter().all(|&x| x == 7)));
        assert!(u.wait_for(1_000_000).is_none(), "nothing left in flight");
    }

    #[test]
    fn a_deep_queue_waits_for_several_and_loses_none() {
        // 64 in flight: each wait asks for 8 when the kernel bounds the wait; the last few,
        // fewer than 8, must still come back (the bound ends the wait, ETIME is no error).
        let Some((_d, mut u, mut bufs)) = ring_over_file(3, 64) else {
            return;
        };
        for round in 0..3 {
            for (slot, b) in bufs.iter_mut().enumerate() {
                u.submit(slot, Op::Read, slot as u64 * 4096, b, 4096);
            }
            let mut seen = [false; 64];
            for _ in 0..64 {
                let c = u.wait();
                assert_eq!(c.result, Ok(4096), "round {round}");
                assert!(!std::mem::replace(&mut seen[c.slot], true));
            }
            assert_eq!(u.in_flight, 0);
        }
        assert!(bufs.iter().all(|b| b.as_slice().iter().all(|&x| x == 3)));
    }
}
