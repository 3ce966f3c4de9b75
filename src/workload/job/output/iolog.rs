//! fio's iolog of a job's I/O (`write_iolog=NAME`), written from a clone's samples after the
//! run as fio 3.33 writes it, version 3: an `add` and an `open` line for each of the clone's
//! files (their real paths on the stack's target, so `fio --read_iolog` replays the log
//! there), then each I/O in issue order (`TIME FILE read|write|trim OFFSET LENGTH`, `sync` or
//! `datasync`), TIME in µs since the clone's first I/O, then a `close` line per file.
//! Samples come in completion order; a bounded heap puts them back in issue order.

use crate::engine::{Op, Sample};
use crate::trace::iolog::write_op;
use crate::trace::TraceKind;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Write;
use std::path::Path;

/// I/Os held to put completions back in issue order: more than any queue holds in flight.
const REORDER: usize = 1 << 16;

/// The kind fio's iolog names `op` by, `None` for what fio does not log.
fn kind_of(op: Op) -> Option<TraceKind> {
    match op {
        Op::Read => Some(TraceKind::Read),
        Op::Write => Some(TraceKind::Write),
        Op::Trim => Some(TraceKind::Trim),
        Op::Fsync => Some(TraceKind::Sync),
        Op::Fdatasync => Some(TraceKind::Datasync),
        _ => None,
    }
}

/// One I/O to log: issue time, file index, kind, offset, length.
type Entry = (u64, u32, u8, u64, u64);

/// Writes the iolog of one clone to `path`: its files `files` (paths), its samples handed out
/// by `each`. The number of I/Os logged.
pub fn write(
    path: &Path,
    files: &[String],
    each: &mut super::logs::EachSample,
) -> std::io::Result<u64> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(out, "fio version 3 iolog")?;
    for f in files {
        writeln!(out, "0 {f} add")?;
    }
    for f in files {
        writeln!(out, "0 {f} open")?;
    }
    let kinds = [
        TraceKind::Read,
        TraceKind::Write,
        TraceKind::Trim,
        TraceKind::Sync,
        TraceKind::Datasync,
    ];
    let mut heap: BinaryHeap<Reverse<Entry>> = BinaryHeap::new();
    let mut t0: Option<u64> = None;
    let (mut last, mut n) = (0u64, 0u64);
    let mut err = None;
    let mut emit = |e: Entry, out: &mut std::io::BufWriter<std::fs::File>| {
        let (issue, file, k, offset, len) = e;
        let t = *t0.get_or_insert(issue);
        let us = issue.saturating_sub(t) / 1000;
        last = last.max(us);
        n += 1;
        let name = files.get(file as usize).map_or("", String::as_str);
        write_op(out, us, name, kinds[k as usize], offset, len)
    };
    each(&mut |s: &Sample| {
        let Some(kind) = kind_of(s.op) else { return };
        let k = kinds.iter().position(|&x| x == kind).expect("listed") as u8;
        let len = match kind {
            TraceKind::Sync | TraceKind::Datasync => 0,
            _ if s.asked > 0 => u64::from(s.asked),
            _ => s.bytes,
        };
        heap.push(Reverse((s.issue_ns, s.file, k, s.offset, len)));
        if heap.len() > REORDER {
            let Reverse(e) = heap.pop().expect("not empty");
            if let Err(e) = emit(e, &mut out) {
                err.get_or_insert(e);
            }
        }
    })?;
    while let Some(Reverse(e)) = heap.pop() {
        if let Err(e) = emit(e, &mut out) {
            err.get_or_insert(e);
        }
    }
    if let Some(e) = err {
        return Err(e);
    }
    for f in files {
        writeln!(out, "{last} {f} close")?;
    }
    out.flush()?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ios_in_issue_order_with_their_files_and_kinds() {
        let d = tempfile::tempdir().unwrap();
        let s = |issue_ms: u64, op, file, offset, asked| Sample {
            op,
            offset,
            bytes: u64::from(asked),
            issue_ns: issue_ms * 1_000_000,
            latency_ns: 1000,
            file,
            asked,
            ..Sample::default()
        };
        // Completion order: the second write completed before the first read.
        let samples = [
            s(2, Op::Write, 1, 8192, 4096),
            s(1, Op::Read, 0, 0, 4096),
            s(3, Op::Fsync, 1, 0, 0),
            s(4, Op::Trim, 0, 0, 65536),
        ];
        let path = d.path().join("log");
        let files = ["/t/a".to_string(), "/t/b".to_string()];
        let n = write(&path, &files, &mut |f| {
            samples.iter().for_each(&mut *f);
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 4);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "fio version 3 iolog\n0 /t/a add\n0 /t/b add\n0 /t/a open\n0 /t/b open\n0 /t/a read 0 4096\n1000 /t/b write 8192 4096\n2000 /t/b sync\n3000 /t/a trim 0 65536\n3000 /t/a close\n3000 /t/b close\n"
        );
        let back = crate::trace::parse(&path, &text).unwrap();
        assert_eq!(back.ops.len(), 4);
        assert!(back.undeclared.is_none());
    }
}
