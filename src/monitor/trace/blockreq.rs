//! Block requests as the trace sees them: the events `block_rq_issue` and
//! `block_rq_complete`, each request's operation from the kernel's `rwbs` flags, and its
//! class: journal (inside the journal's extents), metadata (REQ_META,
//! or inside the metadata areas the filesystem's tools name), data (the rest), with flushes
//! and discards apart. Tallies are kept per phase, class and direction.

use super::fsmap::FsMap;
use crate::monitor::series::PerPhase;
use crate::result::monitor::IoClassRow;
use crate::timeline::Span;
use std::collections::BTreeMap;

/// One trace event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Trace clock seconds (CLOCK_MONOTONIC with the `mono` clock).
    pub ts: f64,
    pub complete: bool,
    /// (major, minor) of the disk.
    pub dev: (u32, u32),
    pub rwbs: String,
    pub sector: u64,
    pub sectors: u64,
    /// Bytes of an issued request (`None` on completions).
    pub bytes: Option<u64>,
}

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    Read,
    Write,
    Flush,
    Discard,
}

/// The operation letter of `rwbs` (after a leading `F`, REQ_PREFLUSH, when one follows) and
/// the flags after it.
fn split_rwbs(rwbs: &str) -> (char, &str) {
    let b = rwbs.as_bytes();
    let skip = usize::from(b.len() > 1 && b[0] == b'F' && b"WRDNF".contains(&b[1]));
    let op = b.get(skip).map_or('N', |&c| c as char);
    (op, rwbs.get(skip + 1..).unwrap_or(""))
}

/// The operation of a request from its `rwbs` and size (a sized request without a read or
/// write letter writes zeroes).
pub fn op_of(rwbs: &str, bytes: u64) -> Op {
    match split_rwbs(rwbs).0 {
        'R' => Op::Read,
        'W' => Op::Write,
        'D' => Op::Discard,
        'N' if bytes > 0 => Op::Write,
        _ => Op::Flush,
    }
}

/// Whether the request carries REQ_META.
pub fn is_meta(rwbs: &str) -> bool {
    split_rwbs(rwbs).1.contains('M')
}

/// The class of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Journal,
    Metadata,
    Data,
    Flush,
    Discard,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::Journal => "journal",
            Class::Metadata => "metadata",
            Class::Data => "data",
            Class::Flush => "flush",
            Class::Discard => "discard",
        }
    }
}

/// The class of a request of `op` at `sector` of disk `device`.
pub fn classify(map: &FsMap, device: &str, op: Op, rwbs: &str, sector: u64) -> Class {
    match op {
        Op::Flush => Class::Flush,
        Op::Discard => Class::Discard,
        _ if map.in_journal(device, sector) => Class::Journal,
        _ if is_meta(rwbs) || map.in_metadata(device, sector) => Class::Metadata,
        _ => Class::Data,
    }
}

/// Counts of one class and operation.
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    requests: u64,
    bytes: u64,
    latency_ns: u64,
    completed: u64,
}

/// Requests per phase, class and operation.
#[derive(Debug, Default)]
pub struct Tally {
    phases: PerPhase<BTreeMap<(Class, Op), Sums>>,
}

impl Tally {
    /// An issued request.
    pub fn issued(&mut self, span: &Span, class: Class, op: Op, bytes: u64) {
        let s = self.phases.get(span).entry((class, op)).or_default();
        s.requests += 1;
        s.bytes += bytes;
    }

    /// A request issued in `span` completed after `latency_ns`.
    pub fn completed(&mut self, span: &Span, class: Class, op: Op, latency_ns: u64) {
        let s = self.phases.get(span).entry((class, op)).or_default();
        s.latency_ns += latency_ns;
        s.completed += 1;
    }

    /// Requests issued in all.
    pub fn requests(&self) -> u64 {
        let all = self.phases.entries.iter().flat_map(|(_, m)| m.values());
        all.map(|s| s.requests).sum()
    }

    /// result.json's rows.
    pub fn rows(&self) -> Vec<IoClassRow> {
        let mut rows = Vec::new();
        for (phase, m) in &self.phases.entries {
            for ((class, op), s) in m {
                let direction = match op {
                    Op::Read => "read",
                    Op::Write => "write",
                    Op::Flush | Op::Discard => "none",
                };
                rows.push(IoClassRow {
                    phase: phase.phase().map(str::to_string),
                    outside: phase.outside(),
                    class: class.name().into(),
                    direction: direction.into(),
                    requests: s.requests,
                    bytes: s.bytes,
                    latency_ms_mean: (s.completed > 0)
                        .then(|| s.latency_ns as f64 / s.completed as f64 / 1e6),
                });
            }
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::super::fsmap::Area;
    use super::*;

    #[test]
    fn rwbs_gives_the_operation_and_meta() {
        for (rwbs, bytes, op) in [
            ("WS", 4096, Op::Write),
            ("FWS", 4096, Op::Write),
            ("WFS", 4096, Op::Write),
            ("RA", 4096, Op::Read),
            ("FF", 0, Op::Flush),
            ("F", 0, Op::Flush),
            ("D", 8192, Op::Discard),
            ("DE", 8192, Op::Discard),
            ("N", 8192, Op::Write),
            ("N", 0, Op::Flush),
        ] {
            assert_eq!(op_of(rwbs, bytes), op, "{rwbs}");
        }
        assert!(is_meta("RM") && is_meta("WSM") && is_meta("FWSM"));
        assert!(!is_meta("WS"));
    }

    #[test]
    fn classes_and_tally() {
        let area = |s, e| Area {
            device: "loop3".into(),
            start: s,
            end: e,
        };
        let map = FsMap {
            journal: vec![area(100, 200)],
            metadata: vec![area(0, 16)],
            journal_source: None,
        };
        assert_eq!(
            classify(&map, "loop3", Op::Write, "WS", 150),
            Class::Journal
        );
        assert_eq!(
            classify(&map, "loop3", Op::Write, "WSM", 150),
            Class::Journal
        );
        assert_eq!(
            classify(&map, "loop3", Op::Read, "RM", 5000),
            Class::Metadata
        );
        assert_eq!(classify(&map, "loop3", Op::Write, "W", 8), Class::Metadata);
        assert_eq!(classify(&map, "loop3", Op::Write, "W", 5000), Class::Data);
        assert_eq!(classify(&map, "loop4", Op::Write, "W", 150), Class::Data);
        assert_eq!(classify(&map, "loop3", Op::Flush, "FF", 150), Class::Flush);
        let mut t = Tally::default();
        let run = Span::Phase("run".into());
        t.issued(&run, Class::Data, Op::Write, 4096);
        t.issued(&run, Class::Data, Op::Write, 4096);
        t.completed(&run, Class::Data, Op::Write, 3_000_000);
        let after = Span::Outside(crate::timeline::Outside::After);
        t.issued(&after, Class::Flush, Op::Flush, 0);
        let rows = t.rows();
        assert_eq!(t.requests(), 3);
        assert_eq!(
            (rows[0].requests, rows[0].bytes, rows[0].latency_ms_mean),
            (2, 8192, Some(3.0))
        );
        assert_eq!(
            (rows[1].class.as_str(), rows[1].direction.as_str()),
            ("flush", "none")
        );
        assert_eq!(
            (rows[0].phase.as_deref(), rows[0].outside),
            (Some("run"), None)
        );
        assert_eq!(
            (rows[1].phase.as_deref(), rows[1].outside),
            (None, Some(crate::timeline::Outside::After))
        );
        assert_eq!(rows[1].latency_ms_mean, None);
    }
}
