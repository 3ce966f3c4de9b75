//! A trial's samples once its phases have run: the streams, the phases as they happened
//! ([`PhaseRecord`], result.json's `phases`), and every sample, held in memory or in per-stream
//! spill files that are read one stream at a time, so a trial of any length is analysed and
//! written out in bounded memory.

use super::sample::{Op, Sample, StreamSamples};
use super::spill;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::PathBuf;

/// The kind of a stream phase in result.json and the timeline.
pub const STREAM_KIND: &str = "stream";

/// One stream of a set, without its samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamInfo {
    pub name: String,
    pub role: String,
    pub op: Op,
}

impl StreamInfo {
    pub fn new(name: &str, role: &str, op: Op) -> StreamInfo {
        StreamInfo {
            name: name.to_string(),
            role: role.to_string(),
            op,
        }
    }
}

/// One phase as it ran: an element of result.json's `phases`. Times are seconds since the
/// trial's time origin, in the device model's time like every other time of the trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseRecord {
    pub name: String,
    /// `stream`, or the action (`sync`, `unmount`, ...).
    pub kind: String,
    pub start_s: f64,
    /// `None` when the phase did not end (the trial was read back from a partial file).
    pub end_s: Option<f64>,
    /// Stream phases: when sampling began (seed 000's protocol starts it once every stream
    /// has completed one I/O; other stop conditions sample from the start).
    pub sampling_start_s: Option<f64>,
    /// Stream phases: the stop condition, in words.
    pub stop: Option<String>,
    /// Samples taken in the phase.
    pub samples: u64,
    /// Stream phases: CPU time (user + system) its stream threads used, s, in real time
    /// whatever the time scale: the engine's cost per operation is this over `samples`.
    #[serde(default)]
    pub cpu_s: Option<f64>,
    /// `idle` phases: what the wait found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle: Option<IdleRecord>,
    /// Action phases on emulated devices, in plans with an `idle` phase: seconds of model time
    /// the devices had spent on background work (SMR cleaning) by the phase's end, since they
    /// started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background_s: Option<f64>,
    /// Action phases: what the action measured (an `fsck` phase's checker run); stream phases
    /// with real-time streams: each one's buffer as it counted it (`buffers`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured: Option<serde_json::Value>,
}

/// What an `idle` phase found: how long the device's background work took, when it could
/// tell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdleRecord {
    /// Seconds of the device model's time the device worked on its own (SMR cleaning,
    /// destaging) from the host's last request until it reported its background work done,
    /// which may be before the phase began (the longest of the stack's emulated devices);
    /// `None` when the device cannot tell (a real disk hides drive-managed cleaning).
    pub cleaning_s: Option<f64>,
    /// How the phase knew the device was idle: `device` (the emulated device's own report),
    /// `diskstats` (no I/O for the quiet time), `none` (no device of the stack's own).
    pub how: String,
    /// The wait reached its cap with work still pending: `cleaning_s` is a lower bound.
    pub capped: bool,
    /// When the device went idle, seconds of model time from the phase's start (negative:
    /// before the phase began, its background work done during earlier phases); `None` when
    /// it cannot tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_idle_s: Option<f64>,
    /// Bands an emulated SMR disk cleaned during the phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bands_cleaned: Option<u64>,
    /// Seconds of model time an emulated device's clock was moved forward over its background
    /// work instead of the phase waiting it out in real time (the longest over the devices);
    /// absent when nothing was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fast_forward_s: Option<f64>,
    /// A disk the user named, which hides its background work from diskstats: seconds of
    /// reads after an idle it answered late (it was still busy on its own) after diskstats
    /// went quiet, before it answered them at once twice in a row (the longest over its
    /// disks; 0 when calm at once). A lower bound on its cleaning time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_s: Option<f64>,
    /// Why there is no cleaning time, or what limited it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl PhaseRecord {
    /// A stream phase named `name` from the origin, not ended, sampling from its start.
    pub fn stream(name: &str) -> PhaseRecord {
        PhaseRecord {
            name: name.to_string(),
            kind: STREAM_KIND.to_string(),
            start_s: 0.0,
            end_s: None,
            sampling_start_s: None,
            stop: None,
            samples: 0,
            cpu_s: None,
            idle: None,
            background_s: None,
            measured: None,
        }
    }

    /// Nanoseconds from the time origin to the start of sampling (to the phase's start when
    /// it sampled nothing), the zero of [`SampleSet::load_phase`].
    pub fn zero_ns(&self) -> u64 {
        let s = self.sampling_start_s.unwrap_or(self.start_s);
        (s * 1e9).round().max(0.0) as u64
    }

    /// `sampling_start_s` of a phase whose sampling began `wall_ns` after the origin (measured
    /// time) at time scale `scale`.
    pub fn sampling_start_of(wall_ns: u64, scale: f64) -> f64 {
        wall_ns as f64 * scale / 1e9
    }

    /// Seconds the phase lasted, when it ended.
    pub fn duration_s(&self) -> Option<f64> {
        self.end_s.map(|e| e - self.start_s)
    }
}

/// The zero of a phase whose sampling began `wall_ns` after the origin at time scale
/// `scale`, in the device model's ns, exactly as [`PhaseRecord::zero_ns`] reads it back from
/// result.json: what a real-time stream measures its schedule from.
pub fn zero_model_ns(wall_ns: u64, scale: f64) -> u64 {
    (PhaseRecord::sampling_start_of(wall_ns, scale) * 1e9)
        .round()
        .max(0.0) as u64
}

/// Where the samples are.
#[derive(Debug)]
enum Store {
    /// Per stream, in issue order.
    Memory(Vec<Vec<Sample>>),
    /// One spill file per stream in a directory that is removed with the set.
    Spill(SpillDir),
}

/// A directory of spill files, removed when dropped.
#[derive(Debug)]
pub struct SpillDir(pub PathBuf);

impl Drop for SpillDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Every sample of a trial, by stream and phase.
#[derive(Debug)]
pub struct SampleSet {
    pub streams: Vec<StreamInfo>,
    pub phases: Vec<PhaseRecord>,
    store: Store,
}

impl SampleSet {
    /// A set holding `streams` in memory.
    pub fn in_memory(streams: Vec<StreamSamples>, phases: Vec<PhaseRecord>) -> SampleSet {
        let info = streams
            .iter()
            .map(|s| StreamInfo::new(&s.name, &s.role, s.op))
            .collect();
        SampleSet {
            streams: info,
            phases,
            store: Store::Memory(streams.into_iter().map(|s| s.samples).collect()),
        }
    }

    /// A set of the spill files in `dir`, one per stream.
    pub(super) fn spilled(
        streams: Vec<StreamInfo>,
        phases: Vec<PhaseRecord>,
        dir: SpillDir,
    ) -> Self {
        SampleSet {
            streams,
            phases,
            store: Store::Spill(dir),
        }
    }

    /// A set of `streams` as the memory store of the recorder left them.
    pub(super) fn from_memory(
        streams: Vec<StreamInfo>,
        phases: Vec<PhaseRecord>,
        samples: Vec<Vec<Sample>>,
    ) -> Self {
        SampleSet {
            streams,
            phases,
            store: Store::Memory(samples),
        }
    }

    /// The same samples with `phases` instead of the set's own (matched by name; those read
    /// back from samples.csv only know each phase from its samples). Sets held in memory only.
    pub fn rephase(self, phases: Vec<PhaseRecord>) -> Result<SampleSet, String> {
        let Store::Memory(mut samples) = self.store else {
            return Err("only samples read into memory can take other phases".into());
        };
        let mut map = Vec::with_capacity(self.phases.len());
        for p in &self.phases {
            let i = phases
                .iter()
                .position(|q| q.name == p.name)
                .ok_or_else(|| {
                    format!(
                        "the samples have phase {}, which result.json does not list",
                        p.name
                    )
                })?;
            map.push(i as u16);
        }
        for s in samples.iter_mut().flatten() {
            s.phase = map[s.phase as usize];
        }
        Ok(SampleSet {
            streams: self.streams,
            phases,
            store: Store::Memory(samples),
        })
    }

    /// Calls `f` with every sample of stream `stream`, in issue order.
    pub fn each(&self, stream: usize, f: &mut dyn FnMut(&Sample)) -> io::Result<()> {
        match &self.store {
            Store::Memory(v) => {
                v[stream].iter().for_each(f);
                Ok(())
            }
            Store::Spill(dir) => spill::read_each(&spill::path(&dir.0, stream), f),
        }
    }

    /// The index of the phase named `name`.
    pub fn phase_index(&self, name: &str) -> Option<usize> {
        self.phases.iter().position(|p| p.name == name)
    }

    /// Every stream with all its samples, times since the trial's origin.
    pub fn load(&self) -> io::Result<Vec<StreamSamples>> {
        self.collect(|_| true, 0)
    }

    /// Every stream with its samples of phase `phase` only (none for a stream that did not
    /// run in it), their times since the phase's sampling began ([`PhaseRecord::zero_ns`]).
    pub fn load_phase(&self, phase: usize) -> io::Result<Vec<StreamSamples>> {
        let zero = self.phases.get(phase).map_or(0, PhaseRecord::zero_ns);
        let p = phase as u16;
        self.collect(|s| s.phase == p, zero)
    }

    fn collect(&self, keep: impl Fn(&Sample) -> bool, zero: u64) -> io::Result<Vec<StreamSamples>> {
        let mut out = Vec::with_capacity(self.streams.len());
        for (i, info) in self.streams.iter().enumerate() {
            let mut samples = Vec::new();
            self.each(i, &mut |s| {
                if keep(s) {
                    let mut s = *s;
                    s.issue_ns = s.issue_ns.saturating_sub(zero);
                    samples.push(s);
                }
            })?;
            out.push(StreamSamples {
                name: info.name.clone(),
                role: info.role.clone(),
                op: info.op,
                samples,
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(name: &str, start_s: f64, sampling: Option<f64>) -> PhaseRecord {
        PhaseRecord {
            start_s,
            end_s: Some(start_s + 1.0),
            sampling_start_s: sampling,
            ..PhaseRecord::stream(name)
        }
    }

    #[test]
    fn a_phase_loads_from_its_sampling_start() {
        let s = |issue_ns, phase| Sample {
            issue_ns,
            latency_ns: 10,
            phase,
            ..Default::default()
        };
        let st = StreamSamples {
            name: "w0".into(),
            role: "w".into(),
            op: Op::Write,
            samples: vec![s(1_000, 0), s(2_000_000_100, 1), s(2_000_000_300, 1)],
        };
        let set = SampleSet::in_memory(
            vec![st],
            vec![phase("fill", 0.0, None), phase("run", 1.5, Some(2.0))],
        );
        assert_eq!(set.phase_index("run"), Some(1));
        let run = set.load_phase(1).unwrap();
        let issues: Vec<u64> = run[0].samples.iter().map(|s| s.issue_ns).collect();
        assert_eq!(issues, [100, 300]);
        assert_eq!(set.load().unwrap()[0].samples.len(), 3);
        assert_eq!(set.load_phase(0).unwrap()[0].samples[0].issue_ns, 1_000);
        assert_eq!(set.phases[1].duration_s(), Some(1.0));
    }
}
