//! Replaying a trace: which requests go, in order, where (offsets scaled and aligned as fio's
//! `replay_scale` and `replay_align` say), and when: each at its traced time from the first
//! (an iolog v3's timestamps, blkparse's times, or an iolog v2's `wait`s added up), faster or
//! slower by `replay_time_scale`, or as fast as possible (`replay_no_stall`); kinds
//! `replay_skip` names are left out. The `replay` workload and a fio job's `read_iolog` both
//! replay through a [`Replayer`].

use super::{Trace, TraceKind, TraceOp};
use std::sync::Arc;

/// How a trace is replayed (fio's `replay_` options).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayOptions {
    /// As fast as possible, in order (`replay_no_stall`); else each request at its time.
    pub no_stall: bool,
    /// The pace, % of the traced one (`replay_time_scale`: 200 replays twice as fast).
    pub time_scale: u32,
    /// Offsets are aligned down to this (`replay_align`, a power of 2); 0: as traced.
    pub align: u64,
    /// Offsets are divided by this (`replay_scale`); 1: as traced.
    pub scale: u64,
    /// Kinds left out (`replay_skip`): reads, writes, trims, syncs.
    pub skip: [bool; 4],
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            no_stall: false,
            time_scale: 100,
            align: 0,
            scale: 1,
            skip: [false; 4],
        }
    }
}

impl ReplayOptions {
    /// Whether requests of `kind` are left out.
    pub fn skips(&self, kind: TraceKind) -> bool {
        self.skip[match kind {
            TraceKind::Read => 0,
            TraceKind::Write => 1,
            TraceKind::Trim => 2,
            TraceKind::Sync | TraceKind::Datasync => 3,
        }]
    }
}

/// One request to replay: the traced one with its offset mapped, and when it is due, ns after
/// the replay began (`None`: as soon as the one before it is done).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub op: TraceOp,
    pub due_ns: Option<u64>,
}

/// A trace being replayed, request by request.
#[derive(Debug, Clone)]
pub struct Replayer {
    trace: Arc<Trace>,
    opts: ReplayOptions,
    next: usize,
    /// The first request's traced time.
    t0: u64,
    /// Microseconds of an iolog v2's waits so far.
    waited_us: u64,
}

impl Replayer {
    /// A replay of `trace` as `opts` say, from its first request.
    pub fn new(trace: Arc<Trace>, opts: ReplayOptions) -> Replayer {
        let t0 = trace.ops.iter().filter_map(|o| o.at_ns).min().unwrap_or(0);
        Replayer {
            trace,
            opts,
            next: 0,
            t0,
            waited_us: 0,
        }
    }

    /// Back to the first request (a new pass).
    pub fn restart(&mut self) {
        self.next = 0;
        self.waited_us = 0;
    }

    /// The trace.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// Scales a traced delay (ns) by the replay's pace.
    fn paced(&self, ns: u64) -> u64 {
        (ns as u128 * 100 / u128::from(self.opts.time_scale.max(1))) as u64
    }

    /// The next request to replay, `None` once every one has been.
    pub fn next_step(&mut self) -> Option<Step> {
        loop {
            let o = *self.trace.ops.get(self.next)?;
            self.next += 1;
            self.waited_us = self.waited_us.saturating_add(o.wait_us);
            if self.opts.skips(o.kind) {
                continue;
            }
            let due_ns = match (self.opts.no_stall, o.at_ns) {
                (true, _) => None,
                (false, Some(at)) => Some(self.paced(at.saturating_sub(self.t0))),
                (false, None) if self.waited_us > 0 => {
                    Some(self.paced(self.waited_us.saturating_mul(1000)))
                }
                (false, None) => None,
            };
            let mut op = o;
            op.offset /= self.opts.scale.max(1);
            if self.opts.align > 0 {
                op.offset &= !(self.opts.align - 1);
            }
            return Some(Step { op, due_ns });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn replayer(text: &str, opts: ReplayOptions) -> Replayer {
        let t = super::super::parse(Path::new("t.log"), text).unwrap();
        Replayer::new(Arc::new(t), opts)
    }

    fn all(r: &mut Replayer) -> Vec<Step> {
        std::iter::from_fn(|| r.next_step()).collect()
    }

    const V3: &str = "fio version 3 iolog\n0 f add\n1000 f read 5000 4096\n3000 f trim 0 8192\n5000 f write 12288 512\n";

    #[test]
    fn each_request_at_its_time_scaled() {
        let s = all(&mut replayer(V3, ReplayOptions::default()));
        let due: Vec<Option<u64>> = s.iter().map(|s| s.due_ns).collect();
        assert_eq!(due, [Some(0), Some(2_000_000), Some(4_000_000)]);
        let twice = ReplayOptions {
            time_scale: 200,
            ..ReplayOptions::default()
        };
        let s = all(&mut replayer(V3, twice));
        assert_eq!(s[2].due_ns, Some(2_000_000));
        let fast = ReplayOptions {
            no_stall: true,
            ..ReplayOptions::default()
        };
        assert!(all(&mut replayer(V3, fast))
            .iter()
            .all(|s| s.due_ns.is_none()));
    }

    #[test]
    fn offsets_scaled_then_aligned_and_kinds_skipped() {
        let o = ReplayOptions {
            scale: 2,
            align: 1024,
            skip: [false, false, true, false],
            ..ReplayOptions::default()
        };
        let mut r = replayer(V3, o);
        let s = all(&mut r);
        let offsets: Vec<u64> = s.iter().map(|s| s.op.offset).collect();
        assert_eq!(offsets, [2048, 6144]);
        r.restart();
        assert_eq!(all(&mut r).len(), 2);
    }

    #[test]
    fn an_iolog_v2_waits_add_up() {
        let v2 = "fio version 2 iolog\nf add\nf read 0 4096\nf wait 1000 0\nf read 4096 4096\nf wait 500 0\nf write 0 512\n";
        let s = all(&mut replayer(v2, ReplayOptions::default()));
        let due: Vec<Option<u64>> = s.iter().map(|s| s.due_ns).collect();
        assert_eq!(due, [None, Some(1_000_000), Some(1_500_000)]);
    }
}
