//! fsck's analysis: the fill's figures from its samples (files created, files/s over the fill,
//! the mean time of each fs_mark step), the check's from the fsck phase's checker run
//! (`phases[].measured`: time, CPU, peak RSS, exit) and from the monitors (what it read from
//! the stack's device during the phase), and the caveats (a checker that did not exit 0 is a
//! finding shown in the warnings, never hidden).

use super::figures::{FillFigures, Verdict, CPU_BOUND_SHARE, ROW_HEADINGS};
use super::{sync_policy, CHECK, FILL, SYNC};
use crate::engine::{Op, PhaseRecord, SampleSet};
use crate::params::Params;
use crate::present::{num, num_opt, Rows};
use crate::workload::fsck::fill::SyncPolicy;
use crate::workload::{AnalysisError, Outcome, Seen};
use serde_json::Value as Json;

/// What analysis of one fsck trial produced.
#[derive(Debug, Clone, PartialEq)]
pub struct FsckOutcome {
    pub streams: Vec<FillFigures>,
    pub verdict: Verdict,
    pub warnings: Vec<String>,
}

/// Sums of one fill step's times.
#[derive(Default)]
struct StepTimes {
    n: u64,
    ns: u64,
}

impl StepTimes {
    fn mean_us(&self) -> Option<f64> {
        (self.n > 0).then(|| self.ns as f64 / self.n as f64 / 1e3)
    }
}

/// Per thread figures, per step times, and the fill's span (first issue, last completion).
type FillSeen = (Vec<FillFigures>, [StepTimes; 4], Option<(u64, u64)>);

/// The fill phase's samples: per thread figures, and per step (create, write, fsync, close)
/// the time spent; also the fill's first issue and last completion (ns).
fn fill_figures(set: &SampleSet, fill: usize) -> Result<FillSeen, AnalysisError> {
    let mut steps: [StepTimes; 4] = Default::default();
    let mut streams = Vec::new();
    let mut span: Option<(u64, u64)> = None;
    for (i, info) in set.streams.iter().enumerate() {
        let (mut files, mut errors) = (0u64, 0u64);
        let mut own: Option<(u64, u64)> = None;
        set.each(i, &mut |s| {
            if s.phase as usize != fill {
                return;
            }
            own = Some(own.map_or((s.issue_ns, s.done_ns()), |(a, b)| {
                (a.min(s.issue_ns), b.max(s.done_ns()))
            }));
            if s.errno != 0 {
                errors += 1;
                return;
            }
            let k = match s.op {
                Op::Create => {
                    files += 1;
                    0
                }
                Op::Write => 1,
                Op::Fsync => 2,
                Op::Close => 3,
                _ => return,
            };
            steps[k].n += 1;
            steps[k].ns += s.latency_ns;
        })?;
        let fill_s = own.map_or(0.0, |(a, b)| (b - a) as f64 / 1e9);
        span = match (span, own) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (x, y) => x.or(y),
        };
        streams.push(FillFigures {
            name: info.name.clone(),
            files,
            errors,
            fill_s,
            files_per_s: (fill_s > 0.0).then(|| files as f64 / fill_s),
        });
    }
    Ok((streams, steps, span))
}

/// The phase named `name`, or the error saying the samples lack it.
fn phase<'a>(set: &'a SampleSet, name: &str) -> Result<(usize, &'a PhaseRecord), AnalysisError> {
    let i = set
        .phase_index(name)
        .ok_or_else(|| AnalysisError::MissingPhase(name.to_string()))?;
    Ok((i, &set.phases[i]))
}

/// Analyses one fsck trial.
pub fn analyze(p: &Params, set: &SampleSet, seen: &Seen) -> Result<FsckOutcome, AnalysisError> {
    let (fill, _) = phase(set, FILL)?;
    let (streams, steps, span) = fill_figures(set, fill)?;
    let files: u64 = streams.iter().map(|s| s.files).sum();
    let fill_errors: u64 = streams.iter().map(|s| s.errors).sum();
    let mut fill_s = span.map_or(0.0, |(a, b)| (b - a) as f64 / 1e9);
    let sync = sync_policy(p).map_err(|e| AnalysisError::Other(e.to_string()))?;
    if sync == SyncPolicy::End {
        if let Ok((_, s)) = phase(set, SYNC) {
            fill_s += s.end_s.map_or(0.0, |e| e - s.start_s);
        }
    }
    let mut warnings = Vec::new();
    if fill_errors > 0 {
        warnings.push(format!(
            "{fill_errors} fill operations failed (samples.csv's errno column says why); {files} of {} files were created",
            p.u64("files")
        ));
    }
    let mut verdict = Verdict {
        files,
        fill_s,
        fill_files_per_s: (fill_s > 0.0).then(|| files as f64 / fill_s),
        create_us: steps[0].mean_us(),
        write_us: steps[1].mean_us(),
        fsync_us: steps[2].mean_us(),
        close_us: steps[3].mean_us(),
        fill_errors,
        fsck_command: None,
        fsck_s: None,
        fsck_files_per_s: None,
        fsck_peak_rss_mib: None,
        fsck_rss_bytes_per_file: None,
        fsck_cpu_s: None,
        fsck_cpu_share: None,
        fsck_bound: None,
        fsck_read_bytes: None,
        fsck_read_requests: None,
        fsck_read_request_kib: None,
        fsck_exit: None,
    };
    match phase(set, CHECK)?.1.measured.as_ref() {
        Some(m) => checker_figures(&mut verdict, m, &mut warnings),
        None => warnings.push("the fsck phase recorded no checker run".into()),
    }
    checker_io(&mut verdict, seen);
    Ok(FsckOutcome {
        streams,
        verdict,
        warnings,
    })
}

/// The check's time in the model's terms: with the device's busy time known, that part of the
/// host's wall time is stretched by the time scale and the rest (the checker's own CPU and
/// whatever else the host did between requests) is kept as it was; else all of it is
/// multiplied by the scale. Host seconds in, model seconds out.
pub fn model_time_s(wall_s: f64, scale: f64, device_busy_s: Option<f64>) -> f64 {
    match device_busy_s {
        Some(busy) => (wall_s - busy / scale).max(0.0) + busy,
        None => wall_s * scale,
    }
}

/// The check's figures from its phase's `measured` (host times, in the model's terms).
fn checker_figures(v: &mut Verdict, m: &Json, warnings: &mut Vec<String>) {
    let f = |k: &str| m[k].as_f64();
    let scale = f("time_scale").unwrap_or(1.0);
    let busy = f("device_busy_s");
    let wall = f("wall_s").map(|w| model_time_s(w, scale, busy));
    // The checker's CPU ran on this host at this host's speed, whatever the scale.
    let cpu = f("user_s").zip(f("sys_s")).map(|(u, s)| u + s);
    let rss = m["peak_rss_bytes"].as_u64();
    v.fsck_command = m["command"].as_str().map(str::to_string);
    v.fsck_s = wall;
    v.fsck_files_per_s = wall.filter(|w| *w > 0.0).map(|w| v.files as f64 / w);
    v.fsck_peak_rss_mib = rss.map(|b| b as f64 / (1u64 << 20) as f64);
    v.fsck_rss_bytes_per_file = rss
        .filter(|_| v.files > 0)
        .map(|b| b as f64 / v.files as f64);
    v.fsck_cpu_s = cpu;
    v.fsck_cpu_share = cpu.zip(wall).filter(|(_, w)| *w > 0.0).map(|(c, w)| c / w);
    v.fsck_bound = v
        .fsck_cpu_share
        .map(|s| if s >= CPU_BOUND_SHARE { "cpu" } else { "io" }.to_string());
    v.fsck_exit = m["exit"].as_i64().map(|e| e as i32);
    if let (Some(n), Some(b)) = (m["read_requests"].as_u64(), m["read_bytes"].as_u64()) {
        v.fsck_read_requests = Some(n);
        v.fsck_read_bytes = Some(b);
        v.fsck_read_request_kib = (n > 0).then(|| b as f64 / 1024.0 / n as f64);
    }
    let output = m["output"].as_str().unwrap_or("the checker's output");
    match (v.fsck_exit, m["signal"].as_i64()) {
        (Some(0), _) => {}
        (Some(e), _) => warnings.push(format!(
            "the checker exited {e}: it reports a problem (or could not check); see {output}"
        )),
        (None, s) => warnings.push(format!(
            "the checker was ended by signal {}; see {output}",
            s.unwrap_or(0)
        )),
    }
    match (scale != 1.0, busy) {
        (false, _) => {}
        (true, Some(_)) => warnings.push(format!(
            "the checker's time is the device's busy time multiplied by the time scale {} plus the host's own time between its requests (its CPU, not scaled)",
            num(scale)
        )),
        (true, None) => warnings.push(format!(
            "the checker's time is the host's multiplied by the time scale {} (its own CPU time too: the device's busy time is not known here)",
            num(scale)
        )),
    }
}

/// What the checker read from the stack's device, when its run did not count it itself:
/// diskstats during the fsck phase.
fn checker_io(v: &mut Verdict, seen: &Seen) {
    if v.fsck_read_requests.is_some() {
        return;
    }
    let Some(d) = seen.monitor.and_then(|m| m.data_device()) else {
        return;
    };
    let Some(p) = d.phases.iter().find(|p| p.phase.as_deref() == Some(CHECK)) else {
        return;
    };
    let (kb, n) = (p.totals.read_kB, p.totals.read_requests);
    v.fsck_read_bytes = Some((kb * 1024.0).round() as u64);
    v.fsck_read_requests = Some(n);
    v.fsck_read_request_kib = (n > 0).then(|| kb / n as f64);
}

impl Outcome for FsckOutcome {
    fn streams_json(&self) -> Vec<Json> {
        crate::workload::streams_json(&self.streams)
    }

    fn verdict_json(&self) -> Json {
        crate::workload::verdict_json(&self.verdict)
    }

    fn stream_rows(&self) -> Rows {
        Rows {
            headings: ROW_HEADINGS.map(String::from).to_vec(),
            rows: self.streams.iter().map(FillFigures::row).collect(),
        }
    }

    fn verdict_line(&self) -> String {
        let v = &self.verdict;
        let mut parts = vec![format!(
            "filled {} files at {} files/s",
            v.files,
            num_opt(v.fill_files_per_s)
        )];
        if let Some(s) = v.fsck_s {
            parts.push(format!(
                "checked in {} s ({} files/s, peak RSS {} MiB, {}-bound, exit {})",
                num(s),
                num_opt(v.fsck_files_per_s),
                num_opt(v.fsck_peak_rss_mib),
                v.fsck_bound.as_deref().unwrap_or("?"),
                v.fsck_exit.map_or("by signal".into(), |e| e.to_string())
            ));
        }
        parts.join("; ")
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::model_time_s;

    #[test]
    fn only_the_devices_busy_time_is_stretched_by_the_scale() {
        // 2 s on the host at scale 100, the device busy 150 s of model time (1.5 s of the
        // host's): 0.5 s of the host's own time plus 150 s.
        assert!((model_time_s(2.0, 100.0, Some(150.0)) - 150.5).abs() < 1e-9);
        // Unknown busy time: everything scaled, as before.
        assert_eq!(model_time_s(2.0, 100.0, None), 200.0);
        // At scale 1 both agree.
        assert_eq!(model_time_s(2.0, 1.0, Some(1.5)), 2.0);
    }
}
