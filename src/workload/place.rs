//! Where a workload's own source opens its data: a file in the stream's directory (the
//! `files` layout on a filesystem) or the stream's region of a raw device, opened read-write
//! (O_DIRECT when the stack allows it), with the byte offset the region starts at.

use crate::engine::SourceCtx;
use std::os::fd::OwnedFd;
use std::path::PathBuf;

/// An open data target of a source.
pub struct Target {
    pub fd: OwnedFd,
    /// Added to every offset: the region's start on a raw device, 0 in a file.
    pub base: u64,
    /// Bytes the source may use.
    pub len: u64,
    /// The file or device.
    pub path: PathBuf,
}

/// Opens `name` in the stream's directory (created when missing), or the stream's raw region,
/// which must hold `need` bytes.
pub fn open(ctx: &SourceCtx, name: &str, need: u64) -> std::io::Result<Target> {
    use rustix::fs::{Mode, OFlags};
    let p = ctx.placement;
    let mut flags = OFlags::RDWR | OFlags::CLOEXEC;
    if ctx.direct {
        flags |= OFlags::DIRECT;
    }
    let (path, base, len) = if p.path.is_dir() {
        flags |= OFlags::CREATE;
        (p.path.join(name), 0, need)
    } else {
        if p.len < need {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "{}: the region holds {} bytes, {need} are needed",
                    p.path.display(),
                    p.len
                ),
            ));
        }
        (p.path.clone(), p.offset, p.len)
    };
    let fd = rustix::fs::open(&path, flags, Mode::from_raw_mode(0o644))
        .map_err(|e| std::io::Error::other(format!("open {}: {e}", path.display())))?;
    Ok(Target {
        fd,
        base,
        len,
        path,
    })
}
