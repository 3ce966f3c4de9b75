//! Samples: one timed I/O each, and the per-stream collections an engine run produces or a
//! samples.csv file is read back into.

use serde::{Deserialize, Serialize};

/// What a sample timed: a block I/O (`read`, `write`) or a file-system operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    #[default]
    Read,
    Write,
    Mkdir,
    Rmdir,
    Create,
    Open,
    Close,
    Fsync,
    Unlink,
    Stat,
    Readdir,
    /// A trim: a hole punched in a file, a discard of a block device's range.
    Trim,
    Fdatasync,
}

impl Op {
    /// Every op, in declaration order.
    pub const ALL: [Op; 13] = [
        Op::Read,
        Op::Write,
        Op::Mkdir,
        Op::Rmdir,
        Op::Create,
        Op::Open,
        Op::Close,
        Op::Fsync,
        Op::Unlink,
        Op::Stat,
        Op::Readdir,
        Op::Trim,
        Op::Fdatasync,
    ];

    /// The name used in samples.csv and result.json.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Mkdir => "mkdir",
            Op::Rmdir => "rmdir",
            Op::Create => "create",
            Op::Open => "open",
            Op::Close => "close",
            Op::Fsync => "fsync",
            Op::Unlink => "unlink",
            Op::Stat => "stat",
            Op::Readdir => "readdir",
            Op::Trim => "trim",
            Op::Fdatasync => "fdatasync",
        }
    }

    /// Parses an op's name (`read`, `write`, `mkdir`, ...).
    pub fn parse(s: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.as_str() == s)
    }

    /// Whether it moves data (`read`, `write`): the ops block-I/O streams issue.
    pub fn is_data(self) -> bool {
        matches!(self, Op::Read | Op::Write)
    }

    /// Its code in the spill format.
    pub(crate) fn code(self) -> u8 {
        Op::ALL.iter().position(|&o| o == self).unwrap_or(0) as u8
    }

    /// The op of a spill code.
    pub(crate) fn from_code(c: u8) -> Op {
        Op::ALL.get(c as usize).copied().unwrap_or(Op::Read)
    }
}

/// One timed I/O. Times are nanoseconds of the monotonic clock since the trial's time origin
/// (see [`crate::timeline`]); a set of samples read back from an older samples.csv has them
/// since the start of sampling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sample {
    /// What was timed (a stream of block I/O has its stream's op on every sample).
    pub op: Op,
    /// Byte offset within the stream's target (file, partition or device).
    pub offset: u64,
    /// Bytes transferred (the I/O size unless the I/O was short or failed).
    pub bytes: u64,
    /// When the I/O was issued, ns since sampling began.
    pub issue_ns: u64,
    /// Access time: completion minus issue, ns.
    pub latency_ns: u64,
    /// For paced streams, how late the issue was against its intended time (ns); 0 otherwise.
    /// Latency measured from the intended time is `lag_ns + latency_ns`.
    pub lag_ns: u64,
    /// 0 on success, else the errno the I/O failed with.
    pub errno: i32,
    /// Index of the phase it was issued in, in the trial's list of phases.
    pub phase: u16,
    /// Which of the stream's files it went to (a generated stream of several files, in the
    /// order the generator opened them); 0 for a stream of one target.
    pub file: u32,
    /// Bytes it asked to move (`bytes` is what it moved); 0 for a sync.
    pub asked: u32,
}

impl Sample {
    /// The sample of an I/O of `asked` bytes issued at `issue` (`lag` ns after it was wanted)
    /// that completed at `done` with `result` (bytes, or the errno; a short transfer is EIO).
    #[inline]
    pub fn completed(
        op: Op,
        offset: u64,
        asked: u64,
        (issue, done, lag): (u64, u64, u64),
        result: Result<u64, i32>,
    ) -> Sample {
        let (bytes, errno) = match result {
            Ok(n) => (n, if n == asked { 0 } else { 5 }),
            Err(e) => (0, e),
        };
        Sample {
            op,
            offset,
            bytes,
            issue_ns: issue,
            latency_ns: done - issue,
            lag_ns: lag,
            errno,
            phase: 0,
            file: 0,
            asked: asked.min(u64::from(u32::MAX)) as u32,
        }
    }

    /// Completion time, ns since sampling began.
    pub fn done_ns(&self) -> u64 {
        self.issue_ns + self.latency_ns
    }
}

/// All samples of one stream, in issue order.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamSamples {
    pub name: String,
    pub role: String,
    pub op: Op,
    pub samples: Vec<Sample>,
}

impl StreamSamples {
    /// Time from the time origin of its samples (the start of sampling, for the streams of
    /// [`crate::engine::SampleSet::load_phase`]) until this stream's last sample completed, in seconds.
    pub fn elapsed_s(&self) -> f64 {
        self.samples.iter().map(|s| s.done_ns()).max().unwrap_or(0) as f64 / 1e9
    }

    /// Samples that completed without error.
    pub fn ok(&self) -> impl Iterator<Item = &Sample> {
        self.samples.iter().filter(|s| s.errno == 0)
    }
}

/// The name of an errno as written in samples.csv (`EIO`), or `E<number>` when unknown.
pub fn errno_name(errno: i32) -> String {
    let name = match errno {
        libc_errno::EPERM => "EPERM",
        libc_errno::ENOENT => "ENOENT",
        libc_errno::EINTR => "EINTR",
        libc_errno::EIO => "EIO",
        libc_errno::ENXIO => "ENXIO",
        libc_errno::EBADF => "EBADF",
        libc_errno::EAGAIN => "EAGAIN",
        libc_errno::ENOMEM => "ENOMEM",
        libc_errno::EACCES => "EACCES",
        libc_errno::EFAULT => "EFAULT",
        libc_errno::EBUSY => "EBUSY",
        libc_errno::EINVAL => "EINVAL",
        libc_errno::EFBIG => "EFBIG",
        libc_errno::ENOSPC => "ENOSPC",
        libc_errno::EROFS => "EROFS",
        libc_errno::ENODATA => "ENODATA",
        libc_errno::ETIMEDOUT => "ETIMEDOUT",
        libc_errno::ENOTCONN => "ENOTCONN",
        libc_errno::EDQUOT => "EDQUOT",
        libc_errno::ECANCELED => "ECANCELED",
        libc_errno::EREMOTEIO => "EREMOTEIO",
        0 => "",
        _ => return format!("E{errno}"),
    };
    name.to_string()
}

/// Parses an errno name written by [`errno_name`].
pub fn parse_errno(name: &str) -> Option<i32> {
    if name.is_empty() {
        return Some(0);
    }
    if let Some(n) = name.strip_prefix('E').and_then(|d| d.parse::<i32>().ok()) {
        return Some(n);
    }
    (1..200).find(|&e| errno_name(e) == name)
}

/// The Linux errno values named in samples.csv (generic across Linux architectures).
mod libc_errno {
    pub const EPERM: i32 = 1;
    pub const ENOENT: i32 = 2;
    pub const EINTR: i32 = 4;
    pub const EIO: i32 = 5;
    pub const ENXIO: i32 = 6;
    pub const EBADF: i32 = 9;
    pub const EAGAIN: i32 = 11;
    pub const ENOMEM: i32 = 12;
    pub const EACCES: i32 = 13;
    pub const EFAULT: i32 = 14;
    pub const EBUSY: i32 = 16;
    pub const EINVAL: i32 = 22;
    pub const EFBIG: i32 = 27;
    pub const ENOSPC: i32 = 28;
    pub const EROFS: i32 = 30;
    pub const ENODATA: i32 = 61;
    pub const ETIMEDOUT: i32 = 110;
    pub const ENOTCONN: i32 = 107;
    pub const EDQUOT: i32 = 122;
    pub const ECANCELED: i32 = 125;
    pub const EREMOTEIO: i32 = 121;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_names_round_trip() {
        for e in [0, 5, 22, 28, 121, 999] {
            assert_eq!(parse_errno(&errno_name(e)), Some(e));
        }
        assert_eq!(errno_name(5), "EIO");
    }
}
