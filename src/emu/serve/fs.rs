//! The FUSE filesystem of the emulated device: one directory holding one regular file, `disk`,
//! of the model's capacity. Reads and writes go to the same offsets of a sparse backing image
//! (a write of zeros as a hole); fsync reaches the model as a cache flush and
//! fallocate(PUNCH_HOLE) as a discard. Every reply is due when the model says the request
//! completes (divided by the time scale); replies not yet due go to the timer queue, so
//! request threads never sleep.

use std::ffi::OsStr;

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use fuser::{
    AccessFlags, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation,
    INodeNo, InitFlags, KernelConfig, LockOwner, OpenFlags, ReplyAttr, ReplyData, ReplyDirectory,
    ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, ReplyXattr, Request as FuseRequest,
    WriteFlags,
};
use rustix::fs::FallocateFlags;

use super::backing::Backing;
use super::journal::CutState;
use super::model::{ReqKind, Unsettled};
use super::order::{SubmitOrder, Turn};
use super::replies::{Begun, ModelState, Out, Pending};

/// Name of the device file in the mount.
pub const DISK_NAME: &str = "disk";
const DISK: INodeNo = INodeNo(2);
const TTL: Duration = Duration::from_secs(3600);
/// Largest request the kernel is asked to send (FUSE max_write / max_pages).
pub const MAX_IO: u32 = 1 << 20;
/// Requests the kernel may keep in flight in the background (async direct I/O from loop).
pub const MAX_BACKGROUND: u16 = 128;

/// The filesystem shared by the FUSE worker threads.
pub struct EmuFs {
    model: Arc<Mutex<ModelState>>,
    backing: Arc<Backing>,
    cut: Arc<CutState>,
    capacity: u64,
    out: Out,
    /// The order the kernel queued the requests in, which the model takes them in.
    order: SubmitOrder,
    uid: u32,
    gid: u32,
    started: SystemTime,
}

impl EmuFs {
    pub fn new(
        model: Arc<Mutex<ModelState>>,
        capacity: u64,
        (backing, cut): (Arc<Backing>, Arc<CutState>),
        out: Out,
    ) -> Self {
        EmuFs {
            model,
            backing,
            cut,
            capacity,
            out,
            order: SubmitOrder::default(),
            uid: rustix::process::getuid().as_raw(),
            gid: rustix::process::getgid().as_raw(),
            started: SystemTime::now(),
        }
    }

    /// The turn of the kernel's request `req`, arrived now: once those the kernel queued
    /// before it have reached the model.
    fn turn(&self, req: &FuseRequest) -> Turn<'_> {
        let arrive = self.out.sender.clock.now_ns();
        let turn = self.order.turn(req.unique().0, arrive);
        self.out.sender.counters.came(turn.came);
        turn
    }

    /// A kernel request that never reaches the model, counted in the order.
    fn seen(&self, req: &FuseRequest) {
        self.order.seen(req.unique().0);
    }

    /// Hands a request to the model in its turn: its errno and due time, or deferred.
    fn begin(&self, turn: Turn<'_>, kind: ReqKind, offset: u64, len: u64) -> Begun {
        self.begin_noted(turn, kind, offset, len).0
    }

    /// [`Self::begin`], with its arrival on the server clock and on the model's timeline.
    pub(super) fn begin_noted(
        &self,
        turn: Turn<'_>,
        kind: ReqKind,
        offset: u64,
        len: u64,
    ) -> (Begun, u64, u64) {
        self.out.sender.counters.arrive(kind, len);
        let mut m = self.model.lock().unwrap_or_else(|e| e.into_inner());
        let (begun, arrive) = m.begin(&self.out, kind, offset, len, turn.arrive_ns);
        let noted = (begun, arrive, m.last_ns);
        drop(m);
        turn.done();
        noted
    }

    /// What the model names unsettled at `now_model_ns`, and the completions it decided since
    /// the journal last asked.
    pub(super) fn ask_model(&self, now_model_ns: u64) -> (Vec<Unsettled>, Vec<(u64, u64, u64)>) {
        let mut m = self.model.lock().unwrap_or_else(|e| e.into_inner());
        let u = m.model.unsettled(now_model_ns);
        (u, std::mem::take(&mut m.resolved))
    }

    /// The image.
    pub(super) fn image(&self) -> &Backing {
        &self.backing
    }

    /// The device's power and cut journal.
    pub(super) fn cut_state(&self) -> &CutState {
        &self.cut
    }

    /// The errno a request ends with: the model's when it failed the request, else that of
    /// the image I/O `image`, which is not done for a failed request (a failed write leaves
    /// the old data).
    fn errno(begun: Begun, image: impl FnOnce() -> std::io::Result<()>) -> i32 {
        match begun {
            Begun::Due { errno, .. } if errno != 0 => errno,
            _ => image().err().map_or(0, |e| errno_of(&e)),
        }
    }

    /// Writes `data` at `offset` of the image; zeros are kept as a hole (a device that reads
    /// its holes as an earlier owner's data writes them).
    fn store(&self, data: &[u8], offset: u64) -> std::io::Result<()> {
        if self.cut.stale() {
            return self.backing.write_all_at(data, offset);
        }
        if self.backing.write_or_punch(data, offset)? {
            self.out.sender.counters.kept_as_hole(data.len() as u64);
        }
        Ok(())
    }

    /// Runs `image` (a read from the image, or a store into it when `write`), its time counted.
    pub(super) fn timed<T>(&self, write: bool, image: impl FnOnce() -> T) -> T {
        let clock = &self.out.sender.clock;
        let start = clock.now_ns();
        let r = image();
        self.out
            .sender
            .counters
            .imaged(write, clock.now_ns() - start);
        r
    }

    /// Sends `p` when due: now, on the timer, or once the model reports a deferred request.
    fn finish(&self, begun: Begun, p: Pending, errno: i32) {
        match begun {
            Begun::Due { due_ns, .. } => self.out.finish(due_ns, p, errno, false),
            Begun::Deferred(id) => {
                let mut m = self.model.lock().unwrap_or_else(|e| e.into_inner());
                m.park(&self.out, id, p, errno);
            }
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

pub(super) fn errno_of(e: &std::io::Error) -> i32 {
    e.raw_os_error()
        .unwrap_or(rustix::io::Errno::IO.raw_os_error())
}

impl Filesystem for EmuFs {
    fn init(&mut self, req: &FuseRequest, config: &mut KernelConfig) -> std::io::Result<()> {
        self.seen(req);
        let _ = config.set_max_write(MAX_IO);
        let _ = config.set_max_readahead(MAX_IO);
        let _ = config.set_max_background(MAX_BACKGROUND);
        let _ = config.set_congestion_threshold(MAX_BACKGROUND * 3 / 4);
        // Asynchronous direct I/O lets the loop driver keep many requests in flight.
        let wanted = InitFlags::FUSE_ASYNC_DIO | InitFlags::FUSE_PARALLEL_DIROPS;
        let _ = config.add_capabilities(wanted & config.capabilities());
        Ok(())
    }

    fn lookup(&self, req: &FuseRequest, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        self.seen(req);
        match (parent, self.attr(DISK)) {
            (INodeNo::ROOT, Some(a)) if name == DISK_NAME => reply.entry(&TTL, &a, Generation(0)),
            _ => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, req: &FuseRequest, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        self.seen(req);
        match self.attr(ino) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(Errno::ENOENT),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn setattr(
        &self,
        req: &FuseRequest,
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
        self.seen(req);
        // The device has a fixed size; everything else is accepted and ignored.
        match (self.attr(ino), size) {
            (Some(_), Some(s)) if ino == DISK && s != self.capacity => reply.error(Errno::EPERM),
            (Some(a), _) => reply.attr(&TTL, &a),
            (None, _) => reply.error(Errno::ENOENT),
        }
    }

    fn open(&self, req: &FuseRequest, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        self.seen(req);
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
        req: &FuseRequest,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let turn = self.turn(req);
        if ino != DISK {
            return reply.error(Errno::EISDIR);
        }
        let len = self.clip(offset, u64::from(size)) as usize;
        if len == 0 {
            return reply.data(&[]);
        }
        let begun = self.begin(turn, ReqKind::Read, offset, len as u64);
        let mut buf = self.out.sender.pool.take(len);
        let errno = Self::errno(begun, || {
            self.timed(false, || {
                self.backing
                    .read_exact_at(&mut buf[..len], offset)
                    .and_then(|()| self.fill_stale(&mut buf[..len], offset))
            })
        });
        self.finish(begun, Pending::Data { reply, buf, len }, errno);
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &self,
        req: &FuseRequest,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let turn = self.turn(req);
        if ino != DISK {
            return reply.error(Errno::EISDIR);
        }
        let len = self.clip(offset, data.len() as u64) as usize;
        if len < data.len() {
            return reply.error(Errno::ENOSPC);
        }
        let (begun, errno) = match self.journaled_write(turn, offset, Some(data), len as u64) {
            Ok(r) => r,
            Err(turn) => {
                let begun = self.begin(turn, ReqKind::Write, offset, len as u64);
                let store = || self.timed(true, || self.store(data, offset));
                (begun, Self::errno(begun, store))
            }
        };
        self.finish(begun, Pending::Written(reply, len as u32), errno);
    }

    fn flush(
        &self,
        req: &FuseRequest,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        // close(): not a cache flush of the device.
        self.seen(req);
        reply.ok();
    }

    #[allow(clippy::too_many_arguments)]
    fn release(
        &self,
        req: &FuseRequest,
        _ino: INodeNo,
        _fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.seen(req);
        reply.ok();
    }

    fn forget(&self, req: &FuseRequest, _ino: INodeNo, _nlookup: u64) {
        self.seen(req);
    }

    fn opendir(&self, req: &FuseRequest, _ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        self.seen(req);
        reply.opened(FileHandle(0), FopenFlags::empty());
    }

    fn releasedir(
        &self,
        req: &FuseRequest,
        _ino: INodeNo,
        _fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        self.seen(req);
        reply.ok();
    }

    fn statfs(&self, req: &FuseRequest, _ino: INodeNo, reply: ReplyStatfs) {
        self.seen(req);
        reply.statfs(0, 0, 0, 0, 0, 512, 255, 0);
    }

    fn getxattr(
        &self,
        req: &FuseRequest,
        _ino: INodeNo,
        _name: &OsStr,
        _size: u32,
        reply: ReplyXattr,
    ) {
        // The kernel asks once whether a write must drop privileges (security.capability).
        self.seen(req);
        reply.error(Errno::ENOSYS);
    }

    fn access(&self, req: &FuseRequest, _ino: INodeNo, _mask: AccessFlags, reply: ReplyEmpty) {
        self.seen(req);
        reply.error(Errno::ENOSYS);
    }

    fn fsync(
        &self,
        req: &FuseRequest,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        // The loop driver's REQ_OP_FLUSH. The backing image is scratch space, so it is not
        // synced; only the model pays the flush.
        let turn = self.turn(req);
        let begun = self
            .journaled_flush(turn)
            .unwrap_or_else(|turn| self.begin(turn, ReqKind::Flush, 0, 0));
        let errno = Self::errno(begun, || Ok(()));
        self.finish(begun, Pending::Empty(reply), errno);
    }

    fn fallocate(
        &self,
        req: &FuseRequest,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        let turn = self.turn(req);
        if ino != DISK {
            return reply.error(Errno::EISDIR);
        }
        let mode = FallocateFlags::from_bits_retain(mode as u32);
        let len = self.clip(offset, length);
        if self.cut.stale() && !(mode - FallocateFlags::KEEP_SIZE).is_empty() {
            // A used hard disk has no TRIM: the kernel writes zeros itself where it must.
            return reply.error(Errno::EOPNOTSUPP);
        }
        let turn = match self.journaled_fallocate(turn, mode, offset, len) {
            Ok((begun, errno)) => return self.finish(begun, Pending::Empty(reply), errno),
            Err(turn) => turn,
        };
        let kind = if mode.contains(FallocateFlags::PUNCH_HOLE) {
            // Discard (or write-zeroes that may unmap).
            ReqKind::Discard
        } else if mode.contains(FallocateFlags::ZERO_RANGE) {
            // Write-zeroes: the device writes the range; the image need not store zeros.
            ReqKind::Write
        } else if (mode - FallocateFlags::KEEP_SIZE).is_empty() {
            // Preallocation: the device is already "allocated"; nothing to model.
            return reply.ok();
        } else {
            return reply.error(Errno::EOPNOTSUPP);
        };
        let begun = self.begin(turn, kind, offset, len);
        let errno = Self::errno(begun, || self.backing.punch_hole(offset, len));
        self.finish(begun, Pending::Empty(reply), errno);
    }

    fn readdir(
        &self,
        req: &FuseRequest,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        self.seen(req);
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
