//! fio's I/O logs in a job: `write_iolog` (the job's I/O written as fio's iolog v3 when the
//! trial ends) and `read_iolog` (the job replays a log instead of generating I/O: fio's iolog
//! v2 or v3, or blkparse's text of a blktrace), with `replay_no_stall`, `replay_time_scale`,
//! `replay_redirect`, `replay_align`, `replay_scale` and `replay_skip`. A log is read when the
//! option is: a log iotrial cannot replay is refused then, naming its own file and line.

use crate::trace::{Trace, TraceError};
use crate::workload::job::options::values::Arg;
use crate::workload::job::options::{honoured, Opt};
use crate::workload::job::spec::JobSpec;
use std::path::Path;
use std::sync::Arc;

/// blktrace's binary records start with this magic (its low byte the version).
const BLKTRACE_MAGIC: u32 = 0x6561_7400;

/// Reads the log at `path` for replay, or says why it cannot be replayed.
pub fn load(path: &str) -> Result<Trace, String> {
    if path == "-" {
        return Err("iotrial reads a log from a file, not from standard input ('-')".into());
    }
    let head = std::fs::read(path)
        .map(|b| {
            b.get(..4)
                .map(|h| u32::from_le_bytes([h[0], h[1], h[2], h[3]]))
        })
        .map_err(|e| format!("cannot read {path}: {e}"))?;
    if head.is_some_and(|m| m & 0xffff_ff00 == BLKTRACE_MAGIC) {
        return Err(format!(
            "{path} is a blktrace binary log, which iotrial does not replay; blkparse's text of it it does (`blkparse -i {path} -o trace.txt`, then read_iolog=trace.txt)"
        ));
    }
    let trace = crate::trace::load(Path::new(path)).map_err(|e| match e {
        TraceError::Malformed {
            path,
            line,
            message,
            ..
        } => format!("{}:{line}: {message}", path.display()),
        other => other.to_string(),
    })?;
    if let Some((line, file)) = &trace.undeclared {
        return Err(format!(
            "{path}:{line}: an I/O on '{file}', which no '{file} add' line before it names (fio replays only the files a log adds)"
        ));
    }
    if trace.ops.is_empty() {
        return Err(format!("{path} has no read, write, trim or sync to replay"));
    }
    Ok(trace)
}

fn read_iolog(j: &mut JobSpec, a: &Arg) -> Result<(), String> {
    let v = a.need()?;
    let mut logs = Vec::new();
    for path in v.split(':').filter(|p| !p.is_empty()) {
        let t = load(path).map_err(|e| format!("{}={v}: {e}", a.key))?;
        logs.push((path.to_string(), Arc::new(t)));
    }
    j.replay.logs = logs;
    Ok(())
}

fn replay_skip(j: &mut JobSpec, a: &Arg) -> Result<(), String> {
    let mut skip = [false; 4];
    for w in a
        .need()?
        .split(',')
        .map(str::trim)
        .filter(|w| !w.is_empty())
    {
        let k = ["read", "write", "trim", "sync"]
            .iter()
            .position(|x| *x == w)
            .ok_or_else(|| format!("{}: '{w}' is not read, write, trim or sync", a.key))?;
        skip[k] = true;
    }
    j.replay.options.skip = skip;
    Ok(())
}

/// The options of this module.
pub static OPTIONS: &[Opt] = &[
    opt!(["write_iolog"], |j, a| j.iolog_out = Some(a.need()?.to_string())).differs(
        "written into the trial's directory under its file name, one per clone (NAME.N) when numjobs is above 1 (fio: the path given, appended to by every clone), naming the real paths of the job's files on the stack's target, so `fio --read_iolog` replays it there",
    ),
    honoured(&["read_iolog"], read_iolog).differs(
        "also reads blkparse's text of a blktrace; a blktrace binary log is refused (convert it with blkparse); the files it names are files of those names on the stack's target, laid out as big as the log reaches",
    ),
    opt!(["replay_no_stall"], |j, a| j.replay.options.no_stall = a.flag()?),
    opt!(["replay_time_scale"], |j, a| {
        let n = a.int()?;
        if n == 0 || n > 1_000_000 {
            return Err(format!("{}={n}: a percentage above 0", a.key));
        }
        j.replay.options.time_scale = n as u32;
    }),
    opt!(["replay_redirect"], |j, a| j.replay.redirect =
        Some(a.need()?.to_string())),
    opt!(["replay_align"], |j, a| {
        let n = a.bytes()?;
        if n != 0 && !n.is_power_of_two() {
            return Err(format!("{}={n}: a power of 2", a.key));
        }
        j.replay.options.align = n;
    }),
    opt!(["replay_scale"], |j, a| j.replay.options.scale =
        a.int()?.max(1)),
    honoured(&["replay_skip"], replay_skip),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::job::options::apply;

    #[test]
    fn a_log_is_read_when_named_and_refused_naming_its_line() {
        let d = tempfile::tempdir().unwrap();
        let good = d.path().join("good.log");
        std::fs::write(
            &good,
            "fio version 2 iolog\nsdb add\nsdb open\nsdb read 0 4096\nsdb write 8192 512\nsdb close\n",
        )
        .unwrap();
        let mut j = JobSpec::new("j");
        apply(&mut j, "read_iolog", Some(good.to_str().unwrap())).unwrap();
        assert_eq!(j.replay.logs[0].1.ops.len(), 2);
        for (text, needle) in [
            (
                "fio version 2 iolog\nsdb add\nsdb read 0 x\n",
                "bad.log:3: length 'x'",
            ),
            (
                "fio version 2 iolog\nsdb read 0 4096\n",
                "bad.log:2: an I/O on 'sdb'",
            ),
            (
                "fio version 2 iolog\nsdb add\n",
                "no read, write, trim or sync",
            ),
        ] {
            let bad = d.path().join("bad.log");
            std::fs::write(&bad, text).unwrap();
            let e = apply(&mut j, "read_iolog", Some(bad.to_str().unwrap())).unwrap_err();
            assert!(e.contains(needle), "{e}");
        }
        let bin = d.path().join("sdb.blktrace.0");
        std::fs::write(&bin, [0x07, 0x74, 0x61, 0x65, 0, 0, 0, 0]).unwrap();
        let e = apply(&mut j, "read_iolog", Some(bin.to_str().unwrap())).unwrap_err();
        assert!(e.contains("blktrace binary log"), "{e}");
        let e = apply(&mut j, "read_iolog", Some("/nonexistent/x.log")).unwrap_err();
        assert!(e.contains("cannot read /nonexistent/x.log"), "{e}");
        apply(&mut j, "replay_skip", Some("write,trim")).unwrap();
        assert_eq!(j.replay.options.skip, [false, true, true, false]);
        assert!(apply(&mut j, "replay_align", Some("3000")).is_err());
    }
}
