//! samples.csv (one row per sampled I/O) and timeseries.csv (one row per second per stream):
//! writing both, and reading samples.csv back for `iotrial analyze`.

use super::ResultError;
use crate::analysis::timeseries::SecondRow;
use crate::engine::sample::{errno_name, parse_errno};
use crate::engine::{Op, Sample, StreamSamples};
use std::io::{BufWriter, Write};
use std::path::Path;

/// The header of samples.csv; scripts may rely on it.
pub const SAMPLES_HEADER: &str = "stream,role,op,offset,bytes,issue_ns,latency_ns,error";
/// The header of timeseries.csv.
pub const TIMESERIES_HEADER: &str = "second,stream,role,ios,errors,mb_s,lat_mean_ms,lat_max_ms";

/// Writes every sample of every stream, streams in layout order, samples in issue order.
pub fn write_samples(path: &Path, streams: &[StreamSamples]) -> Result<(), ResultError> {
    let f = std::fs::File::create(path).map_err(|e| ResultError::io(path, e))?;
    let mut w = BufWriter::with_capacity(1 << 20, f);
    let io = |e| ResultError::io(path, e);
    writeln!(w, "{SAMPLES_HEADER}").map_err(io)?;
    for st in streams {
        for s in &st.samples {
            writeln!(
                w,
                "{},{},{},{},{},{},{},{}",
                st.name,
                st.role,
                st.op.as_str(),
                s.offset,
                s.bytes,
                s.issue_ns,
                s.latency_ns,
                errno_name(s.errno)
            )
            .map_err(io)?;
        }
    }
    w.flush().map_err(io)
}

/// Writes the per-second series.
pub fn write_timeseries(path: &Path, rows: &[SecondRow]) -> Result<(), ResultError> {
    let f = std::fs::File::create(path).map_err(|e| ResultError::io(path, e))?;
    let mut w = BufWriter::new(f);
    let io = |e| ResultError::io(path, e);
    writeln!(w, "{TIMESERIES_HEADER}").map_err(io)?;
    for r in rows {
        writeln!(
            w,
            "{},{},{},{},{},{:.3},{:.3},{:.3}",
            r.second, r.stream, r.role, r.ios, r.errors, r.mb_s, r.lat_mean_ms, r.lat_max_ms
        )
        .map_err(io)?;
    }
    w.flush().map_err(io)
}

/// Reads samples.csv back into streams (in order of first appearance).
pub fn read_samples(path: &Path) -> Result<Vec<StreamSamples>, ResultError> {
    let fmt = |line: usize, m: String| ResultError::format(path, format!("line {line}: {m}"));
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_path(path)
        .map_err(|e| ResultError::format(path, e.to_string()))?;
    let headers = rdr
        .headers()
        .map_err(|e| fmt(1, e.to_string()))?
        .iter()
        .collect::<Vec<_>>()
        .join(",");
    if headers != SAMPLES_HEADER {
        return Err(fmt(
            1,
            format!("header is '{headers}', expected '{SAMPLES_HEADER}'"),
        ));
    }
    let mut streams: Vec<StreamSamples> = Vec::new();
    for (i, rec) in rdr.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|e| fmt(line, e.to_string()))?;
        if rec.len() != 8 {
            return Err(fmt(line, format!("{} fields, expected 8", rec.len())));
        }
        let num = |k: usize, what: &str| -> Result<u64, ResultError> {
            rec[k]
                .parse::<u64>()
                .map_err(|_| fmt(line, format!("{what} '{}' is not a whole number", &rec[k])))
        };
        let op = Op::parse(&rec[2])
            .ok_or_else(|| fmt(line, format!("op '{}' is not read or write", &rec[2])))?;
        let errno = parse_errno(&rec[7])
            .ok_or_else(|| fmt(line, format!("error '{}' is not an errno name", &rec[7])))?;
        let sample = Sample {
            offset: num(3, "offset")?,
            bytes: num(4, "bytes")?,
            issue_ns: num(5, "issue_ns")?,
            latency_ns: num(6, "latency_ns")?,
            lag_ns: 0,
            errno,
        };
        match streams.iter_mut().find(|s| s.name == rec[0]) {
            Some(s) => s.samples.push(sample),
            None => streams.push(StreamSamples {
                name: rec[0].to_string(),
                role: rec[1].to_string(),
                op,
                samples: vec![sample],
            }),
        }
    }
    Ok(streams)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_round_trip() {
        let st = StreamSamples {
            name: "record0".into(),
            role: "record".into(),
            op: Op::Write,
            samples: vec![
                Sample {
                    offset: 4096,
                    bytes: 4096,
                    issue_ns: 10,
                    latency_ns: 20,
                    lag_ns: 0,
                    errno: 0,
                },
                Sample {
                    offset: 0,
                    bytes: 0,
                    issue_ns: 40,
                    latency_ns: 5,
                    lag_ns: 0,
                    errno: 5,
                },
            ],
        };
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("samples.csv");
        write_samples(&p, std::slice::from_ref(&st)).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("stream,role,op,offset,bytes,issue_ns,latency_ns,error\n"));
        assert!(text.contains("record0,record,write,0,0,40,5,EIO\n"));
        assert_eq!(read_samples(&p).unwrap(), vec![st]);
    }

    #[test]
    fn bad_rows_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.csv");
        std::fs::write(&p, format!("{SAMPLES_HEADER}\nr,record,write,0,1,2,x,\n")).unwrap();
        let e = read_samples(&p).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("latency_ns"), "{e}");
    }
}
