//! One block stream's region judged against its samples. At each I/O-sized block, the write
//! meant to be there is the last one acknowledged before the cut (`expected`). A verify interval
//! holding the stream's own data for that place is intact when it was sealed after the I/O the
//! stream issued `depth` places before `expected` (so it is `expected`, or a later write that
//! landed), and an older version otherwise; zeros where something was acknowledged are lost;
//! a block whose intervals come from different writes (or hold zeros beside data, or a damaged
//! header or checksum) is a torn write; another writer's data and stale bytes are foreign. On a
//! raw device a block nobody wrote holds whatever the disk held before: that is not a leak,
//! only a file (whose unwritten blocks must read as zeros) can show foreign data there.

use super::StreamLoss;
use crate::engine::{Op, Sample};
use crate::stack::powercut::scan::{Found, Part, RegionScan};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Verify intervals (4 KiB blocks) by what they held after the cut.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockCounts {
    /// What was acknowledged last, or a later write that landed.
    pub intact: u64,
    /// An older version of the stream's own data where a newer one was acknowledged.
    pub lost_older: u64,
    /// Zeros (or nothing: past the file's end) where data was acknowledged.
    pub lost_zeros: u64,
    /// Part of a write that tore: intervals of one write's block from different writes, or a
    /// damaged header or checksum.
    pub torn: u64,
    /// Another writer's data: another stream's, another file's, another place's.
    pub foreign: u64,
    /// Bytes with no header that are not zeros: stale data nobody wrote there.
    pub stale: u64,
    /// Zeros where nothing was acknowledged: never written.
    pub unwritten: u64,
}

impl BlockCounts {
    /// Adds `o` to these.
    pub fn add(&mut self, o: &BlockCounts) {
        self.intact += o.intact;
        self.lost_older += o.lost_older;
        self.lost_zeros += o.lost_zeros;
        self.torn += o.torn;
        self.foreign += o.foreign;
        self.stale += o.stale;
        self.unwritten += o.unwritten;
    }

    /// Foreign and stale together: data that is not this stream's.
    pub fn not_own(&self) -> u64 {
        self.foreign + self.stale
    }
}

/// How one interval ended up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Intact,
    Older,
    Zeros,
    Torn,
    Foreign,
    Stale,
    Unwritten,
}

/// The write meant to be at a block: its issue and the issue of the stream's I/O `depth`
/// places before it (its header was sealed after that one).
#[derive(Debug, Clone, Copy)]
struct Expected {
    issue: u64,
    sealed_after: u64,
}

/// Judges region `r` against `ops`, the stream's samples before the cut phase ended (times
/// in model ns since the trial's origin); the cut at `cut_ns`; headers carry real ns, so
/// their times are multiplied by `scale`.
pub fn judge_region(
    r: &RegionScan,
    ops: &[Sample],
    cut_ns: u64,
    scale: f64,
    depth: usize,
) -> StreamLoss {
    let mut issues: Vec<u64> = ops.iter().map(|s| s.issue_ns).collect();
    issues.sort_unstable();
    let io = r.io_size.max(1);
    let mut expected: HashMap<u64, Expected> = HashMap::new();
    let mut written_end = 0u64;
    let mut fsync: Option<(u64, u64)> = None;
    for s in ops.iter().filter(|s| s.errno == 0 && s.done_ns() <= cut_ns) {
        match s.op {
            Op::Write if s.offset >= r.base && s.bytes > 0 => {
                let k = issues.partition_point(|&t| t < s.issue_ns);
                let sealed_after = if k >= depth { issues[k - depth] } else { 0 };
                // Every block the write covers (one, for writes of the block's size).
                let (first, last) = (
                    (s.offset - r.base) / io,
                    (s.offset + s.bytes - 1 - r.base) / io,
                );
                for block in first..=last {
                    let e = expected.entry(block).or_insert(Expected {
                        issue: 0,
                        sealed_after: 0,
                    });
                    if s.issue_ns >= e.issue {
                        *e = Expected {
                            issue: s.issue_ns,
                            sealed_after,
                        };
                    }
                }
                written_end = written_end.max(s.offset + s.bytes - r.base);
            }
            Op::Fsync | Op::Fdatasync if fsync.is_none_or(|f| s.issue_ns > f.0) => {
                fsync = Some((s.issue_ns, s.done_ns()));
            }
            _ => {}
        }
    }
    let per = (io / r.interval.max(1)).max(1) as usize;
    let mut loss = StreamLoss::default();
    let mut oldest_lost: Option<u64> = None;
    let mut oldest_lost_synced: Option<u64> = None;
    let mut count = |c: Class, e: Option<&Expected>, loss: &mut StreamLoss| {
        let b = &mut loss.blocks;
        match c {
            Class::Intact => b.intact += 1,
            Class::Older => b.lost_older += 1,
            Class::Zeros => b.lost_zeros += 1,
            Class::Torn => b.torn += 1,
            Class::Foreign => b.foreign += 1,
            Class::Stale => b.stale += 1,
            Class::Unwritten => b.unwritten += 1,
        }
        if let (Some(e), false) = (e, matches!(c, Class::Intact | Class::Unwritten)) {
            loss.bytes_lost += r.interval;
            oldest_lost = Some(oldest_lost.map_or(e.issue, |o| o.min(e.issue)));
            if fsync.is_some_and(|f| e.issue < f.0) {
                oldest_lost_synced = Some(oldest_lost_synced.map_or(e.issue, |o| o.min(e.issue)));
            }
        }
    };
    let file = r.file_len.is_some();
    for (b, found) in r.blocks.iter().enumerate() {
        let e = expected.get(&(b as u64));
        for c in classify(found, per, e, scale) {
            let c = match c {
                Class::Foreign | Class::Stale if e.is_none() && !file => Class::Unwritten,
                c => c,
            };
            count(c, e, &mut loss);
        }
    }
    // Blocks acknowledged but beyond what could be read: the file ends before them.
    let read = r.blocks.len() as u64;
    let mut past: Vec<&Expected> = expected
        .iter()
        .filter(|(&b, _)| b >= read)
        .map(|(_, e)| e)
        .collect();
    past.sort_by_key(|e| e.issue);
    for e in past {
        for _ in 0..per {
            count(Class::Zeros, Some(e), &mut loss);
        }
    }
    loss.file_missing = r.missing;
    if let Some(len) = r.file_len {
        loss.file_short_bytes = written_end.saturating_sub(len.saturating_sub(r.base));
    }
    loss.seconds_lost_written = oldest_lost.map_or(0.0, |o| cut_ns.saturating_sub(o) as f64 / 1e9);
    loss.seconds_lost_fsynced =
        fsync.map(|f| oldest_lost_synced.map_or(0.0, |o| f.1.saturating_sub(o) as f64 / 1e9));
    loss
}

/// The intervals of one block, judged.
fn classify(found: &Found, per: usize, e: Option<&Expected>, scale: f64) -> Vec<Class> {
    let mut parts = Vec::with_capacity(per);
    found.each(per, |p| parts.push(p));
    let own_times: Vec<u64> = parts
        .iter()
        .filter_map(|p| match p {
            Part::Own { time_ns, .. } => Some(*time_ns),
            _ => None,
        })
        .collect();
    let newest = own_times.iter().copied().max();
    let zeros = parts.contains(&Part::Zeros);
    let mixed = parts.contains(&Part::Damaged)
        || own_times.iter().any(|&t| Some(t) != newest)
        || (zeros && newest.is_some());
    parts
        .iter()
        .map(|p| match *p {
            Part::Damaged => Class::Torn,
            Part::Other => Class::Foreign,
            Part::Stale => Class::Stale,
            Part::Own { time_ns, .. } if mixed && Some(time_ns) != newest => Class::Torn,
            Part::Zeros if mixed => Class::Torn,
            Part::Own { time_ns, .. } => match e {
                Some(e) if ((time_ns as f64 * scale) as u64) <= e.sealed_after => Class::Older,
                _ => Class::Intact,
            },
            Part::Zeros => match e {
                Some(_) => Class::Zeros,
                None => Class::Unwritten,
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn own(t_ms: u64) -> Part {
        Part::Own {
            time_ns: t_ms * MS,
            numberio: 0,
        }
    }

    fn write(offset: u64, issue_ms: u64, lat_ms: u64) -> Sample {
        Sample {
            op: Op::Write,
            offset,
            bytes: 8192,
            issue_ns: issue_ms * MS,
            latency_ns: lat_ms * MS,
            ..Sample::default()
        }
    }

    fn region(blocks: Vec<Found>) -> RegionScan {
        RegionScan {
            stream: 0,
            io_size: 8192,
            interval: 4096,
            base: 0,
            blocks,
            file_len: None,
            error: None,
            missing: false,
            file: None,
            by_samples: true,
        }
    }

    #[test]
    fn each_block_is_judged_against_the_last_write_acknowledged_before_the_cut() {
        // Writes at QD1 (each sealed just before its issue): block 0 at 10 and 30 ms, block 1
        // at 20 ms, block 2 at 40 ms (in flight at the cut, 45 ms), block 3 at 25 ms.
        let ops = [
            write(0, 10, 5),
            write(8192, 20, 4),
            write(3 * 8192, 25, 4),
            write(0, 30, 5),
            write(2 * 8192, 40, 10),
        ];
        let r = region(vec![
            // Block 0 holds the 10 ms write: the one at 30 ms was lost.
            Found::All(own(9)),
            // Block 1 holds what was acknowledged.
            Found::All(own(19)),
            // Block 2: nothing acknowledged, zeros: never written.
            Found::All(Part::Zeros),
            // Block 3: torn between its write and zeros.
            Found::Mixed(vec![own(24), Part::Zeros].into()),
        ]);
        let l = judge_region(&r, &ops, 45 * MS, 1.0, 1);
        let b = l.blocks;
        // Block 3's landed half is intact, its missing half torn.
        assert_eq!((b.intact, b.lost_older, b.torn, b.unwritten), (3, 2, 1, 2));
        assert_eq!(l.bytes_lost, 3 * 4096);
        // The oldest acknowledged write lost: the one at 25 ms (torn), 20 ms before the cut.
        assert!((l.seconds_lost_written - 0.020).abs() < 1e-9, "{l:?}");
        assert_eq!(l.seconds_lost_fsynced, None);
    }

    #[test]
    fn foreign_and_stale_data_are_told_apart_and_fsync_bounds_what_was_promised() {
        let mut ops = vec![write(0, 10, 5), write(8192, 20, 5)];
        ops.push(Sample {
            op: Op::Fsync,
            issue_ns: 26 * MS,
            latency_ns: 2 * MS,
            ..Sample::default()
        });
        ops.push(write(2 * 8192, 30, 5));
        let r = region(vec![
            Found::All(Part::Other),
            Found::All(own(19)),
            Found::All(Part::Stale),
        ]);
        let l = judge_region(&r, &ops, 50 * MS, 1.0, 1);
        assert_eq!(
            (l.blocks.foreign, l.blocks.stale, l.blocks.intact),
            (2, 2, 2)
        );
        assert!((l.seconds_lost_written - 0.040).abs() < 1e-9);
        // The fsync at 26 ms (done at 28) covered the write at 10 ms, which is gone.
        assert!(
            (l.seconds_lost_fsynced.unwrap() - 0.018).abs() < 1e-9,
            "{l:?}"
        );
    }

    #[test]
    fn a_short_file_loses_the_blocks_past_its_end() {
        let ops = [write(0, 10, 5), write(8192, 20, 5)];
        let mut r = region(vec![Found::All(own(9))]);
        r.file_len = Some(8192);
        let l = judge_region(&r, &ops, 50 * MS, 1.0, 1);
        assert_eq!((l.blocks.intact, l.blocks.lost_zeros), (2, 2));
        assert_eq!(l.file_short_bytes, 8192);
    }

    #[test]
    fn a_file_gone_loses_everything_acknowledged() {
        let ops = [write(0, 10, 5), write(8192, 20, 5), write(0, 30, 100)];
        let mut r = region(vec![]);
        r.missing = true;
        let l = judge_region(&r, &ops, 50 * MS, 1.0, 1);
        assert!(l.file_missing);
        assert_eq!((l.blocks.lost_zeros, l.bytes_lost), (4, 4 * 4096));
        assert!((l.seconds_lost_written - 0.040).abs() < 1e-9);
    }

    #[test]
    fn headers_on_a_time_scaled_device_are_compared_in_model_time() {
        // Scale 10: samples in model ns, headers in real ns (a tenth).
        let ops = [write(0, 100, 50), write(0, 300, 50)];
        let r = region(vec![Found::All(own(29))]);
        let l = judge_region(&r, &ops, 1000 * MS, 10.0, 1);
        assert_eq!(l.blocks.intact, 2);
        let r = region(vec![Found::All(own(9))]);
        assert_eq!(
            judge_region(&r, &ops, 1000 * MS, 10.0, 1).blocks.lost_older,
            2
        );
    }
}
