//! Block I/O traces a `replay` runs and `capture` writes: fio's iolog (versions 2 and 3, see
//! [`iolog`]) and the text `blkparse` prints of a blktrace ([`blkparse`]), read into one
//! [`Trace`] of timed reads, writes, syncs and trims. A malformed line is the user's input: the
//! error names the file, the line and what was expected there.

pub mod blkparse;
pub mod iolog;
pub mod replay;

use crate::cause::{Cause, HasCause};
use std::path::{Path, PathBuf};

/// What one traced request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceKind {
    Read,
    Write,
    /// A cache flush (fio's `sync`, blktrace's F).
    Sync,
    /// fio's `datasync`: the data flushed, not every piece of metadata.
    Datasync,
    /// A discard (fio's `trim`, blktrace's D in the RWBS field).
    Trim,
}

impl TraceKind {
    /// The name fio's iolog uses.
    pub fn iolog_name(self) -> &'static str {
        match self {
            TraceKind::Read => "read",
            TraceKind::Write => "write",
            TraceKind::Sync => "sync",
            TraceKind::Datasync => "datasync",
            TraceKind::Trim => "trim",
        }
    }
}

/// One traced request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceOp {
    /// When it was issued, ns after the trace began (None in an iolog v2, which has no times).
    pub at_ns: Option<u64>,
    pub kind: TraceKind,
    /// Bytes from the start of its file or device (0 for a sync).
    pub offset: u64,
    /// Bytes (0 for a sync).
    pub len: u64,
    /// Which of the trace's `files` it goes to (0 for a trace of one device).
    pub file: u32,
    /// Microseconds to wait before it (an iolog v2's `wait` lines), 0 for none.
    pub wait_us: u64,
}

/// A whole trace, in issue order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    pub ops: Vec<TraceOp>,
    /// The files or devices it names (an iolog's `add` lines, blktrace's devices).
    pub files: Vec<String>,
    /// `iolog2`, `iolog3` or `blkparse`.
    pub format: &'static str,
    /// The first line whose I/O names a file no `add` line named before it, and the file (an
    /// iolog fio would not replay).
    pub undeclared: Option<(usize, String)>,
}

impl Trace {
    /// Whether every op carries its issue time (so it can replay at its original pace).
    pub fn timed(&self) -> bool {
        self.ops.iter().all(|o| o.at_ns.is_some())
    }

    /// Reads and writes, and the bytes they move.
    pub fn data_totals(&self) -> (u64, u64) {
        self.ops
            .iter()
            .filter(|o| matches!(o.kind, TraceKind::Read | TraceKind::Write))
            .fold((0, 0), |(n, b), o| (n + 1, b + o.len))
    }

    /// One past the highest byte it touches.
    pub fn extent(&self) -> u64 {
        self.ops.iter().map(|o| o.offset + o.len).max().unwrap_or(0)
    }

    /// One past the highest byte it touches in file `file`.
    pub fn extent_of(&self, file: u32) -> u64 {
        self.ops
            .iter()
            .filter(|o| o.file == file)
            .map(|o| o.offset + o.len)
            .max()
            .unwrap_or(0)
    }
}

/// A trace could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot read trace {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}, line {line}: {message}")]
    Malformed {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Unknown { path: PathBuf, message: String },
}

impl HasCause for TraceError {
    fn why(&self) -> Cause {
        Cause::Input
    }
}

/// Reads the trace at `path`, telling the format from its first line: `fio version 2 iolog`,
/// `fio version 3 iolog`, or `blkparse` output (`MAJ,MIN CPU SEQ TIME PID ACTION RWBS ...`).
pub fn load(path: &Path) -> Result<Trace, TraceError> {
    let text = std::fs::read_to_string(path).map_err(|source| TraceError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, &text)
}

/// Parses `text`, read from `path` (named in errors).
pub fn parse(path: &Path, text: &str) -> Result<Trace, TraceError> {
    let first = text.lines().next().unwrap_or("").trim();
    let bad = |line, message: String| TraceError::Malformed {
        path: path.to_path_buf(),
        line,
        message,
    };
    if first.starts_with("fio version") {
        iolog::parse(text).map_err(|(line, m)| bad(line, m))
    } else if blkparse::looks_like(first) {
        blkparse::parse(text).map_err(|(line, m)| bad(line, m))
    } else {
        Err(TraceError::Unknown {
            path: path.to_path_buf(),
            message: "not a trace iotrial reads; expected a first line 'fio version 2 iolog' or 'fio version 3 iolog', or blkparse's default output ('8,0 0 1 0.000000000 123 D W 2048 + 8 [dd]')".into(),
        })
    }
}

/// A parse error inside one format: (1-based line, what was expected).
pub type LineError = (usize, String);

/// Parses a whole number field, naming what it is when it is not one.
fn number(field: Option<&str>, what: &str, line: usize) -> Result<u64, LineError> {
    let f = field.ok_or_else(|| (line, format!("missing {what}")))?;
    f.parse::<u64>()
        .map_err(|_| (line, format!("{what} '{f}' is not a whole number")))
}

#[cfg(test)]
mod tests;
