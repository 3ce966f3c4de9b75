//! tree's operation sources, one per stream, each working in the directory the stack placed
//! its stream in: a creating thread makes its tree depth first (mkdir, then the directory's
//! files: create, write, close); a removing thread does what `rm -rf` does to the trees of
//! its creating threads (list a directory, unlink its files, descend into its directories,
//! then rmdir it), so the directories it finds are the tree as the filesystem holds it; a
//! file-server thread loops over filebench's fileserver mix on a working set of its own.

use super::shape::{Shape, Walk};
use crate::engine::buffer::AlignedBuf;
use crate::engine::rng::SplitMix64;
use crate::engine::sources::fsops;
use crate::engine::{Op, OpSource, Source, SourceCtx};
use std::ffi::{CStr, CString};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Mean size of a file-server file (filebench's fileserver: 128 KiB).
pub const MEAN_FILE: u64 = 128 << 10;
/// Bytes the file server appends to a file (filebench's fileserver: 16 KiB).
pub const APPEND: u64 = 16 << 10;
/// File-server files are 4 KiB to 252 KiB in 4 KiB steps, uniformly: 128 KiB on average.
const SIZE_STEP: u64 = 4 << 10;
const SIZE_STEPS: u64 = 2 * MEAN_FILE / SIZE_STEP - 1;

/// A buffer of `len` bytes (at least one page) of seeded noise, for what the sources write.
fn noise(len: u64, seed: u64) -> AlignedBuf {
    let mut b = AlignedBuf::new(len.max(4096) as usize);
    b.fill_random(seed);
    b
}

/// `path` as the C string the file-system calls take (a path from the OS has no NUL).
fn c_path(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap_or_default()
}

/// `path/name` as a C string.
fn c_join(dir: &CStr, name: &[u8]) -> CString {
    let mut v = Vec::with_capacity(dir.to_bytes().len() + 1 + name.len());
    v.extend_from_slice(dir.to_bytes());
    v.push(b'/');
    v.extend_from_slice(name);
    CString::new(v).unwrap_or_default()
}

const EBADF: i32 = 9;

/// The stream's directory, or why a raw layout cannot hold a tree.
fn own_dir(ctx: &SourceCtx) -> std::io::Result<PathBuf> {
    let p = &ctx.placement.path;
    match p.is_dir() {
        true => Ok(p.clone()),
        false => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
            "{} is not a directory: the tree workload needs a filesystem (the files layout or a dir: target), not a raw layout",
            p.display()
        ))),
    }
}

/// A creating thread: its tree, and `files` = (files per directory, bytes each).
pub fn create(shape: Shape, files: (u64, u64)) -> Source {
    let describe = format!(
        "mkdir {} directories, fan-out {:?}, {} files of {} bytes each",
        shape.dirs, shape.fan_out, files.0, files.1
    );
    Source::new(describe, move |ctx| {
        Ok(Box::new(CreateTree {
            root: own_dir(ctx)?,
            walk: shape.walk(),
            files,
            buf: noise(files.1, ctx.seed),
            stream: ctx.index,
            seed: ctx.seed,
            made: 0,
            dir: CString::default(),
            path: CString::default(),
            next: Step::Mkdir,
            fd: None,
        }))
    })
}

/// Where a creating thread is in its current directory.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    Mkdir,
    Create(u64),
    Write(u64),
    Close(u64),
}

struct CreateTree {
    root: PathBuf,
    walk: Walk,
    files: (u64, u64),
    buf: AlignedBuf,
    /// The thread's index and seed, and the files it has begun: what its files' verify
    /// headers carry.
    stream: usize,
    seed: u64,
    made: u64,
    /// The directory being filled, and the path of the readied operation.
    dir: CString,
    path: CString,
    next: Step,
    fd: Option<OwnedFd>,
}

impl CreateTree {
    /// The step after `s` in one directory, `None` when the directory is done.
    fn after(&self, s: Step) -> Option<Step> {
        let (n, size) = self.files;
        match s {
            Step::Mkdir | Step::Close(_) => {
                let i = match s {
                    Step::Close(i) => i + 1,
                    _ => 0,
                };
                (i < n).then_some(Step::Create(i))
            }
            Step::Create(i) if size > 0 => Some(Step::Write(i)),
            Step::Create(i) | Step::Write(i) => Some(Step::Close(i)),
        }
    }
}

impl OpSource for CreateTree {
    fn prepare(&mut self) -> Option<Op> {
        let step = match self.after(self.next) {
            Some(s) if !self.dir.is_empty() => s,
            _ => {
                self.dir = c_path(&self.root.join(self.walk.next_path()?));
                Step::Mkdir
            }
        };
        self.next = step;
        Some(match step {
            Step::Mkdir => {
                self.path.clone_from(&self.dir);
                Op::Mkdir
            }
            Step::Create(i) => {
                self.path = c_join(&self.dir, format!("f{i}").as_bytes());
                self.made += 1;
                Op::Create
            }
            Step::Write(_) => {
                let len = self.files.1 as usize;
                fsops::seal_file(&mut self.buf, len, self.stream, self.seed, self.made - 1);
                Op::Write
            }
            Step::Close(_) => Op::Close,
        })
    }

    fn perform(&mut self) -> Result<u64, i32> {
        match self.next {
            Step::Mkdir => fsops::mkdir(&self.path),
            Step::Create(_) => {
                self.fd = Some(fsops::create(&self.path, false)?);
                Ok(0)
            }
            Step::Write(_) => match &self.fd {
                Some(fd) => fsops::write_all(fd, &self.buf, self.files.1 as usize),
                None => Err(EBADF),
            },
            Step::Close(_) => match self.fd.take() {
                Some(fd) => fsops::close(fd),
                None => Ok(0),
            },
        }
    }
}

/// A removing thread: `rm -rf` of the directories of the creating streams `trees` (siblings
/// of its own directory), leaving those directories themselves.
pub fn remove(trees: Vec<String>) -> Source {
    let describe = format!("rm -rf the trees of {}", trees.join(", "));
    Source::new(describe, move |ctx| {
        let own = own_dir(ctx)?;
        let parent = own.parent().unwrap_or(Path::new("/"));
        let targets = siblings(parent, &trees)?;
        Ok(Box::new(RemoveTree {
            targets: targets.iter().rev().map(|t| c_path(t)).collect(),
            frames: Vec::new(),
            path: CString::default(),
            op: Op::Readdir,
        }))
    })
}

/// The directories of the streams named `names` beside a stream's own (the stack names each
/// `<index>-<stream>`), in the order of `names`.
fn siblings(parent: &Path, names: &[String]) -> std::io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(parent)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        let stream = name.split_once('-').map_or(name.as_str(), |(_, s)| s);
        if let Some(at) = names.iter().position(|n| n == stream) {
            found.push((at, e.path()));
        }
    }
    found.sort();
    Ok(found.into_iter().map(|(_, p)| p).collect())
}

/// A directory being removed: listed yet, its files and directories not yet handled.
struct Frame {
    path: CString,
    listed: bool,
    files: Vec<Vec<u8>>,
    dirs: Vec<Vec<u8>>,
    /// A creating stream's own directory: emptied, not removed.
    top: bool,
}

struct RemoveTree {
    targets: Vec<CString>,
    frames: Vec<Frame>,
    path: CString,
    op: Op,
}

impl RemoveTree {
    fn push(&mut self, path: CString, top: bool) {
        self.frames.push(Frame {
            path,
            listed: false,
            files: Vec::new(),
            dirs: Vec::new(),
            top,
        });
    }

    /// Lists the innermost directory (the timed readdir): entries seen.
    fn list(&mut self) -> Result<u64, i32> {
        let Some(f) = self.frames.last_mut() else {
            return Ok(0);
        };
        f.listed = true;
        let fd = fsops::open_read(&f.path, false)?;
        let dir = rustix::fs::Dir::read_from(&fd).map_err(|e| e.raw_os_error())?;
        let mut n = 0;
        for e in dir {
            let e = e.map_err(|e| e.raw_os_error())?;
            let name = e.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            n += 1;
            match e.file_type() {
                rustix::fs::FileType::Directory => f.dirs.push(name.to_vec()),
                // Filesystems that do not fill d_type: rmdir of a file fails and says so.
                rustix::fs::FileType::Unknown => f.dirs.push(name.to_vec()),
                _ => f.files.push(name.to_vec()),
            }
        }
        Ok(n)
    }
}

impl OpSource for RemoveTree {
    fn prepare(&mut self) -> Option<Op> {
        loop {
            let Some(f) = self.frames.last_mut() else {
                let t = self.targets.pop()?;
                self.push(t, true);
                continue;
            };
            if !f.listed {
                self.path.clone_from(&f.path);
                self.op = Op::Readdir;
            } else if let Some(name) = f.files.pop() {
                self.path = c_join(&f.path, &name);
                self.op = Op::Unlink;
            } else if let Some(name) = f.dirs.pop() {
                let p = c_join(&f.path, &name);
                self.push(p, false);
                continue;
            } else {
                let f = self.frames.pop().expect("a frame");
                if f.top {
                    continue;
                }
                self.path = f.path;
                self.op = Op::Rmdir;
            }
            return Some(self.op);
        }
    }

    fn perform(&mut self) -> Result<u64, i32> {
        match self.op {
            Op::Readdir => self.list(),
            Op::Unlink => fsops::unlink(&self.path),
            _ => fsops::rmdir(&self.path),
        }
    }
}

/// A file-server thread over a working set of `files` files of its own.
pub fn fileserver(files: u64, seed: u64) -> Source {
    let describe = format!(
        "filebench fileserver mix over {files} files of {} KiB on average",
        MEAN_FILE >> 10
    );
    Source::new(describe, move |ctx| {
        let mut fs = FileServer {
            buf: noise(SIZE_STEP * SIZE_STEPS, seed ^ ctx.seed),
            rng: SplitMix64::new(seed ^ ctx.seed),
            live: Vec::with_capacity(files as usize + 1),
            next_id: 0,
            step: FS_LOOP.len() - 1,
            path: CString::default(),
            fd: None,
            size: 0,
            dir: c_path(&own_dir(ctx)?),
        };
        // The working set exists before the phase's clock starts (filebench preallocates).
        for _ in 0..files {
            let (path, size) = fs.new_file();
            let path = PathBuf::from(std::ffi::OsStr::from_bytes(path.to_bytes()));
            std::fs::write(&path, &fs.buf.as_slice()[..size as usize])?;
        }
        Ok(Box::new(fs))
    })
}

/// One loop of filebench's fileserver personality, in its order.
const FS_LOOP: [Op; 11] = [
    Op::Create, // createfile
    Op::Write,  // writewholefile
    Op::Close,  // closefile
    Op::Open,   // openfile (for append)
    Op::Write,  // appendfilerand
    Op::Close,  // closefile
    Op::Open,   // openfile (for read)
    Op::Read,   // readwholefile
    Op::Close,  // closefile
    Op::Unlink, // deletefile
    Op::Stat,   // statfile
];

struct FileServer {
    dir: CString,
    buf: AlignedBuf,
    rng: SplitMix64,
    /// The working set: ids of the files that exist.
    live: Vec<u64>,
    next_id: u64,
    /// Index in [`FS_LOOP`] of the readied operation.
    step: usize,
    path: CString,
    fd: Option<OwnedFd>,
    /// Bytes of the readied write.
    size: u64,
}

impl FileServer {
    /// A new file's path (added to the working set) and size.
    fn new_file(&mut self) -> (CString, u64) {
        let id = self.next_id;
        self.next_id += 1;
        self.live.push(id);
        let size = (1 + self.rng.below(SIZE_STEPS)) * SIZE_STEP;
        (c_join(&self.dir, format!("f{id}").as_bytes()), size)
    }

    /// A file of the working set, at random; with `remove`, taken out of it.
    fn pick(&mut self, remove: bool) -> CString {
        let i = self.rng.below(self.live.len().max(1) as u64) as usize;
        let id = match remove {
            true => self.live.swap_remove(i),
            false => self.live.get(i).copied().unwrap_or(0),
        };
        c_join(&self.dir, format!("f{id}").as_bytes())
    }
}

impl OpSource for FileServer {
    fn prepare(&mut self) -> Option<Op> {
        self.step = (self.step + 1) % FS_LOOP.len();
        match self.step {
            0 => (self.path, self.size) = self.new_file(),
            3 | 6 | 10 => self.path = self.pick(false),
            4 => self.size = APPEND,
            9 => self.path = self.pick(true),
            _ => {}
        }
        Some(FS_LOOP[self.step])
    }

    fn perform(&mut self) -> Result<u64, i32> {
        fn with_fd(fd: &Option<OwnedFd>) -> Result<&OwnedFd, i32> {
            fd.as_ref().ok_or(EBADF)
        }
        match self.step {
            0 => {
                self.fd = Some(fsops::create(&self.path, false)?);
                Ok(0)
            }
            1 | 4 => fsops::write_all(with_fd(&self.fd)?, &self.buf, self.size as usize),
            3 => {
                self.fd = Some(fsops::open_rw(&self.path, true, false)?);
                Ok(0)
            }
            6 => {
                self.fd = Some(fsops::open_read(&self.path, false)?);
                Ok(0)
            }
            7 => match &self.fd {
                Some(fd) => fsops::read_all(fd, &mut self.buf),
                None => Err(EBADF),
            },
            9 => fsops::unlink(&self.path),
            10 => fsops::stat(&self.path),
            _ => match self.fd.take() {
                Some(fd) => fsops::close(fd),
                None => Ok(0),
            },
        }
    }
}
