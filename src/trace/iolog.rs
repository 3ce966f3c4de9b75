//! fio's iolog: version 2 (`FILE ACTION [OFFSET LENGTH]`, no times) and version 3
//! (`TIMESTAMP FILE ACTION [OFFSET LENGTH]`, the timestamp in µs since the log began, as fio
//! 3.33 writes and replays it). File actions are `add`, `open`, `close`; I/O actions `read`,
//! `write`, `sync`, `datasync`, `trim`, and in version 2 `wait` (its offset field the
//! microseconds to wait before the next I/O). [`write_v3`] writes a trace back in version 3,
//! which `fio --read_iolog` replays.

use super::{number, LineError, Trace, TraceKind, TraceOp};
use std::io::Write;

/// Parses an iolog whose first line is its version header.
pub fn parse(text: &str) -> Result<Trace, LineError> {
    let mut lines = text.lines().enumerate();
    let header = lines.next().map(|(_, l)| l.trim()).unwrap_or("");
    let (timed, format) = match header {
        "fio version 2 iolog" => (false, "iolog2"),
        "fio version 3 iolog" => (true, "iolog3"),
        h => {
            return Err((
                1,
                format!("header '{h}': expected 'fio version 2 iolog' or 'fio version 3 iolog'"),
            ))
        }
    };
    let mut trace = Trace {
        format,
        ..Trace::default()
    };
    let mut wait_us = 0u64;
    for (i, raw) in lines {
        let n = i + 1;
        let l = raw.trim();
        if l.is_empty() {
            continue;
        }
        let mut f = l.split_whitespace();
        let at_ns = if timed {
            Some(number(f.next(), "timestamp (µs)", n)?.saturating_mul(1000))
        } else {
            None
        };
        let file = f
            .next()
            .ok_or_else(|| (n, "missing file name".to_string()))?;
        let action = f
            .next()
            .ok_or_else(|| (n, format!("missing action after file '{file}'")))?;
        let kind = match action {
            "add" | "open" | "close" => {
                if action == "add" && !trace.files.iter().any(|x| x == file) {
                    trace.files.push(file.to_string());
                }
                None
            }
            "wait" => {
                if !timed {
                    // Version 2's delay is its offset field (fio's `ipo->delay`).
                    wait_us =
                        wait_us.saturating_add(f.next().and_then(|d| d.parse().ok()).unwrap_or(0));
                }
                None
            }
            "read" => Some(TraceKind::Read),
            "write" => Some(TraceKind::Write),
            "sync" => Some(TraceKind::Sync),
            "datasync" => Some(TraceKind::Datasync),
            "trim" => Some(TraceKind::Trim),
            a => {
                return Err((
                    n,
                    format!(
                    "action '{a}': expected add, open, close, read, write, sync, datasync or trim"
                ),
                ))
            }
        };
        let (offset, len) = match kind {
            Some(TraceKind::Read | TraceKind::Write | TraceKind::Trim) => (
                number(f.next(), "offset", n)?,
                number(f.next(), "length", n)?,
            ),
            _ => (0, 0),
        };
        if let Some(extra) = f.next().filter(|_| action != "wait") {
            return Err((n, format!("unexpected '{extra}' at the end of the line")));
        }
        if offset.checked_add(len).is_none() {
            return Err((n, "offset + length overflows".into()));
        }
        if let Some(kind) = kind {
            let index = match trace.files.iter().position(|x| x == file) {
                Some(k) => k,
                None => {
                    if trace.undeclared.is_none() {
                        trace.undeclared = Some((n, file.to_string()));
                    }
                    trace.files.push(file.to_string());
                    trace.files.len() - 1
                }
            };
            trace.ops.push(TraceOp {
                at_ns,
                kind,
                offset,
                len,
                file: index as u32,
                wait_us: std::mem::take(&mut wait_us),
            });
        }
    }
    Ok(trace)
}

/// Writes `trace` as an iolog version 3 naming `file` (times in µs, from the first op).
pub fn write_v3(out: &mut impl Write, trace: &Trace, file: &str) -> std::io::Result<()> {
    let t0 = trace.ops.iter().filter_map(|o| o.at_ns).min().unwrap_or(0);
    let us = |o: &TraceOp| o.at_ns.unwrap_or(t0).saturating_sub(t0) / 1000;
    let last = trace.ops.iter().map(us).max().unwrap_or(0);
    writeln!(out, "fio version 3 iolog")?;
    writeln!(out, "0 {file} add")?;
    writeln!(out, "0 {file} open")?;
    for o in &trace.ops {
        write_op(out, us(o), file, o.kind, o.offset, o.len)?;
    }
    writeln!(out, "{last} {file} close")
}

/// Writes one I/O line of an iolog version 3: at `us`, `kind` on `file` (offset and length
/// for a read, write or trim).
pub fn write_op(
    out: &mut impl Write,
    us: u64,
    file: &str,
    kind: TraceKind,
    offset: u64,
    len: u64,
) -> std::io::Result<()> {
    match kind {
        TraceKind::Sync | TraceKind::Datasync => {
            writeln!(out, "{us} {file} {}", kind.iolog_name())
        }
        k => writeln!(out, "{us} {file} {} {offset} {len}", k.iolog_name()),
    }
}
