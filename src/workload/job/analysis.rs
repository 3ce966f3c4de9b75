//! job's analysis: one pass over each stream's samples of the `run` phase (read from its spill
//! file or samples.csv one sample at a time, so a trial of tens of millions of I/Os is analysed
//! in bounded memory), latencies kept in HDR histograms (3 significant digits), then summed per
//! job and in total as fio does: IOPS and MB/s over the time from the first issue to the last
//! completion (a job's runtime, its start delay left out).

use super::figures::{
    GroupFigures, LatUs, Mismatch, Percentile, RunGroup, StreamFigures, Verdict, VerifyFigures,
};
use super::plan;
use super::spec::JobSpec;
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
    read_bytes: u64,
    write_bytes: u64,
    fsyncs: u64,
    /// The first issue and the last completion, ns of the samples' clock.
    first_ns: u64,
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
            read_bytes: 0,
            write_bytes: 0,
            fsyncs: 0,
            first_ns: u64::MAX,
            end_ns: 0,
        }
    }

    #[inline]
    fn add(&mut self, s: &Sample, full_ok: bool) {
        self.first_ns = self.first_ns.min(s.issue_ns);
        self.end_ns = self.end_ns.max(s.done_ns());
        match s.op {
            Op::Read | Op::Stat | Op::Readdir => self.reads += 1,
            Op::Fsync | Op::Fdatasync => {
                self.fsyncs += 1;
                return;
            }
            // Writes, trims, and the file engines' creating and removing.
            _ => self.writes += 1,
        }
        self.ios += 1;
        if s.errno != 0 {
            // The write that finds the device full ends a `fill_device` job: no error.
            if !(full_ok && s.errno == libc::ENOSPC) {
                self.errors += 1;
            }
            return;
        }
        self.bytes += s.bytes;
        match s.op {
            Op::Read => self.read_bytes += s.bytes,
            _ => self.write_bytes += s.bytes,
        }
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
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
        self.fsyncs += o.fsyncs;
        self.first_ns = self.first_ns.min(o.first_ns);
        self.end_ns = self.end_ns.max(o.end_ns);
    }

    /// From the first issue to the last completion, s (fio's runtime of a job or group).
    fn runtime_s(&self) -> f64 {
        self.end_ns.saturating_sub(self.first_ns) as f64 / 1e9
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
    /// The jobs, for the files the trial writes (fio's logs and json+).
    pub jobs: Vec<JobSpec>,
    /// Write fio's json+ output beside result.json.
    pub fio_json: bool,
}

/// job's figures from the samples of each job's run phase; `jobs` in plan order, their
/// streams laid out one job after the other.
pub fn analyze(jobs: &[JobSpec], samples: &SampleSet) -> Result<JobOutcome, AnalysisError> {
    let segs = plan::segments(jobs);
    let mut run_phase = vec![0u16; jobs.len()];
    for (k, seg) in segs.iter().enumerate() {
        let name = plan::phase_names(k, segs.len()).1;
        let i = samples
            .phase_index(&name)
            .ok_or(AnalysisError::MissingPhase(name))?;
        for &j in seg {
            run_phase[j] = i as u16;
        }
    }
    let group_of = plan::run_groups(jobs);
    let mut groups: Vec<(Acc, Vec<String>)> = Vec::new();
    let mut total = Acc::new();
    let mut streams = Vec::new();
    let mut group_figures = Vec::new();
    let mut at = 0;
    for (gi, g) in jobs.iter().enumerate() {
        let mut sum = Acc::new();
        let p = run_phase[gi];
        for _ in 0..g.numjobs {
            let info = samples
                .streams
                .get(at)
                .ok_or_else(|| AnalysisError::MissingRole(g.name.clone()))?;
            let mut acc = Acc::new();
            samples.each(at, &mut |s| {
                if s.phase == p {
                    acc.add(s, g.fill_device);
                }
            })?;
            let verify = verify_of(samples, &info.name);
            let stopped = report_of(samples, &info.name, "stopped")
                .and_then(|v| v.as_str().map(String::from));
            let prio_ios = report_of(samples, &info.name, "prio_ios").and_then(|v| {
                v.as_object().map(|m| {
                    m.iter()
                        .map(|(k, n)| (k.clone(), n.as_u64().unwrap_or(0)))
                        .collect()
                })
            });
            let steadystate = report_of(samples, &info.name, "steadystate")
                .and_then(|v| serde_json::from_value(v.clone()).ok());
            let latency_target = report_of(samples, &info.name, "latency_target")
                .and_then(|v| serde_json::from_value(v.clone()).ok());
            let cpus = report_of(samples, &info.name, "cpus")
                .and_then(|v| serde_json::from_value(v.clone()).ok());
            streams.push(StreamFigures {
                cpus,
                verify,
                stopped,
                prio_ios,
                steadystate,
                latency_target,
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
        let name = plan::role_of(jobs, gi);
        if groups.len() <= group_of[gi] {
            groups.push((Acc::new(), Vec::new()));
        }
        let rg = &mut groups[group_of[gi]];
        rg.0.merge(&sum);
        rg.1.push(name.clone());
        group_figures.push(GroupFigures {
            name,
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
    let verifying: Vec<(&str, &VerifyFigures)> = streams
        .iter()
        .filter_map(|s| s.verify.as_ref().map(|v| (s.name.as_str(), v)))
        .collect();
    for (name, v) in verifying.iter().filter(|(_, v)| v.mismatches > 0) {
        let first = v.first.first().expect("a mismatch kept");
        warnings.push(format!(
            "{name}: verify found {} of {} intervals not as written ({}); the first at offset {} of {}: {}",
            v.mismatches, v.checked, v.checksum, first.offset, first.file, first.what
        ));
    }
    for s in &streams {
        if let Some(why) = &s.stopped {
            warnings.push(format!("{}: {why}", s.name));
        }
    }
    let verify_mismatches =
        (!verifying.is_empty()).then(|| verifying.iter().map(|(_, v)| v.mismatches).sum());
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
        verify_mismatches,
        runtime_s: total.runtime_s(),
        groups: group_figures,
        run_groups: groups
            .iter()
            .enumerate()
            .map(|(id, (a, names))| RunGroup {
                id: id as u64,
                jobs: names.clone(),
                ios: a.ios,
                errors: a.errors,
                iops: a.per_s(a.ios),
                read_iops: a.per_s(a.reads),
                write_iops: a.per_s(a.writes),
                mb_s: a.per_s(a.bytes) / 1e6,
                read_mb_s: a.per_s(a.read_bytes) / 1e6,
                write_mb_s: a.per_s(a.write_bytes) / 1e6,
                runtime_s: a.runtime_s(),
                lat_us: a.lat(),
            })
            .collect(),
    };
    Ok(JobOutcome {
        streams,
        verdict,
        warnings,
        jobs: jobs.to_vec(),
        fio_json: false,
    })
}

/// The last of what stream `name`'s generator reported under `key` over the phases (the
/// phases' records, `measured.streams.NAME.KEY`).
fn report_of<'a>(samples: &'a SampleSet, name: &str, key: &str) -> Option<&'a serde_json::Value> {
    samples.phases.iter().rev().find_map(|p| {
        p.measured
            .as_ref()
            .and_then(|m| m.get("streams"))
            .and_then(|s| s.get(name))
            .and_then(|s| s.get(key))
    })
}

/// What stream `name`'s generator reported of its verify over every phase (the phases'
/// records, `measured.streams.NAME.verify`).
fn verify_of(samples: &SampleSet, name: &str) -> Option<VerifyFigures> {
    let mut out: Option<VerifyFigures> = None;
    for p in &samples.phases {
        let Some(v) = p
            .measured
            .as_ref()
            .and_then(|m| m.get("streams"))
            .and_then(|s| s.get(name))
            .and_then(|s| s.get("verify"))
        else {
            continue;
        };
        let f = out.get_or_insert_with(VerifyFigures::default);
        // The generator's counts run on from one phase to the next: the last phase's are the
        // stream's.
        f.checksum = v["checksum"].as_str().unwrap_or_default().to_string();
        f.checked = v["checked"].as_u64().unwrap_or(0);
        f.mismatches = v["mismatches"].as_u64().unwrap_or(0);
        f.not_written = v["not_written"].as_u64().unwrap_or(0);
        f.state = v["state"].as_str().map(String::from);
        f.first = v["first"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| Mismatch {
                file: m["file"].as_str().unwrap_or_default().to_string(),
                offset: m["offset"].as_u64().unwrap_or(0),
                what: m["what"].as_str().unwrap_or_default().to_string(),
            })
            .collect();
    }
    out
}

/// A row per job, then, when fio would report several groups, a row per group.
pub fn job_and_group_rows(v: &Verdict) -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = v.groups.iter().map(|g| g.row()).collect();
    if v.run_groups.len() > 1 {
        rows.extend(v.run_groups.iter().map(RunGroup::row));
    }
    rows
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
            rows: job_and_group_rows(&self.verdict),
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

    fn write_files(
        &self,
        samples: &SampleSet,
        dir: &std::path::Path,
    ) -> std::io::Result<Vec<std::path::PathBuf>> {
        super::output::write(&self.jobs, samples, dir, self.fio_json)
    }
}
