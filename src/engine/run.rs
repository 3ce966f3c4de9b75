//! Running a plan's stream phases: an [`Engine`] holds what lasts from one phase to the next
//! (each stream's cursor, the recorder, the time origin) and runs one stream phase at a time,
//! its threads released together through a barrier; [`run`] is the one-phase, in-memory run
//! the device probe and tests use.

use super::realtime::{self, Tally};
use super::record::{Keep, Recorder, StreamSink};
use super::source::{OpSource, SourceCtx};
use super::source_run::{self, SourceEnded, SourceJob};
use super::stream::{self, slot_buffers, Cursor, Ended, Job};
use super::{
    open_stream, EngineError, EngineOptions, Pacing, Placement, Plan, Protocol, Step, Stop,
};
use super::{PhaseRecord, StreamInfo, StreamSamples};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// How one stream phase went.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseOutcome {
    /// The phase ended before its stop condition (a stop request).
    pub incomplete: bool,
    /// When sampling began, ns since the origin (measured time), if it did.
    pub sampling_start_ns: Option<u64>,
    /// Samples taken in the phase.
    pub samples: u64,
    /// CPU time (user + system) the phase's stream threads used, s (real time, whatever the
    /// time scale).
    pub cpu_s: f64,
    /// Each real-time stream's buffer as the stream counted it live: (stream name, tally).
    pub buffers: Vec<(String, Tally)>,
}

/// CPU time the calling thread has used since it started, ns.
fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// A plan being run on placed targets, phase by phase.
pub struct Engine<'a> {
    plan: &'a Plan,
    placements: &'a [Placement],
    opts: EngineOptions,
    origin: Instant,
    cursors: Vec<Cursor>,
    /// Each source stream's source, made at the first phase it runs in.
    sources: Vec<Option<Box<dyn OpSource>>>,
    recorder: Recorder,
    warnings: Vec<String>,
}

/// One stream's work in a phase: block I/O, or its own source's operations.
enum Work {
    Block(Job),
    Source(SourceJob),
}

/// What a stream's thread handed back.
enum Back {
    /// A block stream, with its buffer's tally when it ran in real time.
    Block(Ended, Option<Tally>),
    Source(SourceEnded),
}

impl Back {
    fn samples(&self) -> usize {
        match self {
            Back::Block(e, _) => e.samples,
            Back::Source(e) => e.samples,
        }
    }
}

impl<'a> Engine<'a> {
    /// An engine for `plan` on `placements` (one per stream), measuring time from `origin`,
    /// keeping samples as `keep` says (times multiplied by the time scale).
    pub fn new(
        plan: &'a Plan,
        placements: &'a [Placement],
        opts: EngineOptions,
        origin: Instant,
        keep: Keep,
    ) -> Result<Engine<'a>, EngineError> {
        plan.check()?;
        if plan.streams.len() != placements.len() {
            return Err(EngineError::Mismatch {
                streams: plan.streams.len(),
                placements: placements.len(),
            });
        }
        let info = plan
            .streams
            .iter()
            .map(|s| StreamInfo::new(&s.name, &s.role, s.op))
            .collect();
        Ok(Engine {
            plan,
            placements,
            opts,
            origin,
            cursors: (0..plan.streams.len())
                .map(|i| Cursor::new(plan.seed, i))
                .collect(),
            sources: (0..plan.streams.len()).map(|_| None).collect(),
            recorder: Recorder::new(info, keep, opts.time_scale)?,
            warnings: Vec::new(),
        })
    }

    /// Runs stream phase `phase` of the plan until its stop condition, calling `tick` about
    /// every 20 ms meanwhile (to draw progress or request a stop).
    pub fn run_phase(
        &mut self,
        phase: usize,
        mut tick: impl FnMut(&Protocol),
    ) -> Result<PhaseOutcome, EngineError> {
        let p = &self.plan.phases[phase];
        let Step::Streams { streams, stop } = &p.step else {
            return Err(EngineError::NotStreams(p.name.clone()));
        };
        let stop = *stop;
        let protocol = Arc::new(Protocol::starting(
            streams.len(),
            self.origin,
            stop.samples_everything(),
        ));
        let jobs = self.jobs(streams, stop, phase as u16)?;
        let barrier = Arc::new(Barrier::new(jobs.len() + 1));
        let handles: Vec<_> = jobs
            .into_iter()
            .map(|work| {
                let (protocol, barrier) = (protocol.clone(), barrier.clone());
                let name = match &work {
                    Work::Block(j) => j.plan.name.clone(),
                    Work::Source(j) => j.plan.name.clone(),
                };
                std::thread::Builder::new()
                    .name(name)
                    .spawn(move || {
                        let back = match work {
                            Work::Block(job) => match &job.plan.pacing {
                                Pacing::Realtime(rt) => {
                                    let rt = rt.clone();
                                    let (e, t) = realtime::run::run(job, &rt, &protocol, &barrier);
                                    Back::Block(e, Some(t))
                                }
                                _ => Back::Block(stream::run(job, &protocol, &barrier), None),
                            },
                            Work::Source(job) => {
                                Back::Source(source_run::run(job, &protocol, &barrier))
                            }
                        };
                        (back, thread_cpu_ns())
                    })
                    .expect("spawn stream thread")
            })
            .collect();
        let wall = match stop {
            Stop::Duration(s) => Some(s / self.opts.time_scale),
            _ => None,
        };
        // Sampling (of everything) and the deadline start now, as the streams are let go: set
        // before the barrier, so no stream's first I/O can come before them.
        protocol.release(wall);
        barrier.wait();
        while !handles.iter().all(|h| h.is_finished()) {
            tick(&protocol);
            std::thread::sleep(Duration::from_millis(20));
        }
        let (ended, cpu): (Vec<Back>, Vec<u64>) = handles
            .into_iter()
            .map(|h| h.join().expect("stream thread panicked"))
            .unzip();
        let short = stop == Stop::AllHaveN
            && ended
                .iter()
                .zip(streams)
                .any(|(e, &i)| e.samples() < self.plan.streams[i].samples);
        let samples = ended.iter().map(|e| e.samples() as u64).sum();
        let mut buffers = Vec::new();
        for (e, &i) in ended.into_iter().zip(streams) {
            match e {
                Back::Block(e, tally) => {
                    if let Some(t) = tally {
                        buffers.push((self.plan.streams[i].name.clone(), t));
                    }
                    self.cursors[i] = e.cursor;
                    self.recorder.put(i, e.sink);
                }
                Back::Source(e) => {
                    self.sources[i] = Some(e.source);
                    self.recorder.put(i, e.sink);
                }
            }
        }
        Ok(PhaseOutcome {
            incomplete: protocol.stopped() || short,
            sampling_start_ns: protocol.sampling().then(|| protocol.t0_ns()),
            samples,
            cpu_s: cpu.iter().sum::<u64>() as f64 / 1e9,
            buffers,
        })
    }

    /// The work of one phase: targets opened with each stream's backend (slot buffers made and
    /// registered) or sources made, cursors and sinks taken. What the kernel refused is kept
    /// as warnings.
    fn jobs(
        &mut self,
        streams: &[usize],
        stop: Stop,
        phase: u16,
    ) -> Result<Vec<Work>, EngineError> {
        let mut work = Vec::with_capacity(streams.len());
        for (k, &i) in streams.iter().enumerate() {
            let (s, p) = (&self.plan.streams[i], &self.placements[i]);
            let sink = |r: &mut Recorder| -> StreamSink { r.take(i, phase) };
            if let Some(src) = &s.source {
                let source = match self.sources[i].take() {
                    Some(made) => made,
                    None => {
                        let ctx = SourceCtx {
                            placement: p,
                            direct: self.opts.direct,
                            seed: self.cursors[i].seed(),
                            index: i,
                        };
                        (src.make)(&ctx).map_err(|e| EngineError::Source {
                            stream: s.name.clone(),
                            path: p.path.clone(),
                            source: e,
                        })?
                    }
                };
                work.push(Work::Source(SourceJob {
                    index: k,
                    plan: s.clone(),
                    source,
                    sink: sink(&mut self.recorder),
                    stop,
                }));
                continue;
            }
            let f = open_stream(s, &p.path, self.opts.direct).map_err(|e| EngineError::Open {
                stream: s.name.clone(),
                path: p.path.clone(),
                source: e,
            })?;
            let kind = s.io.backend.unwrap_or(self.opts.backend);
            let mut opened = kind.open(f.into(), s.io.depth.max(1) as usize);
            let depth = opened.backend.queue_depth();
            let cursor = self.cursors[i].clone();
            let bufs = slot_buffers(&cursor, s.io_size as usize, depth);
            opened.warnings.extend(opened.backend.register(&bufs));
            for w in opened.warnings {
                let w = format!("{}: {w}", s.name);
                if !self.warnings.contains(&w) {
                    self.warnings.push(w);
                }
            }
            work.push(Work::Block(Job {
                index: k,
                plan: s.clone(),
                placement: p.clone(),
                backend: opened.backend,
                bufs,
                cursor,
                sink: sink(&mut self.recorder),
                stop,
                time_scale: self.opts.time_scale,
            }));
        }
        Ok(work)
    }

    /// What the kernel refused while the streams' backends were opened (io_uring features),
    /// each once, naming the stream.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Ends the run: every sample, with the phases as they ran.
    pub fn finish(self, phases: Vec<PhaseRecord>) -> Result<super::SampleSet, EngineError> {
        Ok(self.recorder.finish(phases)?)
    }
}

/// What [`run`] produced.
#[derive(Debug)]
pub struct RunOutput {
    /// Each stream's samples, times since sampling began.
    pub streams: Vec<StreamSamples>,
    /// True when the run ended before every stream had its samples (a stop request).
    pub incomplete: bool,
    /// Whether sampling began at all.
    pub sampling_started: bool,
    /// Each real-time stream's buffer as it counted it: (stream name, tally).
    pub buffers: Vec<(String, Tally)>,
}

/// Runs the first phase of `plan` (a stream phase) on `placements`, samples in memory, calling
/// `tick` about every 20 ms; times are since sampling began.
pub fn run(
    plan: &Plan,
    placements: &[Placement],
    opts: EngineOptions,
    tick: impl FnMut(&Protocol),
) -> Result<RunOutput, EngineError> {
    let origin = Instant::now();
    let mut engine = Engine::new(plan, placements, opts, origin, Keep::Memory)?;
    let out = engine.run_phase(0, tick)?;
    let start = PhaseRecord::sampling_start_of(out.sampling_start_ns.unwrap_or(0), opts.time_scale);
    let record = PhaseRecord {
        sampling_start_s: Some(start),
        samples: out.samples,
        cpu_s: Some(out.cpu_s),
        ..PhaseRecord::stream(&plan.phases[0].name)
    };
    let set = engine.finish(vec![record])?;
    Ok(RunOutput {
        streams: set.load_phase(0)?,
        incomplete: out.incomplete,
        sampling_started: out.sampling_start_ns.is_some(),
        buffers: out.buffers,
    })
}
