//! The text `blkparse` prints by default for a blktrace (`blkparse -i sda`):
//! `MAJ,MIN CPU SEQ SECONDS PID ACTION RWBS SECTOR + SECTORS [PROCESS]`. iotrial replays the
//! requests as they were issued to the driver: the `D` lines; a flush is an `F` in RWBS (with no
//! sectors), a discard a `D` in RWBS. Other actions (Q, G, I, M, C, ...) and notes (`m N ...`)
//! are skipped, and the per-CPU summary blkparse prints at the end ends the trace.

use super::{number, LineError, Trace, TraceKind, TraceOp};

/// Whether a first line reads as blkparse's output: a `MAJ,MIN` device field.
pub fn looks_like(first: &str) -> bool {
    first
        .split_whitespace()
        .next()
        .and_then(|d| d.split_once(','))
        .is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok())
}

/// Parses blkparse's default output.
pub fn parse(text: &str) -> Result<Trace, LineError> {
    let mut trace = Trace {
        format: "blkparse",
        ..Trace::default()
    };
    let mut t0 = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let l = raw.trim();
        if l.is_empty() {
            continue;
        }
        if l.starts_with("CPU") || l.starts_with("Total") {
            break;
        }
        let f: Vec<&str> = l.split_whitespace().collect();
        if !looks_like(l) {
            return Err((
                n,
                format!("'{}': expected a MAJ,MIN device field first", f[0]),
            ));
        }
        if f.len() < 6 {
            return Err((
                n,
                "expected MAJ,MIN CPU SEQ SECONDS PID ACTION RWBS ...".into(),
            ));
        }
        let secs: f64 = f[3]
            .parse()
            .ok()
            .filter(|s: &f64| s.is_finite() && *s >= 0.0)
            .ok_or_else(|| (n, format!("time '{}' is not a number of seconds", f[3])))?;
        if f[5] != "D" {
            continue;
        }
        let rwbs = *f
            .get(6)
            .ok_or_else(|| (n, "missing RWBS after action D".to_string()))?;
        if !trace.files.iter().any(|d| d == f[0]) {
            trace.files.push(f[0].to_string());
        }
        let at = (secs * 1e9) as u64;
        let at_ns = Some(at.saturating_sub(*t0.get_or_insert(at)));
        let kind = if rwbs.contains('D') {
            TraceKind::Trim
        } else if rwbs.contains('W') {
            TraceKind::Write
        } else if rwbs.contains('R') {
            TraceKind::Read
        } else if rwbs.contains('F') {
            TraceKind::Sync
        } else {
            return Err((n, format!("RWBS '{rwbs}': expected R, W, D or F in it")));
        };
        let (offset, len) = if f.get(8) == Some(&"+") {
            let sector = number(f.get(7).copied(), "sector", n)?;
            let sectors = number(f.get(9).copied(), "sector count", n)?;
            let off = sector
                .checked_mul(512)
                .ok_or_else(|| (n, "sector overflows".to_string()))?;
            let len = sectors.saturating_mul(512);
            if off.checked_add(len).is_none() {
                return Err((n, "sector + sectors overflows".into()));
            }
            (off, len)
        } else if kind == TraceKind::Sync {
            (0, 0)
        } else {
            return Err((n, "expected SECTOR + SECTORS after RWBS".into()));
        };
        trace.ops.push(TraceOp {
            at_ns,
            kind,
            offset,
            len,
            file: 0,
            wait_us: 0,
        });
    }
    Ok(trace)
}
