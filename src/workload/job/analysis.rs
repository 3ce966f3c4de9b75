//! job's analysis: one pass over each stream's samples of the `run` phase (read from its spill
//! file or samples.csv one sample at a time, so a trial of tens of millions of I/Os is analysed
//! in bounded memory), latencies kept in HDR histograms (3 significant digits), then summed per
//! job group and in total as fio does: IOPS and MB/s over the time from the phase's start to
//! the last completion.

use super::figures::{GroupFigures, LatUs, Percentile, StreamFigures, Verdict};
use super::spec::JobSpec;
use super::PHASE;
use crate::engine::{Op, Sample, SampleSet};
use crate::present::{num, num_opt, Rows};
use crate::workload::{streams_json, verdict_json, AnalysisError, Outcome};
use hdrhistogram::Histogram;
use serde_json::Value as Json;

/// Latencies recorded up to an hour, ns.
const MAX_NS: u64 = 3_600_000_000_000;

/// What one stream (or a sum of streams) did.
struct Acc {
    hist: Histogram<u64>,
    sum_ns: u128,
    ios: u64,
    errors: u64,
    bytes: u64,
    reads: u64,
    writes: u64,
    fsyncs: u64,
    /// The last completion, ns after the phase's zero.
    end_ns: u64,
}

impl Acc {
    fn new() -> Acc {
        Acc {
            hist: Histogram::new_with_bounds(1, MAX_NS, 3).expect("valid histogram bounds"),
            sum_ns: 0,
            ios: 0,
            errors: 0,
            bytes: 0,
            reads: 0,
            writes: 0,
            fsyncs: 0,
            end_ns: 0,
        }
    }

    #[inline]
    fn add(&mut self, s: &Sample, zero: u64) {
        self.end_ns = self.end_ns.max(s.done_ns().saturating_sub(zero));
        match s.op {
            Op::Read => self.reads += 1,
            Op::Write => self.writes += 1,
            _ => {
                self.fsyncs += 1;
                return;
            }
        }
        self.ios += 1;
        if s.errno != 0 {
            self.errors += 1;
            return;
        }
        self.bytes += s.bytes;
        let lat = s.latency_ns + s.lag_ns;
        self.sum_ns += lat as u128;
        self.hist.saturating_record(lat.max(1));
    }

    fn merge(&mut self, o: &Acc) {
        self.hist
            .add(&o.hist)
            .expect("histograms of the same bounds");
        self.sum_ns += o.sum_ns;
        self.ios += o.ios;
        self.errors += o.errors;
        self.bytes += o.bytes;
        self.reads += o.reads;
        self.writes += o.writes;
        self.fsyncs += o.fsyncs;
        self.end_ns = self.end_ns.max(o.end_ns);
    }

    fn runtime_s(&self) -> f64 {
        self.end_ns as f64 / 1e9
    }

    fn per_s(&self, n: u64) -> f64 {
        let t = self.runtime_s();
        if t > 0.0 {
            n as f64 / t
        } else {
            0.0
        }
    }

    /// The completion latency at each of `list` (%), µs.
    fn percentiles(&self, list: &[f64]) -> Vec<Percentile> {
        if self.hist.is_empty() {
            return Vec::new();
        }
        list.iter()
            .map(|&p| Percentile {
                p,
                us: self.hist.value_at_quantile(p / 100.0) as f64 / 1e3,
            })
            .collect()
    }

    fn lat(&self) -> Option<LatUs> {
        let ok = self.hist.len();
        if ok == 0 {
            return None;
        }
        let q = |x: f64| self.hist.value_at_quantile(x) as f64 / 1e3;
        Some(LatUs {
            mean: self.sum_ns as f64 / ok as f64 / 1e3,
            p50: q(0.5),
            p99: q(0.99),
            p999: q(0.999),
            max: self.hist.max() as f64 / 1e3,
        })
    }
}

/// What analysis of a job trial produced.
#[derive(Debug, Clone)]
pub struct JobOutcome {
    pub streams: Vec<StreamFigures>,
    pub verdict: Verdict,
    pub warnings: Vec<String>,
}

/// job's figures from the samples of the `run` phase; `jobs` in plan order, their streams
/// laid out one job after the other.
pub fn analyze(jobs: &[JobSpec], samples: &SampleSet) -> Result<JobOutcome, AnalysisError> {
    let phase = samples
        .phase_index(PHASE)
        .ok_or_else(|| AnalysisError::MissingPhase(PHASE.into()))?;
    let zero = samples.phases[phase].zero_ns();
    let p = phase as u16;
    let mut total = Acc::new();
    let mut streams = Vec::new();
    let mut group_figures = Vec::new();
    let mut at = 0;
    for g in jobs {
        let mut sum = Acc::new();
        for _ in 0..g.numjobs {
            let info = samples
                .streams
                .get(at)
                .ok_or_else(|| AnalysisError::MissingRole(g.name.clone()))?;
            let mut acc = Acc::new();
            samples.each(at, &mut |s| {
                if s.phase == p {
                    acc.add(s, zero);
                }
            })?;
            streams.push(StreamFigures {
                name: info.name.clone(),
                role: info.role.clone(),
                op: info.op,
                ios: acc.ios,
                errors: acc.errors,
                bytes: acc.bytes,
                read_ios: acc.reads,
                write_ios: acc.writes,
                fsyncs: acc.fsyncs,
                runtime_s: acc.runtime_s(),
                iops: acc.per_s(acc.ios),
                mb_s: acc.per_s(acc.bytes) / 1e6,
                lat_us: acc.lat(),
            });
            sum.merge(&acc);
            at += 1;
        }
        group_figures.push(GroupFigures {
            name: g.name.clone(),
            rw: g.rw.word().to_string(),
            ioengine: g.ioengine.name().to_string(),
            iodepth: g.iodepth,
            numjobs: g.numjobs,
            bs: g.bs.read.max().max(g.bs.write.max()),
            ios: sum.ios,
            errors: sum.errors,
            iops: sum.per_s(sum.ios),
            mb_s: sum.per_s(sum.bytes) / 1e6,
            read_iops: sum.per_s(sum.reads),
            write_iops: sum.per_s(sum.writes),
            lat_us: sum.lat(),
            percentiles: sum.percentiles(&g.percentiles),
        });
        total.merge(&sum);
    }
    let lat = total.lat();
    let any = total.ios > 0;
    let mut warnings = Vec::new();
    if total.errors > 0 {
        warnings.push(format!("{} of {} I/Os failed", total.errors, total.ios));
    }
    if !any {
        warnings.push("no I/O completed in the run phase".into());
    }
    let verdict = Verdict {
        iops: any.then(|| total.per_s(total.ios)),
        mb_s: any.then(|| total.per_s(total.bytes) / 1e6),
        read_iops: any.then(|| total.per_s(total.reads)),
        write_iops: any.then(|| total.per_s(total.writes)),
        lat_mean_us: lat.map(|l| l.mean),
        lat_p50_us: lat.map(|l| l.p50),
        lat_p99_us: lat.map(|l| l.p99),
        lat_p999_us: lat.map(|l| l.p999),
        lat_max_us: lat.map(|l| l.max),
        errors: total.errors,
        runtime_s: total.runtime_s(),
        groups: group_figures,
    };
    Ok(JobOutcome {
        streams,
        verdict,
        warnings,
    })
}

impl Outcome for JobOutcome {
    fn streams_json(&self) -> Vec<Json> {
        streams_json(&self.streams)
    }

    fn verdict_json(&self) -> Json {
        verdict_json(&self.verdict)
    }

    fn stream_rows(&self) -> Rows {
        Rows {
            headings: super::figures::GROUP_HEADINGS.map(String::from).to_vec(),
            rows: self.verdict.groups.iter().map(|g| g.row()).collect(),
        }
    }

    fn verdict_line(&self) -> String {
        let v = &self.verdict;
        format!(
            "all jobs: IOPS={}, BW={} MB/s, clat mean {} us, p50 {} us, p99 {} us, p99.9 {} us over {} s",
            num_opt(v.iops),
            num_opt(v.mb_s),
            num_opt(v.lat_mean_us),
            num_opt(v.lat_p50_us),
            num_opt(v.lat_p99_us),
            num_opt(v.lat_p999_us),
            num(v.runtime_s)
        )
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}
