//! The durability verdict of a power-cut trial: what the stack kept of what the workload had
//! written when the power went. The samples say what was written and acknowledged before the
//! cut (and what was fsynced); the scan after recovery says what is there
//! ([`crate::stack::powercut::scan`]); the device servers say what the drives lost. From them,
//! every verify interval (4 KiB block) a stream wrote is intact, lost (an older version, or
//! zeros), torn, or foreign (another writer's data, or stale bytes nobody wrote there); a
//! recording stream has lost the seconds since its oldest acknowledged write that did not
//! survive; files and directories are missing or short. Result.json keeps it as
//! `durability`, beside the workload's own verdict.

mod blocks;

use crate::engine::{Op, Plan, SampleSet};
use crate::stack::powercut::Recovery;
use serde::{Deserialize, Serialize};

pub use blocks::BlockCounts;

/// What the drives lost at the cut, over every device of the stack.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceLoss {
    /// Writes (whole or in part) the media did not get, and their bytes.
    pub writes_lost: u64,
    pub bytes_lost: u64,
    /// Of those, the ones the host had been told were done.
    pub acked_writes_lost: u64,
    pub acked_bytes_lost: u64,
    /// Of those, the ones a completed cache flush had covered: the drive said they were
    /// durable.
    pub flushed_writes_lost: u64,
    pub flushed_bytes_lost: u64,
    /// Writes the drives were executing at the cut, and how many of them tore.
    pub in_flight: u64,
    pub torn_writes: u64,
}

/// One stream's losses.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamLoss {
    pub name: String,
    pub role: String,
    pub blocks: BlockCounts,
    /// Acknowledged bytes not found intact.
    pub bytes_lost: u64,
    /// Seconds of recording lost: from the oldest acknowledged write not found intact to
    /// the cut (0 when none was lost).
    pub seconds_lost_written: f64,
    /// The same against what the stream had fsynced: from the oldest write its last completed
    /// fsync covered that was not found intact, to that fsync; `None` when it never fsynced.
    pub seconds_lost_fsynced: Option<f64>,
    /// Its file was gone, or shorter than what it had written.
    pub file_missing: bool,
    pub file_short_bytes: u64,
}

/// Files and directories of the streams doing file operations.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeLoss {
    /// Made (created or mkdir'ed, less those removed) and acknowledged before the cut.
    pub files_made: u64,
    pub dirs_made: u64,
    pub files_found: u64,
    pub dirs_found: u64,
    pub files_missing: u64,
    pub dirs_missing: u64,
    /// Their data, in 4 KiB verify intervals.
    pub blocks: BlockCounts,
}

/// The durability verdict of one power cut.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Durability {
    /// The stream phase the cut came in, and when: s of model time since the trial's origin,
    /// and since that phase began.
    pub phase: String,
    pub cut_s: f64,
    pub cut_in_phase_s: f64,
    /// What the cut did to a write in flight: `torn`, `whole`, `none`.
    pub in_flight: String,
    pub device: DeviceLoss,
    /// The first mount after the cut (absent on a raw layout): whether it worked and how long
    /// its journal replay took, s of model time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_ok: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_error: Option<String>,
    /// The checker's read-only run after the mount: clean (exit 0) or not, its exit status
    /// and where its output is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checker_clean: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checker_exit: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checker_output: Option<String>,
    /// Every stream's blocks, added up.
    pub blocks: BlockCounts,
    pub bytes_lost: u64,
    /// The worst recording stream's seconds lost against what it wrote, and against what it
    /// fsynced (`None`: no stream fsynced).
    pub seconds_lost_written: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds_lost_fsynced: Option<f64>,
    /// Files, directories and file tails lost: the block streams' files missing or short and
    /// the file-operation streams' files and directories missing.
    pub metadata_lost: u64,
    pub streams: Vec<StreamLoss>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trees: Option<TreeLoss>,
    /// Regions the scan could not read to their end (a file gone is `metadata_lost`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scan_errors: Vec<String>,
    /// The verdict in words.
    pub summary: String,
}

/// Judges the cut `rec` describes, from the plan, the samples and the time scale.
pub fn judge(
    plan: &Plan,
    samples: &SampleSet,
    rec: &Recovery,
    scale: f64,
) -> std::io::Result<Durability> {
    let cut_ns = (rec.cut_real_ns as f64 * scale) as u64;
    let phase = rec.phase.saturating_sub(1);
    let phase_start = samples.phases.get(phase).map_or(0.0, |p| p.start_s);
    let mut d = Durability {
        phase: plan.phases[phase].name.clone(),
        cut_s: cut_ns as f64 / 1e9,
        cut_in_phase_s: cut_ns as f64 / 1e9 - phase_start,
        in_flight: rec.cut.in_flight.name().to_string(),
        device: device_loss(rec),
        ..Durability::default()
    };
    if let Some(m) = &rec.mount {
        d.mount_ok = Some(m.ok);
        d.replay_s = Some(m.replay_s);
        d.mount_error = m.error.clone();
    }
    if let Some(c) = &rec.checker {
        let exit = c["exit"].as_i64().map(|e| e as i32);
        d.checker_exit = exit;
        d.checker_clean = Some(exit == Some(0));
        d.checker_output = c["output"].as_str().map(str::to_string);
    }
    let until = rec.phase as u16;
    for r in &rec.scan.regions {
        let s = &plan.streams[r.stream];
        let mut ops = Vec::new();
        if r.by_samples {
            samples.each(r.stream, &mut |x| {
                if x.phase < until {
                    ops.push(*x);
                }
            })?;
        }
        let depth = s.io.depth.max(1) as usize;
        let loss = blocks::judge_region(r, &ops, cut_ns, scale, depth);
        if let (Some(e), false) = (&r.error, r.missing) {
            d.scan_errors.push(format!("{}: {e}", s.name));
        }
        d.blocks.add(&loss.blocks);
        d.bytes_lost += loss.bytes_lost;
        d.metadata_lost += u64::from(loss.file_missing) + u64::from(loss.file_short_bytes > 0);
        d.streams.push(StreamLoss {
            name: match &r.file {
                Some(f) => format!("{}:{f}", s.name),
                None => s.name.clone(),
            },
            role: s.role.clone(),
            ..loss
        });
    }
    d.scan_errors.extend(rec.scan.unjudged.iter().cloned());
    if !rec.scan.trees.is_empty() {
        let mut t = TreeLoss::default();
        for ts in &rec.scan.trees {
            let mut made = (0i64, 0i64);
            samples.each(ts.stream, &mut |x| {
                if x.phase < until && x.errno == 0 && x.done_ns() <= cut_ns {
                    match x.op {
                        Op::Create => made.0 += 1,
                        Op::Unlink => made.0 -= 1,
                        Op::Mkdir => made.1 += 1,
                        Op::Rmdir => made.1 -= 1,
                        _ => {}
                    }
                }
            })?;
            t.files_made += made.0.max(0) as u64;
            t.dirs_made += made.1.max(0) as u64;
            t.files_found += ts.files;
            t.dirs_found += ts.dirs;
            t.blocks.intact += ts.own;
            t.blocks.lost_zeros += ts.zeros;
            t.blocks.torn += ts.damaged;
            t.blocks.foreign += ts.other;
            t.blocks.stale += ts.stale;
        }
        t.files_missing = t.files_made.saturating_sub(t.files_found);
        t.dirs_missing = t.dirs_made.saturating_sub(t.dirs_found);
        d.metadata_lost += t.files_missing + t.dirs_missing;
        d.blocks.add(&t.blocks);
        d.trees = Some(t);
    }
    d.seconds_lost_written = d
        .streams
        .iter()
        .map(|s| s.seconds_lost_written)
        .fold(0.0, f64::max);
    d.seconds_lost_fsynced = d
        .streams
        .iter()
        .filter_map(|s| s.seconds_lost_fsynced)
        .reduce(f64::max);
    d.summary = summary(&d);
    Ok(d)
}

/// What the device reports add up to.
fn device_loss(rec: &Recovery) -> DeviceLoss {
    use crate::emu::journal::Fate;
    let mut l = DeviceLoss::default();
    for w in rec.done.devices.iter().flat_map(|r| &r.writes) {
        if matches!(w.fate, Fate::Whole | Fate::Torn | Fate::Absent) {
            l.in_flight += 1;
        }
        if w.fate == Fate::Torn {
            l.torn_writes += 1;
        }
        if w.kept >= w.len {
            continue;
        }
        let lost = w.len - w.kept;
        l.writes_lost += 1;
        l.bytes_lost += lost;
        if w.acked {
            l.acked_writes_lost += 1;
            l.acked_bytes_lost += lost;
        }
        if w.flushed {
            l.flushed_writes_lost += 1;
            l.flushed_bytes_lost += lost;
        }
    }
    l
}

/// The verdict in one sentence (and a second for the drive).
fn summary(d: &Durability) -> String {
    let b = &d.blocks;
    let mut s = format!(
        "cut {:.2} s into {}: {:.2} s of recording lost",
        d.cut_in_phase_s, d.phase, d.seconds_lost_written
    );
    if let Some(f) = d.seconds_lost_fsynced {
        s += &format!(" ({f:.2} s of it fsynced)");
    }
    s += &format!(
        ", {} blocks lost, {} torn, {} foreign ({} stale)",
        b.lost_older + b.lost_zeros,
        b.torn,
        b.foreign + b.stale,
        b.stale
    );
    if d.metadata_lost > 0 {
        s += &format!(", {} files or directories lost", d.metadata_lost);
    }
    match (d.mount_ok, d.checker_clean) {
        (Some(true), Some(c)) => {
            s += &format!(
                "; mounted after {:.2} s of replay, checker {}",
                d.replay_s.unwrap_or(0.0),
                if c { "clean" } else { "found errors" }
            )
        }
        (Some(false), _) => {
            s += &format!(
                "; the filesystem did not mount ({})",
                d.mount_error.as_deref().unwrap_or("no reason given")
            )
        }
        _ => {}
    }
    let dl = &d.device;
    s += &format!(
        ". The drives lost {} acknowledged writes ({} bytes)",
        dl.acked_writes_lost, dl.acked_bytes_lost
    );
    if dl.flushed_writes_lost > 0 {
        s += &format!(
            ", {} of them ({} bytes) after a completed cache flush: the drive ignores flushes",
            dl.flushed_writes_lost, dl.flushed_bytes_lost
        );
    }
    s + "."
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_says_when_a_drive_lost_what_it_said_was_flushed() {
        let mut d = Durability {
            phase: "run".into(),
            cut_in_phase_s: 3.0,
            seconds_lost_written: 1.25,
            mount_ok: Some(true),
            replay_s: Some(0.5),
            checker_clean: Some(true),
            ..Durability::default()
        };
        d.device.acked_writes_lost = 4;
        d.device.acked_bytes_lost = 4096;
        let s = summary(&d);
        assert!(
            s.starts_with("cut 3.00 s into run: 1.25 s of recording lost"),
            "{s}"
        );
        assert!(
            s.contains("checker clean") && !s.contains("ignores flushes"),
            "{s}"
        );
        d.device.flushed_writes_lost = 2;
        d.device.flushed_bytes_lost = 2048;
        d.checker_clean = Some(false);
        let s = summary(&d);
        assert!(
            s.contains(
                "2 of them (2048 bytes) after a completed cache flush: the drive ignores flushes"
            ),
            "{s}"
        );
        assert!(s.contains("checker found errors"), "{s}");
    }
}
