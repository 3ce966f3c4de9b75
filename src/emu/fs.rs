//! The FUSE filesystem of the emulated device: one directory holding one regular file, `disk`,
//! of the model's capacity. Reads and writes go to the same offsets of a sparse backing image;
//! fsync reaches the model as a cache flush and fallocate(PUNCH_HOLE) as a discard. Every reply
//! is due when the model says the request completes (divided by the time scale); replies not
//! yet due go to the timer queue, so request threads never sleep.

use std::ffi::OsStr;

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, InitFlags,
    KernelConfig, LockOwner, OpenFlags, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyWrite, Request as FuseRequest, WriteFlags,
};
use rustix::fs::FallocateFlags;

use super::backing::Backing;
use super::counters::{BufPool, Counters};
use super::model::{DeviceModel, ReqKind, Request};
use super::reqlog::RequestLog;
use super::timer::{Clock, TimerQueue};

/// Name of the device file in the mount.
pub const DISK_NAME: &str = "disk";
const DISK: INodeNo = INodeNo(2);
const TTL: Duration = Duration::from_secs(3600);
/// Largest request the kernel is asked to send (FUSE max_write / max_pages).
pub const MAX_IO: u32 = 1 << 20;
/// Requests the kernel may keep in flight in the background (async direct I/O from loop).
pub const MAX_BACKGROUND: u16 = 128;

/// A reply waiting for its due time.
pub enum Pending {
    Data {
        reply: ReplyData,
        buf: Vec<u8>,
        len: usize,
    },
    Written(ReplyWrite, u32),
    Empty(ReplyEmpty),
}

/// Sends replies and accounts for them; used inline and by the timer thread.
#[derive(Clone)]
pub struct Sender {
    pub clock: Clock,
    pub counters: Arc<Counters>,
    pub pool: Arc<BufPool>,
}

impl Sender {
    /// Sends `p` (as error `errno` if non-zero), due at `due_ns`.
    pub fn send(&self, due_ns: u64, p: Pending, errno: i32) {
        let now = self.clock.now_ns();
        let late = now.saturating_sub(due_ns);
        let err = (errno != 0).then(|| Errno::from_i32(errno));
        // Counted before the reply goes out: whoever the reply wakes sees it counted.
        self.counters.replied(late, errno != 0);
        match (p, err) {
            (Pending::Data { reply, buf, len }, None) => {
                reply.data(&buf[..len]);
                self.pool.give(buf);
            }
            (Pending::Data { reply, buf, .. }, Some(e)) => {
                reply.error(e);
                self.pool.give(buf);
            }
            (Pending::Written(reply, n), None) => reply.written(n),
            (Pending::Written(reply, _), Some(e)) => reply.error(e),
            (Pending::Empty(reply), None) => reply.ok(),
            (Pending::Empty(reply), Some(e)) => reply.error(e),
        }
        self.counters.sent(self.clock.now_ns() - now);
    }
}

/// The model and its arrival clock, shared by the FUSE threads and the server's `stats()`.
pub struct ModelState {
    pub model: Box<dyn DeviceModel>,
    /// Last arrival time given to the model (arrivals must not go backwards).
    pub last_ns: u64,
    /// Model time added to the scaled real time: what fast-forwards over idle background work
    /// skipped ([`crate::emu::EmuServer::background`]).
    pub offset_ns: u64,
    /// Every request received, while a trial's monitors ask for it.
    pub log: Option<RequestLog>,
    /// How long, in model time, the host has had a request in service.
    pub outstanding: Outstanding,
}

/// The model time during which at least one request was in service (from its arrival to its
/// completion, as the host sees it): the union of the requests' spans. Time scaling stretches
/// exactly this part of a run; the rest is the host's own time (its CPU, between requests).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outstanding {
    /// Completion of the latest request seen so far, model ns.
    until_ns: u64,
    /// The union's length so far, model ns.
    pub total_ns: u64,
}

impl Outstanding {
    /// A request arrived at `arrive_ns` and completes at `done_ns` (model ns; arrivals never
    /// go backwards).
    pub fn add(&mut self, arrive_ns: u64, done_ns: u64) {
        if done_ns > self.until_ns {
            self.total_ns += done_ns - arrive_ns.max(self.until_ns);
            self.until_ns = done_ns;
        }
    }
}

impl ModelState {
    /// The model's clock at real time `real_ns` on a device at time scale `scale` (never
    /// before the last time given to the model), remembered as the last.
    pub fn model_time(&mut self, real_ns: u64, scale: f64) -> u64 {
        let t = ((real_ns as f64 * scale) as u64)
            .saturating_add(self.offset_ns)
            .max(self.last_ns);
        self.last_ns = t;
        t
    }
}

/// The filesystem shared by the FUSE worker threads.
pub struct EmuFs {
    model: Arc<Mutex<ModelState>>,
    backing: Backing,
    capacity: u64,
    scale: f64,
    sender: Sender,
    timer: Arc<TimerQueue<(Pending, i32)>>,
    uid: u32,
    gid: u32,
    started: SystemTime,
}

impl EmuFs {
    pub fn new(
        model: Arc<Mutex<ModelState>>,
        capacity: u64,
        backing: Backing,
        scale: f64,
        sender: Sender,
        timer: Arc<TimerQueue<(Pending, i32)>>,
    ) -> Self {
        EmuFs {
            model,
            backing,
            capacity,
            scale,
            sender,
            timer,
            uid: rustix::process::getuid().as_raw(),
            gid: rustix::process::getgid().as_raw(),
            started: SystemTime::now(),
        }
    }

    /// Hands `req` to the model at the current time; returns (errno, real due time in ns).
    fn begin(&self, kind: ReqKind, offset: u64, len: u64) -> (i32, u64) {
        self.sender.counters.arrive(kind, len);
        let mut m = self.model.lock().unwrap_or_else(|e| e.into_inner());
        let arrive = self.sender.clock.now_ns();
        let model_now = m.model_time(arrive, self.scale);
        let resp = m.model.service(model_now, Request { kind, offset, len });
        m.outstanding.add(model_now, resp.done_ns);
        let delay = (resp.done_ns.saturating_sub(model_now) as f64 / self.scale) as u64;
        if let Some(log) = &mut m.log {
            log.push(kind, offset, len, arrive, delay);
        }
        drop(m);
        self.sender.counters.serviced(kind, delay);
        (resp.errno, arrive + delay)
    }

    /// Sends `p` now if due, else queues it on the timer.
    fn finish(&self, due_ns: u64, p: Pending, errno: i32) {
        let now = self.sender.clock.now_ns();
        if due_ns <= now {
            self.sender.counters.late_path(false, now - due_ns);
            self.sender.send(due_ns, p, errno);
        } else {
            self.timer.push(due_ns, (p, errno));
        }
    }

    fn attr(&self, ino: INodeNo) -> Option<FileAttr> {
        let (kind, perm, size, blocks, nlink) = match ino {
            INodeNo::ROOT => (FileType::Directory, 0o755, 0, 0, 2),
            DISK => {
                let blocks = self.backing.blocks();
                (FileType::RegularFile, 0o600, self.capacity, blocks, 1)
            }
            _ => return None,
        };
        let t = self.started;
        Some(FileAttr {
            ino,
            size,
            blocks,
            atime: t,
            mtime: t,
            ctime: t,
            crtime: t,
            kind,
            perm,
            nlink,
            uid: self.uid,
            gid: self.gid,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }

    /// The length of an I/O at `offset` clipped to the capacity.
    fn clip(&self, offset: u64, len: u64) -> u64 {
        len.min(self.capacity.saturating_sub(offset))
    }
}

fn errno_of(e: &std::io::Error) -> i32 {
    e.raw_os_error()
        .unwrap_or(rustix::io::Errno::IO.raw_os_error())
}

impl Filesystem for EmuFs {
    fn init(&mut self, _req: &FuseRequest, config: &mut KernelConfig) -> std::io::Result<()> {
        let _ = config.set_max_write(MAX_IO);
        let _ = config.set_max_readahead(MAX_IO);
        let _ = config.set_max_background(MAX_BACKGROUND);
        let _ = config.set_congestion_threshold(MAX_BACKGROUND * 3 / 4);
        // Asynchronous direct I/O lets the loop driver keep many requests in flight.
        let wanted = InitFlags::FUSE_ASYNC_DIO | InitFlags::FUSE_PARALLEL_DIROPS;
        let _ = config.add_capabilities(wanted & config.capabilities());
        Ok(())
    }

    fn lookup(&self, _req: &FuseRequest, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        match (parent, self.attr(DISK)) {
            (INodeNo::ROOT, Some(a)) if name == DISK_NAME => reply.entry(&TTL, &a, Generation(0)),
            _ => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &FuseRequest, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr(ino) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(Errno::ENOENT),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn setattr(
        &self,
        _req: &FuseRequest,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<fuser::TimeOrNow>,
        _mtime: Option<fuser::TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        // The device has a fixed size; everything else is accepted and ignored.
        match (self.attr(ino), size) {
            (Some(_), Some(s)) if ino == DISK && s != self.capacity => reply.error(Errno::EPERM),
            (Some(a), _) => reply.attr(&TTL, &a),
            (None, _) => reply.error(Errno::ENOENT),
        }
    }

    fn open(&self, _req: &FuseRequest, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        if ino != DISK {
            return reply.error(Errno::EISDIR);
        }
        // direct_io: no page cache for the FUSE file (the loop device and the filesystem on
        // it cache already); parallel direct writes: no inode lock around each write.
        let flags = FopenFlags::FOPEN_DIRECT_IO | FopenFlags::FOPEN_PARALLEL_DIRECT_WRITES;
        reply.opened(FileHandle(0), flags);
    }

    #[allow(clippy::too_many_arguments)]
    fn read(
        &self,
        _req: &FuseRequest,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        if ino != DISK {
            return reply.error(Errno::EISDIR);
        }
        let len = self.clip(offset, u64::from(size)) as usize;
        if len == 0 {
            return reply.data(&[]);
        }
        let (mut errno, due) = self.begin(ReqKind::Read, offset, len as u64);
        let mut buf = self.sender.pool.take(len);
        if errno == 0 {
            if let Err(e) = self.backing.read_exact_at(&mut buf[..len], offset) {
                errno = errno_of(&e);
            }
        }
        self.finish(due, Pending::Data { reply, buf, len }, errno);
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &self,
        _req: &FuseRequest,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        if ino != DISK {
            return reply.error(Errno::EISDIR);
        }
        let len = self.clip(offset, data.len() as u64) as usize;
        if len < data.len() {
            return reply.error(Errno::ENOSPC);
        }
        let (mut errno, due) = self.begin(ReqKind::Write, offset, len as u64);
        if errno == 0 {
            if let Err(e) = self.backing.write_all_at(data, offset) {
                errno = errno_of(&e);
            }
        }
        self.finish(due, Pending::Written(reply, len as u32), errno);
    }

    fn flush(
        &self,
        _req: &FuseRequest,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        // close(): not a cache flush of the device.
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &FuseRequest,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        // The loop driver's REQ_OP_FLUSH. The backing image is scratch space, so it is not
        // synced; only the model pays the flush.
        let (errno, due) = self.begin(ReqKind::Flush, 0, 0);
        self.finish(due, Pending::Empty(reply), errno);
    }

    fn fallocate(
        &self,
        _req: &FuseRequest,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        if ino != DISK {
            return reply.error(Errno::EISDIR);
        }
        let mode = FallocateFlags::from_bits_retain(mode as u32);
        let len = self.clip(offset, length);
        let (kind, res) = if mode.contains(FallocateFlags::PUNCH_HOLE) {
            // Discard (or write-zeroes that may unmap).
            (ReqKind::Discard, self.backing.punch_hole(offset, len))
        } else if mode.contains(FallocateFlags::ZERO_RANGE) {
            // Write-zeroes: the device writes the range; the image need not store zeros.
            (ReqKind::Write, self.backing.punch_hole(offset, len))
        } else if (mode - FallocateFlags::KEEP_SIZE).is_empty() {
            // Preallocation: the device is already "allocated"; nothing to model.
            return reply.ok();
        } else {
            return reply.error(Errno::EOPNOTSUPP);
        };
        let (mut errno, due) = self.begin(kind, offset, len);
        if let (0, Err(e)) = (errno, res) {
            errno = errno_of(&e);
        }
        self.finish(due, Pending::Empty(reply), errno);
    }

    fn readdir(
        &self,
        _req: &FuseRequest,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        if ino != INodeNo::ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let entries = [
            (INodeNo::ROOT, FileType::Directory, "."),
            (INodeNo::ROOT, FileType::Directory, ".."),
            (DISK, FileType::RegularFile, DISK_NAME),
        ];
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(*ino, (i + 1) as u64, *kind, name) {
                break;
            }
        }
        reply.ok();
    }
}

#[cfg(test)]
mod tests {
    use super::Outstanding;

    #[test]
    fn outstanding_time_is_the_union_of_the_requests_spans() {
        let mut o = Outstanding::default();
        o.add(0, 10);
        // Overlapping: only what reaches past 10 counts.
        o.add(5, 15);
        // Inside a span already counted: nothing.
        o.add(6, 12);
        // After a gap (15..20 idle: the host's own time).
        o.add(20, 30);
        // Acknowledged at once (a drive's write cache): no time in service.
        o.add(40, 40);
        assert_eq!(o.total_ns, 25);
    }
}
