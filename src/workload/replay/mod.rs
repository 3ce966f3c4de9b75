//! The `replay` workload: replays a block trace (fio's iolog v2 or v3, or blkparse's text of a
//! blktrace, see [`crate::trace`]) onto the stack: into a file on its filesystem or onto its raw
//! region, offsets folded into the target's size (aligned to 4 KiB). `pace=original` issues
//! each request at its traced time (how far the replay fell behind is measured); `pace=afap`
//! issues the next as soon as the last completes. Every request is one sample.

pub mod analysis;
mod source;

use super::{AnalysisError, Outcome, Seen, Workload};
use crate::engine::{Op, Pacing, Pattern, Plan, SampleSet, Source, Stop, StreamPlan};
use crate::params::{Kind, ParamError, ParamSpec, Params};
use crate::present::KindReport;
use std::path::Path;
use std::sync::Arc;

pub static PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        "trace",
        Kind::Text,
        "",
        "the trace to replay: a fio iolog (v2, v3) or blkparse's output of a blktrace",
    ),
    ParamSpec::new(
        "pace",
        Kind::Text,
        "original",
        "original: each request at its traced time; afap: as fast as possible",
    ),
    ParamSpec::new(
        "file_size",
        Kind::Size,
        "0",
        "bytes of the replay's file (or raw region); 0: the trace's extent, rounded up to 4 KiB",
    ),
    ParamSpec::new(
        "direct",
        Kind::Bool,
        "true",
        "O_DIRECT (requests must then be multiples of 512 bytes)",
    ),
];

/// The phase's name.
pub const PHASE: &str = "replay";

/// The `replay` workload.
pub struct Replay;

/// Whether `pace` asks for the original timing.
fn original(p: &Params) -> Result<bool, ParamError> {
    match p.text("pace").as_str() {
        "original" => Ok(true),
        "afap" => Ok(false),
        other => Err(ParamError::invalid(
            "pace",
            format!("'{other}': expected original or afap"),
        )),
    }
}

impl Workload for Replay {
    fn name(&self) -> &'static str {
        "replay"
    }

    fn about(&self) -> &'static str {
        "replays a captured block trace (fio iolog v2/v3, blkparse text) onto the stack, at its original pace or as fast as possible"
    }

    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn plan(&self, p: &Params) -> Result<Plan, ParamError> {
        let path = p.text("trace");
        let path = path.as_str();
        if path.is_empty() {
            return Err(ParamError::invalid(
                "trace",
                "name the trace to replay: --set trace=FILE",
            ));
        }
        let pace = original(p)?;
        let trace = crate::trace::load(Path::new(path))
            .map_err(|e| ParamError::invalid("trace", e.to_string()))?;
        if pace && !trace.timed() {
            return Err(ParamError::invalid(
                "pace",
                format!("{path} ({}) has no times: use pace=afap", trace.format),
            ));
        }
        let (n, _) = trace.data_totals();
        if n == 0 {
            return Err(ParamError::invalid(
                "trace",
                format!("{path} has no read or write"),
            ));
        }
        let len = match p.u64("file_size") {
            0 => trace.extent().div_ceil(4096).max(1) * 4096,
            n => n,
        };
        let trace = Arc::new(trace);
        let describe = format!(
            "replay {path} ({} requests, pace {})",
            trace.ops.len(),
            p.text("pace")
        );
        let stream = StreamPlan {
            name: "replay".into(),
            role: "replay".into(),
            op: Op::Read,
            region_len: len,
            io_size: 4096,
            pattern: Pattern::Random,
            pacing: Pacing::Max,
            samples: 0,
            io: Default::default(),
            source: Some(Source::new(describe, move |ctx| {
                source::ReplaySource::make(ctx, Arc::clone(&trace), len, pace)
            })),
        };
        Ok(Plan::new(
            vec![stream],
            vec![super::stream_phase(PHASE, vec![0], Stop::OpsEnd)],
            p.bool("direct"),
            1,
        ))
    }

    fn analyze(
        &self,
        p: &Params,
        samples: &SampleSet,
        _seen: &Seen,
    ) -> Result<Box<dyn Outcome>, AnalysisError> {
        Ok(Box::new(analysis::analyze(p, samples)?))
    }

    fn report(&self) -> &'static dyn KindReport {
        &analysis::ReplayReport
    }
}
