//! tree's analysis: the phases' times and rates from result.json's phases and the samples
//! (read one stream at a time), the cleaning times the idle phases found, the bytes each phase
//! moved by class (metadata, journal, data) as the block trace or the device's own log
//! classified them, and the SMR model's own figures; and how they read on the terminal.

use super::figures::{PhaseIo, SmrFigures, Verdict};
use super::shape::Shape;
use super::{
    CREATE, FILESERVER, IDLE_CREATE, IDLE_FILESERVER, IDLE_MKFS, IDLE_REMOVE, REMOVE, SYNC_CREATE,
};
use crate::engine::{Op, PhaseRecord, SampleSet};
use crate::params::Params;
use crate::present::{num, num_opt, Rows};
use crate::result::emulated::{EmulatedDevice, LATE_SHARE_WARNING};
use crate::result::monitor::LateSeconds;
use crate::workload::{AnalysisError, Outcome, Seen};
use serde::Deserialize;
use serde_json::Value as Json;

/// Everything tree's analysis found.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeOutcome {
    pub verdict: Verdict,
    /// Operations of each phase by op: (phase, op, count, errors).
    pub ops: Vec<(String, Op, u64, u64)>,
    pub warnings: Vec<String>,
}

/// Operations per (phase, op): count and errors, over every stream.
fn count_ops(set: &SampleSet) -> std::io::Result<Vec<(usize, Op, u64, u64)>> {
    let mut out: Vec<(usize, Op, u64, u64)> = Vec::new();
    for i in 0..set.streams.len() {
        set.each(i, &mut |s| {
            let at = out
                .iter()
                .position(|o| o.0 == s.phase as usize && o.1 == s.op);
            let at = at.unwrap_or_else(|| {
                out.push((s.phase as usize, s.op, 0, 0));
                out.len() - 1
            });
            out[at].2 += 1;
            out[at].3 += u64::from(s.errno != 0);
        })?;
    }
    out.sort_by_key(|o| (o.0, o.1 as u8));
    Ok(out)
}

/// The phase named `name`, when the plan had it.
fn phase<'a>(set: &'a SampleSet, name: &str) -> Option<&'a PhaseRecord> {
    set.phases.iter().find(|p| p.name == name)
}

/// Bytes by class per phase from the block trace's rows.
fn io_by_class(seen: &Seen, phases: &[PhaseRecord]) -> Vec<PhaseIo> {
    let Some(rows) = seen.monitor.map(|m| &m.io_classes) else {
        return Vec::new();
    };
    let mut out: Vec<PhaseIo> = Vec::new();
    for p in phases {
        let mut io = PhaseIo {
            phase: p.name.clone(),
            ..Default::default()
        };
        let mut any = false;
        for r in rows.iter().filter(|r| r.phase.as_deref() == Some(&p.name)) {
            any = true;
            let slot = match (r.class.as_str(), r.direction.as_str()) {
                ("metadata", "write") => &mut io.metadata_write_bytes,
                ("journal", "write") => &mut io.journal_write_bytes,
                ("data", "write") => &mut io.data_write_bytes,
                ("metadata", "read") => &mut io.metadata_read_bytes,
                ("journal", "read") => &mut io.journal_read_bytes,
                ("data", "read") => &mut io.data_read_bytes,
                _ => continue,
            };
            *slot += r.bytes;
        }
        if any {
            out.push(io);
        }
    }
    out
}

/// The SMR model's figures from the device servers' statistics.
fn smr_figures(emulated: &[Json]) -> Option<SmrFigures> {
    let d = emulated.iter().find(|d| d["model"] == "smr")?;
    let m = &d["model_stats"];
    let u = |k: &str| m[k].as_u64().unwrap_or(0);
    let f = |k: &str| m[k].as_f64().unwrap_or(0.0);
    Some(SmrFigures {
        cache_write_bytes: u("cached_write_bytes"),
        cache_bytes: u("cache_bytes"),
        cache_peak_bytes: u("cache_peak_occupancy_bytes"),
        bands_cleaned: u("bands_cleaned"),
        cleaning_rewritten_bytes: u("cleaning_rewritten_bytes"),
        cleaning_s: f("cleaning_s"),
        cleaning_foreground_s: f("cleaning_foreground_s"),
    })
}

/// The emulated devices' late seconds the monitors summarised (none without them).
fn late_seconds<'a>(seen: &Seen<'a>) -> &'a [LateSeconds] {
    seen.monitor.map_or(&[], |m| &m.late_seconds)
}

/// The latest of the emulated devices' reply lateness, % of their mean service time, over
/// the monitored time where their series ran.
fn late_pct(seen: &Seen) -> Option<f64> {
    seen.emulated
        .iter()
        .filter_map(|d| {
            EmulatedDevice::deserialize(d)
                .ok()?
                .late_share_in(late_seconds(seen))
        })
        .map(|s| s * 100.0)
        .reduce(f64::max)
}

/// Emulated devices whose replies were late beyond [`LATE_SHARE_WARNING`] of their service
/// time (over the monitored time where their series ran), as warnings.
fn late_devices(seen: &Seen) -> Vec<String> {
    seen.emulated
        .iter()
        .filter_map(|d| EmulatedDevice::deserialize(d).ok())
        .filter(|d: &EmulatedDevice| {
            d.late_share_in(late_seconds(seen))
                .is_some_and(|s| s > LATE_SHARE_WARNING)
        })
        .map(|d| {
            format!(
                "host-bound: {}; the phase times measure the host as much as the model (run it at a smaller time scale)",
                d.describe()
            )
        })
        .collect()
}

/// The device's cleaning after the phases before idle phase `name`: the model time it spent
/// on background work (SMR cleaning) from the end of the sync before it (the benchmark's end)
/// to the end of the idle phase, cleaning done while the caches were dropped included; where
/// the devices do not count it, what the idle phase found. A warning when it is a lower bound
/// or unknown.
fn cleaning(set: &SampleSet, name: &str, warnings: &mut Vec<String>) -> Option<f64> {
    let at = set.phase_index(name)?;
    let rec = &set.phases[at];
    let idle = rec.idle.as_ref()?;
    if let (true, Some(note)) = (idle.capped || idle.cleaning_s.is_none(), &idle.note) {
        let line = format!("no cleaning time: {note}");
        // A named disk read until calm: each phase found it busy for its own time.
        match idle.capped || idle.busy_s.is_some() {
            true => warnings.push(format!("{name}: {note}")),
            false if !warnings.contains(&line) => warnings.push(line),
            false => {}
        }
    }
    let synced = set.phases[..at]
        .iter()
        .rev()
        .find(|p| p.kind == crate::engine::Action::Sync.name())
        .and_then(|p| p.background_s);
    match (rec.background_s, synced) {
        (Some(end), Some(start)) => Some((end - start).max(0.0)),
        _ => idle.cleaning_s,
    }
}

/// Phase duration over `count`, per second.
fn rate(count: u64, seconds: Option<f64>) -> Option<f64> {
    seconds.filter(|&s| s > 0.0).map(|s| count as f64 / s)
}

/// tree's outcome from the samples of a run.
pub fn analyze(p: &Params, set: &SampleSet, seen: &Seen) -> Result<TreeOutcome, AnalysisError> {
    let shape = Shape::new(super::share(p, 0), p.u64("depth"))
        .ok_or_else(|| AnalysisError::Other("the parameters give no tree".into()))?;
    let counted = count_ops(set)?;
    let index = |name: &str| set.phase_index(name);
    let count = |name: &str, op: Op| {
        index(name).map_or(0, |i| {
            counted
                .iter()
                .filter(|o| o.0 == i && o.1 == op)
                .map(|o| o.2)
                .sum()
        })
    };
    let mut warnings = Vec::new();
    let create = phase(set, CREATE).ok_or_else(|| AnalysisError::MissingPhase(CREATE.into()))?;
    let create_s = create.duration_s();
    let create_synced_s = phase(set, SYNC_CREATE)
        .and_then(PhaseRecord::duration_s)
        .zip(create_s)
        .map(|(sync, create)| create + sync);
    let remove_s = phase(set, REMOVE).and_then(PhaseRecord::duration_s);
    let dirs_created = count(REMOVE, Op::Rmdir);
    if phase(set, REMOVE).is_some() && dirs_created != p.u64("dirs") {
        warnings.push(format!(
            "the remove phase's walk found {dirs_created} directories; the create phase was to make {}",
            p.u64("dirs")
        ));
    }
    let fileserver_ops_s = phase(set, FILESERVER).and_then(|f| {
        let ops: u64 = counted
            .iter()
            .filter(|o| Some(o.0) == index(FILESERVER))
            .map(|o| o.2)
            .sum();
        rate(ops, f.duration_s())
    });
    let errors: u64 = counted.iter().map(|o| o.3).sum();
    if errors > 0 {
        warnings.push(format!("{errors} operations failed (errno in samples.csv)"));
    }
    if index(super::DROP_CACHES).is_none() {
        warnings.push("no drop_caches phase (it needs root): the remove phase may have found the tree in the page cache".into());
    }
    warnings.extend(late_devices(seen));
    let io = io_by_class(seen, &set.phases);
    let verdict = Verdict {
        create_s,
        create_dirs_per_s: rate(count(CREATE, Op::Mkdir), create_s),
        create_synced_s,
        dirs_created,
        remove_s,
        remove_dirs_per_s: rate(dirs_created, remove_s),
        cleaning_after_mkfs_s: cleaning(set, IDLE_MKFS, &mut warnings),
        cleaning_after_create_s: cleaning(set, IDLE_CREATE, &mut warnings),
        cleaning_after_remove_s: cleaning(set, IDLE_REMOVE, &mut warnings),
        cleaning_after_fileserver_s: cleaning(set, IDLE_FILESERVER, &mut warnings),
        fileserver_ops_s,
        errors,
        shape,
        io_classes_from: match (io.is_empty(), seen.monitor.and_then(|m| m.trace.as_ref())) {
            (true, _) => None,
            (false, Some(_)) => Some("trace".into()),
            (false, None) => Some("device log".into()),
        },
        io_by_class: io,
        smr: smr_figures(seen.emulated),
        host_bound: !late_devices(seen).is_empty(),
        host_late_pct: late_pct(seen),
    };
    let ops = counted
        .into_iter()
        .map(|(i, op, n, e)| (set.phases[i].name.clone(), op, n, e))
        .collect();
    Ok(TreeOutcome {
        verdict,
        ops,
        warnings,
    })
}

impl Outcome for TreeOutcome {
    fn streams_json(&self) -> Vec<Json> {
        Vec::new()
    }

    fn verdict_json(&self) -> Json {
        crate::workload::verdict_json(&self.verdict)
    }

    fn stream_rows(&self) -> Rows {
        Rows {
            headings: vec!["phase".into(), "op".into(), "ops".into(), "errors".into()],
            rows: self
                .ops
                .iter()
                .map(|(p, op, n, e)| {
                    vec![
                        p.clone(),
                        op.as_str().to_string(),
                        n.to_string(),
                        e.to_string(),
                    ]
                })
                .collect(),
        }
    }

    fn verdict_line(&self) -> String {
        let v = &self.verdict;
        let cleaning = |c: Option<f64>| match c {
            Some(s) => format!("{} s", num(s)),
            None => "unknown".into(),
        };
        let mut line = format!(
            "create {} s ({} dirs/s), remove {} s ({} dirs found); cleaning after create {}, after remove {}",
            num_opt(v.create_s),
            num_opt(v.create_dirs_per_s),
            num_opt(v.remove_s),
            v.dirs_created,
            cleaning(v.cleaning_after_create_s),
            cleaning(v.cleaning_after_remove_s),
        );
        if let Some(ops) = v.fileserver_ops_s {
            line.push_str(&format!(
                "; file server {} ops/s, cleaning after it {}",
                num(ops),
                cleaning(v.cleaning_after_fileserver_s)
            ));
        }
        if let Some(s) = v.cleaning_after_mkfs_s {
            line.push_str(&format!(
                "; the disk cleaned for {} s after mkfs, before the creation",
                num(s)
            ));
        }
        line
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}
