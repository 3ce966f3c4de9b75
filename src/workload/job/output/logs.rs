//! fio's log files, written from a job's samples after the run, in fio 3.33's format and
//! names: `write_lat_log=NAME` gives `NAME_lat.X.log` and `NAME_clat.X.log` (X the clone's
//! number among every job's, from 1; without a NAME, the job's), `write_bw_log` `NAME_bw.X.log`,
//! `write_iops_log` `NAME_iops.X.log`; one line per I/O, `time (ms since the job started),
//! value, direction (0 read, 1 write, 2 trim), bytes[, offset], priority[, issue time]` (the
//! issue time in ns since the job started with `log_issue_time`, in the clat log; 0 in the
//! others), or with `log_avg_msec=N` one line per direction per N ms window holding the
//! window's mean, its largest value, or both (`log_window_value`; block size, offset and issue
//! time 0). Latency is in ns, bandwidth in KB/s as fio's per-I/O figure (bytes x 10^6 /
//! latency in ns), IOPS 1 per I/O. iotrial times each I/O from its issue to its completion: its lat and
//! clat logs hold that one latency, and it writes no slat log (a note says so).

use super::super::spec::{LogSpec, LogWindow};
use crate::engine::{Op, Sample};
use std::io::Write;
use std::path::{Path, PathBuf};

/// fio's number of a data direction, `None` for what fio does not log (syncs).
pub fn ddir(op: Op) -> Option<u8> {
    match op {
        Op::Read | Op::Stat | Op::Readdir => Some(0),
        Op::Trim => Some(2),
        Op::Fsync | Op::Fdatasync | Op::Close | Op::Open => None,
        _ => Some(1),
    }
}

/// The kinds of log, their file-name suffix, and whether the job asks for them.
fn kinds(spec: &LogSpec) -> Vec<(&'static str, &str)> {
    let mut out = Vec::new();
    if let Some(n) = &spec.lat {
        out.push(("lat", n.as_str()));
        out.push(("clat", n.as_str()));
    }
    if let Some(n) = &spec.bw {
        out.push(("bw", n.as_str()));
    }
    if let Some(n) = &spec.iops {
        out.push(("iops", n.as_str()));
    }
    out
}

/// A window's sums for one direction.
#[derive(Clone, Copy, Default)]
struct Window {
    n: u64,
    lat_sum: u128,
    lat_max: u64,
    bytes: u64,
}

/// The columns after a line's value and direction: block size, then the offset (with
/// `log_offset`), the priority, and the issue time (with `log_issue_time`).
fn tail(spec: &LogSpec, bytes: u64, offset: u64, issue: Option<u64>) -> String {
    let mut t = format!("{bytes}");
    if spec.offset {
        t.push_str(&format!(", {offset}"));
    }
    t.push_str(", 0");
    if spec.issue_time {
        t.push_str(&format!(", {}", issue.unwrap_or(0)));
    }
    t
}

/// One open log file and what it logs.
struct Log {
    kind: &'static str,
    out: std::io::BufWriter<std::fs::File>,
}

/// Hands each sample of a stream to the function given (once per call).
pub type EachSample<'a> = dyn FnMut(&mut dyn FnMut(&Sample)) -> std::io::Result<()> + 'a;

/// Writes clone number `x`'s logs (of job `job`, whose samples `each` hands out, `start_ns` its
/// first issue) into `dir`; the files written.
pub fn write(
    dir: &Path,
    job: &str,
    x: usize,
    spec: &LogSpec,
    start_ns: u64,
    each: &mut EachSample,
) -> std::io::Result<Vec<PathBuf>> {
    let kinds = kinds(spec);
    if kinds.is_empty() {
        return Ok(Vec::new());
    }
    let mut logs = Vec::new();
    let mut paths = Vec::new();
    for (kind, name) in kinds {
        let base = if name.is_empty() { job } else { name };
        let file = if spec.per_job {
            format!("{base}_{kind}.{x}.log")
        } else {
            format!("{base}_{kind}.log")
        };
        let path = dir.join(file);
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        paths.push(path);
        logs.push(Log {
            kind,
            out: std::io::BufWriter::new(f),
        });
    }
    let avg = spec.avg_msec;
    let mut windows: Vec<[Window; 3]> = Vec::new();
    let mut err = None;
    each(&mut |s: &Sample| {
        let Some(d) = ddir(s.op) else { return };
        if s.errno != 0 || err.is_some() {
            return;
        }
        let lat = s.latency_ns + s.lag_ns;
        let t_ms = s.done_ns().saturating_sub(start_ns) / 1_000_000;
        if let Some(w) = t_ms.checked_div(avg) {
            let w = w as usize;
            if windows.len() <= w {
                windows.resize(w + 1, [Window::default(); 3]);
            }
            let slot = &mut windows[w][d as usize];
            slot.n += 1;
            slot.lat_sum += u128::from(lat);
            slot.lat_max = slot.lat_max.max(lat);
            slot.bytes += s.bytes;
            return;
        }
        let issued = s.issue_ns.saturating_sub(start_ns);
        for l in &mut logs {
            let v = match l.kind {
                "lat" | "clat" => lat,
                "bw" => s.bytes * 1_000_000 / lat.max(1),
                _ => 1,
            };
            let issue = (l.kind == "clat").then_some(issued);
            if let Err(e) = writeln!(
                l.out,
                "{t_ms}, {v}, {d}, {}",
                tail(spec, s.bytes, s.offset, issue)
            ) {
                err = Some(e);
            }
        }
    })?;
    if let Some(e) = err {
        return Err(e);
    }
    for (k, per_dir) in windows.iter().enumerate() {
        let t_ms = (k as u64 + 1) * avg;
        for (d, w) in per_dir.iter().enumerate().filter(|(_, w)| w.n > 0) {
            for l in &mut logs {
                let (mean, max) = match l.kind {
                    "lat" | "clat" => ((w.lat_sum / u128::from(w.n)) as u64, w.lat_max),
                    // One figure per window: its mean and its largest are the same.
                    "bw" => (w.bytes * 1000 / 1024 / avg, w.bytes * 1000 / 1024 / avg),
                    _ => (w.n * 1000 / avg, w.n * 1000 / avg),
                };
                let v = match spec.window {
                    LogWindow::Avg => mean.to_string(),
                    LogWindow::Max => max.to_string(),
                    LogWindow::Both => format!("{mean}, {max}"),
                };
                writeln!(l.out, "{t_ms}, {v}, {d}, {}", tail(spec, 0, 0, None))?;
            }
        }
    }
    for l in &mut logs {
        l.out.flush()?;
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> Vec<Sample> {
        (0..10u64)
            .map(|k| Sample {
                op: if k % 2 == 0 { Op::Read } else { Op::Write },
                offset: k * 4096,
                bytes: 4096,
                issue_ns: k * 30_000_000,
                latency_ns: 100_000,
                ..Sample::default()
            })
            .collect()
    }

    fn run(spec: &LogSpec) -> (tempfile::TempDir, Vec<PathBuf>) {
        let d = tempfile::tempdir().unwrap();
        let s = samples();
        let paths = write(d.path(), "job", 1, spec, 0, &mut |f| {
            s.iter().for_each(&mut *f);
            Ok(())
        })
        .unwrap();
        (d, paths)
    }

    #[test]
    fn a_line_per_io_in_fio_s_format() {
        let spec = LogSpec {
            lat: Some("lat".into()),
            bw: Some(String::new()),
            iops: None,
            avg_msec: 0,
            offset: true,
            per_job: true,
            ..LogSpec::default()
        };
        let (_d, paths) = run(&spec);
        let names: Vec<String> = paths
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into())
            .collect();
        assert_eq!(names, ["lat_lat.1.log", "lat_clat.1.log", "job_bw.1.log"]);
        let clat = std::fs::read_to_string(&paths[1]).unwrap();
        let lines: Vec<&str> = clat.lines().collect();
        assert_eq!(lines.len(), 10);
        assert_eq!(lines[1], "30, 100000, 1, 4096, 4096, 0");
        let bw = std::fs::read_to_string(&paths[2]).unwrap();
        assert_eq!(
            bw.lines().next().unwrap(),
            "0, 40960, 0, 4096, 0, 0",
            "bytes x 10^6 / ns"
        );
    }

    #[test]
    fn windows_average_per_direction() {
        let spec = LogSpec {
            lat: None,
            bw: None,
            iops: Some("io".into()),
            avg_msec: 100,
            offset: false,
            per_job: false,
            ..LogSpec::default()
        };
        let (_d, paths) = run(&spec);
        assert!(paths[0].ends_with("io_iops.log"));
        let text = std::fs::read_to_string(&paths[0]).unwrap();
        // Completions at 0, 30, 60, 90 ms fall in the first window: 2 reads and 2 writes.
        assert_eq!(
            text.lines().take(2).collect::<Vec<_>>(),
            ["100, 20, 0, 0, 0", "100, 20, 1, 0, 0"]
        );
    }

    #[test]
    fn windows_give_both_values_and_lines_their_issue_time() {
        let spec = LogSpec {
            lat: Some("l".into()),
            avg_msec: 100,
            window: LogWindow::Both,
            offset: true,
            issue_time: true,
            per_job: true,
            ..LogSpec::default()
        };
        let (_d, paths) = run(&spec);
        let clat = std::fs::read_to_string(&paths[1]).unwrap();
        assert_eq!(
            clat.lines().next().unwrap(),
            "100, 100000, 100000, 0, 0, 0, 0, 0"
        );
        let spec = LogSpec {
            avg_msec: 0,
            window: LogWindow::Avg,
            ..spec
        };
        let (_d, paths) = run(&spec);
        let lat = std::fs::read_to_string(&paths[0]).unwrap();
        let clat = std::fs::read_to_string(&paths[1]).unwrap();
        // The clat log holds each I/O's issue time (ns from the job's start), the lat log 0.
        assert_eq!(
            clat.lines().nth(1).unwrap(),
            "30, 100000, 1, 4096, 4096, 0, 30000000"
        );
        assert_eq!(
            lat.lines().nth(1).unwrap(),
            "30, 100000, 1, 4096, 4096, 0, 0"
        );
    }
}
