//! A workload's plan: its streams (each owns one region of the target, laid out by the stack in
//! plan order) and its phases, run one after the other. A *stream phase* runs some of the
//! streams until its stop condition; an *action phase* is done by the stack between them
//! (sync, drop caches, unmount, mount, fsck, wait for the device to go idle). The plan is pure
//! data: the engine runs stream phases, the stack does actions, the trial walks the list.

use super::samples::set::STREAM_KIND;
use super::StreamPlan;

/// What a workload asks of the stack and the engine: its streams in layout order, its phases in
/// run order, whether it wants O_DIRECT, and the seed of its random offsets.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub streams: Vec<StreamPlan>,
    pub phases: Vec<Phase>,
    /// O_DIRECT wanted (the stack falls back to buffered I/O, with a warning, where the
    /// filesystem refuses it).
    pub direct: bool,
    /// Seed of the offset generators (each stream derives its own): the same seed gives every
    /// stack the same offsets.
    pub seed: u64,
    /// Buffered writes: the most dirty page cache the stack's own writeback device may hold
    /// (a strict per-device limit the stack sets); `None`: the host's limits.
    pub dirty_limit: Option<u64>,
    /// Extra arguments of the filesystem's checker in `fsck` phases (`-o ag_stride=8`).
    pub checker_args: Vec<String>,
    /// The most bytes the workload writes (its data and its own per-file metadata), where it
    /// can tell: emulated devices keep their images in memory when these, with what mkfs
    /// writes, fit ([`crate::stack::build::memimage`]); `None`: as much as the devices hold.
    pub stores_at_most: Option<u64>,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    /// Unique within the plan; tags samples, time series and monitor rows.
    pub name: String,
    pub step: Step,
}

/// What a phase does.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Every stream's place is laid out as the workload wants it before any stream runs:
    /// files created, allocated and filled (the first phase of every plan).
    Prepare,
    /// The streams at these indices of [`Plan::streams`] run until `stop`.
    Streams { streams: Vec<usize>, stop: Stop },
    /// The stack does `Action`.
    Action(Action),
}

/// The name (and kind) of every plan's first phase.
pub const PREPARE: &str = "prepare";

/// When a stream phase ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// Seed 000's protocol: every stream starts; once each has completed one I/O, sampling
    /// begins; each stream records its next N I/Os (its [`StreamPlan::samples`]) and keeps
    /// issuing until every stream has N; then all stop together.
    AllHaveN,
    /// Every I/O is sampled; all streams stop once this many seconds (of the device model's
    /// time) have passed since the phase's streams started.
    Duration(f64),
    /// Every I/O is sampled; each stream stops once it has moved this many bytes (whole I/Os,
    /// so up to one I/O more).
    Bytes(u64),
    /// Every I/O is sampled; each stream stops after this many operations.
    Ops(u64),

    /// Every I/O is sampled; each stream stops when its own list of operations ends: one pass
    /// over its region for the sequential and append patterns, its own byte budget
    /// ([`super::StreamIo::bytes`]) when it has one.
    OpsEnd,
}

impl Stop {
    /// Whether every I/O of the phase is sampled from its first (all but [`Stop::AllHaveN`]).
    pub fn samples_everything(self) -> bool {
        !matches!(self, Stop::AllHaveN)
    }

    /// How result.json and the report say it: `all have N`, `duration 60 s`, ...
    pub fn describe(self) -> String {
        match self {
            Stop::AllHaveN => "every stream has its N samples".into(),
            Stop::Duration(s) => format!("{} s passed", crate::units::trim_float(s)),
            Stop::Bytes(b) => format!("{} per stream", crate::units::Size(b)),
            Stop::Ops(n) => format!("{n} operations per stream"),

            Stop::OpsEnd => "each stream's operations ended".into(),
        }
    }
}

/// An action phase: done by the stack, not by the workload's streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Write the stack's dirty data out (syncfs of the filesystem, fsync of raw devices).
    Sync,
    /// Sync, then drop the page cache, dentries and inodes (root).
    DropCaches,
    /// Unmount the stack's filesystem.
    Unmount,
    /// Mount it again, with the options it was built with.
    Mount,
    /// Run the filesystem's checker read-only on the unmounted filesystem.
    Fsck,
    /// Wait until an emulated device reports its background work done (SMR cleaning), timing
    /// it; on other devices until diskstats show no I/O for a while.
    Idle(IdleLimits),
    /// The stack's emulated devices lose their power during the stream phase just before
    /// this one; then the stack is recovered (its filesystem mounted, checked, its data
    /// scanned).
    PowerCut(PowerCut),
}

/// A power cut during a stream phase: when, and what it does to a write the device is
/// executing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PowerCut {
    pub when: CutWhen,
    pub in_flight: InFlight,
    /// Seeds where a torn write tears.
    pub seed: u64,
}

/// When a power cut comes in the stream phase it cuts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutWhen {
    /// This long after the phase's streams start, ns of the device model's time.
    At { ns: u64 },
    /// As the stack's devices receive their N-th write since the phase started (that write
    /// is in flight at the cut).
    AfterWrites(u64),
}

/// What a power cut does to a multi-sector write the device is executing at that instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InFlight {
    /// It reaches the media whole.
    Whole,
    /// None of it reaches the media.
    None,
    /// Its first sectors reach the media and the rest does not, where a seeded draw says.
    Torn,
}

impl InFlight {
    /// The words a user writes.
    pub const NAMES: [&'static str; 3] = ["whole", "none", "torn"];

    /// Parses one of [`InFlight::NAMES`].
    pub fn parse(word: &str) -> Option<InFlight> {
        match word {
            "whole" => Some(InFlight::Whole),
            "none" => Some(InFlight::None),
            "torn" => Some(InFlight::Torn),
            _ => None,
        }
    }

    /// Its word.
    pub fn name(self) -> &'static str {
        match self {
            InFlight::Whole => "whole",
            InFlight::None => "none",
            InFlight::Torn => "torn",
        }
    }
}

/// How long an `idle` phase waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleLimits {
    /// The most it waits, ms of the device model's time (a warning says when it was reached).
    pub max_ms: u64,
    /// Devices that cannot report their background work: the phase ends once diskstats show
    /// no I/O for this long, ms.
    pub quiet_ms: u64,
}

impl IdleLimits {
    /// 30 minutes at most; 5 s without I/O.
    pub const DEFAULT: IdleLimits = IdleLimits {
        max_ms: 30 * 60 * 1000,
        quiet_ms: 5000,
    };
}

impl Action {
    /// Every action, in declaration order.
    pub const ALL: [Action; 7] = [
        Action::Sync,
        Action::DropCaches,
        Action::Unmount,
        Action::Mount,
        Action::Fsck,
        Action::Idle(IdleLimits::DEFAULT),
        Action::PowerCut(PowerCut {
            when: CutWhen::AfterWrites(1),
            in_flight: InFlight::Torn,
            seed: 0,
        }),
    ];

    /// The action's name: the phase kind in result.json and the timeline.
    pub fn name(self) -> &'static str {
        match self {
            Action::Sync => "sync",
            Action::DropCaches => "drop_caches",
            Action::Unmount => "unmount",
            Action::Mount => "mount",
            Action::Fsck => "fsck",
            Action::Idle(_) => "idle",
            Action::PowerCut(_) => "powercut",
        }
    }
}

impl Step {
    /// `stream` for a stream phase, `prepare` for the layout, the action's name otherwise.
    pub fn kind(&self) -> &'static str {
        match self {
            Step::Prepare => PREPARE,
            Step::Streams { .. } => STREAM_KIND,
            Step::Action(a) => a.name(),
        }
    }
}

/// A plan that cannot run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    #[error("the plan has no phases")]
    NoPhases,
    #[error("phase {0}: the name is used by an earlier phase")]
    DuplicatePhase(String),
    #[error("phase {0} runs no stream")]
    EmptyPhase(String),
    #[error("phase {phase} names stream {index}, but the plan has {streams} streams")]
    UnknownStream {
        phase: String,
        index: usize,
        streams: usize,
    },
    #[error("phase {phase}: stream {stream} has a random pattern, so its operations never end; give the phase a duration, byte or operation count")]
    NeverEnds { phase: String, stream: String },
    #[error("phase {phase}: {message}")]
    BadStop { phase: String, message: String },
    #[error("phase {phase}: {message}")]
    BadPowerCut { phase: String, message: String },
    #[error("stream {stream}: a {checksum} verify header every {interval} bytes {why}")]
    BadSeal {
        stream: String,
        checksum: &'static str,
        interval: u32,
        why: String,
    },
}

impl Plan {
    /// Whether every stream writes zeros and nothing else (no stream reads a region filled
    /// before the run): an emulated device keeps such writes as holes of its image.
    pub fn writes_only_zeros(&self) -> bool {
        !self.streams.is_empty()
            && self.streams.iter().all(|s| {
                s.io.zeros
                    && s.io.seal.is_none()
                    && s.op == super::Op::Write
                    && s.io.mix.is_none()
                    && s.source.is_none()
            })
    }

    /// A plan of `phases` over `streams`, after the `prepare` phase that lays out every
    /// stream's place, with the host's dirty limits and no checker arguments (set those fields
    /// after, where a workload has them).
    pub fn new(streams: Vec<StreamPlan>, phases: Vec<Phase>, direct: bool, seed: u64) -> Plan {
        let mut all = Vec::with_capacity(phases.len() + 1);
        all.push(Phase {
            name: PREPARE.into(),
            step: Step::Prepare,
        });
        all.extend(phases);
        Plan {
            streams,
            phases: all,
            direct,
            seed,
            dirty_limit: None,
            checker_args: Vec::new(),
            stores_at_most: None,
        }
    }

    /// A plan of seed 000's shape: after `prepare`, one stream phase named `phase` running
    /// every stream until every stream has its samples.
    pub fn sampled(phase: &str, streams: Vec<StreamPlan>, direct: bool, seed: u64) -> Plan {
        let all = (0..streams.len()).collect();
        let phases = vec![Phase {
            name: phase.to_string(),
            step: Step::Streams {
                streams: all,
                stop: Stop::AllHaveN,
            },
        }];
        Plan::new(streams, phases, direct, seed)
    }

    /// The plan with its `prepare` phase first (added when a plan made without
    /// [`Plan::new`] lacks it), as the trial runs it.
    pub fn prepared(mut self) -> Plan {
        if self.phases.first().map(|p| &p.step) != Some(&Step::Prepare) {
            self.phases.insert(
                0,
                Phase {
                    name: PREPARE.into(),
                    step: Step::Prepare,
                },
            );
        }
        self
    }

    /// The phases after `prepare`: those the workload asked for.
    pub fn own_phases(&self) -> &[Phase] {
        match self.phases.first() {
            Some(p) if p.step == Step::Prepare => &self.phases[1..],
            _ => &self.phases,
        }
    }

    /// Checks that every phase can run and end, and that every stream's writes can carry
    /// their verify headers.
    pub fn check(&self) -> Result<(), PlanError> {
        if self.own_phases().is_empty() {
            return Err(PlanError::NoPhases);
        }
        if let Some(p) = self.phases.iter().skip(1).find(|p| p.step == Step::Prepare) {
            return Err(PlanError::BadStop {
                phase: p.name.clone(),
                message: "the prepare phase comes first, once".into(),
            });
        }
        for (i, s) in self.streams.iter().enumerate() {
            if s.io.share.is_some_and(|o| o >= i) {
                return Err(PlanError::BadStop {
                    phase: PREPARE.into(),
                    message: format!(
                        "stream {} shares the place of a stream that does not come before it",
                        s.name
                    ),
                });
            }
        }
        for s in &self.streams {
            let Some(seal) = s.io.seal else { continue };
            let bad = |why: String| PlanError::BadSeal {
                stream: s.name.clone(),
                checksum: seal.checksum.name(),
                interval: seal.interval,
                why,
            };
            let min = seal.checksum.min_interval() as u64;
            if u64::from(seal.interval) < min {
                return Err(bad(format!(
                    "leaves no room for data: the interval must be at least {min} bytes"
                )));
            }
            if u64::from(seal.interval) > s.io_size {
                return Err(bad(format!(
                    "is longer than the stream's {}-byte I/Os",
                    s.io_size
                )));
            }
            if s.io_size % u64::from(seal.interval) != 0
                && s.io_size % u64::from(seal.interval) < min
            {
                return Err(bad(format!(
                    "leaves a last piece of {} bytes in each {}-byte I/O, too short for a header",
                    s.io_size % u64::from(seal.interval),
                    s.io_size
                )));
            }
        }
        for (i, p) in self.phases.iter().enumerate() {
            if self.phases[..i].iter().any(|q| q.name == p.name) {
                return Err(PlanError::DuplicatePhase(p.name.clone()));
            }
            if let Step::Streams { streams, stop } = &p.step {
                self.check_stream_phase(&p.name, streams, *stop)?;
            }
            if let Step::Action(Action::PowerCut(c)) = &p.step {
                self.check_power_cut(i, c)?;
            }
        }
        Ok(())
    }

    /// The power cut of plan phase `i`, if that phase is one.
    pub fn power_cut(&self, i: usize) -> Option<PowerCut> {
        match self.phases.get(i)?.step {
            Step::Action(Action::PowerCut(c)) => Some(c),
            _ => None,
        }
    }

    /// Whether the plan cuts the power.
    pub fn cuts_power(&self) -> bool {
        (0..self.phases.len()).any(|i| self.power_cut(i).is_some())
    }

    /// A power cut comes right after a stream phase that writes, is the plan's only one, and
    /// falls inside that phase when its length is known.
    fn check_power_cut(&self, i: usize, c: &PowerCut) -> Result<(), PlanError> {
        let name = &self.phases[i].name;
        let bad = |message: String| {
            Err(PlanError::BadPowerCut {
                phase: name.clone(),
                message,
            })
        };
        if (0..i).any(|j| self.power_cut(j).is_some()) {
            return bad("a plan has one power cut at most".into());
        }
        let Some(Step::Streams { streams, stop }) = i.checked_sub(1).map(|j| &self.phases[j].step)
        else {
            return bad(
                "a power cut cuts the stream phase just before it, and there is none".into(),
            );
        };
        let cut = &self.phases[i - 1].name;
        if !streams.iter().any(|&s| {
            let s = &self.streams[s];
            s.op == super::Op::Write || s.io.mix.is_some_and(|r| r < 100) || s.source.is_some()
        }) {
            return bad(format!("the stream phase it cuts ({cut}) writes nothing"));
        }
        match (c.when, *stop) {
            (CutWhen::At { ns }, Stop::Duration(d)) if ns as f64 >= d * 1e9 => bad(format!(
                "the cut at {} s is not inside phase {cut}, which lasts {} s",
                crate::units::trim_float(ns as f64 / 1e9),
                crate::units::trim_float(d)
            )),
            (CutWhen::AfterWrites(0), _) => bad("the cut after 0 writes: count from 1".into()),
            _ => Ok(()),
        }
    }

    fn check_stream_phase(
        &self,
        phase: &str,
        streams: &[usize],
        stop: Stop,
    ) -> Result<(), PlanError> {
        if streams.is_empty() {
            return Err(PlanError::EmptyPhase(phase.to_string()));
        }
        let bad = |message: &str| {
            Err(PlanError::BadStop {
                phase: phase.to_string(),
                message: message.to_string(),
            })
        };
        match stop {
            Stop::Duration(s) if !(s > 0.0 && s.is_finite()) => {
                return bad("the duration must be greater than 0")
            }
            Stop::Bytes(0) | Stop::Ops(0) => return bad("the count must be greater than 0"),
            _ => {}
        }
        for &i in streams {
            let Some(s) = self.streams.get(i) else {
                return Err(PlanError::UnknownStream {
                    phase: phase.to_string(),
                    index: i,
                    streams: self.streams.len(),
                });
            };
            if s.source.is_some() && stop == Stop::AllHaveN {
                return bad(&format!(
                    "stream {} does its own operations and samples every one: give the phase a duration, an operation count or its operations' end",
                    s.name
                ));
            }
            if let super::Pacing::Realtime(rt) = &s.pacing {
                if !matches!(stop, Stop::Duration(_)) {
                    return bad(&format!(
                        "stream {} runs in real time on its application's schedule: give the phase a duration",
                        s.name
                    ));
                }
                if s.source.is_some() || s.io.mix.is_some() || s.io.fsync_every > 0 {
                    return bad(&format!(
                        "stream {} runs in real time: it does its own block I/O, without a source, a read/write mix or fsyncs",
                        s.name
                    ));
                }
                rt.check(s.io_size).map_err(|m| PlanError::BadStop {
                    phase: phase.to_string(),
                    message: format!("stream {}: {m}", s.name),
                })?;
            }
            if stop == Stop::OpsEnd
                && s.source.is_none()
                && s.pattern == super::Pattern::Random
                && s.io.bytes == 0
            {
                return Err(PlanError::NeverEnds {
                    phase: phase.to_string(),
                    stream: s.name.clone(),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Op, Pacing, Pattern};

    fn stream(name: &str, pattern: Pattern) -> StreamPlan {
        StreamPlan {
            name: name.into(),
            role: "w".into(),
            op: Op::Write,
            region_len: 1 << 20,
            io_size: 4096,
            pattern,
            pacing: Pacing::Max,
            samples: 4,
            io: Default::default(),
            source: None,
        }
    }

    fn phase(name: &str, step: Step) -> Phase {
        Phase {
            name: name.into(),
            step,
        }
    }

    #[test]
    fn a_sampled_plan_is_one_phase_of_every_stream() {
        let p = Plan::sampled("run", vec![stream("a", Pattern::Random)], true, 1);
        assert_eq!(p.check(), Ok(()));
        assert_eq!(p.phases.len(), 2);
        assert_eq!(p.phases[0].step.kind(), "prepare");
        assert_eq!(p.own_phases()[0].step.kind(), "stream");
    }

    #[test]
    fn a_stream_with_its_own_operations_ends_with_them_but_has_no_n() {
        let mut s = stream("tree", Pattern::Random);
        s.source = Some(crate::engine::Source::new("nothing", |_| {
            Err(std::io::Error::other("never made"))
        }));
        let mut p = Plan::sampled("create", vec![s], false, 1);
        assert!(
            matches!(p.check(), Err(PlanError::BadStop { ref message, .. }) if message.contains("tree")),
            "{:?}",
            p.check()
        );
        p.phases[1].step = Step::Streams {
            streams: vec![0],
            stop: Stop::OpsEnd,
        };
        assert_eq!(p.check(), Ok(()));
    }

    #[test]
    fn plans_that_cannot_run_or_end_are_refused() {
        let mut p = Plan::sampled("fill", vec![stream("a", Pattern::Random)], false, 1);
        p.phases[1].step = Step::Streams {
            streams: vec![0],
            stop: Stop::OpsEnd,
        };
        assert!(matches!(p.check(), Err(PlanError::NeverEnds { .. })));
        p.streams[0].pattern = Pattern::Sequential;
        assert_eq!(p.check(), Ok(()));
        p.phases.push(phase("fill", Step::Action(Action::Sync)));
        assert_eq!(p.check(), Err(PlanError::DuplicatePhase("fill".into())));
        p.phases[2] = phase(
            "more",
            Step::Streams {
                streams: vec![3],
                stop: Stop::Duration(1.0),
            },
        );
        assert!(matches!(
            p.check(),
            Err(PlanError::UnknownStream { index: 3, .. })
        ));
        p.phases[2].step = Step::Streams {
            streams: vec![0],
            stop: Stop::Duration(0.0),
        };
        assert!(p.check().unwrap_err().to_string().contains("duration"));
        p.phases[2].step = Step::Streams {
            streams: vec![],
            stop: Stop::Bytes(1),
        };
        assert_eq!(p.check(), Err(PlanError::EmptyPhase("more".into())));
        p.phases.truncate(1);
        assert_eq!(p.check(), Err(PlanError::NoPhases));
        let mut p = Plan::sampled("fill", vec![stream("a", Pattern::Sequential)], false, 1);
        p.phases.push(phase("again", Step::Prepare));
        assert!(p.check().unwrap_err().to_string().contains("first, once"));
    }

    #[test]
    fn actions_have_their_names_as_kinds() {
        let names: Vec<&str> = Action::ALL.iter().map(|a| a.name()).collect();
        assert_eq!(
            names,
            [
                "sync",
                "drop_caches",
                "unmount",
                "mount",
                "fsck",
                "idle",
                "powercut"
            ]
        );
        assert_eq!(Step::Action(Action::Unmount).kind(), "unmount");
        assert_eq!(Stop::Duration(60.0).describe(), "60 s passed");
    }
}
