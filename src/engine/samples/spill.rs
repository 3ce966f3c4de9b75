//! The spill format: how the recorder writes one stream's samples to its own file as they come,
//! and how they are read back, one fixed-size little-endian record per sample. Only iotrial
//! reads it (samples.csv is the published format); it lives for one trial.

use super::sample::{Op, Sample};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// Bytes per record: offset, bytes, issue_ns, latency_ns, lag_ns (u64 each), errno (i32),
/// phase (u16), op (u8), one byte of padding, file and asked (u32 each).
pub const RECORD: usize = 56;

/// The spill file of stream `index` in `dir`.
pub fn path(dir: &Path, index: usize) -> PathBuf {
    dir.join(format!("{index:04}.samples"))
}

/// Appends `samples` to `w`.
pub fn write(w: &mut BufWriter<std::fs::File>, samples: &[Sample]) -> io::Result<()> {
    let mut rec = [0u8; RECORD];
    for s in samples {
        rec[0..8].copy_from_slice(&s.offset.to_le_bytes());
        rec[8..16].copy_from_slice(&s.bytes.to_le_bytes());
        rec[16..24].copy_from_slice(&s.issue_ns.to_le_bytes());
        rec[24..32].copy_from_slice(&s.latency_ns.to_le_bytes());
        rec[32..40].copy_from_slice(&s.lag_ns.to_le_bytes());
        rec[40..44].copy_from_slice(&s.errno.to_le_bytes());
        rec[44..46].copy_from_slice(&s.phase.to_le_bytes());
        rec[46] = s.op.code();
        rec[48..52].copy_from_slice(&s.file.to_le_bytes());
        rec[52..56].copy_from_slice(&s.asked.to_le_bytes());
        w.write_all(&rec)?;
    }
    Ok(())
}

fn u64_at(rec: &[u8; RECORD], at: usize) -> u64 {
    u64::from_le_bytes(rec[at..at + 8].try_into().expect("8 bytes"))
}

/// Calls `f` with every sample of the spill file at `path`, in the order they were written.
/// A file that does not exist holds no samples.
pub fn read_each(path: &Path, f: &mut dyn FnMut(&Sample)) -> io::Result<()> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let mut r = BufReader::with_capacity(1 << 20, file);
    let mut rec = [0u8; RECORD];
    loop {
        match r.read_exact(&mut rec) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
        f(&Sample {
            op: Op::from_code(rec[46]),
            offset: u64_at(&rec, 0),
            bytes: u64_at(&rec, 8),
            issue_ns: u64_at(&rec, 16),
            latency_ns: u64_at(&rec, 24),
            lag_ns: u64_at(&rec, 32),
            errno: i32::from_le_bytes(rec[40..44].try_into().expect("4 bytes")),
            phase: u16::from_le_bytes(rec[44..46].try_into().expect("2 bytes")),
            file: u32::from_le_bytes(rec[48..52].try_into().expect("4 bytes")),
            asked: u32::from_le_bytes(rec[52..56].try_into().expect("4 bytes")),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let d = tempfile::tempdir().unwrap();
        let p = path(d.path(), 3);
        let samples = [
            Sample {
                offset: u64::MAX,
                bytes: 1 << 20,
                issue_ns: 5,
                latency_ns: 6,
                lag_ns: 7,
                errno: -1,
                phase: 2,
                op: Op::Unlink,
                file: 9,
                asked: 4096,
            },
            Sample::default(),
        ];
        let mut w = BufWriter::new(std::fs::File::create(&p).unwrap());
        write(&mut w, &samples).unwrap();
        drop(w);
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 2 * RECORD as u64);
        let mut back = Vec::new();
        read_each(&p, &mut |s| back.push(*s)).unwrap();
        assert_eq!(back, samples);
        let mut none = 0;
        read_each(&path(d.path(), 9), &mut |_| none += 1).unwrap();
        assert_eq!(none, 0);
    }
}
