//! The body of one stream thread whose operations come from its own [`OpSource`]: ask it for
//! the next operation (untimed), time the call that does it, record the sample, until the
//! phase's stop condition or the source's end. The hot path allocates nothing of its own; what
//! a source does inside `prepare` is its own business and is not timed.

use super::source::OpSource;
use crate::engine::protocol::Protocol;
use crate::engine::samples::record::StreamSink;
use crate::engine::samples::sample::Sample;
use crate::engine::{Pacing, Stop, StreamPlan};
use std::sync::Barrier;
use std::time::Duration;

/// Everything a source stream's thread needs in one phase, moved into it.
pub struct SourceJob {
    pub index: usize,
    pub plan: StreamPlan,
    pub source: Box<dyn OpSource>,
    pub sink: StreamSink,
    pub stop: Stop,
}

/// What a source stream's thread hands back after a phase.
pub struct SourceEnded {
    pub source: Box<dyn OpSource>,
    pub sink: StreamSink,
    /// Samples it took in this phase.
    pub samples: usize,
}

/// Sleeps until `due` ns of the protocol's clock; how late the call returned, ns.
fn wait_until(protocol: &Protocol, due: u64) -> u64 {
    let now = protocol.now_ns();
    if now < due {
        std::thread::sleep(Duration::from_nanos(due - now));
    }
    protocol.now_ns().saturating_sub(due)
}

/// Runs one source stream until its phase's stop condition, its source's end or a stop
/// request. Every operation is sampled (a source stream has no N-samples protocol).
pub fn run(mut job: SourceJob, protocol: &Protocol, barrier: &Barrier) -> SourceEnded {
    let interval_ns = match job.plan.pacing {
        Pacing::Rate(r) if r > 0.0 => Some((1e9 / r) as u64),
        _ => None,
    };
    let (mut ops, mut bytes, mut taken) = (0u64, 0u64, 0usize);
    let mut active = false;
    barrier.wait();
    let start = protocol.now_ns();
    let mut intended = start;
    loop {
        let spent = match job.stop {
            Stop::Ops(n) => ops >= n,
            Stop::Bytes(b) => bytes >= b,
            _ => false,
        };
        if protocol.stopped() || spent {
            break;
        }
        let Some(op) = job.source.prepare() else {
            break;
        };
        let lag = match (job.source.due_ns(), interval_ns) {
            (Some(due), _) => wait_until(protocol, start + due),
            (None, Some(_)) => wait_until(protocol, intended),
            (None, None) => 0,
        };
        let offset = job.source.offset();
        let issue = protocol.now_ns();
        if protocol.past_deadline(issue) {
            break;
        }
        let result = job.source.perform();
        let done = protocol.now_ns();
        if let Some(iv) = interval_ns {
            intended += iv;
        }
        if !active {
            active = true;
            protocol.mark_active(done);
        }
        let (moved, errno) = match result {
            Ok(n) => (n, 0),
            Err(e) => (0, e),
        };
        ops += 1;
        bytes += moved;
        job.sink.push(Sample {
            op,
            offset,
            bytes: moved,
            issue_ns: issue,
            latency_ns: done - issue,
            lag_ns: lag,
            errno,
            phase: 0,
            file: 0,
            asked: 0,
        });
        taken += 1;
        protocol.collected[job.index].store(taken, std::sync::atomic::Ordering::Relaxed);
    }
    protocol.mark_done();
    SourceEnded {
        source: job.source,
        sink: job.sink,
        samples: taken,
    }
}
