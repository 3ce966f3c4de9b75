//! samples.csv (one row per sampled I/O, `phase` as its second column) and timeseries.csv (one
//! row per interval per stream per phase): writing both from a sample set one stream at a time,
//! and reading samples.csv back for `iotrial analyze` and the report, including files written
//! before phases existed (no `phase` column: one phase, `run`, with times since sampling
//! began).

use super::ResultError;
use crate::analysis::buffer::BufferInterval;
use crate::analysis::timeseries::IntervalRow;
use crate::engine::samples::sample::{errno_name, parse_errno};
use crate::engine::{Op, PhaseRecord, Sample, SampleSet, StreamSamples};
use crate::units::trim_float;
use std::io::{BufWriter, Write};
use std::path::Path;

/// The header of samples.csv; scripts may rely on it.
pub const SAMPLES_HEADER: &str = "stream,phase,role,op,offset,bytes,issue_ns,latency_ns,error";
/// The header of samples.csv before phases existed.
pub const SAMPLES_HEADER_UNPHASED: &str = "stream,role,op,offset,bytes,issue_ns,latency_ns,error";
/// The phase every sample of a file without a `phase` column belongs to.
pub const UNPHASED: &str = "run";
/// The header of timeseries.csv; the last four columns are empty for streams that do not run
/// in real time.
pub const TIMESERIES_HEADER: &str =
    "start_s,phase,stream,role,ios,errors,mb_s,lat_mean_ms,lat_max_ms,buffer_bytes,buffer_peak_bytes,overflow_bytes,stall_ms";
/// The header of timeseries.csv before real-time streams.
pub const TIMESERIES_HEADER_V1: &str =
    "start_s,phase,stream,role,ios,errors,mb_s,lat_mean_ms,lat_max_ms";

/// Writes every sample of `set`, streams in layout order, samples in issue order.
pub fn write_samples(path: &Path, set: &SampleSet) -> Result<(), ResultError> {
    let f = std::fs::File::create(path).map_err(|e| ResultError::io(path, e))?;
    let mut w = BufWriter::with_capacity(1 << 20, f);
    let io = |e| ResultError::io(path, e);
    writeln!(w, "{SAMPLES_HEADER}").map_err(io)?;
    let phase_name = |p: u16| {
        set.phases
            .get(p as usize)
            .map_or_else(|| p.to_string(), |ph| ph.name.clone())
    };
    for (i, st) in set.streams.iter().enumerate() {
        let mut failed = None;
        set.each(i, &mut |s| {
            if failed.is_some() {
                return;
            }
            failed = writeln!(
                w,
                "{},{},{},{},{},{},{},{},{}",
                st.name,
                phase_name(s.phase),
                st.role,
                s.op.as_str(),
                s.offset,
                s.bytes,
                s.issue_ns,
                s.latency_ns,
                errno_name(s.errno)
            )
            .err();
        })
        .map_err(io)?;
        if let Some(e) = failed {
            return Err(io(e));
        }
    }
    w.flush().map_err(io)
}

/// Writes the per-interval series.
pub fn write_timeseries(path: &Path, rows: &[IntervalRow]) -> Result<(), ResultError> {
    let f = std::fs::File::create(path).map_err(|e| ResultError::io(path, e))?;
    let mut w = BufWriter::new(f);
    let io = |e| ResultError::io(path, e);
    writeln!(w, "{TIMESERIES_HEADER}").map_err(io)?;
    for r in rows {
        let buffer = r.buffer.map_or_else(
            || ",,,".to_string(),
            |b| {
                let stall = b.stall_ns as f64 / 1e6;
                format!("{},{},{},{stall:.3}", b.end, b.peak, b.dropped)
            },
        );
        writeln!(
            w,
            "{},{},{},{},{},{},{:.3},{:.3},{:.3},{buffer}",
            trim_float((r.start_s * 1e6).round() / 1e6),
            r.phase,
            r.stream,
            r.role,
            r.ios,
            r.errors,
            r.mb_s,
            r.lat_mean_ms,
            r.lat_max_ms
        )
        .map_err(io)?;
    }
    w.flush().map_err(io)
}

/// Reads timeseries.csv back (the format [`write_timeseries`] writes).
pub fn read_timeseries(path: &Path) -> Result<Vec<IntervalRow>, ResultError> {
    let fmt = |line: usize, m: String| ResultError::format(path, format!("line {line}: {m}"));
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_path(path)
        .map_err(|e| ResultError::format(path, e.to_string()))?;
    let headers = rdr.headers().map_err(|e| fmt(1, e.to_string()))?;
    let header = headers.iter().collect::<Vec<_>>().join(",");
    if header != TIMESERIES_HEADER && header != TIMESERIES_HEADER_V1 {
        return Err(fmt(1, format!("header is not '{TIMESERIES_HEADER}'")));
    }
    let mut rows = Vec::new();
    for (i, rec) in rdr.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|e| fmt(line, e.to_string()))?;
        let num = |k: usize| -> Result<f64, ResultError> {
            rec.get(k)
                .and_then(|v| v.parse::<f64>().ok())
                .ok_or_else(|| fmt(line, format!("field {} is not a number", k + 1)))
        };
        rows.push(IntervalRow {
            start_s: num(0)?,
            phase: rec[1].to_string(),
            stream: rec[2].to_string(),
            role: rec[3].to_string(),
            ios: num(4)? as u64,
            errors: num(5)? as u64,
            mb_s: num(6)?,
            lat_mean_ms: num(7)?,
            lat_max_ms: num(8)?,
            buffer: match rec.get(9).filter(|v| !v.is_empty()) {
                None => None,
                Some(_) => Some(BufferInterval {
                    end: num(9)? as u64,
                    peak: num(10)? as u64,
                    dropped: num(11)? as u64,
                    stall_ns: (num(12)? * 1e6).round() as u64,
                }),
            },
        });
    }
    Ok(rows)
}

/// Reads samples.csv back into a set held in memory: streams in order of first appearance,
/// phases in order of first appearance. Each phase's times are those of its samples (its
/// sampling start is its first issue); a result.json's `phases` say more, when there is one.
pub fn read_samples(path: &Path) -> Result<SampleSet, ResultError> {
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
    let phased = match headers.as_str() {
        SAMPLES_HEADER => true,
        SAMPLES_HEADER_UNPHASED => false,
        _ => {
            return Err(fmt(
                1,
                format!("header is '{headers}', expected '{SAMPLES_HEADER}' (or, from before phases, '{SAMPLES_HEADER_UNPHASED}')"),
            ))
        }
    };
    let mut rows = Rows::default();
    for (i, rec) in rdr.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|e| fmt(line, e.to_string()))?;
        rows.add(&rec, phased).map_err(|m| fmt(line, m))?;
    }
    Ok(rows.into_set(phased))
}

/// samples.csv as it is read.
#[derive(Default)]
struct Rows {
    streams: Vec<StreamSamples>,
    phases: Vec<String>,
}

impl Rows {
    /// Adds one record (`phased`: it has the `phase` column).
    fn add(&mut self, rec: &csv::StringRecord, phased: bool) -> Result<(), String> {
        let want = if phased { 9 } else { 8 };
        if rec.len() != want {
            return Err(format!("{} fields, expected {want}", rec.len()));
        }
        let (phase, rest) = if phased { (&rec[1], 2) } else { (UNPHASED, 1) };
        let field = |k: usize| &rec[rest + k - 1];
        let num = |k: usize, what: &str| -> Result<u64, String> {
            field(k)
                .parse::<u64>()
                .map_err(|_| format!("{what} '{}' is not a whole number", field(k)))
        };
        let op = Op::parse(field(2))
            .ok_or_else(|| format!("op '{}' is not an op iotrial times", field(2)))?;
        let errno = parse_errno(field(7))
            .ok_or_else(|| format!("error '{}' is not an errno name", field(7)))?;
        let p = match self.phases.iter().position(|n| n == phase) {
            Some(p) => p,
            None => {
                self.phases.push(phase.to_string());
                self.phases.len() - 1
            }
        };
        let sample = Sample {
            op,
            offset: num(3, "offset")?,
            bytes: num(4, "bytes")?,
            issue_ns: num(5, "issue_ns")?,
            latency_ns: num(6, "latency_ns")?,
            lag_ns: 0,
            errno,
            phase: u16::try_from(p).map_err(|_| "more than 65535 phases".to_string())?,
            file: 0,
            asked: 0,
        };
        match self.streams.iter_mut().find(|s| s.name == rec[0]) {
            Some(s) => s.samples.push(sample),
            None => self.streams.push(StreamSamples {
                name: rec[0].to_string(),
                role: field(1).to_string(),
                op,
                samples: vec![sample],
            }),
        }
        Ok(())
    }

    /// The set, each phase spanning its samples; a file without phases starts sampling at 0.
    fn into_set(self, phased: bool) -> SampleSet {
        let phases = self
            .phases
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let of = || {
                    self.streams
                        .iter()
                        .flat_map(|s| &s.samples)
                        .filter(move |s| s.phase as usize == i)
                };
                let first = of().map(|s| s.issue_ns).min().unwrap_or(0) as f64 / 1e9;
                let last = of().map(|s| s.done_ns()).max().unwrap_or(0) as f64 / 1e9;
                let start = if phased { first } else { 0.0 };
                PhaseRecord {
                    start_s: start,
                    end_s: Some(last),
                    sampling_start_s: Some(start),
                    samples: of().count() as u64,
                    ..PhaseRecord::stream(name)
                }
            })
            .collect();
        SampleSet::in_memory(self.streams, phases)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream() -> StreamSamples {
        StreamSamples {
            name: "record0".into(),
            role: "record".into(),
            op: Op::Write,
            samples: vec![
                Sample {
                    op: Op::Write,
                    offset: 4096,
                    bytes: 4096,
                    issue_ns: 10,
                    latency_ns: 20,
                    ..Default::default()
                },
                Sample {
                    op: Op::Write,
                    offset: 0,
                    bytes: 0,
                    issue_ns: 40,
                    latency_ns: 5,
                    errno: 5,
                    ..Default::default()
                },
            ],
        }
    }

    #[test]
    fn samples_round_trip() {
        let st = stream();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("samples.csv");
        let set = SampleSet::in_memory(vec![st.clone()], vec![PhaseRecord::stream("fill")]);
        write_samples(&p, &set).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.starts_with("stream,phase,role,op,offset,bytes,issue_ns,latency_ns,error\n"));
        assert!(text.contains("record0,fill,record,write,0,0,40,5,EIO\n"));
        let back = read_samples(&p).unwrap();
        assert_eq!(back.load().unwrap(), vec![st]);
        assert_eq!(back.phases[0].name, "fill");
        assert_eq!(
            back.phases[0].sampling_start_s,
            Some(10e-9),
            "its first issue"
        );
    }

    #[test]
    fn a_file_from_before_phases_is_one_phase_sampled_from_zero() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.csv");
        let text = format!("{SAMPLES_HEADER_UNPHASED}\nrecord0,record,write,4096,4096,10,20,\nrecord0,record,write,0,0,40,5,EIO\n");
        std::fs::write(&p, text).unwrap();
        let set = read_samples(&p).unwrap();
        assert_eq!(set.load().unwrap(), vec![stream()]);
        assert_eq!(set.phases.len(), 1);
        assert_eq!(
            (set.phases[0].name.as_str(), set.phases[0].zero_ns()),
            (UNPHASED, 0)
        );
    }

    #[test]
    fn timeseries_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("timeseries.csv");
        let row = IntervalRow {
            start_s: 0.25,
            phase: "stream".into(),
            stream: "writer0".into(),
            role: "writer".into(),
            ios: 3,
            errors: 1,
            mb_s: 2.5,
            lat_mean_ms: 1.125,
            lat_max_ms: 2.0,
            buffer: None,
        };
        let live = IntervalRow {
            stream: "writer1".into(),
            buffer: Some(BufferInterval {
                peak: 3_000_000,
                end: 1_048_576,
                dropped: 17,
                stall_ns: 250_500_000,
            }),
            ..row.clone()
        };
        write_timeseries(&p, &[row.clone(), live.clone()]).unwrap();
        assert_eq!(read_timeseries(&p).unwrap(), vec![row.clone(), live]);
        // Files written before real-time streams keep their nine columns.
        let old =
            format!("{TIMESERIES_HEADER_V1}\n0.25,stream,writer0,writer,3,1,2.500,1.125,2.000\n");
        std::fs::write(&p, old).unwrap();
        assert_eq!(read_timeseries(&p).unwrap(), vec![row]);
    }

    #[test]
    fn bad_rows_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.csv");
        std::fs::write(
            &p,
            format!("{SAMPLES_HEADER}\nr,run,record,write,0,1,2,x,\n"),
        )
        .unwrap();
        let e = read_samples(&p).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("latency_ns"), "{e}");
        std::fs::write(&p, "a,b\n").unwrap();
        let e = read_samples(&p).unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("header"), "{e}");
    }
}
