//! What a job trial writes besides result.json for fio's ecosystem: fio's log files
//! ([`logs`]: `write_lat_log`, `write_bw_log`, `write_iops_log`, with `log_avg_msec`), fio's
//! iolog of a job's I/O ([`iolog`]: `write_iolog`), and fio's json+ output ([`jsonplus`], with
//! fio's latency histogram [`hist`]) when asked (`fio_json`). All are made from the samples
//! after the run, one stream at a time.

pub mod hist;
pub mod iolog;
pub mod jsonplus;
pub mod logs;

use super::plan;
use super::spec::JobSpec;
use crate::engine::SampleSet;
use serde_json::{json, Map};
use std::path::{Path, PathBuf};

/// The name of the json+ file in a trial's directory.
pub const FIO_JSON: &str = "fio.json";

/// The paths of stream `name`'s files, as its generator reported them.
fn files_of(samples: &SampleSet, name: &str) -> Vec<String> {
    samples
        .phases
        .iter()
        .rev()
        .find_map(|p| {
            p.measured
                .as_ref()
                .and_then(|m| m.get("streams"))
                .and_then(|s| s.get(name))
                .and_then(|s| s.get("files"))
                .and_then(|f| f.as_array())
        })
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Writes the logs `jobs` ask for, their iologs, and `fio.json` when `fio_json`, into `dir`;
/// the files written.
pub fn write(
    jobs: &[JobSpec],
    samples: &SampleSet,
    dir: &Path,
    fio_json: bool,
) -> std::io::Result<Vec<PathBuf>> {
    let segs = plan::segments(jobs);
    let groups = plan::run_groups(jobs);
    let mut written = Vec::new();
    let mut entries: Vec<(String, usize, usize, jsonplus::Entry)> = Vec::new();
    let mut stream = 0;
    for (ji, j) in jobs.iter().enumerate() {
        let seg = segs
            .iter()
            .position(|s| s.contains(&ji))
            .expect("in a segment");
        let name = plan::phase_names(seg, segs.len()).1;
        let phase = samples.phase_index(&name).map(|p| p as u16);
        let role = plan::role_of(jobs, ji);
        for k in 0..j.numjobs {
            let (i, x) = (stream, stream + 1);
            stream += 1;
            let Some(p) = phase else { continue };
            let mut first = None;
            samples.each(i, &mut |s| {
                if s.phase == p && first.is_none_or(|f| s.issue_ns < f) {
                    first = Some(s.issue_ns);
                }
            })?;
            let start = first.unwrap_or(0);
            let mut each = |f: &mut dyn FnMut(&crate::engine::Sample)| {
                samples.each(i, &mut |s| {
                    if s.phase == p {
                        f(s)
                    }
                })
            };
            written.extend(logs::write(dir, &j.name, x, &j.logs, start, &mut each)?);
            if let Some(name) = &j.iolog_out {
                let stream = format!("{role}.{k}");
                let files = files_of(samples, &stream);
                let base = Path::new(name)
                    .file_name()
                    .map_or(name.clone(), |f| f.to_string_lossy().to_string());
                let file = match j.numjobs {
                    1 => base,
                    _ => format!("{base}.{k}"),
                };
                let path = dir.join(file);
                // Every phase the clone ran in (its ramp too, as fio logs it).
                let mut all = |f: &mut dyn FnMut(&crate::engine::Sample)| samples.each(i, f);
                iolog::write(&path, &files, &mut all)?;
                written.push(path);
            }
            if fio_json {
                let mut e = jsonplus::Entry::default();
                each(&mut |s| e.add(s))?;
                entries.push((format!("{role}.{k}"), ji, groups[ji], e));
            }
        }
    }
    if fio_json {
        let mut out = Vec::new();
        let mut done_groups: Vec<usize> = Vec::new();
        for (name, ji, g, e) in &entries {
            let j = &jobs[*ji];
            let options: Map<String, serde_json::Value> = j
                .options
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            if j.group_reporting {
                if done_groups.contains(g) {
                    continue;
                }
                done_groups.push(*g);
                let mut sum = jsonplus::Entry::default();
                for (_, _, _, o) in entries.iter().filter(|x| x.2 == *g) {
                    sum.merge(o);
                }
                out.push(jsonplus::job(
                    &plan::role_of(jobs, *ji),
                    *g,
                    &options,
                    &sum,
                    &j.percentiles,
                ));
            } else {
                out.push(jsonplus::job(name, *g, &options, e, &j.percentiles));
            }
        }
        let now = std::time::UNIX_EPOCH.elapsed().map_or(0, |d| d.as_secs());
        let path = dir.join(FIO_JSON);
        let text =
            serde_json::to_string_pretty(&jsonplus::document(out, now)).expect("json serializes");
        std::fs::write(&path, text)?;
        written.push(path);
    }
    Ok(written)
}
