//! The emulated device's own request log: while a trial's monitors ask for it, every request
//! the kernel sends the device (read, write, flush, discard) is kept with its arrival time,
//! offset, length and the service time the model gave it, and written as CSV when logging
//! stops, so the trial can check its block trace against what the device really received.
//! A request is recorded when the model says when it completes: on arrival for most models,
//! later for one that reorders its queue.
//! Entries go into fixed-size chunks under the model's lock: no reallocation of a large
//! buffer, no system call, in the request path.

use super::model::ReqKind;
use super::timer::Clock;
use std::io::Write;
use std::path::Path;

/// Entries per chunk (2 MiB of entries).
const CHUNK: usize = 1 << 16;
/// Most entries kept (128 MiB); later requests are counted as dropped.
const MAX_ENTRIES: usize = 1 << 22;

/// One request as the device received it.
#[derive(Debug, Clone, Copy)]
struct Entry {
    arrive_ns: u64,
    offset: u64,
    len: u64,
    service_ns: u64,
    kind: ReqKind,
}

/// The requests received since logging started.
#[derive(Debug)]
pub struct RequestLog {
    chunks: Vec<Vec<Entry>>,
    len: usize,
    dropped: u64,
    /// CLOCK_MONOTONIC ns of the server clock's zero.
    clock_mono_ns: u64,
    /// CLOCK_MONOTONIC ns that the log's times are counted from (the trial's origin).
    origin_mono_ns: u64,
}

/// CLOCK_MONOTONIC now, ns (the clock `Instant` and trace clock `mono` use).
pub fn mono_now_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

fn kind_name(kind: ReqKind) -> &'static str {
    match kind {
        ReqKind::Read => "read",
        ReqKind::Write => "write",
        ReqKind::Flush => "flush",
        ReqKind::Discard => "discard",
    }
}

impl RequestLog {
    /// An empty log whose times count from `origin_mono_ns`; `clock` is the server's clock.
    pub fn new(clock: &Clock, origin_mono_ns: u64) -> RequestLog {
        let clock_mono_ns = mono_now_ns().saturating_sub(clock.now_ns());
        RequestLog {
            chunks: Vec::new(),
            len: 0,
            dropped: 0,
            clock_mono_ns,
            origin_mono_ns,
        }
    }

    /// Records one request (times on the server's clock).
    pub fn push(&mut self, kind: ReqKind, offset: u64, len: u64, arrive_ns: u64, service_ns: u64) {
        if self.len >= MAX_ENTRIES {
            self.dropped += 1;
            return;
        }
        if self.chunks.last().is_none_or(|c| c.len() == CHUNK) {
            self.chunks.push(Vec::with_capacity(CHUNK));
        }
        let e = Entry {
            arrive_ns,
            offset,
            len,
            service_ns,
            kind,
        };
        self.chunks.last_mut().expect("a chunk").push(e);
        self.len += 1;
    }

    /// CLOCK_MONOTONIC ns of the server clock's zero, and of the origin the log's times count
    /// from.
    pub fn clocks(&self) -> (u64, u64) {
        (self.clock_mono_ns, self.origin_mono_ns)
    }

    /// Requests kept.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Requests not kept because the log was full.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Writes the log to `path`: `t_s,op,offset,bytes,service_us`, `t_s` in seconds from the
    /// origin, in arrival order (a request a reordering model reported late was recorded
    /// late).
    pub fn write_csv(&self, path: &Path) -> std::io::Result<()> {
        let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
        writeln!(w, "t_s,op,offset,bytes,service_us")?;
        let mut entries: Vec<&Entry> = self.chunks.iter().flatten().collect();
        entries.sort_by_key(|e| e.arrive_ns);
        for e in entries {
            let mono = self.clock_mono_ns + e.arrive_ns;
            let t_s = (mono as f64 - self.origin_mono_ns as f64) / 1e9;
            writeln!(
                w,
                "{t_s:.6},{},{},{},{:.3}",
                kind_name(e.kind),
                e.offset,
                e.len,
                e.service_ns as f64 / 1e3
            )?;
        }
        w.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_is_written_in_order_with_times_from_the_origin() {
        let clock = Clock::new();
        let origin = mono_now_ns();
        let mut log = RequestLog::new(&clock, origin);
        let now = clock.now_ns();
        log.push(ReqKind::Write, 4096, 8192, now, 1500);
        log.push(ReqKind::Flush, 0, 0, now + 1_000_000, 0);
        assert_eq!(log.len(), 2);
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("log.csv");
        log.write_csv(&p).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "t_s,op,offset,bytes,service_us");
        let f: Vec<&str> = lines[1].split(',').collect();
        assert_eq!(&f[1..], ["write", "4096", "8192", "1.500"]);
        let t: f64 = f[0].parse().unwrap();
        assert!((-0.01..0.5).contains(&t), "{t}");
        assert!(lines[2].contains(",flush,0,0,"));
    }
}
